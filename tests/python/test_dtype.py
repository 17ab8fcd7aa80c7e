"""docs/dtypes.md: the 16 dtypes, how Python names them, and the bit-exact float conversions.

Decoding is checked for every code of every small float, encoding for a dense float32 sweep
plus every rounding boundary; references are numpy / ml_dtypes (and, where ml_dtypes itself
rounds twice, an exact nearest-even reference computed here).
"""
from __future__ import annotations

import bisect

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu

# (ptocpu dtype, numpy / ml_dtypes type, unsigned type of the same width, canonical name)
MINIFLOATS = [
    (ptocpu.DT_FP16, np.float16, np.uint16, "float16"),
    (ptocpu.DT_BF16, ml_dtypes.bfloat16, np.uint16, "bfloat16"),
    (ptocpu.DT_FP8E4M3, ml_dtypes.float8_e4m3fn, np.uint8, "float8_e4m3fn"),
    (ptocpu.DT_FP8E5M2, ml_dtypes.float8_e5m2, np.uint8, "float8_e5m2"),
    (ptocpu.DT_FP8E8M0, ml_dtypes.float8_e8m0fnu, np.uint8, "float8_e8m0fnu"),
]
MINIFLOAT_IDS = [m[3] for m in MINIFLOATS]

# Every dtype of docs/dtypes.md with its numpy / ml_dtypes and torch counterparts.
ALL_DTYPES = [
    ("DT_INT8", np.int8, torch.int8, 1),
    ("DT_INT16", np.int16, torch.int16, 2),
    ("DT_INT32", np.int32, torch.int32, 4),
    ("DT_INT64", np.int64, torch.int64, 8),
    ("DT_UINT8", np.uint8, torch.uint8, 1),
    ("DT_UINT16", np.uint16, torch.uint16, 2),
    ("DT_UINT32", np.uint32, torch.uint32, 4),
    ("DT_UINT64", np.uint64, torch.uint64, 8),
    ("DT_BOOL", np.bool_, torch.bool, 1),
    ("DT_FP16", np.float16, torch.float16, 2),
    ("DT_BF16", ml_dtypes.bfloat16, torch.bfloat16, 2),
    ("DT_FP32", np.float32, torch.float32, 4),
    ("DT_FP64", np.float64, torch.float64, 8),
    ("DT_FP8E4M3", ml_dtypes.float8_e4m3fn, torch.float8_e4m3fn, 1),
    ("DT_FP8E5M2", ml_dtypes.float8_e5m2, torch.float8_e5m2, 1),
    ("DT_FP8E8M0", ml_dtypes.float8_e8m0fnu, torch.float8_e8m0fnu, 1),
]
ALL_IDS = [d[0] for d in ALL_DTYPES]


# ------------------------------------------------------------------------------------ helpers
def all_codes(ml, ut) -> np.ndarray:
    return np.arange(1 << (8 * np.dtype(ut).itemsize), dtype=np.uint64).astype(ut).view(ml)


def assert_same_floats(got: np.ndarray, expected: np.ndarray, inputs: np.ndarray) -> None:
    """Bit-exact equality of two float arrays, except that any NaN equals any NaN."""
    assert got.dtype == expected.dtype and got.shape == expected.shape
    with np.errstate(invalid="ignore"):
        g = got.astype(np.float64)
        e = expected.astype(np.float64)
    uint = np.dtype(f"u{got.dtype.itemsize}")
    same = np.where(np.isnan(e), np.isnan(g), got.view(uint) == expected.view(uint))
    if not same.all():
        bad = np.flatnonzero(~same)[:8]
        rows = [f"input {inputs.reshape(-1)[i]!r} ({_bits(inputs.reshape(-1)[i:i + 1])}): got "
                f"{_bits(got.reshape(-1)[i:i + 1])} expected {_bits(expected.reshape(-1)[i:i + 1])}"
                for i in bad]
        pytest.fail(f"{(~same).sum()} of {same.size} values differ:\n" + "\n".join(rows))


