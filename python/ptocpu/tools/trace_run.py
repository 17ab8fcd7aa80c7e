"""`python -m ptocpu.tools.trace_run -o trace.json [--plot ub.png] SCRIPT.py [ARGS]`: runs a Python
script (a PyPTO program, `import ptocpu as pypto`) under a ptocpu.trace recording, then writes the
Chrome trace, prints the per-op summary and optionally saves the UB plot (see docs/tracing.md)."""
from __future__ import annotations

import argparse
import os
import runpy
import sys
from typing import List, Optional

from ..engine.trace import recording


def run(script: str, args: List[str], trace_path: str, plot: Optional[str] = None) -> int:
    """Runs `script` as __main__ with sys.argv = [script, *args] inside a recording; its exit code."""
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = 0
    with recording(trace_path, summary=True, plot=plot):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ptocpu.tools.trace_run",
                                     description="Run a Python script under a ptocpu trace recording.")
    parser.add_argument("-o", "--trace", metavar="PATH", default="trace.json", help="Chrome trace JSON to write")
    parser.add_argument("--plot", metavar="PNG", help="also save the UB use plot (needs matplotlib)")
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    return run(options.script, options.args, options.trace, options.plot)


if __name__ == "__main__":
    raise SystemExit(main())
