"""`ptocpu bench`: the published cases of docs/benchmarks.md against PyTorch and NumPy, in one run;
`ptocpu bench --sweep`: the shape grid of sweep.py against torch, with its summary.

Every case reports the bytes it must move (docs/benchmarks.md's count), ptocpu's median time, its roofline
fraction (bytes / copy bandwidth / time) and each peer's median time with the speedup over it.
Runs of ptocpu, the peers and the reference copy (256 MiB, all threads) are interleaved
(round-robin) within each case, so a burst of load on a shared machine hits every tool and the
limit alike; ratios taken in one run hold even when absolute times drift. Each case's result is checked against every peer once
(bit-exact for the data-movement ops, a tolerance for scatter add / multiply, whose accumulation
order docs/ops/scatter.md fixes but the peers do not); a mismatch is reported and no speedup is claimed.
"""
from __future__ import annotations

import dataclasses
import datetime
import gc
import json
import os
import platform as _platform
import sys

import numpy as np

import ptocpu

# torch's OpenMP workers (libgomp) spin for about 9 ms after each parallel call by default, keeping
# every core busy; in the round-robin that time is taken from whichever tool runs next. libgomp reads
# GOMP_SPINCOUNT when it loads, which is when ptocpu loads (oneDNN links it), so the `ptocpu bench`
# command sets it by restarting itself (cli.py); the header records the value the process started
# with, which libgomp read (docs/benchmarks.md#timing).
def _omp_spin_at_start() -> str:
    unset = "unset (libgomp's default spin)"
    try:
        with open("/proc/self/environ", "rb") as f:
            start = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if b"=" in item)
    except OSError:  # no /proc: the environment as it is now
        return os.environ.get("GOMP_SPINCOUNT", unset)
    return start[b"GOMP_SPINCOUNT"].decode() if b"GOMP_SPINCOUNT" in start else unset


_GOMP_SPIN = _omp_spin_at_start()

try:  # torch is a peer, never a requirement
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

from .cases import CASE_BUDGET_S, COPY_BYTES, Case, select_cases
from .measure import CacheEvict, CopyProbe, Progress, median, run_case, set_threads
from .report import annotate, cpu_model, mem_gib, format_table, require_matplotlib, write_plot
from . import sweep as _sweep

SWEEP_BUDGET_S = 0.8  # timed seconds per sweep case beyond the minimum runs: the grid is large


def _torch_only(case: Case) -> Case:
    """The sweep compares with torch alone (numpy's scatter / take are far slower and single-threaded)."""
    tools = case.tools

    def only(inp):
        return {k: v for k, v in tools(inp).items() if k != "numpy"}
    return dataclasses.replace(case, tools=only)


def run(args) -> int:
    threads = args.threads or ptocpu.get_num_threads()
    if threads < 1:
        raise SystemExit("ptocpu bench: --threads must be >= 1")
    if getattr(args, "plot", None):
        require_matplotlib()
    set_threads(threads)
    repeats = max(5, int(getattr(args, "repeats", 7) or 7))
    sweep = bool(getattr(args, "sweep", False))
    if sweep:
        if torch is None:
            raise SystemExit("ptocpu bench --sweep compares with torch, which is not installed")
        cases = [_torch_only(c) for c in _sweep.select_sweep(getattr(args, "case", None))]
        peers, budget = ["torch"], SWEEP_BUDGET_S
    else:
        cases = select_cases(getattr(args, "case", None))
        peers, budget = (["torch"] if torch is not None else []) + ["numpy"], CASE_BUDGET_S
        if any(c.op == "kernel" for c in cases):  # KERNEL-*: the same kernel eager is a peer
            peers.append("ptocpu-eager")
    progress = Progress(not getattr(args, "quiet", False))

    progress("measuring copy bandwidth")
    probe, evict = CopyProbe(), CacheEvict()
    results = []
    for i, case in enumerate(cases):
        progress(f"[{i + 1}/{len(cases)}] {case.id}")
        try:
            results.append(run_case(case, repeats, _Prefixed(progress, f"[{i + 1}/{len(cases)}] "), seed=1234 + i,
                                    copy=probe, evict=evict, budget=budget))
        finally:
            gc.collect()
    if len(probe.samples) < 5:  # only TINY cases (or none implemented): time the copy on its own
        progress("measuring copy bandwidth")
        for _ in range(9):
            probe.time_once()
    progress.done()
    copy = {"bytes_per_s": median(probe.samples), "low": float(min(probe.samples)),
            "high": float(max(probe.samples)), "runs": len(probe.samples), "method": probe.method,
            "start": probe.start, "buffer_bytes": COPY_BYTES, "threads": threads,
            "evict_bytes": evict.bytes}

    info = ptocpu.build_info()
    header = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "memory_gib": mem_gib() or 0.0,
                    "system": f"{_platform.system()} {_platform.release()}", "host": _platform.node()},
        "threads": threads,
        "copy_bandwidth": copy,
        "versions": {"ptocpu": ptocpu.__version__, "simd": info.get("simd_target_dispatched", "?"),
                     "numpy": np.__version__, **({"torch": torch.__version__} if torch is not None else {}),
                     "python": _platform.python_version()},
        "bytes_unit": "bytes; table MB = 1e6 bytes, GB/s = 1e9 bytes/s",
        "torch_omp_spin": f"GOMP_SPINCOUNT={_GOMP_SPIN}",
    }
    annotate(results)
    table = format_table(header, results, peers)
    print(table)
    if sweep:
        lines = _sweep.summary(results)
        header["sweep_summary"] = lines[0]
        print("\n" + "\n".join(lines))
    if getattr(args, "json", None):
        with open(args.json, "w") as f:
            json.dump({"header": header, "peers": peers, "cases": results}, f, indent=2)
        print(f"\nJSON written to {args.json}")
    if getattr(args, "plot", None):
        msg = write_plot(args.plot, header, results, peers)
        print(f"\nplot: {msg}" if msg else f"\nplot written to {args.plot}")
    bad = [r["id"] for r in results if r.get("status") == "MISMATCH"]
    if bad:
        print(f"\nWARNING: results differ from a peer in {', '.join(bad)} (no speedup is claimed there)")
    return 1 if bad else 0


class _Prefixed:
    def __init__(self, progress: Progress, prefix: str):
        self.progress, self.prefix = progress, prefix

    def __call__(self, text: str) -> None:
        self.progress(self.prefix + text)