def _bits(a: np.ndarray) -> str:
    return hex(int(a.view(np.dtype(f"u{a.dtype.itemsize}"))[0]))


def float32_sweep() -> np.ndarray:
    """Every 4099th float32 bit pattern: ~2000 values in each binade of both signs, NaNs too."""
    return np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)


def float32_specials() -> np.ndarray:
    bits = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
            0x7FBFFFFF, 0x7FC00001, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
            0x00400000, 0x00400001, 0x003FFFFF, 0x00C00000, 0x7F7FFFFF, 0xFF7FFFFF]
    powers = [np.float32(2.0) ** k for k in range(-149, 128)]
    return np.concatenate([np.array(bits, dtype=np.uint32).view(np.float32),
                           np.array(powers, dtype=np.float32)])


def neighbours32(v: np.ndarray) -> np.ndarray:
    """v and the adjacent float32 values on both sides."""
    v = v.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.concatenate([v, np.nextafter(v, np.float32(np.inf)), np.nextafter(v, np.float32(-np.inf))])


def minifloat_boundaries(ml) -> np.ndarray:
    """Every value of the format, every halfway point between adjacent values (ties), the
    overflow threshold, each with its float32 neighbours, both signs."""
    with np.errstate(over="ignore", invalid="ignore"):
        values = all_codes(ml, np.uint8 if np.dtype(ml).itemsize == 1 else np.uint16).astype(np.float64)
    pos = np.unique(np.abs(values[np.isfinite(values)]))
    pos = np.unique(np.concatenate([[0.0], pos]))
    mids = (pos[:-1] + pos[1:]) / 2
    top_ulp = pos[-1] - pos[-2]
    beyond = np.array([pos[-1] + top_ulp / 2, pos[-1] + top_ulp, pos[-1] * 1.5, pos[-1] * 2])
    beyond = beyond[beyond <= np.finfo(np.float32).max]  # bf16 reaches the top of float32
    exact = np.concatenate([pos, mids, beyond])
    assert (exact.astype(np.float32).astype(np.float64) == exact).all(), "boundaries must be float32-exact"
    v = neighbours32(exact)
    return np.concatenate([v, -v])


def nearest_even_reference(x: np.ndarray, ml) -> np.ndarray:
    """Exact round-to-nearest-even of float64 values to a signed small float (not E8M0), for
    the places where ml_dtypes goes through float32 and so rounds twice. Comparisons of float64
    values with the format's (float64-exact) values and halfway points are exact."""
    ut = np.uint8 if np.dtype(ml).itemsize == 1 else np.uint16
    codes = all_codes(ml, ut)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = codes.astype(np.float64)
    sign_bit = 1 << (8 * np.dtype(ut).itemsize - 1)
    positive = (codes.view(ut) < sign_bit) & np.isfinite(vals)
    pos_codes = codes.view(ut)[positive].astype(np.int64)
    pos_vals = vals[positive]
    order = np.argsort(pos_vals, kind="stable")
    pos_codes, pos_vals = pos_codes[order], pos_vals[order]
    # The code beyond the largest finite value stands for overflow.
    top_ulp = pos_vals[-1] - pos_vals[-2]
    overflow_code = int(pos_codes[-1]) + 1
    pos_vals = np.append(pos_vals, pos_vals[-1] + top_ulp)
    pos_codes = np.append(pos_codes, overflow_code)
    with np.errstate(over="ignore", invalid="ignore"):
        overflow_value = np.array([np.inf], dtype=np.float32).astype(ml).view(ut)[0] & (sign_bit - 1)
    a = np.abs(x)
    hi = np.clip(np.searchsorted(pos_vals, a, side="left"), 1, len(pos_vals) - 1)
    lo = hi - 1
    exact_lo = pos_vals[lo] == a
    mid = (pos_vals[lo] + pos_vals[hi]) / 2
    pick_hi = (a > mid) | ((a == mid) & (pos_codes[hi] % 2 == 0))
    code = np.where(exact_lo, pos_codes[lo], np.where(pick_hi, pos_codes[hi], pos_codes[lo]))
    code = np.where((code == overflow_code) | (a > pos_vals[-1]), overflow_value, code)
    code = np.where(np.isnan(x), np.array([np.nan], np.float32).astype(ml).view(ut)[0] & (sign_bit - 1), code)
    code = code | np.where(np.signbit(x), sign_bit, 0)
    return code.astype(ut)


