"""matmul, scaled_mm and experimental.transposed_batchmatmul (docs/ops/matmul.md, scaled_mm.md,
transposed_batchmatmul.md) against numpy float64 / int64 references written from the pages'
definitions: exact products summed (fp32 on the device: the error bound of an fp32 sum in any
order), the fixpipe's ReLU, 19-bit scale and one rounding; integer-valued data where every order
gives the exact sum, so the rounding to out_dtype is checked bit for bit.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from helpers import assert_fp32_sum, op_table

D = ptocpu
NP = {D.DT_FP16: np.float16, D.DT_BF16: ml_dtypes.bfloat16, D.DT_FP32: np.float32, D.DT_INT8: np.int8,
      D.DT_INT32: np.int32, D.DT_FP8E4M3: ml_dtypes.float8_e4m3fn, D.DT_FP8E5M2: ml_dtypes.float8_e5m2,
      D.DT_INT64: np.int64, D.DT_UINT64: np.uint64, D.DT_FP8E8M0: ml_dtypes.float8_e8m0fnu,
      D.DT_FP4_E2M1: ml_dtypes.float4_e2m1fn}
FLOATS = (D.DT_FP16, D.DT_BF16, D.DT_FP32, D.DT_FP8E4M3, D.DT_FP8E5M2)
PLATFORMS = ("cpu", "ascend950", "atlas_a3", "atlas_a2")
# The page's tables: input -> (mat2 dtypes, out dtypes of a plain product, bias dtypes on 950 / A2-A3).
TABLE = {
    D.DT_FP16: ({D.DT_FP16}, {D.DT_FP16, D.DT_FP32}, {D.DT_FP16, D.DT_FP32}, {D.DT_FP16, D.DT_FP32}),
    D.DT_BF16: ({D.DT_BF16}, {D.DT_BF16, D.DT_FP32}, {D.DT_BF16, D.DT_FP32}, {D.DT_FP32}),
    D.DT_FP32: ({D.DT_FP32}, {D.DT_FP32}, {D.DT_FP32}, {D.DT_FP32}),
    D.DT_INT8: ({D.DT_INT8}, {D.DT_INT32}, {D.DT_INT32}, {D.DT_INT32}),
    D.DT_FP8E4M3: ({D.DT_FP8E4M3, D.DT_FP8E5M2}, {D.DT_FP16, D.DT_BF16, D.DT_FP32},
                   {D.DT_FP16, D.DT_BF16, D.DT_FP32}, None),
    D.DT_FP8E5M2: ({D.DT_FP8E4M3, D.DT_FP8E5M2}, {D.DT_FP16, D.DT_BF16, D.DT_FP32},
                   {D.DT_FP16, D.DT_BF16, D.DT_FP32}, None),
}
TILE_128 = ([128, 128], [128, 128], [128, 128])


def tensor(array, dtype=None):
    a = np.ascontiguousarray(array)
    t = ptocpu.asarray(a)
    return t if dtype is None else t.astype(dtype) if t.dtype != dtype else t


def ints(rng, shape, np_dtype, low=-3, high=4):
    """Small integers: exact in every dtype, and every sum of their products is exact in fp32."""
    return rng.integers(low, high, size=shape).astype(np_dtype)


def exact_product(a, b, a_trans=False, b_trans=False):
    """The exact sums of products (float64, int64 for integers), batch dims broadcast."""
    wide = np.int64 if np.issubdtype(a.dtype, np.integer) else np.float64
    A, B = a.astype(wide), b.astype(wide)
    if a_trans:
        A = np.swapaxes(A, -1, -2)
    if b_trans:
        B = np.swapaxes(B, -1, -2)
    return A @ B


def rounded(values64, out_dtype):
    """float64 (exact) values rounded once to out_dtype: through fp32 only when that is exact."""
    np_dtype = NP[out_dtype]
    if out_dtype == D.DT_INT8:
        return np.clip(np.rint(values64), -128, 127).astype(np.int8)
    if out_dtype == D.DT_INT32:
        return values64.astype(np.int32)
    return values64.astype(np_dtype)


def scale19(x: float) -> float:
    return float((np.array([x], np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)[0])


# ---- values ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("in_dtype", list(TABLE))
def test_every_plain_pair_of_the_table_on_integer_data_is_bit_exact(in_dtype):
    rng = np.random.default_rng(len(in_dtype.name))
    for mat2_dtype in TABLE[in_dtype][0]:
        for out_dtype in TABLE[in_dtype][1]:
            a = ints(rng, (37, 70), NP[in_dtype])
            b = ints(rng, (70, 45), NP[mat2_dtype])
            got = ptocpu.matmul(tensor(a), tensor(b), out_dtype)
            assert got.dtype == out_dtype and got.shape == (37, 45)
            np.testing.assert_array_equal(got.numpy(), rounded(exact_product(a, b), out_dtype))


@pytest.mark.parametrize("in_dtype,out_dtype", [(i, o) for i in FLOATS for o in sorted(TABLE[i][1], key=lambda d: d.name)])
def test_random_floats_are_an_fp32_sum_of_exact_products(in_dtype, out_dtype):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((65, 300)).astype(NP[in_dtype])
    b = rng.standard_normal((300, 33)).astype(NP[in_dtype])
    got = ptocpu.matmul(tensor(a), tensor(b), out_dtype)
    exact = exact_product(a, b)
    assert_fp32_sum(got, exact, np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)), 300, out_dtype)


def test_int8_is_exact_at_the_extremes():
    # -128 * -128 summed 4096 times: 2^26, and alternating extremes: no intermediate saturation.
    a = np.full((3, 4096), -128, np.int8)
    b = np.full((4096, 5), -128, np.int8)
    b[::2, 1] = 127
    a[1, ::3] = 127
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_INT32)
    np.testing.assert_array_equal(got.numpy(), exact_product(a, b).astype(np.int32))
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (129, 1000)).astype(np.int8)
    b = rng.integers(-128, 128, (1000, 77)).astype(np.int8)
    np.testing.assert_array_equal(ptocpu.matmul(tensor(a), tensor(b), D.DT_INT32).numpy(),
                                  exact_product(a, b).astype(np.int32))
    assert torch.equal(torch.from_numpy(ptocpu.matmul(tensor(a[:32]), tensor(b), D.DT_INT32).numpy()),
                       torch._int_mm(torch.from_numpy(a[:32]), torch.from_numpy(b)))


@pytest.mark.parametrize("threads", [1, 2])
def test_int8_repeated_shapes_stay_exact(threads):
    # A shape's first call and its later ones may take different int8 kernels (a CPU with a tile
    # unit compiles one per shape, docs/ops/matmul.md#speed): each call of each layout is exact,
    # with the bias summed into the products, transposed operands, padded rows and two threads
    # running one shape's blocks at once.
    rng = np.random.default_rng(15)
    a = rng.integers(-128, 128, (600, 1100)).astype(np.int8)
    b = rng.integers(-128, 128, (1100, 700)).astype(np.int8)
    a[0], b[:, 0] = -128, -128
    bias = rng.integers(-2 ** 30, 2 ** 30, (1, 300)).astype(np.int32)
    padded = tensor(np.pad(a, ((0, 0), (0, 60))))[:, :1100]
    cases = [  # (call, exact result)
        (lambda: ptocpu.matmul(tensor(a[:64, :128]), tensor(b[:128, :64]), D.DT_INT32), exact_product(a[:64, :128], b[:128, :64])),
        (lambda: ptocpu.matmul(tensor(a), tensor(b), D.DT_INT32), exact_product(a, b)),
        (lambda: ptocpu.matmul(padded, tensor(b), D.DT_INT32), exact_product(a, b)),
        (lambda: ptocpu.matmul(tensor(a[:, :90].T), tensor(b[:90, :300]), D.DT_INT32, a_trans=True,
                               extend_params={"bias_tensor": tensor(bias)}),
         exact_product(a[:, :90], b[:90, :300]) + bias),
        (lambda: ptocpu.matmul(tensor(a[:, :90]), tensor(b[:90, :300]), D.DT_INT32,
                               extend_params={"bias_tensor": tensor(bias)}),
         exact_product(a[:, :90], b[:90, :300]) + bias),
        (lambda: ptocpu.matmul(tensor(a[:40, :96]), tensor(b[:96, :200].T), D.DT_INT32, b_trans=True),
         exact_product(a[:40, :96], b[:96, :200])),
    ]
    saved = ptocpu.get_num_threads()
    try:
        ptocpu.set_num_threads(threads)
        for call, want in cases:
            for _ in range(3):
                np.testing.assert_array_equal(call().numpy(), want.astype(np.int32))
    finally:
        ptocpu.set_num_threads(saved)


def test_int8_without_vnni_gives_the_same_bits():
    # Below AVX-512 (the kernel tuning's ISA cap) int8 products take fp32 GEMMs over K pieces of
    # 1024 whose sums are exact: the same int32 results, with and without bias, ReLU and a scale.
    rng = np.random.default_rng(14)
    a = rng.integers(-128, 128, (2, 70, 2500)).astype(np.int8)
    b = rng.integers(-128, 128, (2, 2500, 90)).astype(np.int8)
    a[0, 0] = -128
    b[0, :, 0] = -128
    bias = rng.integers(-2 ** 30, 2 ** 30, (1, 90)).astype(np.int32)
    calls = [lambda: ptocpu.matmul(tensor(a), tensor(b), D.DT_INT32),
             lambda: ptocpu.matmul(tensor(a), tensor(b), D.DT_INT32, extend_params={"bias_tensor": tensor(bias)}),
             lambda: ptocpu.matmul(tensor(a), tensor(b), D.DT_FP16, extend_params={"scale": 2.0 ** -12, "relu_type": 1})]
    want = [exact_product(a, b).astype(np.int32), (exact_product(a, b) + bias).astype(np.int32),
            (np.maximum(exact_product(a, b), 0).astype(np.float32) * np.float32(2.0 ** -12)).astype(np.float16)]
    try:
        for isa in ("avx2", None):
            ptocpu._core._set_kernel_tuning(-1, isa)
            for call, w in zip(calls, want):
                np.testing.assert_array_equal(call().numpy(), w)
    finally:
        ptocpu._core._set_kernel_tuning(-1, None)


@pytest.mark.parametrize("m", [40, 64, 300])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
def test_b_rows_a_multiple_of_1kib_apart(m, dtype):
    """Below AVX-512, B whose rows lie a multiple of 256 floats apart is copied with longer rows where
    the library reads it in place (src/kernels/matmul.cpp no_copy_blocks), and copies of B get such rows
    (from 64 rows of A on B itself is copied; on AVX-512 only copies, for blocks of under 128 rows): the
    same exact sums on both ISA paths, for B contiguous, a view inside wider rows, and one B broadcast
    over batches."""
    rng = np.random.default_rng(m)
    a = ints(rng, (2, m, 96), dtype)
    wide = ints(rng, (96, 1024), dtype)
    out = D.DT_INT32 if dtype == np.int8 else D.DT_FP32
    wide_t = ptocpu.asarray(wide)  # views of it keep rows 1024 elements apart
    cases = [(a[0], wide[:, :256], tensor(wide[:, :256])), (a[0], wide[:, :512], wide_t[:, :512]),
             (a[0], wide[:, :300], wide_t[:, :300]), (a, wide[None, :, :768], tensor(wide[None, :, :768]))]
    try:
        for isa in ("avx2", None):
            ptocpu._core._set_kernel_tuning(-1, isa)
            for x, y, y_t in cases:
                got = ptocpu.matmul(tensor(x), y_t, out).numpy()
                np.testing.assert_array_equal(got, exact_product(x, y).astype(got.dtype), err_msg=f"{isa} {y.shape}")
    finally:
        ptocpu._core._set_kernel_tuning(-1, None)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("a_trans", [False, True])
@pytest.mark.parametrize("b_trans", [False, True])
def test_transposed_operands_are_read_in_place(a_trans, b_trans, dtype):
    """fp32 operands are read in place; when both are transposed, their product as stored is transposed
    into the output (src/kernels/matmul.cpp run_swapped), fp16 ones are widened to row-major copies;
    batches, one of them broadcast, take the same rule."""
    rng = np.random.default_rng(11)
    a = ints(rng, (40, 24) if a_trans else (24, 40), dtype)
    b = ints(rng, (33, 40) if b_trans else (40, 33), dtype)
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32, a_trans=a_trans, b_trans=b_trans)
    np.testing.assert_array_equal(got.numpy(), exact_product(a, b, a_trans, b_trans).astype(np.float32))
    a3 = np.stack([a, a[::-1].copy()])
    b3 = b[None]  # one matrix for both batches
    got = ptocpu.matmul(tensor(a3), tensor(b3), D.DT_FP32, a_trans=a_trans, b_trans=b_trans)
    for i in range(2):
        np.testing.assert_array_equal(got.numpy()[i], exact_product(a3[i], b, a_trans, b_trans).astype(np.float32))


@pytest.mark.parametrize("in_dtype", [D.DT_FP32, D.DT_FP16, D.DT_BF16, D.DT_INT8])
@pytest.mark.parametrize("a_trans", [False, True])
@pytest.mark.parametrize("b_trans", [False, True])
@pytest.mark.parametrize("mkn", [(1, 1, 1), (8, 8, 8), (3, 5, 7), (16, 4, 16), (2, 64, 8), (5, 33, 6), (16, 8, 16)])
def test_tiny_products_are_exact_with_bias_and_transposes(mkn, a_trans, b_trans, in_dtype):
    """Products of at most 2^10 multiply-adds take a plain loop instead of the library
    (src/kernels/matmul.cpp sgemm, s8gemm); [16, 8] x [8, 16] (2^11) takes the library. Integer data: the
    exact sums; a bias starts each sum; random floats: within an fp32 sum's bound."""
    m, k, n = mkn
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    a = ints(rng, (k, m) if a_trans else (m, k), NP[in_dtype])
    b = ints(rng, (n, k) if b_trans else (k, n), NP[in_dtype])
    out_dtype = D.DT_INT32 if in_dtype == D.DT_INT8 else D.DT_FP32
    want = exact_product(a, b, a_trans, b_trans)
    got = ptocpu.matmul(tensor(a), tensor(b), out_dtype, a_trans=a_trans, b_trans=b_trans)
    np.testing.assert_array_equal(got.numpy(), rounded(want, out_dtype))
    bias_dtype = D.DT_INT32 if in_dtype == D.DT_INT8 else D.DT_FP32
    bias = ints(rng, (1, n), NP[bias_dtype], -50, 50)
    got = ptocpu.matmul(tensor(a), tensor(b), out_dtype, a_trans=a_trans, b_trans=b_trans,
                        extend_params={"bias_tensor": tensor(bias)})
    np.testing.assert_array_equal(got.numpy(), rounded(want + bias, out_dtype))
    if in_dtype == D.DT_INT8:
        # The extremes, and a bias near int32's ends: the int32 sums wrap as the library GEMM's do.
        a, b = rng.choice(np.array([-128, 127], np.int8), a.shape), rng.choice(np.array([-128, 127], np.int8), b.shape)
        bias = rng.choice(np.array([2 ** 31 - 1, -2 ** 31, 0], np.int64), (1, n)).astype(np.int32)
        got = ptocpu.matmul(tensor(a), tensor(b), out_dtype, a_trans=a_trans, b_trans=b_trans,
                            extend_params={"bias_tensor": tensor(bias)})
        want = (exact_product(a, b, a_trans, b_trans) + bias.astype(np.int64)) % 2 ** 32
        np.testing.assert_array_equal(got.numpy(), np.where(want >= 2 ** 31, want - 2 ** 32, want).astype(np.int32))
    else:
        fa = rng.standard_normal(a.shape).astype(NP[in_dtype])
        fb = rng.standard_normal(b.shape).astype(NP[in_dtype])
        got = ptocpu.matmul(tensor(fa), tensor(fb), D.DT_FP32, a_trans=a_trans, b_trans=b_trans)
        A, B = (fa.T if a_trans else fa), (fb.T if b_trans else fb)
        assert_fp32_sum(got, exact_product(fa, fb, a_trans, b_trans),
                        np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64)), k, D.DT_FP32)


