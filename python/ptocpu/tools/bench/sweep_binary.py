"""`ptocpu bench --sweep` cases of the binary family (floor_div ... where; docs/benchmarks.md "The rest of
the vocabulary"): each op over the shape classes users meet -- same-shape, row and column broadcasts,
a scalar operand, a non-contiguous input, 4K to 64M elements, the dtype widths the op takes, 1-D to
4-D -- against torch eager doing the same math (torch.floor_divide, torch.remainder, torch.pow, ...).

`binary_sweep(op, peer, ...)` makes a two-operand op's cases; the ops with other operands (where,
clip, axpy_, atomic_add, prelu, lrelu) have their own generators. SWEEP lists one generator per op.
"""
from __future__ import annotations

import functools
from typing import Callable, Optional

import numpy as np

import ptocpu

from .cases import _MID, _MID_OPERANDS, Case, Tool, _DTYPES, _random, _torch, padded, torch

_SIZES = {"4K": 1 << 12, "256K": 1 << 18, "16M": 1 << 24, "64M": 1 << 26}
_ROWS, _COLS = (1 << 24) // 4096, 4096


def _operand(rng: np.random.Generator, shape, dtype: str, lo: float, hi: float, nonzero: bool) -> np.ndarray:
    """Uniform values (integers: small ones, or in [lo, hi) when the range is integral); no zeros
    for divisors."""
    if dtype in ("int8", "int16", "int32", "int64") and float(lo).is_integer() and (lo, hi) != (-1.0, 1.0):
        a = rng.integers(int(lo), int(hi), size=shape, dtype=_DTYPES[dtype])
    elif dtype == "bool":
        a = rng.integers(0, 2, size=shape).astype(np.bool_)
    else:
        a = _random(rng, shape, dtype, lo, hi)
    if nonzero:
        a[a == 0] = 1
    return a


def _out_itemsize(arrays: list, result_bytes: Optional[int]) -> int:
    return result_bytes if result_bytes is not None else arrays[0].itemsize