def exact_round_int(v: int, ml) -> int:
    """Round-to-nearest-even of a Python int to a signed small float (not E8M0), exactly:
    Python compares ints with the format's (float64-exact) values and halfway points exactly."""
    ut = np.uint8 if np.dtype(ml).itemsize == 1 else np.uint16
    sign_bit = 1 << (8 * np.dtype(ut).itemsize - 1)
    codes = all_codes(ml, ut)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = codes.astype(np.float64)
        overflow = int(np.array([np.inf], np.float32).astype(ml).view(ut)[0]) & (sign_bit - 1)
    keep = (codes.view(ut) < sign_bit) & np.isfinite(vals)
    order = np.argsort(vals[keep])
    pos_vals = vals[keep][order].tolist()
    pos_codes = codes.view(ut)[keep][order].tolist()
    a = abs(v)
    limit = pos_vals[-1] + (pos_vals[-1] - pos_vals[-2]) / 2
    if a > limit or (a == limit and pos_codes[-1] % 2 == 1):
        code = overflow
    else:
        hi = min(bisect.bisect_left(pos_vals, a), len(pos_vals) - 1)
        lo = max(hi - 1, 0)
        if pos_vals[hi] == a:
            code = pos_codes[hi]
        else:
            mid = (pos_vals[lo] + pos_vals[hi]) / 2
            code = pos_codes[hi] if a > mid or (a == mid and pos_codes[hi] % 2 == 0) else pos_codes[lo]
    return code | (sign_bit if v < 0 else 0)


# ------------------------------------------------------------------------- decode all codes
@pytest.mark.parametrize("dt,ml,ut,name", MINIFLOATS, ids=MINIFLOAT_IDS)
def test_decode_every_code_to_float32(dt, ml, ut, name):
    codes = all_codes(ml, ut)
    t = ptocpu.from_numpy(codes)
    assert t.dtype == dt
    got = t.astype("float32").numpy()
    with np.errstate(invalid="ignore"):
        expected = codes.astype(np.float32)
    assert_same_floats(got, expected, codes.view(ut))


@pytest.mark.parametrize("dt,ml,ut,name", MINIFLOATS, ids=MINIFLOAT_IDS)
def test_decode_every_code_to_float64(dt, ml, ut, name):
    codes = all_codes(ml, ut)
    got = ptocpu.from_numpy(codes).astype(ptocpu.DT_FP64).numpy()
    with np.errstate(invalid="ignore"):
        expected = codes.astype(np.float64)
    assert_same_floats(got, expected, codes.view(ut))


@pytest.mark.parametrize("dt,ml,ut,name", MINIFLOATS, ids=MINIFLOAT_IDS)
def test_decode_from_a_strided_view(dt, ml, ut, name):
    """astype reads non-contiguous (reversed, stepped, 2-d transposed) inputs correctly."""
    codes = all_codes(ml, ut)[: 1 << 8].reshape(16, 16)
    view = codes.T[::-1, ::2]
    with np.errstate(invalid="ignore"):
        expected = view.astype(np.float32)
    got = ptocpu.from_numpy(view).astype("float32").numpy()
    assert_same_floats(got, expected, np.ascontiguousarray(view).view(ut))


# ------------------------------------------------------------------ encode float32 -> small
@pytest.mark.parametrize("dt,ml,ut,name", MINIFLOATS, ids=MINIFLOAT_IDS)
def test_encode_dense_float32_sweep(dt, ml, ut, name):
    x = float32_sweep()
    got = ptocpu.from_numpy(x).astype(name).numpy()
    with np.errstate(over="ignore", invalid="ignore"):
        expected = x.astype(ml)
    assert got.dtype == np.dtype(ml)
    assert_same_floats(got, expected, x)


