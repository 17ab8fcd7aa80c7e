"""docs/ops/cast.md and the narrow storage formats of docs/dtypes.md.

The references are written here from the definitions, with Python integers and Fractions: each
format's values (IEEE-like formats from sign / exponent / mantissa, HiFloat8 from its dot-field
table), each rounding mode on exact values, saturation as clamping and OFF as keeping the low bits.
The pairs each chip converts, their modes and defaults are transcribed from upstream's page. ml_dtypes
and numpy only decode results (bf16, fp8, fp4 E2M1, int4 values are exact there).
"""
from __future__ import annotations

import math
from fractions import Fraction as Fr

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu

D = ptocpu
NONE, RINT, ROUND, FLOOR, CEIL, TRUNC, ODD = range(7)
ON, OFF = 0, 1
INF = math.inf


# ------------------------------------------------------------------ rounding of exact values
def round_int(x: Fr, mode: int) -> int:
    """x rounded to an integer by a CastMode (RINT .. ODD)."""
    fl = math.floor(x)
    if fl == x:
        return fl
    if mode == FLOOR:
        return fl
    if mode == CEIL:
        return fl + 1
    t = fl if x > 0 else fl + 1  # toward zero
    if mode == TRUNC:
        return t
    if mode == ODD:
        return t if t % 2 else t + (1 if x > 0 else -1)
    frac = x - fl
    if frac != Fr(1, 2):
        return fl + 1 if frac > Fr(1, 2) else fl
    if mode == RINT:
        return fl if fl % 2 == 0 else fl + 1
    return fl + 1 if x > 0 else fl  # ROUND: away from zero


class Ieee:
    """A sign / exponent / mantissa format: p significand bits (with the implicit one), smallest
    normal exponent emin, largest finite value `top`; kind "ieee" (has inf), "fn" (E4M3FN: NaN
    instead of inf) or "none" (the 4-bit floats: no inf, no NaN, always saturating)."""

    def __init__(self, p, emin, top, kind):
        self.p, self.emin, self.top, self.kind = p, emin, top, kind

    def round(self, x, mode, sat):
        """The value x becomes: a Fraction (with a sign for zero as (-1) marker via float), inf or NaN."""
        if isinstance(x, float) and math.isnan(x):
            return self.top if self.kind == "none" else math.nan  # the 4-bit floats: code 0x7
        if isinstance(x, float) and math.isinf(x):
            if sat or self.kind == "none":
                return math.copysign(1, x) * self.top
            return x if self.kind == "ieee" else math.nan
        if x == 0:
            return x
        a = abs(x)
        e = a.numerator.bit_length() - a.denominator.bit_length()
        if Fr(2) ** e > a:
            e -= 1
        q = Fr(2) ** (max(e, self.emin) - (self.p - 1))
        v = round_int(x / q, mode) * q
        if abs(v) > self.top:
            toward_zero = mode in (TRUNC, ODD) or (mode == FLOOR and x > 0) or (mode == CEIL and x < 0)
            if sat or toward_zero or self.kind == "none":
                return self.top if x > 0 else -self.top
            return (INF if x > 0 else -INF) if self.kind == "ieee" else math.nan
        return v if v != 0 else (0.0 if x > 0 else -0.0)


FP32 = Ieee(24, -126, (2 - Fr(1, 2 ** 23)) * Fr(2) ** 127, "ieee")
FP16 = Ieee(11, -14, Fr(65504), "ieee")
BF16 = Ieee(8, -126, (2 - Fr(1, 2 ** 7)) * Fr(2) ** 127, "ieee")
E4M3 = Ieee(4, -6, Fr(448), "fn")
E5M2 = Ieee(3, -14, Fr(57344), "ieee")
E2M1 = Ieee(2, 0, Fr(6), "none")
E1M2 = Ieee(3, 0, Fr(7, 4), "none")


# ------------------------------------------------------------------ HiFloat8 from its definition
def hf8_value(code: int):
    """HiFloat8 (docs/dtypes.md#hifloat8) read bit by bit: sign, dot prefix code, exponent in
    sign-magnitude with an implicit leading 1, mantissa."""
    bits = format(code, "08b")
    s = -1 if bits[0] == "1" else 1
    rest = bits[1:]
    if rest == "0000000":
        return math.nan if s < 0 else Fr(0)
    for dot, width, mbits in (("11", 4, 1), ("10", 3, 2), ("01", 2, 3), ("001", 1, 3), ("0001", 0, 3)):
        if rest.startswith(dot):
            field, man = rest[len(dot):len(dot) + width], rest[len(dot) + width:]
            assert len(man) == mbits
            magnitude = int("1" + field[1:], 2) if width else 0
            exponent = -magnitude if width and field[0] == "1" else magnitude
            if dot == "11" and exponent == 15 and man == "1":
                return s * INF
            return s * (1 + Fr(int(man, 2), 2 ** mbits)) * Fr(2) ** exponent
    m = int(rest[4:], 2)  # dot 0000: 2^(m - 23)
    return s * Fr(2) ** (m - 23)