def test_strided_and_valid_shape_views():
    rng = np.random.default_rng(5)
    base_a = ints(rng, (50, 90), np.float32)
    base_b = ints(rng, (80, 70), np.float32)
    a = tensor(base_a)[::2, 5:85:2]     # [25, 40], both strides > 1
    b = tensor(base_b)[10:50, ::3]      # [40, 24]
    got = ptocpu.matmul(a, b, D.DT_FP32)
    np.testing.assert_array_equal(got.numpy(), exact_product(base_a[::2, 5:85:2], base_b[10:50, ::3]).astype(np.float32))
    # Views with a valid shape: only the valid part is read; the product has its shape.
    va = ptocpu.view(tensor(base_a), [16, 32], [4, 8], valid_shape=[10, 20])
    vb = ptocpu.view(tensor(base_b), [32, 16], [0, 0], valid_shape=[20, 7])
    got = ptocpu.matmul(va, vb, D.DT_FP32)
    assert got.shape == (10, 7)
    np.testing.assert_array_equal(got.numpy(), (base_a[4:14, 8:28] @ base_b[0:20, 0:7]).astype(np.float32))


def test_transposed_numpy_views_are_not_copied_wrongly():
    rng = np.random.default_rng(9)
    a = ints(rng, (30, 20), np.float32)
    b = ints(rng, (30, 20), np.float32)
    got = ptocpu.matmul(ptocpu.asarray(a.T), ptocpu.asarray(b), D.DT_FP32)  # a.T is a strided view
    np.testing.assert_array_equal(got.numpy(), (a.T @ b).astype(np.float32))