@pytest.mark.parametrize("dt,ml,ut,name", MINIFLOATS, ids=MINIFLOAT_IDS)
def test_encode_boundaries_ties_overflow_and_specials(dt, ml, ut, name):
    x = np.concatenate([minifloat_boundaries(ml), neighbours32(float32_specials())])
    got = ptocpu.from_numpy(x).astype(dt).numpy()
    with np.errstate(over="ignore", invalid="ignore"):
        expected = x.astype(ml)
    assert_same_floats(got, expected, x)


def test_encode_documented_overflow_and_nan():
    """docs/dtypes.md: overflow follows ml_dtypes (E4M3FN -> NaN, E5M2 -> inf); NaN stays NaN."""
    x = np.array([448.0, 464.0, 465.0, 1e6, -1e6, np.inf, np.nan], dtype=np.float32)
    e4 = ptocpu.from_numpy(x).astype("fp8e4m3").numpy().astype(np.float32)
    assert e4[0] == 448 and e4[1] == 448  # 464 is the tie between 448 and the first overflow
    assert np.isnan(e4[2:]).all()
    e5 = ptocpu.from_numpy(x).astype("fp8e5m2").numpy().astype(np.float32)
    assert e5[:3].tolist() == [448.0, 448.0, 448.0]
    assert e5[3] == np.inf and e5[4] == -np.inf and e5[5] == np.inf and np.isnan(e5[6])
    f16 = ptocpu.from_numpy(np.array([65504, 65519.99, 65520, np.nan], np.float32)).astype("fp16").numpy()
    assert f16[:2].tolist() == [65504.0, 65504.0] and f16[2] == np.inf and np.isnan(f16[3])


def test_encode_from_strided_float32_view():
    x = float32_sweep()[: 64 * 64].reshape(64, 64)
    view = x[::-3, 1::2].T
    for dt, ml, ut, name in MINIFLOATS:
        got = ptocpu.from_numpy(view).astype(dt).numpy()
        with np.errstate(over="ignore", invalid="ignore"):
            expected = view.astype(ml)
        assert_same_floats(got, expected, np.ascontiguousarray(view))


# -------------------------------------------------------- float64 -> small: one rounding only
@pytest.mark.parametrize("dt,ml,ut,name", [m for m in MINIFLOATS if m[0] != ptocpu.DT_FP8E8M0],
                         ids=[m[3] for m in MINIFLOATS if m[0] != ptocpu.DT_FP8E8M0])
def test_float64_rounds_once_to_nearest_even(dt, ml, ut, name):
    """float64 values just above / below every tie (by far less than a float32 ulp) must round
    away from the tie: a float64 -> float32 -> small chain would round them to the tie first."""
    rng = np.random.default_rng(1)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.unique(np.abs(all_codes(ml, ut).astype(np.float64)))
    vals = vals[np.isfinite(vals)]
    top_ulp = vals[-1] - vals[-2]
    mids = np.concatenate([(vals[:-1] + vals[1:]) / 2, [vals[-1] + top_ulp / 2]])
    if len(mids) > 3000:
        mids = np.concatenate([mids[:500], mids[-500:], rng.choice(mids, 2000, replace=False)])
    nudged = np.concatenate([mids, mids * (1 + 2.0 ** -40), mids * (1 - 2.0 ** -40),
                             np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])
    randoms = rng.standard_normal(4000) * 2.0 ** rng.integers(-30, 30, 4000)
    x = np.concatenate([nudged, -nudged, randoms, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 1e-300]])
    got = ptocpu.from_numpy(x).astype(dt).numpy().view(ut)
    expected = nearest_even_reference(x, ml)
    nan = np.isnan(x)
    assert np.isnan(ptocpu.from_numpy(x[nan]).astype(dt).numpy().astype(np.float32)).all()
    bad = np.flatnonzero(got[~nan] != expected[~nan])
    assert bad.size == 0, [(float(x[~nan][i]), hex(got[~nan][i]), hex(expected[~nan][i])) for i in bad[:8]]