HF8_VALUES = [hf8_value(c) for c in range(256)]
HF8_FINITE = sorted({abs(v) for v in HF8_VALUES if isinstance(v, Fr)})


def hf8_round(x, sat):
    """Nearest HiFloat8 value, ties away from zero; inf stands where 1.5 * 2^15 would be."""
    if isinstance(x, float) and math.isnan(x):
        return math.nan
    top = HF8_FINITE[-1]
    if x == 0:
        return Fr(0)  # there is no -0
    if isinstance(x, float):
        return math.copysign(1, x) * (top if sat else INF)
    ladder = HF8_FINITE + [Fr(3, 2) * top]
    a = abs(x)
    best = min(range(len(ladder)), key=lambda i: (abs(ladder[i] - a), -ladder[i]))
    v = ladder[best]
    if best == len(ladder) - 1:
        v = top if sat else INF
    return v if x >= 0 else -v


# ------------------------------------------------------------------ dtypes: values in and out
INTS = {"DT_INT8": (8, True), "DT_INT16": (16, True), "DT_INT32": (32, True), "DT_INT64": (64, True),
        "DT_UINT8": (8, False), "DT_UINT16": (16, False), "DT_UINT32": (32, False), "DT_INT4": (4, True)}
FLOATS = {"DT_FP32": FP32, "DT_FP16": FP16, "DT_BF16": BF16, "DT_FP8E4M3": E4M3, "DT_FP8E5M2": E5M2,
          "DT_FP4_E2M1": E2M1, "DT_FP4_E1M2": E1M2, "DT_HF4": E1M2}
NUMPY = {"DT_FP32": np.float32, "DT_FP16": np.float16, "DT_BF16": ml_dtypes.bfloat16, "DT_FP64": np.float64,
         "DT_FP8E4M3": ml_dtypes.float8_e4m3fn, "DT_FP8E5M2": ml_dtypes.float8_e5m2,
         "DT_FP4_E2M1": ml_dtypes.float4_e2m1fn}
E1M2_VALUES = [Fr(c & 7, 4) * (-1 if c & 8 else 1) if c != 8 else -0.0 for c in range(16)]


def exact(v):
    """A value as a Fraction (finite) or a float (inf / NaN), keeping -0.0."""
    f = float(v)
    if math.isnan(f) or math.isinf(f) or f == 0:
        return f
    return Fr(f)


def values_of(t) -> list:
    """The exact values of a ptocpu tensor (decoded here, not by ptocpu)."""
    name = t.dtype.name
    a = t.numpy()
    if name in INTS or name in ("DT_UINT64",):
        return [int(v) for v in a.reshape(-1).astype(np.int64 if name != "DT_UINT64" else np.uint64)]
    if name == "DT_HF8":
        return [HF8_VALUES[c] for c in a.reshape(-1).view(np.uint8)]
    if name in ("DT_FP4_E1M2", "DT_HF4"):
        return [E1M2_VALUES[c & 15] for c in a.reshape(-1).view(np.uint8)]
    return [exact(v) for v in a.reshape(-1).astype(np.float64)]


def tensor_of(name: str, values: list):
    """A ptocpu tensor of dtype `name` holding exactly `values` (each representable)."""
    if name in NUMPY:
        return ptocpu.asarray(np.array([float(v) for v in values], np.float64).astype(NUMPY[name]))
    if name == "DT_HF8":
        codes = [HF8_VALUES.index(v) if not (isinstance(v, float) and math.isnan(v)) else 0x80 for v in values]
        return ptocpu.view(ptocpu.asarray(np.array(codes, np.uint8)), dtype=ptocpu.DT_HF8)
    if name in ("DT_FP4_E1M2", "DT_HF4"):
        codes = [8 if v == 0 and math.copysign(1, float(v)) < 0 else E1M2_VALUES.index(v) for v in values]
        return ptocpu.view(ptocpu.asarray(np.array(codes, np.uint8)), dtype=getattr(ptocpu, name))
    if name == "DT_INT4":
        return ptocpu.asarray(np.array(values, np.int8).astype(ml_dtypes.int4))
    bits, signed = INTS[name]
    return ptocpu.asarray(np.array(values, dtype=f"{'' if signed else 'u'}int{bits}"))


def same(got, want) -> bool:
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if got != want:
        return False
    if isinstance(want, float) and want == 0:
        return math.copysign(1, float(got)) == math.copysign(1, want)
    return True


