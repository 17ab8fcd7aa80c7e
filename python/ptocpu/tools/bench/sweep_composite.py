"""`ptocpu bench --sweep` cases of the composite family (docs/ops/softmax.md ... quant_mx.md) against
torch eager computing the same thing: torch.softmax, the RMSNorm formula in torch ops, torch.topk,
torch.argsort(stable=True), the quantisation formulas in torch ops. torch's int64 indices are
converted to PyPTO's int32 inside its timed call (the results are compared bit for bit). The headline shapes of issue 22
(softmax and rms_norm over [4096, 4096]) first, then the shape classes models meet: wide and tall
rows, the other axis, fp16 / bf16, padded rows.

Each op has one generator in SWEEP; ids read SW-<OP>-<shape class>.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

import ptocpu

from .cases import Case, Tool, _random, _torch, padded, torch

_EPS = 1e-6


def _rows(x: np.ndarray) -> str:
    return "[" + ", ".join(str(v) for v in x) + "]"


def _case(id_: str, op: str, call: str, dtype: str, build: Callable, run: Callable, peer: Callable,
          nbytes: Callable, tol=None, tiny: bool = False) -> Case:
    """run(inp) / peer(inp) return the zero-argument calls that ptocpu and torch time."""
    def tools(inp):
        t = {"ptocpu": Tool(run(inp))}
        if torch is not None:
            t["torch"] = Tool(peer(inp))
        return t
    return Case(id_, op, call, dtype, build, tools, nbytes, tol=tol, tiny=tiny)


def _inout_bytes(inp) -> int:
    """Reads x once, writes a result of x's size."""
    return 2 * inp["x"].nbytes


_FLOAT_TOL = {"fp32": (1e-5, 1e-7), "fp16": (2.0 ** -9, 1e-4), "bf16": (2.0 ** -6, 1e-3)}


# softmax --------------------------------------------------------------------------------------

def _softmax(id_, shape, dim=-1, dtype="fp32", strided=False, tiny=False) -> Case:
    def build(rng):
        x = _random(rng, shape, dtype, -8.0, 8.0)
        return {"x": padded(x) if strided else x}

    return _case(id_, "softmax", f"x {_rows(shape)}{' padded rows' if strided else ''}, dim {dim}", dtype, build,
                 lambda inp: (lambda x=ptocpu.asarray(inp["x"]): ptocpu.softmax(x, dim)),
                 lambda inp: (lambda t=_torch(inp["x"]): torch.softmax(t, dim)),
                 _inout_bytes, tol=_FLOAT_TOL[dtype], tiny=tiny)


def softmax_shapes() -> list[Case]:
    return [
        _softmax("SW-SOFTMAX-4096x4096", (4096, 4096)),
        _softmax("SW-SOFTMAX-4096x4096-dim0", (4096, 4096), 0),
        _softmax("SW-SOFTMAX-4096x4096-fp16", (4096, 4096), dtype="fp16"),
        _softmax("SW-SOFTMAX-4096x4096-bf16", (4096, 4096), dtype="bf16"),
        _softmax("SW-SOFTMAX-wide-64x65536", (64, 65536)),
        _softmax("SW-SOFTMAX-d1-of-4d", (256, 41, 29, 4), 1),  # the dims after dim follow each other
        _softmax("SW-SOFTMAX-rows128", (32768, 128)),
        _softmax("SW-SOFTMAX-rows16", (262144, 16)),
        # short rows in registers: a partial last register (12, 40), whole ones (24), long rows (500), 16-bit
        _softmax("SW-SOFTMAX-rows12", (262144, 12)),
        _softmax("SW-SOFTMAX-rows24", (131072, 24)),
        _softmax("SW-SOFTMAX-rows40", (131072, 40)),
        _softmax("SW-SOFTMAX-rows500", (8192, 500)),
        _softmax("SW-SOFTMAX-rows16-fp16", (262144, 16), dtype="fp16"),
        _softmax("SW-SOFTMAX-rows128-bf16", (32768, 128), dtype="bf16"),
        _softmax("SW-SOFTMAX-attention-4d", (8, 16, 256, 256)),
        _softmax("SW-SOFTMAX-strided", (2048, 4096), strided=True),
        _softmax("SW-SOFTMAX-tiny", (4, 16), tiny=True),
    ]


