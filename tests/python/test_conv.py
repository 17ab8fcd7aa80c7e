"""conv (docs/ops/conv.md) against torch.nn.functional.conv1d / conv2d / conv3d in float64 on the
same inputs (asymmetric paddings made explicit with torch's pad): exact products summed in fp32
(the error bound of an fp32 sum in any order), the bias first, ReLU, one rounding; on integer data
every order gives the exact sum, so the rounding to out_dtype is checked bit for bit. The numeric
tests run on both kernels: oneDNN's direct convolution and the patch matrices (forced with
PTOCPU_CONV_PATH=im2col). Then every rule of the page, each with its error class, and the conv tile.
"""
from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, strategies as st

import ptocpu
from helpers import assert_fp32_sum, assert_same_bits

D = ptocpu
NP = {D.DT_FP16: np.float16, D.DT_BF16: ml_dtypes.bfloat16, D.DT_FP32: np.float32}
DTYPES = list(NP)
PLATFORMS = ("cpu", "ascend950", "atlas_a3", "atlas_a2")
L1, L0 = ptocpu.pypto_impl.TileL1Info, ptocpu.pypto_impl.TileL0Info


def reference(x, w, strides, paddings, dilations, groups=1, bias=None, relu=False, absolute=False):
    """float64 torch convolution of the given arrays (paddings per dim, before and after)."""
    nd = x.ndim - 2
    pads = []
    for d in reversed(range(nd)):  # torch's pad starts with the last dim
        pads += [paddings[2 * d], paddings[2 * d + 1]]
    x64, w64 = (torch.from_numpy(np.asarray(a, np.float64)) for a in (x, w))
    b64 = None if bias is None else torch.from_numpy(np.asarray(bias, np.float64))
    if absolute:
        x64, w64, b64 = x64.abs(), w64.abs(), None if b64 is None else b64.abs()
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    out = conv(F.pad(x64, pads), w64, b64, stride=strides, dilation=dilations, groups=groups)
    return (out.clamp_min(0) if relu else out).numpy()


def run(x, w, dtype, strides, paddings, dilations, groups=1, bias=None, relu=False, **kwargs):
    extend = {}
    if bias is not None:
        extend["bias_tensor"] = ptocpu.asarray(bias)
    if relu:
        extend["relu_type"] = ptocpu.ConvReLuType.RELU
    return ptocpu.conv(ptocpu.asarray(x), ptocpu.asarray(w), dtype, strides, paddings, dilations, groups=groups,
                       extend_params=extend, **kwargs)


@pytest.fixture(params=["onednn", "im2col", "depthwise"])
def path(request, monkeypatch):
    """Runs the test on oneDNN's direct convolution (where it has a fast kernel, small convolutions
    too), on the patches, and on the depthwise kernel (where a group has one input channel; the
    other cases take the default path)."""
    monkeypatch.setenv("PTOCPU_CONV_PATH", request.param)
    return request.param


def data(rng, shape, dtype, integers):
    if integers:  # small integers: exact in every dtype, every sum of their products exact in fp32
        return rng.integers(-3, 4, size=shape).astype(NP[dtype])
    return rng.standard_normal(shape).astype(NP[dtype])


# (input shape, weight shape, strides, paddings, dilations, groups)
CASES = [
    ((2, 4, 10), (6, 2, 3), [2], [1, 2], [2], 2),
    ((1, 3, 16), (5, 3, 1), [1], [0, 0], [1], 1),
    ((2, 4, 9, 11), (6, 4, 3, 2), [2, 1], [2, 0, 1, 1], [1, 2], 1),
    ((1, 6, 7, 8), (6, 1, 3, 3), [1, 3], [1, 1, 0, 2], [2, 1], 6),
    ((3, 8, 7, 7), (16, 4, 1, 1), [1, 1], [0, 0, 0, 0], [1, 1], 2),
    ((1, 6, 5, 6, 7), (6, 2, 2, 3, 3), [1, 2, 1], [1, 0, 0, 2, 1, 1], [2, 1, 1], 3),
    ((2, 2, 3, 4, 5), (4, 2, 1, 1, 1), [1, 1, 1], [0, 0, 0, 0, 0, 0], [1, 1, 1], 1),
    # depthwise: two outputs per input channel, strides and dilations on every dim, paddings of each side
    ((2, 3, 6, 9, 40), (6, 1, 2, 3, 3), [1, 2, 3], [1, 0, 2, 1, 0, 2], [2, 1, 2], 3),
    ((3, 4, 37), (4, 1, 5), [1], [4, 1], [1], 4),
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0]) - 2}d-{c[0]}x{c[1]}")
@pytest.mark.parametrize("bias,relu", [(False, False), (True, True)])
def test_integer_data_is_bit_exact(dtype, case, bias, relu, path):
    rng = np.random.default_rng(len(case[0]) * 7 + case[5])
    shape, wshape, strides, paddings, dilations, groups = case
    x, w = data(rng, shape, dtype, True), data(rng, wshape, dtype, True)
    b = data(rng, (wshape[0],), dtype, True) if bias else None
    got = run(x, w, dtype, strides, paddings, dilations, groups, b, relu)
    want = reference(x, w, strides, paddings, dilations, groups, b, relu)
    assert got.dtype == dtype and got.shape == want.shape
    assert_same_bits(got, want.astype(NP[dtype]))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[0]) - 2}d-{c[0]}x{c[1]}")
