"""Timing: round-robin runs of ptocpu, the peers and the reference copy within each case, and the result checks."""
from __future__ import annotations

import functools
import gc
import os
import sys
import time

import numpy as np

import ptocpu

try:  # torch is a peer, never a requirement
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

from .cases import CASE_BUDGET_S, COPY_BYTES, Case, MAX_RUNS, Tool, compare, to_numpy


class Progress:
    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr is not None
        self.width = 0

    def __call__(self, text: str) -> None:
        if not self.enabled:
            return
        line = text[:120]
        sys.stderr.write("\r" + line + " " * max(0, self.width - len(line)))
        sys.stderr.flush()
        self.width = len(line)

    def done(self) -> None:
        if self.enabled and self.width:
            sys.stderr.write("\r" + " " * self.width + "\r")
            sys.stderr.flush()
            self.width = 0


def _time_call(tool: Tool, evict: "CacheEvict | None" = None, peer: bool = False) -> float:
    """peer: another library's call: ptocpu's idle workers (spinning after the eviction, itself a
    ptocpu call) are sent to sleep first, so that they do not take a core from it."""
    if tool.reset:
        tool.reset()
    if evict:
        evict()
    if peer:
        ptocpu._core._park_workers()
    t0 = time.perf_counter()
    out = tool.run()
    t1 = time.perf_counter()
    del out
    return t1 - t0


def median(v):
    return float(np.median(v)) if len(v) else float("nan")


class CopyProbe:
    """The limit: a 256 MiB contiguous fp32 copy into a preallocated buffer with all threads,
    bytes counted as read + write. Two parallel copies are tried at the start, ptocpu's own
    (`dst[...] = src`, its strided-copy engine) and torch's `Tensor.copy_`; the faster one (the
    conservative choice) is then timed inside every case's round-robin, so each case's roofline
    is taken against the bandwidth the machine gave during that very case."""

    def __init__(self, runs: int = 9):
        n = COPY_BYTES // 4
        self.src = np.arange(n, dtype=np.float32)
        ps, pd = ptocpu.asarray(self.src), ptocpu.tensor([n], ptocpu.DT_FP32)
        methods = {"ptocpu dst[...] = src": functools.partial(pd.__setitem__, Ellipsis, ps)}
        if torch is not None:
            ts, td = torch.from_numpy(self.src), torch.empty(n, dtype=torch.float32)
            methods["torch Tensor.copy_"] = functools.partial(td.copy_, ts)
        self.start = {}
        for name, f in methods.items():
            f()
            f()
            self.start[name] = 2 * COPY_BYTES / median([self._time(f) for _ in range(runs)])
        if not np.array_equal(pd.numpy()[:: 1 << 16], self.src[:: 1 << 16]):
            raise RuntimeError("ptocpu copy produced wrong data")
        self.method = max(self.start, key=self.start.get)
        self.run = methods[self.method]
        self.samples: list[float] = []  # bytes / s of every timed copy

    @staticmethod
    def _time(f) -> float:
        t0 = time.perf_counter()
        f()
        return time.perf_counter() - t0

    def time_once(self) -> float:
        t = self._time(self.run)
        self.samples.append(2 * COPY_BYTES / t)
        return t


def _last_level_cache_bytes() -> int:
    """The largest CPU cache Linux reports (0 when it reports none)."""
    largest = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    for entry in os.listdir(base) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, entry, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            largest = max(largest, int(digits) * scale)
    return largest