# rms_norm -------------------------------------------------------------------------------------

def _rms_norm(id_, shape, dtype="fp32", gamma=True, tiny=False) -> Case:
    def build(rng):
        return {"x": _random(rng, shape, dtype), "gamma": _random(rng, shape[-1:], dtype, 0.5, 1.5) if gamma else None}

    def run(inp):
        x = ptocpu.asarray(inp["x"])
        g = ptocpu.asarray(inp["gamma"]) if gamma else None
        return lambda: ptocpu.rms_norm(x, g, _EPS)

    def peer(inp):
        x = _torch(inp["x"])
        g = _torch(inp["gamma"]) if gamma else None

        def formula():
            y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + _EPS)
            return y * g if g is not None else y
        return formula

    return _case(id_, "rms_norm", f"x {_rows(shape)}{', gamma' if gamma else ''}", dtype, build, run, peer,
                 _inout_bytes, tol=_FLOAT_TOL[dtype], tiny=tiny)


def rms_norm_shapes() -> list[Case]:
    return [
        _rms_norm("SW-RMSNORM-4096x4096", (4096, 4096)),
        _rms_norm("SW-RMSNORM-4096x4096-nogamma", (4096, 4096), gamma=False),
        _rms_norm("SW-RMSNORM-4096x4096-bf16", (4096, 4096), "bf16"),
        _rms_norm("SW-RMSNORM-4096x4096-fp16", (4096, 4096), "fp16"),
        _rms_norm("SW-RMSNORM-tokens-3d", (8, 2048, 1024)),
        _rms_norm("SW-RMSNORM-rows64", (262144, 64)),
        _rms_norm("SW-RMSNORM-wide-16x1M", (16, 1 << 20)),
        _rms_norm("SW-RMSNORM-tiny", (4, 64), tiny=True),
    ]


# online_softmax / online_softmax_update --------------------------------------------------------

