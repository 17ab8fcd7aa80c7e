"""quantize, dequantize and quant_mx (docs/ops/quantize.md, dequantize.md, quant_mx.md) against
references written from the device's formulas (ptocpu.tools.reference_composite) bit for bit; the
pages' examples (and where the pages' printed results disagree with the device); every dtype of
every platform row, both axes, both scale forms; rounding ties, saturation, NaN / inf; strided
inputs and valid shapes; every error and tile rule; 1 and 2 threads."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, ranks_of
from ptocpu.tools import reference_composite as ref

BF16 = np.dtype(ml_dtypes.bfloat16)
E8M0 = np.dtype(ml_dtypes.float8_e8m0fnu)


def scale_shape(shape, axis, keepdim=False):
    s = list(shape)
    if keepdim:
        s[axis] = 1
    else:
        del s[axis]
    return tuple(s)


# ---- quantize / dequantize -----------------------------------------------------------------------

def test_quantize_every_dtype_axis_and_form(platform):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "quantize"):
        for rank in ranks_of(platform, "quantize"):
            shape = tuple(int(v) for v in rng.integers(1, 6, rank))
            x = (rng.standard_normal(shape) * 100).astype(np.float32).astype(dt)
            for axis in ([-1, -2] if rank >= 2 else [-1]):
                for keepdim in (False, True):
                    s = rng.uniform(0.01, 3, scale_shape(shape, axis, keepdim)).astype(np.float32)
                    zp = rng.uniform(-20, 150, s.shape).astype(np.float32)
                    got = ptocpu.quantize(x, s, ptocpu.DT_INT8, axis)
                    assert_same_bits(got, ref.quantize(x, s, axis))
                    got = ptocpu.quantize(x, s, ptocpu.DT_UINT8, axis + rank, zp)  # a positive axis
                    assert_same_bits(got, ref.quantize(x, s, axis, zp))


def test_dequantize_every_dtype_axis_and_form(platform):
    rng = np.random.default_rng(10 + PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "dequantize"):
        info = np.iinfo(dt)
        for rank in ranks_of(platform, "dequantize"):
            shape = tuple(int(v) for v in rng.integers(1, 6, rank))
            x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dt)
            for axis in ([-1, -2] if rank >= 2 else [-1]):
                for keepdim in (False, True):
                    s = rng.standard_normal(scale_shape(shape, axis, keepdim)).astype(np.float32)
                    zp = rng.uniform(-20, 20, s.shape).astype(np.float32)
                    assert_same_bits(ptocpu.dequantize(x, s, ptocpu.DT_FP32, axis), ref.dequantize(x, s, axis))
                    assert_same_bits(ptocpu.dequantize(x, s, ptocpu.DT_FP32, axis, zp),
                                     ref.dequantize(x, s, axis, zp))


def test_quantize_page_examples():
    x = np.array([[1.1, -2.2, 3.3, -4.4]] * 3, np.float32)
    scale = np.ones(3, np.float32)
    assert ptocpu.quantize(x, scale, ptocpu.DT_INT8, -1, None).tolist() == [[1, -2, 3, -4]] * 3
    # The page's asymmetric example prints [6, 3, 8, 1] for zero_points -5, which is
    # round(x * scale - zero_points); its formula, the device kernel and upstream's tests add the
    # zero point: round(x - 5) clamps to 0 (docs/ops/quantize.md).
    zp = np.full(3, -5.0, np.float32)
    assert ptocpu.quantize(x, scale, ptocpu.DT_UINT8, -1, zp).tolist() == [[0, 0, 0, 0]] * 3
    assert ptocpu.quantize(x, scale, ptocpu.DT_UINT8, -1, -zp).tolist() == [[6, 3, 8, 1]] * 3


def test_dequantize_page_examples():
    x = np.array([[1, 2, 3, 4]] * 3, np.int8)
    scale = np.ones((3, 1), np.float32)  # the page declares scale [3, 1]: the keepdim form
    assert ptocpu.dequantize(x, scale, ptocpu.DT_FP32, -1, None).tolist() == [[1.0, 2.0, 3.0, 4.0]] * 3
    # The page prints [-1, 0, 1, 2] for zero_points -2, i.e. x + zero_points; the device kernel and
    # upstream's tests subtract it (docs/ops/dequantize.md): (x - -2) * 1.
    zp = np.full((3, 1), -2.0, np.float32)
    assert ptocpu.dequantize(x, scale, ptocpu.DT_FP32, -1, zp).tolist() == [[3.0, 4.0, 5.0, 6.0]] * 3


def test_quantize_rounding_saturation_and_specials():
    x = np.array([[0.5, 1.5, 2.5, -2.5, 3.5, 126.5, 127.5, 300.0, -128.5, -1e30, np.inf, -np.inf, np.nan, -0.4]],
                 np.float32)
    got = ptocpu.quantize(x, np.ones(1, np.float32), ptocpu.DT_INT8, -1).tolist()
    assert got == [[0, 2, 2, -2, 4, 126, 127, 127, -128, -128, 127, -128, 0, 0]]
    got = ptocpu.quantize(x, np.ones(1, np.float32), ptocpu.DT_UINT8, -1, np.full(1, 0.5, np.float32)).tolist()
    assert got == [[1, 2, 3, 0, 4, 127, 128, 255, 0, 0, 255, 0, 0, 0]]
    # the scaled value is rounded to fp32 before the zero point is added (no fused multiply-add):
    # x * s = 130.5 + 7.5e-6 rounds to 130.5, minus 128 is a tie that goes to 2; fused it would be 3
    x = np.array([[130.5 + 2 ** -16]], np.float32)
    s = np.array([1 - 2 ** -24], np.float32)
    assert (x * s)[0, 0] == np.float32(130.5)
    assert ptocpu.quantize(x, s, ptocpu.DT_UINT8, -1, np.full(1, -128.0, np.float32)).tolist() == [[2]]


def test_quantize_matches_upstreams_golden_formula():
    rng = np.random.default_rng(3)
    x = torch.rand(32, 64) * 20 - 10
    s = torch.rand(32) * 0.14 + 0.01
    zp = torch.rand(32) * 10
    golden = torch.clamp(torch.round(x * s[:, None]).to(torch.int32), -128, 127).to(torch.int8)
    assert ptocpu.quantize(x.numpy(), s.numpy(), ptocpu.DT_INT8, -1).tolist() == golden.tolist()
    golden = torch.clamp(torch.round(x * s[:, None] + zp[:, None]), 0, 255).to(torch.uint8)
    assert ptocpu.quantize(x.numpy(), s.numpy(), ptocpu.DT_UINT8, -1, zp.numpy()).tolist() == golden.tolist()
    q = rng.integers(-128, 128, (32, 64)).astype(np.int8)
    golden = ((torch.from_numpy(q).float() - zp[:, None]) * s[:, None]).numpy()
    assert_same_bits(ptocpu.dequantize(q, s.numpy(), ptocpu.DT_FP32, -1, zp.numpy()), golden)


def test_quant_strided_valid_shape_and_threads():
    rng = np.random.default_rng(4)
    base = (rng.standard_normal((700, 900)) * 50).astype(np.float32)
    s = rng.uniform(0.1, 2, 900).astype(np.float32)
    for view, sv in ((base[::2, ::-1], s[::-1]), (base.T, s)):
        axis = -2
        assert_same_bits(ptocpu.quantize(view, sv[:view.shape[-1]], ptocpu.DT_INT8, axis),
                         ref.quantize(view, sv[:view.shape[-1]], axis))
    t = ptocpu.view(ptocpu.asarray(base), [8, 16], [0, 0], valid_shape=[5, 9])
    got = ptocpu.quantize(t, s[:5], ptocpu.DT_INT8, -1)
    assert_same_bits(got, ref.quantize(base[:5, :9], s[:5], -1))
    ptocpu.set_num_threads(1)
    one = ptocpu.quantize(base, s[:700], ptocpu.DT_INT8, -1).numpy()
    ptocpu.set_num_threads(2)
    assert_same_bits(ptocpu.quantize(base, s[:700], ptocpu.DT_INT8, -1), one)


def test_quant_errors_and_tiles():
    x = np.zeros((4, 16), np.float32)
    s, zp = np.ones(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(ptocpu.DTypeError, match="quantize: otype DT_UINT8 is not supported without zero_points; allowed: DT_INT8"):
        ptocpu.quantize(x, s, ptocpu.DT_UINT8, -1)
    with pytest.raises(ptocpu.DTypeError, match="otype DT_INT8 is not supported with zero_points; allowed: DT_UINT8"):
        ptocpu.quantize(x, s, ptocpu.DT_INT8, -1, zp)
    with pytest.raises(ptocpu.DTypeError, match="dequantize: otype DT_FP16 is not supported; allowed: DT_FP32"):
        ptocpu.dequantize(x.astype(np.int8), s, ptocpu.DT_FP16, -1)
    with pytest.raises(ptocpu.DTypeError, match="dequantize: input dtype DT_FP32"):
        ptocpu.dequantize(x, s, ptocpu.DT_FP32, -1)
    with pytest.raises(ptocpu.DTypeError, match="quantize: scale dtype DT_FP16"):
        ptocpu.quantize(x, s.astype(np.float16), ptocpu.DT_INT8, -1)
    with pytest.raises(ptocpu.DTypeError, match="zero_points dtype DT_INT32"):
        ptocpu.quantize(x, s, ptocpu.DT_UINT8, -1, zp.astype(np.int32))
    with pytest.raises(ptocpu.ArgumentError, match=r"scale shape \[16\] must be \[4\] \(or \[4, 1\]\)"):
        ptocpu.quantize(x, np.ones(16, np.float32), ptocpu.DT_INT8, -1)
    with pytest.raises(ptocpu.ArgumentError, match=r"zero_points shape \[4\] must be \[16\] \(or \[1, 16\]\)"):
        ptocpu.quantize(x, np.ones(16, np.float32), ptocpu.DT_UINT8, -2, zp)
    with pytest.raises(ptocpu.ArgumentError, match="axis 0 is not supported for an input of rank 3"):
        ptocpu.quantize(x[None], s, ptocpu.DT_INT8, 0)
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"dequantize: axis -2 is out of range \[-1, 1\) for an input of rank 1"):
        ptocpu.dequantize(np.zeros(4, np.int8), np.ones(1, np.float32), ptocpu.DT_FP32, -2)
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"axis 2 is out of range \[-2, 2\)"):
        ptocpu.quantize(x, s, ptocpu.DT_INT8, 2)
    with ptocpu.platform("atlas_a3"):
        with pytest.raises(ptocpu.DTypeError, match="quantize: input dtype DT_FP16"):
            ptocpu.quantize(x.astype(np.float16), s, ptocpu.DT_INT8, -1)
        with pytest.raises(ptocpu.ArgumentError, match="rank 5"):
            ptocpu.quantize(np.zeros((1, 1, 1, 4, 16), np.float32), np.ones((1, 1, 1, 4), np.float32),
                            ptocpu.DT_INT8, -1)
        with ptocpu.vec_tile_shapes(4, 16, 1), pytest.raises(ptocpu.TileError, match="has rank 3"):
            ptocpu.quantize(x, s, ptocpu.DT_INT8, -1)
        big = np.zeros((128, 256), np.float32)
        with ptocpu.vec_tile_shapes(128, 256), pytest.raises(ptocpu.TileError, match="int32 workspace 131072"):
            ptocpu.quantize(big, np.ones(128, np.float32), ptocpu.DT_INT8, -1)
        with ptocpu.vec_tile_shapes(128, 256):  # no workspace for dequantize
            assert ptocpu.dequantize(big.astype(np.int8), np.ones(128, np.float32), ptocpu.DT_FP32, -1).shape == [128, 256]


# ---- quant_mx --------------------------------------------------------------------------------------

def mx_data(rng, shape, dt) -> np.ndarray:
    """Values over many binades, zeros and whole zero groups."""
    span = 12 if np.dtype(dt) == np.float16 else 20
    v = rng.standard_normal(shape) * np.exp2(rng.integers(-span, span, shape))
    v[rng.random(shape) < 0.05] = 0.0
    return v.astype(np.float32).astype(dt)


@pytest.mark.parametrize("platform", ["cpu", "ascend950"])
def test_quant_mx_every_dtype_mode_axis_and_rank(platform):
    rng = np.random.default_rng(20)
    with ptocpu.platform(platform):
        for dt in dtypes_of(platform, "quant_mx"):
            for rank in range(1, 5):
                shape = tuple(int(v) for v in rng.integers(1, 3, rank - 1)) + (128,)
                x = mx_data(rng, shape, dt)
                for mode, round_up in ((ptocpu.ROUND_DOWN, False), (ptocpu.ROUND_UP, True)):
                    q, s = ptocpu.quant_mx(x, ptocpu.DT_FP8E4M3, mode, -1, True)
                    wq, ws = ref.quant_mx(x, round_up, -1)
                    assert_same_bits(q, wq)
                    assert_same_bits(s, ws.view(E8M0))
                    if rank >= 2:
                        x2 = mx_data(rng, shape[:-2] + (128, 40), dt)
                        q, s = ptocpu.quant_mx(x2, ptocpu.DT_FP8E4M3, mode, -2, False)
                        wq, ws = ref.quant_mx(x2, round_up, -2)
                        assert s.shape == list(shape[:-2]) + [2, 40, 2]
                        assert_same_bits(q, wq)
                        assert_same_bits(s, ws.view(E8M0))


def test_quant_mx_special_groups():
    g = np.ones((8, 32), np.float32)
    g[0, 3] = np.nan  # NaN scale; the NaN keeps its sign
    g[1, 5] = -np.nan
    g[2, 0] = np.inf  # infinity: saturates, OCP exponent 247, NV 254
    g[3] = 0.0  # zero group: exponent 0
    g[4] = np.float32(2 ** -140)  # subnormal magnitudes
    g[5, 0] = 1.9  # 1.9 * 2^8 = 486.4 saturates to 448 with the OCP exponent
    g[6] = np.linspace(-448, 448, 32)
    g[7, :16] = 2.0 ** -20  # a value 2^20 below the group's max rounds to 0
    x = g.reshape(1, 256)
    for mode, round_up in ((ptocpu.ROUND_DOWN, False), (ptocpu.ROUND_UP, True)):
        q, s = ptocpu.quant_mx(x, mode=mode)
        wq, ws = ref.quant_mx(x, round_up)
        assert_same_bits(q, wq)
        assert_same_bits(s, ws.view(E8M0))
        codes, exps = q.numpy().view(np.uint8).reshape(8, 32), s.numpy().view(np.uint8).reshape(8)
        assert exps[0] == 255 and codes[0, 3] == 0x7F and (np.delete(codes[0], 3) == 0x7F).all()
        assert codes[1, 5] == 0xFF
        assert exps[2] == (254 if round_up else 247) and codes[2, 0] == 0x7E
        assert exps[3] == 0 and (codes[3] == 0).all()
    q, s = ptocpu.quant_mx(x)
    assert q.numpy().view(np.uint8)[0, 5 * 32] == 0x7E and s.numpy().view(np.uint8)[0, 2, 1] == 119


def test_quant_mx_bf16_nv_rounds_the_scaled_value():
    # ROUND_UP with bf16 input: the scaled value is rounded to bf16 before E4M3 (the sheet's
    # explicit intermediate rounding); it only shows where x * 2^-k is below bf16's normal range
    x = np.full((1, 64), 2.0 ** -126, np.float32)
    x[0, 0] = 2.0 ** 100 * 448  # k = 100: every other value lands at 2^-226 -> 0 either way
    x[0, 32:] = np.float32(2.0 ** -130) * 3  # a bf16 subnormal group
    xb = x.astype(BF16)
    q, s = ptocpu.quant_mx(xb, mode=ptocpu.ROUND_UP, performance_mode=False)
    wq, ws = ref.quant_mx(xb, True)
    assert_same_bits(q, wq)
    assert_same_bits(s, ws.view(E8M0))


def test_quant_mx_page_and_upstream_examples():
    q, s = ptocpu.quant_mx(np.ones((8, 64), np.float32))
    assert q.dtype == ptocpu.DT_FP8E4M3 and q.shape == [8, 64]
    assert s.dtype == ptocpu.DT_FP8E8M0 and s.shape == [8, 1, 2]
    x = np.random.default_rng(1).standard_normal((2, 512)).astype(np.float32)
    q, s = ptocpu.quant_mx(x, ptocpu.DT_FP8E4M3, ptocpu.ROUND_UP, -1, False)
    assert s.shape == [2, 8, 2]
    with ptocpu.platform("ascend950"), ptocpu.vec_tile_shapes(64, 96):
        x = np.random.default_rng(2).standard_normal((128, 96)).astype(np.float16)
        q, s = ptocpu.quant_mx(x, ptocpu.DT_FP8E4M3, ptocpu.ROUND_DOWN, -2, False)
        assert q.shape == [128, 96] and s.shape == [2, 96, 2]
        wq, ws = ref.quant_mx(x, False, -2)
        assert_same_bits(q, wq)
    # upstream's onboard test: linspace(-7.5, 7.5) over [4, 256], fp32, ROUND_DOWN
    x = torch.linspace(-7.5, 7.5, 1024, dtype=torch.float32).reshape(4, 256).numpy()
    q, s = ptocpu.asarray(x).quant_mx()
    wq, ws = ref.quant_mx(x)
    assert_same_bits(q, wq)
    assert s.shape == [4, 4, 2] and s.numpy().view(np.uint8).ravel().tolist() == ws.ravel().tolist()


def test_quant_mx_strided_and_threads():
    rng = np.random.default_rng(5)
    base = mx_data(rng, (640, 512), np.float32)
    view = base[::2, ::-1]
    q, s = ptocpu.quant_mx(view, performance_mode=False)
    wq, ws = ref.quant_mx(view)
    assert_same_bits(q, wq)
    for axis in (-1, -2):
        ptocpu.set_num_threads(1)
        one = [t.numpy() for t in ptocpu.quant_mx(base, axis=axis)]
        ptocpu.set_num_threads(2)
        two = [t.numpy() for t in ptocpu.quant_mx(base, axis=axis)]
        assert_same_bits(two[0], one[0])
        assert_same_bits(two[1], one[1])


def test_quant_mx_errors_and_tiles():
    x = np.zeros((4, 64), np.float32)
    with pytest.raises(ptocpu.DTypeError, match="quant_mx: quant_dtype DT_FP8E5M2 is not supported; allowed: DT_FP8E4M3, DT_FP4_E2M1X2"):
        ptocpu.quant_mx(x, ptocpu.DT_FP8E5M2)
    with pytest.raises(ptocpu.ArgumentError, match="mode 2 is not supported"):
        ptocpu.quant_mx(x, mode=2)
    with pytest.raises(ptocpu.DTypeError, match="input dtype DT_FP64"):
        ptocpu.quant_mx(x.astype(np.float64))
    with pytest.raises(ptocpu.ArgumentError, match="axis 0 is not supported for an input of rank 3"):
        ptocpu.quant_mx(x[None], axis=0)
    with pytest.raises(ptocpu.ArgumentError, match=r"second-last dim of 4; axis -2 needs a multiple of 64"):
        ptocpu.quant_mx(x, axis=-2)
    with pytest.raises(ptocpu.ArgumentError, match=r"last dim of 32; axis -1 needs a multiple of 64"):
        ptocpu.quant_mx(x[:, :32], performance_mode=False)
    with pytest.raises(ptocpu.ArgumentError, match=r"last dim of 64 \(128 bytes\); performance_mode needs a multiple of 256"):
        ptocpu.quant_mx(x.astype(np.float16))
    assert ptocpu.quant_mx(x.astype(np.float16), performance_mode=False)[1].shape == [4, 1, 2]
    with pytest.raises(ptocpu.IndexOutOfRange, match="axis -3 is out of range"):
        ptocpu.quant_mx(x, axis=-3)
    with ptocpu.platform("atlas_a2"), pytest.raises(ptocpu.UnsupportedError, match="quant_mx: not offered on platform atlas_a2"):
        ptocpu.quant_mx(x)
    with ptocpu.vec_tile_shapes(4, 32), pytest.raises(ptocpu.TileError, match="performance_mode needs the input's last dim, 64"):
        ptocpu.quant_mx(x)
    with ptocpu.vec_tile_shapes(4, 32):
        assert ptocpu.quant_mx(x, performance_mode=False)[0].shape == [4, 64]
    with ptocpu.vec_tile_shapes(32, 64), pytest.raises(ptocpu.TileError, match="second-last dim of 32; axis -2 needs"):
        ptocpu.quant_mx(np.zeros((64, 64), np.float32), axis=-2)
    with ptocpu.vec_tile_shapes(64), pytest.raises(ptocpu.TileError, match="has rank 1"):
        ptocpu.quant_mx(x)


# ---- quant_mx to fp4 E2M1 pairs (docs/ops/quant_mx.md#fp4) ------------------------------------------

FP4 = ptocpu.DT_FP4_E2M1X2
MODES = ((ptocpu.ROUND_DOWN, False), (ptocpu.ROUND_UP, True))


def assert_fp4(got, want_bytes, shape):
    assert got.dtype == FP4 and got.shape == list(shape)
    np.testing.assert_array_equal(got.numpy().view(np.uint8), want_bytes)


@pytest.mark.parametrize("platform", ["cpu", "ascend950"])
def test_quant_mx_fp4_every_dtype_mode_axis_and_rank(platform):
    rng = np.random.default_rng(21)
    with ptocpu.platform(platform):
        for dt in (np.float16, BF16):
            for rank in range(1, 5):
                lead = tuple(int(v) for v in rng.integers(1, 3, rank - 1))
                x = mx_data(rng, lead + (128,), dt)
                for mode, round_up in MODES:
                    q, s = ptocpu.quant_mx(x, FP4, mode, -1, True)
                    wq, ws = ref.quant_mx(x, round_up, -1, "fp4")
                    assert_fp4(q, wq, lead + (64,))
                    assert_same_bits(s, ws.view(E8M0))
                    if rank >= 2:
                        x2 = mx_data(rng, lead[:-1] + (128, 64), dt)
                        q, s = ptocpu.quant_mx(x2, FP4, mode, -2, False)
                        wq, ws = ref.quant_mx(x2, round_up, -2, "fp4")
                        assert_fp4(q, wq, lead[:-1] + (128, 32))
                        assert s.shape == list(lead[:-1]) + [2, 64, 2]
                        assert_same_bits(s, ws.view(E8M0))


def test_quant_mx_fp4_codes_by_hand():
    # NV with amax 6: k = 0, scaling 1; E2M1 holds 0, .5, 1, 1.5, 2, 3, 4, 6 (codes 0-7), ties to even codes
    values = [0, 0.25, 0.5, 0.75, 1, 1.25, 2.5, 5, 6, -1] + [0] * 22
    q, s = ptocpu.quant_mx(np.array([values * 2], np.float16), FP4, ptocpu.ROUND_UP, -1, False)
    assert s.numpy().view(np.uint8).tolist() == [[[127, 127]]]
    # pairs low nibble first: (0, 0) (1, 2) (2, 2) (4, 6) (7, sign | 2)
    assert q.numpy().view(np.uint8)[0, :5].tolist() == [0x00, 0x21, 0x22, 0x64, 0xA7]
    # OCP: amax 7.5 -> exponent 129 - 2 = 127, scaling 1: 7 and -7.5 saturate to +-6; a group of ones: 125
    big = np.array([[7, -7.5] + [1] * 62], np.float16)
    q, s = ptocpu.quant_mx(big, FP4, ptocpu.ROUND_DOWN, -1, False)
    assert s.numpy().view(np.uint8).tolist() == [[[127, 125]]] and q.numpy().view(np.uint8)[0, 0] == 0xF7


def test_quant_mx_fp4_special_groups_and_upstreams_onboard_case():
    g = np.ones((4, 32), np.float32)
    g[0, 3] = np.nan  # NaN scale: every code 0x7, without sign
    g[1, 0] = -np.inf  # OCP exponent 255 - 2, NV 254; inf saturates with its sign
    g[2] = 0.0
    g[3] = np.float32(2 ** -20)
    x = g.reshape(1, 128).astype(np.float16)
    for mode, round_up in MODES:
        q, s = ptocpu.quant_mx(x, FP4, mode, -1, False)
        wq, ws = ref.quant_mx(x, round_up, -1, "fp4")
        assert_fp4(q, wq, (1, 64))
        assert_same_bits(s, ws.view(E8M0))
        codes, exps = q.numpy().view(np.uint8).reshape(4, 16), s.numpy().view(np.uint8).reshape(4)
        assert exps[0] == 255 and (codes[0] == 0x77).all()
        assert exps[1] == (254 if round_up else 253) and codes[1, 0] & 0xF == 0xF
        assert exps[2] == 0 and (codes[2] == 0).all()
    # upstream's onboard test: linspace(-6, 6) over [1, 128], fp16, NV; two groups of 64 share a scale pair
    x = torch.linspace(-6.0, 6.0, 128, dtype=torch.float16).reshape(1, 128).numpy()
    q, s = ptocpu.quant_mx(x, FP4, ptocpu.ROUND_UP, -1, True)
    wq, ws = ref.quant_mx(x, True, -1, "fp4")
    assert_fp4(q, wq, (1, 64))
    assert s.shape == [1, 2, 2] and s.numpy().view(np.uint8).ravel().tolist() == ws.ravel().tolist()


def test_quant_mx_fp4_threads_errors_and_tiles():
    base = mx_data(np.random.default_rng(6), (640, 512), np.float16)
    for axis in (-1, -2):
        ptocpu.set_num_threads(1)
        one = [t.numpy().view(np.uint8) for t in ptocpu.quant_mx(base, FP4, axis=axis)]
        ptocpu.set_num_threads(2)
        two = [t.numpy().view(np.uint8) for t in ptocpu.quant_mx(base, FP4, axis=axis)]
        np.testing.assert_array_equal(two[0], one[0])
        np.testing.assert_array_equal(two[1], one[1])
    with pytest.raises(ptocpu.DTypeError, match="DT_FP4_E2M1X2 takes DT_FP16 or DT_BF16 input; got DT_FP32"):
        ptocpu.quant_mx(np.zeros((4, 64), np.float32), FP4)
    with pytest.raises(ptocpu.ArgumentError, match="last dim of 32; axis -2 with DT_FP4_E2M1X2 needs a multiple of 64"):
        ptocpu.quant_mx(np.zeros((64, 32), np.float16), FP4, axis=-2)
    with ptocpu.vec_tile_shapes(64, 32), pytest.raises(ptocpu.TileError, match="axis -2 with DT_FP4_E2M1X2 needs"):
        ptocpu.quant_mx(np.zeros((64, 64), np.float16), FP4, axis=-2)
    with ptocpu.vec_tile_shapes(64, 32):  # fp8 takes any positive last tile dim on axis -2
        assert ptocpu.quant_mx(np.zeros((64, 64), np.float16), ptocpu.DT_FP8E4M3, axis=-2)[0].shape == [64, 64]


def test_empty_inputs_on_the_cpu():
    f32 = np.float32
    assert ptocpu.quantize(np.zeros((0, 4), f32), np.zeros(0, f32), ptocpu.DT_INT8, -1).shape == [0, 4]
    assert ptocpu.dequantize(np.zeros((3, 0), np.int8), np.zeros(3, f32), ptocpu.DT_FP32, -1).shape == [3, 0]
    q, s = ptocpu.quant_mx(np.zeros((0, 64), f32))
    assert q.shape == [0, 64] and s.shape == [0, 1, 2]
    q, s = ptocpu.quant_mx(np.zeros((4, 0), f32), performance_mode=False)
    assert q.shape == [4, 0] and s.shape == [4, 0, 2]


def test_torch_operators():
    import ptocpu.torch  # noqa: F401  (registers torch.ops.ptocpu)
    P = torch.ops.ptocpu
    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(3)) * 50
    s = torch.rand(4, generator=torch.Generator().manual_seed(4))
    compiled = torch.compile(lambda t: P.quantize(t, s, torch.int8, -1), fullgraph=True, backend="aot_eager")
    want = torch.clamp(torch.round(x * s[:, None]), -128, 127).to(torch.int8)
    assert torch.equal(P.quantize(x, s, torch.int8, -1), want) and torch.equal(compiled(x), want)
    assert torch.equal(P.dequantize(want, s, torch.float32, -1), want.float() * s[:, None])