def test_float64_to_fp16_matches_numpy():
    """numpy converts float64 -> float16 directly (one rounding), so it is a reference here."""
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(20000) * 2.0 ** rng.integers(-26, 17, 20000),
                        (np.arange(-70000, 70000, 0.5) * (1 + 2.0 ** -35))])
    got = ptocpu.from_numpy(x).astype("fp16").numpy()
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)
    assert_same_floats(got, expected, x)


def test_float64_to_fp8e8m0_matches_ml_dtypes_on_float32_values():
    with np.errstate(invalid="ignore"):
        x = np.concatenate([float32_sweep()[::7], minifloat_boundaries(ml_dtypes.float8_e8m0fnu)]).astype(np.float64)
    got = ptocpu.from_numpy(x).astype("fp8e8m0").numpy()
    with np.errstate(over="ignore", invalid="ignore"):
        expected = x.astype(np.float32).astype(ml_dtypes.float8_e8m0fnu)
    assert_same_floats(got, expected, x)


def test_float32_to_float64_and_back():
    x = float32_sweep()
    wide = ptocpu.from_numpy(x).astype("float64").numpy()
    with np.errstate(invalid="ignore"):
        assert_same_floats(wide, x.astype(np.float64), x)
    narrow = ptocpu.from_numpy(wide).astype("float32").numpy()
    assert_same_floats(narrow, x, x)
    y = np.random.default_rng(3).standard_normal(10000) * 1e30
    assert_same_floats(ptocpu.from_numpy(y).astype("float32").numpy(), y.astype(np.float32), y)


# ---------------------------------------------------------------- integers <-> floats, bool
INT_EDGE = [0, 1, -1, 2 ** 24 + 1, 2 ** 31 - 1, -2 ** 31, 2 ** 53 + 1, 2 ** 60 + 2 ** 36 + 1,
            2 ** 60 + 2 ** 36, 2 ** 60 + 2 ** 36 - 1, -(2 ** 60 + 2 ** 36 + 1), 2 ** 63 - 1, -2 ** 63,
            2 ** 62 + 2 ** 38 + 2 ** 37 + 1, 123456789012345678]


