"""The benchmark cases: docs/benchmarks.md's published set, their inputs, the peers' calls and the bytes each must move."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import ml_dtypes

import ptocpu

try:  # torch is a peer, never a requirement
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None


BF16 = np.dtype(ml_dtypes.bfloat16)
_DTYPES = {"fp32": np.dtype(np.float32), "fp16": np.dtype(np.float16), "bf16": BF16, "fp64": np.dtype(np.float64),
           "int8": np.dtype(np.int8), "int16": np.dtype(np.int16), "int32": np.dtype(np.int32),
           "int64": np.dtype(np.int64)}
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}

COPY_BYTES = 256 << 20  # the copy-bandwidth buffer (docs/benchmarks.md: >= 256 MiB)
# The sweep's mid-size 2-D binary calls: 1M elements, whose operands and output stay in L2 / L3, and
# the second operand's shape per class.
_MID = (1024, 1024)
_MID_OPERANDS = {"same": _MID, "row-bcast": (1, 1024), "col-bcast": (1024, 1)}
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
    if dtype == "fp64":
        return a.astype(np.float64)
    if dtype in ("int8", "int16", "int32", "int64"):  # small values: integer add / multiply stay readable
        return rng.integers(-100, 100, size=shape, dtype=_DTYPES[dtype])
    raise ValueError(dtype)


def _index(rng: np.random.Generator, shape, bound: int, dtype: str = "int64") -> np.ndarray:
    return rng.integers(0, bound, size=shape, dtype=_DTYPES[dtype])


def _unique_rows(rng: np.random.Generator, rows: int, width: int, bound: int, dtype: str = "int64") -> np.ndarray:
    """[rows, width] with no value repeated within a row (a random subset of [0, bound) per row)."""
    base = np.broadcast_to(np.arange(bound, dtype=_DTYPES[dtype]), (rows, bound))
    return np.ascontiguousarray(rng.permuted(base, axis=1)[:, :width])


def padded(a: np.ndarray, empty: bool = False) -> np.ndarray:
    """A strided view holding a's values (or nothing, when empty): rows of a buffer twice as long."""
    base = np.empty(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    view = base[..., :a.shape[-1]]
    if not empty:
        view[...] = a
    return view


def _empty_like(a: np.ndarray) -> np.ndarray:
    """An uninitialised array with a's layout class (contiguous, or padded rows)."""
    return np.empty_like(a) if a.flags.c_contiguous else padded(a, empty=True)


def _torch(a: np.ndarray):
    """A torch tensor over the same memory (bf16 through an int16 view)."""
    if a.dtype == BF16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def to_numpy(r) -> Any:
    """Any tool's result as numpy arrays (tuples stay tuples)."""
    if isinstance(r, (tuple, list)):
        return tuple(to_numpy(v) for v in r)
    if isinstance(r, ptocpu.Tensor):
        return np.asarray(r.numpy())
    if torch is not None and isinstance(r, torch.Tensor):
        if r.dtype == torch.bfloat16:
            return r.view(torch.int16).numpy().view(BF16)
        return r.numpy()
    return np.asarray(r)


def compare(got, want, tol) -> str | None:
    """None when equal (bit-exact, or within tol = (rtol, atol) in float64), else what differs."""
    got, want = to_numpy(got), to_numpy(want)
    if isinstance(want, tuple) != isinstance(got, tuple):
        return "result structure differs"
    if isinstance(want, tuple):
        if len(got) != len(want):
            return f"{len(got)} outputs instead of {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            msg = compare(g, w, tol)
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
    call: str     # docs/benchmarks.md's description
    dtype: str
    build: Callable[[np.random.Generator], dict]
    tools: Callable[[dict], dict]        # name -> Tool, ptocpu first; a tool missing is skipped
    bytes: Callable[[dict], int]
    tol: tuple | None = None             # None: bit-exact
    tiny: bool = False
    # How a peer's result is checked against ptocpu's when they cannot be equal (random draws):
    # check(ptocpu's, peer's) -> None, or what differs. None: compare() with tol.
    check: Callable[[Any, Any], str | None] | None = None


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
    px_np = _empty_like(x0)
    px = ptocpu.asarray(px_np)
    psrc = src if scalar else ptocpu.asarray(src)
    t["ptocpu"] = Tool(functools.partial(fn, px, dim, ptocpu.asarray(idx), psrc, reduce=reduce) if fn else None,
                       functools.partial(np.copyto, px_np, x0))
    if torch is not None:
        tx = _torch(_empty_like(x0))
        tx0 = _torch(x0)
        ti = _torch(idx)
        tsrc = float(src) if scalar else _torch(src)
        if reduce is None:
            run = functools.partial(tx.scatter_, dim, ti, tsrc)
        else:
            run = functools.partial(tx.scatter_reduce_, dim, ti, tsrc, "sum" if reduce == "add" else "prod",
                                    include_self=True)
        t["torch"] = Tool(run, functools.partial(tx.copy_, tx0))
    nx = _empty_like(x0)
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
    if reduce is not None:  # the peers accumulate in another order / precision than docs/ops/scatter.md
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
            else:  # a copy, as strided_slice makes: .contiguous() of a slice that already is returns a view
                t["torch"] = Tool(lambda: tx[key].clone(memory_format=torch.contiguous_format))
        t["numpy"] = Tool(lambda: np.array(x[key], order="C", copy=True))
        return t

    def nbytes(inp):
        return 2 * inp["x"][key].nbytes

    return Case(id_, "strided_slice", call, dtype, build, tools, nbytes, tiny=tiny)


# gather / scatter_update / index_add_ / gathermask ------------------------------------------

def _ga_case(id_, xshape, dtype, dim, ishape, idtype, call, tiny=False):
    def build(rng):
        return {"x": _random(rng, xshape, dtype), "idx": _index(rng, ishape, xshape[dim], idtype), "dim": dim}

    def tools(inp):
        x, idx, dim_ = inp["x"], inp["idx"], inp["dim"]
        t = {"ptocpu": Tool(functools.partial(ptocpu.gather, ptocpu.asarray(x), dim_, ptocpu.asarray(idx)))}
        if torch is not None:  # torch.gather takes int64 indices only (converted untimed)
            t["torch"] = Tool(functools.partial(torch.gather, _torch(x), dim_, _torch(idx.astype(np.int64))))
        t["numpy"] = Tool(functools.partial(np.take_along_axis, x, idx, axis=dim_))
        return t

    def nbytes(inp):  # read + write of the output's elements, and the index
        return 2 * inp["idx"].size * inp["x"].itemsize + inp["idx"].nbytes

    return Case(id_, "gather", call, dtype, build, tools, nbytes, tiny=tiny)


def _su_case(id_, cache_shape, dtype, ishape, idtype, call, tiny=False, pad=0.0):
    """A paged-cache write: unique slots (as the official tests use), src holding one row per slot;
    a fraction pad of the slots is -1 (a padding row, skipped; the peers get the other rows, untimed)."""
    four_d = len(cache_shape) == 4
    slots = cache_shape[0] * (cache_shape[1] if four_d else 1)
    row = tuple(cache_shape[2:] if four_d else cache_shape[1:])

    def build(rng):
        n = math.prod(ishape)
        idx = rng.permutation(slots)[:n]
        idx[rng.random(n) < pad] = -1
        idx = idx.astype(_DTYPES[idtype]).reshape(ishape)
        src_shape = (*ishape, *row) if four_d else (n, *row)
        return {"cache": _random(rng, cache_shape, dtype), "idx": idx, "src": _random(rng, src_shape, dtype)}

    def tools(inp):
        cache0, idx, src = inp["cache"], inp["idx"], inp["src"]
        pc_np = cache0.copy()
        t = {"ptocpu": Tool(functools.partial(ptocpu.scatter_update, ptocpu.asarray(pc_np), -2, ptocpu.asarray(idx),
                                              ptocpu.asarray(src)),
                            functools.partial(np.copyto, pc_np, cache0))}
        kept = idx.ravel() >= 0
        flat_np = idx.astype(np.int64).ravel()[kept]
        src_rows = np.ascontiguousarray(src.reshape(-1, *row)[kept])
        if torch is not None:  # the same rows as [slots, *row] tensors; untimed int64 flat index
            tc = _torch(cache0.copy()).view(slots, *row)
            tsrc = _torch(src_rows)
            flat = torch.from_numpy(flat_np)
            reset = functools.partial(tc.copy_, _torch(cache0).view(slots, *row))
            t["torch"] = Tool(lambda: tc.index_copy_(0, flat, tsrc).view(cache_shape), reset)
        nc = cache0.copy()
        nview, nsrc = nc.reshape(slots, *row), src_rows

        def numpy_rows():
            nview[flat_np] = nsrc
            return nc
        t["numpy"] = Tool(numpy_rows, functools.partial(np.copyto, nc, cache0))
        return t

    def nbytes(inp):  # the rows written (padding skipped), read from src and written to the cache, and the index
        return 2 * int((inp["idx"] >= 0).sum()) * math.prod(row) * inp["cache"].itemsize + inp["idx"].nbytes

    return Case(id_, "scatter_update", call, dtype, build, tools, nbytes, tiny=tiny)


def _ia_case(id_, xshape, dtype, dim, n, idtype, call, tiny=False):
    d = dim % len(xshape)

    def build(rng):
        sshape = list(xshape)
        sshape[d] = n
        return {"x": _random(rng, xshape, dtype), "idx": _index(rng, (n,), xshape[d], idtype), "dim": d,
                "src": _random(rng, sshape, dtype)}

    def tools(inp):
        x0, idx, dim_, src = inp["x"], inp["idx"], inp["dim"], inp["src"]
        px_np = x0.copy()
        t = {"ptocpu": Tool(functools.partial(ptocpu.index_add_, ptocpu.asarray(px_np), dim_, ptocpu.asarray(idx),
                                              ptocpu.asarray(src)),
                            functools.partial(np.copyto, px_np, x0))}
        if torch is not None:
            tx, tx0 = _torch(x0.copy()), _torch(x0)
            t["torch"] = Tool(functools.partial(tx.index_add_, dim_, _torch(idx), _torch(src)),
                              functools.partial(tx.copy_, tx0))
        nx = x0.copy()
        grid = [slice(None)] * x0.ndim
        grid[dim_] = idx

        def numpy_add():
            np.add.at(nx, tuple(grid), src)
            return nx
        if dtype != "bf16":  # numpy has no bf16 add.at
            t["numpy"] = Tool(numpy_add, functools.partial(np.copyto, nx, x0))
        return t

    def nbytes(inp):  # source and index read, each target element read and written once per entry
        return 2 * inp["src"].nbytes + inp["idx"].nbytes

    # fp16 / bf16 accumulate in fp32 and round once per element (docs/ops/index_add.md); the peers
    # round after every slice on some paths (torch 2.13 on a Xeon with AVX-512 BF16 did on
    # [4096, 512] bf16 with four entries per row): a tolerance that grows with the entries per target.
    per_target = max(1.0, n / xshape[d])
    tol = {"fp16": (2.0 ** -8, 1e-3 * per_target), "bf16": (2.0 ** -5, 1e-2 * per_target)}.get(dtype)
    return Case(id_, "index_add_", call, dtype, build, tools, nbytes, tol=tol, tiny=tiny)


def _gm_first_step(mode):
    """The last-dim slice first::step a pattern_mode keeps (docs/ops/gathermask.md)."""
    return (mode - 1, 2) if mode <= 2 else (mode - 3, 4) if mode <= 6 else (0, 1)


def _gm_case(id_, shape, dtype, mode, call, tiny=False):
    first, step = _gm_first_step(mode)
    key = np.s_[..., first::step]

    def build(rng):
        return {"x": _random(rng, shape, dtype)}

    def tools(inp):
        x = inp["x"]
        t = {"ptocpu": Tool(functools.partial(ptocpu.gathermask, ptocpu.asarray(x), mode))}
        if torch is not None:  # a copy even for mode 7, whose slice is x itself (contiguous() would return x)
            tx = _torch(x)
            t["torch"] = Tool(lambda: tx[key].clone(memory_format=torch.contiguous_format))
        t["numpy"] = Tool(lambda: x[key].copy(order="C"))
        return t

    def nbytes(inp):
        return 2 * inp["x"][key].nbytes

    return Case(id_, "gathermask", call, dtype, build, tools, nbytes, tiny=tiny)


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
    # The indexing family next to the seeds (docs/ops/gather.md, scatter_update.md, index_add.md, gathermask.md).
    _ga_case("GA1", (4096, 4096), "fp32", 1, (4096, 2048), "int64", "x [4096, 4096], dim 1, index [4096, 2048] int64"),
    _ga_case("GA2", (8192, 1024), "bf16", 0, (4096, 1024), "int32", "x [8192, 1024], dim 0, index [4096, 1024] int32"),
    _su_case("SU1", (65536, 512), "bf16", (64, 512), "int64",
             "cache [65536, 512] (2-D), index [64, 512] unique int64, src [32768, 512]"),
    _su_case("SU2", (512, 128, 1, 576), "bf16", (16, 2048), "int32",
             "cache [512, 128, 1, 576] (4-D paged), index [16, 2048] unique int32, src [16, 2048, 1, 576]"),
    _ia_case("IA1", (32768, 512), "fp32", 0, 65536, "int64", "x [32768, 512], dim 0, index [65536] int64, alpha 1"),
    _ia_case("IA2", (4096, 4096), "bf16", -1, 8192, "int32", "x [4096, 4096], dim -1, index [8192] int32, alpha 1"),
    _gm_case("GM1", (4096, 8192), "fp32", 1, "x [4096, 8192], pattern_mode 1 (x[..., 0::2])"),
    _gm_case("GM2", (8192, 4096), "fp16", 5, "x [8192, 4096], pattern_mode 5 (x[..., 2::4])"),
    _ga_case("TINY-GA", (8, 16), "fp32", 1, (8, 4), "int64", "gather x [8, 16], dim 1, index [8, 4]", tiny=True),
    _su_case("TINY-SU", (16, 16), "fp32", (2, 2), "int64", "scatter_update cache [16, 16], index [2, 2]", tiny=True),
    _ia_case("TINY-IA", (8, 16), "fp32", 0, 4, "int64", "index_add_ x [8, 16], dim 0, index [4]", tiny=True),
    _gm_case("TINY-GM", (8, 16), "fp32", 1, "gathermask x [8, 16], pattern_mode 1", tiny=True),
]


# --------------------------------------------------------------------------------------------
# measurement


def select_cases(ids: list[str] | None) -> list[Case]:
    """Every published case, or those named: an id, a prefix ending in '*' (KERNEL-*), TINY or KERNEL."""
    from .kernels import KERNEL_CASES  # (they build on this module)

    every = CASES + KERNEL_CASES
    if not ids:
        return every
    wanted = [w.strip().upper() for item in ids for w in item.split(",") if w.strip()]
    known = {c.id for c in every}
    out = []
    for w in wanted:
        if w == "TINY":
            match = [c for c in every if c.tiny]
        elif w == "KERNEL":
            match = list(KERNEL_CASES)
        elif w.endswith("*") and any(c.id.startswith(w[:-1]) for c in every):
            match = [c for c in every if c.id.startswith(w[:-1])]
        elif w in known:
            match = [c for c in every if c.id == w]
        else:
            raise SystemExit(f"ptocpu bench: unknown case {w!r}; known: {', '.join(sorted(known))}, TINY, KERNEL "
                             "(or a prefix ending in '*')")
        out += [c for c in match if c not in out]
    return out


