"""The binary family (docs/ops/floor_div.md ... where.md): values against torch and numpy / Python
integer references, every dtype of every platform (verify's cases, whose references follow the
pages' formulas), broadcasting, scalars, strided and valid-shape inputs, 0-d and empty tensors,
NaN / inf, the per-platform facts (zero divisors, scalar rounding, working buffers), every error
class with its message, the tile rules, the in-place ops, the Tensor surface and thread-count
independence."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from ptocpu.tools import verify
from ptocpu.tools.verify import binary as references

RNG = np.random.default_rng(2121)
FAMILY = sorted(row["name"] for row in ptocpu.op_table() if row["defined_in"] == "src/ops/binary.cpp")


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def same(got, want):
    """Same shape, dtype and values (NaN == NaN, -0.0 != 0.0)."""
    got = np.asarray(got.numpy() if isinstance(got, ptocpu.Tensor) else got)
    want = np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    if want.dtype.kind in "fV":
        g, w = got.astype(np.float64), want.astype(np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(w)), "NaN positions differ"
        ok = np.isnan(w) | ((g == w) & (np.signbit(g) == np.signbit(w)))
        assert ok.all(), f"{(~ok).sum()} elements differ, e.g. {g[~ok][:4]} != {w[~ok][:4]}"
    else:
        assert np.array_equal(got, want), f"{(got != want).sum()} elements differ"


def ints(shape, dtype=np.int32, lo=-1000, hi=1000, nonzero=False):
    a = RNG.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    return np.where(a == 0, 1, a).astype(dtype) if nonzero else a


def floats(shape, dtype=np.float32, lo=-4.0, hi=4.0):
    return RNG.uniform(lo, hi, size=shape).astype(dtype)


def padded(a):
    """The same values, not contiguous (every other element of a wider array)."""
    return np.repeat(a, 2, axis=-1)[..., ::2]


# ---- every dtype of every platform: verify's cases --------------------------------------------------

def test_the_family_is_registered():
    assert len(FAMILY) == 20
    assert verify.uncovered() == [] or not set(verify.uncovered()) & set(FAMILY)


@pytest.mark.parametrize("op", FAMILY)
def test_verify_cases_pass_on_every_platform(op):
    cases = verify.collect([op], verify.PLATFORMS, quick=False)
    assert {c.platform for c in cases} >= {p for p in verify.PLATFORMS
                                           if next(r for r in ptocpu.op_table() if r["name"] == op)["limits"][p]["offered"]}
    failed = [f"{r.platform} {r.dtype} {r.case}: {r.detail}" for r in map(verify.run_case, cases) if not r.passed]
    assert not failed, failed[:5]


# ---- against torch ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8])
def test_floor_div_remainder_of_integers_match_torch(dtype):
    a = ints((5, 1, 7), dtype, -120 if dtype != np.uint8 else 0, 120)
    b = ints((1, 4, 7), dtype, -9 if dtype != np.uint8 else 1, 9, nonzero=True)
    same(ptocpu.floor_div(padded(a), b), torch.floor_divide(t(a), t(b)).numpy())
    same(ptocpu.remainder(a, b), torch.remainder(t(a), t(b)).numpy())
    same(ptocpu.remainder(a, 7), torch.remainder(t(a), 7).numpy())


def test_ceil_div_matches_python():
    a, b = ints((6, 9), np.int32, -2**31, 2**31 - 1), ints((6, 9), np.int32, -50, 50, nonzero=True)
    want = np.array([-((-int(p)) // int(q)) for p, q in zip(a.ravel(), b.ravel())], np.int64).reshape(a.shape)
    same(ptocpu.ceil_div(a, b), want.astype(np.int32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_remainders_match_torch(dtype):
    a, b = floats((64, 33), dtype, -50, 50), floats((64, 33), dtype, -7, 7)
    same(ptocpu.fmod(a, b), torch.fmod(t(a), t(b)).numpy())
    want = torch.remainder(t(a), t(b)).numpy()
    same(ptocpu.remainder(a, b), np.where(want == 0, dtype(0), want))  # the device's zero remainder is +0


def test_fmod_is_exact_for_huge_quotients():
    a = np.array([1e30, -3e38, 7.5e20, 1e-30], np.float32)
    b = np.array([3.0, 7.0, -1e-7, 3e-45], np.float32)
    same(ptocpu.fmod(a, b), np.fmod(a.astype(np.float64), b.astype(np.float64)).astype(np.float32))
    same(ptocpu.remainder(a, b), torch.remainder(t(a).double(), t(b).double()).float().numpy())


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.int64])
def test_gcd_matches_torch(dtype):
    lo = 0 if dtype == np.uint8 else -100
    a, b = ints((8, 9), dtype, lo, 100), ints((9,), dtype, lo, 100)
    same(ptocpu.gcd(a, b), torch.gcd(t(a), t(b)).numpy())


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint32, np.int64, np.bool_])
def test_bitwise_ops_match_torch(dtype):
    if dtype == np.bool_:
        a, b = RNG.integers(0, 2, (5, 6)).astype(bool), RNG.integers(0, 2, (6,)).astype(bool)
    else:
        info = np.iinfo(dtype)
        a = RNG.integers(max(info.min, -10**6), min(info.max, 10**6), (5, 6)).astype(dtype)
        b = RNG.integers(max(info.min, -10**6), min(info.max, 10**6), (6,)).astype(dtype)
    for ours, theirs in ((ptocpu.bitwise_and, torch.bitwise_and), (ptocpu.bitwise_or, torch.bitwise_or),
                         (ptocpu.bitwise_xor, torch.bitwise_xor)):
        same(ours(padded(a), b), theirs(t(a), t(b)).numpy())


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16])
def test_shifts_within_the_width_match_torch(dtype):
    width = 8 * np.dtype(dtype).itemsize
    a = ints((4, 8), dtype, 0 if np.dtype(dtype).kind == "u" else -100, 100)
    c = ints((4, 8), dtype, 0, width - 1)
    if dtype == np.uint16:  # torch has no uint16 shifts: numpy's
        left, right = np.left_shift(a, c), np.right_shift(a, c)
    else:
        left, right = torch.bitwise_left_shift(t(a), t(c)).numpy(), torch.bitwise_right_shift(t(a), t(c)).numpy()
    same(ptocpu.bitwise_left_shift(a, c), left)
    same(ptocpu.bitwise_right_shift(a, c), right)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_byte_shifts_of_every_value_by_every_count(dtype):
    # bytes are shifted by a composition of fixed shifts (docs/ops/bitwise.md): every pair, against
    # the rule computed in int64 (counts below 0 or above 8 count as 8)
    values = np.arange(256).astype(np.uint8).view(dtype)
    a, c = (x.ravel() for x in np.meshgrid(values, values))
    n = np.where((c.astype(np.int64) < 0) | (c.astype(np.int64) > 8), 8, c.astype(np.int64))
    left = ((a.astype(np.int64) << n) & 0xFF).astype(np.uint8).view(dtype)
    same(ptocpu.bitwise_left_shift(a, c), left)
    same(ptocpu.bitwise_right_shift(a, c), (a.astype(np.int64) >> n).astype(dtype))


def test_logical_and_matches_torch_across_dtypes():
    a = np.array([[0.0, -0.0, np.nan, 1.5, -2.0, np.inf]], np.float32)
    b = np.array([[1], [0], [-3]], np.int16)
    same(ptocpu.logical_and(a, b), torch.logical_and(t(a), t(b)).numpy())
    x = RNG.integers(0, 2, (7, 5)).astype(bool)
    same(ptocpu.logical_and(x, x.T[:1].T), torch.logical_and(t(x), t(x.T[:1].T)).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int16])
def test_where_and_clip_match_torch(dtype):
    c = RNG.integers(0, 2, (3, 1, 5)).astype(bool)
    a = ints((3, 4, 5), dtype, -50, 50) if np.dtype(dtype).kind == "i" else floats((3, 4, 5), dtype)
    b = ints((1, 4, 1), dtype, -50, 50) if np.dtype(dtype).kind == "i" else floats((1, 4, 1), dtype)
    same(ptocpu.where(c, padded(a), b), torch.where(t(c), t(a), t(b)).numpy())
    lo, hi = (-20, 30) if np.dtype(dtype).kind == "i" else (-1.5, 2.5)
    same(ptocpu.clip(a, lo, hi), torch.clamp(t(a), lo, hi).numpy())
    lo_t, hi_t = a[:1] - 1, a[:, :1] + 1  # each broadcasts along one axis
    same(ptocpu.clip(b.repeat(3, 0).repeat(5, 2), lo_t, hi_t),
         torch.clamp(t(b.repeat(3, 0).repeat(5, 2)), t(lo_t), t(hi_t)).numpy())


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_operands_constant_along_long_rows_match_torch(dtype):
    # Rows of 1300 span three blocks of the engine, the last one partial; a scalar and a
    # column ([rows, 1]) operand are the same along each row (loaded once per row).
    x = floats((5, 1300), dtype)
    col = floats((5, 1), dtype)
    lo, hi = col - 1, col + 1
    f32 = np.float32
    same(ptocpu.clip(x, -1.5, 2.5), np.clip(x.astype(f32), -1.5, 2.5).astype(dtype))
    same(ptocpu.clip(x, lo, hi), np.clip(x.astype(f32), lo.astype(f32), hi.astype(f32)).astype(dtype))
    same(ptocpu.maximum(padded(x), col), np.maximum(x.astype(f32), col.astype(f32)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int16])
def test_rows_in_their_compute_type_match_torch(dtype):
    # docs/kernels.md#elementwise: a row whose operands need no conversion is worked in one call, an
    # operand broadcast along it (a column, a scalar, on either side) held as one value; rows of 1300
    # span three blocks, on one and two threads.
    integer = np.dtype(dtype).kind == "i"
    x = ints((6, 1300), dtype, -100, 100, nonzero=True) if integer else floats((6, 1300), dtype)
    y = ints((6, 1300), dtype, 1, 9) if integer else floats((6, 1300), dtype, 0.5, 4)
    col = ints((6, 1), dtype, 1, 9) if integer else floats((6, 1), dtype, 0.5, 4)
    row = ints((1, 1300), dtype, 1, 9) if integer else floats((1, 1300), dtype, 0.5, 4)
    ops = ["sub", "floor_div", "remainder", "bitwise_left_shift"] if integer else ["sub", "div", "maximum", "fmod"]
    torch_ops = {"floor_div": torch.floor_divide, "bitwise_left_shift": torch.bitwise_left_shift}
    previous = ptocpu.get_num_threads()
    try:
        for threads in (1, 2):
            ptocpu.set_num_threads(threads)
            for name in ops:
                op, ref = getattr(ptocpu, name), torch_ops.get(name) or getattr(torch, name)
                scalar = 3 if integer else 1.5
                one = np.array(scalar, dtype)  # as a 0-d tensor
                for a, b in ((x, y), (x, col), (col, x), (x, row), (row, x), (one, y)):
                    same(op(a, b), ref(t(a), t(b)).numpy())
                same(op(x, scalar), ref(t(x), t(one)).numpy())
    finally:
        ptocpu.set_num_threads(previous)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_ternary_rows_with_values_match_numpy(dtype):
    # The same one-call rows for three inputs, any of them held as one value: clip by scalar, column
    # and row bounds, and axpy_ (alpha a value) by a column and by a same-shape x.
    integer = np.dtype(dtype).kind == "i"
    x = ints((6, 1300), dtype, -100, 100) if integer else floats((6, 1300), dtype)
    col_lo = ints((6, 1), dtype, -60, -1) if integer else floats((6, 1), dtype, -3, -0.5)
    row_hi = ints((1, 1300), dtype, 1, 60) if integer else floats((1, 1300), dtype, 0.5, 3)
    lo, hi = (-50, 40) if integer else (-2.5, 1.5)
    previous = ptocpu.get_num_threads()
    try:
        for threads in (1, 2):
            ptocpu.set_num_threads(threads)
            for a, b in ((lo, hi), (col_lo, row_hi), (-row_hi, row_hi), (col_lo, -col_lo)):
                want = np.minimum(np.maximum(x, np.asarray(a, dtype)), np.asarray(b, dtype))
                same(ptocpu.clip(x, a, b), want)
            if not integer:
                for xs in (floats((6, 1), dtype), floats((6, 1300), dtype)):
                    y = floats((6, 1300), dtype)
                    want = y + np.float32(0.75) * xs  # two fp32 roundings, as the functor
                    ptocpu.axpy_(y, xs, 0.75)
                    same(y, want)
    finally:
        ptocpu.set_num_threads(previous)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prelu_and_lrelu_match_torch(dtype):
    x = floats((2, 3, 4, 5), dtype)
    w = floats((3,), dtype, 0, 1)
    same(ptocpu.prelu(x, w), torch.nn.functional.prelu(t(x), t(w)).numpy())
    same(ptocpu.lrelu(x, 0.25), torch.nn.functional.leaky_relu(t(x), 0.25).numpy())


def test_atan2_and_hypot_are_close_to_torch():
    y, x = floats((50, 40)), floats((50, 40))
    assert np.abs(ptocpu.atan2(y, x).numpy() - torch.atan2(t(y), t(x)).numpy()).max() < 4e-7
    a, b = floats((50, 40), lo=0.25), floats((50, 40), lo=0.25)
    np.testing.assert_allclose(ptocpu.hypot(a, b).numpy(), torch.hypot(t(a), t(b)).numpy(), rtol=3e-7)


def test_pow_matches_torch_within_an_ulp():
    x, y = floats((64, 64), lo=0.1, hi=8), floats((64, 64), lo=-6, hi=6)
    got, want = ptocpu.pow(x, y).numpy(), torch.pow(t(x).double(), t(y).double()).float().numpy()
    assert np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32)).max() <= 1


# ---- numerics and edge values the pages state ---------------------------------------------------------

def test_floor_div_of_floats_floors_the_rounded_quotient():
    # 1 / (1 - 2^-24) rounds to 1 + 2^-23 ... : the exact quotient of these two lies just below an
    # integer and rounds up onto it in fp32; the device floors the rounded quotient
    a = np.array([16777215.0, 7.0, -7.0, 1.0, -1.0, 0.0], np.float32)
    b = np.array([16777216.0 / 16777215.0 * 16777215.0 / 16777216.0, 2.0, 2.0, 0.0, 0.0, 0.0], np.float32)
    got = ptocpu.floor_div(a, b).numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (a.astype(np.float64) / b.astype(np.float64)).astype(np.float32)
    same(got, np.floor(q.astype(np.float64)).astype(np.float32))
    assert got[1] == 3.0 and got[2] == -4.0 and got[3] == np.inf and got[4] == -np.inf and np.isnan(got[5])


@pytest.mark.parametrize("platform, want", [("cpu", [2**31 - 1, -2**31, 0]), ("atlas_a2", [2**31 - 1, -2**31, 0]),
                                            ("ascend950", [0x7FFF7F7F, 0x80008080 - 2**32, 0x7FFF7F7F])])
def test_int32_floor_div_by_zero_per_platform(platform, want):
    with ptocpu.platform(platform):
        same(ptocpu.floor_div(np.array([5, -5, 0], np.int32), np.zeros(3, np.int32)), np.array(want, np.int32))


def test_integer_division_edges():
    lo = np.iinfo(np.int32).min
    same(ptocpu.floor_div(np.array([lo, 7], np.int32), np.array([-1, -2], np.int32)), np.array([lo, -4], np.int32))
    same(ptocpu.ceil_div(np.array([lo, 7, -7, 3], np.int32), np.array([-1, -2, 0, 0], np.int32)),
         np.array([lo, -3, lo, 2**31 - 1], np.int32))
    same(ptocpu.remainder(np.array([lo, 7, 7], np.int32), np.array([-1, 0, -2], np.int32)), np.array([0, 0, -1], np.int32))
    same(ptocpu.floor_div(np.array([-128, 100, -3], np.int8), np.array([-1, 0, 0], np.int8)),
         np.array([-128, 127, -128], np.int8))
    same(ptocpu.floor_div(np.array([200, 0], np.uint8), np.array([0, 0], np.uint8)), np.array([255, 0], np.uint8))
    big = np.array([2**63 - 1, -2**63, -7], np.int64)
    same(ptocpu.floor_div(big, np.array([2, -1, 2], np.int64)), np.array([2**62 - 1, -2**63, -4], np.int64))
    same(ptocpu.remainder(big, np.array([2, -1, 2], np.int64)), np.array([1, 0, 1], np.int64))


def test_remainder_signs_and_specials():
    a = np.array([7.0, 8.0, 9.0, -7.0, 6.0, -6.0, -1.0, np.inf, 5.0], np.float32)
    b = np.array([-3.0, -3.0, -3.0, 3.0, -3.0, 3.0, np.inf, 2.0, 0.0], np.float32)
    same(ptocpu.remainder(a, b), np.array([-2.0, -1.0, 0.0, 2.0, 0.0, 0.0, np.inf, np.nan, np.nan], np.float32))
    same(ptocpu.fmod(a, b), np.array([1.0, 2.0, 0.0, -1.0, 0.0, -0.0, -1.0, np.nan, np.nan], np.float32))
    same(ptocpu.remainder(5.5, np.array([2.0, -2.0], np.float32)), np.array([1.5, -0.5], np.float32))


def test_pow_special_values_and_rewrites():
    nan, inf = np.nan, np.inf
    x = np.array([-2.0, -2.0, -0.0, 0.0, 1.0, -1.0, nan, -inf, 2.0], np.float32)
    y = np.array([0.5, 3.0, -1.0, -2.0, nan, inf, 0.0, 3.0, 200.0], np.float32)
    same(ptocpu.pow(x, y), np.array([nan, -8.0, inf, inf, 1.0, 1.0, 1.0, -inf, inf], np.float32))
    v = np.array([2.0, 3.0, 0.1], np.float32)
    same(ptocpu.pow(v, 3), (v * v) * v)  # two fp32 roundings, as the device's x * x * x
    same(ptocpu.pow(v, -0.5), np.float32(1) / np.sqrt(v))
    same(ptocpu.pow(v, 2.0000000001), v * v)  # within 1e-9 of 2
    h = v.astype(np.float16)
    same(ptocpu.pow(h, -2), (np.float32(1) / (h.astype(np.float32) * h.astype(np.float32))).astype(np.float16))
    same(ptocpu.pow(np.array([3, 4], np.int32), 0.0), np.array([1, 1], np.int32))  # ones keep DT_INT32
    same(ptocpu.pow(np.array([4, 9], np.int32), 0.5), np.array([2.0, 3.0], np.float32))
    same(ptocpu.pow(np.array([2, 3, -1, 5], np.int32), np.array([31, 21, -3, -1], np.int32)),
         np.array([lo := -2**31, 1870418611, -1, 0], np.int32))
    assert lo == np.iinfo(np.int32).min
    same(ptocpu.pow(np.array([3, 2, 1], np.uint8), -1), np.array([0, 0, 1], np.uint8))
    same(ptocpu.pow(np.array([3, 2], np.int8), 300), np.array([pow(3, 300, 256) - 256 * (pow(3, 300, 256) > 127), 0],
                                                             np.int8))


def test_pow_promotion_table():
    x16 = np.array([[1.5, 2.0]], np.float16)
    xb = np.array([[1.5, 2.0]], ml_dtypes.bfloat16)
    i32 = np.array([[2, 3]], np.int32)
    assert ptocpu.pow(x16, xb).dtype == ptocpu.DT_FP32
    assert ptocpu.pow(x16, i32).dtype == ptocpu.DT_FP16
    assert ptocpu.pow(i32, xb).dtype == ptocpu.DT_BF16
    assert ptocpu.pow(np.array([[1, 2]], np.int8), x16).dtype == ptocpu.DT_FP32
    assert ptocpu.pow(x16, np.array([[1.0, 2.0]], np.float64)).dtype == ptocpu.DT_FP64
    same(ptocpu.pow(x16, i32), np.array([[2.25, 8.0]], np.float16))


def test_atan2_follows_the_device_on_the_axes():
    hp = np.float32(np.pi / 2)
    y = np.array([1.0, -1.0, 0.0, -0.0, 0.0, -0.0, np.nan], np.float32)
    x = np.array([0.0, -0.0, -0.0, -0.0, -1.0, -1.0, 1.0], np.float32)
    same(ptocpu.atan2(y, x), np.array([hp, -hp, 0.0, 0.0, np.float32(np.pi), -np.float32(np.pi), np.nan], np.float32))
    one = ptocpu.atan2(np.array([np.inf], np.float32), np.array([np.inf], np.float32)).numpy()[0]
    assert abs(one - math.pi / 4) < 1e-7


def test_hypot_keeps_the_devices_bias_in_fp32_only():
    z = np.zeros(2, np.float32)
    same(ptocpu.hypot(z, z), np.full(2, np.float32(1e-9)))
    same(ptocpu.hypot(z.astype(np.float16), z.astype(np.float16)), np.zeros(2, np.float16))
    same(ptocpu.hypot(np.array([np.inf, np.inf], np.float32), np.array([np.inf, 2.0], np.float32)),
         np.array([np.nan, np.inf], np.float32))
    same(ptocpu.hypot(np.array([3.0], np.float64), np.array([4.0], np.float64)), np.array([5.0]))


def test_gcd_magnitudes_and_minimum():
    same(ptocpu.gcd(np.array([-128, -128, 0, -12], np.int8), np.array([0, 6, 0, 18], np.int8)),
         np.array([-128, 2, 0, 6], np.int8))
    same(ptocpu.gcd(np.array([2**63 - 1, 12], np.int64), np.array([7, -18], np.int64)), np.array([7, 6], np.int64))


def test_shift_counts_out_of_range_count_as_the_width():
    a = np.array([1, -1, -8, 8, 3], np.int16)
    c = np.array([16, 40, 17, -2, 2], np.int16)
    same(ptocpu.bitwise_left_shift(a, c), np.array([0, 0, 0, 0, 12], np.int16))
    same(ptocpu.bitwise_right_shift(a, c), np.array([0, -1, -1, 0, 0], np.int16))
    same(ptocpu.bitwise_right_shift(np.array([0xFFFF], np.uint16), 16), np.array([0], np.uint16))
    same(ptocpu.bitwise_right_shift(-64, np.array([1, 3], np.int8)), np.array([-32, -8], np.int8))


def test_axpy_rounds_twice_in_fp32_then_to_y():
    y = np.array([1.0, 2.0, 3.0], np.float16)
    x = np.array([0.1, 0.2, 0.3], np.float16)
    got = ptocpu.axpy_(y.copy(), x, alpha=0.7)
    f = np.float32
    same(got, (y.astype(f) + f(0.7) * x.astype(f)).astype(np.float16))
    y32 = np.array([[1.0, 2.0]], np.float32)
    ptocpu.axpy_(y32, np.array([[0.5]], np.float16), 3)
    same(y32, np.array([[2.5, 3.5]], np.float32))


# ---- scalars -----------------------------------------------------------------------------------------

def test_floor_div_scalar_rounding_depends_on_the_platform():
    x = np.array([1.0, 3.0, 5.0], ml_dtypes.bfloat16)
    fp32 = np.floor((x.astype(np.float64) / np.float64(np.float32(0.3))).astype(np.float32)).astype(x.dtype)
    bf16 = np.floor((x.astype(np.float64) / float(np.float32(ml_dtypes.bfloat16(0.3)))).astype(np.float32)).astype(x.dtype)
    assert not np.array_equal(fp32, bf16)
    with ptocpu.platform("atlas_a2"):
        same(ptocpu.floor_div(x, 0.3), fp32)  # AutoCast: an fp32 scalar
    with ptocpu.platform("ascend950"):
        same(ptocpu.floor_div(x, 0.3), bf16)  # native FLOORDIVS: the scalar in bf16


def test_fmod_scalar_rounding_depends_on_the_platform():
    x = np.array([1.0], np.float16)
    with ptocpu.platform("ascend950"):
        native = ptocpu.fmod(x, 0.1).numpy()
    with ptocpu.platform("atlas_a3"):
        autocast = ptocpu.fmod(x, 0.1).numpy()
    same(native, np.fmod(1.0, float(np.float16(0.1))).astype(np.float16).reshape(1))
    same(autocast, np.float32(np.fmod(1.0, float(np.float32(0.1)))).astype(np.float16).reshape(1))


def test_scalar_rules():
    i32 = np.arange(1, 7, dtype=np.int32)
    same(ptocpu.gcd(i32, 4.9), np.gcd(i32, 4).astype(np.int32))  # truncated, no type check
    same(ptocpu.bitwise_left_shift(i32, 2.7), i32 << 2)
    same(ptocpu.clip(i32, 1.9, 4.2), np.clip(i32, 1, 4))
    same(ptocpu.bitwise_and(i32, True), i32 & 1)
    same(ptocpu.where(np.array([True, False]), 1, 0.5), np.array([1.0, 0.5], np.float32))
    same(ptocpu.where(np.array([True, False]), np.array([7, 8], np.uint8), 3), np.array([7, 3], np.uint8))
    for call, needle in ((lambda: ptocpu.floor_div(i32, 1.5), "is a float"),
                         (lambda: ptocpu.bitwise_or(i32, 1.5), "is a float"),
                         (lambda: ptocpu.remainder(2, 3), "both scalars"),
                         (lambda: ptocpu.bitwise_right_shift(2, 3), "both scalars"),
                         (lambda: ptocpu.where(np.array([True]), np.array([1.0], np.float16), 0.5), "is a float"),
                         (lambda: ptocpu.clip(i32, np.ones(6, np.int32), 3), "two tensors"),
                         (lambda: ptocpu.pow(np.ones(2, np.uint8), 0.5), "a float exponent")):
        with pytest.raises(ptocpu.DTypeError, match=needle):
            call()
    for call, needle in ((lambda: ptocpu.floor_div(np.ones(2, np.int8), 300), "out of range"),
                         (lambda: ptocpu.gcd(np.ones(2, np.uint8), -1), "out of range"),
                         (lambda: ptocpu.where(np.array([True]), np.array([1], np.uint16), -1), "out of range"),
                         (lambda: ptocpu.fmod(np.ones(2, np.float32), float("inf")), "must be finite"),
                         (lambda: ptocpu.lrelu(np.ones(2, np.float32), -0.5), ">= 0"),
                         (lambda: ptocpu.pow(np.ones(2, np.float32), 2**31), "out of range")):
        with pytest.raises(ptocpu.ArgumentError, match=needle):
            call()


# ---- shapes, views, 0-d and empty tensors -------------------------------------------------------------

@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.int32])
def test_short_rows_by_a_column_match_numpy(dt):
    """Rows of 1-9 and 17 elements by a column (each row's value repeated) and by a row (filled once),
    read in place, converted (fp16, bf16: a column's values gathered, then converted in one call) or
    through strided views, contiguous or padded rows; the sum and
    the difference each rounded once from the exact result, as numpy computes them."""
    rng = np.random.default_rng(17)
    for n in (1, 2, 3, 4, 5, 7, 8, 9, 17):
        a = (rng.standard_normal((3, 700, n)) * 50).astype(dt)
        col = (rng.standard_normal((3, 1400, 1)) * 50).astype(dt)
        row = (rng.standard_normal((1, 1, 2 * n)) * 50).astype(dt)
        for b in (col[:, :700], col[:, ::2], row[..., ::2]):  # columns; a row down all the rows
            same(ptocpu.add(a, b), a + b)
            same(ptocpu.sub(b, a), b - a)
        padded = np.zeros((3, 700, 2 * n), dt)[..., ::2]  # rows a step apart, not back to back
        padded[...] = a
        same(ptocpu.add(padded, col[:, ::2]), a + col[:, ::2])


INTEGERS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dt", INTEGERS)
def test_bit_pattern_ops_of_every_integer_dtype_match_numpy(dt):
    """The ops whose integer results depend only on the operands' bits (wrapping add / sub / mul,
    eq / ne, the bitwise and logical ops) run signed integers on the unsigned kernels of their width
    (docs/kernels.md#compile-time), ops whose results depend on the sign (maximum, lt) must not: every
    layout the engine takes (same shape in place, a scalar, a column and a row held as one value,
    padded views through the buffers, short rows in batches) against numpy's own wrapping results,
    extremes included."""
    info = np.iinfo(dt)
    rng = np.random.default_rng(5)

    def values(shape):
        a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)
        a.flat[:4] = [info.min, info.max, 0, 1 if info.min == 0 else -1][: a.size]
        return a

    x, y = values((6, 300)), values((6, 300))
    col, row = values((6, 1)), values((1, 300))
    short, short_col = values((500, 5)), values((500, 1))
    binary = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "eq": np.equal, "ne": np.not_equal,
              "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
              "logical_and": np.logical_and,
              # and ops whose results do depend on the sign, which must not run so
              "maximum": np.maximum, "minimum": np.minimum, "lt": np.less, "ge": np.greater_equal}
    with np.errstate(over="ignore"):
        for name, ref in binary.items():
            op = getattr(ptocpu, name)
            for a, b in ((x, y), (x, col), (col, x), (x, row), (padded(x), y), (short, short_col), (short_col, short)):
                same(op(a, b), ref(a, b))
            if name not in ("eq", "ne", "lt", "ge", "logical_and"):  # comparisons take no integer scalar
                same(op(x, 3), ref(x, dt(3)))
        same(ptocpu.bitwise_not(x), np.invert(x))
        same(ptocpu.bitwise_not(padded(x)), np.invert(x))
        same(ptocpu.logical_not(x), np.logical_not(x))


def test_broadcasting_rules():
    with pytest.raises(ptocpu.ArgumentError, match="do not broadcast"):
        ptocpu.floor_div(np.ones((2, 3), np.float32), np.ones(4, np.float32))
    with pytest.raises(ptocpu.ArgumentError, match="same rank"):
        ptocpu.pow(np.ones((2, 3), np.float32), np.ones(3, np.float32))
    with pytest.raises(ptocpu.ArgumentError, match="same rank"):
        ptocpu.where(np.ones(3, bool), np.ones((1, 3), np.float32), np.ones((1, 3), np.float32))
    with pytest.raises(ptocpu.ArgumentError, match="at most one"):
        ptocpu.clip(np.ones((2, 3), np.float32), np.zeros(1, np.float32), None)
    with pytest.raises(ptocpu.ArgumentError, match="cannot broadcast"):
        ptocpu.axpy_(np.ones((1, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(ptocpu.ArgumentError, match=r"must be \[3\]"):
        ptocpu.prelu(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ptocpu.ArgumentError, match=r"must be \[1\]"):
        ptocpu.prelu(np.ones(5, np.float32), np.ones(2, np.float32))
    # both operands may broadcast, on different axes
    same(ptocpu.bitwise_xor(np.array([[1], [2]], np.int32), np.array([4, 8, 16], np.int32)),
         np.array([[5, 9, 17], [6, 10, 18]], np.int32))


def test_valid_shape_views_read_only_their_valid_part():
    a = ptocpu.asarray(floats((4, 8)))
    b = ptocpu.asarray(floats((4, 8), lo=0.5))
    va = ptocpu.view(a, [4, 8], [0, 0], valid_shape=[3, 5])
    vb = ptocpu.view(b, [4, 8], [0, 0], valid_shape=[3, 5])
    same(ptocpu.remainder(va, vb), references.remainder_reference("cpu", "DT_FP32", a.numpy()[:3, :5], b.numpy()[:3, :5]))
    vy = ptocpu.view(ptocpu.asarray(np.zeros((4, 8), np.float32)), [4, 8], [0, 0], valid_shape=[2, 3])
    got = ptocpu.axpy_(vy, np.ones((2, 3), np.float32)).numpy()  # y's valid part is updated
    assert got[:2, :3].min() == 1.0 and got.sum() == 6.0
    vc = ptocpu.view(ptocpu.asarray(np.ones((4, 8), bool)), [4, 8], [1, 2], valid_shape=[3, 2])
    same(ptocpu.where(vc, va.numpy()[:3, :2], 0.0), a.numpy()[:3, :2])


def test_zero_d_and_empty_tensors_on_cpu():
    same(ptocpu.floor_div(np.array(7, np.int32), np.array(-2, np.int32)), np.array(-4, np.int32))
    same(ptocpu.where(np.array(True), 1.0, 2.0), np.array(1.0, np.float32))
    same(ptocpu.hypot(np.zeros((0, 3), np.float32), np.zeros((1, 3), np.float32)), np.zeros((0, 3), np.float32))
    same(ptocpu.gcd(np.zeros((2, 0), np.int32), 3), np.zeros((2, 0), np.int32))
    with ptocpu.platform("ascend950"), pytest.raises(ptocpu.ArgumentError):
        ptocpu.floor_div(np.array(7, np.int32), np.array(2, np.int32))  # rank 1-4 on the chips


# ---- dtypes per platform --------------------------------------------------------------------------

def test_platform_dtype_lists():
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match="not supported on platform atlas_a2"):
            ptocpu.bitwise_left_shift(np.ones(2, np.int32), 1)
        with pytest.raises(ptocpu.DTypeError, match="not supported"):
            ptocpu.axpy_(np.ones(2, ml_dtypes.bfloat16), np.ones(2, ml_dtypes.bfloat16))
        with pytest.raises(ptocpu.DTypeError, match="not supported"):
            ptocpu.where(np.ones(2, bool), np.ones(2, np.int8), np.ones(2, np.int8))
        with pytest.raises(ptocpu.DTypeError, match="not supported"):
            ptocpu.ceil_div(np.ones(2, np.int16), 1)
    with ptocpu.platform("ascend950"):
        same(ptocpu.bitwise_left_shift(np.array([1], np.int32), 3), np.array([8], np.int32))
        same(ptocpu.where(np.array([False]), np.array([1], np.int8), np.array([2], np.int8)), np.array([2], np.int8))
    with pytest.raises(ptocpu.DTypeError, match="cannot be added"):
        ptocpu.axpy_(np.ones(2, np.float16), np.ones(2, np.float32))
    with ptocpu.platform("atlas_a3"), pytest.raises(ptocpu.DTypeError, match="x dtype DT_BF16 is not supported"):
        ptocpu.axpy_(np.ones(2, np.float32), np.ones(2, ml_dtypes.bfloat16))
    same(ptocpu.axpy_(np.ones(2, np.float32), np.ones(2, ml_dtypes.bfloat16)), np.full(2, 2.0, np.float32))


# ---- tiles and the UB ----------------------------------------------------------------------------------

def test_tile_rank_must_be_the_outputs():
    with ptocpu.vec_tile_shapes(4), pytest.raises(ptocpu.TileError, match="rank"):
        ptocpu.remainder(np.ones((4, 8), np.float32), 2.0)


def test_a_longer_tile_tiles_by_its_leading_dims():
    # The device's tiling loops read tile[d] for each output dim d (upstream's examples set [2, 8]
    # for 1-D tensors); further dims are ignored, in the UB count too.
    two = (np.ones((8, 4096), np.float32), np.ones((8, 4096), np.float32))
    with ptocpu.platform("atlas_a2"):
        with ptocpu.vec_tile_shapes(2, 8):
            np.testing.assert_array_equal(ptocpu.add(np.array([1, 2, 3], np.float32), 1.0).numpy(), [2, 3, 4])
        with ptocpu.vec_tile_shapes(2, 4096, 99999):  # 3 tiles of 2 x 4096 fp32: 96 KiB
            ptocpu.add(*two)
        with ptocpu.vec_tile_shapes(1, 1024, 99999):  # floor_div's workspace rows are the leading dims' too
            ptocpu.floor_div(*two)
        with ptocpu.vec_tile_shapes(8, 4096, 1), pytest.raises(ptocpu.TileError, match=r"tile shape \[8, 4096\] needs 393216 UB"):
            ptocpu.add(*two)
        with ptocpu.vec_tile_shapes(4), pytest.raises(ptocpu.TileError, match="needs at least one dim per output dim"):
            ptocpu.add(*two)


@pytest.mark.parametrize("op, args, tile, fits", [
    # floor_div's workspace (6 fp32 rows per row) on top of in / other / out: 3*4*T + 24*T > 192 KB at T = 6144
    ("floor_div", (np.ones((8, 1024), np.float32), np.ones((8, 1024), np.float32)), (8, 768), False),
    ("floor_div", (np.ones((8, 1024), np.float32), np.ones((8, 1024), np.float32)), (4, 512), True),
    # atan2: 7 fp32 tiles
    ("atan2", (np.ones((8, 1024), np.float16), np.ones((8, 1024), np.float16)), (8, 1024), False),
    ("atan2", (np.ones((8, 1024), np.float16), np.ones((8, 1024), np.float16)), (4, 1024), True),
    # where: 8352 bytes of workspace beyond the tiles
    ("where", (np.ones((8, 4096), bool), np.ones((8, 4096), np.float32), 0.0), (8, 4096), False),
    ("where", (np.ones((8, 4096), bool), np.ones((8, 4096), np.float32), 0.0), (4, 4096), True),
    # pow's temporary tile is wider on the A2 / A3 (checked there)
    ("pow", (np.ones((8, 2048), np.float32), np.ones((8, 2048), np.float32)), (5, 2048), False),
    ("pow", (np.ones((8, 2048), np.float32), 2.0), (5, 2048), True),  # x * x: no POW, no temporary
    # prelu 2-D: the page's a*b*4 + b/8 + 8 KB
    ("prelu", (np.ones((64, 1024), np.float32), np.ones(1024, np.float32)), (45, 1024), True),
    ("prelu", (np.ones((64, 1024), np.float32), np.ones(1024, np.float32)), (46, 1024), False),
])
def test_working_buffers_count_in_the_ub(op, args, tile, fits):
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(*tile):
        if fits:
            getattr(ptocpu, op)(*args)
        else:
            with pytest.raises(ptocpu.TileError, match="UB"):
                getattr(ptocpu, op)(*args)


def test_pows_temporary_is_narrower_on_the_950():
    with ptocpu.platform("ascend950"), ptocpu.vec_tile_shapes(5, 2048):
        ptocpu.pow(np.ones((8, 2048), np.float32), np.ones((8, 2048), np.float32))


def test_gcd_needs_a_32_byte_last_tile_dim():
    with ptocpu.vec_tile_shapes(2, 4), pytest.raises(ptocpu.TileError, match="multiple of 32 bytes"):
        ptocpu.gcd(np.ones((2, 8), np.int32), 3)
    with ptocpu.vec_tile_shapes(2, 8):
        same(ptocpu.gcd(np.full((2, 8), 6, np.int32), 4), np.full((2, 8), 2, np.int32))


# ---- in place ------------------------------------------------------------------------------------------

def test_axpy_writes_y_and_returns_it():
    y = ptocpu.asarray(np.ones((2, 3), np.float32))
    assert y.axpy_(np.full((2, 1), 2.0, np.float32), alpha=0.5) is y
    same(y, np.full((2, 3), 2.0, np.float32))
    arr = np.ones(3, np.float32)
    ptocpu.axpy_(arr, np.ones(3, np.float32))
    same(arr, np.full(3, 2.0, np.float32))
    y = np.ones(4, np.float32)
    ptocpu.axpy_(y[1:], y[:3])  # x overlaps y: read as it was
    same(y, np.array([1.0, 2.0, 2.0, 2.0], np.float32))


def test_failed_in_place_calls_write_nothing():
    y = np.ones((2, 3), np.float32)
    with pytest.raises(ptocpu.ArgumentError):
        ptocpu.axpy_(y, np.ones((3, 3), np.float32))
    readonly = np.ones(3, np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ptocpu.ArgumentError, match="read-only"):
        ptocpu.axpy_(readonly, np.ones(3, np.float32))
    dst = np.zeros((4, 4), np.float32)
    with pytest.raises(ptocpu.TileError, match="outside dst"):
        ptocpu.atomic_add(np.ones((2, 2), np.float32), [3, 0], dst)
    with pytest.raises(ptocpu.TileError, match="outside dst"):
        ptocpu.atomic_add(np.ones((2, 2), np.float32), [-1, 0], dst)
    with pytest.raises(ptocpu.DTypeError, match="must match"):
        ptocpu.atomic_add(np.ones((2, 2), np.float16), [0, 0], dst)
    with pytest.raises(ptocpu.ArgumentError, match="must agree"):
        ptocpu.atomic_add(np.ones((2, 2), np.float32), [0, 0, 0], dst)
    assert not y.any() - 1 and not dst.any()


def test_atomic_add_adds_into_the_block():
    dst = np.arange(16, dtype=np.int16).reshape(4, 4)
    src = np.full((2, 3), 32767, np.int16)
    assert ptocpu.atomic_add(src, [1, 1], dst) is None
    want = np.arange(16, dtype=np.int16).reshape(4, 4)
    want[1:3, 1:4] = (want[1:3, 1:4].astype(np.int32) + 32767).astype(np.int16)  # wraps, as add
    same(dst, want)
    d = np.zeros(6, np.float32)
    ptocpu.atomic_add(d[2:5], [1], d)  # src overlaps dst: read as it was
    same(d, np.zeros(6, np.float32))


# ---- the Tensor surface --------------------------------------------------------------------------------

def test_tensor_operators_and_methods():
    x = ptocpu.asarray(np.array([7.0, -7.0, 2.0], np.float32))
    same(x % 3, np.array([1.0, 2.0, 2.0], np.float32))
    same(x ** 2, np.array([49.0, 49.0, 4.0], np.float32))
    same(x.remainder(-3.0), np.array([-2.0, -1.0, -1.0], np.float32))
    same(x.fmod(3.0), np.array([1.0, -1.0, 2.0], np.float32))
    same(x.hypot(x), ptocpu.hypot(x, x).numpy())
    same(ptocpu.asarray(np.array([4, 6], np.int32)).gcd(4), np.array([4, 2], np.int32))
    same(x.prelu(np.array([0.5], np.float32)), np.array([7.0, -3.5, 2.0], np.float32))
    with pytest.raises(TypeError):
        3 % x  # no __rmod__ upstream
    with pytest.raises(TypeError):
        2 ** x  # no __rpow__ upstream
    i = ptocpu.asarray(np.array([1, 2], np.int32))
    for operator in (lambda: i & i, lambda: i | i, lambda: i ^ i, lambda: ~i, lambda: i << 1, lambda: i >> 1):
        with pytest.raises(TypeError):  # upstream's Tensor defines no bitwise operators
            operator()
    assert not hasattr(ptocpu.Tensor, "where") and not hasattr(ptocpu.Tensor, "lrelu")


def test_floordiv_operator_is_floor_of_true_division():
    x = ptocpu.asarray(np.array([7, -7], np.int32))
    got = x // 2
    assert got.dtype == ptocpu.DT_FP32  # int / int is fp32, then floor
    same(got, np.array([3.0, -4.0], np.float32))
    h = ptocpu.asarray(np.array([2047.0, 1.0], np.float16))
    # div rounds the quotient to fp16 first (2047 / 0.9995 = 2048.02 -> 2048), floor_div floors the fp32 one
    same(h // 0.9995, np.floor((h.numpy() / np.float16(0.9995)).astype(np.float16)))


# ---- threads -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["pow", "remainder", "atan2", "gcd", "where"])
def test_results_do_not_depend_on_the_thread_count(op):
    n = (300, 1000)
    args = {"pow": (floats(n, lo=0.1), floats(n)), "remainder": (floats(n), floats(n, lo=0.5)),
            "atan2": (floats(n), floats(n)), "gcd": (ints(n), ints(n)),
            "where": (RNG.integers(0, 2, n).astype(bool), floats(n), 0.0)}[op]
    results = []
    for threads in (1, 2):
        ptocpu.set_num_threads(threads)
        results.append(getattr(ptocpu, op)(*args).numpy())
    assert np.array_equal(results[0].view(np.uint8), results[1].view(np.uint8))


# ---- the pages' examples -------------------------------------------------------------------------------

def test_upstream_page_examples():
    f32 = lambda v: np.array(v, np.float32)  # noqa: E731
    i32 = lambda v: np.array(v, np.int32)  # noqa: E731
    same(ptocpu.floor_div(i32([[1, 6, 6], [4, 6, 6]]), i32([[1, 1, 2], [3, 4, 5]])), i32([[1, 6, 3], [1, 1, 1]]))
    same(ptocpu.ceil_div(i32([[1, 6, 6], [4, 6, 6]]), i32([[1, 1, 2], [3, 4, 5]])), i32([[1, 6, 3], [2, 2, 2]]))
    same(ptocpu.remainder(np.array([7, 8, 9], np.float16), np.array([-3, -3, -3], np.float16)),
         np.array([-2.0, -1.0, 0.0], np.float16))
    same(ptocpu.fmod(f32([[2.0, 5.0, 9.0]]), f32([[2.0, 2.0, 2.0]])), f32([[0.0, 1.0, 1.0]]))
    same(ptocpu.gcd(i32([[1, 1, 2], [3, 4, 5]]), i32([[6, 6, 6], [6, 6, 6]])), i32([[1, 1, 2], [3, 2, 1]]))
    same(ptocpu.bitwise_and(np.array([5, 3], np.int16), np.array([3, 1], np.int16)), np.array([1, 1], np.int16))
    same(ptocpu.bitwise_or(np.array([5, 3], np.int16), np.array([3, 1], np.int16)), np.array([7, 3], np.int16))
    same(ptocpu.bitwise_xor(np.array([5, 3], np.int16), np.array([3, 1], np.int16)), np.array([6, 2], np.int16))
    same(ptocpu.bitwise_right_shift(np.array([[1, 2, 3]], np.int16), np.array([[1, 1, 1]], np.int16)),
         np.array([[0, 1, 1]], np.int16))
    same(ptocpu.hypot(f32([3.0, 4.0]), f32([4.0, 3.0])), f32([5.0, 5.0]))
    same(ptocpu.prelu(f32([-1.0, 2.0, -0.5, 3.0]), f32([0.25])), f32([-0.25, 2.0, -0.125, 3.0]))
    same(ptocpu.lrelu(f32([-1.0, 2.0, 0.0, -0.5])), f32([-1.0, 2.0, 0.0, -0.5]) * np.where(
        f32([-1.0, 2.0, 0.0, -0.5]) < 0, np.float32(0.01), np.float32(1)))
    same(ptocpu.clip(i32([[-2, 1, 2], [3, 4, 5]]), i32([[-1, 0, 2], [0, 3, 5]]), i32([[1, 2, 1], [4, 4, 4]])),
         i32([[-1, 1, 1], [3, 4, 4]]))
    same(ptocpu.where(np.array([[True, False], [False, True]]), f32([[1.0, 2.0]]), 0.0), f32([[1.0, 0.0], [0.0, 2.0]]))
    out = f32([[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    ptocpu.atomic_add(f32([[1, 1], [1, 1]]), [0, 0], out)
    same(out, f32([[2, 2, 0, 0], [2, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]))
    y = ptocpu.asarray(f32([[1.0, 2.0, 3.0]]))
    y.axpy_(f32([[2.0, 3.0, 4.0]]), alpha=2.0)
    same(y, f32([[5.0, 8.0, 11.0]]))
    same(ptocpu.logical_and(np.array([True, False]), np.array([True, True])), np.array([True, False]))


# ---- compiled kernels ----------------------------------------------------------------------------------

@ptocpu.frontend.jit
def binary_chain_kernel(a: ptocpu.Tensor(), b: ptocpu.Tensor(), out: ptocpu.Tensor()):
    """A chain of this family's ops per row tile (floor_div, remainder, pow, atan2, hypot, clip, lrelu)."""
    ptocpu.set_vec_tile_shapes(8, 64)
    for i in ptocpu.loop(4):
        x = ptocpu.view(a, [8, 64], [i * 8, 0])
        y = ptocpu.view(b, [8, 64], [i * 8, 0])
        r = ptocpu.remainder(ptocpu.pow(x, 1.5), ptocpu.hypot(x, y))
        r = ptocpu.atan2(r, ptocpu.floor_div(y, 0.75))
        r = ptocpu.lrelu(ptocpu.clip(r, -1.0, 1.0), 0.2)
        ptocpu.assemble(r, [i * 8, 0], out)


def test_compiled_chains_fuse_the_family_and_equal_eager(monkeypatch):
    a, b = floats((32, 64), lo=0.5, hi=3.0), floats((32, 64), lo=0.5, hi=3.0)
    out = np.zeros_like(a)
    binary_chain_kernel(a, b, out)  # traced
    compiled = np.zeros_like(a)
    binary_chain_kernel(a, b, compiled)
    (program,) = binary_chain_kernel.kernel.compiled.programs.values()
    assert "fused pow+hypot+remainder+floor_div+atan2+clip+lrelu" in program.describe(), program.describe()
    monkeypatch.setenv("PTOCPU_EAGER", "1")
    eager = np.zeros_like(a)
    binary_chain_kernel(a, b, eager)
    same(compiled, eager)
    same(out, eager)


def test_greater_is_gt_under_upstreams_other_name():
    """pypto.greater / Tensor.greater (exported upstream, used by its tests, no page of its own):
    gt's results for tensors, broadcasts and float scalars, NaN false; errors name greater; verify's
    cases pass on every platform."""
    a = floats((5, 33), np.float16)
    b = floats((1, 33), np.float16)
    a[0, :3] = np.nan
    want = np.greater(a, b)
    same(ptocpu.greater(a, b), want)
    same(ptocpu.asarray(a).greater(b), want)
    same(ptocpu.greater(a, 0.5), np.greater(a, np.float16(0.5)))
    with pytest.raises(ptocpu.DTypeError, match="^greater"):
        ptocpu.greater(floats((4,)), 1)  # an int scalar, refused as gt refuses it
    cases = verify.collect(["greater"], verify.PLATFORMS, quick=False)
    assert {c.platform for c in cases} == set(verify.PLATFORMS)
    failed = [f"{r.platform} {r.dtype} {r.case}: {r.detail}" for r in map(verify.run_case, cases) if not r.passed]
    assert not failed, failed[:5]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.int32, np.int64])
