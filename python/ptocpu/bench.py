"""`ptocpu bench`: the published cases of BENCH.md against PyTorch and NumPy, in one run.

Every case reports the bytes it must move (BENCH.md's count), ptocpu's median time, its roofline
fraction (bytes / copy bandwidth / time) and each peer's median time with the speedup over it.
Runs of ptocpu, the peers and the reference copy (256 MiB, all threads) are interleaved
(round-robin) within each case, so a burst of load on a shared machine hits every tool and the
limit alike; ratios taken in one run hold even when absolute times drift. Each case's result is checked against every peer once
(bit-exact for the data-movement ops, a tolerance for scatter add / multiply, whose accumulation
order SPEC 5.4 fixes but the peers do not); a mismatch is reported and no speedup is claimed.

Ops that ptocpu does not have yet are listed as "not implemented".
"""
from __future__ import annotations

import datetime
import functools
import gc
import json
import math
import os
import platform as _platform
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import ml_dtypes

import ptocpu

try:  # torch is a peer, never a requirement
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None

BF16 = np.dtype(ml_dtypes.bfloat16)
_DTYPES = {"fp32": np.dtype(np.float32), "fp16": np.dtype(np.float16), "bf16": BF16,
           "int32": np.dtype(np.int32), "int64": np.dtype(np.int64)}
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

COPY_BYTES = 256 << 20  # the copy-bandwidth buffer (BENCH.md: >= 256 MiB)
CASE_BUDGET_S = 2.5     # timed seconds per big case (all tools together) beyond the minimum runs
MAX_RUNS = 60


# --------------------------------------------------------------------------------------------
# inputs

