"""verify's cases of the unary math family (src/ops/math.cpp): each op through the elementwise
generator against a float64 reference -- numpy or Python's math module -- rounded once into the
output dtype. Transcendentals are SLEEF's 1-ulp functions (within 1 ulp of the correctly rounded
fp32 result, so within 1 ulp in every output dtype); ops the device composes from others
(expm1, log2, log10, log1p, rsqrt, cbrt, sigmoid, round) are checked against the same
composition with each step rounded in the compute type (`steps`)."""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np

import ptocpu

from .common import Case, _expect_error, _libm
from .elementwise import elementwise


def _compute(dtype: str) -> type:
    """The type the device computes a dtype's values in: fp64 for 64-bit dtypes, fp32 otherwise."""
    return np.float64 if dtype in ("DT_FP64", "DT_INT64", "DT_UINT64") else np.float32


def _library(fn, x: np.ndarray, c: type) -> np.ndarray:
    """A library function's step: the float64 result rounded to the compute type."""
    return fn(x.astype(np.float64)).astype(c)


def _expm1(x, dtype):
    c = _compute(dtype)
    return _library(np.exp, x, c) - c(1)


def _log_base(base: float):
    def reference(x, dtype):
        c = _compute(dtype)
        return _library(np.log, x, c) / c(math.log(base))
    return reference


def _log1p(x, dtype):
    c = _compute(dtype)
    xc = x.astype(c)
    u = xc + c(1)
    value = _library(np.log, u, c) * (xc / (u - c(1)))
    return np.where(u == c(1), xc, np.where(u == np.inf, u, value))


def _rsqrt(x, dtype):
    c = _compute(dtype)
    return c(1) / np.sqrt(x.astype(c))


def _cbrt(x, dtype):
    c = _compute(dtype)
    third = np.float64(c(1) / c(3))
    return np.copysign(_library(lambda v: np.power(np.abs(v), third), x, c), x)


def _sigmoid(x, dtype):
    c = _compute(dtype)
    return c(1) / (_library(np.exp, -x, c) + c(1))


def _round(x, decimals, dtype):
    c = _compute(dtype)
    scale = c(10.0 ** decimals) if decimals <= 38 or c is np.float64 else c(np.inf)
    if x.dtype.kind in "iu":  # integers: unchanged for decimals >= 0, else the fp16 way and back
        if decimals >= 0:
            return x
        r = np.rint(np.rint(x.astype(c) * scale) * (c(1) / scale))
        info = np.iinfo(x.dtype)
        return np.clip(r, info.min, info.max)
    xc = x.astype(c)
    if dtype in ("DT_FP32", "DT_FP64"):
        return np.rint(xc * scale) / scale
    return np.rint(xc * scale) * (c(1) / scale)


def _sign(x):
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _relu(x):
    return np.where(np.isnan(x), x, np.where(x > 0, x, 0)).astype(x.dtype)


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def _math_errors() -> Iterator[Case]:
    yield Case("exp", "cpu", "DT_INT32", "error: an integer tensor",
               lambda: _expect_error(lambda: ptocpu.exp(np.ones(3, np.int32)), ptocpu.DTypeError, "DT_INT32"))
    yield Case("sin", "atlas_a2", "DT_BF16", "error: bf16 is not on the chips' list",
               lambda: _with_platform("atlas_a2", lambda: _expect_error(
                   lambda: ptocpu.sin(ptocpu.asarray([1.0], "bfloat16")), ptocpu.DTypeError, "DT_BF16")))
    yield Case("isnan", "atlas_a2", "DT_FP32", "error: a tile whose last axis is not a multiple of 32",
               lambda: _with_platform("atlas_a2", lambda: _with_tile((4, 16), lambda: _expect_error(
                   lambda: ptocpu.isnan(np.ones((4, 16), np.float32)), ptocpu.TileError, "multiple of 32"))))


def _with_platform(name, fn):
    with ptocpu.platform(name):
        return fn()


def _with_tile(tile, fn):
    with ptocpu.vec_tile_shapes(*tile):
        return fn()