def test_streamed_outputs_match_the_references(dtype):
    # docs/kernels.md#streaming-stores: with the threshold at 0 every contiguous output is streamed,
    # a block at a time from its first cache line; two threads split rows at odd elements, so the
    # first block of a thread's range is a partial line (the lead). With the software prefetches on
    # and off (docs/kernels.md#prefetching): padded rows of 64 bytes to 1 KiB and outputs of 1 MiB.
    rng = np.random.default_rng(77)
    shape = (37, 1001)
    if np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16:
        a = rng.uniform(-4, 4, shape).astype(dtype)
        b = rng.uniform(-4, 4, shape).astype(dtype)
        total = (a.astype(np.float32) + b.astype(np.float32)).astype(dtype)  # one rounding from fp32
        col = rng.uniform(-4, 4, (37, 1)).astype(dtype)
        product = (a.astype(np.float32) * col.astype(np.float32)).astype(dtype)
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        b = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
        total = (a.astype(np.int64) + b.astype(np.int64)).astype(dtype)  # two's complement wrap
        col = rng.integers(-3, 4, (37, 1)).astype(dtype)
        product = (a.astype(np.int64) * col.astype(np.int64)).astype(dtype)
    previous = ptocpu.get_num_threads()
    big_a, big_b = np.tile(a, (12, 1)), np.tile(b, (12, 1))  # 444K elements
    try:
        for prefetch in (False, True):
            ptocpu._core._set_kernel_tuning(0, prefetch_streams=prefetch)
            for threads in (1, 2):
                ptocpu.set_num_threads(threads)
                same(ptocpu.add(ptocpu.asarray(a), ptocpu.asarray(b)), total)
                same(ptocpu.mul(ptocpu.asarray(a), ptocpu.asarray(col)), product)  # a broadcast operand
                same(ptocpu.lt(ptocpu.asarray(a), ptocpu.asarray(b)), a < b)  # a bool output
                same(ptocpu.add(ptocpu.asarray(a[:, 3:]), ptocpu.asarray(b[:, 3:])), total[:, 3:])  # strided inputs
                same(ptocpu.add(ptocpu.asarray(a[:, :8]), ptocpu.asarray(b[:, :8])), total[:, :8])  # short rows
                same(ptocpu.add(ptocpu.asarray(a[:, :100]), ptocpu.asarray(b[:, :100])), total[:, :100])  # padded rows
                same(ptocpu.add(ptocpu.asarray(big_a), ptocpu.asarray(big_b)), np.tile(total, (12, 1)))
    finally:
        ptocpu._core._set_kernel_tuning()
        ptocpu.set_num_threads(previous)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_rows_fused_in_registers_give_one_rounding_from_fp32(dtype):
    """fp16 / bf16 rows whose inputs have the row's dtype or are broadcast along the row are widened,
    computed and narrowed 16 lanes at a time on AVX-512 and AVX2 (docs/kernels.md#fused-half-rows),
    on the baseline through fp32 buffers: the same bits as fp32 arithmetic rounded once
    either way, streamed or not, for tails shorter than a register, a column broadcast (stride 0 along
    the row), a row broadcast, scalars, in place (axpy_, atomic_add), NaN, inf, overflow, subnormal
    inputs and results (bf16's rounding is integer arithmetic in the lanes), ties and NaN on both sides of
    maximum and clip."""
    rng = np.random.default_rng(31)
    f32 = np.float32
    shape = (9, 1001)  # 1001 = 62 * 16 + 9: the last lanes of every row go the buffered way
    a = rng.uniform(-300, 300, shape).astype(dtype)
    b = rng.uniform(-300, 300, shape).astype(dtype)
    a[0, :4] = [np.nan, np.inf, -np.inf, 60000 if dtype is np.float16 else 3e38]
    b[0, :4] = [1, -np.inf, 1, 60000 if dtype is np.float16 else 3e38]  # inf - inf, overflow
    b[1, 5:40] = 0  # 0 / 0, x / 0
    tiny = np.finfo(dtype).smallest_subnormal
    a[2, :6] = [3 * tiny, -5 * tiny, 7 * tiny, np.nan, 2.5, -0.0]  # subnormals; NaN and a tie on the right
    b[2, :6] = [2 * tiny, tiny, -7 * tiny, 1, 2.5, 0.0]
    b[3, :2] = [np.nan, -np.nan]  # NaN as maximum's second operand
    col = rng.uniform(-4, 4, (9, 1)).astype(dtype)
    row = rng.uniform(-4, 4, (1, 1001)).astype(dtype)
    # the references meet inf - inf, 0 / 0 and overflow on purpose
    with np.errstate(all="ignore"):
        cases = [
            (lambda: ptocpu.add(a, b), a.astype(f32) + b.astype(f32)),
            (lambda: ptocpu.sub(a, col), a.astype(f32) - col.astype(f32)),
            (lambda: ptocpu.mul(row, a), row.astype(f32) * a.astype(f32)),
            (lambda: ptocpu.div(a, b), a.astype(f32) / b.astype(f32)),
            (lambda: ptocpu.maximum(a, b), np.maximum(a.astype(f32), b.astype(f32))),
            (lambda: ptocpu.mul(a, 0.1), a.astype(f32) * f32(0.1)),  # an fp32 scalar, not rounded to the dtype
            (lambda: ptocpu.clip(a, -100.5, 200.25), np.minimum(np.maximum(a.astype(f32), f32(-100.5)), f32(200.25))),
            (lambda: ptocpu.abs(a), np.abs(a.astype(f32))),
            (lambda: ptocpu.clip(a, b, col), np.minimum(np.maximum(a.astype(f32), b.astype(f32)), col.astype(f32))),
        ]
    previous = ptocpu.get_num_threads()
    try:
        with np.errstate(all="ignore"):
            # 0: every output streamed from a stage; 16000: the [9, 1001] output streamed but its rows,
            # which begin and end inside cache lines, stored (under twice the threshold)
            for isa, stream_bytes in (("avx512", -1), ("avx512", 0), ("avx512", 16000), ("avx2", -1), ("avx2", 0),
                                      ("baseline", -1)):
                ptocpu._core._set_kernel_tuning(stream_bytes, isa=isa)
                for threads in (1, 2):
                    ptocpu.set_num_threads(threads)
                    for run, exact in cases:
                        same(run(), exact.astype(dtype))
                    y = b.copy()
                    ptocpu.axpy_(y, a, 0.3)  # y += 0.3 * a, two fp32 roundings, one to the dtype
                    same(y, (b.astype(f32) + f32(0.3) * a.astype(f32)).astype(dtype))
                    target = np.repeat(b, 2, axis=1)
                    ptocpu.atomic_add(a, [0, 500], target)  # in place into a block of wider rows
                    want = np.repeat(b, 2, axis=1)
                    want[:, 500:1501] = (want[:, 500:1501].astype(f32) + a.astype(f32)).astype(dtype)
                    same(target, want)
    finally:
        ptocpu._core._set_kernel_tuning()
        ptocpu.set_num_threads(previous)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.float16, ml_dtypes.bfloat16, np.float32, np.int64, np.float64])
