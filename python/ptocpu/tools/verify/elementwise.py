"""verify's cases of the elementwise ops (docs/ops/elementwise.md), from one generic generator:
every dtype the platform lists, contiguous / broadcast / strided / scalar operands, against a
float64 reference rounded once to the output dtype (numpy / ml_dtypes) -- bit for bit where the
op is correctly rounded, else within its documented ulps -- plus the error rules.

A family registers each op with `elementwise(op, reference, ...)`; the reference computes in
float64 (or the integer dtype itself, wrapping) on numpy arrays.
"""
from __future__ import annotations

from typing import Callable, Iterator, Optional, Union

import numpy as np

import ptocpu

from .common import PLATFORMS, Case, _compare, _expect_error, _platform_dtypes, _random, cases_for

_FLOAT_KINDS = "fV"  # numpy floats and ml_dtypes' (kind 'V')


def _np(dtype: str) -> np.dtype:
    return np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))


def _is_float(dtype: str) -> bool:
    return _np(dtype).kind in _FLOAT_KINDS


def _ulps(got: np.ndarray, want: np.ndarray) -> float:
    """The largest distance in units of the last place of the output dtype (NaN == NaN)."""
    if got.size == 0:
        return 0.0
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    g = np.ascontiguousarray(got).view(width).astype(np.int64)
    w = np.ascontiguousarray(want).view(width).astype(np.int64)
    sign = np.int64(1) << (8 * got.dtype.itemsize - 1)
    # sign-magnitude to a monotonic integer line
    g = np.where(g & sign, -(g & ~sign), g)
    w = np.where(w & sign, -(w & ~sign), w)
    both_nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    return float(np.max(np.where(both_nan, 0, np.abs(g - w))))


def _reference(reference: Callable[..., np.ndarray], arrays: list, out: np.dtype, extra: tuple = (),
               keywords: Optional[dict] = None) -> np.ndarray:
    """Integers: the reference on the integer arrays themselves (numpy wraps as the device does);
    floats: in float64, rounded once to the output dtype (for +, -, x, / and sqrt float64 holds
    the exact result closely enough that this is the correctly rounded one). `extra` follows the
    arrays, `keywords` are passed as they are."""
    keywords = keywords or {}
    if all(a.dtype.kind in "iub" for a in arrays) and out.kind in "iub":
        with np.errstate(over="ignore", invalid="ignore"):
            return np.asarray(reference(*arrays, *extra, **keywords)).astype(out)
    with np.errstate(all="ignore"):
        return np.asarray(reference(*(a.astype(np.float64) for a in arrays), *extra, **keywords)).astype(out)


def elementwise(op: str, reference: Callable[..., np.ndarray], *, arity: int = 2, ulps: int = 0,
                result: Optional[str] = None, domain: tuple = (-4.0, 4.0), scalar: Optional[float] = 1.5,
                native_fp16: bool = False, integers: bool = True, steps: bool = False, specials: bool = False,
                args: Union[tuple, Callable[[str], tuple]] = (),
                errors: Optional[Callable[[], Iterator[Case]]] = None) -> None:
    """Registers op's cases. reference(*float64 arrays) -> float64 values (or bools); results are
    compared after one rounding into the output dtype, bit for bit when ulps == 0. result: the
    output dtype when it is not the input's ("DT_BOOL", or "fp32" for integer inputs).
    native_fp16: the device runs the op natively in fp16, so a scalar is rounded to fp16 first
    (docs/ops/elementwise.md#scalars); otherwise a scalar is fp32 for fp16 / bf16 / fp32 tensors.
    steps: the op is a composition the device rounds step by step; the reference gets the dtype's
    name as `dtype=` to round the same steps. specials: one more case per float dtype over 0, -0,
    +-inf, NaN and the domain's ends. args: arguments after the tensors (a tuple, or a function of
    the dtype's name giving one), for the op and the reference alike."""

    def out_dtype(dtype: str) -> np.dtype:
        if result == "DT_BOOL":
            return np.dtype(np.bool_)
        if result == "fp32" and not _is_float(dtype):
            return np.dtype(np.float32)
        return _np(dtype)

    def generate(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
        shapes = [((7,), (7,)), ((3, 5), (3, 5)), ((4, 1, 6), (1, 5, 6)), ((2, 3, 4, 5), (5,))]
        if quick:
            shapes = shapes[1:3]
        for platform in PLATFORMS:
            for dtype in _platform_dtypes(platform, op):
                if not integers and not _is_float(dtype):
                    continue
                lo, hi = domain
                for a_shape, b_shape in shapes:
                    if platform != "cpu" and max(len(a_shape), len(b_shape)) > 4:
                        continue

                    def run(dtype=dtype, a_shape=a_shape, b_shape=b_shape, lo=lo, hi=hi):
                        arrays = [_values(rng, a_shape, dtype, lo, hi)]
                        if arity == 2:
                            arrays.append(_values(rng, b_shape, dtype, lo, hi))
                        # a strided view of the first operand: the engine's gather path
                        strided = np.repeat(arrays[0], 2, axis=-1)[..., ::2]
                        return _run_and_check(dtype, strided, arrays)

                    yield Case(op, platform, dtype, f"{list(a_shape)}" + (f" with {list(b_shape)}" if arity == 2 else ""),
                               run)
                if specials and _is_float(dtype):
                    def run_specials(dtype=dtype, lo=lo, hi=hi):
                        wide = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, lo, hi, (lo + hi) / 2])
                        with np.errstate(over="ignore", invalid="ignore"):
                            values = wide.astype(_np(dtype))
                        # a dtype without infinities (fp8 e4m3) makes them NaN: not a special of its own
                        values = values[np.isnan(values.astype(np.float64)) == np.isnan(wide)]
                        arrays = [values] + [values[::-1].copy()] * (arity - 1)
                        return _run_and_check(dtype, values, arrays)

                    yield Case(op, platform, dtype, "0, -0, +-inf, NaN, the domain's ends", run_specials)
                if arity == 2 and scalar is not None and (_is_float(dtype) or integers):
                    value = scalar if _is_float(dtype) else int(scalar)

                    def run_scalar(dtype=dtype, value=value):
                        a = _values(rng, (4, 6), dtype, lo, hi)
                        got = getattr(ptocpu, op)(a, value)
                        # the device's scalar: fp32 for fp16 / bf16 (AutoCast) or the tensor's dtype for
                        # natively computed ops -- the op's page says which; float64 here, rounded in the
                        # reference exactly as the op documents
                        s = np.asarray(_scalar_as(dtype, value, native_fp16), a.dtype if not _is_float(dtype) else np.float64)
                        want = _reference(reference, [a, s], out_dtype(dtype))
                        return _check(got, want)

                    yield Case(op, platform, dtype, f"[4, 6] with scalar {value}", run_scalar)
        if errors:
            yield from errors()

    def _run_and_check(dtype, first, arrays):
        extra = args(dtype) if callable(args) else args
        got = getattr(ptocpu, op)(first, *arrays[1:], *extra)
        want = _reference(reference, arrays, out_dtype(dtype), extra, {"dtype": dtype} if steps else None)
        return _check(got, want)

    def _check(got, want):
        got = np.asarray(got.numpy())
        if ulps == 0 or want.dtype.kind not in _FLOAT_KINDS:
            return _compare([(got, want)])
        distance = _ulps(got, want)
        # An fp64 reference is numpy's float64 function, itself up to 1 ulp from the correctly
        # rounded value (how close depends on numpy's version): one more ulp is allowed there.
        allowed = ulps + (got.dtype == np.float64)
        if distance > allowed:
            return False, f"{distance:g} ulps from the float64 reference (allowed {allowed})", []
        return True, "", [(got, want)]

    cases_for(op)(generate)