class CacheEvict:
    """Reads a buffer twice the last-level cache (at least 64 MiB) with all threads, leaving clean
    lines: called right before every timed call of a big case, so each tool starts from the same
    cold cache instead of the one the previous tool left (docs/benchmarks.md#timing)."""

    def __init__(self):
        self.bytes = max(64 << 20, 2 * _last_level_cache_bytes())
        self.buffer = ptocpu.asarray(np.ones(self.bytes // 4, dtype=np.float32))

    def __call__(self) -> None:
        ptocpu.sum(self.buffer, 0)


def _cpu_ticks() -> tuple[int, int] | None:
    """(steal, all) clock ticks of the machine's CPUs so far, from /proc/stat; None without it.
    Steal is the time a virtual CPU had work but its host ran something else."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    ticks = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return ticks[7], sum(ticks)


def steal_fraction(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The share of CPU time the host took from this machine between two _cpu_ticks readings."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def _status_line(case: Case, msg: str) -> str:
    return f"[{case.id}] {msg}"


def run_case(case: Case, repeats: int, progress: Progress, seed: int, copy: CopyProbe, evict: CacheEvict,
             budget: float = CASE_BUDGET_S) -> dict:
    rec: dict = {"id": case.id, "op": case.op, "call": case.call, "dtype": case.dtype, "tiny": case.tiny,
                 "tools": {}}
    progress(_status_line(case, "building inputs"))
    rng = np.random.default_rng(seed)
    inp = case.build(rng)
    rec["bytes"] = int(case.bytes(inp))
    try:
        tools = case.tools(inp)
    except Exception as e:  # noqa: BLE001 - a peer that cannot even be set up
        rec["status"] = f"setup error: {type(e).__name__}: {e}"
        return rec
    names = list(tools)

    # One checked run per tool from the pristine inputs; it doubles as the first warm-up.
    reference = None
    alive = []
    for name in names:
        tool = tools[name]
        progress(_status_line(case, f"{name}: warm-up and check"))
        info = rec["tools"].setdefault(name, {})
        try:
            if tool.reset:
                tool.reset()
            out = to_numpy(tool.run())
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            info["status"] = f"error: {type(e).__name__}: {str(e)[:200]}"
            continue
        if name == "ptocpu":
            reference = out
            info["status"] = "ok"
        else:
            check = case.check or functools.partial(compare, tol=case.tol)
            diff = check(reference, out) if reference is not None else None
            info["status"] = "ok"
            info["check"] = "equal" if diff is None else f"MISMATCH: {diff}"
        alive.append(name)
        del out
    reference = None
    gc.collect()
    if "ptocpu" not in alive:
        rec["status"] = rec["tools"]["ptocpu"].get("status", "error")
        return rec

    gc_was = gc.isenabled()
    gc.disable()
    ticks = _cpu_ticks()
    try:
        if case.tiny:
            _time_tiny(case, tools, alive, rec, repeats, progress)
        else:
            _time_big(case, tools, alive, rec, repeats, progress, copy, evict, budget)
    finally:
        if gc_was:
            gc.enable()
    steal = steal_fraction(ticks, _cpu_ticks())
    if steal is not None:
        rec["steal"] = round(steal, 4)

    mismatch = any(rec["tools"][n].get("check", "equal") != "equal" for n in alive)
    rec["status"] = "MISMATCH" if mismatch else "ok"
    p = rec["tools"]["ptocpu"]
    for name in alive:
        info = rec["tools"][name]
        if name != "ptocpu" and info.get("check") == "equal":
            info["speedup"] = info["median_s"] / p["median_s"]
    return rec


def _time_big(case, tools, alive, rec, repeats, progress, copy: CopyProbe, evict: CacheEvict, budget: float):
    # Second warm-up; the wall time of a round (resets and evictions included) sizes the run count.
    t0 = time.perf_counter()
    for name in alive:
        _time_call(tools[name], evict, name != "ptocpu")
    copy.time_once()
    total = time.perf_counter() - t0
    runs = max(repeats, min(MAX_RUNS, int(budget / max(total, 1e-9))))
    times = {name: [] for name in alive}
    copy_times = []
    for r in range(runs):
        progress(_status_line(case, f"run {r + 1}/{runs}"))
        for name in alive:  # round-robin: load bursts hit every tool alike
            times[name].append(_time_call(tools[name], evict, name != "ptocpu"))
        copy_times.append(copy.time_once())  # the limit, measured alongside
    for name in alive:
        info = rec["tools"][name]
        info["median_s"] = median(times[name])
        info["min_s"] = float(min(times[name]))
        info["runs"] = runs
    rec["copy_bytes_per_s"] = 2 * COPY_BYTES / median(copy_times)


def _time_tiny(case, tools, alive, rec, repeats, progress, batch=200):
    batches = max(15, repeats * 3)
    for name in alive:  # warm-up
        f = tools[name].run
        for _ in range(batch):
            f()
    per_call = {name: [] for name in alive}
    loop = range(batch)
    for b in range(batches):
        if b % 5 == 0:
            progress(_status_line(case, f"batch {b + 1}/{batches} of {batch} calls"))
        for name in alive:
            f = tools[name].run
            if name != "ptocpu":
                ptocpu._core._park_workers()  # see _time_call
            t0 = time.perf_counter()
            for _ in loop:
                f()
            per_call[name].append((time.perf_counter() - t0) / batch)
    for name in alive:
        info = rec["tools"][name]
        info["median_s"] = median(per_call[name])
        info["min_s"] = float(min(per_call[name]))
        info["runs"] = batches * batch


# --------------------------------------------------------------------------------------------
# report



def set_threads(n: int) -> None:
    ptocpu.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(n)  # child processes; numpy's BLAS is not used by these ops
    try:
        import threadpoolctl
        threadpoolctl.threadpool_limits(n)
    except ImportError:
        pass