@pytest.mark.parametrize("n", [1, 3, 5, 8, 12, 33, 64])
def test_short_rows_go_in_batches(dtype, n):
    """Rows of up to 64 elements are worked many to a block (docs/kernels.md#elementwise): a padded
    operand's rows one by one, a contiguous operand's as one run; runs of rows cross the outer dims
    (shape [5, 7, n]); a strided target (atomic_add into a block of wider rows) is written row by row.
    Byte lengths of every size class hit the short copies' tails. Rows whose operands are all stored
    as the compute type are worked where they are, no copies (functors with and without a block form)."""
    rng = np.random.default_rng(n)
    shape = (5, 7, n)
    wide = lambda: rng.integers(-50, 50, (5, 7, n + 5)).astype(dtype)
    a_full, b, row = wide(), rng.integers(-50, 50, shape).astype(dtype), rng.integers(-50, 50, (1, 1, n)).astype(dtype)
    a = a_full[..., :n]  # padded rows
    exact = np.float32 if np.dtype(dtype).kind == "f" or dtype is ml_dtypes.bfloat16 else np.int64
    want = (a.astype(exact) + b.astype(exact)).astype(dtype)  # small integers: exact, one rounding
    divisor = np.where(b == 0, 7, b).astype(dtype)
    previous = ptocpu.get_num_threads()
    try:
        for tuning in (0, None):  # streamed (threshold 0) and the default
            ptocpu._core._set_kernel_tuning(*([] if tuning is None else [tuning]))
            for threads in (1, 2):
                ptocpu.set_num_threads(threads)
                same(ptocpu.add(ptocpu.asarray(a), ptocpu.asarray(b)), want)
                same(ptocpu.add(ptocpu.asarray(b), ptocpu.asarray(a)), want)
                same(ptocpu.maximum(ptocpu.asarray(a), ptocpu.asarray(row)), np.maximum(a, row))  # a row broadcast
                same(ptocpu.lt(ptocpu.asarray(a), ptocpu.asarray(b)), a < b)  # a bool output
                if exact is np.float32:  # a functor with a block form (exact: fmod's result is representable)
                    same(ptocpu.fmod(ptocpu.asarray(a), ptocpu.asarray(divisor)),
                         np.fmod(a.astype(np.float32), divisor.astype(np.float32)).astype(dtype))
                elif np.dtype(dtype).kind == "i":
                    same(ptocpu.gcd(ptocpu.asarray(a), ptocpu.asarray(divisor)), np.gcd(a, divisor))
                target = a_full.copy()
                ptocpu.atomic_add(b, [0, 0, 2], target)  # rows of n into rows of n + 5
                expect = a_full.copy()
                expect[..., 2:2 + n] = (a_full[..., 2:2 + n].astype(exact) + b.astype(exact)).astype(dtype)
                same(target, expect)
    finally:
        ptocpu._core._set_kernel_tuning()
        ptocpu.set_num_threads(previous)