@pytest.mark.parametrize("shapes", [((2, 16, 32), (2, 32, 16)), ((1, 32, 64), (3, 64, 16)), ((4, 8, 5), (1, 5, 6)),
                                    ((2, 1, 8, 5), (1, 3, 5, 6)), ((2, 3, 8, 5), (2, 3, 5, 6))])
def test_batch_dims_broadcast_when_one_side_is_1(shapes):
    rng = np.random.default_rng(2)
    a = ints(rng, shapes[0], np.float16)
    b = ints(rng, shapes[1], np.float16)
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP16)
    want = exact_product(a, b).astype(np.float16)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.numpy(), want)


def test_bias_starts_the_accumulator_2d_and_3d():
    rng = np.random.default_rng(4)
    a = ints(rng, (3, 8, 16), np.float16)
    b = ints(rng, (3, 16, 24), np.float16)
    for bias in (ints(rng, (1, 24), np.float16), ints(rng, (3, 1, 24), np.float32), ints(rng, (1, 1, 24), np.float16)):
        got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32, extend_params={"bias_tensor": tensor(bias)})
        np.testing.assert_array_equal(got.numpy(), (exact_product(a, b) + bias).astype(np.float32))
    wide = ints(rng, (1, 32), np.float16)  # a view whose valid part is the bias
    view = ptocpu.view(tensor(wide), [1, 32], [0, 0], valid_shape=[1, 24])
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32, extend_params={"bias_tensor": view})
    np.testing.assert_array_equal(got.numpy(), (exact_product(a, b) + wide[:, :24]).astype(np.float32))
    ai, bi = ints(rng, (5, 9), np.int8), ints(rng, (9, 4), np.int8)
    bias = np.array([[2 ** 31 - 100, -5, 0, 7]], np.int32)
    got = ptocpu.matmul(tensor(ai), tensor(bi), D.DT_INT32, extend_params={"bias_tensor": tensor(bias)})
    np.testing.assert_array_equal(got.numpy(), (exact_product(ai, bi) + bias).astype(np.int64).astype(np.int32))


def test_per_tensor_scale_is_cut_to_19_bits_and_relu_comes_first():
    rng = np.random.default_rng(8)
    a, b = ints(rng, (16, 32), np.int8, -9, 10), ints(rng, (32, 64), np.int8, -9, 10)
    exact = exact_product(a, b).astype(np.float64)
    s = scale19(0.2)
    assert s != np.float32(0.2)
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP16, extend_params={"scale": 0.2})
    np.testing.assert_array_equal(got.numpy(), (exact.astype(np.float32) * np.float32(s)).astype(np.float16))
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP16, extend_params={"scale": 0.2, "relu_type": ptocpu.ReLuType.RELU})
    np.testing.assert_array_equal(got.numpy(), (np.maximum(exact, 0).astype(np.float32) * np.float32(s)).astype(np.float16))
    # A negative scale shows the order: ReLU on the accumulator, then the scale.
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP16, extend_params={"scale": -0.5, "relu_type": 1})
    np.testing.assert_array_equal(got.numpy(), (np.maximum(exact, 0) * -0.5).astype(np.float16))


@pytest.mark.parametrize("scale_dtype", [D.DT_UINT64, D.DT_INT64])
def test_per_channel_scale_tensor_reads_the_low_32_bits(scale_dtype):
    rng = np.random.default_rng(6)
    a, b = ints(rng, (8, 32), np.int8, -9, 10), ints(rng, (32, 16), np.int8, -9, 10)
    scales = rng.uniform(0.1, 2.0, 16).astype(np.float32)
    raw = scales.view(np.uint32).astype(np.uint64) | np.uint64(0xABCD << 40)  # high bits are not read
    st = tensor(raw.reshape(1, 16).view(NP[scale_dtype]))
    cut = (scales.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP16, extend_params={"scale_tensor": st})
    np.testing.assert_array_equal(got.numpy(), (exact_product(a, b).astype(np.float32) * cut).astype(np.float16))


@pytest.mark.parametrize("in_dtype", list(TABLE))
def test_quant_to_int8_rounds_to_nearest_even_and_saturates(in_dtype):
    rng = np.random.default_rng(1)
    a, b = ints(rng, (12, 20), NP[in_dtype]), ints(rng, (20, 10), NP[in_dtype])
    exact = exact_product(a, b).astype(np.float64)
    for scale in (0.5, 3.0, 37.0):  # halves (ties), in range, saturating
        got = ptocpu.matmul(tensor(a), tensor(b), D.DT_INT8, extend_params={"scale": scale})
        np.testing.assert_array_equal(got.numpy(), np.clip(np.rint(exact * scale), -128, 127).astype(np.int8))


@pytest.mark.parametrize("mode,want", [(ptocpu.TransMode.CAST_RINT, 1.0), (ptocpu.TransMode.CAST_ROUND, 1 + 2 ** -10),
                                       (ptocpu.TransMode.CAST_NONE, 1 + 2 ** -11)])
def test_trans_mode_rounds_fp32_operands_to_tf32(mode, want):
    # 1 + 2^-11 lies halfway between the TF32 neighbours 1 and 1 + 2^-10; 1 + 3 * 2^-11 rounds up
    # either way (to 1 + 2^-9).
    a = np.array([[1 + 2 ** -11, 1 + 3 * 2 ** -11]], np.float32)
    b = np.array([[1.0], [0.0]], np.float32)
    b2 = np.array([[0.0], [1.0]], np.float32)
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32, extend_params={"trans_mode": mode})
    assert got.numpy()[0, 0] == np.float32(want)
    got = ptocpu.matmul(tensor(a), tensor(b2), D.DT_FP32, extend_params={"trans_mode": mode})
    assert got.numpy()[0, 0] == np.float32(1 + 3 * 2 ** -11 if mode == ptocpu.TransMode.CAST_NONE else 1 + 2 ** -9)


@pytest.mark.parametrize("np_dtype", [np.float32, ml_dtypes.bfloat16])
def test_split_k_adds_the_partials_left_to_right_in_fp32(np_dtype):
    # K = 96 in pieces of 32: the first piece sums to 2^24, each later one to 1. Left to right,
    # 2^24 + 1 rounds to 2^24 (ties to even) twice; the exact sum is 2^24 + 2. (bf16 operands take
    # oneDNN's bf16 kernel piece by piece where the CPU has one: 2^17 products or more.)
    a = np.zeros((1, 96), np_dtype)
    b = np.zeros((96, 2048), np_dtype)
    a[0, 0], b[0, :] = 2.0 ** 12, 2.0 ** 12
    a[0, 32], b[32, :] = 1.0, 1.0
    a[0, 64], b[64, :] = 1.0, 1.0
    ptocpu.set_cube_tile_shapes([16, 16], [16, 32], [16, 16], enable_split_k=True)
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32)
    assert (got.numpy() == np.float32(2.0 ** 24)).all()
    ptocpu.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32)
    assert np.isin(got.numpy(), [np.float32(2.0 ** 24), np.float32(2.0 ** 24 + 2)]).all()


@pytest.mark.parametrize("np_dtype", [np.float32, ml_dtypes.bfloat16])
def test_nan_and_inf_propagate(np_dtype):
    # zero-padded to 2^17 products or more (bf16: oneDNN's bf16 kernel where the CPU has one)
    a = np.zeros((3, 128), np_dtype)
    b = np.zeros((128, 512), np_dtype)
    a[:, :2] = np.array([[np.nan, 1.0], [np.inf, 0.0], [1.0, 1.0]])
    b[:2, :2] = np.array([[1.0, 0.0], [1.0, 1.0]])
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32).numpy()[:, :2]
    assert np.isnan(got[0]).all() and got[1, 0] == np.inf and np.isnan(got[1, 1])
    np.testing.assert_array_equal(got[2], [2.0, 1.0])


def test_empty_operands_on_cpu_and_their_error_on_the_chips():
    a, b = np.zeros((4, 0), np.float32), np.zeros((0, 3), np.float32)
    bias = np.array([[1.0, 2.0, 3.0]], np.float32)
    got = ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32, extend_params={"bias_tensor": tensor(bias)})
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(bias, (4, 3)))
    assert ptocpu.matmul(tensor(np.zeros((0, 5), np.float16)), tensor(np.ones((5, 2), np.float16)),
                         D.DT_FP16).shape == (0, 2)
    with ptocpu.platform("ascend950"):
        ptocpu.set_cube_tile_shapes(*TILE_128)
        with pytest.raises(ptocpu.ArgumentError, match="is empty; platform ascend950 does not accept"):
            ptocpu.matmul(tensor(a), tensor(b), D.DT_FP32)