def test_random_floats_are_an_fp32_sum_of_exact_products(dtype, case, path):
    rng = np.random.default_rng(11)
    shape, wshape, strides, paddings, dilations, groups = case
    x, w, b = data(rng, shape, dtype, False), data(rng, wshape, dtype, False), data(rng, (wshape[0],), dtype, False)
    got = run(x, w, dtype, strides, paddings, dilations, groups, b)
    exact = reference(x, w, strides, paddings, dilations, groups, b)
    abs_sum = reference(x, w, strides, paddings, dilations, groups, b, absolute=True)
    k = int(np.prod(wshape[1:])) + 1
    assert_fp32_sum(got, exact, abs_sum, k, dtype)


@given(st.data())
def test_any_geometry_on_integer_data_is_the_definition(data_):
    # Random ranks, sizes, strides, dilations, paddings (each below its kernel), groups; small
    # integers, so the result is exact: bit for bit against float64.
    draw = data_.draw
    nd = draw(st.integers(1, 3))
    groups = draw(st.integers(1, 3))
    cin, cout = groups * draw(st.integers(1, 3)), groups * draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 4)) for _ in range(nd)]
    dilations = [draw(st.integers(1, 3)) for _ in range(nd)]
    strides = [draw(st.integers(1, 4)) for _ in range(nd)]
    paddings = [draw(st.integers(0, k - 1)) for k in kernel for _ in range(2)]
    sizes = [draw(st.integers(max(1, d * (k - 1) + 1 - paddings[2 * i] - paddings[2 * i + 1]), 12))
             for i, (k, d) in enumerate(zip(kernel, dilations))]
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    x = rng.integers(-3, 4, (draw(st.integers(1, 2)), cin, *sizes)).astype(np.float32)
    w = rng.integers(-3, 4, (cout, cin // groups, *kernel)).astype(np.float32)
    b = rng.integers(-3, 4, (cout,)).astype(np.float32)
    want = reference(x, w, strides, paddings, dilations, groups, b).astype(np.float32)
    for path in ("onednn", "im2col", "depthwise"):
        saved = os.environ.pop("PTOCPU_CONV_PATH", None)
        try:
            os.environ["PTOCPU_CONV_PATH"] = path
            assert_same_bits(run(x, w, D.DT_FP32, strides, paddings, dilations, groups, b), want)
        finally:
            os.environ.pop("PTOCPU_CONV_PATH", None)
            if saved is not None:
                os.environ["PTOCPU_CONV_PATH"] = saved


def test_against_torch_float32_conv2d(path):
    # torch's own fp32 convolution, as a second opinion on the layout of everything.
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((2, 8, 12, 10), (12, 4, 3, 3), (12,)))
    got = run(x, w, D.DT_FP32, [2, 1], [1, 1, 2, 2], [1, 2], groups=2, bias=b).numpy()
    want = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=(2, 1), padding=(1, 2),
                    dilation=(1, 2), groups=2).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_views_are_read_where_they_lie(path):
    # A permuted input (not collapsible: the 1x1 case goes through patches), a strided input, a
    # strided weight and bias, and a view with a valid shape: each gives the contiguous result.
    rng = np.random.default_rng(5)
    base = rng.integers(-3, 4, (2, 9, 8, 6)).astype(np.float32)
    w1 = rng.integers(-3, 4, (4, 6, 1, 1)).astype(np.float32)
    permuted = ptocpu.asarray(base).permute([0, 3, 1, 2])  # [2, 6, 9, 8], channels not outermost in memory
    got = ptocpu.conv(permuted, w1, D.DT_FP32, [1, 1], [0, 0, 0, 0], [1, 1])
    assert_same_bits(got, reference(base.transpose(0, 3, 1, 2), w1, [1, 1], [0] * 4, [1, 1]).astype(np.float32))
    big_w = rng.integers(-3, 4, (8, 9, 3, 6)).astype(np.float32)
    w = ptocpu.asarray(big_w)[::2, :, :, ::2]  # [4, 9, 3, 3]
    bias = ptocpu.asarray(np.arange(8, dtype=np.float32))[::2]
    x = ptocpu.asarray(base)[:, :, ::2, :]  # [2, 9, 4, 6]
    got = ptocpu.conv(x, w, D.DT_FP32, [1, 1], [1, 1, 1, 0], [1, 1], extend_params={"bias_tensor": bias})
    want = reference(base[:, :, ::2, :], big_w[::2, :, :, ::2], [1, 1], [1, 1, 1, 0], [1, 1],
                     bias=np.arange(8, dtype=np.float32)[::2])
    assert_same_bits(got, want.astype(np.float32))
    part = ptocpu.view(ptocpu.asarray(base), [2, 9, 8, 6], [0, 0, 0, 0], valid_shape=[1, 9, 5, 4])
    got = ptocpu.conv(part, w, D.DT_FP32, [1, 1], [0, 0, 0, 0], [1, 1])
    assert_same_bits(got, reference(base[:1, :, :5, :4], big_w[::2, :, :, ::2], [1, 1], [0] * 4, [1, 1]).astype(np.float32))


