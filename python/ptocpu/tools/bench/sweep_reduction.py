"""`ptocpu bench --sweep` cases of the reduction family (docs/ops/reduction.md): each op over the
shapes users reduce -- short-wide and tall-skinny matrices along each dim, a long 1-D vector, 3-D
and 4-D tensors along every dim, narrow rows of 8 and 64 and of 3, 22, 33 and 100 -- at 16M elements, in fp32 / fp16 /
bf16 / int32, against torch eager computing the same thing (int32 sums and products in int32,
argmax / argmin as int32 indices).

Float sums, variances and scans are compared within a tolerance (their order of additions differs
from torch's); maxima, indices and integer results bit for bit.
`reduction_sweep(op, torch_op, ...)` makes an op's cases; SWEEP lists one generator per op.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

import ptocpu

from .cases import Case, Tool, _random, _torch, torch

N = 1 << 24
# (name, shape, dim): short-wide and tall-skinny along each dim, 1-D, 3-D / 4-D along every dim.
SHAPES = [
    ("wide-last", (4096, 4096), -1), ("wide-d0", (4096, 4096), 0),
    ("rows64-last", (N // 64, 64), -1), ("rows64-d0", (N // 64, 64), 0),
    ("rows8-last", (N // 8, 8), -1), ("rows8-d0", (N // 8, 8), 0), ("rows8-last-256K", (1 << 15, 8), -1),
    ("1d", (N,), 0),
    ("3d-d0", (64, 256, 1024), 0), ("3d-d1", (64, 256, 1024), 1), ("3d-d2", (64, 256, 1024), 2),
    ("4d-d1", (16, 16, 256, 256), 1), ("4d-d3", (16, 16, 256, 256), 3),
    # a middle dim over innermost rows of 2-3 elements (pairs, RGB)
    ("3d-d1-inner2", (N // 2048, 1024, 2), 1), ("3d-d1-inner3", (N // 1024, 256, 3), 1),
    # a reduced dim of one element
    ("d0-of-one", (1, N // 8), 0),
    # rows of lengths that are no power of two (short rows folded eight at a time)
    ("rows3-last", (N // 3, 3), -1), ("rows22-last", (N // 22, 22), -1), ("rows33-last", (N // 33, 33), -1),
    ("rows100-last", (N // 100, 100), -1),
]
# The shapes each further dtype runs: one per layout class.
DTYPE_SHAPES = ("wide-last", "wide-d0", "rows8-last", "rows64-d0", "1d", "rows33-last")


def _tolerance(dtype: str, length: int, exact: bool):
    """None (bit for bit) for exact ops and integers; else (rtol, atol) for `length` terms."""
    if exact or dtype == "int32":
        return None
    ulp = {"fp32": 2.0 ** -23, "fp16": 2.0 ** -10, "bf16": 2.0 ** -7}[dtype]
    return (2 * ulp, 4 * length * 2.0 ** -24)


def _case(op: str, tag: str, name: str, shape, dim: int, dtype: str, torch_op: Callable, exact: bool,
          factors: bool) -> Case:
    def build(rng):
        lo, hi = (0.99, 1.01) if factors else (-1.0, 1.0)
        x = _random(rng, shape, dtype, lo, hi)
        if factors and dtype == "int32":
            x = np.where(x > 0, 1, -1).astype(np.int32)  # products of +-1 stay exact
        return {"x": x}

    def tools(inp):
        x = inp["x"]
        t = {"ptocpu": Tool(functools.partial(getattr(ptocpu, op), ptocpu.asarray(x), dim))}
        if torch is not None:
            peer = functools.partial(torch_op, _torch(x), dim)
            # A 1-D reduction is [1] upstream (and in ptocpu), 0-d in torch: a view, no copy.
            t["torch"] = Tool(peer if len(shape) > 1 or op.startswith("cum") else lambda: peer().reshape(1))
        return t

    def nbytes(inp):
        x = inp["x"]
        out_elems = x.size if op.startswith("cum") else x.size // x.shape[dim]
        out_size = 4 if op.startswith("arg") else 8 if op == "cumsum" and dtype == "int32" else x.itemsize
        return x.nbytes + out_elems * out_size

    call = f"{op}(x {list(shape)} {dtype}, dim {dim})"
    return Case(f"SW-{tag}-{name}" + ("" if dtype == "fp32" else f"-{dtype}"), op, call, dtype, build, tools,
                nbytes, _tolerance(dtype, shape[dim], exact))


def reduction_sweep(op: str, torch_op: Callable, *, dtypes=("fp32", "fp16", "bf16", "int32"), exact: bool = False,
                    factors: bool = False, shapes: tuple = ()) -> list[Case]:
    """The op's cases: every shape of SHAPES (or `shapes`, names of it) in fp32, the layout classes of
    DTYPE_SHAPES in the other dtypes. exact: compared bit for bit; factors: values near 1 (products)."""
    tag = op.upper()
    chosen = [s for s in SHAPES if not shapes or s[0] in shapes]
    out = [_case(op, tag, name, shape, dim, "fp32", torch_op, exact, factors) for name, shape, dim in chosen]
    for dt in dtypes[1:]:
        out += [_case(op, tag, name, shape, dim, dt, torch_op, exact, factors)
                for name, shape, dim in chosen if name in DTYPE_SHAPES]
    return out


def _int32_sum(x, dim):
    return torch.sum(x, dim, dtype=torch.int32) if x.dtype == torch.int32 else torch.sum(x, dim)


def _int32_prod(x, dim):
    return torch.prod(x, dim, dtype=torch.int32) if x.dtype == torch.int32 else torch.prod(x, dim)


def _index(torch_arg: Callable) -> Callable:
    return lambda x, dim: torch_arg(x, dim).to(torch.int32)


SWEEP: list[Callable[[], list[Case]]] = [] if torch is None else [
    functools.partial(reduction_sweep, "sum", _int32_sum),
    functools.partial(reduction_sweep, "prod", _int32_prod, dtypes=("fp32", "int32"), factors=True,
                      shapes=("wide-last", "wide-d0", "rows8-last", "rows64-d0", "1d")),
    functools.partial(reduction_sweep, "amax", torch.amax, exact=True),
    functools.partial(reduction_sweep, "amin", torch.amin, dtypes=("fp32", "bf16"), exact=True,
                      shapes=("wide-last", "wide-d0", "rows64-last", "rows8-d0")),
    functools.partial(reduction_sweep, "argmax", _index(torch.argmax), dtypes=("fp32", "fp16", "bf16"), exact=True),
    functools.partial(reduction_sweep, "argmin", _index(torch.argmin), dtypes=("fp32", "bf16"), exact=True,
                      shapes=("wide-last", "wide-d0", "rows64-last", "rows8-d0")),
    functools.partial(reduction_sweep, "var", torch.var, dtypes=("fp32", "bf16"),
                      shapes=("wide-last", "wide-d0", "rows64-last", "rows64-d0", "1d")),
    functools.partial(reduction_sweep, "cumsum", torch.cumsum),
    functools.partial(reduction_sweep, "cumprod", torch.cumprod, dtypes=("fp32", "bf16"), factors=True,
                      shapes=("wide-last", "wide-d0", "rows64-last", "rows8-d0", "1d")),
]
