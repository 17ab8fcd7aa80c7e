"""verify's cases of conv (docs/ops/conv.md): every dtype on every platform, 1-D, 2-D and 3-D with
strides, asymmetric paddings, dilations, groups, a bias and ReLU, against the float64
convolution of the same values from its definition (numpy: verify needs no torch).

- integer-valued operands, whose every partial sum is exact in fp32: bit for bit, through the bias,
  ReLU and the rounding to the output dtype;
- random normal operands: within the error bound of an fp32 sum in any order, `|out - exact| <= K
  2^-24 sum|x w|` plus half an ulp of the output dtype, with MERE / MARE against float64 beside;
- the error rules, the conv tile and a buffer's capacity on the chips.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

import ptocpu

from .common import PLATFORMS, Case, _compare, _expect_error, _platform_dtypes, cases_for

_EPS = {"DT_FP32": 2.0 ** -24, "DT_FP16": 2.0 ** -11, "DT_BF16": 2.0 ** -8}

# (input shape, weight shape, strides, paddings, dilations, groups)
_SHAPES = [
    ((2, 4, 37), (6, 2, 3), [2], [1, 2], [2], 2),
    ((2, 6, 19, 23), (8, 6, 3, 2), [2, 1], [2, 0, 1, 1], [1, 2], 1),
    ((1, 6, 5, 9, 11), (6, 2, 2, 3, 3), [1, 2, 1], [1, 0, 0, 2, 1, 1], [2, 1, 1], 3),
]


def _np(dtype: str) -> np.dtype:
    return np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))


def _reference(x, w, strides, paddings, dilations, groups, bias=None, absolute=False) -> np.ndarray:
    """The convolution from its definition in float64 (numpy only: verify runs without torch): the
    input padded explicitly, then per group and kernel offset the strided, dilated window times that
    weight tap, summed."""
    nd = x.ndim - 2
    x64 = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(paddings[2 * d], paddings[2 * d + 1]) for d in range(nd)])
    w64 = w.astype(np.float64)
    b64 = None if bias is None else bias.astype(np.float64)
    if absolute:
        x64, w64, b64 = np.abs(x64), np.abs(w64), None if b64 is None else np.abs(b64)
    kernel = w64.shape[2:]
    out_sizes = [(x64.shape[2 + d] - dilations[d] * (kernel[d] - 1) - 1) // strides[d] + 1 for d in range(nd)]
    out = np.zeros((x64.shape[0], w64.shape[0], *out_sizes))
    cin, cout = x64.shape[1] // groups, w64.shape[0] // groups
    for g in range(groups):
        xg, wg = x64[:, g * cin:(g + 1) * cin], w64[g * cout:(g + 1) * cout]
        for tap in np.ndindex(*kernel):
            window = tuple(slice(tap[d] * dilations[d], tap[d] * dilations[d] + strides[d] * (out_sizes[d] - 1) + 1,
                                 strides[d]) for d in range(nd))
            out[:, g * cout:(g + 1) * cout] += np.einsum("nc...,oc->no...", xg[(slice(None), slice(None)) + window],
                                                         wg[(slice(None), slice(None)) + tap])
    if b64 is not None:
        out += b64.reshape(1, -1, *([1] * nd))
    return out


class _Tile:
    """A conv tile every shape here accepts (the chips require one): one output row of 16, C0 input
    channels, 16 output channels, no L0 tile."""

    def __init__(self, dtype: str):
        self.c0 = 32 // _np(dtype).itemsize

    def __enter__(self):
        ptocpu.set_conv_tile_shapes(ptocpu.pypto_impl.TileL1Info(1, 1, 1, 16, self.c0, self.c0, 16, 1))

    def __exit__(self, *exc):
        ptocpu._core._reset_conv_tile_shapes()
        return False


def _bias_dtype(platform: str, dtype: str) -> str:
    return "DT_FP32" if platform in ("atlas_a2", "atlas_a3") and dtype == "DT_BF16" else dtype


@cases_for("conv")
def _conv_cases(rng, quick) -> Iterator[Case]:
    shapes = _SHAPES[1:2] if quick else _SHAPES
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "conv"):
            for shape, wshape, strides, paddings, dilations, groups in shapes:
                label = f"{len(shape) - 2}-D {list(shape)} x {list(wshape)} s{strides} p{paddings} d{dilations} g{groups}"
                geometry = (strides, paddings, dilations, groups)

                def integers(dtype=dtype, platform=platform, shape=shape, wshape=wshape, geometry=geometry):
                    x = rng.integers(-3, 4, shape).astype(_np(dtype))
                    w = rng.integers(-3, 4, wshape).astype(_np(dtype))
                    bias = rng.integers(-3, 4, wshape[:1]).astype(_np(_bias_dtype(platform, dtype)))
                    exact = np.maximum(_reference(x, w, *geometry, bias), 0)
                    with _Tile(dtype):
                        got = ptocpu.conv(x, w, getattr(ptocpu, dtype), *geometry[:3], groups=geometry[3],
                                          extend_params={"bias_tensor": bias, "relu_type": ptocpu.ConvReLuType.RELU})
                    return _compare([(got, exact.astype(_np(dtype)), exact)])
                yield Case("conv", platform, dtype, f"{label}, bias, ReLU, integers", integers)

                def normal(dtype=dtype, shape=shape, wshape=wshape, geometry=geometry):
                    x = rng.standard_normal(shape).astype(_np(dtype))
                    w = rng.standard_normal(wshape).astype(_np(dtype))
                    exact = _reference(x, w, *geometry)
                    bound = (int(np.prod(wshape[1:])) * 2.0 ** -24 * _reference(x, w, *geometry, absolute=True)
                             + _EPS[dtype] * np.abs(exact))
                    with _Tile(dtype):
                        got = ptocpu.conv(x, w, getattr(ptocpu, dtype), *geometry[:3], groups=geometry[3])
                    g = np.asarray(got.numpy()).astype(np.float64)
                    pairs = [(got, exact.astype(_np(dtype)), exact)]
                    excess = np.abs(g - exact) - bound * 1.0001
                    if (excess > 0).any():
                        i = np.unravel_index(int(np.argmax(excess)), excess.shape)
                        return False, f"{g[i]!r} is {abs(g[i] - exact[i]):.3g} from the exact {exact[i]!r}", pairs
                    return True, "", pairs
                yield Case("conv", platform, dtype, f"{label}, normal", normal)
        yield from _rule_cases(platform)


def _rule_cases(platform: str) -> Iterator[Case]:
    x, w = np.ones((1, 16, 8, 8), np.float16), np.ones((16, 16, 3, 3), np.float16)

    def error(call, kind, needle):
        def run():
            with _Tile("DT_FP16"):
                return _expect_error(call, kind, needle)
        return run
    yield Case("conv", platform, "DT_FP16", "error: padding not below the kernel",
               error(lambda: ptocpu.conv(x, w, ptocpu.DT_FP16, [1, 1], [3, 0, 0, 0], [1, 1]), ptocpu.ArgumentError,
                     "must each be < the kernel's 3"))
    yield Case("conv", platform, "DT_FP16", "error: groups",
               error(lambda: ptocpu.conv(x, w, ptocpu.DT_FP16, [1, 1], [0] * 4, [1, 1], groups=3), ptocpu.ArgumentError,
                     "groups 3 must divide Cin"))
    yield Case("conv", platform, "DT_FP16", "error: out_dtype",
               error(lambda: ptocpu.conv(x, w, ptocpu.DT_FP32, [1, 1], [0] * 4, [1, 1]), ptocpu.DTypeError,
                     "must be input_conv's dtype"))
    yield Case("conv", platform, "DT_FP16", "error: transposed",
               error(lambda: ptocpu.conv(x, w, ptocpu.DT_FP16, [1, 1], [0] * 4, [1, 1], transposed=True),
                     ptocpu.UnsupportedError, "transposed=True"))
    if platform == "cpu":
        return
    yield Case("conv", platform, "DT_FP16", "error: no conv tile",
               lambda: _expect_error(lambda: ptocpu.conv(x, w, ptocpu.DT_FP16, [1, 1], [0] * 4, [1, 1]),
                                     ptocpu.TileError, "no conv tile shape is set"))

    def l0a():
        wide = np.ones((16, 128, 3, 3), np.float16)
        # tileH 1 * tileW 32 * tileK 1152 * 2 bytes = 73728 > 65536; the other rules hold.
        ptocpu.set_conv_tile_shapes(ptocpu.pypto_impl.TileL1Info(1, 1, 8, 32, 128, 128, 16, 1),
                                    ptocpu.pypto_impl.TileL0Info(1, 32, 1152, 16))
        try:
            return _expect_error(lambda: ptocpu.conv(np.ones((1, 128, 8, 34), np.float16), wide, ptocpu.DT_FP16,
                                                     [1, 1], [0] * 4, [1, 1]), ptocpu.TileError, "bytes of L0A (")
        finally:
            ptocpu._core._reset_conv_tile_shapes()
    yield Case("conv", platform, "DT_FP16", "error: L0A capacity", l0a)