def test_depthwise_is_the_same_bits_on_every_instruction_set_and_thread_count(monkeypatch):
    # The depthwise kernel sums an output in (kd, kh, kw) order with fused multiply-adds in every build
    # (AVX-512 and AVX2 registers, masked at a line's ends; outputs with a tap in the padding further
    # in, one by one; std::fma on the baseline): the same bits everywhere, within the fp32 bound.
    monkeypatch.setenv("PTOCPU_CONV_PATH", "depthwise")
    rng = np.random.default_rng(21)
    cases = [((2, 3, 9, 40), (6, 1, 3, 3), [1, 1], [1, 1, 1, 1], [1, 1]),
             ((1, 2, 70), (2, 1, 20), [1], [19, 17], [1]),  # paddings wider than a register
             ((1, 2, 5, 23), (4, 1, 2, 5), [2, 3], [1, 0, 4, 2], [1, 2]),
             ((2, 2, 11), (2, 1, 3), [1], [2, 1], [1])]  # lines shorter than AVX2's register
    previous = ptocpu.get_num_threads()
    try:
        for shape, wshape, strides, paddings, dilations in cases:
            x, w, b = (rng.standard_normal(s).astype(np.float32) for s in (shape, wshape, (wshape[0],)))
            groups = shape[1]
            results = []
            for isa in ("avx512", "avx2", "baseline"):
                ptocpu._core._set_kernel_tuning(isa=isa)
                for threads in (1, 2):
                    ptocpu.set_num_threads(threads)
                    results.append(run(x, w, D.DT_FP32, strides, paddings, dilations, groups, b))
            for got in results[1:]:
                assert_same_bits(got, results[0].numpy())
            exact = reference(x, w, strides, paddings, dilations, groups, b)
            abs_sum = reference(x, w, strides, paddings, dilations, groups, b, absolute=True)
            assert_fp32_sum(results[0], exact, abs_sum, int(np.prod(wshape[1:])) + 1, D.DT_FP32)
    finally:
        ptocpu._core._set_kernel_tuning()
        ptocpu.set_num_threads(previous)


def test_depthwise_taps_in_the_padding_contribute_nothing(monkeypatch):
    # docs/ops/conv.md#what-is-computed: a tap in the padding adds nothing (not 0 * weight): with an
    # infinite first weight, the outputs whose first tap is in the padding stay finite, on every
    # build (in a register's first and last lanes, and beyond them where the padding is wider).
    monkeypatch.setenv("PTOCPU_CONV_PATH", "depthwise")
    rng = np.random.default_rng(22)
    x2, w2 = rng.uniform(1, 2, (1, 2, 6, 45)).astype(np.float32), rng.uniform(1, 2, (2, 1, 3, 3)).astype(np.float32)
    w2[:, :, 0, 0] = np.inf
    padded2 = np.zeros((1, 2, 6, 45), bool)
    padded2[:, :, 0, :] = padded2[:, :, :, 0] = True  # the outputs whose tap (0, 0) is in the padding
    x1, w1 = rng.uniform(1, 2, (1, 2, 70)).astype(np.float32), rng.uniform(1, 2, (2, 1, 20)).astype(np.float32)
    w1[:, :, 0] = np.inf
    padded1 = np.zeros((1, 2, 70 + 19 + 17 - 19), bool)
    padded1[:, :, :19] = True
    try:
        for isa in ("avx512", "avx2", "baseline"):
            ptocpu._core._set_kernel_tuning(isa=isa)
            for x, w, paddings, padded in ((x2, w2, [1, 1, 1, 1], padded2), (x1, w1, [19, 17], padded1)):
                nd = x.ndim - 2
                got = run(x, w, D.DT_FP32, [1] * nd, paddings, [1] * nd, groups=2).numpy()
                assert np.isfinite(got[padded]).all(), isa
                assert np.isposinf(got[~padded]).all(), isa
    finally:
        ptocpu._core._set_kernel_tuning()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_the_onednn_path_is_taken_and_within_the_bound(dtype, monkeypatch):
    # On random data the two kernels sum in different orders, so different fp32 bits show that the
    # oneDNN path ran (x86-64 oneDNN has fast fp32 kernels; fp16 and bf16 run the same fp32 kernel,
    # and their rounding hides most order differences); both are within the bound.
    rng = np.random.default_rng(12)
    x, w = data(rng, (2, 32, 20, 20), dtype, False), data(rng, (32, 32, 3, 3), dtype, False)
    b = data(rng, (32,), dtype, False)
    args = (x, w, dtype, [1, 1], [1, 1, 1, 1], [1, 1], 1, b, True)
    monkeypatch.delenv("PTOCPU_CONV_PATH", raising=False)  # 7.4 million products: oneDNN by size
    onednn = run(*args).numpy()
    monkeypatch.setenv("PTOCPU_CONV_PATH", "im2col")
    patches = run(*args).numpy()
    if dtype == D.DT_FP32:
        assert not np.array_equal(onednn.view(np.uint8), patches.view(np.uint8))
    exact = reference(x, w, [1, 1], [1, 1, 1, 1], [1, 1], bias=b, relu=True)
    abs_sum = reference(x, w, [1, 1], [1, 1, 1, 1], [1, 1], bias=b, absolute=True)
    for got in (onednn, patches):
        assert_fp32_sum(ptocpu.asarray(got), exact, abs_sum, 32 * 9 + 1, dtype)


def test_one_image_in_slabs_is_thread_invariant_and_exact(monkeypatch):
    # Fewer images than pieces: oneDNN runs slabs of output rows, here 41 rows as six slabs of 6 and
    # one of 5 (the first and last with their own padding): each lands in its place, and 1, 2 and 3
    # threads give the same bits.
    monkeypatch.setenv("PTOCPU_CONV_PATH", "onednn")
    rng = np.random.default_rng(13)
    x, w = data(rng, (1, 8, 40, 17), D.DT_FP32, True), data(rng, (8, 8, 3, 3), D.DT_FP32, True)
    want = reference(x, w, [1, 1], [2, 1, 0, 2], [1, 1]).astype(np.float32)
    for threads in (1, 2, 3):
        ptocpu.set_num_threads(threads)
        assert_same_bits(ptocpu.conv(x, w, D.DT_FP32, [1, 1], [2, 1, 0, 2], [1, 1]), want)
    y = data(rng, (1, 8, 40, 17), D.DT_FP32, False)
    results = []
    for threads in (1, 2, 3):
        ptocpu.set_num_threads(threads)
        results.append(ptocpu.conv(y, w, D.DT_FP32, [1, 1], [2, 1, 0, 2], [1, 1]).numpy())
    assert_same_bits(results[1], results[0])
    assert_same_bits(results[2], results[0])