# ------------------------------------------------------------------ the pairs of upstream's page
FIVE = (RINT, ROUND, FLOOR, CEIL, TRUNC)
SIX = FIVE + (ODD,)
A2A3 = {  # (from, to): modes (None: widening / narrowing with no mode)
    ("DT_FP32", "DT_FP16"): SIX, ("DT_FP32", "DT_FP32"): FIVE, ("DT_FP32", "DT_BF16"): FIVE,
    ("DT_FP32", "DT_INT64"): FIVE, ("DT_FP32", "DT_INT32"): FIVE, ("DT_FP32", "DT_INT16"): FIVE,
    ("DT_FP16", "DT_FP32"): None, ("DT_FP16", "DT_INT32"): FIVE, ("DT_FP16", "DT_INT16"): FIVE,
    ("DT_FP16", "DT_INT8"): FIVE, ("DT_FP16", "DT_UINT8"): FIVE, ("DT_FP16", "DT_INT4"): FIVE,
    ("DT_BF16", "DT_FP32"): None, ("DT_BF16", "DT_INT32"): FIVE, ("DT_INT32", "DT_FP32"): FIVE,
    ("DT_INT32", "DT_INT64"): None, ("DT_INT32", "DT_INT16"): None, ("DT_INT32", "DT_FP16"): None,
    ("DT_INT16", "DT_FP32"): FIVE, ("DT_INT16", "DT_FP16"): FIVE, ("DT_INT64", "DT_FP32"): FIVE,
    ("DT_INT64", "DT_INT32"): None, ("DT_UINT8", "DT_FP16"): None, ("DT_INT8", "DT_FP16"): None,
    ("DT_INT4", "DT_FP16"): None,
}
# Where A2 / A3 honour satmode; their other float -> integer and integer narrowing pairs saturate.
A2A3_SATMODE = {("DT_FP16", "DT_UINT8"), ("DT_FP16", "DT_INT8"), ("DT_FP32", "DT_INT16"), ("DT_FP16", "DT_INT16"),
                ("DT_INT64", "DT_INT32"), ("DT_INT32", "DT_INT16")}
A950 = {
    ("DT_FP32", "DT_FP32"): FIVE, ("DT_FP32", "DT_FP16"): SIX, ("DT_FP32", "DT_BF16"): FIVE,
    ("DT_FP32", "DT_INT64"): FIVE, ("DT_FP32", "DT_INT32"): FIVE, ("DT_FP32", "DT_INT16"): FIVE,
    ("DT_FP32", "DT_FP8E4M3"): FIVE, ("DT_FP32", "DT_FP8E5M2"): FIVE, ("DT_FP32", "DT_HF8"): (ROUND,),
    ("DT_FP16", "DT_FP32"): None, ("DT_FP16", "DT_INT32"): FIVE, ("DT_FP16", "DT_INT16"): FIVE,
    ("DT_FP16", "DT_INT8"): FIVE, ("DT_FP16", "DT_UINT8"): FIVE, ("DT_FP16", "DT_HF8"): (ROUND,),
    ("DT_BF16", "DT_FP32"): None, ("DT_BF16", "DT_INT32"): FIVE, ("DT_BF16", "DT_FP16"): FIVE,
    ("DT_UINT8", "DT_FP16"): None, ("DT_UINT8", "DT_UINT16"): None, ("DT_INT8", "DT_FP16"): None,
    ("DT_INT8", "DT_INT16"): None, ("DT_INT8", "DT_INT32"): None, ("DT_INT16", "DT_UINT8"): None,
    ("DT_INT16", "DT_FP16"): FIVE, ("DT_INT16", "DT_FP32"): None, ("DT_INT16", "DT_UINT32"): None,
    ("DT_INT16", "DT_INT32"): None, ("DT_INT32", "DT_FP32"): FIVE, ("DT_INT32", "DT_INT16"): None,
    ("DT_INT32", "DT_UINT16"): None, ("DT_INT32", "DT_INT64"): None, ("DT_INT32", "DT_UINT8"): None,
    ("DT_INT32", "DT_FP16"): None, ("DT_UINT32", "DT_UINT8"): None, ("DT_UINT32", "DT_UINT16"): None,
    ("DT_UINT32", "DT_INT16"): None, ("DT_INT64", "DT_FP32"): FIVE, ("DT_INT64", "DT_INT32"): None,
    ("DT_FP8E4M3", "DT_FP32"): None, ("DT_FP8E5M2", "DT_FP32"): None, ("DT_HF8", "DT_FP32"): None,
}
# The cpu takes every mode on every pair (HF8: ROUND); a sample of its pairs beyond the chips'.
CPU_EXTRA = [("DT_FP32", "DT_FP4_E2M1"), ("DT_FP32", "DT_FP4_E1M2"), ("DT_FP32", "DT_HF4"), ("DT_FP16", "DT_FP8E4M3"),
             ("DT_BF16", "DT_HF8"), ("DT_INT32", "DT_INT8"), ("DT_INT64", "DT_UINT8"), ("DT_FP32", "DT_UINT32"),
             ("DT_FP16", "DT_BF16"), ("DT_INT32", "DT_BF16"), ("DT_HF8", "DT_FP16"), ("DT_INT4", "DT_INT8"),
             ("DT_FP8E5M2", "DT_INT8"), ("DT_FP32", "DT_INT4")]


def modes_for(platform, pair):
    if platform == "cpu":
        return (ROUND,) if pair[1] == "DT_HF8" else SIX
    table = A950 if platform == "ascend950" else A2A3
    return table[pair] or ()


def default_mode(pair):
    src, dst = pair
    if dst == "DT_HF8":
        return ROUND
    return TRUNC if dst in INTS and src not in INTS else RINT