def _online_softmax(id_, shape, scale=0.125) -> Case:
    def build(rng):
        return {"x": _random(rng, shape, "fp32", -4.0, 4.0)}

    def peer(inp):
        s = _torch(inp["x"])

        def formula():
            m = s.amax(0, keepdim=True) * scale
            e = torch.exp(s * scale - m)
            return e.to(torch.bfloat16), m, e.sum(0, keepdim=True)
        return formula

    return _case(id_, "online_softmax", f"scores {_rows(shape)}, scale {scale}", "fp32", build,
                 lambda inp: (lambda x=ptocpu.asarray(inp["x"]): ptocpu.online_softmax(x, scale)), peer,
                 lambda inp: inp["x"].nbytes * 3 // 2, tol=(2.0 ** -7, 1e-6))


def online_softmax_shapes() -> list[Case]:
    return [
        _online_softmax("SW-ONLINESOFTMAX-128x16384", (128, 16384)),
        _online_softmax("SW-ONLINESOFTMAX-512x8192", (512, 8192)),
        _online_softmax("SW-ONLINESOFTMAX-4096x1024", (4096, 1024)),
    ]


def _online_update(id_, h, q) -> Case:
    def build(rng):
        stats = [_random(rng, (1, q), "fp32", -2.0, 2.0) for _ in range(4)]
        return {"stats": stats, "op": _random(rng, (h, q), "fp32"), "oc": _random(rng, (h, q), "fp32")}

    def run(inp):
        mp, sp, mc, sc = (ptocpu.asarray(t) for t in inp["stats"])
        op, oc = ptocpu.asarray(inp["op"]), ptocpu.asarray(inp["oc"])
        return lambda: ptocpu.online_softmax_update(mp, sp, op, mc, sc, oc)

    def peer(inp):
        mp, sp, mc, sc = (_torch(t) for t in inp["stats"])
        op, oc = _torch(inp["op"]), _torch(inp["oc"])

        def formula():
            m = torch.maximum(mp, mc)
            a, b = torch.exp(mp - m), torch.exp(mc - m)
            return m, a * sp + b * sc, op * a + oc * b
        return formula

    return _case(id_, "online_softmax_update", f"outputs [{h}, {q}]", "fp32", build, run, peer,
                 lambda inp: 3 * inp["op"].nbytes, tol=_FLOAT_TOL["fp32"])


def online_softmax_update_shapes() -> list[Case]:
    return [
        _online_update("SW-ONLINESOFTMAXUPDATE-128x65536", 128, 65536),
        _online_update("SW-ONLINESOFTMAXUPDATE-2048x4096", 2048, 4096),
    ]


# expand_exp_dif -------------------------------------------------------------------------------

def _expand_exp_dif(id_, shape, other_shape, dtype="fp32") -> Case:
    def build(rng):
        return {"x": _random(rng, shape, dtype, -4.0, 4.0), "o": _random(rng, other_shape, dtype, -4.0, 4.0)}

    return _case(id_, "expand_exp_dif", f"{_rows(shape)} with {_rows(other_shape)}", dtype, build,
                 lambda inp: (lambda x=ptocpu.asarray(inp["x"]), o=ptocpu.asarray(inp["o"]): ptocpu.expand_exp_dif(x, o)),
                 lambda inp: (lambda x=_torch(inp["x"]), o=_torch(inp["o"]): torch.exp(x - o)) if dtype != "bf16" else
                 # bf16: the difference in fp32, rounded once after the exp (torch's bf16 sub rounds it first)
                 (lambda x=_torch(inp["x"]), o=_torch(inp["o"]): torch.exp(x.float() - o.float()).bfloat16()),
                 lambda inp: 2 * inp["x"].nbytes + inp["o"].nbytes, tol=_FLOAT_TOL[dtype])


def expand_exp_dif_shapes() -> list[Case]:
    return [
        _expand_exp_dif("SW-EXPANDEXPDIF-row-max", (4096, 4096), (4096, 1)),
        _expand_exp_dif("SW-EXPANDEXPDIF-same", (4096, 4096), (4096, 4096)),
        _expand_exp_dif("SW-EXPANDEXPDIF-col-bcast", (4096, 4096), (1, 4096)),
        _expand_exp_dif("SW-EXPANDEXPDIF-row-max-bf16", (4096, 4096), (4096, 1), "bf16"),
        _expand_exp_dif("SW-EXPANDEXPDIF-same-fp16", (4096, 4096), (4096, 4096), "fp16"),
    ]


# topk / argsort -------------------------------------------------------------------------------

def _distinct(rng, shape, dtype) -> np.ndarray:
    """Distinct values per row (torch leaves the order of ties open)."""
    rows = int(np.prod(shape[:-1]))
    x = np.argsort(rng.random((rows, shape[-1]), dtype=np.float32), axis=-1).astype(np.float32)
    x = (x - shape[-1] / 2).reshape(shape)
    return x.astype(np.float16) if dtype == "fp16" else x


def _int32_indices(result):
    """torch's int64 indices as PyPTO's int32 (part of torch's timed call: one pass over k per row)."""
    values, indices = result
    return values, indices.to(torch.int32)


def _topk(id_, shape, k, largest=True, dtype="fp32", algo=0) -> Case:
    def build(rng):
        return {"x": _distinct(rng, shape, dtype)}

    return _case(id_, "topk", f"x {_rows(shape)}, k {k}, largest={largest}", dtype, build,
                 lambda inp: (lambda x=ptocpu.asarray(inp["x"]): ptocpu.topk(x, k, -1, largest, algo)),
                 lambda inp: (lambda t=_torch(inp["x"]): _int32_indices(torch.topk(t, k, -1, largest, True))),
                 lambda inp: inp["x"].nbytes + int(np.prod(shape[:-1])) * k * (inp["x"].itemsize + 4))


def topk_shapes() -> list[Case]:
    return [
        _topk("SW-TOPK-4096x4096-k1", (4096, 4096), 1),
        _topk("SW-TOPK-4096x4096-k10", (4096, 4096), 10),
        _topk("SW-TOPK-4096x4096-k100-smallest", (4096, 4096), 100, False),
        _topk("SW-TOPK-4096x4096-k1024", (4096, 4096), 1024),
        _topk("SW-TOPK-moe-65536x64-k8", (65536, 64), 8),
        _topk("SW-TOPK-moe-16384x256-k8-fp16", (16384, 256), 8, dtype="fp16", algo=1),
        _topk("SW-TOPK-wide-16x1M-k64", (16, 1 << 20), 64),
    ]


def _argsort(id_, shape, dim=-1, descending=False, dtype="fp32") -> Case:
    def build(rng):  # distinct along dim
        return {"x": np.ascontiguousarray(_distinct(rng, shape[::-1], dtype).T) if dim == 0 else _distinct(rng, shape, dtype)}

    return _case(id_, "argsort", f"x {_rows(shape)}, dim {dim}, descending={descending}", dtype, build,
                 lambda inp: (lambda x=ptocpu.asarray(inp["x"]): ptocpu.argsort(x, dim, descending)),
                 lambda inp: (lambda t=_torch(inp["x"]): torch.argsort(t, dim=dim, descending=descending, stable=True)
                              .to(torch.int32)),
                 lambda inp: inp["x"].nbytes + inp["x"].size * 4)


def argsort_shapes() -> list[Case]:
    return [
        _argsort("SW-ARGSORT-1024x4096", (1024, 4096)),
        _argsort("SW-ARGSORT-1024x4096-desc", (1024, 4096), descending=True),
        _argsort("SW-ARGSORT-rows64", (65536, 64)),
        _argsort("SW-ARGSORT-dim0", (4096, 256), dim=0),
        _argsort("SW-ARGSORT-fp16", (1024, 4096), dtype="fp16"),
    ]


# quantize / dequantize ------------------------------------------------------------------------

def _quantize(id_, shape, axis=-1, asym=False, dtype="fp32") -> Case:
    per_line = tuple(s for i, s in enumerate(shape) if i != axis % len(shape))

    def build(rng):
        return {"x": _random(rng, shape, dtype, -300.0, 300.0), "s": _random(rng, per_line, "fp32", 0.1, 1.0),
                "zp": _random(rng, per_line, "fp32", 0.0, 128.0) if asym else None}

    def run(inp):
        x, s = ptocpu.asarray(inp["x"]), ptocpu.asarray(inp["s"])
        zp = ptocpu.asarray(inp["zp"]) if asym else None
        otype = ptocpu.DT_UINT8 if asym else ptocpu.DT_INT8
        return lambda: ptocpu.quantize(x, s, otype, axis, zp)

    def peer(inp):
        x, s = _torch(inp["x"]), _torch(inp["s"]).unsqueeze(axis)
        zp = _torch(inp["zp"]).unsqueeze(axis) if asym else None

        def formula():
            v = x * s
            if zp is not None:
                return torch.clamp(torch.round(v + zp), 0, 255).to(torch.uint8)
            return torch.clamp(torch.round(v), -128, 127).to(torch.int8)
        return formula

    return _case(id_, "quantize", f"x {_rows(shape)}, axis {axis}{', zero points' if asym else ''}", dtype, build,
                 run, peer, lambda inp: inp["x"].nbytes + inp["x"].size)


def quantize_shapes() -> list[Case]:
    return [
        _quantize("SW-QUANTIZE-4096x4096", (4096, 4096)),
        _quantize("SW-QUANTIZE-4096x4096-asym", (4096, 4096), asym=True),
        _quantize("SW-QUANTIZE-4096x4096-axis-2", (4096, 4096), axis=-2),
        _quantize("SW-QUANTIZE-tokens-3d", (16, 1024, 1024)),
    ]


def _dequantize(id_, shape, axis=-1, asym=False) -> Case:
    per_line = tuple(s for i, s in enumerate(shape) if i != axis % len(shape))

    def build(rng):
        return {"x": rng.integers(-128, 128, shape, dtype=np.int8), "s": _random(rng, per_line, "fp32", 0.01, 1.0),
                "zp": _random(rng, per_line, "fp32", -10.0, 10.0) if asym else None}

    def run(inp):
        x, s = ptocpu.asarray(inp["x"]), ptocpu.asarray(inp["s"])
        zp = ptocpu.asarray(inp["zp"]) if asym else None
        return lambda: ptocpu.dequantize(x, s, ptocpu.DT_FP32, axis, zp)

    def peer(inp):
        x, s = _torch(inp["x"]), _torch(inp["s"]).unsqueeze(axis)
        zp = _torch(inp["zp"]).unsqueeze(axis) if asym else None
        return (lambda: (x.float() - zp) * s) if zp is not None else (lambda: x.float() * s)

    return _case(id_, "dequantize", f"x {_rows(shape)} int8, axis {axis}{', zero points' if asym else ''}", "int8",
                 build, run, peer, lambda inp: inp["x"].size * 5)


def dequantize_shapes() -> list[Case]:
    return [
        _dequantize("SW-DEQUANTIZE-4096x4096", (4096, 4096)),
        _dequantize("SW-DEQUANTIZE-4096x4096-asym", (4096, 4096), asym=True),
        _dequantize("SW-DEQUANTIZE-4096x4096-axis-2", (4096, 4096), axis=-2),
    ]


# quant_mx -------------------------------------------------------------------------------------

def _torch_e2m1_pairs(v):
    """E2M1 codes of finite fp32 values in torch ops (nearest, ties to the even code, saturating at
    6), two per byte along the last dim, the first in the low nibble."""
    a = v.abs()
    code = torch.where(a < 2, torch.round(2 * a), torch.where(a < 4, torch.round(a) + 2, torch.round(a / 2) + 4))
    code = code.clamp(max=7).to(torch.uint8) | (torch.signbit(v).to(torch.uint8) << 3)
    return code[..., 0::2] | (code[..., 1::2] << 4)


def _torch_mx(t, axis: int, fp4: bool):
    """OCP MX quantisation (ROUND_DOWN) in torch ops: the peer for quant_mx's default mode, to fp8
    E4M3 or (fp4) E2M1 pairs (a bf16 input's scaled values rounded to bf16, as the device does)."""
    top_exponent = 2 if fp4 else 8
    v = t.float().transpose(-1, -2) if axis == -2 else t.float()
    g = v.reshape(*v.shape[:-1], -1, 32)
    amax = g.abs().amax(-1, keepdim=True)
    _, exponent = torch.frexp(amax)
    e = torch.where(amax > 0, (exponent + 126 - top_exponent).clamp(0, 254), torch.zeros_like(exponent))
    scaled = (g * torch.exp2((127 - e).float())).reshape(v.shape)
    if axis == -2:
        scaled = scaled.transpose(-1, -2)
    if fp4:
        if t.dtype == torch.bfloat16:
            scaled = scaled.bfloat16().float()
        q = _torch_e2m1_pairs(scaled)
    else:
        q = scaled.clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8)  # numpy has no fp8
    e = e.to(torch.uint8).reshape(*v.shape[:-1], -1, 2)  # the groups of each 64 values in pairs
    if axis == -2:  # [..., n, m/64, 2] -> [..., m/64, n, 2]
        e = e.transpose(-2, -3)
    return q, e


