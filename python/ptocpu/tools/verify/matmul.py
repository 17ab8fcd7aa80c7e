"""verify's cases of the cube family (docs/ops/matmul.md, scaled_mm.md, transposed_batchmatmul.md): every
row of the dtype table on every platform that offers it, against numpy's float64 / int64 products.

- integer-valued operands, whose every partial sum is exact in fp32: bit for bit, through the rounding to
  out_dtype, the bias, ReLU and the 19-bit scales;
- random normal operands: within the error bound of an fp32 sum in any order (the device's order is not
  documented), `|out - exact| <= K 2^-24 sum|a b|` plus half an ulp of out_dtype, with MERE / MARE against
  the float64 product beside;
- the error rules, the cube tile's and each cube buffer's capacity on the chips.
"""
from __future__ import annotations

from typing import Iterator

import ml_dtypes
import numpy as np

import ptocpu

from .. import reference as _reference
from .common import PLATFORMS, Case, _compare, _expect_error, _platform_dtypes, cases_for

# The page's tables: input -> mat2 dtypes, out dtypes of a plain product. Every input also quantises
# to DT_INT8 (with a scale); DT_INT8 dequantises to DT_FP16.
_TABLE = {
    "DT_FP16": (("DT_FP16",), ("DT_FP16", "DT_FP32")),
    "DT_BF16": (("DT_BF16",), ("DT_BF16", "DT_FP32")),
    "DT_FP32": (("DT_FP32",), ("DT_FP32",)),
    "DT_INT8": (("DT_INT8",), ("DT_INT32",)),
    "DT_FP8E4M3": (("DT_FP8E4M3", "DT_FP8E5M2"), ("DT_FP16", "DT_BF16", "DT_FP32")),
    "DT_FP8E5M2": (("DT_FP8E4M3", "DT_FP8E5M2"), ("DT_FP16", "DT_BF16", "DT_FP32")),
    "DT_HF8": (("DT_HF8",), ("DT_FP16", "DT_BF16", "DT_FP32")),
}
# An out dtype's unit roundoff (0: exact).
_EPS = {"DT_FP32": 2.0 ** -24, "DT_FP16": 2.0 ** -11, "DT_BF16": 2.0 ** -8, "DT_INT32": 0.0, "DT_INT8": 0.0}


def _np(dtype: str) -> np.dtype:
    return np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))


# A cube tile every operand dtype accepts (kL0, nL0 32-byte aligned), within every chip's buffers.
_TILE = ([32, 64], [64, 128], [32, 64])


class _Tile:
    """The case's cube tile for its duration (the chips require one)."""

    def __enter__(self):
        ptocpu.set_cube_tile_shapes(*_TILE)

    def __exit__(self, *exc):
        ptocpu._core._reset_cube_tile_shapes()
        return False


def _exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    wide = np.int64 if np.issubdtype(a.dtype, np.integer) else np.float64
    return a.astype(wide) @ b.astype(wide)


def _rounded(values: np.ndarray, out: str) -> np.ndarray:
    if out == "DT_INT8":
        return np.clip(np.rint(values), -128, 127).astype(np.int8)
    return values.astype(_np(out))


def _operand(values: np.ndarray, dtype: str):
    """float64 values exactly representable in dtype -> what matmul takes: an array, or for
    DT_HF8 (no numpy dtype) its codes seen as DT_HF8 (the reference encoder, not ptocpu's)."""
    if dtype == "DT_HF8":
        return ptocpu.view(ptocpu.asarray(_reference.to_hifloat8(values)), dtype=ptocpu.DT_HF8)
    return values.astype(_np(dtype))


def _integers(rng, shape, dtype: str) -> np.ndarray:
    return rng.integers(-3, 4, size=shape).astype(_np(dtype))


def _integer_operand(rng, shape, dtype: str):
    """Small integers in dtype, and their values (integers or float64)."""
    values = rng.integers(-3, 4, size=shape)
    return _operand(values.astype(np.float64), dtype), values.astype(np.int64 if dtype == "DT_INT8" else np.float64)