def test_bf16_sums_keep_their_subnormals():
    # 2^-70 squared is 2^-140, subnormal in fp32: CPUs' bf16 dot products would flush it to zero, so
    # operands holding values this small take the widened fp32 GEMM (docs/ops/matmul.md#speed). Every
    # sum here is exact in fp32, so the result is the exact product, bit for bit.
    tiny = 2.0 ** -70
    for a_trans, b_trans in ((False, False), (True, False), (False, True)):
        a = np.full((300, 96), tiny)
        b = np.full((96, 520), tiny)
        a[3, :], b[:, 5] = 1.0, 1.0
        av, bv = a.T.copy() if a_trans else a, b.T.copy() if b_trans else b
        got = ptocpu.matmul(tensor(av.astype(ml_dtypes.bfloat16)), tensor(bv.astype(ml_dtypes.bfloat16)), D.DT_FP32,
                            a_trans=a_trans, b_trans=b_trans)
        want = exact_product(a, b).astype(np.float32)
        assert want[0, 0] == np.float32(96 * 2.0 ** -140) and want[0, 0] < np.finfo(np.float32).tiny
        np.testing.assert_array_equal(got.numpy(), want)
    # without them: the bf16 kernels, still the exact sums (and a bias added once)
    a, b = np.where(a == tiny, 0.5, a), np.where(b == tiny, -0.25, b)
    a[7, :] = 0.0
    a[7, ::2] = 2.0 ** -40  # the smallest magnitude given to the bf16 kernels
    bf = ml_dtypes.bfloat16
    got = ptocpu.matmul(tensor(a.astype(bf)), tensor(b.astype(bf)), D.DT_FP32)
    np.testing.assert_array_equal(got.numpy(), exact_product(a, b).astype(np.float32))
    bias = np.arange(520, dtype=np.float32)[None, :]
    got = ptocpu.matmul(tensor(a[:7].astype(bf)), tensor(b.astype(bf)), D.DT_FP32, extend_params={"bias_tensor": tensor(bias)})
    np.testing.assert_array_equal(got.numpy(), (exact_product(a[:7], b) + bias).astype(np.float32))


@pytest.mark.parametrize("dtype", [D.DT_FP32, D.DT_BF16, D.DT_INT8])
def test_one_and_two_threads_give_the_same_bits(dtype):
    rng = np.random.default_rng(12)
    np_dtype = NP[dtype]
    # [520, 700] rows: 2 x 2 output blocks per batch (260 rows and 550 columns each); [300, 700]
    # rows: one block row cut into four of 256 columns and a last one of 76; 2 batches each.
    for rows in (520, 300):
        a = rng.integers(-100, 100, (2, rows, 700)) if dtype == D.DT_INT8 else rng.standard_normal((2, rows, 700))
        b = rng.integers(-100, 100, (1, 700, 1100)) if dtype == D.DT_INT8 else rng.standard_normal((1, 700, 1100))
        ta, tb = tensor(a.astype(np_dtype)), tensor(b.astype(np_dtype))
        out_dtype = D.DT_INT32 if dtype == D.DT_INT8 else D.DT_FP32
        results = []
        for threads in (1, 2):
            ptocpu.set_num_threads(threads)
            results.append(ptocpu.matmul(ta, tb, out_dtype).numpy())
        np.testing.assert_array_equal(results[0].view(np.uint32), results[1].view(np.uint32))


def test_tensor_method_and_the_at_operator():
    rng = np.random.default_rng(13)
    a, b = ints(rng, (6, 8), np.float16), ints(rng, (8, 4), np.float16)
    got = tensor(a) @ tensor(b)
    assert got.dtype == D.DT_FP16
    np.testing.assert_array_equal(got.numpy(), exact_product(a, b).astype(np.float16))
    ai, bi = ints(rng, (6, 8), np.int8), ints(rng, (8, 4), np.int8)
    got = tensor(ai) @ tensor(bi)
    assert got.dtype == D.DT_INT32
    got = tensor(ai).matmul(tensor(bi), D.DT_INT32, a_trans=False)
    np.testing.assert_array_equal(got.numpy(), exact_product(ai, bi).astype(np.int32))
    with pytest.raises(ptocpu.DTypeError, match="no @ result dtype"):
        tensor(np.ones((2, 2), np.float64)) @ tensor(np.ones((2, 2), np.float64))


# ---- the page's examples --------------------------------------------------------------------------

def test_the_pages_examples():
    ptocpu.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
    a1 = ptocpu.tensor([16, 32], ptocpu.DT_BF16, "tensor_a")
    b1 = ptocpu.tensor([32, 64], ptocpu.DT_BF16, "tensor_b")
    out1 = ptocpu.matmul(a1, b1, ptocpu.DT_BF16)
    assert out1.shape == [16, 64] and out1.dtype == ptocpu.DT_BF16
    a2 = ptocpu.tensor((2, 16, 32), ptocpu.DT_FP16, "tensor_a")
    b2 = ptocpu.tensor((2, 32, 16), ptocpu.DT_FP16, "tensor_b")
    assert ptocpu.matmul(a2, b2, ptocpu.DT_FP16).shape == [2, 16, 16]
    a3 = ptocpu.tensor((1, 32, 64), ptocpu.DT_FP32, "tensor_a")
    b3 = ptocpu.tensor((3, 64, 16), ptocpu.DT_FP32, "tensor_b")
    assert ptocpu.matmul(a3, b3, ptocpu.DT_FP32).shape == [3, 32, 16]
    a = ptocpu.tensor((16, 32), ptocpu.DT_FP16, "tensor_a")
    b = ptocpu.tensor((32, 64), ptocpu.DT_FP16, "tensor_b")
    bias = ptocpu.tensor((1, 64), ptocpu.DT_FP16, "tensor_bias")
    out = ptocpu.matmul(a, b, ptocpu.DT_FP32, extend_params={"bias_tensor": bias})
    assert out.shape == [16, 64] and out.dtype == ptocpu.DT_FP32
    a = ptocpu.tensor((16, 32), ptocpu.DT_INT8, "tensor_a")
    b = ptocpu.tensor((32, 64), ptocpu.DT_INT8, "tensor_b")
    # The page's dequant examples ask for DT_BF16; its table 4 (and the device's check) has
    # DT_INT8 -> DT_FP16 only, so they raise here as on the device. With DT_FP16 they run.
    for extend in ({"scale": 0.2}, {"scale": 0.2, "relu_type": ptocpu.ReLuType.RELU},
                   {"scale_tensor": ptocpu.tensor((1, 64), ptocpu.DT_UINT64, "tensor_scale"),
                    "relu_type": ptocpu.ReLuType.RELU}):
        with pytest.raises(ptocpu.DTypeError, match="out_dtype DT_BF16 is not supported for DT_INT8 operands"):
            ptocpu.matmul(a, b, ptocpu.DT_BF16, extend_params=extend)
        assert ptocpu.matmul(a, b, ptocpu.DT_FP16, extend_params=extend).shape == [16, 64]
    a = ptocpu.tensor((16, 32), ptocpu.DT_FP16, "tensor_a")
    b = ptocpu.tensor((32, 64), ptocpu.DT_FP16, "tensor_b")
    assert ptocpu.matmul(a, b, ptocpu.DT_INT8, extend_params={"scale": 0.2}).dtype == ptocpu.DT_INT8
    a = ptocpu.tensor((16, 32), ptocpu.DT_FP32, "tensor_a")
    b = ptocpu.tensor((32, 64), ptocpu.DT_FP32, "tensor_b")
    scale_tensor = ptocpu.tensor((1, 64), ptocpu.DT_UINT64, "tensor_scale")
    out = ptocpu.matmul(a, b, ptocpu.DT_INT8, extend_params={"scale_tensor": scale_tensor,
                                                               "relu_type": ptocpu.ReLuType.RELU})
    assert out.dtype == ptocpu.DT_INT8
    with ptocpu.platform("ascend950"):
        out = ptocpu.matmul(a, b, ptocpu.DT_FP32, extend_params={"trans_mode": ptocpu.TransMode.CAST_ROUND})
        assert out.shape == [16, 64]


# ---- the platform rows ----------------------------------------------------------------------------

