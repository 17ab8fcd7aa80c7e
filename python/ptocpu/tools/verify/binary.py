"""verify's cases of the binary family (floor_div ... where; docs/ops/<op>.md): every dtype of every
platform, same-shape / broadcast / strided operands, scalars, special values and the error rules,
against references written from the pages' formulas -- float64 (rounded to fp32, as the device
computes, then once to the output dtype) or the integer values themselves, exact. Exact ops are
compared bit for bit; pow, atan2 and hypot within the ulps their pages state.

Each op registers once, with `binary(op, reference, ...)`: reference(platform, dtype, *operands)
gets numpy arrays in their storage dtypes (or Python numbers for scalar operands) and returns the
expected array in the output dtype.
"""
from __future__ import annotations

import math
from typing import Callable, Iterator, Optional, Sequence

import numpy as np

import ptocpu

from .common import PLATFORMS, Case, _compare, _expect_error, _libm, _platform_dtypes, _random, cases_for
from .elementwise import _is_float, _np

# ---------------------------------------------------------------- helpers of the references

F32 = np.dtype(np.float32)


def wide(a) -> np.ndarray:
    """float64 values of an array of any float dtype (ml_dtypes' included) or of a number."""
    return np.asarray(a).astype(np.float64)


def device(dtype: str, v) -> np.ndarray:
    """A float64 result as the device stores it: rounded to fp32 (its compute type), then once to the
    dtype; fp64 (cpu only) as is."""
    v = np.asarray(v, dtype=np.float64)
    return v if dtype == "DT_FP64" else v.astype(F32).astype(_np(dtype))


def integers(a) -> np.ndarray:
    """Exact integer values (Python ints in an object array: no overflow, no wrapping)."""
    return np.asarray(a).astype(object)


def wrapped(values, dtype: str) -> np.ndarray:
    """Python ints as the dtype holds them (two's complement)."""
    npdt = _np(dtype)
    bits = 8 * npdt.itemsize
    out = [(int(v) % (1 << bits)) for v in np.ravel(values)]
    signed = npdt.kind == "i"
    out = [v - (1 << bits) if signed and v >= 1 << (bits - 1) else v for v in out]
    return np.asarray(out, dtype=npdt).reshape(np.shape(values))


def limits(dtype: str) -> tuple[int, int]:
    info = np.iinfo(_np(dtype))
    return int(info.min), int(info.max)


def scalar_rounded(dtype: str, value: float, native: bool) -> float:
    """A float scalar as the op's instruction takes it: in the tensor's dtype where it runs natively,
    else an fp32 literal (fp64 for fp64)."""
    if dtype == "DT_FP64":
        return value
    return float(np.asarray(value).astype(_np(dtype) if native else F32).astype(np.float64))


def values(rng: np.random.Generator, shape, dtype: str, lo: float, hi: float, nonzero: bool = False,
           int_range: Optional[tuple] = None) -> np.ndarray:
    """Uniform floats in [lo, hi); integers over the dtype's range clipped to +-1000, or int_range."""
    npdt = _np(dtype)
    if npdt == np.bool_:
        return _random(rng, shape, dtype)
    if npdt.kind in "fV":
        v = rng.uniform(lo, hi, size=shape)
        if nonzero:
            v = np.where(np.abs(v) < 0.25, 0.25 + np.abs(v), v)
        return v.astype(npdt)
    if int_range is None:
        a = _random(rng, shape, dtype)
    else:
        info = np.iinfo(npdt)
        a = rng.integers(max(int_range[0], info.min), min(int_range[1], info.max), size=shape, endpoint=True).astype(npdt)
    if nonzero:
        a = np.where(a == 0, np.ones_like(a), a)
    return a


def strided(a: np.ndarray) -> np.ndarray:
    """The same values as a view with a gap after every element of the last dim."""
    return np.repeat(a, 2, axis=-1)[..., ::2]


def ulp_distance(got: np.ndarray, want: np.ndarray) -> int:
    """The largest distance in units in the last place of the dtype (values on one integer line)."""
    def line(a):
        bits = [int(v) for v in np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}").ravel()]
        sign = 1 << (8 * a.dtype.itemsize - 1)
        return [-(v & (sign - 1)) if v & sign else v for v in bits]
    return max((abs(g - w) for g, w in zip(line(got), line(want))), default=0)


def check(got, want: np.ndarray, ulps: int = 0):
    """Bit for bit (ulps 0) or within ulps; a NaN matches any NaN (payload and sign are not specified)."""
    got = np.asarray(got.numpy() if isinstance(got, ptocpu.Tensor) else got)
    if want.dtype.kind in "fV" and got.dtype == want.dtype and got.shape == want.shape:
        both = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
        got, want = got.copy(), want.copy()
        got[both] = want[both]
    if ulps == 0 or want.dtype.kind not in "fV" or got.shape != want.shape or got.dtype != want.dtype:
        return _compare([(got, want)])
    distance = ulp_distance(got, want)
    if distance > ulps:
        return False, f"{distance:g} ulps from the reference (allowed {ulps})", []
    return True, "", [(got, want)]


# ---------------------------------------------------------------- the generic generator

SHAPES = [((7,), (7,)), ((3, 5), (3, 5)), ((4, 1, 6), (1, 5, 6)), ((2, 3, 4, 5), (5,))]
SAME_RANK_SHAPES = [((7,), (7,)), ((3, 5), (3, 5)), ((4, 1, 6), (1, 5, 6)), ((2, 3, 4, 5), (2, 1, 4, 1))]


