"""Independent references of the composite family (no ptocpu code), written from the device's
formulas on the op pages (docs/ops/softmax.md ... quant_mx.md) in numpy / ml_dtypes, step by step
in fp32 as the device rounds. Used by verify and the tests.

Where ptocpu fixes an order the device leaves open (the order of a row's sum), the reference
follows ptocpu's documented order (`lane_sum`), so that everything but exp is compared bit for
bit. exp is the correctly rounded fp32 exp (`exp_f32`); ptocpu's may differ from it by one ulp.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

LANES = 32  # docs/ops/softmax.md: element i of a row goes to lane i % 32
BF16 = np.dtype(ml_dtypes.bfloat16)
E4M3 = np.dtype(ml_dtypes.float8_e4m3fn)


def exp_f32(v: np.ndarray) -> np.ndarray:
    """exp of fp32 values, correctly rounded to fp32 (through float64)."""
    return np.exp(np.asarray(v, np.float64)).astype(np.float32)


def lane_sum(v: np.ndarray) -> np.ndarray:
    """The fp32 sum of the last axis in ptocpu's order: element i into running sum i % 32, then the
    32 sums pairwise (lane j += lane j + w for w = 16, 8, 4, 2, 1). For values >= 0."""
    v = np.asarray(v, np.float32)
    pad = (-v.shape[-1]) % LANES
    v = np.concatenate([v, np.zeros(v.shape[:-1] + (pad,), np.float32)], -1)
    blocks = v.reshape(v.shape[:-1] + (-1, LANES))
    acc = np.zeros(v.shape[:-1] + (LANES,), np.float32)
    for b in range(blocks.shape[-2]):
        acc = acc + blocks[..., b, :]
    w = LANES // 2
    while w:
        acc[..., :w] = acc[..., :w] + acc[..., w:2 * w]
        w //= 2
    return acc[..., 0]


def softmax(x: np.ndarray, dim: int, exp=exp_f32) -> np.ndarray:
    """max, exp(x - max), sum, division, in fp32; rounded once to x's dtype."""
    x32 = np.moveaxis(np.asarray(x).astype(np.float32), dim, -1)
    e = exp(x32 - np.max(x32, -1, keepdims=True))
    y = e / lane_sum(e)[..., None]
    return np.moveaxis(y, -1, dim).astype(np.asarray(x).dtype)


def rms_norm(x: np.ndarray, gamma=None, epsilon: float = 1e-6) -> np.ndarray:
    """x / sqrt(sum((x * x) * fp32(1/n)) + eps) [* gamma] in fp32; rounded once to x's dtype."""
    x = np.asarray(x)
    x32 = x.astype(np.float32)
    inv_n = np.float32(1.0 / x.shape[-1])
    root = np.sqrt(lane_sum((x32 * x32) * inv_n)[..., None] + np.float32(epsilon))
    y = x32 / root
    if gamma is not None:
        y = y * np.asarray(gamma).astype(np.float32)
    return y.astype(x.dtype)