def _random(rng: np.random.Generator, shape, dtype: str, lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    """Uniform values in [lo, hi) of a float dtype, built quickly (bf16 by truncating fp32 bits)."""
    a = rng.random(shape, dtype=np.float32)
    a *= np.float32(hi - lo)
    a += np.float32(lo)
    if dtype == "fp32":
        return a
    if dtype == "fp16":
        return a.astype(np.float16)
    if dtype == "bf16":
        return (a.view(np.uint32) >> 16).astype(np.uint16).view(BF16)
    if dtype == "int32":
        return rng.integers(-1 << 30, 1 << 30, size=shape, dtype=np.int32)
    raise ValueError(dtype)


def _index(rng: np.random.Generator, shape, bound: int, dtype: str = "int64") -> np.ndarray:
    return rng.integers(0, bound, size=shape, dtype=_DTYPES[dtype])


def _unique_rows(rng: np.random.Generator, rows: int, width: int, bound: int, dtype: str = "int64") -> np.ndarray:
    """[rows, width] with no value repeated within a row (a random subset of [0, bound) per row)."""
    base = np.broadcast_to(np.arange(bound, dtype=_DTYPES[dtype]), (rows, bound))
    return np.ascontiguousarray(rng.permuted(base, axis=1)[:, :width])


def _torch(a: np.ndarray):
    """A torch tensor over the same memory (bf16 through an int16 view)."""
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def _to_numpy(r) -> Any:
    """Any tool's result as numpy arrays (tuples stay tuples)."""
    if isinstance(r, (tuple, list)):
        return tuple(_to_numpy(v) for v in r)
    if isinstance(r, ptocpu.Tensor):
        return np.asarray(r.numpy())
    if torch is not None and isinstance(r, torch.Tensor):
        if r.dtype == torch.bfloat16:
            return r.view(torch.int16).numpy().view(BF16)
        return r.numpy()
    return np.asarray(r)


def _compare(got, want, tol) -> str | None:
    """None when equal (bit-exact, or within tol = (rtol, atol) in float64), else what differs."""
    got, want = _to_numpy(got), _to_numpy(want)
    if isinstance(want, tuple) != isinstance(got, tuple):
        return "result structure differs"
    if isinstance(want, tuple):
        if len(got) != len(want):
            return f"{len(got)} outputs instead of {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            msg = _compare(g, w, tol)
            if msg:
                return f"output {i}: {msg}"
        return None
    if got.shape != want.shape:
        return f"shape {list(got.shape)} instead of {list(want.shape)}"
    if got.dtype.itemsize != want.dtype.itemsize:
        return f"dtype {got.dtype} instead of {want.dtype}"
    if tol is None:
        u = _UINT_OF_SIZE[want.dtype.itemsize]
        bad = np.ascontiguousarray(got).view(u) != np.ascontiguousarray(want).view(u)
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~np.isclose(g, w, rtol=tol[0], atol=tol[1], equal_nan=True)
    n = int(np.count_nonzero(bad))
    if n == 0:
        return None
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    return f"{n} elements differ, first at {first}: {got[first]!r} vs {want[first]!r}"


# --------------------------------------------------------------------------------------------
# cases

@dataclass
class Tool:
    """How one tool runs a case: run() is timed; reset() (untimed) restores in-place inputs."""
    run: Callable[[], Any]
    reset: Callable[[], None] | None = None


@dataclass
class Case:
    id: str
    op: str       # the ptocpu function
    call: str     # BENCH.md's description
    dtype: str
    build: Callable[[np.random.Generator], dict]
    tools: Callable[[dict], dict]        # name -> Tool, ptocpu first; a tool missing is skipped
    bytes: Callable[[dict], int]
    tol: tuple | None = None             # None: bit-exact
    tiny: bool = False


def _nbytes(*arrays) -> int:
    return sum(int(a.nbytes) for a in arrays if a is not None)


# index_select ------------------------------------------------------------------------------

def _is_build(xshape, dtype, dim, ishape, idtype):
    def build(rng):
        x = _random(rng, xshape, dtype)
        idx = _index(rng, ishape, xshape[dim], idtype)
        return {"x": x, "idx": idx, "dim": dim}
    return build


def _is_tools(inp):
    x, idx, dim = inp["x"], inp["idx"], inp["dim"]
    t = {"ptocpu": Tool(functools.partial(ptocpu.index_select, ptocpu.asarray(x), dim, ptocpu.asarray(idx)))}
    if torch is not None:
        tx, ti = _torch(x), _torch(idx)
        if idx.ndim == 1:
            t["torch"] = Tool(functools.partial(torch.index_select, tx, dim, ti))
        else:
            out_shape = x.shape[:dim] + idx.shape + x.shape[dim + 1:]
            flat = ti.flatten()
            t["torch"] = Tool(lambda: torch.index_select(tx, dim, flat).reshape(out_shape))
    t["numpy"] = Tool(functools.partial(np.take, x, idx, axis=dim))
    return t


def _is_bytes(inp):
    x, idx, dim = inp["x"], inp["idx"], inp["dim"]
    out = math.prod(x.shape[:dim]) * idx.size * math.prod(x.shape[dim + 1:]) * x.itemsize
    return 2 * out + idx.nbytes


def _is_case(id_, xshape, dtype, dim, ishape, idtype, call, tiny=False):
    d = dim % len(xshape)
    return Case(id_, "index_select", call, dtype, _is_build(xshape, dtype, d, ishape, idtype), _is_tools,
                _is_bytes, tiny=tiny)


# interleave / deinterleave -----------------------------------------------------------------

def _pair_build(shape, dtype, two=True):
    def build(rng):
        return {"a": _random(rng, shape, dtype), "b": _random(rng, shape, dtype) if two else None}
    return build


def _il_tools(inp):
    a, b = inp["a"], inp["b"]
    n = a.shape[-1]
    t = {"ptocpu": Tool(functools.partial(getattr(ptocpu, "interleave", None), ptocpu.asarray(a), ptocpu.asarray(b)))}
    if torch is not None:
        ta, tb = _torch(a), _torch(b)

        def torch_il():
            s = torch.stack((ta, tb), -1).flatten(-2)
            return s[..., :n].contiguous(), s[..., n:].contiguous()
        t["torch"] = Tool(torch_il)

    def numpy_il():
        s = np.stack((a, b), -1).reshape(a.shape[:-1] + (2 * n,))
        return np.ascontiguousarray(s[..., :n]), np.ascontiguousarray(s[..., n:])
    t["numpy"] = Tool(numpy_il)
    return t


def _di_tools(inp):
    a, b = inp["a"], inp["b"]
    if b is None:
        t = {"ptocpu": Tool(functools.partial(getattr(ptocpu, "deinterleave", None), ptocpu.asarray(a)))}
    else:
        t = {"ptocpu": Tool(functools.partial(getattr(ptocpu, "deinterleave", None), ptocpu.asarray(a),
                                              ptocpu.asarray(b)))}
    if torch is not None:
        ta = _torch(a)
        tb = None if b is None else _torch(b)

        def torch_di():
            x = ta if tb is None else torch.cat((ta, tb), -1)
            return x[..., 0::2].contiguous(), x[..., 1::2].contiguous()
        t["torch"] = Tool(torch_di)

    def numpy_di():
        x = a if b is None else np.concatenate((a, b), -1)
        return np.ascontiguousarray(x[..., 0::2]), np.ascontiguousarray(x[..., 1::2])
    t["numpy"] = Tool(numpy_di)
    return t


def _pair_bytes(inp):
    return 2 * _nbytes(inp["a"], inp["b"])


# scatter_ ----------------------------------------------------------------------------------

def _sc_build(xshape, dtype, dim, ishape, idtype, src, reduce, unique):
    def build(rng):
        lo, hi = (0.5, 1.5) if reduce == "multiply" else (-1.0, 1.0)
        x = _random(rng, xshape, dtype, lo, hi)
        if unique:
            idx = _unique_rows(rng, ishape[0], ishape[1], xshape[dim], idtype)
        else:
            idx = _index(rng, ishape, xshape[dim], idtype)
        s = src if not isinstance(src, str) else _random(rng, ishape, dtype, lo, hi)
        return {"x": x, "idx": idx, "dim": dim, "src": s, "reduce": reduce}
    return build


def _sc_tools(inp):
    x0, idx, dim, src, reduce = inp["x"], inp["idx"], inp["dim"], inp["src"], inp["reduce"]
    scalar = not isinstance(src, np.ndarray)
    t = {}
    fn = getattr(ptocpu, "scatter_", None)
    px_np = np.empty_like(x0)
    px = ptocpu.asarray(px_np)
    psrc = src if scalar else ptocpu.asarray(src)
    t["ptocpu"] = Tool(functools.partial(fn, px, dim, ptocpu.asarray(idx), psrc, reduce=reduce) if fn else None,
                       functools.partial(np.copyto, px_np, x0))
    if torch is not None:
        tx = _torch(np.empty_like(x0))
        tx0 = _torch(x0)
        ti = _torch(idx)
        tsrc = float(src) if scalar else _torch(src)
        if reduce is None:
            run = functools.partial(tx.scatter_, dim, ti, tsrc)
        else:
            run = functools.partial(tx.scatter_reduce_, dim, ti, tsrc, "sum" if reduce == "add" else "prod",
                                    include_self=True)
        t["torch"] = Tool(run, functools.partial(tx.copy_, tx0))
    nx = np.empty_like(x0)
    nsrc = src if not scalar else x0.dtype.type(src)
    if reduce is None:
        nrun = functools.partial(np.put_along_axis, nx, idx, nsrc, axis=dim)
    else:
        grid = list(np.ogrid[tuple(slice(0, n) for n in idx.shape)])
        grid[dim] = idx
        ufunc = np.add if reduce == "add" else np.multiply
        nrun = functools.partial(ufunc.at, nx, tuple(grid), nsrc)
    t["numpy"] = Tool(lambda: (nrun(), nx)[1], functools.partial(np.copyto, nx, x0))
    return t


def _sc_bytes(inp):
    x, idx, src, reduce = inp["x"], inp["idx"], inp["src"], inp["reduce"]
    written = idx.size * x.itemsize
    src_bytes = idx.size * x.itemsize if isinstance(src, np.ndarray) else 0
    return idx.nbytes + src_bytes + (2 if reduce else 1) * written


def _sc_case(id_, xshape, dtype, dim, ishape, idtype, src, reduce, call, unique=False, tiny=False):
    d = dim % len(xshape)
    tol = None
    if reduce is not None:  # the peers accumulate in another order / precision than SPEC 5.4
        tol = {"fp32": (1e-5, 1e-6), "fp16": (2.0 ** -8, 1e-3), "bf16": (2.0 ** -5, 1e-2)}[dtype]
    return Case(id_, "scatter_", call, dtype, _sc_build(xshape, dtype, d, ishape, idtype, src, reduce, unique),
                _sc_tools, _sc_bytes, tol=tol, tiny=tiny)


# strided_slice -----------------------------------------------------------------------------

def _ss_case(id_, xshape, dtype, args, kwargs, key, flip, call, tiny=False):
    """key: the numpy / torch basic-indexing equivalent; flip: dims to torch.flip (negative strides)."""
    def build(rng):
        return {"x": _random(rng, xshape, dtype)}

    def tools(inp):
        x = inp["x"]
        fn = getattr(ptocpu, "strided_slice", None)
        t = {"ptocpu": Tool(functools.partial(fn, ptocpu.asarray(x), *args, **kwargs) if fn else None)}
        if torch is not None:
            tx = _torch(x)
            if flip:
                t["torch"] = Tool(functools.partial(torch.flip, tx, flip))
            else:
                t["torch"] = Tool(lambda: tx[key].contiguous())
        t["numpy"] = Tool(lambda: np.ascontiguousarray(x[key]))
        return t

    def nbytes(inp):
        return 2 * inp["x"][key].nbytes

    return Case(id_, "strided_slice", call, dtype, build, tools, nbytes, tiny=tiny)


def _pair_case(id_, op, shape, dtype, two, call, tiny=False):
    return Case(id_, op, call, dtype, _pair_build(shape, dtype, two), _il_tools if op == "interleave" else _di_tools,
                _pair_bytes, tiny=tiny)


CASES: list[Case] = [
    _is_case("IS1", (262144, 256), "fp32", 0, (131072,), "int64",
             "x [262144, 256], dim 0, index [131072] random int64"),
    _is_case("IS2", (64, 4096, 128), "fp16", 1, (2048,), "int32", "x [64, 4096, 128], dim 1, index [2048] int32"),
    _is_case("IS3", (8192, 4096), "fp32", -1, (2048,), "int64", "x [8192, 4096], dim -1, index [2048] int64"),
    _is_case("IS4", (65536, 128), "bf16", 0, (512, 256), "int64", "x [65536, 128], dim 0, index [512, 256] int64"),
    _pair_case("IL1", "interleave", (4096, 8192), "fp32", True, "a, b [4096, 8192]"),
    _pair_case("IL2", "interleave", (16384, 4096), "bf16", True, "a, b [16384, 4096]"),
    _pair_case("DI1", "deinterleave", (4096, 16384), "fp32", False, "x [4096, 16384] (single input)"),
    _pair_case("DI2", "deinterleave", (4096, 8192), "bf16", True, "a, b [4096, 8192] (two inputs)"),
    _sc_case("SC1", (4096, 4096), "fp32", 1, (4096, 2048), "int64", "tensor", None,
             "x [4096, 4096], dim 1, index [4096, 2048] (no duplicate per row), src tensor, reduce None",
             unique=True),
    _sc_case("SC2", (4096, 4096), "fp32", 0, (8192, 4096), "int64", "tensor", "add",
             "x [4096, 4096], dim 0, index [8192, 4096] random, src tensor, reduce add"),
    _sc_case("SC3", (4096, 4096), "fp16", 1, (4096, 1024), "int32", 2.0, None,
             "x [4096, 4096], dim 1, index [4096, 1024] int32, scalar 2.0"),
    _sc_case("SC4", (2048, 8192), "bf16", -1, (2048, 4096), "int64", "tensor", "multiply",
             "x [2048, 8192], dim -1, index [2048, 4096], src tensor, reduce multiply"),
    _ss_case("SS1", (8192, 8192), "int32", ([0, 0], [-1, -1], [1, 2]), {}, np.s_[0:-1, 0:-1:2], None,
             "x [8192, 8192], begin [0, 0], end [-1, -1], strides [1, 2]"),
    _ss_case("SS2", (32, 128, 128, 128), "bf16", ([0, 0, 0, 0], [32, -1, -1, -1], [1, 1, 1, 1]),
             {"ellipsis_mask": 1}, np.s_[..., 0:-1, 0:-1, 0:-1], None,
             "x [32, 128, 128, 128], ellipsis_mask 1, begin/end/strides [0,0,0,0]/[32,-1,-1,-1]/[1,1,1,1]"),
    _ss_case("SS3", (4096, 4096), "fp32", ([0, 0], [4096, 4096], [3, 3]), {}, np.s_[0:4096:3, 0:4096:3], None,
             "x [4096, 4096], begin [0, 0], end [4096, 4096], strides [3, 3]"),
    _ss_case("SS4", (4096, 4096), "fp16", ([0, 0], [0, 0], [-1, -1]), {"begin_mask": 3, "end_mask": 3},
             np.s_[::-1, ::-1], [0, 1], "x [4096, 4096], begin_mask 3, end_mask 3, strides [-1, -1] (full reverse)"),
    # TINY: call overhead, one per op (fp32).
    _is_case("TINY-IS", (8, 16), "fp32", 0, (3,), "int64", "index_select x [8, 16], dim 0, index [3]", tiny=True),
    _pair_case("TINY-IL", "interleave", (8, 16), "fp32", True, "interleave a, b [8, 16]", tiny=True),
    _pair_case("TINY-DI", "deinterleave", (8, 16), "fp32", False, "deinterleave x [8, 16]", tiny=True),
    _sc_case("TINY-SC", (8, 16), "fp32", 1, (8, 4), "int64", "tensor", None,
             "scatter_ x [8, 16], dim 1, index [8, 4], src [8, 4]", unique=True, tiny=True),
    _ss_case("TINY-SS", (8, 16), "fp32", ([0, 0], [8, 16], [1, 2]), {}, np.s_[0:8, 0:16:2], None,
             "strided_slice x [8, 16], strides [1, 2]", tiny=True),
]


# --------------------------------------------------------------------------------------------
# measurement

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


def _time_call(tool: Tool) -> float:
    if tool.reset:
        tool.reset()
    t0 = time.perf_counter()
    out = tool.run()
    t1 = time.perf_counter()
    del out
    return t1 - t0


def _median(v):
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
            self.start[name] = 2 * COPY_BYTES / _median([self._time(f) for _ in range(runs)])
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


def _status_line(case: Case, msg: str) -> str:
    return f"[{case.id}] {msg}"


def run_case(case: Case, repeats: int, progress: Progress, seed: int, copy: CopyProbe) -> dict:
    rec: dict = {"id": case.id, "op": case.op, "call": case.call, "dtype": case.dtype, "tiny": case.tiny,
                 "tools": {}}
    if getattr(ptocpu, case.op, None) is None:
        rec["status"] = "not implemented"
        return rec
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
            out = _to_numpy(tool.run())
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            info["status"] = f"error: {type(e).__name__}: {str(e)[:200]}"
            continue
        if name == "ptocpu":
            reference = out
            info["status"] = "ok"
        else:
            diff = _compare(reference, out, case.tol) if reference is not None else None
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
    try:
        if case.tiny:
            _time_tiny(case, tools, alive, rec, repeats, progress)
        else:
            _time_big(case, tools, alive, rec, repeats, progress, copy)
    finally:
        if gc_was:
            gc.enable()

    mismatch = any(rec["tools"][n].get("check", "equal") != "equal" for n in alive)
    rec["status"] = "MISMATCH" if mismatch else "ok"
    p = rec["tools"]["ptocpu"]
    for name in alive:
        info = rec["tools"][name]
        if name != "ptocpu" and info.get("check") == "equal":
            info["speedup"] = info["median_s"] / p["median_s"]
    return rec


def _time_big(case, tools, alive, rec, repeats, progress, copy: CopyProbe):
    # Second warm-up; its times size the run count (more runs for short cases).
    est = {}
    for name in alive:
        est[name] = _time_call(tools[name])
    total = sum(est.values()) + copy.time_once()
    runs = max(repeats, min(MAX_RUNS, int(CASE_BUDGET_S / max(total, 1e-9))))
    times = {name: [] for name in alive}
    copy_times = []
    for r in range(runs):
        progress(_status_line(case, f"run {r + 1}/{runs}"))
        for name in alive:  # round-robin: load bursts hit every tool alike
            times[name].append(_time_call(tools[name]))
        copy_times.append(copy.time_once())  # the limit, measured alongside
    for name in alive:
        info = rec["tools"][name]
        info["median_s"] = _median(times[name])
        info["min_s"] = float(min(times[name]))
        info["runs"] = runs
    rec["copy_bytes_per_s"] = 2 * COPY_BYTES / _median(copy_times)


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
            t0 = time.perf_counter()
            for _ in loop:
                f()
            per_call[name].append((time.perf_counter() - t0) / batch)
    for name in alive:
        info = rec["tools"][name]
        info["median_s"] = _median(per_call[name])
        info["min_s"] = float(min(per_call[name]))
        info["runs"] = batches * batch


# --------------------------------------------------------------------------------------------
# report

def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or _platform.machine()


def _mem_gib() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2 ** 30
    except (ValueError, OSError):
        return None


def _fmt_time(s: float | None, tiny: bool) -> str:
    if s is None or not math.isfinite(s):
        return "-"
    if tiny:
        return f"{s * 1e6:.2f} µs"
    return f"{s * 1e3:.2f} ms" if s < 10 else f"{s:.2f} s"


def _annotate(results: list[dict]) -> None:
    for rec in results:
        bw = rec.get("copy_bytes_per_s")
        for info in rec["tools"].values():
            if "median_s" in info and rec.get("bytes") and bw:
                info["roofline"] = rec["bytes"] / bw / info["median_s"]


def format_table(header: dict, results: list[dict], peers: list[str]) -> str:
    bw = header["copy_bandwidth"]["bytes_per_s"]
    lines = [
        f"# ptocpu bench — {header['date']}",
        "",
        f"- machine: {header['machine']['cpu']} ({header['machine']['cores']} cores, "
        f"{header['machine']['memory_gib']:.1f} GiB), {header['machine']['system']}",
        f"- threads: {header['threads']} (ptocpu, torch and numpy; numpy's take / copies / ufunc.at are single-threaded)",
        f"- copy bandwidth: {bw / 1e9:.1f} GB/s (read + write; median of {header['copy_bandwidth']['runs']} copies "
        f"timed inside the cases' round-robins, range {header['copy_bandwidth']['low'] / 1e9:.1f}-"
        f"{header['copy_bandwidth']['high'] / 1e9:.1f}) — {header['copy_bandwidth']['method']}, "
        f"{COPY_BYTES >> 20} MiB fp32 into a preallocated buffer, all threads; chosen at the start as the faster of "
        + ", ".join(f"{k} {v / 1e9:.1f} GB/s" for k, v in header["copy_bandwidth"]["start"].items()),
        f"- versions: ptocpu {header['versions']['ptocpu']} ({header['versions']['simd']}), "
        + ", ".join(f"{k} {v}" for k, v in header["versions"].items() if k not in ("ptocpu", "simd")),
        "- roofline = (bytes moved / copy bandwidth) / time, with the copy bandwidth of the same case's round-robin "
        "(column `copy GB/s`); speedup = peer median / ptocpu median (same run); times are medians "
        "(TINY: per call, from Python)",
        "",
    ]
    cols = ["case", "op", "dtype", "MB moved", "copy GB/s", "ptocpu", "roofline"]
    for p in peers:
        cols += [p, f"{p} roofline", f"vs {p}"]
    cols += ["runs", "check"]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "|".join(" --- " for _ in cols) + "|")
    for rec in results:
        tools = rec["tools"]
        p = tools.get("ptocpu", {})
        row = [rec["id"], rec["op"], rec["dtype"], f"{rec['bytes'] / 1e6:.0f}" if rec.get("bytes") and not rec["tiny"]
               else "-", f"{rec['copy_bytes_per_s'] / 1e9:.1f}" if rec.get("copy_bytes_per_s") else "-"]
        if rec.get("status") not in ("ok", "MISMATCH"):
            row += [rec.get("status", "-"), "-"] + ["-", "-", "-"] * len(peers) + ["-", "-"]
            lines.append("| " + " | ".join(row) + " |")
            continue
        row += [_fmt_time(p.get("median_s"), rec["tiny"]),
                f"{p['roofline']:.2f}" if "roofline" in p else "-"]
        checks = []
        for peer in peers:
            info = tools.get(peer)
            if not info:
                row += ["-", "-", "-"]
                continue
            if "median_s" not in info:
                row += [info.get("status", "-")[:40], "-", "-"]
                continue
            row += [_fmt_time(info["median_s"], rec["tiny"]),
                    f"{info['roofline']:.2f}" if "roofline" in info else "-",
                    f"{info['speedup']:.2f}x" if "speedup" in info else "WRONG"]
            if info.get("check") != "equal":
                checks.append(f"{peer}: {info.get('check')}")
        row += [str(p.get("runs", "-")), "; ".join(checks) if checks else "equal"]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Bytes moved (BENCH.md): index_select 2·out + index; interleave / deinterleave 2·(inputs); "
                 "scatter_ index + src (index-shaped) + 2·written (add / multiply) or 1·written (None), written = "
                 "one element per index position; strided_slice 2·out. MB = 1e6 bytes, GB/s = 1e9 bytes/s. "
                 "TINY: median over batches of 200 calls of the time per call, each tool on its own tensors.")
    lines.append("")
    lines.append("Cases: " + "; ".join(f"{r['id']} = {r['call']}" for r in results if not r["tiny"]))
    return "\n".join(lines)