@pytest.mark.parametrize("src", [np.int64, np.int32, np.uint64, np.uint32, np.int8, np.uint16])
@pytest.mark.parametrize("dst", [np.float32, np.float64, np.float16])
def test_integer_to_float_matches_numpy(src, dst):
    info = np.iinfo(src)
    vals = [v for v in INT_EDGE + [info.min, info.max, info.max - 1, info.max // 3] if info.min <= v <= info.max]
    rng = np.random.default_rng(4)
    randoms = rng.integers(info.min, info.max, 5000, dtype=src, endpoint=True)
    x = np.concatenate([np.array(vals, dtype=src), randoms])
    got = ptocpu.from_numpy(x).astype(dst).numpy()
    with np.errstate(over="ignore"):
        expected = x.astype(dst)
    assert_same_floats(got, expected, x)


@pytest.mark.parametrize("dt,ml,ut,name", [m for m in MINIFLOATS if m[0] in (ptocpu.DT_BF16, ptocpu.DT_FP8E4M3, ptocpu.DT_FP8E5M2)],
                         ids=["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_integer_to_small_float_rounds_once(dt, ml, ut, name):
    """int64 -> bf16 / fp8 rounds the exact integer once to nearest even."""
    vals = [0, 1, -1, 3, 7, 9, 17, 255, 257, 263, 448, 464, 465, 479, 480, 57344, 61439, 61440,
            2 ** 60 + 2 ** 52, 2 ** 60 + 2 ** 52 + 1, 2 ** 60 + 2 ** 52 - 1, -(2 ** 60 + 2 ** 52 + 1),
            2 ** 40 + 2 ** 32 + 1, 2 ** 63 - 1, -2 ** 63]
    x = np.array(vals, dtype=np.int64)
    got = ptocpu.from_numpy(x).astype(dt).numpy().view(ut)
    expected = [exact_round_int(v, ml) for v in vals]
    assert got.tolist() == expected, [(v, hex(g), hex(e)) for v, g, e in zip(vals, got.tolist(), expected) if g != e]


@pytest.mark.parametrize("src", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64,
                                 ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2])
@pytest.mark.parametrize("dst", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32])
def test_float_to_integer_truncates_toward_zero(src, dst):
    info = np.iinfo(dst)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(3000) * min(float(info.max), float(ml_dtypes.finfo(src).max)) / 3)
    with np.errstate(over="ignore"):  # float16 overflows to inf: filtered out below
        x = np.concatenate([x, [0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, -2.5, 0.0, -0.0]]).astype(src)
    xf = x.astype(np.float64)
    in_range = (xf > info.min - 1) & (xf < info.max + 1)
    x = x[in_range]
    got = ptocpu.from_numpy(x).astype(dst).numpy()
    assert got.dtype == np.dtype(dst)
    np.testing.assert_array_equal(got, np.trunc(x.astype(np.float64)).astype(dst))


def test_float_to_integer_saturates_and_nan_is_zero():
    x = np.array([1e10, -1e10, np.inf, -np.inf, np.nan, 300.0, -300.0, 2.0 ** 70], dtype=np.float64)
    got = ptocpu.from_numpy(x).astype("int8").numpy().tolist()
    assert got == [127, -128, 127, -128, 0, 127, -128, 127]
    got = ptocpu.from_numpy(x).astype("uint16").numpy().tolist()
    assert got == [65535, 0, 65535, 0, 0, 300, 0, 65535]
    got = ptocpu.from_numpy(x).astype("int64").numpy().tolist()
    assert got == [10 ** 10, -10 ** 10, 2 ** 63 - 1, -2 ** 63, 0, 300, -300, 2 ** 63 - 1]


def test_bool_conversions_match_numpy():
    x = np.array([0.0, -0.0, 1.0, 0.5, -2.0, np.inf, np.nan, 1e-45], dtype=np.float32)
    np.testing.assert_array_equal(ptocpu.from_numpy(x).astype("bool").numpy(), x.astype(np.bool_))
    b = np.array([True, False, True])
    for dst in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64, ml_dtypes.float8_e5m2):
        got = ptocpu.from_numpy(b).astype(dst).numpy()
        assert got.dtype == np.dtype(dst)
        assert got.astype(np.float64).tolist() == [1.0, 0.0, 1.0]


def test_integer_to_integer_astype_is_a_dtype_error():
    t = ptocpu.tensor([3], "int32")
    with pytest.raises(ptocpu.DTypeError, match=r"DT_INT32.*DT_INT8") as e:
        t.astype("int8")
    assert isinstance(e.value, TypeError)
    with pytest.raises(ptocpu.DTypeError, match=r"DT_BOOL.*DT_UINT64"):
        ptocpu.tensor([3], "bool").astype("uint64")


def test_astype_returns_a_new_contiguous_tensor():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    src = ptocpu.from_numpy(a)
    out = src[:, ::-1].astype("float16")
    assert out.shape == (3, 4) and out.is_contiguous() and out.dtype == ptocpu.DT_FP16
    np.testing.assert_array_equal(out.numpy(), a[:, ::-1].astype(np.float16))
    out[...] = 0.0
    assert a.sum() == 66  # the source is untouched