elementwise("exp", _libm(math.exp, np.exp), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True, errors=_math_errors)
elementwise("exp2", np.exp2, arity=1, ulps=1, result="fp32", domain=(-20.0, 20.0), specials=True)
# exp(x) - 1 cancels near 0 (as on the device): 1 ulp of exp(x) is many of the result there
elementwise("expm1", _expm1, arity=1, ulps=2, result="fp32", domain=(1.0, 4.0), steps=True, specials=True)
elementwise("log", _libm(math.log, np.log), arity=1, ulps=1, domain=(0.001, 100.0), specials=True)
elementwise("log2", _log_base(2.0), arity=1, ulps=2, domain=(0.001, 100.0), steps=True, specials=True)
elementwise("log10", _log_base(10.0), arity=1, ulps=2, domain=(0.001, 100.0), steps=True, specials=True)
elementwise("log1p", _log1p, arity=1, ulps=2, domain=(-0.9, 10.0), steps=True, specials=True)
elementwise("rsqrt", _rsqrt, arity=1, domain=(0.01, 100.0), steps=True, specials=True)
elementwise("cbrt", _cbrt, arity=1, ulps=1, domain=(-100.0, 100.0), steps=True, specials=True)
elementwise("sin", _libm(math.sin, np.sin), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True)
elementwise("cos", _libm(math.cos, np.cos), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True)
elementwise("tan", _libm(math.tan, np.tan), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True)
elementwise("asin", _libm(math.asin, np.arcsin), arity=1, ulps=1, domain=(-1.0, 1.0), specials=True)
elementwise("acos", _libm(math.acos, np.arccos), arity=1, ulps=1, domain=(-1.0, 1.0), specials=True)
elementwise("atan", _libm(math.atan, np.arctan), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True)
elementwise("sinh", _libm(math.sinh, np.sinh), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True)
elementwise("cosh", _libm(math.cosh, np.cosh), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True)
elementwise("tanh", _libm(math.tanh, np.tanh), arity=1, ulps=1, domain=(-5.0, 5.0), specials=True)
elementwise("asinh", _libm(math.asinh, np.arcsinh), arity=1, ulps=1, domain=(-10.0, 10.0), specials=True)
elementwise("acosh", _libm(math.acosh, np.arccosh), arity=1, ulps=1, domain=(1.0, 10.0), specials=True)
elementwise("atanh", _libm(math.atanh, np.arctanh), arity=1, ulps=1, domain=(-0.99, 0.99), specials=True)
elementwise("erf", _erf, arity=1, ulps=1, domain=(-4.0, 4.0), specials=True)
# fp64: SLEEF's erfc is a 1.5-ulp function, math.erfc adds its own (fp32 goes through fp64: within 1 ulp)
elementwise("erfc", _erfc, arity=1, ulps=3, domain=(-3.0, 10.0), specials=True)
elementwise("sigmoid", _sigmoid, arity=1, ulps=2, domain=(-10.0, 10.0), steps=True, specials=True)
elementwise("relu", _relu, arity=1, specials=True)
elementwise("sign", _sign, arity=1, specials=True)
elementwise("signbit", np.signbit, arity=1, result="DT_BOOL", specials=True)
elementwise("floor", np.floor, arity=1, domain=(-10.0, 10.0), specials=True)
elementwise("ceil", np.ceil, arity=1, domain=(-10.0, 10.0), specials=True)
elementwise("trunc", np.trunc, arity=1, domain=(-10.0, 10.0), specials=True)
elementwise("round", _round, arity=1, domain=(-10.0, 10.0), steps=True, specials=True,
            args=lambda dtype: (2,) if np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype))).kind in "fV" else (-1,))
elementwise("isfinite", np.isfinite, arity=1, result="DT_BOOL", specials=True)
elementwise("isnan", np.isnan, arity=1, result="DT_BOOL", specials=True)
elementwise("logical_not", lambda x: x == 0, arity=1, result="DT_BOOL", specials=True)
elementwise("bitwise_not", np.invert, arity=1)