@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_dtype_table_per_platform(platform):
    ptocpu.set_platform(platform)
    ptocpu.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    chips_a2a3 = platform in ("atlas_a3", "atlas_a2")
    row = op_table(platform, "matmul")
    everything = list(NP)
    for in_dtype in everything:
        offered = in_dtype in TABLE and not (chips_a2a3 and TABLE[in_dtype][3] is None)
        assert (in_dtype.name in row["dtypes"]) == offered, in_dtype
        a = tensor(np.ones((32, 64), NP[in_dtype]))
        for mat2_dtype in everything:
            b = tensor(np.ones((64, 32), NP[mat2_dtype]))
            for out_dtype in (D.DT_FP16, D.DT_BF16, D.DT_FP32, D.DT_INT32, D.DT_INT8, D.DT_INT64):
                fixpipe = out_dtype == D.DT_INT8 or (in_dtype == D.DT_INT8 and out_dtype == D.DT_FP16)
                extend = {"scale": 1.0} if fixpipe else None
                ok = offered and mat2_dtype in TABLE[in_dtype][0] and (out_dtype in TABLE[in_dtype][1] or fixpipe)
                if ok:
                    got = ptocpu.matmul(a, b, out_dtype, extend_params=extend)
                    assert got.dtype == out_dtype and (got.numpy().astype(np.float64) == 64).all()
                else:
                    with pytest.raises(ptocpu.DTypeError):
                        ptocpu.matmul(a, b, out_dtype, extend_params=extend)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_bias_dtypes_per_platform(platform):
    ptocpu.set_platform(platform)
    ptocpu.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    chips_a2a3 = platform in ("atlas_a3", "atlas_a2")
    for in_dtype, (_, outs, bias_950, bias_a2a3) in TABLE.items():
        if chips_a2a3 and bias_a2a3 is None:
            continue
        allowed = bias_a2a3 if chips_a2a3 else bias_950
        out_dtype = sorted(outs, key=lambda d: d.name)[-1]
        a, b = tensor(np.ones((32, 64), NP[in_dtype])), tensor(np.ones((64, 32), NP[in_dtype]))
        for bias_dtype in (D.DT_FP16, D.DT_BF16, D.DT_FP32, D.DT_INT32):
            bias = tensor(np.full((1, 32), 2, NP[bias_dtype]))
            if bias_dtype in allowed:
                got = ptocpu.matmul(a, b, out_dtype, extend_params={"bias_tensor": bias})
                assert (got.numpy().astype(np.float64) == 66).all()
            else:
                with pytest.raises(ptocpu.DTypeError, match="bias_tensor dtype"):
                    ptocpu.matmul(a, b, out_dtype, extend_params={"bias_tensor": bias})


def test_scaled_mm_and_transposed_batchmatmul_rows():
    assert op_table("atlas_a2", "scaled_mm")["offered"] is False
    assert op_table("ascend950", "scaled_mm")["dtypes"] == "DT_FP8E4M3, DT_FP8E5M2, DT_FP4_E2M1"
    with ptocpu.platform("atlas_a3"):
        with pytest.raises(ptocpu.UnsupportedError, match="scaled_mm: not offered on platform atlas_a3"):
            ptocpu.scaled_mm(None, None, None, None, None)
    assert ptocpu.experimental.transposed_batchmatmul is ptocpu.transposed_batchmatmul


# ---- errors ---------------------------------------------------------------------------------------

def f32(*shape):
    return tensor(np.ones(shape, np.float32))


def f16(*shape):
    return tensor(np.ones(shape, np.float16))