def _normal(rng, shape, dtype: str):
    """Normal values rounded to dtype, and their float64 values."""
    if dtype == "DT_HF8":
        values = _reference.HIFLOAT8_VALUES[_reference.to_hifloat8(rng.standard_normal(shape))]
        return _operand(values, dtype), values
    values = rng.standard_normal(shape).astype(_np(dtype))
    return values, values.astype(np.float64)


def _within_fp32_sum(got, exact: np.ndarray, abs_sum: np.ndarray, k: int, out: str) -> tuple[bool, str, list]:
    g = np.asarray(got.numpy()).astype(np.float64)
    bound = k * 2.0 ** -24 * abs_sum + _EPS[out] * np.abs(exact)
    excess = np.abs(g - exact) - bound * 1.0001
    pairs = [(got, _rounded(exact, out), exact)]
    if (excess > 0).any():
        i = np.unravel_index(int(np.argmax(excess)), excess.shape)
        return False, f"{g[i]!r} is {abs(g[i] - exact[i]):.3g} from the exact {exact[i]!r} (bound {bound[i]:.3g})", pairs
    return True, "", pairs


def _pairs(platform: str, quick: bool):
    """(input, mat2, out, fixpipe) rows the platform offers."""
    for a in _platform_dtypes(platform, "matmul"):
        mats, outs = _TABLE[a]
        for b in (mats if not quick else mats[:1]):
            for out in outs:
                yield a, b, out, False
            yield a, b, "DT_INT8", True
            if a == "DT_INT8":
                yield a, b, "DT_FP16", True


@cases_for("matmul")
def _matmul_cases(rng, quick) -> Iterator[Case]:
    shapes = [(17, 40, 23)] if quick else [(17, 40, 23), (64, 300, 48), (3, 2, 24, 64, 40)]
    for platform in PLATFORMS:
        for a_dt, b_dt, out, fixpipe in _pairs(platform, quick):
            extend = {"scale": 0.75} if fixpipe else None
            for shape in shapes:
                *batch, m, k, n = shape

                def integers(a_dt=a_dt, b_dt=b_dt, out=out, extend=extend, batch=tuple(batch), m=m, k=k, n=n):
                    a, a_values = _integer_operand(rng, (*batch, m, k), a_dt)
                    b, b_values = _integer_operand(rng, (*batch, k, n), b_dt)
                    exact = _exact(a_values, b_values) * (extend["scale"] if extend else 1)
                    with _Tile():
                        got = ptocpu.matmul(a, b, getattr(ptocpu, out), extend_params=extend)
                    return _compare([(got, _rounded(exact, out), exact.astype(np.float64))])
                yield Case("matmul", platform, a_dt, f"{b_dt} -> {out}{' scale 0.75' if extend else ''}, integers "
                           f"{list(shape)}", integers)
                if a_dt == "DT_INT8" or fixpipe:
                    continue

                def normal(a_dt=a_dt, b_dt=b_dt, out=out, batch=tuple(batch), m=m, k=k, n=n):
                    a, av = _normal(rng, (*batch, m, k), a_dt)
                    b, bv = _normal(rng, (*batch, k, n), b_dt)
                    with _Tile():
                        got = ptocpu.matmul(a, b, getattr(ptocpu, out))
                    return _within_fp32_sum(got, _exact(av, bv), np.abs(av) @ np.abs(bv), k, out)
                yield Case("matmul", platform, a_dt, f"{b_dt} -> {out}, normal {list(shape)}", normal)
        yield from _matmul_rule_cases(rng, platform)