def _quant_mx(id_, shape, axis=-1, dtype="fp32", fp4=False) -> Case:
    def build(rng):
        return {"x": _random(rng, shape, dtype, -100.0, 100.0)}

    quant_dtype = ptocpu.DT_FP4_E2M1X2 if fp4 else ptocpu.DT_FP8E4M3
    return _case(id_, "quant_mx", f"x {_rows(shape)}, axis {axis}{' -> fp4 pairs' if fp4 else ''}", dtype, build,
                 lambda inp: (lambda x=ptocpu.asarray(inp["x"]): ptocpu.quant_mx(x, quant_dtype, axis=axis,
                                                                                performance_mode=False)),
                 lambda inp: (lambda t=_torch(inp["x"]): _torch_mx(t, axis, fp4)),
                 lambda inp: inp["x"].nbytes + inp["x"].size // (2 if fp4 else 1) + inp["x"].size // 32)


def quant_mx_shapes() -> list[Case]:
    return [
        _quant_mx("SW-QUANTMX-4096x4096", (4096, 4096)),
        _quant_mx("SW-QUANTMX-4096x4096-bf16", (4096, 4096), dtype="bf16"),
        _quant_mx("SW-QUANTMX-4096x4096-axis-2", (4096, 4096), axis=-2),
        _quant_mx("SW-QUANTMX-4096x4096-fp16-fp4", (4096, 4096), dtype="fp16", fp4=True),
        _quant_mx("SW-QUANTMX-4096x4096-bf16-fp4-axis-2", (4096, 4096), axis=-2, dtype="bf16", fp4=True),
    ]


SWEEP: list[Callable[[], list[Case]]] = [] if torch is None else [
    softmax_shapes, rms_norm_shapes, online_softmax_shapes, online_softmax_update_shapes, expand_exp_dif_shapes,
    topk_shapes, argsort_shapes, quantize_shapes, dequantize_shapes, quant_mx_shapes,
]