@pytest.mark.parametrize("call,error,message", [
    (lambda: ptocpu.matmul(f32(2, 3), f32(2, 3, 4), D.DT_FP32), ptocpu.ArgumentError, "must be equal and in \\[2, 4\\]"),
    (lambda: ptocpu.matmul(f32(1, 1, 1, 2, 3), f32(1, 1, 1, 3, 4), D.DT_FP32), ptocpu.ArgumentError, "in \\[2, 4\\]"),
    (lambda: ptocpu.matmul(f32(2, 3), f32(4, 5), D.DT_FP32), ptocpu.ArgumentError, "K of input .* is 3 but K of mat2"),
    (lambda: ptocpu.matmul(f32(2, 3), f32(5, 3), D.DT_FP32, b_trans=False), ptocpu.ArgumentError, "K of"),
    (lambda: ptocpu.matmul(f32(2, 2, 3), f32(3, 3, 4), D.DT_FP32), ptocpu.ArgumentError, "batch dim 0 .* equal or 1"),
    (lambda: ptocpu.matmul(f32(2, 3), f16(3, 4), D.DT_FP32), ptocpu.DTypeError, "must be equal \\(only the two fp8"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_BF16), ptocpu.DTypeError, "out_dtype DT_BF16 is not supported"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP32, c_matrix_nz=True), ptocpu.ArgumentError, "c_matrix_nz"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP32, extend_params=[1]), ptocpu.DTypeError, "must be a dict"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP32, extend_params={"bias": 1}), ptocpu.ArgumentError,
     "has no key 'bias'; allowed: 'bias_tensor', 'scale', 'scale_tensor', 'relu_type', 'trans_mode'"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP32, extend_params={"bias_tensor": f16(4)}),
     ptocpu.ArgumentError, "bias_tensor shape \\[4\\] must be \\[.., 1, N\\]"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP32, extend_params={"bias_tensor": f16(1, 5)}),
     ptocpu.ArgumentError, "must end in N = 4"),
    (lambda: ptocpu.matmul(f16(2, 2, 3), f16(2, 3, 4), D.DT_FP32, extend_params={"bias_tensor": f16(3, 1, 4)}),
     ptocpu.ArgumentError, "has batch 3 where the output has 2"),
    (lambda: ptocpu.matmul(f16(1, 2, 2, 3), f16(1, 2, 3, 4), D.DT_FP32, extend_params={"bias_tensor": f16(1, 2, 1, 4)}),
     ptocpu.ArgumentError, "bias_tensor rank 4 does not fit a 4-D product"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP32, extend_params={"scale": 0.5}), ptocpu.DTypeError,
     "scale needs DT_INT8 operands with out_dtype DT_FP16, or out_dtype DT_INT8"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_INT8), ptocpu.ArgumentError, "give extend_params 'scale'"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_INT8, extend_params={"scale_tensor": f32(1, 4)}),
     ptocpu.DTypeError, "scale_tensor dtype DT_FP32 is not supported; allowed: DT_INT64, DT_UINT64"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP16, extend_params={"scale_tensor": tensor(np.ones((1, 4), np.uint64))}),
     ptocpu.DTypeError, "scale_tensor needs"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_INT8, extend_params={"scale_tensor": tensor(np.ones((2, 4), np.uint64))}),
     ptocpu.ArgumentError, "scale_tensor shape \\[2, 4\\] must be"),
    (lambda: ptocpu.matmul(f16(2, 3), f16(3, 4), D.DT_FP32, extend_params={"trans_mode": 1}), ptocpu.DTypeError,
     "trans_mode is only supported for DT_FP32"),
    (lambda: ptocpu.matmul(f32(2, 3), f32(3, 4), D.DT_FP32, extend_params={"trans_mode": 3}), ptocpu.ArgumentError,
     "trans_mode 3 is not supported"),
    (lambda: ptocpu.matmul(f32(2, 3), f32(3, 4), D.DT_FP32, extend_params={"relu_type": 2}), ptocpu.ArgumentError,
     "relu_type 2 is not supported"),
    (lambda: ptocpu.matmul(f32(2, 3), f32(3, 4), D.DT_INT8, extend_params={"scale": 1.0, "trans_mode": 1}),
     ptocpu.DTypeError, "trans_mode needs DT_FP32 operands and out_dtype DT_FP32"),
    (lambda: ptocpu.matmul(f32(2, 3), f32(3, 4), "DT_FOO"), ptocpu.ArgumentError, "DT_FOO"),
    (lambda: ptocpu.matmul(f32(2, 3), f32(3, 4), D.DT_FP32, a_trans=1), ptocpu.DTypeError, "a_trans must be a bool"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_nz_rules_on_the_chips():
    a = f16(32, 48)
    a.format = ptocpu.TileOpFormat.TILEOP_NZ
    assert a.format == ptocpu.TileOpFormat.TILEOP_NZ and a[0:16].format == ptocpu.TileOpFormat.TILEOP_NZ
    assert ptocpu.matmul(a[0:20], f16(48, 16), D.DT_FP32).shape == (20, 16)  # cpu: no device layout rules
    ptocpu.set_platform("ascend950")
    ptocpu.set_cube_tile_shapes([16, 16], [16, 48], [16, 16])
    ok = ptocpu.matmul(a, f16(48, 16), D.DT_FP32)
    np.testing.assert_array_equal(ok.numpy(), np.full((32, 16), 48, np.float32))
    with pytest.raises(ptocpu.ArgumentError, match="NZ with an outer axis of 20; NZ needs it a multiple of 16"):
        ptocpu.matmul(a[0:20], f16(48, 16), D.DT_FP32)
    with pytest.raises(ptocpu.ArgumentError, match="NZ with an inner axis of 40 \\(80 bytes\\); NZ needs it 32-byte"):
        ptocpu.matmul(a[:, 0:40], f16(40, 16), D.DT_FP32)
    x = f32(16, 16)
    x.format = ptocpu.TileOpFormat.TILEOP_NZ
    with pytest.raises(ptocpu.ArgumentError, match="DT_FP32 must be ND; NZ is not supported"):
        ptocpu.matmul(x, f32(16, 16), D.DT_FP32)
    ptocpu.set_cube_tile_shapes([8, 8], [16, 16], [16, 16])
    with pytest.raises(ptocpu.TileError, match="an NZ operand needs mL0 a multiple of 16"):
        ptocpu.matmul(a, f16(48, 16), D.DT_FP32)
    nz = ptocpu.from_torch(torch.ones(16, 16, dtype=torch.float16), tensor_format=ptocpu.TileOpFormat.TILEOP_NZ)
    assert nz.format == ptocpu.TileOpFormat.TILEOP_NZ


# ---- the cube tile --------------------------------------------------------------------------------

def test_cube_tile_is_required_on_the_chips_only():
    a, b = f16(16, 32), f16(32, 16)
    assert ptocpu.matmul(a, b, D.DT_FP32).shape == (16, 16)
    for platform in ("ascend950", "atlas_a3", "atlas_a2"):
        with ptocpu.platform(platform):
            with pytest.raises(ptocpu.TileError, match=f"no cube tile shape is set; .*platform {platform} needs one"):
                ptocpu.matmul(a, b, D.DT_FP32)


@pytest.mark.parametrize("tile,a_trans,message", [
    (([16, 16], [0, 32], [16, 16]), False, "every value must be > 0"),
    (([16, 16], [8, 32], [16, 16]), False, "kL0 and nL0 must be multiples of 16"),
    (([16, 16], [16, 32], [24, 48]), False, "kL0 and nL0 must be multiples of 16"),
    (([16, 16], [32, 16], [16, 16]), False, "needs kL0 <= kAL1 and kAL1 % kL0 == 0"),
    (([16, 16], [32, 64, 48], [16, 16]), False, "needs kL0 <= kBL1 and kBL1 % kL0 == 0"),
    (([16, 16], [16, 32], [32, 48]), False, "needs nL0 <= nL1 and nL1 % nL0 == 0"),
    (([16, 24], [16, 32], [16, 16]), False, "needs mL0 <= mL1 and mL1 % mL0 == 0"),
    (([8, 8], [16, 32], [16, 16]), True, "a transposed ND input needs mL0 \\* 2 bytes = 16 32-byte aligned"),
    (([16, 16], [16, 32, 48], [16, 16]), False, "the larger must be a multiple of the smaller"),
])
def test_cube_tile_rules(tile, a_trans, message):
    ptocpu.set_cube_tile_shapes(*tile)
    a = f16(64, 16) if a_trans else f16(16, 64)
    with pytest.raises(ptocpu.TileError, match=message):
        ptocpu.matmul(a, f16(64, 16), D.DT_FP32, a_trans=a_trans)


def test_cube_tile_alignment_in_bytes():
    ptocpu.set_cube_tile_shapes([16, 16], [16, 32], [16, 16])
    with pytest.raises(ptocpu.TileError, match="kL0 \\* 1 bytes of DT_INT8 = 16 is not 32-byte aligned"):
        ptocpu.matmul(tensor(np.ones((16, 64), np.int8)), tensor(np.ones((64, 16), np.int8)), D.DT_INT32)
    ptocpu.set_cube_tile_shapes([16, 16], [32, 64], [16, 16])
    with pytest.raises(ptocpu.TileError, match="nL0 \\* 1 bytes of DT_INT8 = 16 is not 32-byte aligned"):
        ptocpu.matmul(tensor(np.ones((16, 64), np.int8)), tensor(np.ones((64, 16), np.int8)), D.DT_INT32)


def test_cube_tile_lengths_are_checked_when_set():
    with pytest.raises(ptocpu.TileError, match="m must have exactly 2 elements, got 3"):
        ptocpu.set_cube_tile_shapes([16, 16, 16], [16, 16], [16, 16])
    with pytest.raises(ptocpu.TileError, match="k must have 2 or 3 elements, got 1"):
        ptocpu.set_cube_tile_shapes([16, 16], [16], [16, 16])
    with pytest.raises(ptocpu.DTypeError, match="m must be a list of ints"):
        ptocpu.set_cube_tile_shapes(16, [16, 16], [16, 16])
    ptocpu.set_cube_tile_shapes([16, 32], [64, 128], [32, 64], True)
    assert ptocpu.get_cube_tile_shapes() == ([16, 32], [64, 128, 128], [32, 64], True)
    ptocpu.set_matrix_size([32, 64, 16])


# Each buffer's capacity: (platform, dtype, tile, extend, buffer, bytes, limit).
CAPACITY = [
    ("ascend950", D.DT_FP16, ([144, 144], [256, 256], [128, 128]), {}, "L0A", 73728, 65536),
    ("atlas_a2", D.DT_FP32, ([64, 64], [128, 128], [256, 256]), {}, "L0B", 131072, 65536),
    ("atlas_a3", D.DT_FP16, ([256, 256], [16, 16], [256, 256]), {}, "L0C", 262144, 131072),
    ("ascend950", D.DT_FP16, ([256, 256], [16, 16], [512, 512]), {}, "L0C", 524288, 262144),
    ("ascend950", D.DT_FP16, ([128, 512], [64, 512], [128, 512]), {}, "L1", 1048576, 524288),
    ("atlas_a2", D.DT_FP16, ([16, 16], [16, 16], [512, 512]), {"bias": D.DT_FP32}, "bias table", 2048, 1024),
    ("ascend950", D.DT_INT8, ([16, 16], [32, 32], [1024, 1024]), {"scale_tensor": True}, "fixpipe buffer", 8192, 4096),
    ("atlas_a3", D.DT_INT8, ([16, 16], [32, 32], [512, 512]), {"scale_tensor": True}, "fixpipe buffer", 4096, 2048),
]


@pytest.mark.parametrize("platform,dtype,tile,extend,buffer,need,limit", CAPACITY)
def test_each_cube_buffer_capacity_is_a_tile_error(platform, dtype, tile, extend, buffer, need, limit):
    ptocpu.set_platform(platform)
    ptocpu.set_cube_tile_shapes(*tile)
    (_, m), (_, k), (_, n) = tile  # a product as large as the L1 tiles: nothing is clipped
    a, b = tensor(np.ones((m, k), NP[dtype])), tensor(np.ones((k, n), NP[dtype]))
    params = {}
    out = D.DT_INT32 if dtype == D.DT_INT8 else D.DT_FP32
    if "bias" in extend:
        params["bias_tensor"] = tensor(np.ones((1, n), NP[extend["bias"]]))
    if "scale_tensor" in extend:
        params["scale_tensor"] = tensor(np.ones((1, n), np.uint64))
        out = D.DT_FP16
    with pytest.raises(ptocpu.TileError, match=f"needs {need} bytes of {buffer} .* but platform {platform} has {limit}$"):
        ptocpu.matmul(a, b, out, extend_params=params)
    # The same tile passes every rule but the platform's capacity: cpu has none.
    ptocpu.set_platform("cpu")
    assert ptocpu.matmul(a, b, out, extend_params=params).shape == (m, n)


def test_capacity_counts_tiles_clipped_to_the_product():
    # upstream's st/operator/flash_attention_mha: m=[128, 512], k=[256, 512] over 64-row products
    ptocpu.set_platform("ascend950")
    ptocpu.set_cube_tile_shapes([128, 512], [256, 512], [64, 64])
    p, v = tensor(np.ones((64, 64), ml_dtypes.bfloat16)), tensor(np.ones((64, 64), ml_dtypes.bfloat16))
    np.testing.assert_array_equal(ptocpu.matmul(p, v, D.DT_FP32).numpy(), np.full((64, 64), 64.0, np.float32))
    big = tensor(np.ones((512, 512), ml_dtypes.bfloat16))  # the whole tile: 512 KiB of A alone, plus B
    with pytest.raises(ptocpu.TileError, match=r"needs 589824 bytes of L1 \(align\(mL1\) 512 \* align\(kAL1\) 512 \* 2 "
                                               r"\+ align\(nL1\) 64 \* align\(kBL1\) 512 \* 2 bytes\)"):
        ptocpu.matmul(big, tensor(np.ones((512, 64), ml_dtypes.bfloat16)), D.DT_FP32)


def test_capacity_uses_32_element_fractals_for_1_byte_operands():
    ptocpu.set_platform("atlas_a2")
    # int8: align32(mL0 = 272) * align32(kL0 = 224) * 1 = 288 * 224 = 64512 fits; 288 rows of fp16 would not.
    ptocpu.set_cube_tile_shapes([272, 272], [224, 224], [32, 32])
    ptocpu.matmul(tensor(np.ones((272, 224), np.int8)), tensor(np.ones((224, 32), np.int8)), D.DT_INT32)
    ptocpu.set_cube_tile_shapes([304, 304], [224, 224], [32, 32])
    with pytest.raises(ptocpu.TileError, match="needs 71680 bytes of L0A \\(align\\(mL0\\) 320 \\* align\\(kL0\\) 224"):
        ptocpu.matmul(tensor(np.ones((304, 224), np.int8)), tensor(np.ones((224, 32), np.int8)), D.DT_INT32)


def test_platform_table_reports_the_cube_buffers():
    rows = {p["name"]: p for p in ptocpu.platform_table()}
    assert [rows["ascend950"][k] for k in ("l0a_bytes", "l0b_bytes", "l0c_bytes", "l1_bytes", "bias_table_bytes",
                                           "fixpipe_bytes")] == [65536, 65536, 262144, 524288, 4096, 4096]
    for chip in ("atlas_a3", "atlas_a2"):
        assert [rows[chip][k] for k in ("l0a_bytes", "l0b_bytes", "l0c_bytes", "l1_bytes", "bias_table_bytes",
                                        "fixpipe_bytes")] == [65536, 65536, 131072, 524288, 1024, 2048]
    assert rows["cpu"]["l0a_bytes"] == 0


def test_the_nd_inner_axis_is_at_most_65535_on_the_chips():
    a, b = f16(2, 70000), f16(70000, 16)
    assert ptocpu.matmul(a, b, D.DT_FP32).shape == (2, 16)  # cpu: no device layout rules
    ptocpu.set_platform("atlas_a2")
    ptocpu.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
    with pytest.raises(ptocpu.ArgumentError, match="input shape \\[2, 70000\\] has an inner axis of 70000; an ND "
                                                   "operand's inner axis is at most 65535"):
        ptocpu.matmul(a, b, D.DT_FP32)
    ptocpu.matmul(f16(2, 65535), f16(65535, 16), D.DT_FP32)


def test_trans_mode_and_split_k_rules():
    with ptocpu.platform("atlas_a2"):
        ptocpu.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        with pytest.raises(ptocpu.ArgumentError, match="trans_mode \\(TF32\\) is not supported on platform atlas_a2"):
            ptocpu.matmul(f32(16, 16), f32(16, 16), D.DT_FP32, extend_params={"trans_mode": 2})
    ptocpu.set_cube_tile_shapes([16, 16], [16, 16], [16, 16], True)
    with pytest.raises(ptocpu.ArgumentError, match="enable_split_k needs out_dtype DT_FP32 or DT_INT32"):
        ptocpu.matmul(f16(16, 16), f16(16, 16), D.DT_FP16)
    with pytest.raises(ptocpu.ArgumentError, match="enable_split_k does not combine with bias_tensor"):
        ptocpu.matmul(f16(16, 16), f16(16, 16), D.DT_FP32, extend_params={"bias_tensor": f16(1, 16)})


# ---- scaled_mm and transposed_batchmatmul ---------------------------------------------------------

def mx_reference(a, b, sa, sb):
    """(a * 2^(sa - 127)) @ (b * 2^(sb - 127)), one scale per 32 elements along K, in float64."""
    m, k = a.shape
    n = b.shape[1]
    ea = sa.reshape(m, -1).astype(np.float64)[:, np.arange(k) // 32]   # [M, K]
    eb = sb.transpose(1, 0, 2).reshape(n, -1).astype(np.float64)[:, np.arange(k) // 32].T  # [K, N]
    return (a.astype(np.float64) * 2.0 ** (ea - 127)) @ (b.astype(np.float64) * 2.0 ** (eb - 127))


@pytest.mark.parametrize("a_dtype,b_dtype", [(D.DT_FP8E4M3, D.DT_FP8E4M3), (D.DT_FP8E5M2, D.DT_FP8E4M3),
                                             (D.DT_FP4_E2M1, D.DT_FP4_E2M1)])
def test_scaled_mm_scales_each_block_of_32(a_dtype, b_dtype):
    rng = np.random.default_rng(21)
    m, k, n = 16, 160, 24
    a = ints(rng, (m, k), NP[a_dtype])
    b = ints(rng, (k, n), NP[b_dtype])
    k64 = (k + 63) // 64
    # Scales 2^-3 .. 2^3: every sum of the scaled products is exact in fp32.
    sa = rng.integers(124, 131, (m, k64, 2)).astype(np.uint8)
    sb = rng.integers(124, 131, (k64, n, 2)).astype(np.uint8)
    want = mx_reference(a, b, sa, sb)
    e8 = lambda x: tensor(x.view(ml_dtypes.float8_e8m0fnu))  # noqa: E731
    got = ptocpu.scaled_mm(tensor(a), tensor(b), D.DT_FP32, e8(sa), e8(sb))
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))
    # Transposed scales hold the same values.
    got_t = ptocpu.scaled_mm(tensor(a), tensor(b), D.DT_FP32, e8(np.ascontiguousarray(sa.transpose(1, 0, 2))),
                             e8(np.ascontiguousarray(sb.transpose(1, 0, 2))), scale_a_trans=True, scale_b_trans=True)
    np.testing.assert_array_equal(got_t.numpy(), want.astype(np.float32))
    bias = ints(rng, (1, n), np.float16)
    got = ptocpu.scaled_mm(tensor(a), tensor(b), D.DT_BF16, e8(sa), e8(sb), extend_params={"bias_tensor": tensor(bias)})
    np.testing.assert_array_equal(got.numpy(), (want + bias).astype(np.float32).astype(ml_dtypes.bfloat16))


def test_scaled_mm_errors():
    e4 = lambda *s: tensor(np.ones(s, ml_dtypes.float8_e4m3fn))  # noqa: E731
    e8 = lambda *s: tensor(np.full(s, 127, np.uint8).view(ml_dtypes.float8_e8m0fnu))  # noqa: E731
    with pytest.raises(ptocpu.ArgumentError, match="scale_a shape \\[16, 3, 2\\] must be \\[16, 2, 2\\]"):
        ptocpu.scaled_mm(e4(16, 128), e4(128, 32), D.DT_BF16, e8(16, 3, 2), e8(2, 32, 2))
    with pytest.raises(ptocpu.DTypeError, match="scale_b dtype DT_FP32 is not supported; allowed: DT_FP8E8M0"):
        ptocpu.scaled_mm(e4(16, 128), e4(128, 32), D.DT_BF16, e8(16, 2, 2), f32(2, 32, 2))
    with pytest.raises(ptocpu.DTypeError, match="mat_a dtype DT_FP16 is not supported"):
        ptocpu.scaled_mm(f16(16, 128), f16(128, 32), D.DT_BF16, e8(16, 2, 2), e8(2, 32, 2))
    ptocpu.set_cube_tile_shapes([16, 16], [32, 64], [32, 32])
    with pytest.raises(ptocpu.TileError, match="scaled_mm needs kL0 a multiple of 64"):
        ptocpu.scaled_mm(e4(16, 128), e4(128, 32), D.DT_BF16, e8(16, 2, 2), e8(2, 32, 2))


def test_scaled_mm_fp4_rules():
    fp4 = lambda *s: tensor(np.ones(s, ml_dtypes.float4_e2m1fn))  # noqa: E731
    e8 = lambda *s: tensor(np.full(s, 127, np.uint8).view(ml_dtypes.float8_e8m0fnu))  # noqa: E731
    e4 = lambda *s: tensor(np.ones(s, ml_dtypes.float8_e4m3fn))  # noqa: E731
    with pytest.raises(ptocpu.ArgumentError, match=r"mat_b shape \[128, 31\] is DT_FP4_E2M1 with an odd inner axis"):
        ptocpu.scaled_mm(fp4(16, 128), fp4(128, 31), D.DT_FP32, e8(16, 2, 2), e8(2, 31, 2))
    with pytest.raises(ptocpu.DTypeError, match="must be equal \\(only the two fp8 dtypes mix\\)"):
        ptocpu.scaled_mm(fp4(16, 128), e4(128, 32), D.DT_FP32, e8(16, 2, 2), e8(2, 32, 2))
    with pytest.raises(ptocpu.DTypeError, match="matmul: input dtype DT_FP4_E2M1 is not supported"):
        ptocpu.matmul(fp4(16, 128), fp4(128, 32), D.DT_FP32)  # FP4 is scaled_mm's alone


def test_jit_reads_packed_fp4_bytes_as_pypto_does():
    # upstream's ut/interface/test_fp4_packed_shape.py and st/operation/matmul/test_scaled_mm_mxfp4.py
    codes = np.arange(16, dtype=np.uint8)  # every E2M1 code
    packed = torch.from_numpy((codes[None, :8] | (codes[None, 8:] << 4)).repeat(2, 0))  # [2, 8] bytes

    @ptocpu.frontend.jit
    def unpack(x: ptocpu.Tensor([], D.DT_FP4_E2M1), out: ptocpu.Tensor([], D.DT_FP32)):
        assert x.dtype == D.DT_FP4_E2M1 and x.shape == (2, 16)
        out[:] = ptocpu.cast(x, D.DT_FP32)

    out = torch.zeros(2, 16)
    unpack(packed, out)
    want = np.empty(16, np.float32)  # low nibble first
    want[0::2], want[1::2] = codes[:8].view(ml_dtypes.float4_e2m1fn), codes[8:].view(ml_dtypes.float4_e2m1fn)
    np.testing.assert_array_equal(out.numpy(), np.tile(want, (2, 1)))

    @ptocpu.frontend.jit
    def write(x: ptocpu.Tensor([], D.DT_FP4_E2M1)):
        ptocpu.assemble(ptocpu.view(x, [1, 16], [1, 0]), [0, 0], x)

    with pytest.raises(ptocpu.ArgumentError, match="read-only"):
        write(packed)  # the unpacked copy cannot reach the caller's bytes

    @ptocpu.frontend.jit
    def pairs(x: ptocpu.Tensor([], D.DT_FP4_E2M1X2), out: ptocpu.Tensor([], D.DT_UINT8)):
        assert x.dtype == D.DT_FP4_E2M1X2 and x.shape == (2, 8)
        out[:] = ptocpu.view(x, dtype=D.DT_UINT8)

    copied = torch.zeros(2, 8, dtype=torch.uint8)
    pairs(packed, copied)
    assert torch.equal(copied, packed)


def test_transposed_batchmatmul():
    rng = np.random.default_rng(31)
    a = ints(rng, (16, 2, 32), np.float16)
    b = ints(rng, (2, 32, 64), np.float16)
    got = ptocpu.experimental.transposed_batchmatmul(tensor(a), tensor(b), D.DT_FP16)
    assert got.shape == (16, 2, 64)
    want = np.einsum("mbk,bkn->mbn", a.astype(np.float64), b.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ptocpu.ArgumentError, match="disagree on B or K"):
        ptocpu.experimental.transposed_batchmatmul(tensor(a), tensor(b[:1]), D.DT_FP16)
    with pytest.raises(ptocpu.DTypeError, match="out_dtype dtype DT_FP32 is not supported"):
        ptocpu.experimental.transposed_batchmatmul(tensor(a), tensor(b), D.DT_FP32)


# ---- programs -------------------------------------------------------------------------------------

def test_a_function_replays_matmul_with_extend_params():
    x = ptocpu.tensor([32, 64], D.DT_INT8, "x")
    w = ptocpu.tensor([64, 32], D.DT_INT8, "w")
    bias = ptocpu.tensor([1, 32], D.DT_INT32, "bias")
    out = ptocpu.tensor([32, 32], D.DT_FP16, "out")
    with ptocpu.function("DEQUANT", x, w, bias, out):
        ptocpu.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        for i in ptocpu.loop(2, name="L", idx_name="i"):
            tile = ptocpu.matmul(ptocpu.view(x, [16, 64], [16 * i, 0]), w, D.DT_FP16,
                                 extend_params={"bias_tensor": bias, "scale": 0.5, "relu_type": 1})
            ptocpu.assemble(tile, [16 * i, 0], out)
    assert ptocpu.get_cube_tile_shapes() == ([], [], [], False)  # ends with the body
    rng = np.random.default_rng(41)
    tx = torch.from_numpy(ints(rng, (32, 64), np.int8))
    tw = torch.from_numpy(ints(rng, (64, 32), np.int8))
    tb = torch.from_numpy(ints(rng, (1, 32), np.int32, -50, 50))
    to = torch.zeros(32, 32, dtype=torch.float16)
    ptocpu.runtime._device_run_once_data_from_host(*(ptocpu.from_torch(t) for t in (tx, tw, tb, to)))
    acc = tx.long() @ tw.long() + tb.long()
    assert torch.equal(to, (acc.clamp(min=0).double() * 0.5).half())


def test_a_jit_kernel_compiles_a_loop_of_matmuls():
    @ptocpu.frontend.jit
    def kernel(a: ptocpu.Tensor([64, 32], D.DT_BF16), b: ptocpu.Tensor([32, 48], D.DT_BF16),
               bias: ptocpu.Tensor([1, 48], D.DT_FP32), out: ptocpu.Tensor([64, 48], D.DT_FP32)):
        ptocpu.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        for i in ptocpu.loop(4, name="M", idx_name="i"):
            out[16 * i:16 * i + 16, :] = ptocpu.matmul(a[16 * i:16 * i + 16, :], b, D.DT_FP32,
                                                       extend_params={"bias_tensor": bias})

    rng = np.random.default_rng(51)
    for _ in range(2):  # the second call runs the compiled program on new data
        ta = torch.from_numpy(ints(rng, (64, 32), np.float32)).bfloat16()
        tb = torch.from_numpy(ints(rng, (32, 48), np.float32)).bfloat16()
        tbias = torch.from_numpy(ints(rng, (1, 48), np.float32))
        to = torch.zeros(64, 48)
        kernel(ta, tb, tbias, to)
        assert torch.equal(to, (ta.float() @ tb.float()) + tbias)
    assert ptocpu.get_cube_tile_shapes() == ([], [], [], False)


# ---------------------------------------------------------------- HiFloat8 operands (ascend950, cpu)

def hf8(values):
    """float64 values exactly representable in HiFloat8 -> a DT_HF8 tensor (the reference encoder)."""
    from ptocpu.tools import reference as ref
    return ptocpu.view(ptocpu.asarray(ref.to_hifloat8(np.asarray(values, np.float64))), dtype=D.DT_HF8)


@pytest.mark.parametrize("out_dtype", [D.DT_FP16, D.DT_BF16, D.DT_FP32])
def test_hf8_products_are_exact_and_rounded_once(out_dtype):
    from ptocpu.tools import reference as ref
    rng = np.random.default_rng(11)
    # integers: every sum exact, so the one rounding to out_dtype is checked bit for bit
    a, b = rng.integers(-3, 4, (2, 37, 70)).astype(np.float64), rng.integers(-3, 4, (2, 70, 45)).astype(np.float64)
    got = ptocpu.matmul(hf8(a), hf8(b), out_dtype)
    np.testing.assert_array_equal(got.numpy(), rounded(a @ b, out_dtype))
    # normal values rounded to HiFloat8 (wide exponents): an fp32 sum of the exact products
    a = ref.HIFLOAT8_VALUES[ref.to_hifloat8(rng.standard_normal((65, 300)) * 8)]
    b = ref.HIFLOAT8_VALUES[ref.to_hifloat8(rng.standard_normal((300, 33)) / 8)]
    got = ptocpu.matmul(hf8(a), hf8(b), out_dtype, b_trans=False)
    assert_fp32_sum(got, a @ b, np.abs(a) @ np.abs(b), 300, out_dtype)
    # transposed operands read the same values
    got_t = ptocpu.matmul(hf8(a.T.copy()), hf8(b.T.copy()), out_dtype, a_trans=True, b_trans=True)
    np.testing.assert_array_equal(got_t.numpy(), got.numpy())


def test_hf8_rules_per_platform():
    a, b = hf8(np.ones((32, 64))), hf8(np.ones((64, 32)))
    for platform in PLATFORMS:
        with ptocpu.platform(platform):
            ptocpu.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
            if platform in ("atlas_a3", "atlas_a2"):
                with pytest.raises(ptocpu.DTypeError, match="input dtype DT_HF8 is not supported on platform"):
                    ptocpu.matmul(a, b, D.DT_FP32)
                continue
            assert (ptocpu.matmul(a, b, D.DT_BF16).numpy().astype(np.float64) == 64).all()
            q = ptocpu.matmul(a, b, D.DT_INT8, extend_params={"scale": 1.0})  # quantisation, as every input
            assert (q.numpy() == 64).all()
            for bad_out in (D.DT_INT32, D.DT_HF8):
                with pytest.raises(ptocpu.DTypeError, match="is not supported for DT_HF8 operands"):
                    ptocpu.matmul(a, b, bad_out)
            with pytest.raises(ptocpu.DTypeError, match="mat2 dtype DT_FP8E4M3"):
                ptocpu.matmul(a, tensor(np.ones((64, 32), ml_dtypes.float8_e4m3fn)), D.DT_FP32)
    with ptocpu.platform("ascend950"):
        ptocpu.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        nz = hf8(np.ones((32, 64)))
        nz.format = ptocpu.TileOpFormat.TILEOP_NZ
        with pytest.raises(ptocpu.ArgumentError, match="DT_HF8 must be ND; NZ is not supported"):
            ptocpu.matmul(nz, b, D.DT_FP32)