def _scalar_as(dtype: str, value: float, native_fp16: bool) -> float:
    if dtype == "DT_FP16" and native_fp16:
        return float(np.float16(value))
    if _is_float(dtype) and dtype != "DT_FP64":
        return float(np.float32(value))
    return value


def _values(rng: np.random.Generator, shape, dtype: str, lo: float, hi: float) -> np.ndarray:
    npdt = _np(dtype)
    if npdt.kind in _FLOAT_KINDS:
        return rng.uniform(lo, hi, size=shape).astype(npdt)
    return _random(rng, shape, dtype)


# ---------------------------------------------------------------- the arithmetic family

def _arithmetic_errors() -> Iterator[Case]:
    yield Case("add", "cpu", "DT_INT32", "error: a float scalar with an integer tensor",
               lambda: _expect_error(lambda: ptocpu.add(np.ones(3, np.int32), 1.5), ptocpu.DTypeError, "is a float"))
    yield Case("add", "cpu", "DT_FP32", "error: shapes that do not broadcast",
               lambda: _expect_error(lambda: ptocpu.add(np.ones((2, 3), np.float32), np.ones(4, np.float32)),
                                     ptocpu.ArgumentError, "do not broadcast"))
    yield Case("add", "cpu", "DT_FP32", "error: an int scalar in a comparison",
               lambda: _expect_error(lambda: ptocpu.eq(np.ones(3, np.float32), 1), ptocpu.DTypeError, "is an int"))


elementwise("add", np.add, errors=_arithmetic_errors)
elementwise("sub", np.subtract)
elementwise("mul", np.multiply)
elementwise("div", np.divide, result="fp32", domain=(0.5, 4.0), native_fp16=True)
elementwise("maximum", np.maximum, native_fp16=True)
elementwise("minimum", np.minimum, native_fp16=True)
elementwise("eq", np.equal, result="DT_BOOL", integers=False, domain=(-2.0, 2.0), native_fp16=True)
elementwise("ne", np.not_equal, result="DT_BOOL", integers=False, domain=(-2.0, 2.0), native_fp16=True)
elementwise("lt", np.less, result="DT_BOOL", integers=False, domain=(-2.0, 2.0), native_fp16=True)
elementwise("le", np.less_equal, result="DT_BOOL", integers=False, domain=(-2.0, 2.0), native_fp16=True)
elementwise("gt", np.greater, result="DT_BOOL", integers=False, domain=(-2.0, 2.0), native_fp16=True)
elementwise("ge", np.greater_equal, result="DT_BOOL", integers=False, domain=(-2.0, 2.0), native_fp16=True)
elementwise("greater", np.greater, result="DT_BOOL", integers=False, domain=(-2.0, 2.0), native_fp16=True)
elementwise("neg", np.negative, arity=1)
elementwise("abs", np.abs, arity=1)
elementwise("reciprocal", np.reciprocal, arity=1, domain=(0.25, 4.0))
elementwise("sqrt", np.sqrt, arity=1, domain=(0.0, 8.0))