def binary(op: str, reference: Callable, *, domain=(-4.0, 4.0), other_domain=None, int_range=None,
           other_int_range=None, nonzero_other: bool = False, scalars: Sequence = (), scalar_first: Sequence = (),
           ulps=0, same_rank: bool = False, special: Optional[Callable[[], Iterator[tuple]]] = None,
           extra: Optional[Callable[[np.random.Generator, bool], Iterator[Case]]] = None,
           errors: Optional[Callable[[], Iterator[Case]]] = None) -> None:
    """Registers op's cases. ulps: an int, or a function of the dtype. scalars: scalar operands to
    try (per dtype: floats for float tensors, their int() for integer ones); scalar_first: scalars
    to try as the first operand. special(): (dtype, first, second, expected) rows checked bit for
    bit on the cpu platform; extra(rng, quick): more cases."""
    other_domain = other_domain or domain
    other_int_range = other_int_range or int_range
    allowed = (lambda d: ulps(d)) if callable(ulps) else (lambda d: ulps)

    def generate(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
        shapes = SAME_RANK_SHAPES if same_rank else SHAPES
        if quick:
            shapes = shapes[1:3]
        for platform in PLATFORMS:
            for dtype in _platform_dtypes(platform, op):
                for a_shape, b_shape in shapes:
                    if platform != "cpu" and max(len(a_shape), len(b_shape)) > 4:
                        continue

                    def run(platform=platform, dtype=dtype, a_shape=a_shape, b_shape=b_shape):
                        a = values(rng, a_shape, dtype, *domain, int_range=int_range)
                        b = values(rng, b_shape, dtype, *other_domain, nonzero=nonzero_other, int_range=other_int_range)
                        got = getattr(ptocpu, op)(strided(a), b)
                        return check(got, reference(platform, dtype, a, b), allowed(dtype))

                    yield Case(op, platform, dtype, f"{list(a_shape)} with {list(b_shape)}", run)
                for scalar in scalars:
                    value = scalar if _is_float(dtype) else (True if dtype == "DT_BOOL" else int(scalar))

                    def run_scalar(platform=platform, dtype=dtype, value=value):
                        a = values(rng, (4, 6), dtype, *domain, int_range=int_range)
                        return check(getattr(ptocpu, op)(a, value), reference(platform, dtype, a, value), allowed(dtype))

                    yield Case(op, platform, dtype, f"[4, 6] with scalar {value}", run_scalar)
                for scalar in scalar_first:
                    value = scalar if _is_float(dtype) else int(scalar)
                    if not _is_float(dtype) and value < 0 and _np(dtype).kind == "u":
                        continue

                    def run_first(platform=platform, dtype=dtype, value=value):
                        b = values(rng, (4, 6), dtype, *other_domain, nonzero=nonzero_other, int_range=other_int_range)
                        return check(getattr(ptocpu, op)(value, b), reference(platform, dtype, value, b), allowed(dtype))

                    yield Case(op, platform, dtype, f"scalar {value} with [4, 6]", run_first)
        if special:
            for dtype, first, second, want in special():
                def run_special(dtype=dtype, first=first, second=second, want=want):
                    npdt = _np(dtype)
                    a = first if np.isscalar(first) else np.asarray(first, npdt)
                    b = second if np.isscalar(second) else np.asarray(second, npdt)
                    return check(getattr(ptocpu, op)(a, b), np.asarray(want).astype(npdt))

                yield Case(op, "cpu", dtype, f"special values {first} with {second}", run_special)
        if extra:
            yield from extra(rng, quick)
        if errors:
            yield from errors()

    cases_for(op)(generate)


def error(op: str, dtype: str, what: str, call: Callable, exc: type, needle: str, platform: str = "cpu") -> Case:
    return Case(op, platform, dtype, f"error: {what}", lambda: _expect_error(call, exc, needle))


# ---------------------------------------------------------------- floor_div, ceil_div, remainder, fmod

# Where the device's instruction takes a float scalar in the tensor's own dtype (docs/ops/floor_div.md,
# docs/ops/fmod.md); the cpu platform follows the Ascend 950.
FLOOR_DIV_NATIVE = {"cpu": {"DT_FP16", "DT_BF16"}, "ascend950": {"DT_FP16", "DT_BF16"},
                    "atlas_a3": {"DT_FP16"}, "atlas_a2": {"DT_FP16"}}
FMOD_NATIVE = {"cpu": {"DT_FP16"}, "ascend950": {"DT_FP16"}, "atlas_a3": set(), "atlas_a2": set()}


def as_operand(platform: str, dtype: str, v, native: set):
    """A tensor operand's float64 / integer values, or a scalar as the instruction takes it."""
    if isinstance(v, np.ndarray):
        return wide(v) if _is_float(dtype) else integers(v)
    return scalar_rounded(dtype, float(v), dtype in native) if _is_float(dtype) else int(v)


def floor_div_reference(platform, dtype, a, b):
    x, y = as_operand(platform, dtype, a, FLOOR_DIV_NATIVE[platform]), as_operand(platform, dtype, b, FLOOR_DIV_NATIVE[platform])
    if _is_float(dtype):
        with np.errstate(all="ignore"):
            q = np.asarray(x) / np.asarray(y)
            if dtype != "DT_FP64":
                q = q.astype(F32).astype(np.float64)  # the device's fp32 quotient
            return device(dtype, np.floor(q))
    lo, hi = limits(dtype)
    sentinel = platform == "ascend950" and dtype == "DT_INT32"
    x, y = np.broadcast_arrays(np.asarray(x, dtype=object), np.asarray(y, dtype=object))

    def one(p, q):
        if q == 0:
            if sentinel:
                return 0x7FFF7F7F if p >= 0 else 0x80008080 - (1 << 32)
            return hi if p > 0 else (lo if p < 0 else 0)
        return p // q

    return wrapped(np.vectorize(one, otypes=[object])(x, y), dtype)


def ceil_div_reference(platform, dtype, a, b):
    lo, hi = limits(dtype)
    x, y = np.broadcast_arrays(integers(a), integers(np.asarray(b)))
    return wrapped(np.vectorize(lambda p, q: (hi if p > 0 else lo if p < 0 else 0) if q == 0 else -((-p) // q),
                                otypes=[object])(x, y), dtype)


def remainder_reference(platform, dtype, a, b):
    if _is_float(dtype):
        x, y = as_operand(platform, dtype, a, set()), as_operand(platform, dtype, b, set())
        with np.errstate(all="ignore"):
            r = np.remainder(np.asarray(x), np.asarray(y))  # fmod-based, exact in float64
        return device(dtype, np.where(r == 0, 0.0, r))  # the device's zero remainder is +0
    x, y = np.broadcast_arrays(np.asarray(as_operand(platform, dtype, a, set()), dtype=object),
                               np.asarray(as_operand(platform, dtype, b, set()), dtype=object))
    return wrapped(np.vectorize(lambda p, q: 0 if q == 0 else p % q, otypes=[object])(x, y), dtype)


def fmod_reference(platform, dtype, a, b):
    x, y = as_operand(platform, dtype, a, FMOD_NATIVE[platform]), as_operand(platform, dtype, b, FMOD_NATIVE[platform])
    with np.errstate(all="ignore"):
        return device(dtype, np.fmod(np.asarray(x), np.asarray(y)))


def _division_errors(op: str, float_scalar: bool = True) -> Callable[[], Iterator[Case]]:
    def errors():
        if float_scalar:
            yield error(op, "DT_INT32", "a float scalar with an integer tensor",
                        lambda: getattr(ptocpu, op)(np.ones(3, np.int32), 1.5), ptocpu.DTypeError, "is a float")
        yield error(op, "DT_INT32", "an integer scalar outside the dtype",
                    lambda: getattr(ptocpu, op)(np.ones(3, np.int32), 1 << 40), ptocpu.ArgumentError, "out of range")
        yield error(op, "DT_INT32", "tensors of different dtypes",
                    lambda: getattr(ptocpu, op)(np.ones(3, np.int32), np.ones(3, np.int16)), ptocpu.DTypeError, "must match")
        yield error(op, "DT_INT32", "shapes that do not broadcast",
                    lambda: getattr(ptocpu, op)(np.ones((2, 3), np.int32), np.ones(4, np.int32)), ptocpu.ArgumentError,
                    "do not broadcast")
    return errors


def _floor_div_special():
    yield "DT_INT32", [7, -7, 0, -2**31, 5, -5], [0, 0, 0, -1, 2, 2], [2**31 - 1, -2**31, 0, -2**31, 2, -3]
    yield "DT_INT8", [127, -128, 3], [0, 0, -2], [127, -128, -2]
    yield "DT_FP32", [1.0, -1.0, 0.0, -0.0, 7.0], [0.0, 0.0, 0.0, 3.0, -2.0], [np.inf, -np.inf, np.nan, -0.0, -4.0]


def _remainder_special():
    yield "DT_FP32", [6.0, -6.0, 1.0, -1.0, np.inf, 5.0], [-3.0, 3.0, np.inf, np.inf, 2.0, 0.0], \
        [0.0, 0.0, 1.0, np.inf, np.nan, np.nan]
    yield "DT_INT32", [7, -7, 7, -2**31, 5], [3, 3, 0, -1, -3], [1, 2, 0, 0, -1]


def _fmod_special():
    yield "DT_FP32", [-7.0, 7.0, -0.0, 5.0, np.inf, 1e30], [3.0, -3.0, 3.0, np.inf, 2.0, 3.0], \
        [-1.0, 1.0, -0.0, 5.0, np.nan, float(np.fmod(np.float64(np.float32(1e30)), 3.0))]


def _fmod_errors():
    yield error("fmod", "DT_FP32", "a NaN scalar", lambda: ptocpu.fmod(np.ones(3, np.float32), float("nan")),
                ptocpu.ArgumentError, "must be finite")
    yield error("fmod", "DT_FP32", "an infinite scalar", lambda: ptocpu.fmod(np.ones(3, np.float32), float("inf")),
                ptocpu.ArgumentError, "must be finite")
    yield error("fmod", "DT_INT32", "an integer tensor", lambda: ptocpu.fmod(np.ones(3, np.int32), 2),
                ptocpu.DTypeError, "not supported")


binary("floor_div", floor_div_reference, other_domain=(-4.0, 4.0), nonzero_other=True, scalars=(0.3, 3.0),
       special=_floor_div_special, errors=_division_errors("floor_div"))
binary("ceil_div", ceil_div_reference, nonzero_other=True, scalars=(3,),
       special=lambda: iter([("DT_INT32", [7, -7, 0, -2**31, 5], [0, 0, 0, -1, -2], [2**31 - 1, -2**31, 0, -2**31, -2])]),
       errors=_division_errors("ceil_div"))
binary("remainder", remainder_reference, nonzero_other=True, scalars=(0.7, 3.0), scalar_first=(5.5,),
       special=_remainder_special, errors=_division_errors("remainder"))
binary("fmod", fmod_reference, nonzero_other=True, scalars=(0.7, 3), special=_fmod_special, errors=_fmod_errors)

# ---------------------------------------------------------------- pow


def pow_result(a: str, b: str) -> str:
    if a == b:
        return a
    if "DT_FP64" in (a, b):
        return "DT_FP64"
    if a == "DT_INT32":
        return b
    if b == "DT_INT32":
        return a
    return "DT_FP32"


def float_pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y in float64 with the device's rules for signs and special values (docs/ops/pow.md)."""
    x, y = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
    with np.errstate(all="ignore"):
        r = np.power(np.abs(x), y)
        integral = np.isinf(y) | (np.floor(y) == y)
        odd = integral & ~np.isinf(y) & (np.fmod(np.abs(y), 2.0) == 1.0)
        r = np.where((x < 0) & odd, -r, r)
        r = np.where((x < 0) & np.isfinite(x) & ~integral, np.nan, r)
        r = np.where(np.isnan(x) | np.isnan(y), np.nan, r)
        r = np.where((y == 0) | (x == 1), 1.0, r)
        return np.where((x == -1) & np.isinf(y), 1.0, r)


def integer_pow(x, e, dtype: str) -> np.ndarray:
    bits = 8 * _np(dtype).itemsize

    def one(p, q):
        p, q = int(p), int(q)
        if q < 0:
            return 1 if p == 1 else ((-1 if q % 2 else 1) if p == -1 else 0)
        return pow(p, q, 1 << bits)

    p, q = np.broadcast_arrays(np.asarray(x, dtype=object), np.asarray(e, dtype=object))
    return wrapped(np.vectorize(one, otypes=[object])(p, q), dtype)


def pow_scalar_reference(dtype: str, x: np.ndarray, e) -> np.ndarray:
    """The device's rewrites of scalar exponents, each step in fp32 (fp64 for fp64)."""
    if not _is_float(dtype) and not (isinstance(e, float) and dtype == "DT_INT32"):
        return integer_pow(x, e, dtype)
    e = float(e)
    if abs(e) < 1e-9:
        return np.ones(np.shape(x), _np(dtype))
    out = "DT_FP64" if dtype == "DT_FP64" else (dtype if _is_float(dtype) else "DT_FP32")
    t = np.float64 if out == "DT_FP64" else np.float32
    v = np.asarray(x).astype(t)
    one = t(1)
    with np.errstate(all="ignore"):
        rewrites = {0.5: lambda: np.sqrt(v), -0.5: lambda: one / np.sqrt(v), 3.0: lambda: (v * v) * v,
                    2.0: lambda: v * v, -2.0: lambda: one / (v * v), -1.0: lambda: one / v}
        for value, rewrite in rewrites.items():
            if abs(e - value) < 1e-9:
                return np.asarray(rewrite()).astype(_np(out))
        return device(out, float_pow(v, t(e)))


def pow_reference(platform, dtype, a, b):
    if not isinstance(b, np.ndarray):
        return pow_scalar_reference(dtype, a, b)
    if not _is_float(dtype):
        return integer_pow(a, b, dtype)
    return device(dtype, float_pow(wide(a), wide(b)))


def _pow_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    """Mixed dtypes (the promotion table), the scalar rewrites, negative bases with integral exponents."""
    mixes = [("DT_FP16", "DT_BF16"), ("DT_INT32", "DT_FP16"), ("DT_BF16", "DT_INT32"), ("DT_FP32", "DT_INT8"),
             ("DT_INT16", "DT_FP16")]
    for platform in PLATFORMS:
        offered = set(_platform_dtypes(platform, "pow"))
        for a_dt, b_dt in mixes:
            if not {a_dt, b_dt} <= offered:
                continue

            def run_mix(a_dt=a_dt, b_dt=b_dt):
                a = values(rng, (3, 5), a_dt, 0.25, 3.0, int_range=(1, 5))
                b = values(rng, (3, 1), b_dt, -3.0, 3.0, int_range=(-3, 3))
                want = device(pow_result(a_dt, b_dt), float_pow(wide(a), wide(b)))
                return check(ptocpu.pow(a, b), want, 1)

            yield Case("pow", platform, a_dt, f"[3, 5] with [3, 1] of {b_dt} (promotion)", run_mix)
    for e in (0.5, -0.5, 2, 3, -1, -2.0, 0, 0.0, 1e-10, 2.5, -3.25, 40, -5):
        for dtype in ("DT_FP32", "DT_FP16", "DT_BF16", "DT_INT32", "DT_INT8", "DT_UINT8"):
            if not _is_float(dtype) and isinstance(e, float) and dtype != "DT_INT32":
                continue

            def run_rewrite(dtype=dtype, e=e):
                a = values(rng, (4, 6), dtype, 0.5, 4.0, int_range=(-9, 9))
                return check(ptocpu.pow(a, e), pow_scalar_reference(dtype, a, e), 1)

            yield Case("pow", "cpu", dtype, f"[4, 6] ** {e!r}", run_rewrite)

    def run_negative_bases():
        a = np.arange(-6, 6, dtype=np.float32) + 0.5
        b = np.round(rng.uniform(-6, 6, size=a.shape)).astype(np.float32)
        return check(ptocpu.pow(a, b), device("DT_FP32", float_pow(wide(a), wide(b))), 1)

    yield Case("pow", "cpu", "DT_FP32", "negative bases, integral exponents", run_negative_bases)


def _pow_special():
    nan, inf = np.nan, np.inf
    yield "DT_FP32", [-2.0, -2.0, -0.0, 0.0, 0.0, 1.0, -1.0, -1.0, nan, inf, -inf, -inf, 2.0, 0.5], \
        [0.5, 3.0, -1.5, -2.0, 0.0, nan, inf, -inf, 0.0, -1.0, 3.0, 2.0, 200.0, 200.0], \
        [nan, -8.0, inf, inf, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, -inf, inf, inf, 0.0]
    yield "DT_INT32", [2, 3, -1, -1, 5, 1, 0], [31, 21, -3, -4, -1, -7, 0], [-2**31, pow(3, 21, 1 << 32), -1, 1, 0, 1, 1]


def _pow_errors():
    yield error("pow", "DT_INT16", "a float exponent with an int16 tensor", lambda: ptocpu.pow(np.ones(3, np.int16), 2.5),
                ptocpu.DTypeError, "float or DT_INT32")
    yield error("pow", "DT_FP32", "tensors of different ranks",
                lambda: ptocpu.pow(np.ones((2, 3), np.float32), np.ones(3, np.float32)), ptocpu.ArgumentError, "same rank")
    yield error("pow", "DT_INT32", "integer tensors of different dtypes",
                lambda: ptocpu.pow(np.ones(3, np.int32), np.ones(3, np.int16)), ptocpu.DTypeError, "must match")
    yield error("pow", "DT_INT32", "an int exponent outside DT_INT32",
                lambda: ptocpu.pow(np.ones(3, np.int32), 1 << 40), ptocpu.ArgumentError, "out of range")


binary("pow", pow_reference, domain=(0.25, 4.0), int_range=(-9, 9), other_int_range=(0, 9), scalars=(1.7, 3.0),
       same_rank=True, ulps=lambda d: 1 if _is_float(d) else 0, special=_pow_special, extra=_pow_cases,
       errors=_pow_errors)

# ---------------------------------------------------------------- atan2, hypot: the device's fp32 algorithms


def atan2_device(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """docs/ops/atan2.md's algorithm in numpy fp32 (each operation rounded in fp32)."""
    f = np.float32
    c = [f(v) for v in (-0.333329409, 0.199887753, -0.141718030, 0.105184801, -0.0725297481, 0.0398497507,
                        -0.0143969795, 0.00245002890)]
    y, x = np.broadcast_arrays(np.asarray(y, f), np.asarray(x, f))
    with np.errstate(all="ignore"):
        q = y / x
        q = np.where(y == x, f(1), q)
        q = np.where(-y == x, f(-1), q)
        a = np.abs(q)
        outside = a > 1
        r = np.where(outside, f(1) / a, a)
        s = r * r
        p = s * c[7] + c[6]
        for k in range(5, -1, -1):
            p = p * s + c[k]
        t = (p * s) * r + r
        t = np.where(outside, -t + f(np.pi / 2), t)
        t = np.where(q >= 0, t, -t)
        shifted = np.where(np.signbit(y), t - f(np.pi), t + f(np.pi))
        out = np.where(x < 0, shifted, t)
        on_axis = np.where(y != 0, np.where(y > 0, f(np.pi / 2), f(-np.pi / 2)), f(0))
        out = np.where(x != 0, out, on_axis)
        return np.where(np.isnan(y) | np.isnan(x), f(np.nan), out).astype(f)


def atan2_reference(platform, dtype, a, b):
    if dtype == "DT_FP64":
        return _libm(math.atan2, np.arctan2)(wide(a), wide(b))
    return atan2_device(wide(a), wide(b)).astype(_np(dtype))


def hypot_device(x: np.ndarray, y: np.ndarray, dtype: str) -> np.ndarray:
    """docs/ops/hypot.md: fp32's scaled form with its 1e-9, fp16 / bf16's plain sum of squares."""
    f = np.float32
    x, y = np.broadcast_arrays(np.asarray(x, f), np.asarray(y, f))
    with np.errstate(all="ignore"):
        if dtype != "DT_FP32":
            return np.sqrt(x * x + y * y).astype(_np(dtype))
        a, b = np.abs(x), np.abs(y)
        nan = np.isnan(a) | np.isnan(b)
        big = np.where(nan, f(np.nan), np.maximum(a, b)) + f(1e-9)
        r = np.where(nan, f(np.nan), np.minimum(a, b)) / big
        return (big * np.sqrt(r * r + f(1))).astype(f)


def hypot_reference(platform, dtype, a, b):
    if dtype == "DT_FP64":
        return np.hypot(wide(a), wide(b))
    return hypot_device(wide(a), wide(b), dtype)


def accuracy(op: str, exact: Callable, ulps: int, lo: float, hi: float) -> Callable:
    """Cases of op against the exact function (float64, rounded once) within its documented ulps."""
    def cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
        for dtype in ("DT_FP32", "DT_FP16", "DT_BF16"):
            def run(dtype=dtype):
                sign = np.where(rng.integers(0, 2, (64, 64)) == 0, -1.0, 1.0)
                a = (rng.uniform(lo, hi, (64, 64)) * sign).astype(_np(dtype))
                b = (rng.uniform(lo, hi, (64, 64)) * sign.T).astype(_np(dtype))
                want = exact(wide(a), wide(b)).astype(_np(dtype))
                return check(getattr(ptocpu, op)(a, b), want, ulps if dtype == "DT_FP32" else 1)

            yield Case(op, "cpu", dtype, f"within {ulps} ulps (fp16 / bf16: 1) of the exact result", run)
    return cases


def _atan2_special():
    pi2, pi4 = np.float32(np.pi / 2), atan2_device(np.float32(1), np.float32(1))
    yield "DT_FP32", [1.0, -1.0, 0.0, -0.0, np.inf, np.inf, np.nan, 1.0, 0.0, -0.0], \
        [0.0, -0.0, -0.0, 0.0, np.inf, -np.inf, 1.0, np.nan, -1.0, -1.0], \
        [pi2, -pi2, 0.0, 0.0, pi4, np.float32(np.pi) - pi4, np.nan, np.nan, np.float32(np.pi), -np.float32(np.pi)]


def _hypot_special():
    yield "DT_FP32", [0.0, np.inf, np.inf, 3.0, -3.0], [0.0, np.inf, 1.0, 4.0, -4.0], \
        [np.float32(1e-9), np.nan, np.inf, 5.0, 5.0]


def _two_tensor_errors(op: str) -> Callable[[], Iterator[Case]]:
    def errors():
        yield error(op, "DT_FP32", "tensors of different dtypes",
                    lambda: getattr(ptocpu, op)(np.ones(3, np.float32), np.ones(3, np.float16)), ptocpu.DTypeError,
                    "must match")
        yield error(op, "DT_INT32", "an integer tensor",
                    lambda: getattr(ptocpu, op)(np.ones(3, np.int32), np.ones(3, np.int32)), ptocpu.DTypeError,
                    "not supported")
    return errors


binary("atan2", atan2_reference, ulps=lambda d: 1 if d == "DT_FP64" else 0, special=_atan2_special, extra=accuracy("atan2", np.arctan2, 2, 0.01, 4.0),
       errors=_two_tensor_errors("atan2"))
binary("hypot", hypot_reference, ulps=lambda d: 1 if d == "DT_FP64" else 0, special=_hypot_special, extra=accuracy("hypot", np.hypot, 2, 0.25, 4.0),
       errors=_two_tensor_errors("hypot"))

# ---------------------------------------------------------------- gcd, bitwise, shifts, logical_and


def gcd_reference(platform, dtype, a, b):
    x, y = np.broadcast_arrays(integers(a), integers(np.asarray(b)))
    return wrapped(np.vectorize(lambda p, q: np.gcd(abs(int(p)), abs(int(q))), otypes=[object])(x, y), dtype)


def _tiled(tile, call):
    with ptocpu.vec_tile_shapes(*tile):
        return call()


def _gcd_errors():
    yield error("gcd", "DT_INT8", "a scalar outside the dtype", lambda: ptocpu.gcd(np.ones(3, np.int8), 300),
                ptocpu.ArgumentError, "out of range")
    yield error("gcd", "DT_INT32", "a last tile dim of 12 bytes",
                lambda: _tiled((4, 3), lambda: ptocpu.gcd(np.ones((4, 8), np.int32), 2)), ptocpu.TileError, "32 bytes",
                "ascend950")


def bitwise_reference(fn: Callable) -> Callable:
    def reference(platform, dtype, a, b):
        b = np.asarray(b, dtype=a.dtype)
        if a.dtype == np.bool_:  # on 0 / 1 bytes: numpy 1.24's bool xor with a scalar True leaves 0xFE bytes
            return fn(a.view(np.uint8), b.view(np.uint8)) != 0
        return fn(a, b)
    return reference


def shift_reference(left: bool) -> Callable:
    def reference(platform, dtype, a, b):
        bits = 8 * _np(dtype).itemsize
        signed = _np(dtype).kind == "i"

        def one(p, c):
            p, c = int(p), int(c)
            c = bits if c < 0 or c > bits else c
            if left:
                return 0 if c == bits else p << c
            if c == bits:
                return -1 if signed and p < 0 else 0
            return p >> c  # Python's >> is arithmetic

        p, c = np.broadcast_arrays(np.asarray(a, dtype=object), np.asarray(b, dtype=object))
        return wrapped(np.vectorize(one, otypes=[object])(p, c), dtype)
    return reference


def _shift_special(left: bool) -> Callable:
    def special():
        if left:
            yield "DT_INT16", [1, 1, 1, -1, 3], [15, 16, -1, 17, 2], [-32768, 0, 0, 0, 12]
        else:
            yield "DT_INT16", [-8, -8, 8, -1, 100], [2, 16, 20, -3, 1], [-2, -1, 0, -1, 50]
            yield "DT_UINT16", [65535, 65535], [16, 15], [0, 1]
    return special


def _bitwise_errors(op: str, float_scalar: bool = True) -> Callable[[], Iterator[Case]]:
    def errors():
        if float_scalar:
            yield error(op, "DT_INT32", "a float scalar", lambda: getattr(ptocpu, op)(np.ones(3, np.int32), 1.5),
                        ptocpu.DTypeError, "is a float")
        else:
            yield error(op, "DT_INT32", "two scalars", lambda: getattr(ptocpu, op)(1, 2), ptocpu.DTypeError,
                        "both scalars")
        yield error(op, "DT_FP32", "a float tensor", lambda: getattr(ptocpu, op)(np.ones(3, np.float32), 1),
                    ptocpu.DTypeError, "not supported")
    return errors


def logical_and_reference(platform, dtype, a, b):
    return (wide(a) != 0) & (wide(b) != 0)


def _logical_and_mixed(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    def run():
        a = np.array([[np.nan, -0.0, 0.0, 2.0, -1.0]], np.float32)
        b = np.array([[1], [0]], np.int32)
        return check(ptocpu.logical_and(a, b), logical_and_reference("cpu", "DT_FP32", a, b))

    yield Case("logical_and", "cpu", "DT_FP32", "with DT_INT32: mixed dtypes, NaN and -0.0", run)


def _logical_and_errors():
    yield error("logical_and", "DT_FP64", "a dtype outside the chip's list",
                lambda: ptocpu.logical_and(np.ones(3, np.float64), np.ones(3, np.float64)), ptocpu.DTypeError,
                "not supported", "atlas_a2")


binary("gcd", gcd_reference, scalars=(6,), special=lambda: iter([("DT_INT8", [-128, -128, 0, 12, -12], [0, 6, 0, -18, 0],
                                                                   [-128, 2, 0, 6, 12])]), errors=_gcd_errors)
binary("bitwise_and", bitwise_reference(np.bitwise_and), scalars=(5,), errors=_bitwise_errors("bitwise_and"))
binary("bitwise_or", bitwise_reference(np.bitwise_or), scalars=(5,), errors=_bitwise_errors("bitwise_or"))
binary("bitwise_xor", bitwise_reference(np.bitwise_xor), scalars=(5,), errors=_bitwise_errors("bitwise_xor"))
binary("bitwise_left_shift", shift_reference(True), int_range=(-100, 100), other_int_range=(-3, 20), scalars=(3,),
       scalar_first=(5,), special=_shift_special(True), errors=_bitwise_errors("bitwise_left_shift", False))
binary("bitwise_right_shift", shift_reference(False), int_range=(-100, 100), other_int_range=(-3, 20), scalars=(3,),
       scalar_first=(-77, 77), special=_shift_special(False), errors=_bitwise_errors("bitwise_right_shift", False))
binary("logical_and", logical_and_reference, domain=(-1.0, 1.0), int_range=(-1, 1), extra=_logical_and_mixed,
       errors=_logical_and_errors)

# ---------------------------------------------------------------- clip, axpy_, atomic_add, prelu, lrelu, where


@cases_for("clip")
def _clip_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    def reference(dtype, x, lo, hi):
        if _is_float(dtype):
            with np.errstate(invalid="ignore"):
                v = wide(x)
                v = v if lo is None else np.maximum(v, wide(lo))
                v = v if hi is None else np.minimum(v, wide(hi))
            return v.astype(_np(dtype))
        v = np.asarray(x).astype(np.int64)
        v = v if lo is None else np.maximum(v, np.asarray(lo).astype(np.int64))
        v = v if hi is None else np.minimum(v, np.asarray(hi).astype(np.int64))
        return v.astype(_np(dtype))

    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "clip"):
            def run_tensors(dtype=dtype):
                x = values(rng, (3, 4, 5), dtype, -4.0, 4.0, int_range=(-50, 50))
                lo = values(rng, (4, 5), dtype, -3.0, 0.0, int_range=(-30, 0))
                hi = values(rng, (3, 4, 5), dtype, 0.0, 3.0, int_range=(0, 30))
                return check(ptocpu.clip(strided(x), lo, hi), reference(dtype, x, lo, hi))

            def run_scalars(dtype=dtype):
                x = values(rng, (6, 7), dtype, -4.0, 4.0, int_range=(-50, 50))
                lo, hi = (-1.5, 2.5) if _is_float(dtype) else (2 if _np(dtype).kind == "u" else -7, 9)
                slo = np.asarray(lo).astype(_np(dtype)) if _is_float(dtype) else lo
                return check(ptocpu.clip(x, lo, hi), reference(dtype, x, slo, np.asarray(hi).astype(_np(dtype))))

            def run_one_bound(dtype=dtype):
                x = values(rng, (6, 7), dtype, -4.0, 4.0, int_range=(-50, 50))
                hi = values(rng, (1, 7), dtype, 0.0, 3.0, int_range=(0, 30))
                return check(ptocpu.clip(x, max=hi), reference(dtype, x, None, hi))

            yield Case("clip", platform, dtype, "[3, 4, 5] between [4, 5] and [3, 4, 5]", run_tensors)
            yield Case("clip", platform, dtype, "[6, 7] between two scalars", run_scalars)
            yield Case("clip", platform, dtype, "[6, 7] below a [1, 7] max only", run_one_bound)

    def run_special():
        x = np.array([np.nan, 1.0, 5.0, -5.0], np.float32)
        got = ptocpu.clip(x, np.array([0.0, np.nan, 3.0, 0.0], np.float32), np.array([1.0, 2.0, 2.0, np.nan], np.float32))
        return check(got, np.array([np.nan, np.nan, 2.0, np.nan], np.float32))

    yield Case("clip", "cpu", "DT_FP32", "NaN anywhere gives NaN; min > max gives max", run_special)
    yield error("clip", "DT_FP32", "a tensor bound with a scalar bound",
                lambda: ptocpu.clip(np.ones(3, np.float32), np.zeros(3, np.float32), 1.0), ptocpu.DTypeError, "two tensors")
    yield error("clip", "DT_FP32", "a bound broadcasting along two axes",
                lambda: ptocpu.clip(np.ones((2, 3), np.float32), np.zeros((1, 1), np.float32)), ptocpu.ArgumentError,
                "at most one")
    yield error("clip", "DT_FP32", "a bound larger than input",
                lambda: ptocpu.clip(np.ones((1, 3), np.float32), np.zeros((2, 3), np.float32)), ptocpu.ArgumentError,
                "does not broadcast to input shape")


@cases_for("axpy_")
def _axpy_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    def reference(y, x, alpha):
        """In fp32 (fp64 for fp64): alpha * x, then + y, each rounded; then y's dtype."""
        t = np.float64 if y.dtype == np.float64 else np.float32
        return (y.astype(t) + t(alpha) * x.astype(t)).astype(y.dtype)

    for platform in PLATFORMS:
        dtypes = _platform_dtypes(platform, "axpy_")
        pairs = [(d, d) for d in dtypes] + [("DT_FP32", "DT_FP16")]
        for y_dt, x_dt in pairs:
            if y_dt not in dtypes or x_dt not in dtypes:
                continue
            for x_shape in ((5, 6), (5, 1)):
                def run(y_dt=y_dt, x_dt=x_dt, x_shape=x_shape):
                    y = values(rng, (5, 6), y_dt, -4.0, 4.0)
                    x = values(rng, x_shape, x_dt, -4.0, 4.0)
                    want = reference(y, x, 0.3)
                    t = ptocpu.asarray(y.copy())
                    result = ptocpu.axpy_(t, strided(x), alpha=0.3)
                    ok, detail, pairs = check(t, want)
                    return (ok and result is t), detail or ("axpy_ did not return y" if result is not t else ""), pairs

                yield Case("axpy_", platform, y_dt, f"y [5, 6] += 0.3 * x {list(x_shape)} of {x_dt}", run)
    yield error("axpy_", "DT_FP32", "y needing to broadcast",
                lambda: ptocpu.axpy_(ptocpu.asarray(np.ones((1, 3), np.float32)), np.ones((2, 3), np.float32)),
                ptocpu.ArgumentError, "cannot broadcast")
    yield error("axpy_", "DT_FP32", "different ranks",
                lambda: ptocpu.axpy_(ptocpu.asarray(np.ones((2, 3), np.float32)), np.ones(3, np.float32)),
                ptocpu.ArgumentError, "must equal y rank")
    yield error("axpy_", "DT_FP16", "an fp32 x into an fp16 y",
                lambda: ptocpu.axpy_(ptocpu.asarray(np.ones(3, np.float16)), np.ones(3, np.float32)),
                ptocpu.DTypeError, "cannot be added", "ascend950")


@cases_for("atomic_add")
def _atomic_add_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "atomic_add"):
            def run(dtype=dtype):
                dst = values(rng, (6, 7), dtype, -4.0, 4.0)
                src = values(rng, (2, 3), dtype, -4.0, 4.0)
                want = dst.copy()
                window = (slice(3, 5), slice(4, 7))
                if _is_float(dtype):
                    want[window] = device(dtype, wide(dst[window]) + wide(src))
                else:
                    want[window] = wrapped(integers(dst[window]) + integers(src), dtype)
                t = ptocpu.asarray(dst.copy())
                result = ptocpu.atomic_add(src, [3, 4], t)
                ok, detail, pairs = check(t, want)
                return ok and result is None, detail, pairs

            yield Case("atomic_add", platform, dtype, "[2, 3] into [6, 7] at [3, 4]", run)
    yield error("atomic_add", "DT_FP32", "a block outside dst",
                lambda: ptocpu.atomic_add(np.ones((2, 2), np.float32), [5, 0], ptocpu.asarray(np.zeros((6, 2), np.float32))),
                ptocpu.TileError, "outside dst")
    yield error("atomic_add", "DT_FP32", "offsets of the wrong length",
                lambda: ptocpu.atomic_add(np.ones((2, 2), np.float32), [0], ptocpu.asarray(np.zeros((6, 2), np.float32))),
                ptocpu.ArgumentError, "must agree")


@cases_for("prelu")
def _prelu_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "prelu"):
            for shape in ((9,), (4, 6), (2, 3, 5), (2, 3, 4, 5)):
                def run(dtype=dtype, shape=shape):
                    x = values(rng, shape, dtype, -4.0, 4.0)
                    w = values(rng, (shape[1] if len(shape) > 1 else 1,), dtype, 0.0, 1.0)
                    ws = wide(w).reshape((1, -1) + (1,) * (len(shape) - 2)) if len(shape) > 1 else wide(w)
                    want = device(dtype, np.where(wide(x) >= 0, wide(x), ws * wide(x)))
                    return check(ptocpu.prelu(strided(x), w), want)

                yield Case("prelu", platform, dtype, f"{list(shape)}", run)
    yield error("prelu", "DT_FP32", "a weight of the wrong length",
                lambda: ptocpu.prelu(np.ones((2, 3), np.float32), np.ones(2, np.float32)), ptocpu.ArgumentError, "must be [3]")


@cases_for("lrelu")
def _lrelu_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "lrelu"):
            for slope in (0.01, 0.3):
                def run(dtype=dtype, slope=slope):
                    x = values(rng, (5, 8), dtype, -4.0, 4.0)
                    s = wide(slope) if dtype == "DT_FP64" else wide(np.float32(slope))
                    want = device(dtype, np.where(wide(x) >= 0, wide(x), s * wide(x)))
                    return check(ptocpu.lrelu(x, slope), want)

                yield Case("lrelu", platform, dtype, f"[5, 8], slope {slope}", run)
    for bad in (-0.1, float("nan"), float("inf")):
        yield error("lrelu", "DT_FP32", f"negative_slope {bad}", lambda bad=bad: ptocpu.lrelu(np.ones(3, np.float32), bad),
                    ptocpu.ArgumentError, "finite number >= 0")