def _matmul_rule_cases(rng, platform: str) -> Iterator[Case]:
    def bias_relu_trans():
        a = _integers(rng, (2, 40, 16), "DT_FP16")  # [K, M] and [N, K]: given transposed
        b = _integers(rng, (2, 32, 40), "DT_FP16")
        bias = _integers(rng, (2, 1, 32), "DT_FP32")
        want = np.maximum(np.swapaxes(a.astype(np.float64), -1, -2) @ np.swapaxes(b.astype(np.float64), -1, -2) + bias, 0)
        with _Tile():
            got = ptocpu.matmul(a, b, ptocpu.DT_FP32, a_trans=True, b_trans=True,
                                extend_params={"bias_tensor": bias, "relu_type": ptocpu.ReLuType.RELU})
        return _compare([(got, want.astype(np.float32), want)])
    yield Case("matmul", platform, "DT_FP16", "a_trans, b_trans, 3-D bias, ReLU", bias_relu_trans)

    def per_channel():
        a, b = _integers(rng, (8, 64), "DT_INT8"), _integers(rng, (64, 32), "DT_INT8")
        scales = rng.uniform(0.1, 2.0, (1, 32)).astype(np.float32)
        cut = (scales.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
        want = (_exact(a, b).astype(np.float32) * cut).astype(np.float16)
        with _Tile():
            got = ptocpu.matmul(a, b, ptocpu.DT_FP16,
                                extend_params={"scale_tensor": scales.view(np.uint32).astype(np.uint64)})
        return _compare([(got, want, _exact(a, b) * cut.astype(np.float64))])
    yield Case("matmul", platform, "DT_INT8", "per-channel scale_tensor (19-bit) -> DT_FP16", per_channel)

    def broadcast():
        a, b = _integers(rng, (1, 32, 64), "DT_FP32"), _integers(rng, (3, 64, 16), "DT_FP32")
        want = _exact(a, b)
        with _Tile():
            got = ptocpu.matmul(a, b, ptocpu.DT_FP32)
        return _compare([(got, want.astype(np.float32), want.astype(np.float64))])
    yield Case("matmul", platform, "DT_FP32", "page example: [1, 32, 64] @ [3, 64, 16]", broadcast)

    f16 = np.ones((16, 32), np.float16)

    def error(call, kind, needle):
        def run():
            with _Tile():
                return _expect_error(call, kind, needle)
        return run
    yield Case("matmul", platform, "DT_FP16", "error: K",
               error(lambda: ptocpu.matmul(f16, f16, ptocpu.DT_FP32), ptocpu.ArgumentError, "K of input"))
    yield Case("matmul", platform, "DT_FP16", "error: out_dtype",
               error(lambda: ptocpu.matmul(f16, f16.T, ptocpu.DT_BF16), ptocpu.DTypeError,
                     "out_dtype DT_BF16 is not supported for DT_FP16"))
    yield Case("matmul", platform, "DT_FP16", "error: scale without a fixpipe conversion",
               error(lambda: ptocpu.matmul(f16, f16.T, ptocpu.DT_FP32, extend_params={"scale": 2.0}),
                     ptocpu.DTypeError, "scale needs"))
    if platform == "cpu":
        return
    yield Case("matmul", platform, "DT_FP16", "error: no cube tile",
               lambda: _expect_error(lambda: ptocpu.matmul(f16, f16.T, ptocpu.DT_FP32), ptocpu.TileError,
                                     "no cube tile shape is set"))
    # One tile per buffer that only that buffer refuses, over fp16 operands as large as its L1 tiles
    # (the checks count tiles clipped to the product).
    for buffer, tile, extend in (
            ("L0A", ([144, 144], [256, 256], [128, 128]), None),
            ("L0B", ([16, 16], [256, 256], [144, 144]), None),
            ("L0C", ([256, 256], [16, 16], [512, 512]), None),
            ("L1", ([128, 512], [64, 512], [128, 512]), None),
            ("bias table", ([16, 16], [16, 16], [1040, 1040]), "bias")):
        def capacity(buffer=buffer, tile=tile, extend=extend):
            ptocpu.set_cube_tile_shapes(*tile)
            (_, m), (_, k), (_, n) = tile
            params = {"bias_tensor": np.ones((1, n), np.float32)} if extend else None
            try:
                return _expect_error(lambda: ptocpu.matmul(np.ones((m, k), np.float16), np.ones((k, n), np.float16),
                                                           ptocpu.DT_FP32, extend_params=params),
                                     ptocpu.TileError, f"bytes of {buffer} (")
            finally:
                ptocpu._core._reset_cube_tile_shapes()
        yield Case("matmul", platform, "DT_FP16", f"error: {buffer} capacity", capacity)


@cases_for("scaled_mm")
def _scaled_mm_cases(rng, quick) -> Iterator[Case]:
    e8 = np.dtype(ml_dtypes.float8_e8m0fnu)
    for platform in PLATFORMS:
        for a_dt in _platform_dtypes(platform, "scaled_mm"):
            for out in ("DT_FP32", "DT_BF16"):
                b_dt = a_dt if a_dt == "DT_FP4_E2M1" else "DT_FP8E4M3"  # FP4 pairs with FP4 only

                def run(a_dt=a_dt, b_dt=b_dt, out=out):
                    m, k, n = 16, 160, 24
                    a, b = _integers(rng, (m, k), a_dt), _integers(rng, (k, n), b_dt)
                    k64 = (k + 63) // 64
                    sa = rng.integers(124, 131, (m, k64, 2)).astype(np.uint8)
                    sb = rng.integers(124, 131, (k64, n, 2)).astype(np.uint8)
                    ea = sa.reshape(m, -1).astype(np.float64)[:, np.arange(k) // 32]
                    eb = sb.transpose(1, 0, 2).reshape(n, -1).astype(np.float64)[:, np.arange(k) // 32].T
                    exact = (a.astype(np.float64) * 2.0 ** (ea - 127)) @ (b.astype(np.float64) * 2.0 ** (eb - 127))
                    ptocpu.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
                    try:
                        got = ptocpu.scaled_mm(a, b, getattr(ptocpu, out), sa.view(e8), sb.view(e8))
                    finally:
                        ptocpu._core._reset_cube_tile_shapes()
                    return _compare([(got, exact.astype(np.float32).astype(_np(out)), exact)])
                yield Case("scaled_mm", platform, a_dt, f"x {b_dt} -> {out}, [16, 160] x [160, 24], integers", run)
        if _platform_dtypes(platform, "scaled_mm"):
            one = np.ones((16, 128), ml_dtypes.float8_e4m3fn)
            def scale_shape(one=one):
                with _Tile():
                    return _expect_error(lambda: ptocpu.scaled_mm(
                        one, one.T, ptocpu.DT_BF16, np.full((16, 3, 2), 127, np.uint8).view(e8),
                        np.full((2, 16, 2), 127, np.uint8).view(e8)), ptocpu.ArgumentError, "scale_a shape [16, 3, 2]")
            yield Case("scaled_mm", platform, "DT_FP8E4M3", "error: scale shape", scale_shape)
        else:
            yield Case("scaled_mm", platform, "DT_FP8E4M3", "not offered",
                       lambda: _expect_error(lambda: ptocpu.scaled_mm(None, None, None, None, None),
                                             ptocpu.UnsupportedError, "not offered"))


@cases_for("transposed_batchmatmul")
def _transposed_batchmatmul_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "transposed_batchmatmul"):
            def run(dtype=dtype):
                a, b = _integers(rng, (24, 3, 32), dtype), _integers(rng, (3, 32, 40), dtype)
                exact = np.einsum("mbk,bkn->mbn", a.astype(np.float64), b.astype(np.float64))
                with _Tile():
                    got = ptocpu.experimental.transposed_batchmatmul(a, b, getattr(ptocpu, dtype))
                return _compare([(got, exact.astype(_np(dtype)), exact)])
            yield Case("transposed_batchmatmul", platform, dtype, "[24, 3, 32] x [3, 32, 40], integers", run)
        yield Case("transposed_batchmatmul", platform, "DT_FP16", "error: B",
                   lambda: _expect_error(lambda: ptocpu.experimental.transposed_batchmatmul(
                       np.ones((4, 2, 8), np.float16), np.ones((3, 8, 4), np.float16), ptocpu.DT_FP16),
                       ptocpu.ArgumentError, "disagree on B or K"))