def expected(platform, pair, x, mode, satmode):
    """The value cast gives for the exact input x."""
    src, dst = pair
    m = mode if mode in modes_for(platform, pair) else default_mode(pair)
    sat = satmode == ON
    if platform in ("atlas_a2", "atlas_a3") and dst in INTS and pair not in A2A3_SATMODE:
        sat = True
    if dst == "DT_HF8":
        return hf8_round(x, sat)
    if dst in FLOATS:
        if src == dst:
            return x if not isinstance(x, Fr) else Fr(round_int(x, m))
        return FLOATS[dst].round(x, m, sat and dst != "DT_FP32")
    bits, signed = INTS[dst]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if isinstance(x, float) and x != 0:
        if math.isnan(x):
            return 0
        r = (1 << 127) - 1 if x > 0 else -(1 << 127)
    else:
        r = round_int(Fr(x), m)
    if sat:
        return min(max(r, lo), hi)
    r %= 1 << bits
    return r - (1 << bits) if signed and r > hi else r


def inputs(name):
    """Exact values of dtype `name` reaching every rule: ties, both signs, the ranges' edges, inf, NaN."""
    if name == "DT_HF8":
        return HF8_VALUES
    if name in ("DT_FP4_E1M2", "DT_HF4"):
        return E1M2_VALUES
    if name == "DT_INT4":
        return list(range(-8, 8))
    if name in INTS:
        bits, signed = INTS[name]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        rng = np.random.default_rng(bits)
        vals = {lo, hi, 0, 1, 300, 2049, 2051, (1 << 24) + 1, (1 << 24) + 3, 70000, -70000, -300, -1}
        vals |= {int(v) for v in rng.integers(lo, hi, 200, endpoint=True)}
        return sorted(v for v in vals if lo <= v <= hi)
    base = [0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 3.5, -0.75, 7.9, -9.0, 44.5, 100.3, 127.5, 128.0, -128.5, 255.5, 256.0,
            300.0, -300.0, 32767.5, 40000.0, 40960.0, 65504.0, 65519.0, 65520.0, 70000.0, 1e10, -1e10, 2.0 ** 31,
            -(2.0 ** 31) - 256, 2.0 ** 40 + 5 * 2.0 ** 17, 1e-8, 6e-8, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -23,
            1.5 * 2.0 ** -20, 448.0, 464.0, 480.0, 57344.0, 61440.0, 1.75, 5.0, 0.25, 0.125, math.inf, -math.inf,
            math.nan]
    rng = np.random.default_rng(len(name))
    base += list(rng.normal(0, 4, 120)) + list(rng.normal(0, 3e4, 40))
    dt = NUMPY[name]
    with np.errstate(over="ignore"):
        arr = np.array(base, np.float64).astype(dt)
    return [exact(v) for v in arr.astype(np.float64)]


def check(platform, pair, mode, satmode):
    src, dst = pair
    xs = inputs(src)
    with ptocpu.platform(platform):
        out = ptocpu.cast(tensor_of(src, xs), getattr(ptocpu, dst), mode, satmode)
    assert out.dtype == getattr(ptocpu, dst)
    got = values_of(out)
    bad = [(x, g, expected(platform, pair, x, mode, satmode)) for x, g in zip(xs, got)
           if not same(g, expected(platform, pair, x, mode, satmode))]
    assert not bad, f"{platform} {src} -> {dst} mode {mode} satmode {satmode}: {len(bad)} differ, e.g. {bad[:4]}"


PAIRS = ([("atlas_a2", p) for p in A2A3] + [("atlas_a3", p) for p in A2A3] + [("ascend950", p) for p in A950]
         + [("cpu", p) for p in list(A950) + CPU_EXTRA])


@pytest.mark.parametrize("platform,pair", PAIRS, ids=[f"{pl}-{a}-{b}" for pl, (a, b) in PAIRS])
def test_every_mode_and_satmode_on_every_pair(platform, pair):
    for mode in range(7):
        for satmode in (ON, OFF):
            if pair[0] == pair[1] and mode in (NONE, RINT):
                continue  # the input comes back: test_same_dtype_returns_the_input
            check(platform, pair, mode, satmode)


# ------------------------------------------------------------------ the page's examples
def test_page_examples():
    x = ptocpu.asarray(np.array([2.0, 3.0], np.float32))
    y = ptocpu.cast(x, ptocpu.DT_FP16)
    assert y.dtype == ptocpu.DT_FP16 and y.tolist() == [2.0, 3.0]
    h = ptocpu.asarray(np.array([300.0, -300.0, 50.0], np.float16))
    assert ptocpu.cast(h, ptocpu.DT_INT8, satmode=ptocpu.SaturationMode.ON).tolist() == [127, -128, 50]
    assert ptocpu.cast(h, ptocpu.DT_INT8, satmode=ptocpu.SaturationMode.OFF).tolist() == [44, -44, 50]
    for platform in ("ascend950", "atlas_a2"):
        with ptocpu.platform(platform):
            assert ptocpu.cast(h, ptocpu.DT_INT8).tolist() == [44, -44, 50]


