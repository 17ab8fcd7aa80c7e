"""`ptocpu bench --sweep` cases of the elementwise ops (docs/benchmarks.md "The rest of the vocabulary"):
each op over the shape classes users meet -- same-shape, row and column broadcasts, a scalar
operand, a non-contiguous input, 4K to 64M elements, every dtype width, 1-D to 4-D -- against
torch eager computing the same thing.

`elementwise_sweep(op, torch_op, ...)` makes an op's cases; a family module lists its ops' generators in SWEEP.
"""
from __future__ import annotations

import functools
from typing import Callable, Optional

import numpy as np

import ptocpu

from .cases import _MID, _MID_OPERANDS, Case, Tool, _random, _torch, padded, torch

_SIZES = {"4K": 1 << 12, "256K": 1 << 18, "16M": 1 << 24, "64M": 1 << 26}


def _case(id_: str, op: str, torch_op: Callable, shapes: list, dtype: str, scalar: Optional[float], strided: bool,
          lo: float, hi: float, call: str, tiny: bool, tol: Optional[tuple] = None,
          result_itemsize: Optional[int] = None) -> Case:
    """torch_op(*tensors[, scalar]) is the peer; tol: (rtol, atol) where the two may differ in the
    last bits (None: bit-exact); result_itemsize: the output's element size when it is not the input's."""
    def build(rng):
        arrays = [_random(rng, s, dtype, lo, hi) for s in shapes]
        if strided:
            arrays[0] = padded(arrays[0])
        return {"arrays": arrays}

    def tools(inp):
        arrays = inp["arrays"]
        args = [ptocpu.asarray(a) for a in arrays] + ([scalar] if scalar is not None else [])
        t = {"ptocpu": Tool(functools.partial(getattr(ptocpu, op), *args))}
        if torch is not None:
            targs = [_torch(a) for a in arrays] + ([scalar] if scalar is not None else [])
            t["torch"] = Tool(functools.partial(torch_op, *targs))
        return t

    def nbytes(inp):
        arrays = inp["arrays"]
        out_elems = int(np.prod(np.broadcast_shapes(*[a.shape for a in arrays])))
        return sum(a.nbytes for a in arrays) + out_elems * (result_itemsize or arrays[0].itemsize)

    return Case(id_, op, call, dtype, build, tools, nbytes, tol=tol, tiny=tiny)


def elementwise_sweep(op: str, torch_op: Callable, *, arity: int = 2, dtypes=("fp32", "fp16", "bf16", "int32", "int8"),
                      lo: float = -1.0, hi: float = 1.0, scalar: float = 1.5,
                      torch_scalar_op: Optional[Callable] = None, tol: Optional[dict] = None,
                      result_itemsize: Optional[int] = None) -> list[Case]:
    """The op's cases: every shape class at 16M elements in fp32, the other dtypes at 16M, each size
    from 4K to 64M in fp32, and 1-D to 4-D. torch_scalar_op: torch's call for (tensor, scalar) when
    torch_op takes only tensors. tol: (rtol, atol) per dtype where ptocpu and torch may differ in the
    last bits (transcendentals); result_itemsize: the output's element size when it is not the input's."""
    tag = op.upper().replace("_", "")
    n = _SIZES["16M"]
    out: list[Case] = []

    def add(name, shapes, dtype="fp32", s=None, strided=False, tiny=False):
        call = f" {op} ".join(str(list(sh)) for sh in shapes) + (f" {op} {s}" if s is not None else "")
        call += " (first padded rows)" if strided else ""
        peer = torch_scalar_op if s is not None and torch_scalar_op else torch_op
        out.append(_case(f"SW-{tag}-{name}", op, peer, shapes, dtype, s, strided, lo, hi, call, tiny,
                         (tol or {}).get(dtype), result_itemsize))

    rows, cols = n // 4096, 4096
    if arity == 1:
        add("same-16M", [(rows, cols)])
        add("strided-16M", [(rows, cols)], strided=True)
        for dt in dtypes[1:]:
            add(f"same-16M-{dt}", [(rows, cols)], dt)
        for size, count in _SIZES.items():
            add(f"1d-{size}", [(count,)], tiny=count <= 4096)
        add("4d-16M", [(16, 16, 256, 256)])
        for dt in (d for d in dtypes[1:] if d in ("fp16", "bf16")):  # 16-bit rows in L2 / L3
            add(f"same-1M-{dt}", [_MID], dt)
        return out
    add("same-16M", [(rows, cols), (rows, cols)])
    add("row-bcast-16M", [(rows, cols), (1, cols)])
    add("col-bcast-16M", [(rows, cols), (rows, 1)])
    add("col-bcast-rows3-4M", [(n // 4 // 3, 3), (n // 4 // 3, 1)])  # rows of a few elements (pairs, RGB)
    add("scalar-16M", [(rows, cols)], s=scalar)
    add("strided-16M", [(rows, cols), (rows, cols)], strided=True)
    for dt in dtypes[1:]:
        add(f"same-16M-{dt}", [(rows, cols), (rows, cols)], dt)
    for size, count in _SIZES.items():
        add(f"1d-{size}", [(count,), (count,)], tiny=count <= 4096)
    add("3d-bcast-16M", [(64, 256, 1024), (256, 1)])
    add("4d-16M", [(16, 16, 256, 256), (16, 16, 256, 256)])
    for name, other in _MID_OPERANDS.items():  # 1M elements: operands and output in L2 / L3
        add(f"{name}-1M", [_MID, other])
    for dt in (d for d in dtypes[1:] if d in ("fp16", "bf16")):  # 16-bit rows: conversions, not memory, bound them
        add(f"same-1M-{dt}", [_MID, _MID], dt)
        add(f"col-bcast-1M-{dt}", [_MID, _MID_OPERANDS["col-bcast"]], dt)
    return out


SWEEP: list[Callable[[], list[Case]]] = [] if torch is None else [
    functools.partial(elementwise_sweep, "add", torch.add),
    functools.partial(elementwise_sweep, "mul", torch.mul, dtypes=("fp32", "fp16", "bf16")),
    functools.partial(elementwise_sweep, "maximum", torch.maximum, dtypes=("fp32", "fp16"), torch_scalar_op=torch.clamp_min),
    # torch 2.13's CPU sqrt is not correctly rounded in fp32 (1 ulp off for about a fifth of the
    # inputs); ptocpu's is (docs/ops/sqrt.md), so the check allows that ulp.
    functools.partial(elementwise_sweep, "sqrt", torch.sqrt, arity=1, dtypes=("fp32", "fp16", "bf16"), lo=0.0,
                      tol={"fp32": (2.4e-7, 0.0)}),
]
