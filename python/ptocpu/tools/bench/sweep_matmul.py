"""`ptocpu bench --sweep` cases of the cube family (docs/ops/matmul.md) against torch doing the same
math: fp32 operands against torch.matmul; fp16 / bf16 operands with an fp32 output against the best
torch way to the same fp32-accumulated result (widen, then torch.matmul: torch's CPU matmul has no fp32
output for half operands); int8 operands against the faster of torch's two ways to an int32 result,
torch._int_mm and the int32 matmul of the widened operands (picked once by timing both on a [256, 256]
product: on CPUs without int8 dot products _int_mm took 74 s for [4096]^3); the transposed and batched
forms; tile-sized products, where the call overhead is what counts. Results are compared within fp32
summation-order tolerances (the orders differ); int8 bit for bit.

Each op has one generator in SWEEP; ids read SW-MATMUL-<shape class>.
"""
from __future__ import annotations

import functools
import time

import numpy as np

import ptocpu

from .cases import Case, Tool, _random, _torch, torch

# fp32 sums of K products of uniform [-1, 1) values, in two orders: differences stay near
# K^0.5 * 2^-24 relative to the sum's size.
_FP32_TOL = (1e-4, 1e-4)
_OUT = {"fp32": ptocpu.DT_FP32, "bf16": ptocpu.DT_BF16, "fp16": ptocpu.DT_FP16, "int32": ptocpu.DT_INT32}


@functools.cache
def _torch_int8_matmul():
    """torch._int_mm or the widened int32 matmul, whichever this CPU runs faster."""
    a = torch.randint(-100, 100, (256, 256), dtype=torch.int8)
    ways = {"_int_mm": lambda x, y: torch._int_mm(x, y), "int32": lambda x, y: torch.matmul(x.int(), y.int())}

    def seconds(f):
        f(a, a)
        t0 = time.perf_counter()
        f(a, a)
        return time.perf_counter() - t0

    return min(ways.values(), key=seconds)


def _shape(s) -> str:
    return "[" + ", ".join(str(v) for v in s) + "]"


def _mm(id_, a_shape, b_shape, dtype="fp32", out="fp32", a_trans=False, b_trans=False, tiny=False) -> Case:
    def build(rng):
        return {"a": _random(rng, a_shape, dtype), "b": _random(rng, b_shape, dtype)}

    def tools(inp):
        a, b = ptocpu.asarray(inp["a"]), ptocpu.asarray(inp["b"])
        out_dtype = _OUT[out]
        t = {"ptocpu": Tool(lambda: ptocpu.matmul(a, b, out_dtype, a_trans=a_trans, b_trans=b_trans))}
        if torch is not None:
            ta, tb = _torch(inp["a"]), _torch(inp["b"])
            if a_trans:
                ta = ta.transpose(-1, -2)
            if b_trans:
                tb = tb.transpose(-1, -2)
            if dtype == "int8":
                int8_matmul = _torch_int8_matmul()
                t["torch"] = Tool(lambda: int8_matmul(ta, tb))
            elif dtype == out:
                t["torch"] = Tool(lambda: torch.matmul(ta, tb))
            else:  # half operands, fp32 result: widen (exact), then the fp32 product
                t["torch"] = Tool(lambda: torch.matmul(ta.float(), tb.float()))
        return t

    def nbytes(inp):
        m = a_shape[-1] if a_trans else a_shape[-2]
        n = b_shape[-2] if b_trans else b_shape[-1]
        batch = int(np.prod(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]), dtype=np.int64))
        return inp["a"].nbytes + inp["b"].nbytes + batch * m * n * np.dtype(ptocpu.numpy_dtype(_OUT[out])).itemsize

    call = f"{_shape(a_shape)}{'ᵀ' if a_trans else ''} @ {_shape(b_shape)}{'ᵀ' if b_trans else ''} -> {out}"
    return Case(id_, "matmul", call, dtype, build, tools, nbytes, tol=None if dtype == "int8" else _FP32_TOL, tiny=tiny)


def matmul_shapes() -> list[Case]:
    return [
        _mm("SW-MATMUL-1024", (1024, 1024), (1024, 1024)),
        _mm("SW-MATMUL-4096", (4096, 4096), (4096, 4096)),
        _mm("SW-MATMUL-BATCH-16x512x64x512", (16, 512, 64), (16, 64, 512)),
        _mm("SW-MATMUL-SMALL-64x128x64", (64, 128), (128, 64), tiny=True),
        _mm("SW-MATMUL-1024-TRANS", (1024, 1024), (1024, 1024), a_trans=True, b_trans=True),
        _mm("SW-MATMUL-BROADCAST-1x8x256x512", (1, 256, 512), (8, 512, 256)),
        _mm("SW-MATMUL-1024-BF16-FP32", (1024, 1024), (1024, 1024), "bf16"),
        _mm("SW-MATMUL-1024-FP16-FP32", (1024, 1024), (1024, 1024), "fp16"),
        _mm("SW-MATMUL-4096-BF16-FP32", (4096, 4096), (4096, 4096), "bf16"),
        _mm("SW-MATMUL-SMALL-BF16-FP32", (64, 128), (128, 64), "bf16", tiny=True),
        _mm("SW-MATMUL-1024-INT8", (1024, 1024), (1024, 1024), "int8", "int32"),
        _mm("SW-MATMUL-4096-INT8", (4096, 4096), (4096, 4096), "int8", "int32"),
        _mm("SW-MATMUL-SMALL-INT8", (64, 128), (128, 64), "int8", "int32", tiny=True),
    ]


def matmul_shape_classes() -> list[Case]:
    """Shapes between the published ones, in each operand dtype: few rows (a single block, one thread,
    before 2026-12-05), a thin A, a mid-size cube, odd N, a short K, a call-overhead-sized product, and B
    rows 2 and 6 KiB long."""
    shapes = [((384, 1024), (1024, 1024)), ((32, 4096), (4096, 1024)), ((256, 256), (256, 256)),
              ((2048, 1024), (1024, 3000)), ((1024, 64), (64, 1024)), ((8, 8), (8, 8)),
              # B's rows a multiple of 1 KiB apart, blocks of few rows or columns (docs/ops/matmul.md#speed)
              ((512, 512), (512, 512)), ((128, 1536), (1536, 1536))]
    cases = []
    for a, b in shapes:
        for dtype, out in (("fp32", "fp32"), ("bf16", "fp32"), ("fp16", "fp32"), ("int8", "int32")):
            cases.append(_mm(f"SW-MATMUL-{a[0]}x{a[1]}x{b[1]}-{dtype.upper()}", a, b, dtype, out,
                             tiny=a[0] * a[1] * b[1] < 1 << 16))
    return cases


SWEEP = [matmul_shapes, matmul_shape_classes]