def test_enums_have_upstreams_members_and_values():
    assert [(m.name, int(m)) for m in ptocpu.CastMode] == [
        ("CAST_NONE", 0), ("CAST_RINT", 1), ("CAST_ROUND", 2), ("CAST_FLOOR", 3), ("CAST_CEIL", 4), ("CAST_TRUNC", 5),
        ("CAST_ODD", 6)]
    assert (int(ptocpu.SaturationMode.ON), int(ptocpu.SaturationMode.OFF)) == (0, 1)
    assert [m.name for m in ptocpu.PrecisionType] == ["INTRINSIC", "HIGH_PRECISION"]


def test_method_and_enum_or_int_arguments():
    x = ptocpu.asarray(np.array([2.5, -2.5], np.float32))
    assert x.cast(ptocpu.DT_INT32, ptocpu.CastMode.CAST_ROUND).tolist() == [3, -3]
    assert ptocpu.cast(x, "int32", 2, 0).tolist() == [3, -3]
    assert ptocpu.cast(x, ptocpu.DT_INT32, mode=ptocpu.CastMode.CAST_FLOOR).tolist() == [2, -3]


def test_same_dtype_returns_the_input():
    a = np.array([1.5, 2.5], np.float32)
    x = ptocpu.asarray(a)
    y = ptocpu.cast(x, ptocpu.DT_FP32)
    a[0] = 7.0
    assert y.tolist() == [7.0, 2.5]  # the same memory
    assert ptocpu.cast(x, ptocpu.DT_FP32, ptocpu.CastMode.CAST_RINT, ptocpu.SaturationMode.ON).tolist() == [7.0, 2.5]
    assert ptocpu.cast(x, ptocpu.DT_FP32, ptocpu.CastMode.CAST_CEIL).tolist() == [7.0, 3.0]
    h = ptocpu.asarray(np.array([1.5, -2.5], np.float16))
    assert ptocpu.cast(h, ptocpu.DT_FP16, ptocpu.CastMode.CAST_FLOOR).tolist() == [1.0, -3.0]
    i = ptocpu.asarray(np.array([5, -7], np.int32))
    assert ptocpu.cast(i, ptocpu.DT_INT32, ptocpu.CastMode.CAST_FLOOR).tolist() == [5, -7]


def test_fp16_and_bf16_nan_keep_sign_and_top_payload_bits_quieted():
    bits = np.array([0x7F80238C, 0xFFC00001, 0x7FFFFFFF], np.uint32)
    x = ptocpu.asarray(bits.view(np.float32))
    assert ptocpu.cast(x, ptocpu.DT_FP16).numpy().view(np.uint16).tolist() == [0x7E01, 0xFE00, 0x7FFF]
    assert ptocpu.cast(x, ptocpu.DT_BF16).numpy().view(np.uint16).tolist() == [0x7FC0, 0xFFC0, 0x7FFF]
    # the directed modes take the same rule
    assert ptocpu.cast(x, ptocpu.DT_FP16, ptocpu.CastMode.CAST_TRUNC).numpy().view(np.uint16).tolist() == [
        0x7E01, 0xFE00, 0x7FFF]


# ------------------------------------------------------------------ shapes, layouts, threads
def test_valid_shape_strided_and_zero_d_inputs():
    a = np.arange(24, dtype=np.float32).reshape(4, 6) + 0.5
    block = ptocpu.view(ptocpu.asarray(a), [4, 4], [0, 2], valid_shape=[3, 2])
    out = ptocpu.cast(block, ptocpu.DT_INT32, ptocpu.CastMode.CAST_CEIL)
    assert out.shape == (3, 2) and out.tolist() == np.ceil(a[:3, 2:4]).astype(np.int32).tolist()
    strided = ptocpu.asarray(a)[:, ::2]
    np.testing.assert_array_equal(ptocpu.cast(strided, ptocpu.DT_FP16).numpy(), a[:, ::2].astype(np.float16))
    t = ptocpu.asarray(a.T)  # transposed
    np.testing.assert_array_equal(ptocpu.cast(t, ptocpu.DT_BF16).numpy(), a.T.astype(ml_dtypes.bfloat16))
    zero_d = ptocpu.cast(ptocpu.asarray(np.float32(2.5)), ptocpu.DT_INT8)
    assert zero_d.shape == () and zero_d.tolist() == 2
    assert ptocpu.cast(ptocpu.asarray(np.zeros((0, 3), np.float32)), ptocpu.DT_FP16).shape == (0, 3)