@cases_for("where")
def _where_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "where"):
            def run_tensors(dtype=dtype):
                c = rng.integers(0, 2, (4, 1, 6)).astype(bool)
                a = values(rng, (4, 5, 6), dtype, -4.0, 4.0)
                b = values(rng, (1, 5, 1), dtype, -4.0, 4.0)
                return check(ptocpu.where(c, strided(a), b), np.where(c, a, b))

            def run_int_scalar(dtype=dtype):
                c = rng.integers(0, 2, (3, 7)).astype(bool)
                a = values(rng, (3, 7), dtype, -4.0, 4.0)
                return check(ptocpu.where(c, a, 1), np.where(c, a, np.asarray(1).astype(a.dtype)))

            yield Case("where", platform, dtype, "[4, 1, 6] selecting [4, 5, 6] or [1, 5, 1]", run_tensors)
            yield Case("where", platform, dtype, "[3, 7] or the int 1", run_int_scalar)

    def run_numbers():
        c = np.array([True, False, True])
        return check(ptocpu.where(c, 2, 0.5), np.array([2.0, 0.5, 2.0], np.float32))

    yield Case("where", "cpu", "DT_FP32", "two numbers give DT_FP32", run_numbers)
    yield error("where", "DT_FP16", "a float next to an fp16 tensor",
                lambda: ptocpu.where(np.ones(3, bool), np.ones(3, np.float16), 0.0), ptocpu.DTypeError, "is a float")
    yield error("where", "DT_FP32", "a condition of another dtype",
                lambda: ptocpu.where(np.ones(3, np.uint8), np.ones(3, np.float32), 0.0), ptocpu.DTypeError, "condition")
    yield error("where", "DT_FP32", "tensors of different ranks",
                lambda: ptocpu.where(np.ones(3, bool), np.ones((2, 3), np.float32), 0.0), ptocpu.ArgumentError, "same rank")
