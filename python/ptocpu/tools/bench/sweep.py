"""`ptocpu bench --sweep`: a grid of shapes over every operator against torch (docs/benchmarks.md "The sweep").

The published cases are a sample; the sweep covers the shape classes users meet: tall and
narrow rows (1-64 elements), wide rows, 1-D, 3-D to 8-D, tiny, every dim, every dtype width,
int32 / int64 index, scalar / tensor src, every reduce, with and without duplicates,
contiguous and strided (padded-row) inputs. Each case moves a few MB to ~64 MB so the whole
grid runs in a few minutes.

SWEEP lists case generators (functions returning a list of Cases; each Case names its op). This
module holds the indexing family's; each other family has a module `sweep_<family>.py` beside it
with its own SWEEP, joined here. Case ids name the op and the shape class, e.g.
`SW-SC-d0-rows16-add`.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .cases import (Case, _DTYPES, _ga_case, _gm_case, _gm_first_step, _ia_case, _il_tools, _di_tools, _index,
                    _is_tools, _is_bytes, _pair_bytes, _random, _sc_bytes, _sc_tools, _ss_case, _su_case, padded)

ELEMS = 1 << 22  # elements of a typical sweep input (16 MB of fp32)


def _shape(s) -> str:
    return "[" + ", ".join(str(v) for v in s) + "]"


def _maybe_padded(a: np.ndarray, strided: bool) -> np.ndarray:
    return padded(a) if strided else a


# index_select ------------------------------------------------------------------------------

def _is(id_, xshape, dim, ishape, dtype="fp32", idtype="int64", bound=None, strided=False, tiny=False) -> Case:
    d = dim % len(xshape)

    def build(rng):
        x = _maybe_padded(_random(rng, xshape, dtype), strided)
        return {"x": x, "idx": _index(rng, ishape, bound or xshape[d], idtype), "dim": d}

    call = (f"x {_shape(xshape)}{' padded rows' if strided else ''}, dim {dim}, index {_shape(ishape)} {idtype}"
            + (f" in [0, {bound})" if bound else ""))
    return Case(id_, "index_select", call, dtype, build, _is_tools, _is_bytes, tiny=tiny)


def index_select_rows() -> list[Case]:
    """dim 0 on rows of 1-64 elements (tall and narrow), then wide rows."""
    out = [_is(f"SW-IS-rows{w}", (ELEMS // w, w), 0, (ELEMS // (2 * w),)) for w in (1, 2, 4, 8, 16, 32, 64)]
    out.append(_is("SW-IS-rows1024", (16384, 1024), 0, (8192,)))
    out.append(_is("SW-IS-rows8-i32", (ELEMS // 8, 8), 0, (ELEMS // 16,), idtype="int32"))
    out.append(_is("SW-IS-rows64-strided", (ELEMS // 64, 64), 0, (ELEMS // 128,), strided=True))
    out.append(_is("SW-IS-rows64-dup", (1024, 64), 0, (ELEMS // 64,)))  # embedding lookup: many repeats
    out.append(_is("SW-IS-rows16-idx2d", (ELEMS // 16, 16), 0, (1024, 128)))
    return out


def index_select_widths() -> list[Case]:
    """Every dtype width on narrow rows."""
    return [_is(f"SW-IS-rows16-{dt}", (ELEMS // 16, 16), 0, (ELEMS // 32,), dtype=dt)
            for dt in ("int8", "fp16", "bf16", "fp64")]


_ITEMSIZE = {"int8": 1, "fp16": 2, "bf16": 2, "fp32": 4, "int64": 8}
TABLE_BYTES = 1 << 25  # a 32 MiB table: random rows come from memory, not from the caches


def index_select_short_rows() -> list[Case]:
    """dim 0 picking 10 % / 25 % / 50 % of many short rows (8 to 64 bytes) of 1-, 2-, 4- and 8-byte
    elements: each row is a fraction of a cache line, read at random."""
    out = []
    for dt in ("int8", "fp16", "fp32", "int64"):
        for row_bytes in (8, 16, 32, 64):
            w = row_bytes // _ITEMSIZE[dt]
            rows = TABLE_BYTES // row_bytes
            out.append(_is(f"SW-IS-short-{dt}-b{row_bytes}-p10", (rows, w), 0, (rows // 10,), dtype=dt))
    for dt, row_bytes in (("int8", 32), ("int8", 16), ("fp32", 32), ("fp16", 64)):
        w, rows = row_bytes // _ITEMSIZE[dt], TABLE_BYTES // row_bytes
        for pct in (25, 50):
            out.append(_is(f"SW-IS-short-{dt}-b{row_bytes}-p{pct}", (rows, w), 0, (rows * pct // 100,), dtype=dt))
    # A table that fits the last-level cache, and an int32 index.
    out.append(_is("SW-IS-short-int8-b32-p10-small", (1 << 17, 32), 0, ((1 << 17) // 10,), dtype="int8"))
    out.append(_is("SW-IS-short-int8-b32-p10-i32", (TABLE_BYTES // 32, 32), 0, (TABLE_BYTES // 320,), dtype="int8",
                   idtype="int32"))
    return out


def index_select_embedding() -> list[Case]:
    """Embedding lookups: 512 to 8192 random rows of a [50000, 768] fp16 / fp32 table."""
    out = []
    for dt in ("fp16", "fp32"):
        for n in (512, 2048, 4096, 8192):
            out.append(_is(f"SW-IS-emb-{dt}-n{n}", (50000, 768), 0, (n,), dtype=dt))
    out.append(_is("SW-IS-emb-fp16-n4096-i32", (50000, 768), 0, (4096,), dtype="fp16", idtype="int32"))
    return out


def index_select_dims() -> list[Case]:
    """1-D, the last dim, middle dims of 3-D to 8-D."""
    return [
        _is("SW-IS-1d", (ELEMS,), 0, (ELEMS,)),
        _is("SW-IS-1d-fp16-i32", (ELEMS,), 0, (ELEMS,), dtype="fp16", idtype="int32"),
        _is("SW-IS-last-rows32", (ELEMS // 32, 32), 1, (16,)),
        _is("SW-IS-last-rows256", (ELEMS // 256, 256), -1, (64,), idtype="int32"),
        _is("SW-IS-last-strided", (ELEMS // 32, 32), 1, (16,), strided=True),
        _is("SW-IS-3d-mid", (64, 2048, 32), 1, (1024,)),
        _is("SW-IS-3d-mid-inner4", (256, 4096, 4), 1, (2048,)),
        _is("SW-IS-5d", (8, 8, 64, 64, 16), 2, (32,), dtype="bf16"),
        _is("SW-IS-8d", (4, 4, 4, 4, 4, 8, 16, 16), 5, (4,)),
        _is("SW-IS-tiny-rows", (4, 4), 0, (2,), tiny=True),
        _is("SW-IS-tiny-last", (64, 8), 1, (4,), tiny=True),
    ]


# interleave / deinterleave -----------------------------------------------------------------

def _pair(id_, op, shape, dtype="fp32", two=True, strided=False, tiny=False) -> Case:
    def build(rng):
        a = _maybe_padded(_random(rng, shape, dtype), strided)
        b = _maybe_padded(_random(rng, shape, dtype), strided) if two else None
        return {"a": a, "b": b}

    what = "a, b" if two else "x"
    call = f"{what} {_shape(shape)}{' padded rows' if strided else ''}"
    return Case(id_, op, call, dtype, build, _il_tools if op == "interleave" else _di_tools, _pair_bytes, tiny=tiny)


def interleave_shapes() -> list[Case]:
    half = ELEMS // 2
    return [
        _pair("SW-IL-1d", "interleave", (half,)),
        _pair("SW-IL-rows2", "interleave", (half // 2, 2)),
        _pair("SW-IL-rows4", "interleave", (half // 4, 4)),
        _pair("SW-IL-rows64-fp16", "interleave", (half // 64, 64), "fp16"),
        _pair("SW-IL-int8", "interleave", (2048, 2048), "int8"),
        _pair("SW-IL-fp64", "interleave", (1024, 512), "fp64"),
        _pair("SW-IL-4d-bf16", "interleave", (16, 16, 64, 64), "bf16"),
        _pair("SW-IL-strided", "interleave", (half // 256, 256), strided=True),
        _pair("SW-IL-tiny", "interleave", (4, 4), tiny=True),
    ]


def deinterleave_shapes() -> list[Case]:
    return [
        _pair("SW-DI-1d", "deinterleave", (ELEMS,), two=False),
        _pair("SW-DI-rows2", "deinterleave", (ELEMS // 2, 2), two=False),
        _pair("SW-DI-rows8", "deinterleave", (ELEMS // 8, 8), two=False),
        _pair("SW-DI-rows2-two", "deinterleave", (ELEMS // 4, 2)),
        _pair("SW-DI-int8", "deinterleave", (2048, 4096), "int8", two=False),
        _pair("SW-DI-3d-fp16", "deinterleave", (64, 256, 128), "fp16"),
        _pair("SW-DI-strided", "deinterleave", (ELEMS // 512, 256), strided=True),
        _pair("SW-DI-tiny", "deinterleave", (4, 8), two=False, tiny=True),
    ]


# scatter_ ----------------------------------------------------------------------------------

_TOL = {"fp32": (1e-5, 1e-6), "fp64": (1e-12, 1e-12), "fp16": (2.0 ** -8, 1e-3), "bf16": (2.0 ** -5, 1e-2)}


def _distinct_along(rng, xshape, ishape, dim, idtype):
    """An index of ishape whose values along dim are distinct (a random subset per target line)."""
    full = list(ishape)
    full[dim] = xshape[dim]
    keys = rng.random(full, dtype=np.float32)
    order = np.argsort(keys, axis=dim, kind="stable")
    return np.ascontiguousarray(np.take(order, np.arange(ishape[dim]), axis=dim)).astype(_DTYPES[idtype])


def _sc(id_, xshape, dim, ishape, dtype="fp32", reduce=None, src="tensor", idtype="int64", dup=True,
        strided=None, tiny=False) -> Case:
    """strided: None, "x" (x has padded rows) or "src" (src has padded rows)."""
    d = dim % len(xshape)

    def build(rng):
        lo, hi = (0.5, 1.5) if reduce == "multiply" else (-1.0, 1.0)
        x = _maybe_padded(_random(rng, xshape, dtype, lo, hi), strided == "x")
        idx = (_index(rng, ishape, xshape[d], idtype) if dup else _distinct_along(rng, xshape, ishape, d, idtype))
        s = src if src != "tensor" else _maybe_padded(_random(rng, ishape, dtype, lo, hi), strided == "src")
        return {"x": x, "idx": idx, "dim": d, "src": s, "reduce": reduce}

    call = (f"x {_shape(xshape)}{' padded rows' if strided == 'x' else ''}, dim {dim}, index {_shape(ishape)} "
            f"{idtype} {'random' if dup else 'distinct along dim'}, "
            f"src {'tensor' + (' padded rows' if strided == 'src' else '') if src == 'tensor' else src}, "
            f"reduce {reduce}")
    tol = None if reduce is None or dtype not in _TOL else _TOL[dtype]
    return Case(id_, "scatter_", call, dtype, build, _sc_tools, _sc_bytes, tol=tol, tiny=tiny)


def scatter_dim0() -> list[Case]:
    """dim 0 (the index rows pick target rows), narrow to wide rows, every reduce."""
    out = [_sc(f"SW-SC-d0-rows{w}", (ELEMS // w, w), 0, (ELEMS // (2 * w), w)) for w in (1, 4, 16, 64)]
    out += [
        _sc("SW-SC-d0-rows64-add", (ELEMS // 64, 64), 0, (ELEMS // 128, 64), reduce="add"),
        _sc("SW-SC-d0-rows8-add", (ELEMS // 8, 8), 0, (ELEMS // 16, 8), reduce="add"),
        _sc("SW-SC-d0-rows16-mul", (ELEMS // 16, 16), 0, (ELEMS // 32, 16), reduce="multiply"),
        _sc("SW-SC-d0-rows16-fp16-add", (ELEMS // 16, 16), 0, (ELEMS // 32, 16), "fp16", reduce="add"),
        _sc("SW-SC-d0-rows32-distinct", (ELEMS // 32, 32), 0, (ELEMS // 64, 32), dup=False),
        _sc("SW-SC-d0-rows16-scalar", (ELEMS // 16, 16), 0, (ELEMS // 32, 16), src=2.0),
        _sc("SW-SC-d0-rows1024-add", (4096, 1024), 0, (4096, 1024), reduce="add"),
        _sc("SW-SC-d0-dense-rows64-add", (1024, 64), 0, (ELEMS // 64, 64), reduce="add"),  # many per target
        _sc("SW-SC-d0-rows64-i32-int32-add", (ELEMS // 64, 64), 0, (ELEMS // 128, 64), "int32", reduce="add",
            idtype="int32"),
        _sc("SW-SC-d0-rows64-strided", (ELEMS // 64, 64), 0, (ELEMS // 128, 64), strided="x"),
    ]
    return out


def scatter_inner() -> list[Case]:
    """The last dim: narrow rows with few index columns, wide rows, every dtype width and reduce."""
    return [
        _sc("SW-SC-d1-rows8-col1", (1 << 20, 8), 1, (1 << 20, 1)),
        _sc("SW-SC-d1-rows16-col4", (1 << 20, 16), 1, (1 << 20, 4), dup=False),
        _sc("SW-SC-d1-rows4-col4-add", (1 << 20, 4), 1, (1 << 20, 4), reduce="add"),
        _sc("SW-SC-d1-rows64-col16-scalar", (ELEMS // 64, 64), 1, (ELEMS // 64, 16), src=1.5),
        _sc("SW-SC-d1-rows32-col32-bf16-mul", (ELEMS // 32, 32), 1, (ELEMS // 32, 32), "bf16", reduce="multiply"),
        _sc("SW-SC-d1-rows8-col8-fp16-add", (ELEMS // 8, 8), 1, (ELEMS // 8, 8), "fp16", reduce="add"),
        _sc("SW-SC-d1-wide", (2048, 8192), 1, (2048, 2048), dup=False),
        _sc("SW-SC-d1-wide-int8", (2048, 8192), 1, (2048, 4096), "int8", idtype="int32"),
        _sc("SW-SC-d1-wide-int16-add", (1024, 4096), 1, (1024, 4096), "int16", reduce="add"),
        _sc("SW-SC-d1-rows64-src-strided", (ELEMS // 64, 64), 1, (ELEMS // 64, 32), strided="src", dup=False),
    ]


def scatter_columns() -> list[Case]:
    """The last dim of rows 8 to 64 wide with a one-column index (one target per row) or a
    full-width index (as many contributions as the row has elements), reduce None and add."""
    out = []
    for w in (8, 16, 64):
        rows = ELEMS // w
        out.append(_sc(f"SW-SC-col1-rows{w}", (rows, w), 1, (rows, 1)))
        out.append(_sc(f"SW-SC-col1-rows{w}-add", (rows, w), 1, (rows, 1), reduce="add"))
    out.append(_sc("SW-SC-col1-rows8-fp16", (ELEMS // 8, 8), 1, (ELEMS // 8, 1), "fp16"))
    out.append(_sc("SW-SC-col1-rows16-int8-i32", (ELEMS // 16, 16), 1, (ELEMS // 16, 1), "int8", idtype="int32"))
    for w in (8, 16, 32, 64):
        rows = ELEMS // w
        out.append(_sc(f"SW-SC-full-rows{w}-add", (rows, w), 1, (rows, w), reduce="add"))
    out += [
        _sc("SW-SC-full-rows64-fp16-add", (ELEMS // 64, 64), 1, (ELEMS // 64, 64), "fp16", reduce="add"),
        _sc("SW-SC-full-rows64-int32-add", (ELEMS // 64, 64), 1, (ELEMS // 64, 64), "int32", reduce="add"),
        _sc("SW-SC-full-rows32-bf16-add", (ELEMS // 32, 32), 1, (ELEMS // 32, 32), "bf16", reduce="add"),
        _sc("SW-SC-full-rows16", (ELEMS // 16, 16), 1, (ELEMS // 16, 16)),
        _sc("SW-SC-full-rows64", (ELEMS // 64, 64), 1, (ELEMS // 64, 64)),
        _sc("SW-SC-full-rows64-mul", (ELEMS // 64, 64), 1, (ELEMS // 64, 64), reduce="multiply"),
    ]
    return out


def scatter_dims() -> list[Case]:
    """1-D and 3-D / 4-D at every dim, tiny."""
    return [
        _sc("SW-SC-1d", (ELEMS,), 0, (ELEMS // 2,)),
        _sc("SW-SC-1d-add-i32", (ELEMS,), 0, (ELEMS // 2,), reduce="add", idtype="int32"),
        _sc("SW-SC-3d-d0", (256, 128, 64), 0, (128, 128, 64)),
        _sc("SW-SC-3d-d1-add", (64, 1024, 64), 1, (64, 512, 64), reduce="add"),
        _sc("SW-SC-3d-d2", (1024, 64, 64), 2, (1024, 64, 16), dup=False),
        _sc("SW-SC-4d-d2-fp16", (16, 16, 256, 64), 2, (16, 16, 128, 64), "fp16"),
        # packed blocks of 1- and 2-byte elements, other sizes and reduces
        _sc("SW-SC-3d-d1-int8", (64, 512, 128), 1, (64, 256, 128), "int8"),
        _sc("SW-SC-3d-d1-bf16-add", (32, 1024, 32), 1, (32, 1024, 32), "bf16", reduce="add"),
        _sc("SW-SC-tiny-d0", (8, 16), 0, (4, 16), tiny=True),
    ]


# strided_slice -----------------------------------------------------------------------------

def _ss(id_, xshape, key, dtype="fp32", flip=None, strided=False, tiny=False) -> Case:
    """key: a tuple of slices, one per dim; flip: dims to torch.flip for a full reverse."""
    begin, end, strides = [], [], []
    begin_mask = end_mask = 0
    for i, s in enumerate(key):
        begin.append(0 if s.start is None else s.start)
        end.append(0 if s.stop is None else s.stop)
        strides.append(1 if s.step is None else s.step)
        begin_mask |= (s.start is None) << i
        end_mask |= (s.stop is None) << i
    text = ", ".join(f"{'' if s.start is None else s.start}:{'' if s.stop is None else s.stop}"
                     f"{'' if s.step is None else ':' + str(s.step)}" for s in key)
    call = f"x {_shape(xshape)}{' padded rows' if strided else ''} [{text}]"
    case = _ss_case(id_, xshape, dtype, (begin, end, strides), {"begin_mask": begin_mask, "end_mask": end_mask},
                    tuple(key), flip, call, tiny=tiny)
    if strided:
        inner = case.build
        case.build = lambda rng: {"x": padded(inner(rng)["x"])}
    return case


def strided_slice_shapes() -> list[Case]:
    a = slice(None)
    return [
        _ss("SW-SS-outer3-rows16", (1 << 20, 16), (slice(None, None, 3), a)),
        _ss("SW-SS-outer2-rows8", (1 << 21, 8), (slice(None, None, 2), a)),
        _ss("SW-SS-outer4-rows4", (1 << 22, 4), (slice(1, None, 4), a)),
        _ss("SW-SS-outer2-rows64", (1 << 16, 64), (slice(None, None, 2), a)),
        _ss("SW-SS-outer3-rows16-fp16", (1 << 20, 16), (slice(None, None, 3), a), "fp16"),
        _ss("SW-SS-inner2-rows16", (1 << 20, 16), (a, slice(None, None, 2))),
        _ss("SW-SS-inner3-rows8", (1 << 21, 8), (a, slice(1, None, 3))),
        _ss("SW-SS-rows-crop", (1 << 18, 16), (slice(1, -1), slice(2, -2))),
        _ss("SW-SS-1d-step2", (ELEMS,), (slice(None, None, 2),)),
        _ss("SW-SS-1d-crop", (ELEMS,), (slice(3, -3),)),
        _ss("SW-SS-1d-reverse", (ELEMS,), (slice(None, None, -1),), flip=[0]),
        _ss("SW-SS-reverse-rows16-int64", (1 << 19, 16), (slice(None, None, -1), slice(None, None, -1)), "int64",
            flip=[0, 1]),
        _ss("SW-SS-wide-step2", (4096, 4096), (slice(None, None, 2), slice(None, None, 2))),
        _ss("SW-SS-wide-int8-step3", (4096, 4096), (slice(None, None, 2), slice(None, None, 3)), "int8"),
        _ss("SW-SS-3d-mid2", (256, 256, 64), (a, slice(None, None, 2), a), "bf16"),
        _ss("SW-SS-5d", (16, 16, 16, 16, 64), (a, slice(1, None, 2), a, slice(None, None, 2), slice(0, 32))),
        _ss("SW-SS-8d", (4, 4, 4, 4, 4, 8, 16, 16), (a,) * 3 + (slice(None, None, 2),) + (a,) * 4),
        _ss("SW-SS-strided-rows64", (1 << 16, 64), (slice(None, None, 2), slice(0, 48)), strided=True),
        _ss("SW-SS-tiny", (4, 4), (slice(None, None, 2), a), tiny=True),
    ]


def strided_slice_outer_steps() -> list[Case]:
    """Steps 2, 3, 4 on an outer dim over whole rows of 8 to 64 elements (each output row one
    contiguous copy), every element width, 2-D and 3-D; and steps on both dims."""
    a = slice(None)
    out = []
    for k in (2, 3, 4):
        for w in (8, 16, 32, 64):
            out.append(_ss(f"SW-SS-step{k}-rows{w}", (ELEMS // w, w), (slice(None, None, k), a)))
    out += [
        _ss("SW-SS-step3-rows32-int8", (ELEMS // 8, 32), (slice(None, None, 3), a), "int8"),
        _ss("SW-SS-step2-rows64-int8", (ELEMS // 16, 64), (slice(None, None, 2), a), "int8"),
        _ss("SW-SS-step3-rows16-fp16", (ELEMS // 16, 16), (slice(1, None, 3), a), "fp16"),
        _ss("SW-SS-step4-rows32-fp16", (ELEMS // 32, 32), (slice(None, None, 4), a), "fp16"),
        _ss("SW-SS-step3-rows8-int64", (ELEMS // 8, 8), (slice(None, None, 3), a), "int64"),
        _ss("SW-SS-step3-3d-mid", (256, 1024, 16), (a, slice(None, None, 3), a)),
        _ss("SW-SS-step2-3d-outer", (1024, 256, 16), (slice(None, None, 2), a, a), "fp16"),
        _ss("SW-SS-step3x3-2048", (2048, 2048), (slice(None, None, 3), slice(None, None, 3))),
        _ss("SW-SS-step3x3-8192-fp16", (8192, 4096), (slice(None, None, 3), slice(None, None, 3)), "fp16"),
        _ss("SW-SS-step2x2-rows16", (ELEMS // 16, 16), (slice(None, None, 2), slice(None, None, 2))),
    ]
    return out


# gather / scatter_update / index_add_ / gathermask -------------------------------------------

def _ga(id_, xshape, dim, ishape, dtype="fp32", idtype="int64") -> Case:
    return _ga_case(id_, xshape, dtype, dim, ishape, idtype,
                    f"x {_shape(xshape)}, dim {dim}, index {_shape(ishape)} {idtype}")


def gather_shapes() -> list[Case]:
    """dim 0, a middle dim and the last dim; narrow and wide rows; 1-, 2- and 4-byte elements; int32 / int64 index."""
    return [
        _ga("SW-GA-d0-rows16", (ELEMS // 16, 16), 0, (ELEMS // 32, 16)),
        _ga("SW-GA-d0-rows1024-fp16-i32", (8192, 1024), 0, (4096, 1024), "fp16", "int32"),
        _ga("SW-GA-3d-mid", (64, 2048, 32), 1, (64, 1024, 32)),
        _ga("SW-GA-last-rows8-fp16", (ELEMS // 8, 8), 1, (ELEMS // 8, 8), "fp16"),
        _ga("SW-GA-last-rows32", (ELEMS // 32, 32), 1, (ELEMS // 32, 16), idtype="int32"),
        _ga("SW-GA-last-wide-int8-i32", (2048, 4096), 1, (2048, 2048), "int8", "int32"),
    ]


def _su(id_, cache_shape, ishape, dtype="bf16", idtype="int64", pad=0.0) -> Case:
    layout = "4-D paged" if len(cache_shape) == 4 else "2-D"
    return _su_case(id_, cache_shape, dtype, ishape, idtype,
                    f"cache {_shape(cache_shape)} ({layout}), index {_shape(ishape)} unique {idtype}"
                    + (f", {pad:.0%} slots -1" if pad else ""), pad=pad)


def scatter_update_shapes() -> list[Case]:
    """2-D and 4-D paged caches, narrow and wide rows, with and without -1 padding slots."""
    return [
        _su("SW-SU-2d-d16-fp32", (1 << 18, 16), (64, 2048), "fp32"),
        _su("SW-SU-2d-d64-fp16-pad", (1 << 16, 64), (16, 2048), "fp16", pad=0.1),
        _su("SW-SU-2d-d512-pad", (65536, 512), (32, 512), idtype="int32", pad=0.25),
        _su("SW-SU-4d-d8-fp32-pad", (4096, 128, 1, 8), (64, 4096), "fp32", pad=0.1),
        _su("SW-SU-4d-d128", (1024, 128, 1, 128), (32, 2048), idtype="int32"),
        _su("SW-SU-4d-d576-pad", (512, 128, 1, 576), (8, 2048), pad=0.5),
    ]


def _ia(id_, xshape, dim, n, dtype="fp32", idtype="int64") -> Case:
    return _ia_case(id_, xshape, dtype, dim, n, idtype,
                    f"x {_shape(xshape)}, dim {dim}, index [{n}] {idtype} random (duplicates), alpha 1")


def index_add_shapes() -> list[Case]:
    """dim 0 and the last dim, narrow and wide rows, fp32 / bf16 / int32, few and many entries per target."""
    return [
        _ia("SW-IA-d0-rows16", (ELEMS // 16, 16), 0, ELEMS // 32),
        _ia("SW-IA-d0-rows64-int32", (ELEMS // 64, 64), 0, ELEMS // 64, "int32"),
        _ia("SW-IA-d0-rows512-bf16-dense", (4096, 512), 0, 16384, "bf16", "int32"),
        _ia("SW-IA-last-rows64", (ELEMS // 64, 64), -1, 32),
        _ia("SW-IA-last-wide-bf16", (2048, 4096), -1, 2048, "bf16", "int32"),
        _ia("SW-IA-last-rows1024-int32-dense", (2048, 1024), 1, 4096, "int32"),
    ]


def index_add_columns() -> list[Case]:
    """Along dim 1 (columns) of square and tall matrices: every row takes the same column
    contributions, a quarter, half or all of the columns, every float width and int32."""
    return [
        _ia("SW-IA-d1-sq2048-q", (2048, 2048), 1, 512),
        _ia("SW-IA-d1-sq4096-q", (4096, 4096), 1, 1024),
        _ia("SW-IA-d1-sq4096-half-i32", (4096, 4096), 1, 2048, idtype="int32"),
        _ia("SW-IA-d1-sq2048-full", (2048, 2048), 1, 2048),
        _ia("SW-IA-d1-sq4096-q-bf16", (4096, 4096), 1, 1024, "bf16"),
        _ia("SW-IA-d1-sq4096-q-fp16", (4096, 4096), 1, 1024, "fp16"),
        _ia("SW-IA-d1-sq2048-q-int32", (2048, 2048), 1, 512, "int32"),
        _ia("SW-IA-d1-tall16-q", (ELEMS // 16, 16), 1, 4),
        _ia("SW-IA-d1-tall64-q", (ELEMS // 64, 64), 1, 16),
        _ia("SW-IA-d1-tall64-full", (ELEMS // 64, 64), 1, 64),
        _ia("SW-IA-d1-tall256-q-fp16", (ELEMS // 256, 256), 1, 64, "fp16"),
        _ia("SW-IA-d1-3d", (64, 1024, 64), 1, 256),
    ]


def _gm(id_, shape, mode, dtype="fp32") -> Case:
    first, step = _gm_first_step(mode)
    return _gm_case(id_, shape, dtype, mode, f"x {_shape(shape)}, pattern_mode {mode} (x[..., {first}::{step}])")


def gathermask_shapes() -> list[Case]:
    """Every pattern family (1-2, 3-6, 7) on narrow and wide last dims, 1-, 2- and 4-byte elements."""
    return [
        _gm("SW-GM-m1-rows16", (ELEMS // 16, 16), 1),
        _gm("SW-GM-m2-rows8-fp16", (ELEMS // 8, 8), 2, "fp16"),
        _gm("SW-GM-m2-wide-int8", (2048, 8192), 2, "int8"),
        _gm("SW-GM-m3-rows4-int8", (ELEMS // 4, 4), 3, "int8"),
        _gm("SW-GM-m4-wide", (2048, 4096), 4),
        _gm("SW-GM-m6-rows32-fp16", (ELEMS // 32, 32), 6, "fp16"),
        _gm("SW-GM-m7-rows64", (ELEMS // 64, 64), 7),
    ]


def gathermask_narrow() -> list[Case]:
    """Every mode 1..7 on rows 4, 8 and 16 wide (fp32), and 1- / 2-byte elements for a stride 2,
    a stride 4 and the copy."""
    out = [_gm(f"SW-GM-m{mode}-w{w}", (ELEMS // w, w), mode) for w in (4, 8, 16) for mode in range(1, 8)]
    for dt in ("int8", "fp16"):
        for mode, w in ((1, 8), (4, 4), (6, 16), (7, 4)):
            out.append(_gm(f"SW-GM-m{mode}-w{w}-{dt}", (ELEMS // w, w), mode, dt))
    return out


SWEEP: list[Callable[[], list[Case]]] = [
    index_select_rows, index_select_widths, index_select_short_rows, index_select_embedding, index_select_dims,
    interleave_shapes, deinterleave_shapes, scatter_dim0, scatter_inner, scatter_columns, scatter_dims,
    strided_slice_shapes, strided_slice_outer_steps, gather_shapes, scatter_update_shapes, index_add_shapes,
    index_add_columns, gathermask_shapes, gathermask_narrow,
]


def _all_sweeps() -> list[Callable[[], list[Case]]]:
    """This module's SWEEP and every sweep_<family> module's."""
    import importlib
    import pkgutil
    from . import __path__ as here
    generators = list(SWEEP)
    for module in pkgutil.iter_modules(here):
        if module.name.startswith("sweep_"):
            generators += importlib.import_module(f"{__package__}.{module.name}").SWEEP
    return generators


def sweep_cases() -> list[Case]:
    cases = [case for gen in _all_sweeps() for case in gen()]
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids)), "sweep case ids must be unique"
    return cases


def select_sweep(ids: list[str] | None) -> list[Case]:
    """The whole sweep, or the cases named (an id, or a prefix ending in '*', e.g. SW-SC-*)."""
    cases = sweep_cases()
    if not ids:
        return cases
    wanted = [w.strip().upper() for item in ids for w in item.split(",") if w.strip()]
    out: list[Case] = []
    for w in wanted:
        match = [c for c in cases if (c.id.upper().startswith(w[:-1]) if w.endswith("*") else c.id.upper() == w)]
        if not match:
            raise SystemExit(f"ptocpu bench --sweep: unknown case {w!r}; known: "
                             f"{', '.join(c.id for c in cases)} (or a prefix ending in '*')")
        out += [c for c in match if c not in out]
    return out


# From this share of the machine's CPU time taken by its host during a case (steal), the summary says
# so: on two virtual CPUs a case run while one was taken is no measure of either tool.
STEAL_NOTED = 0.05


def _stolen(r: dict) -> str:
    steal = r.get("steal")
    return f" (host took {steal:.0%} of the CPU time meanwhile)" if steal is not None and steal >= STEAL_NOTED else ""


def summary(results: list[dict], worst: int = 5) -> list[str]:
    """The median speedup over torch, the worst cases and the count below 1.0x."""
    rows = [(r["tools"]["torch"]["speedup"], r["id"], r["call"] + _stolen(r)) for r in results
            if "speedup" in r.get("tools", {}).get("torch", {})]
    if not rows:
        return ["sweep: no case has a speedup over torch (torch missing, or every result differs)"]
    speedups = sorted(rows)
    below = [r for r in speedups if r[0] < 1.0]
    med = float(np.median([s for s, _, _ in speedups]))
    missing = len(results) - len(rows)
    lines = [f"sweep: {len(rows)} cases vs torch: median {med:.2f}x, worst {speedups[0][0]:.2f}x "
             f"({speedups[0][1]}), {len(below)} below 1.0x"
             + (f"; {missing} without a speedup (error or mismatch)" if missing else "")]
    lines.append(f"worst {min(worst, len(speedups))}:")
    lines += [f"  {s:.2f}x  {i}: {call}" for s, i, call in speedups[:worst]]
    return lines