@pytest.mark.parametrize("src,dst,mode,sat", [
    ("float32", "DT_FP16", RINT, OFF), ("float32", "DT_FP16", ROUND, ON), ("float32", "DT_BF16", RINT, OFF),
    ("float32", "DT_INT32", TRUNC, ON), ("float32", "DT_INT16", TRUNC, OFF), ("float16", "DT_INT8", FLOOR, OFF),
    ("float32", "DT_HF8", ROUND, OFF), ("float32", "DT_FP8E4M3", CEIL, ON), ("int32", "DT_FP32", RINT, OFF),
    ("int32", "DT_INT16", NONE, OFF), ("int64", "DT_FP32", TRUNC, OFF),
])
def test_one_and_two_threads_give_the_same_bits(src, dst, mode, sat):
    rng = np.random.default_rng(3)
    with np.errstate(over="ignore"):  # fp16 overflows to inf: inputs of every kind
        a = (rng.normal(0, 3e4, 1 << 20)).astype(src)
    x = ptocpu.asarray(a)
    results = []
    threads = ptocpu.get_num_threads()
    try:
        for n in (1, 2):
            ptocpu.set_num_threads(n)
            results.append(ptocpu.cast(x, getattr(ptocpu, dst), mode, sat).numpy().view(np.uint8).copy())
    finally:
        ptocpu.set_num_threads(threads)
    np.testing.assert_array_equal(results[0], results[1])


def test_torch_to_agrees_where_torch_defines_the_result():
    a = torch.randn(4096) * 1000
    x = ptocpu.asarray(a)
    np.testing.assert_array_equal(ptocpu.cast(x, ptocpu.DT_FP16).numpy(), a.half().numpy())
    np.testing.assert_array_equal(ptocpu.cast(x, ptocpu.DT_BF16).numpy().view(np.uint16),
                                  a.bfloat16().view(torch.int16).numpy().view(np.uint16))
    np.testing.assert_array_equal(ptocpu.cast(x, ptocpu.DT_INT32).numpy(), a.to(torch.int32).numpy())


# ------------------------------------------------------------------ packed pairs
E2M1_VALUES = [Fr(v) * s if v or s > 0 else -0.0 for s in (1, -1) for v in (0, Fr(1, 2), 1, Fr(3, 2), 2, 3, 4, 6)]


@pytest.mark.parametrize("dt,values", [("DT_FP4_E2M1X2", E2M1_VALUES), ("DT_FP4_E1M2X2", E1M2_VALUES)])
def test_pairs_unpack_every_byte_low_nibble_first(dt, values):
    pairs = ptocpu.view(ptocpu.asarray(np.arange(256, dtype=np.uint8).reshape(16, 16)), dtype=getattr(ptocpu, dt))
    with ptocpu.platform("ascend950"):
        out = ptocpu.cast(pairs, ptocpu.DT_BF16)
    assert out.shape == (16, 32)
    got = values_of(out)
    want = [values[b & 15] if k == 0 else values[b >> 4] for b in range(256) for k in (0, 1)]
    assert all(same(g, exact(float(w))) for g, w in zip(got, want))