def write_plot(path: str, header: dict, results: list[dict], peers: list[str]) -> str | None:
    """A bar chart of the roofline fraction per case, ptocpu and each peer. None on success."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot written (pip install matplotlib; the table and JSON are complete)"
    rows = [r for r in results if not r["tiny"] and r.get("status") in ("ok", "MISMATCH")]
    if not rows:
        return "no case with a roofline fraction to plot"
    tools = ["ptocpu"] + peers
    width = 0.8 / len(tools)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(rows) + 2), 4.5))
    xs = np.arange(len(rows))
    for k, tool in enumerate(tools):
        vals = [r["tools"].get(tool, {}).get("roofline", 0.0) for r in rows]
        ax.bar(xs + (k - (len(tools) - 1) / 2) * width, vals, width, label=tool)
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(xs, [r["id"] for r in rows])
    ax.set_ylabel("roofline fraction (1.0 = copy bandwidth)")
    bw = header["copy_bandwidth"]["bytes_per_s"]
    ax.set_title(f"ptocpu bench {header['date']}: {header['threads']} threads, copy {bw / 1e9:.1f} GB/s")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


# --------------------------------------------------------------------------------------------
# entry point

def select_cases(ids: list[str] | None) -> list[Case]:
    if not ids:
        return list(CASES)
    wanted = [w.strip().upper() for item in ids for w in item.split(",") if w.strip()]
    known = {c.id for c in CASES}
    out = []
    for w in wanted:
        if w == "TINY":
            match = [c for c in CASES if c.tiny]
        elif w in known:
            match = [c for c in CASES if c.id == w]
        else:
            raise SystemExit(f"ptocpu bench: unknown case {w!r}; known: {', '.join(sorted(known))}, TINY")
        out += [c for c in match if c not in out]
    return out


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


def run(args) -> int:
    threads = args.threads or ptocpu.get_num_threads()
    if threads < 1:
        raise SystemExit("ptocpu bench: --threads must be >= 1")
    set_threads(threads)
    repeats = max(5, int(getattr(args, "repeats", 7) or 7))
    cases = select_cases(getattr(args, "case", None))
    progress = Progress(not getattr(args, "quiet", False))
    peers = (["torch"] if torch is not None else []) + ["numpy"]

    progress("measuring copy bandwidth")
    probe = CopyProbe()
    results = []
    for i, case in enumerate(cases):
        progress(f"[{i + 1}/{len(cases)}] {case.id}")
        try:
            results.append(run_case(case, repeats, _Prefixed(progress, f"[{i + 1}/{len(cases)}] "), seed=1234 + i,
                                    copy=probe))
        finally:
            gc.collect()
    if len(probe.samples) < 5:  # only TINY cases (or none implemented): time the copy on its own
        progress("measuring copy bandwidth")
        for _ in range(9):
            probe.time_once()
    progress.done()
    copy = {"bytes_per_s": _median(probe.samples), "low": float(min(probe.samples)),
            "high": float(max(probe.samples)), "runs": len(probe.samples), "method": probe.method,
            "start": probe.start, "buffer_bytes": COPY_BYTES, "threads": threads}

    info = ptocpu.build_info()
    header = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": {"cpu": _cpu_model(), "cores": os.cpu_count(), "memory_gib": _mem_gib() or 0.0,
                    "system": f"{_platform.system()} {_platform.release()}", "host": _platform.node()},
        "threads": threads,
        "copy_bandwidth": copy,
        "versions": {"ptocpu": ptocpu.__version__, "simd": info.get("simd_target_dispatched", "?"),
                     "numpy": np.__version__, **({"torch": torch.__version__} if torch is not None else {}),
                     "python": _platform.python_version()},
        "bytes_unit": "bytes; table MB = 1e6 bytes, GB/s = 1e9 bytes/s",
    }
    _annotate(results)
    table = format_table(header, results, peers)
    print(table)
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