def bf16_ties_away(v: np.ndarray) -> np.ndarray:
    """fp32 -> bf16 rounding to nearest, ties away from zero (CAST_ROUND); NaN stays a quiet NaN."""
    u = np.ascontiguousarray(v, np.float32).view(np.uint32)
    out = ((u.astype(np.uint64) + 0x8000) >> 16).astype(np.uint16)
    nan = np.isnan(v)
    out[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return out.view(BF16)


def online_softmax(scores: np.ndarray, scale: float, exp=exp_f32):
    """(exp_bf16, column_max, column_sum) of scores [k, q] as docs/ops/online_softmax.md orders it."""
    s = np.asarray(scores, np.float32)
    scale = np.float32(scale)
    column_max = (np.max(s, 0, keepdims=True) if s.shape[0] else np.full((1, s.shape[1]), -np.inf, np.float32)) * scale
    e = exp(s * scale - column_max)
    column_sum = np.zeros((1, s.shape[1]), np.float32)
    for row in e:  # down each column, in row order
        column_sum = column_sum + row
    return bf16_ties_away(e), column_max.astype(np.float32), column_sum


def online_softmax_update(mp, sp, op, mc, sc, oc, exp=exp_f32):
    """(max, sum, output) merging two blocks, each product and sum rounded to fp32."""
    mp, sp, op, mc, sc, oc = (np.asarray(t, np.float32) for t in (mp, sp, op, mc, sc, oc))
    m = np.maximum(mp, mc)  # NaN propagates
    a, b = exp(mp - m), exp(mc - m)
    return m, a * sp + b * sc, op * a + oc * b


def online_softmax_update_terms(mp, op, mc, oc) -> np.ndarray:
    """|Op * a| + |Oc * b| in fp32: the scale of the update's output error, since the output's two
    terms can cancel (a few ulp of this, not of the output)."""
    m = np.maximum(np.asarray(mp, np.float64), np.asarray(mc, np.float64))
    a, b = np.exp(np.asarray(mp, np.float64) - m), np.exp(np.asarray(mc, np.float64) - m)
    return (np.abs(np.asarray(op, np.float64)) * a + np.abs(np.asarray(oc, np.float64)) * b).astype(np.float32)


def expand_exp_dif(x: np.ndarray, other: np.ndarray, exp=exp_f32) -> np.ndarray:
    """exp(x - other) in fp32, rounded once; fp16 without a broadcast in the last two axes rounds
    the difference to fp16 first."""
    x, other = np.asarray(x), np.asarray(other)
    shape = np.broadcast_shapes(x.shape, other.shape)
    d = x.astype(np.float32) - other.astype(np.float32)
    last_two = lambda t: t.shape[-2:] if t.ndim >= 2 else (1,) * (min(2, len(shape)) - t.ndim) + t.shape  # noqa: E731
    if x.dtype == np.float16 and last_two(x) == shape[-2:] and last_two(other) == shape[-2:]:
        d = d.astype(np.float16).astype(np.float32)
    with np.errstate(over="ignore"):
        return exp(d).astype(x.dtype)


def sort_order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """The stable order along dim: by value (descending or ascending), ties by index, NaN last."""
    x = np.moveaxis(np.asarray(x), dim, -1)
    wide = x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == BF16 else x.astype(np.int64)
    order = np.argsort(-wide if descending else wide, axis=-1, kind="stable")  # numpy puts NaN last
    return np.moveaxis(order, -1, dim).astype(np.int32)


def topk(x: np.ndarray, k: int, largest: bool = True):
    """(values, indices) of the k largest / smallest along the last axis, in sort_order."""
    idx = sort_order(x, -1, largest)[..., :k]
    return np.take_along_axis(np.asarray(x), idx, -1), idx


def per_line(t: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A scale / zero-point of shape x.shape without `axis` (or with it as 1), seen at x's rank."""
    t = np.asarray(t, np.float32)
    return np.expand_dims(t, axis % ndim) if t.ndim == ndim - 1 else t


def quantize(x, scale, axis: int, zero_points=None) -> np.ndarray:
    """round(x * scale [+ zero_points]) to nearest even, clamped to int8 (uint8 with zero points); NaN 0."""
    x = np.asarray(x).astype(np.float32)
    v = x * per_line(scale, axis, x.ndim)
    if zero_points is not None:
        v = v + per_line(zero_points, axis, x.ndim)
    dtype = np.int8 if zero_points is None else np.uint8
    info = np.iinfo(dtype)
    return np.where(np.isnan(v), 0, np.clip(np.rint(v), info.min, info.max)).astype(dtype)


def dequantize(x, scale, axis: int, zero_points=None) -> np.ndarray:
    """(x - zero_points) * scale in fp32."""
    x = np.asarray(x).astype(np.float32)
    if zero_points is not None:
        x = x - per_line(zero_points, axis, x.ndim)
    return x * per_line(scale, axis, x.ndim)


# The MX element formats: the largest value and its exponent (448 = 1.75 * 2^8, 6 = 1.5 * 2^2).
_MX_FORMATS = {"fp8": (448.0, 8), "fp4": (6.0, 2)}


def mx_exponent(maxabs: np.ndarray, round_up: bool, element: str = "fp8") -> np.ndarray:
    """The E8M0 code of each group's largest magnitude (OCP floor, or NV's least k with maxabs <= max * 2^k)."""
    top, top_exponent = _MX_FORMATS[element]
    m = np.asarray(maxabs, np.float32)
    out = np.zeros(m.shape, np.int64)
    finite = np.isfinite(m) & (m > 0)
    if round_up:
        mant, e = np.frexp(m[finite].astype(np.float64))  # m = mant * 2^e, mant in [0.5, 1)
        k = (e - 1) - top_exponent
        k = k + (m[finite] > np.ldexp(top, k))
        out[finite] = np.clip(k + 127, 0, 254)
        out[np.isinf(m)] = 254
    else:
        biased = (m.view(np.uint32) >> 23) & 0xFF
        out = np.clip(biased.astype(np.int64) - top_exponent, 0, 254)
    out[np.isnan(m)] = 255
    return out.astype(np.uint8)


def e2m1_pairs(v: np.ndarray) -> np.ndarray:
    """fp32 values as FP4 E2M1 codes (nearest even, saturating at +-6, NaN 0x7 without sign), two per
    byte along the last axis, the first in the low nibble."""
    codes = v.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF
    codes = np.where(np.isnan(v), np.uint8(0x7), codes).astype(np.uint8)
    return codes[..., 0::2] | (codes[..., 1::2] << 4)


def quant_mx(x, round_up: bool = False, axis: int = -1, element: str = "fp8"):
    """(codes, scales as E8M0 bytes) of MX quantisation with 32-element groups: codes as fp8 E4M3, or
    (element "fp4") as E2M1 pairs in bytes, [..., n / 2]."""
    x = np.asarray(x)
    along_rows = axis % x.ndim == x.ndim - 2
    v = np.swapaxes(x, -1, -2) if along_rows else x
    g = v.astype(np.float32).reshape(v.shape[:-1] + (-1, 32))
    e = mx_exponent(np.max(np.abs(g), -1), round_up, element)
    with np.errstate(over="ignore"):
        scaling = np.where(e == 255, np.float32(np.nan), np.ldexp(np.float32(1.0), 127 - e.astype(np.int32)))
    scaled = g * scaling[..., None].astype(np.float32)
    if x.dtype == BF16 and (round_up or element == "fp4"):  # the device scales these in bf16
        scaled = scaled.astype(BF16).astype(np.float32)
    scaled = scaled.reshape(v.shape)
    if along_rows:
        scaled = np.swapaxes(scaled, -1, -2)
        e = np.swapaxes(e, -1, -2)  # [..., n, m/32] -> [..., m/32, n]
        e = e.reshape(e.shape[:-2] + (-1, 2, e.shape[-1]))
        e = np.swapaxes(e, -1, -2)  # [..., m/64, n, 2]
    else:
        e = e.reshape(e.shape[:-1] + (-1, 2))
    codes = e2m1_pairs(scaled) if element == "fp4" else np.clip(scaled, -448, 448).astype(E4M3)
    return np.ascontiguousarray(codes), np.ascontiguousarray(e)