@pytest.mark.parametrize("dt,fmt,codes", [("DT_FP4_E2M1X2", E2M1, E2M1_VALUES), ("DT_FP4_E1M2X2", E1M2, E1M2_VALUES)])
def test_pairs_pack_to_nearest_even_saturating(dt, fmt, codes):
    xs = [x for x in inputs("DT_BF16")]
    xs = xs[: len(xs) // 2 * 2]
    with ptocpu.platform("ascend950"):
        out = ptocpu.cast(tensor_of("DT_BF16", xs), getattr(ptocpu, dt))
    assert out.shape == (len(xs) // 2,)
    b = out.numpy().view(np.uint8)
    got_codes = [c for byte in b for c in (byte & 15, byte >> 4)]
    for x, c in zip(xs, got_codes):
        if isinstance(x, float) and math.isnan(x):
            assert c == 0x7
            continue
        v = float(fmt.round(x, RINT, True))
        want = (8 if math.copysign(1, v) < 0 else 0) if v == 0 else codes.index(exact(v))
        assert c == want, (x, c, want)


def test_pairs_shape_rules_and_repr():
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match="odd last dim"):
            ptocpu.cast(ptocpu.asarray(np.ones((2, 3), ml_dtypes.bfloat16)), ptocpu.DT_FP4_E2M1X2)
    with pytest.raises(ptocpu.ArgumentError, match="0-d"):
        ptocpu.cast(ptocpu.asarray(np.float32(1)), ptocpu.DT_FP4_E2M1X2)
    p = ptocpu.cast(ptocpu.asarray(np.array([0.5, -6.0], np.float32)), ptocpu.DT_FP4_E2M1X2)
    assert p.tolist() == [[0.5, -6.0]] and "DT_FP4_E2M1X2" in repr(p)
    t = torch.tensor([[0x21, 0xF7]], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    assert ptocpu.asarray(t).dtype == ptocpu.DT_FP4_E2M1X2
    assert ptocpu.cast(ptocpu.asarray(t), ptocpu.DT_BF16).tolist() == [[0.5, 1.0, 6.0, -6.0]]
    with pytest.raises(ptocpu.DTypeError, match="two 4-bit values"):
        p.astype("float32")
    with pytest.raises(ptocpu.ArgumentError, match="pairs of 4-bit codes"):
        p[0] = 1.0


# ------------------------------------------------------------------ the storage formats themselves
def test_hf8_every_code_decodes_to_its_definition():
    codes = ptocpu.view(ptocpu.asarray(np.arange(256, dtype=np.uint8)), dtype=ptocpu.DT_HF8)
    with ptocpu.platform("ascend950"):
        got = ptocpu.cast(codes, ptocpu.DT_FP32).numpy()
    for c in range(256):
        want = HF8_VALUES[c]
        assert same(exact(got[c]), want if not isinstance(want, Fr) or want != 0 else 0.0), (hex(c), got[c], want)
    assert codes.tolist()[0x6E] == 32768.0 and codes.tolist()[0x01] == 2.0 ** -22 and math.isnan(codes.tolist()[0x80])


def test_hf8_every_code_encodes_back_and_a_dense_sweep_rounds_ties_away():
    finite = [c for c in range(256) if isinstance(HF8_VALUES[c], Fr) and c != 0x80]
    x = ptocpu.asarray(np.array([float(HF8_VALUES[c]) for c in finite], np.float32))
    assert ptocpu.cast(x, ptocpu.DT_HF8).numpy().view(np.uint8).tolist() == finite
    # every float32 between the midpoints of neighbouring values, and the midpoints themselves
    mids = [(a + b) / 2 for a, b in zip(HF8_FINITE, HF8_FINITE[1:])]
    probes = set()
    for m in mids:
        f = np.float32(float(m))
        probes |= {float(f), float(np.nextafter(f, np.float32(0))), float(np.nextafter(f, np.float32(np.inf)))}
    probes |= {float(v) for v in np.random.default_rng(5).uniform(-5e4, 5e4, 2000).astype(np.float32)}
    xs = sorted(probes) + [-p for p in probes]
    out = ptocpu.cast(ptocpu.asarray(np.array(xs, np.float32)), ptocpu.DT_HF8)
    for x, g in zip(xs, values_of(out)):
        assert same(g, hf8_round(Fr(x), False) if x != 0 else Fr(0)), (x, g)


def test_hf8_saturation_and_specials():
    x = ptocpu.asarray(np.array([40959.0, 40960.0, 1e30, -math.inf, math.nan, -0.0, -1e-30], np.float32))
    assert ptocpu.cast(x, ptocpu.DT_HF8).numpy().view(np.uint8).tolist() == [0x6E, 0x6F, 0x6F, 0xEF, 0x80, 0, 0]
    on = ptocpu.cast(x, ptocpu.DT_HF8, satmode=ON).numpy().view(np.uint8).tolist()
    assert on == [0x6E, 0x6E, 0x6E, 0xEE, 0x80, 0, 0]
    # any other mode is ROUND: 1.5 * 2^-8 between 2^-8 and 2^-7 (1-bit mantissa there) ties away
    t = ptocpu.asarray(np.array([1.25 * 2.0 ** -8], np.float32))
    for mode in range(7):
        assert values_of(ptocpu.cast(t, ptocpu.DT_HF8, mode)) == [Fr(3, 2) * Fr(2) ** -8]


@pytest.mark.parametrize("name,values", [("DT_FP4_E2M1", E2M1_VALUES), ("DT_FP4_E1M2", E1M2_VALUES),
                                         ("DT_HF4", E1M2_VALUES), ("DT_INT4", list(range(8)) + list(range(-8, 0)))])
def test_four_bit_formats_decode_every_code(name, values):
    t = ptocpu.view(ptocpu.asarray(np.arange(16, dtype=np.uint8)), dtype=getattr(ptocpu, name))
    got = values_of(ptocpu.cast(t, ptocpu.DT_FP32))
    for g, w in zip(got, values):
        assert g == w
    assert [Fr(v) for v in t.tolist()] == [Fr(v) for v in got]


def test_numpy_views_names_and_sizes():
    expect = {"DT_INT4": "int4", "DT_FP4_E2M1": "float4_e2m1fn", "DT_HF8": "uint8", "DT_HF4": "uint8",
              "DT_FP4_E1M2": "uint8", "DT_FP4_E2M1X2": "uint8", "DT_FP4_E1M2X2": "uint8"}
    for name, np_name in expect.items():
        dt = getattr(ptocpu, name)
        assert ptocpu.itemsize(dt) == 1 and ptocpu.numpy_dtype(dt).name == np_name
        assert ptocpu.dtype(name) == dt and ptocpu.dtype(name[3:].lower()) == dt
    assert ptocpu.dtype(ml_dtypes.int4) == ptocpu.DT_INT4 and ptocpu.dtype(ml_dtypes.float4_e2m1fn) == ptocpu.DT_FP4_E2M1
    assert ptocpu.dtype("hifloat8") == ptocpu.DT_HF8 and ptocpu.dtype(torch.float4_e2m1fn_x2) == ptocpu.DT_FP4_E2M1X2
    assert ptocpu.DT_FP8 == ptocpu.DT_FP8E4M3 and ptocpu.DT_DOUBLE == ptocpu.DT_FP64
    i4 = ptocpu.asarray(np.array([-8, 7, -1], ml_dtypes.int4))
    assert i4.dtype == ptocpu.DT_INT4 and i4.tolist() == [-8, 7, -1] and i4.numpy().view(np.uint8).tolist() == [8, 7, 15]
    assert repr(ptocpu.cast(ptocpu.asarray(np.array([1.0, 0.1], np.float32)), ptocpu.DT_HF8)) == \
        "Tensor([1.     , 0.09375], dtype=DT_HF8)"


def test_storage_formats_move_like_any_byte_type_and_scalars_encode():
    codes = np.arange(12, dtype=np.uint8).reshape(3, 4)
    t = ptocpu.view(ptocpu.asarray(codes), dtype=ptocpu.DT_HF8)
    assert ptocpu.view(t, [2, 2], [1, 1]).numpy().tolist() == codes[1:3, 1:3].tolist()
    out = ptocpu.view(ptocpu.asarray(np.zeros((3, 4), np.uint8)), dtype=ptocpu.DT_HF8)
    ptocpu.assemble(ptocpu.view(t, [1, 4], [2, 0]), [0, 0], out)
    assert out.numpy()[0].tolist() == codes[2].tolist()
    out[1, 1] = 1.5
    assert out.tolist()[1][1] == 1.5
    i4 = ptocpu.asarray(np.zeros(2, ml_dtypes.int4))
    i4[1] = -3
    assert i4.tolist() == [0, -3] and i4.numpy().view(np.uint8).tolist() == [0, 13]
    with pytest.raises(ptocpu.ArgumentError, match="out of range"):
        i4[0] = 8
    with pytest.raises(ptocpu.DTypeError, match="DT_HF8"):
        ptocpu.add(t, t)  # no arithmetic op takes the storage formats


def test_astype_shares_the_conversions():
    rng = np.random.default_rng(1)
    a = ptocpu.asarray(np.concatenate([rng.normal(0, 100, 1000), [np.inf, -np.inf, np.nan, 1e9]]).astype(np.float32))
    for dt in (ptocpu.DT_HF8, ptocpu.DT_FP4_E2M1, ptocpu.DT_FP16, ptocpu.DT_FP8E5M2):
        np.testing.assert_array_equal(a.astype(dt).numpy().view(np.uint8), ptocpu.cast(a, dt).numpy().view(np.uint8))
    np.testing.assert_array_equal(a.astype("int16").numpy(), ptocpu.cast(a, ptocpu.DT_INT16, satmode=ON).numpy())
    h = ptocpu.cast(a, ptocpu.DT_HF8)
    np.testing.assert_array_equal(h.astype("float32").numpy(), ptocpu.cast(h, ptocpu.DT_FP32).numpy())


# ------------------------------------------------------------------ errors
def test_unsupported_pairs_are_dtype_errors_naming_the_targets():
    x = ptocpu.asarray(np.ones(4, np.float32))
    for platform, table in (("atlas_a2", A2A3), ("atlas_a3", A2A3), ("ascend950", A950)):
        with ptocpu.platform(platform):
            for name in [n for n in ptocpu.DType.__members__ if n != "DT_FP32"]:
                if ("DT_FP32", name) in table:
                    continue
                with pytest.raises(ptocpu.DTypeError, match=f"does not cast DT_FP32 to {name}; from DT_FP32 it casts to"):
                    ptocpu.cast(x, getattr(ptocpu, name))
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match="input"):
            ptocpu.cast(ptocpu.asarray(np.ones(4, np.float64)), ptocpu.DT_FP32)  # not a source there


def test_argument_errors_in_order():
    x = ptocpu.asarray(np.ones(4, np.float32))
    with pytest.raises(ptocpu.ArgumentError, match=r"mode 9 is not a CastMode"):
        ptocpu.cast(x, ptocpu.DT_FP16, 9)
    with pytest.raises(ptocpu.ArgumentError, match=r"satmode 2 is not a SaturationMode"):
        ptocpu.cast(x, ptocpu.DT_FP16, 0, 2)
    with pytest.raises(ptocpu.ArgumentError, match=r"mode -1"):
        ptocpu.cast(ptocpu.asarray(np.ones(4, np.float64)), ptocpu.DT_INT8, -1)  # before the input's checks
    with pytest.raises(ptocpu.DTypeError, match="mode must be an integer"):
        ptocpu.cast(x, ptocpu.DT_FP16, 1.5)
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.ArgumentError, match="rank"):
            ptocpu.cast(ptocpu.asarray(np.ones((1,) * 5, np.float32)), ptocpu.DT_FP16)
        with pytest.raises(ptocpu.ArgumentError, match="empty"):
            ptocpu.cast(ptocpu.asarray(np.ones((0, 2), np.float32)), ptocpu.DT_FP16)


def test_tile_rule_and_ub():
    x = ptocpu.asarray(np.ones((512, 512), np.float32))
    with ptocpu.platform("atlas_a2"):
        with ptocpu.vec_tile_shapes(16, 16):
            assert ptocpu.cast(x, ptocpu.DT_FP16).shape == (512, 512)
        with ptocpu.vec_tile_shapes(16):
            with pytest.raises(ptocpu.TileError, match="rank"):
                ptocpu.cast(x, ptocpu.DT_FP16)
        with ptocpu.vec_tile_shapes(512, 512):
            with pytest.raises(ptocpu.TileError, match="UB"):
                ptocpu.cast(x, ptocpu.DT_FP16)