def test_images_over_4_mib_run_in_slabs(monkeypatch):
    # 8 images of 32 * 184 * 184 fp32 (4.3 MB each, over 4 MiB): oneDNN's pieces are half images
    # (input rows 0..92 and 91..183, each with one padding row), whatever the thread count.
    monkeypatch.delenv("PTOCPU_CONV_PATH", raising=False)
    rng = np.random.default_rng(14)
    x, w = data(rng, (8, 32, 184, 184), D.DT_FP32, True), data(rng, (4, 32, 3, 3), D.DT_FP32, True)
    want = reference(x, w, [1, 1], [1, 1, 1, 1], [1, 1]).astype(np.float32)
    for threads in (1, 2):
        ptocpu.set_num_threads(threads)
        assert_same_bits(ptocpu.conv(x, w, D.DT_FP32, [1, 1], [1, 1, 1, 1], [1, 1]), want)


def test_the_1x1_direct_path_equals_the_patch_path():
    # A 1x1 stride-1 unpadded conv reads its input as the patch matrix; the same conv over a
    # non-collapsible view of the same values goes through the patches: same bits.
    rng = np.random.default_rng(8)
    x = rng.standard_normal((3, 8, 5, 7)).astype(np.float32)
    w = rng.standard_normal((6, 4, 1, 1)).astype(np.float32)
    direct = ptocpu.conv(x, w, D.DT_FP32, [1, 1], [0] * 4, [1, 1], groups=2)
    wide = np.zeros((3, 8, 5, 14), np.float32)
    wide[..., ::2] = x
    strided = ptocpu.asarray(wide)[..., ::2]
    assert_same_bits(ptocpu.conv(strided, w, D.DT_FP32, [1, 1], [0] * 4, [1, 1], groups=2), direct.numpy())


def test_more_patches_than_one_chunk():
    # Patch matrices beyond 8 MiB are built an image at a time, and an image's beyond 8 MiB in blocks
    # of output lines (here 112 and 18 of 130): each block and image lands in its place.
    rng = np.random.default_rng(9)
    x = rng.integers(-2, 3, (3, 16, 130, 130)).astype(np.float32)
    w = rng.integers(-2, 3, (8, 16, 3, 3)).astype(np.float32)
    got = ptocpu.conv(x, w, D.DT_FP32, [1, 1], [1, 1, 1, 1], [1, 1])  # 16 * 9 * 130 * 130 * 4 bytes an image
    assert_same_bits(got, reference(x, w, [1, 1], [1, 1, 1, 1], [1, 1]).astype(np.float32))


@pytest.mark.parametrize("dtype", [D.DT_FP32, D.DT_BF16], ids=lambda d: d.name)
def test_one_and_two_threads_give_the_same_bits(dtype, path):
    # 4.7 MB of patches an image: one image a product on one thread, two on two threads.
    rng = np.random.default_rng(4)
    x, w = data(rng, (2, 16, 90, 90), dtype, False), data(rng, (32, 16, 3, 3), dtype, False)
    results = []
    for threads in (1, 2):
        ptocpu.set_num_threads(threads)
        results.append(ptocpu.conv(x, w, dtype, [1, 1], [1, 1, 1, 1], [1, 1]).numpy())
    assert_same_bits(results[1], results[0])


def test_nan_and_inf_propagate(path):
    x = np.ones((1, 1, 5), np.float32)
    x[0, 0, 2] = np.nan
    w = np.ones((1, 1, 2), np.float32)
    got = ptocpu.conv(x, w, D.DT_FP32, [1], [0, 0], [1]).numpy()[0, 0]
    assert np.isnan(got[1]) and np.isnan(got[2]) and got[0] == 2 and got[3] == 2
    x[0, 0, 2] = np.inf
    assert ptocpu.conv(x, w, D.DT_FP32, [1], [0, 0], [1], extend_params={
        "relu_type": ptocpu.ConvReLuType.RELU}).numpy()[0, 0, 1] == np.inf


def test_the_pages_examples():
    x = ptocpu.asarray([[[1.0, 2.0, 3.0, 4.0]]], "float32")
    w = ptocpu.asarray([[[1.0, 1.0]]], "float32")
    assert ptocpu.conv(x, w, D.DT_FP32, [1], [1, 0], [1]).tolist() == [[[1.0, 3.0, 5.0, 7.0]]]
    assert ptocpu.conv(x, w, D.DT_FP32, [2], [0, 1], [1]).tolist() == [[[3.0, 7.0]]]
    assert ptocpu.conv(x, w, D.DT_FP32, [1], [0, 0], [2], extend_params={
        "bias_tensor": ptocpu.asarray([-5.0], "float32"),
        "relu_type": ptocpu.ConvReLuType.RELU}).tolist() == [[[0.0, 1.0]]]


# ---- the rules -----------------------------------------------------------------------------------

def f32(*shape):
    return ptocpu.asarray(np.ones(shape, np.float32))


def f16(*shape):
    return ptocpu.asarray(np.ones(shape, np.float16))