def binary_sweep(op: str, peer: Callable, *, dtypes=("fp32", "fp16", "bf16"), lo=-1.0, hi=1.0, other=None,
                 nonzero: bool = False, scalar=None, peer_scalar: Optional[Callable] = None, tol=None,
                 result_bytes: Optional[int] = None, mixed: Optional[str] = None) -> list[Case]:
    """The op's cases: same-shape, row / column broadcast, scalar, strided (long and 8-element rows)
    at 16M and rows of 3 by a column at 4M in the first dtype, the other dtypes at 16M, 1-D from 4K to 64M, a 4-D case, same-shape and
    row / column broadcasts at 1M (in the caches). other: the second operand's
    range (nonzero: no zeros, for divisors); peer_scalar: torch's call for (tensor, scalar) when peer
    takes only tensors; tol: (rtol, atol) per dtype (None: bit-exact); result_bytes: the result's
    element size when it is not the input's; mixed: a second dtype for the other operand."""
    tag = op.upper().replace("_", "")
    olo, ohi = other or (lo, hi)
    out: list[Case] = []

    def add(name, shapes, dtype, s=None, strided=False, tiny=False):
        other_dtype = mixed or dtype

        def build(rng):
            arrays = [_operand(rng, shapes[0], dtype, lo, hi, False)]
            if len(shapes) > 1:
                arrays.append(_operand(rng, shapes[1], other_dtype, olo, ohi, nonzero))
            if strided:
                arrays[0] = padded(arrays[0])
            return {"arrays": arrays}

        def tools(inp):
            arrays = inp["arrays"]
            extra = [s] if s is not None else []
            t = {"ptocpu": Tool(functools.partial(getattr(ptocpu, op), *[ptocpu.asarray(a) for a in arrays], *extra))}
            if torch is not None:
                call = peer_scalar if s is not None and peer_scalar else peer
                t["torch"] = Tool(functools.partial(call, *[_torch(a) for a in arrays], *extra))
            return t

        def nbytes(inp):
            arrays = inp["arrays"]
            n = int(np.prod(np.broadcast_shapes(*[a.shape for a in arrays])))
            return sum(a.nbytes for a in arrays) + n * _out_itemsize(arrays, result_bytes)

        call = f" {op} ".join(str(list(sh)) for sh in shapes) + (f" {op} {s}" if s is not None else "")
        call += (" (first padded rows)" if strided else "") + (f" ({dtype} with {mixed})" if mixed else "")
        out.append(Case(f"SW-{tag}-{name}", op, call, dtype, build, tools, nbytes,
                        tol=tol.get(dtype) if isinstance(tol, dict) else tol, tiny=tiny))

    first = dtypes[0]
    add("same-16M", [(_ROWS, _COLS), (_ROWS, _COLS)], first)
    add("row-bcast-16M", [(_ROWS, _COLS), (1, _COLS)], first)
    add("col-bcast-16M", [(_ROWS, _COLS), (_ROWS, 1)], first)
    if scalar is not None:
        add("scalar-16M", [(_ROWS, _COLS)], first, s=scalar)
    add("strided-16M", [(_ROWS, _COLS), (_ROWS, _COLS)], first, strided=True)
    short = (_ROWS * _COLS // 8, 8)  # a strided view's short rows: one call would be worth less than a row
    add("strided-rows8-16M", [short, short], first, strided=True)
    rows3 = (_ROWS * _COLS // 4 // 3, 3)  # rows of a few elements by a column (pairs, RGB): 4M elements
    add("col-bcast-rows3-4M", [rows3, (rows3[0], 1)], first)
    for dt in dtypes[1:]:
        add(f"same-16M-{dt}", [(_ROWS, _COLS), (_ROWS, _COLS)], dt)
    for size, count in _SIZES.items():
        add(f"1d-{size}", [(count,), (count,)], first, tiny=count <= 4096)
    add("4d-16M", [(16, 16, 256, 256), (16, 16, 256, 256)], first)
    for name, other in _MID_OPERANDS.items():  # 1M elements: operands and output in L2 / L3
        add(f"{name}-1M", [_MID, other], first)
    for dt in (d for d in dtypes[1:] if d in ("fp16", "bf16")):  # 16-bit rows: conversions, not memory, bound them
        add(f"same-1M-{dt}", [_MID, _MID], dt)
        add(f"col-bcast-1M-{dt}", [_MID, _MID_OPERANDS["col-bcast"]], dt)
    return out


def _single(op: str, id_: str, call: str, dtype: str, build: Callable, ours: Callable, theirs: Callable,
            nbytes: Callable, tol=None, reset: Optional[Callable] = None, tiny: bool = False) -> Case:
    """A case of an op whose operands are not two tensors: ours(inp) / theirs(inp) make the calls."""
    def tools(inp):
        t = {"ptocpu": Tool(ours(inp), reset and functools.partial(reset, inp, "ptocpu"))}
        if torch is not None:
            t["torch"] = Tool(theirs(inp), reset and functools.partial(reset, inp, "torch"))
        return t

    return Case(id_, op, call, dtype, build, tools, nbytes, tol=tol, tiny=tiny)


def where_sweep() -> list[Case]:
    """condition [r, c] or [r, 1], values a tensor and a tensor or a number, each value width."""
    out = []
    for name, cshape, bshape, dtype in (("same-16M", (_ROWS, _COLS), (_ROWS, _COLS), "fp32"),
                                        ("cond-col-16M", (_ROWS, 1), (_ROWS, _COLS), "fp32"),
                                        ("scalar-16M", (_ROWS, _COLS), None, "fp32"),
                                        ("same-16M-fp16", (_ROWS, _COLS), (_ROWS, _COLS), "fp16"),
                                        ("same-16M-int8", (_ROWS, _COLS), (_ROWS, _COLS), "int8"),
                                        ("1d-4K", (4096,), (4096,), "fp32")):
        def build(rng, cshape=cshape, bshape=bshape, dtype=dtype):
            return {"c": _operand(rng, cshape, "bool", 0, 1, False),
                    "a": _operand(rng, (_ROWS, _COLS) if len(cshape) == 2 else cshape, dtype, -1.0, 1.0, False),
                    "b": None if bshape is None else _operand(rng, bshape, dtype, -1.0, 1.0, False)}

        def ours(inp):
            b = 0.0 if inp["b"] is None else ptocpu.asarray(inp["b"])
            return functools.partial(ptocpu.where, ptocpu.asarray(inp["c"]), ptocpu.asarray(inp["a"]), b)

        def theirs(inp):
            b = 0.0 if inp["b"] is None else _torch(inp["b"])
            return functools.partial(torch.where, _torch(inp["c"]), _torch(inp["a"]), b)

        def nbytes(inp):
            return inp["c"].nbytes + 2 * inp["a"].nbytes + (0 if inp["b"] is None else inp["b"].nbytes)

        call = f"where(cond {list(cshape)}, {dtype} {list((_ROWS, _COLS) if len(cshape) == 2 else cshape)}, " + \
               ("0.0)" if bshape is None else f"{list(bshape)})")
        out.append(_single("where", f"SW-WHERE-{name}", call, dtype, build, ours, theirs, nbytes,
                           tiny=cshape == (4096,)))
    return out


def clip_sweep() -> list[Case]:
    """Scalar bounds (both, one), tensor bounds broadcast along one axis, each dtype width."""
    out = []
    for name, dtype, bounds in (("scalars-16M", "fp32", "scalars"), ("max-only-16M", "fp32", "max"),
                                ("row-bounds-16M", "fp32", "rows"), ("scalars-16M-fp16", "fp16", "scalars"),
                                ("scalars-16M-bf16", "bf16", "scalars"), ("scalars-16M-int32", "int32", "scalars"),
                                ("scalars-4K", "fp32", "scalars-4K")):
        shape = (4096,) if bounds == "scalars-4K" else (_ROWS, _COLS)

        def build(rng, dtype=dtype, bounds=bounds, shape=shape):
            inp = {"x": _operand(rng, shape, dtype, -100, 100, False) if dtype == "int32"
                   else _operand(rng, shape, dtype, -1.0, 1.0, False)}
            if bounds == "rows":
                inp["lo"] = _operand(rng, (1, _COLS), dtype, -0.5, 0.0, False)
                inp["hi"] = _operand(rng, (1, _COLS), dtype, 0.0, 0.5, False)
            return inp

        def scalars(dtype, bounds):
            lo, hi = (-50, 50) if dtype == "int32" else (-0.5, 0.5)
            return (None, hi) if bounds == "max" else (lo, hi)

        def ours(inp, dtype=dtype, bounds=bounds):
            if bounds == "rows":
                return functools.partial(ptocpu.clip, ptocpu.asarray(inp["x"]), ptocpu.asarray(inp["lo"]),
                                         ptocpu.asarray(inp["hi"]))
            return functools.partial(ptocpu.clip, ptocpu.asarray(inp["x"]), *scalars(dtype, bounds))

        def theirs(inp, dtype=dtype, bounds=bounds):
            if bounds == "rows":
                return functools.partial(torch.clamp, _torch(inp["x"]), _torch(inp["lo"]), _torch(inp["hi"]))
            return functools.partial(torch.clamp, _torch(inp["x"]), *scalars(dtype, bounds))

        def nbytes(inp):
            return 2 * inp["x"].nbytes + sum(inp[k].nbytes for k in ("lo", "hi") if k in inp)

        out.append(_single("clip", f"SW-CLIP-{name}", f"clip({dtype} {list(shape)}, {bounds})", dtype, build, ours,
                           theirs, nbytes, tiny=shape == (4096,)))
    return out


def axpy_sweep() -> list[Case]:
    """y += alpha * x in place: same shape, a column x, fp16 / mixed fp32 += fp16; torch's add_(alpha=)."""
    out = []
    for name, y_dt, x_dt, x_shape in (("same-16M", "fp32", "fp32", (_ROWS, _COLS)),
                                      ("col-bcast-16M", "fp32", "fp32", (_ROWS, 1)),
                                      ("same-16M-fp16", "fp16", "fp16", (_ROWS, _COLS)),
                                      ("mixed-16M", "fp32", "fp16", (_ROWS, _COLS)),
                                      ("1d-4K", "fp32", "fp32", (4096,))):
        y_shape = (4096,) if x_shape == (4096,) else (_ROWS, _COLS)

        def build(rng, y_dt=y_dt, x_dt=x_dt, x_shape=x_shape, y_shape=y_shape):
            y = _operand(rng, y_shape, y_dt, -1.0, 1.0, False)
            return {"y0": y, "ptocpu": y.copy(), "torch": y.copy(), "x": _operand(rng, x_shape, x_dt, -1.0, 1.0, False)}

        def reset(inp, tool):
            inp[tool][...] = inp["y0"]

        def ours(inp):  # the tensors wrap the arrays' memory, as torch's do
            return functools.partial(ptocpu.axpy_, ptocpu.asarray(inp["ptocpu"]), ptocpu.asarray(inp["x"]), 0.5)

        def theirs(inp):
            y, x = _torch(inp["torch"]), _torch(inp["x"])
            return lambda: y.add_(x, alpha=0.5)

        def nbytes(inp):
            return 2 * inp["y0"].nbytes + inp["x"].nbytes

        # torch fuses alpha * x + y on some paths; the values agree to the last bits only
        tol = (1e-6, 1e-6) if y_dt == "fp32" else (1e-3, 1e-3)
        out.append(_single("axpy_", f"SW-AXPY-{name}", f"axpy_(y {y_dt} {list(y_shape)}, x {x_dt} {list(x_shape)}, 0.5)",
                           y_dt, build, ours, theirs, nbytes, tol=tol, reset=reset, tiny=y_shape == (4096,)))
    return out


def atomic_add_sweep() -> list[Case]:
    """src added into a block of dst: a wide block, a narrow one (short rows), fp16; torch's slice add_."""
    out = []
    for name, dtype, dst_shape, src_shape, offsets in (
            ("block-16M", "fp32", (_ROWS, _COLS + 64), (_ROWS, _COLS), (0, 64)),
            ("rows64-16M", "fp32", ((1 << 24) // 64, 128), ((1 << 24) // 64, 64), (0, 32)),
            ("block-16M-fp16", "fp16", (_ROWS, _COLS + 64), (_ROWS, _COLS), (0, 64)),
            ("block-4K", "fp32", (64, 128), (64, 64), (0, 32))):
        def build(rng, dtype=dtype, dst_shape=dst_shape, src_shape=src_shape):
            d = _operand(rng, dst_shape, dtype, -1.0, 1.0, False)
            return {"d0": d, "ptocpu": d.copy(), "torch": d.copy(), "src": _operand(rng, src_shape, dtype, -1.0, 1.0, False)}

        def reset(inp, tool):
            inp[tool][...] = inp["d0"]

        def window(src_shape, offsets):
            return tuple(slice(o, o + n) for o, n in zip(offsets, src_shape))

        def ours(inp, offsets=offsets):
            src, dst, at = ptocpu.asarray(inp["src"]), ptocpu.asarray(inp["ptocpu"]), list(offsets)

            def run():
                ptocpu.atomic_add(src, at, dst)
                return dst
            return run

        def theirs(inp, offsets=offsets, src_shape=src_shape):
            d, s = _torch(inp["torch"]), _torch(inp["src"])
            block = window(src_shape, offsets)

            def run():
                d[block].add_(s)
                return d
            return run

        def nbytes(inp):
            return 3 * inp["src"].nbytes

        out.append(_single("atomic_add", f"SW-ATOMICADD-{name}", f"atomic_add({dtype} {list(src_shape)} into "
                           f"{list(dst_shape)} at {list(offsets)})", dtype, build, ours, theirs, nbytes, reset=reset,
                           tiny=name.endswith("4K")))
    return out


def relu_sweep(op: str) -> list[Case]:
    """prelu (a weight per channel of [n, c, h, w]) / lrelu (a slope) against torch's functional forms."""
    out = []
    shapes = ((16, 64, 128, 128), (16, 1024), (4, 16, 8, 8)) if op == "prelu" else ((_ROWS, _COLS), (4096,), (16, 16, 256, 256))
    for dtype in ("fp32", "fp16", "bf16"):
        for shape in shapes if dtype == "fp32" else shapes[:1]:
            def build(rng, dtype=dtype, shape=shape):
                inp = {"x": _operand(rng, shape, dtype, -1.0, 1.0, False)}
                if op == "prelu":
                    inp["w"] = _operand(rng, (shape[1],), dtype, 0.0, 0.5, False)
                return inp

            def ours(inp):
                if op == "prelu":
                    return functools.partial(ptocpu.prelu, ptocpu.asarray(inp["x"]), ptocpu.asarray(inp["w"]))
                return functools.partial(ptocpu.lrelu, ptocpu.asarray(inp["x"]), 0.1)

            def theirs(inp):
                if op == "prelu":
                    return functools.partial(torch.nn.functional.prelu, _torch(inp["x"]), _torch(inp["w"]))
                return functools.partial(torch.nn.functional.leaky_relu, _torch(inp["x"]), 0.1)

            def nbytes(inp):
                return 2 * inp["x"].nbytes

            n = int(np.prod(shape))
            size = f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"
            tag = f"{len(shape)}d-{size}" + ("" if dtype == "fp32" else f"-{dtype}")
            out.append(_single(op, f"SW-{op.upper()}-{tag}", f"{op}({dtype} {list(shape)})", dtype, build, ours, theirs,
                               nbytes, tol=None if dtype == "fp32" else (1e-2, 1e-2), tiny=n <= 4096))
    return out


def _ceil_divide(a, b):
    """torch has no ceiling division: -((-a) // b)."""
    return torch.neg(torch.floor_divide(torch.neg(a), b))


_FLOAT_TOL = {"fp32": (1e-6, 1e-6), "fp16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2)}

SWEEP: list[Callable[[], list[Case]]] = [] if torch is None else [
    # torch floors a corrected quotient, the device the rounded one: an integer apart, rarely
    functools.partial(binary_sweep, "floor_div", torch.floor_divide, dtypes=("fp32", "fp16", "bf16", "int32", "int8"),
                      other=(0.5, 2.0), nonzero=True, scalar=0.75, tol={"fp32": (0, 1.0), "fp16": (0, 1.0),
                                                                       "bf16": (0, 1.0)}),
    functools.partial(binary_sweep, "ceil_div", _ceil_divide, dtypes=("int32",), other=(1, 100), scalar=7,
                      peer_scalar=lambda a, s: torch.neg(torch.floor_divide(torch.neg(a), s))),
    # a zero remainder is +0 here, the dividend's sign in torch: equal as numbers
    functools.partial(binary_sweep, "remainder", torch.remainder, dtypes=("fp32", "fp16", "bf16", "int32", "int16"),
                      other=(0.5, 2.0), nonzero=True, scalar=0.75, tol={"fp32": (0, 0), "fp16": (0, 0), "bf16": (0, 0)}),
    functools.partial(binary_sweep, "fmod", torch.fmod, other=(0.5, 2.0), scalar=0.75),
    functools.partial(binary_sweep, "pow", torch.pow, lo=0.1, hi=2.0, other=(-2.0, 2.0), scalar=1.7, tol=_FLOAT_TOL),
    functools.partial(binary_sweep, "atan2", torch.atan2, tol=_FLOAT_TOL),
    functools.partial(binary_sweep, "hypot", torch.hypot, tol=_FLOAT_TOL),
    functools.partial(binary_sweep, "gcd", torch.gcd, dtypes=("int32", "int16", "int8")),
    functools.partial(binary_sweep, "bitwise_and", torch.bitwise_and, dtypes=("int32", "int16", "int8"), scalar=5),
    functools.partial(binary_sweep, "bitwise_or", torch.bitwise_or, dtypes=("int32", "int16", "int8"), scalar=5),
    functools.partial(binary_sweep, "bitwise_xor", torch.bitwise_xor, dtypes=("int32", "int16", "int8"), scalar=5),
    functools.partial(binary_sweep, "bitwise_left_shift", torch.bitwise_left_shift, dtypes=("int32", "int16", "int8"),
                      other=(0, 7), scalar=3),
    functools.partial(binary_sweep, "bitwise_right_shift", torch.bitwise_right_shift,
                      dtypes=("int32", "int16", "int8"), other=(0, 7), scalar=3),
    functools.partial(binary_sweep, "logical_and", torch.logical_and, dtypes=("fp32", "bool", "int8"), result_bytes=1),
    where_sweep,
    clip_sweep,
    axpy_sweep,
    atomic_add_sweep,
    functools.partial(relu_sweep, "prelu"),
    functools.partial(relu_sweep, "lrelu"),
]
