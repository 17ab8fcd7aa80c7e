"""jit's `debug_options` and `verify_options` on the CPU (see docs/tracing.md).

- `debug_options={"runtime_debug_mode": 1}` (PyPTO's swimlane switch), or
  `pypto.set_debug_options(runtime_debug_mode=1)` for every kernel: each call of the kernel is
  traced. Inside an open `ptocpu.trace.recording` the call joins it; otherwise its trace is
  written to `$PTOCPU_TRACE_DIR` (default `output/`) as `swimlane_<kernel>_<time>_<n>.json` and
  the per-op summary printed.
- `verify_options={"enable_pass_verify": True}` (or `pypto.set_verify_options(...)`) with
  `pypto.set_verify_golden_data(goldens=[...])` before the call: the call's tensors are checked
  against the goldens (ptocpu.golden).

A kernel with neither switch, called with no recording open, runs as it is.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, List, Tuple

from . import config, golden, trace
from .golden import is_array as _is_array

__all__ = ["kernel_runner"]

SWIMLANE = 1  # runtime_debug_mode 1: PyPTO's swimlane; here the Chrome trace of each call
_swimlane_files = 0


def _swimlane_path(kernel_name: str) -> str:
    global _swimlane_files
    _swimlane_files += 1
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in kernel_name)
    return os.path.join(os.environ.get("PTOCPU_TRACE_DIR", "output"), f"swimlane_{safe}_{stamp}_{_swimlane_files}.json")


def _tensor_arguments(kernel, args: tuple, kwargs: dict, result: Any) -> List[Tuple[str, Any]]:
    """The call's tensors in parameter order, then the tensors it returned: what goldens align with."""
    named = []
    for name, value in kernel.signature().bind(*args, **kwargs).arguments.items():
        values = value if isinstance(value, tuple) and not _is_array(value) else (value,)
        named += [(name, v) for v in values if _is_array(v)]
    returned = result if isinstance(result, (tuple, list)) else (result,)
    named += [(f"return[{i}]" if len(returned) > 1 else "return", v) for i, v in enumerate(returned) if _is_array(v)]
    return named


def _verified_call(kernel, verify: Optional[dict], args: tuple, kwargs: dict):
    _, goldens = golden.take_goldens() or (None, [])
    result = kernel(*args, **kwargs)
    golden.check(f"kernel {kernel.name}", _tensor_arguments(kernel, args, kwargs, result), goldens, verify)
    return result


def kernel_runner(kernel) -> Callable:
    """How a jit kernel is called: as it is unless a recording is open, the kernel's (or the
    global) debug options ask for a trace, or goldens are waiting for a verifying kernel."""
    swimlane = (kernel.options.get("debug_options") or {}).get("runtime_debug_mode")
    verify = kernel.options.get("verify_options")

    def call(*args, **kwargs):
        traced = trace._recorder is not None or (swimlane if swimlane is not None
                                                  else config.value("debug.runtime_debug_mode")) == SWIMLANE
        verifying = golden.wanted(verify)
        if not traced and not verifying:
            return kernel(*args, **kwargs)
        run = (lambda: _verified_call(kernel, verify, args, kwargs)) if verifying else (lambda: kernel(*args, **kwargs))
        if not traced:
            return run()
        shapes = [list(a.shape) for a in list(args) + list(kwargs.values()) if hasattr(a, "shape")]
        if trace._recorder is not None:
            with trace.kernel_call(kernel.name, "jit", {"argument_shapes": shapes}):
                return run()
        with trace.recording(_swimlane_path(kernel.name), summary=True):  # prints the path and the summary
            with trace.kernel_call(kernel.name, "jit", {"argument_shapes": shapes}):
                return run()

    return call