X, W = f32(1, 4, 8, 8), f32(4, 4, 3, 3)
P2 = ([1, 1], [0, 0, 0, 0], [1, 1])


@pytest.mark.parametrize("call,error,message", [
    (lambda: ptocpu.conv(ptocpu.asarray(np.ones((1, 4, 8), np.int32)), f32(4, 4, 3), D.DT_INT32, [1], [0, 0], [1]),
     D.DTypeError, "input_conv dtype DT_INT32 is not supported on platform cpu; allowed: DT_FP16, DT_BF16, DT_FP32"),
    (lambda: ptocpu.conv(X, f16(4, 4, 3, 3), D.DT_FP32, *P2), D.DTypeError, "weight dtype DT_FP16 must match input_conv"),
    (lambda: ptocpu.conv(X, W, D.DT_FP16, *P2), D.DTypeError, "out_dtype DT_FP16 must be input_conv's dtype DT_FP32"),
    (lambda: ptocpu.conv(f32(4, 8), f32(4, 3), D.DT_FP32, [1], [0, 0], [1]), D.ArgumentError,
     "input_conv rank 2 and weight rank 2 must be equal and 3, 4 or 5"),
    (lambda: ptocpu.conv(X, f32(4, 4, 3), D.DT_FP32, *P2), D.ArgumentError, "input_conv rank 4 and weight rank 3"),
    (lambda: ptocpu.conv(f32(1, 1, 1, 1, 1, 4), f32(1, 1, 1, 1, 1, 1), D.DT_FP32, [1] * 4, [0] * 8, [1] * 4),
     D.ArgumentError, "must be equal and 3, 4 or 5"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, transposed=True), D.UnsupportedError, "transposed=True"),
    (lambda: ptocpu.conv(f32(1, 4, 0, 8), W, D.DT_FP32, *P2), D.ArgumentError,
     r"input_conv shape \[1, 4, 0, 8\] has a dim of 0; each must be in \[1, 1000000\]"),
    (lambda: ptocpu.conv(f32(1, 1, 1000001), f32(1, 1, 1), D.DT_FP32, [1], [0, 0], [1]), D.ArgumentError,
     "has a dim of 1000001"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, extend_params={"bias_tensor": f16(4)}), D.DTypeError,
     "bias_tensor dtype DT_FP16 does not go with DT_FP32 operands on platform cpu; allowed: DT_FP32"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, extend_params={"bias_tensor": f32(1, 4)}), D.ArgumentError,
     r"bias_tensor shape \[1, 4\] must be \[Cout\] = \[4\]"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, extend_params={"bias_tensor": f32(5)}), D.ArgumentError,
     r"bias_tensor shape \[5\] must be \[Cout\]"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, extend_params={"scale": 0.5}), D.ArgumentError,
     "'scale' and 'scale_tensor' are not supported"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, extend_params={
        "scale_tensor": ptocpu.asarray(np.ones((1, 4), np.uint64))}), D.ArgumentError, "no quantisation"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, extend_params={"relu_type": 2}), D.ArgumentError,
     r"relu_type 2 is not supported; allowed: ConvReLuType.NO_RELU \(0\), RELU \(1\)"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, extend_params={"bias": f32(4)}), D.ArgumentError,
     "extend_params has no key 'bias'"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, [1], [0, 0, 0, 0], [1, 1]), D.ArgumentError,
     "a 2-D convolution takes 2 strides, 2 dilations and 4 paddings .*; got 1, 2 and 4"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, [1, 1], [0, 0], [1, 1]), D.ArgumentError, "got 2, 2 and 2"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, [1, 64], [0] * 4, [1, 1]), D.ArgumentError,
     r"strides \[1, 64\] has 64 at position 1; each must be in \[1, 63\]"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, [0, 1], [0] * 4, [1, 1]), D.ArgumentError, r"strides \[0, 1\] has 0"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, [1, 1], [0] * 4, [1, 64]), D.ArgumentError,
     r"dilations \[1, 64\] has 64 at position 1; each must be in \[1, 63\]"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, [1, 1], [0, -1, 0, 0], [1, 1]), D.ArgumentError,
     r"paddings \[0, -1, 0, 0\] has -1 at position 1; each must be in \[0, 255\]"),
    (lambda: ptocpu.conv(X, f32(4, 4, 300, 1), D.DT_FP32, [1, 1], [0, 256, 0, 0], [1, 1]), D.ArgumentError,
     "has 256 at position 1; each must be in"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, [1, 1], [0, 0, 3, 0], [1, 1]), D.ArgumentError,
     "paddings 3 and 0 of dim W must each be < the kernel's 3"),
    (lambda: ptocpu.conv(f32(1, 4, 5, 6, 7), f32(4, 4, 2, 3, 3), D.DT_FP32, [1] * 3, [0, 2, 0, 0, 0, 0], [1] * 3),
     D.ArgumentError, "paddings 0 and 2 of dim D must each be < the kernel's 2"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, groups=0), D.ArgumentError, r"groups 0 must be in \[1, 65535\]"),
    (lambda: ptocpu.conv(X, W, D.DT_FP32, *P2, groups=65536), D.ArgumentError, "groups 65536 must be in"),
    (lambda: ptocpu.conv(f32(1, 6, 8, 8), f32(4, 2, 3, 3), D.DT_FP32, *P2, groups=3), D.ArgumentError,
     r"groups 3 must divide Cin \(6\) and Cout \(4\)"),
    (lambda: ptocpu.conv(X, f32(4, 2, 3, 3), D.DT_FP32, *P2), D.ArgumentError,
     "input_conv's Cin 4 must be weight's Cin 2 \\* groups 1"),
    (lambda: ptocpu.conv(f32(1, 1, 300, 2), f32(1, 1, 256, 1), D.DT_FP32, *P2), D.ArgumentError,
     "has a kernel of kh 256, kw 1; each must be <= 255"),
    (lambda: ptocpu.conv(f32(1, 1, 300, 300), f32(1, 1, 100, 90), D.DT_FP32, *P2), D.ArgumentError,
     r"kh \* kw \* C0 = 100 \* 90 \* 8 = 72000 must be <= 65535"),
    (lambda: ptocpu.conv(f32(1, 1, 4), f32(1, 1, 5), D.DT_FP32, [1], [0, 0], [1]), D.ArgumentError,
     r"output dim W = \(4 \+ 0 \+ 0 - 5\) / 1 \+ 1 = 0 must be in \[1, 1000000\]"),
    (lambda: ptocpu.conv(f32(1, 1, 4, 4), f32(1, 1, 3, 3), D.DT_FP32, [1, 1], [0, 0, 0, 0], [2, 1]), D.ArgumentError,
     r"output dim H = \(4 \+ 0 \+ 0 - 5\)"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_arguments_as_pypto_gives_them():
    # Lists or tuples for strides / paddings / dilations, output_paddings ignored unless
    # transposed, extend_params None or {}, the ConvReLuType members or their ints.
    x, w = f32(1, 4, 6, 6), f32(8, 4, 3, 3)
    a = ptocpu.conv(x, w, D.DT_FP32, (1, 1), (1, 1, 1, 1), (1, 1), output_paddings=[1, 1], extend_params=None)
    b = ptocpu.conv(x, w, D.DT_FP32, [1, 1], [1, 1, 1, 1], [1, 1], extend_params={"relu_type": 1})
    assert a.shape == b.shape == (1, 8, 6, 6) and a.tolist() == b.tolist()
    assert int(ptocpu.ConvReLuType.RELU) == 1 and int(ptocpu.ConvReLuType.NO_RELU) == 0
    assert ptocpu.pypto_impl.ConvReLuType is ptocpu.ConvReLuType


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bias_dtypes_per_platform(platform):
    # bf16 operands take an fp32 bias on Atlas A2 / A3 and a bf16 one elsewhere; fp16 and fp32
    # take their own dtype everywhere.
    ptocpu.set_platform(platform)
    if platform != "cpu":
        ptocpu.set_conv_tile_shapes(L1(1, 1, 8, 16, 16, 16, 16, 1))
    a2a3 = platform in ("atlas_a3", "atlas_a2")
    x = ptocpu.asarray(np.ones((1, 16, 4, 8), ml_dtypes.bfloat16))
    w = ptocpu.asarray(np.ones((16, 16, 1, 1), ml_dtypes.bfloat16))
    for bias_dtype, fits in ((np.float32, a2a3), (ml_dtypes.bfloat16, not a2a3), (np.float16, False)):
        bias = ptocpu.asarray(np.full(16, 2, bias_dtype))
        call = lambda: ptocpu.conv(x, w, D.DT_BF16, [1, 1], [0] * 4, [1, 1], extend_params={"bias_tensor": bias})
        if fits:
            assert float(call().numpy().astype(np.float32).max()) == 18.0
        else:
            with pytest.raises(ptocpu.DTypeError, match=f"bias_tensor dtype .* on platform {platform}"):
                call()


def test_a_failed_call_writes_nothing_and_the_inputs_are_untouched():
    x = np.arange(2 * 4 * 6 * 6, dtype=np.float32).reshape(2, 4, 6, 6)
    before = x.copy()
    with pytest.raises(ptocpu.ArgumentError):
        ptocpu.conv(x, np.ones((4, 4, 3, 3), np.float32), D.DT_FP32, [1, 1], [3, 0, 0, 0], [1, 1])
    ptocpu.conv(x, np.ones((4, 4, 3, 3), np.float32), D.DT_FP32, [1, 1], [1, 1, 1, 1], [1, 1])
    assert (x == before).all()


# ---- the conv tile ---------------------------------------------------------------------------------

# Upstream's ut test_conv2d_op: fp16 [2, 16, 16, 16] x [64, 16, 3, 3], paddings 1.
X16, W16 = f16(2, 16, 16, 16), f16(64, 16, 3, 3)
GOOD_L1 = dict(tileHin=3, tileHout=3, tileWin=16, tileWout=16, tileCinFmap=16, tileCinWeight=16, tileN=64, tileBatch=1)
GOOD_L0 = dict(tileH=3, tileW=16, tileK=48, tileN=64)


def conv16(**kwargs):
    return ptocpu.conv(X16, W16, D.DT_FP16, [1, 1], [1, 1, 1, 1], [1, 1], **kwargs)


def test_conv_tile_is_required_on_the_chips_only():
    assert conv16().shape == (2, 64, 16, 16)
    for platform in ("ascend950", "atlas_a3", "atlas_a2"):
        with ptocpu.platform(platform):
            with pytest.raises(ptocpu.TileError, match=f"no conv tile shape is set; .*platform {platform} needs one"):
                conv16()
            ptocpu.set_conv_tile_shapes(L1(**GOOD_L1), L0(**GOOD_L0))
            assert conv16().shape == (2, 64, 16, 16)
            ptocpu._core._reset_conv_tile_shapes()


@pytest.mark.parametrize("l1,l0,message", [
    (dict(tileHin=17), None, r"tileHin = 17 must be in \[1, 16\]"),
    (dict(tileBatch=2), None, r"tileBatch = 2 must be in \[1, 1\]"),
    (dict(tileWin=0), None, r"tileWin = 0 must be in \[1, 16\]"),
    (dict(tileCinFmap=8), None, r"tileCinFmap = 8 must be in \[16, 16\]"),
    (dict(tileCinWeight=32), None, r"tileCinWeight = 32 must be in \[16, 16\]"),
    (dict(tileN=80), None, r"tileL1Info.tileN = 80 must be in \[1, 64\]"),
    (dict(tileN=24), None, "tileL1Info.tileN = 24 must be a multiple of 16"),
    (dict(tileHout=17), None, r"tileHout = 17 must be in \[1, 16\]"),
    (dict(tileWout=8), None, "tileWout = 8 must be a multiple of 16"),
    (dict(tileWout=32), None, r"tileWout = 32 must be in \[1, 16\]"),
    ({}, dict(tileK=24), "tileK = 24 must be a multiple of 16"),
    ({}, dict(tileH=4), r"tileH = 4 must be in \[1, 3\]"),
    ({}, dict(tileW=32), r"tileW = 32 must be in \[1, 16\]"),
    ({}, dict(tileK=160), r"tileK = 160 must be in \[1, 144\]"),
    ({}, dict(tileN=24), "tileL0Info.tileN = 24 must be a multiple of 16"),
    ({}, dict(tileN=80), r"tileL0Info.tileN = 80 must be in \[1, 64\]"),
    ({}, dict(tileK=96), "tileK = 96 must divide kAL1 = 144 and kBL1 = 144"),
])
def test_conv_tile_rules(l1, l0, message):
    ptocpu.set_conv_tile_shapes(L1(**{**GOOD_L1, **l1}), L0(**{**GOOD_L0, **(l0 or {})}))
    with pytest.raises(ptocpu.TileError, match=message):
        conv16()


def test_the_l0_rules_apply_only_with_an_l0_tile():
    ptocpu.set_conv_tile_shapes(L1(**GOOD_L1), L0(**{**GOOD_L0, "tileK": 24}))
    with pytest.raises(ptocpu.TileError):
        conv16()
    ptocpu.set_conv_tile_shapes(L1(**GOOD_L1))
    assert conv16().shape == (2, 64, 16, 16)


def test_tile_hout_is_1_when_wout_is_not_a_multiple_of_16():
    x, w = f16(1, 16, 8, 15), f16(16, 16, 1, 1)
    ptocpu.set_conv_tile_shapes(L1(2, 2, 15, 16, 16, 16, 16, 1))
    with pytest.raises(ptocpu.TileError, match=r"tileHout = 2 must be 1 when Wout \(15\) is not a multiple of 16"):
        ptocpu.conv(x, w, D.DT_FP16, [1, 1], [0] * 4, [1, 1])
    ptocpu.set_conv_tile_shapes(L1(2, 1, 15, 16, 16, 16, 16, 1))
    assert ptocpu.conv(x, w, D.DT_FP16, [1, 1], [0] * 4, [1, 1]).shape == (1, 16, 8, 15)


# platform, L0 tile (H, W, K, N) / L1 tile, the buffer and its bytes
CAPACITY = [
    ("ascend950", dict(tileH=3, tileW=16, tileK=144 * 8, tileN=16), None, "L0A", 3 * 16 * 1152 * 2, 65536),
    ("atlas_a2", dict(tileH=1, tileW=16, tileK=144 * 8, tileN=64), None, "L0B", 1152 * 64 * 2, 65536),
    ("atlas_a2", dict(tileH=3, tileW=16, tileK=16, tileN=64), dict(tileHout=12, tileWout=16), None, None, None),
]


@pytest.mark.parametrize("platform,l0,l1,buffer,need,limit", CAPACITY)
def test_each_conv_buffer_capacity_is_a_tile_error(platform, l0, l1, buffer, need, limit):
    # A weight with 128 input channels gives room for large tileK.
    ptocpu.set_platform(platform)
    x, w = f16(1, 128, 16, 16), f16(64, 128, 3, 3)
    ptocpu.set_conv_tile_shapes(L1(**{**GOOD_L1, "tileCinFmap": 128, "tileCinWeight": 128, **(l1 or {})}), L0(**l0))
    call = lambda: ptocpu.conv(x, w, D.DT_FP16, [1, 1], [1, 1, 1, 1], [1, 1])
    if buffer is None:
        assert call().shape == (1, 64, 16, 16)
        return
    with pytest.raises(ptocpu.TileError, match=f"needs {need} bytes of {buffer} .* platform {platform} has {limit}"):
        call()


def test_l0c_and_l1_capacity():
    ptocpu.set_platform("atlas_a3")
    x, w = f32(1, 8, 64, 64), f32(256, 8, 1, 1)
    # L0C: tileH * tileW * tileN * 4 bytes = 2 * 64 * 256 * 4 = 131072 fits A3's 131072; 4 rows do not.
    ptocpu.set_conv_tile_shapes(L1(4, 4, 64, 64, 8, 8, 256, 1), L0(2, 64, 8, 256))
    assert ptocpu.conv(x, w, D.DT_FP32, [1, 1], [0] * 4, [1, 1]).shape == (1, 256, 64, 64)
    ptocpu.set_conv_tile_shapes(L1(4, 4, 64, 64, 8, 8, 256, 1), L0(4, 64, 8, 256))
    with pytest.raises(ptocpu.TileError, match="needs 262144 bytes of L0C .* has 131072"):
        ptocpu.conv(x, w, D.DT_FP32, [1, 1], [0] * 4, [1, 1])
    # L1: the input rows a tile reads (hin_l1 * win_l1 * tileCinFmap) and the weight's tile.
    x, w = f32(1, 256, 64, 64), f32(256, 256, 3, 3)
    ptocpu.set_conv_tile_shapes(L1(64, 64, 64, 64, 256, 8, 16, 1))
    with pytest.raises(ptocpu.TileError, match=r"needs \d+ bytes of L1 .*platform atlas_a3 has 524288"):
        ptocpu.conv(x, w, D.DT_FP32, [1, 1], [1, 1, 1, 1], [1, 1])
    ptocpu.set_platform("cpu")  # no buffers: only the rules
    assert ptocpu.conv(x, w, D.DT_FP32, [1, 1], [1, 1, 1, 1], [1, 1]).shape == (1, 256, 64, 64)


def test_tile_infos_and_get_conv_tile_shapes():
    l1, l0 = L1(**GOOD_L1), L0(**GOOD_L0)
    assert repr(l1) == "TileL1Info([3, 3, 16, 16, 16, 16, 64, 1])" and repr(l0) == "TileL0Info([3, 16, 48, 64])"
    assert L1(3, 3, 16, 16, 16, 16, 64, 1) == l1 and L1().tileN == 0
    assert ptocpu.get_conv_tile_shapes() == (L1(), L0(), False)
    ptocpu.set_conv_tile_shapes(l1, l0)
    assert ptocpu.get_conv_tile_shapes() == (l1, l0, True)
    ptocpu.set_conv_tile_shapes(l1)
    assert ptocpu.get_conv_tile_shapes() == (l1, L0(), False)
    l1.tileN = ptocpu.symbolic_scalar(32)  # a known symbolic scalar is its value
    assert l1.tileN == 32
    with pytest.raises(ptocpu.DTypeError, match="tile_l1_info must be a pypto_impl.TileL1Info"):
        ptocpu.set_conv_tile_shapes([3, 3, 16, 16, 16, 16, 64, 1])
    with pytest.raises(ptocpu.DTypeError, match="tile_l0_info must be a pypto_impl.TileL0Info"):
        ptocpu.set_conv_tile_shapes(l1, l1)
    with pytest.raises(ptocpu.ArgumentError, match="missing tileBatch"):
        L1(tileHin=1, tileHout=1, tileWin=1, tileWout=16, tileCinFmap=16, tileCinWeight=16, tileN=16)
    with pytest.raises(ptocpu.DTypeError, match="tileH must be an integer"):
        L0(1.5, 16, 16, 16)


def test_conv_tile_set_inside_a_scope_ends_with_it():
    with ptocpu.options(conv_tile_shapes=ptocpu.ConvTile(L1(**GOOD_L1), L0(**GOOD_L0), True)):
        assert ptocpu.get_conv_tile_shapes()[2] is True
    assert ptocpu.get_conv_tile_shapes() == (L1(), L0(), False)
    ptocpu.set_options(conv_tile_shapes=(L1(**GOOD_L1), L0(**GOOD_L0)))  # set_l0_tile False: no L0 tile
    assert ptocpu.get_conv_tile_shapes() == (L1(**GOOD_L1), L0(), False)
    ptocpu._core._reset_conv_tile_shapes()

    @ptocpu.jit
    def kernel(x: ptocpu.Tensor([2, 16, 16, 16], D.DT_FP16), out: ptocpu.Tensor([2, 64, 16, 16], D.DT_FP16)):
        ptocpu.set_conv_tile_shapes(L1(**GOOD_L1), L0(**GOOD_L0))
        out.move(ptocpu.conv(x, W16, D.DT_FP16, [1, 1], [1, 1, 1, 1], [1, 1]))

    out = np.zeros((2, 64, 16, 16), np.float16)
    with ptocpu.platform("ascend950"):
        for _ in range(2):  # the second call runs the compiled program: the tile is its setting
            kernel(np.ones((2, 16, 16, 16), np.float16), out)
            assert (out[:, :, 1:-1, 1:-1] == 144).all() and (out[:, :, 0, 0] == 64).all()
            out[:] = 0
    assert ptocpu.get_conv_tile_shapes() == (L1(), L0(), False)


def test_in_a_pypto_function():
    # Upstream's ut shape: a recorded program replays with the tile it was recorded under.
    a = ptocpu.tensor([1, 16, 64], D.DT_FP32, "fmap")
    b = ptocpu.tensor([64, 16, 3], D.DT_FP32, "weight")
    c = ptocpu.tensor([1, 64, 64], D.DT_FP32, "out")
    with ptocpu.platform("atlas_a2"):
        with ptocpu.function("CONV", a, b, c):
            ptocpu.set_conv_tile_shapes(L1(1, 1, 64, 64, 8, 8, 32, 1), L0(1, 64, 24, 32))
            ptocpu.assemble(ptocpu.conv(a, b, D.DT_FP32, [1], [1, 1], [1], extend_params={}, groups=1), [0, 0, 0], c)
        rng = np.random.default_rng(1)
        x, w = rng.integers(-3, 4, (1, 16, 64)).astype(np.float32), rng.integers(-3, 4, (64, 16, 3)).astype(np.float32)
        out = np.zeros((1, 64, 64), np.float32)
        ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(x), ptocpu.asarray(w), ptocpu.asarray(out))
    assert_same_bits(out, reference(x, w, [1], [1, 1], [1]).astype(np.float32))