# ------------------------------------------------------------------------- naming dtypes
@pytest.mark.parametrize("name,npt,tt,size", ALL_DTYPES, ids=ALL_IDS)
def test_every_spelling_of_a_dtype(name, npt, tt, size):
    const = getattr(ptocpu, name)
    assert isinstance(const, ptocpu.DType)
    assert const.name == name
    for spelling in (const, npt, np.dtype(npt), tt, name, name[3:], np.dtype(npt).name):
        assert ptocpu.dtype(spelling) == const, spelling
    assert ptocpu._core.dtype_from_name(name) == const
    assert ptocpu.itemsize(const) == size == np.dtype(npt).itemsize
    assert ptocpu.itemsize(tt) == size
    assert ptocpu.numpy_dtype(const) == np.dtype(npt)
    # Wherever a dtype is asked for, every spelling works.
    for spelling in (const, npt, tt, np.dtype(npt).name):
        t = ptocpu.tensor([2], spelling)
        assert t.dtype == const and t.itemsize == size
        assert ptocpu.Tensor([1, 2], spelling).dtype == const


def test_constants_are_sixteen_distinct_dtypes():
    consts = [getattr(ptocpu, d[0]) for d in ALL_DTYPES]
    assert len(set(consts)) == 16
    assert set(ptocpu.DType.__members__) == {d[0] for d in ALL_DTYPES}


@pytest.mark.parametrize("spelling,expected", [
    ("half", "DT_FP16"), ("fp16", "DT_FP16"), ("bf16", "DT_BF16"), ("fp32", "DT_FP32"),
    ("double", "DT_FP64"), ("fp64", "DT_FP64"), ("bool", "DT_BOOL"), ("e4m3", "DT_FP8E4M3"),
    ("fp8e4m3", "DT_FP8E4M3"), ("e5m2", "DT_FP8E5M2"), ("fp8e5m2", "DT_FP8E5M2"),
    ("e8m0", "DT_FP8E8M0"), ("fp8e8m0", "DT_FP8E8M0"), ("float8_e8m0fnu", "DT_FP8E8M0"),
    ("uint8", "DT_UINT8"), ("int16", "DT_INT16"),
])
def test_short_names(spelling, expected):
    assert ptocpu.dtype(spelling) == getattr(ptocpu, expected)


def test_python_types_follow_numpy():
    assert ptocpu.dtype(float) == ptocpu.DT_FP64
    assert ptocpu.dtype(bool) == ptocpu.DT_BOOL
    assert ptocpu.dtype(int) == ptocpu.dtype(np.dtype(int))
    assert ptocpu.dtype(torch.half) == ptocpu.DT_FP16
    assert ptocpu.dtype(torch.double) == ptocpu.DT_FP64
    assert ptocpu.dtype(torch.long) == ptocpu.DT_INT64


@pytest.mark.parametrize("bad", ["float7", "DT_FP128", "bfloat", "", "INT9"])
def test_unknown_name_is_an_argument_error_naming_it(bad):
    with pytest.raises(ptocpu.ArgumentError) as e:
        ptocpu.dtype(bad)
    assert isinstance(e.value, ValueError) and isinstance(e.value, ptocpu.Error)
    assert f"'{bad}'" in str(e.value)
    assert "DT_FP32" in str(e.value) and "DT_FP8E8M0" in str(e.value)  # lists what is accepted
    with pytest.raises(ptocpu.ArgumentError, match=f"'{bad}'"):
        ptocpu.tensor([2], bad)
    with pytest.raises(ptocpu.ArgumentError, match=f"'{bad}'"):
        ptocpu.tensor([2], "float32").astype(bad)


@pytest.mark.parametrize("bad,shown", [(np.complex64, "complex64"), (np.dtype("U3"), "<U3"),
                                       (np.object_, "object"), (torch.complex64, "complex64"),
                                       (torch.qint8, "qint8")])
def test_dtype_without_a_ptocpu_counterpart_is_a_dtype_error(bad, shown):
    with pytest.raises(ptocpu.DTypeError) as e:
        ptocpu.dtype(bad)
    assert isinstance(e.value, TypeError)
    assert shown in str(e.value)


@pytest.mark.parametrize("bad", [3.5, None, [1, 2], object()])
def test_non_dtype_objects_are_a_dtype_error(bad):
    with pytest.raises(ptocpu.DTypeError) as e:
        ptocpu.dtype(bad)
    assert repr(bad)[:20] in str(e.value)
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.tensor([2], bad)
