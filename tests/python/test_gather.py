"""gather (docs/ops/gather.md) against numpy's take_along_axis and torch.gather over every dtype of
each platform table, upstream's doc example and official test rows, one test per error rule."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, np_dtype, random_bits, ranks_of, ub_bytes
from ptocpu.tools import reference as ref


def random_case(rng, rank, dt, index_dtype):
    shape = [int(rng.integers(1, 6)) for _ in range(rank)]
    d = int(rng.integers(0, rank))
    ishape = [int(rng.integers(1, n + 1)) for n in shape]
    ishape[d] = int(rng.integers(1, 2 * shape[d] + 2))  # free along dim
    x = random_bits(rng, shape, dt)
    index = rng.integers(0, shape[d], size=ishape).astype(index_dtype)
    return x, d - rank if rng.integers(0, 2) else d, index


def test_every_platform_dtype_and_rank(platform):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "gather"):
        for rank in ranks_of(platform, "gather"):
            for index_dtype in (np.int32, np.int64):
                x, dim, index = random_case(rng, rank, dt, index_dtype)
                assert_same_bits(ptocpu.gather(x, dim, index), ref.gather(x, dim, index))


def test_cpu_rank_8_and_strided_inputs():
    rng = np.random.default_rng(1)
    x = random_bits(rng, (2, 3, 1, 2, 3, 2, 1, 4), np.dtype(np.float32))
    index = rng.integers(0, 3, size=(2, 2, 1, 2, 5, 2, 1, 3))
    assert_same_bits(ptocpu.gather(x, 4, index), ref.gather(x, 4, index))
    base = random_bits(rng, (20, 30), np.dtype(np.int16))
    view = base[::-2, 3::3]  # negative and non-unit strides
    for dim in (0, 1):
        index = rng.integers(0, view.shape[dim], size=(7, 6))
        assert_same_bits(ptocpu.gather(view, dim, index), ref.gather(view, dim, index))
        assert_same_bits(ptocpu.gather(ptocpu.asarray(base)[::-2, 3::3], dim, index), ref.gather(view, dim, index))
    index_t = np.ascontiguousarray(rng.integers(0, 10, size=(6, 10)).T)[:, ::2]  # non-contiguous index
    assert_same_bits(ptocpu.gather(view, 0, index_t), ref.gather(view, 0, index_t))


@pytest.mark.parametrize("shape,dim,ishape", [((300, 257), 1, (300, 1000)), ((4000, 70), 0, (3000, 70)),
                                              ((3, 2000, 33), 1, (3, 4000, 20)), ((100000,), 0, (50000,))])
@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.float64])
def test_large_against_torch(shape, dim, ishape, dt):
    """Sizes that split over threads and column blocks; torch.gather as the peer (finite values:
    torch quiets signalling fp16 NaNs on the way, ptocpu keeps every bit, as numpy does)."""
    rng = np.random.default_rng(len(shape) + dim)
    x = (rng.standard_normal(shape) * 50).astype(dt)
    index = rng.integers(0, shape[dim], size=ishape)
    got = ptocpu.gather(x, dim, index)
    want = torch.gather(torch.from_numpy(x), dim, torch.from_numpy(index)).numpy()
    assert_same_bits(got, want)
    assert_same_bits(got, ref.gather(x, dim, index))


@given(st.data())
def test_hypothesis_against_torch(data):
    rank = data.draw(st.integers(1, 5))
    shape = data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    d = data.draw(st.integers(-rank, rank - 1))
    ishape = [data.draw(st.integers(1, n)) for n in shape]
    ishape[d] = data.draw(st.integers(1, 8))
    n = int(np.prod(ishape))
    index = np.array(data.draw(st.lists(st.integers(0, shape[d] - 1), min_size=n, max_size=n))).reshape(ishape)
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    want = torch.gather(torch.from_numpy(x), d, torch.from_numpy(index)).numpy()
    assert_same_bits(ptocpu.gather(x, d, index.astype(data.draw(st.sampled_from([np.int32, np.int64])))), want)


def test_doc_example_and_method_form():
    x = ptocpu.asarray(np.arange(15, dtype=np.int32).reshape(3, 5))
    index = np.array([[0, 1, 2, 0], [1, 2, 0, 1], [2, 2, 1, 0]], np.int32)
    want = [[0, 6, 12, 3], [5, 11, 2, 8], [10, 11, 7, 3]]
    assert ptocpu.gather(x, 0, index).tolist() == want
    assert x.gather(0, index).tolist() == want
    assert ptocpu.gather(x, 0, index).dtype == ptocpu.DT_INT32


def test_dim_colon_index_sugar():
    """t[dim:index] is gather(t, dim, index) (upstream's Tensor.__getitem__); other slices stay views."""
    x = ptocpu.asarray(np.arange(15, dtype=np.int32).reshape(3, 5))
    index = np.array([[4], [0], [1]])
    want = ref.gather(x.numpy(), 1, index)
    assert_same_bits(x[1:index], want)
    assert_same_bits(x[-1:ptocpu.asarray(index)], want)
    assert_same_bits(x[1:torch.from_numpy(index)], want)
    assert_same_bits(x[1:index.tolist()], want)
    assert x[np.int64(1):np.array(3)].shape == (2, 5)  # integer stops (0-d arrays too) slice as before
    with pytest.raises(ptocpu.DTypeError, match=r"gather: dim \(the slice start of t\[dim:index\]\) must be an "
                                                 r"integer, got NoneType"):
        x[:index]
    with pytest.raises(ptocpu.ArgumentError, match=r"gather: t\[dim:index\] takes no step, got 2"):
        x[1:index:2]
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"gather: index value 7 at index position \(0, 0\)"):
        x[0:[[7]]]


def test_index_sharing_memory_with_input():
    x = np.array([[1, 0, 2], [2, 2, 0]], dtype=np.int64)
    assert_same_bits(ptocpu.gather(x, 1, x), ref.gather(x, 1, x.copy()))


# ---------------------------------------------------------------- upstream's official rows
# (case, input shape, index shape, dtype, index bound, dim, tile): GatherElement_test_0 / 4 / 14
# (CI subset) and the 950 dtype rows of the migrated suite.
OFFICIAL = [
    ("GatherElement_test_0", (10, 10), (5, 9), "DT_FP32", 10, 0, (3, 8)),
    ("GatherElement_test_4", (16, 16, 16), (8, 8, 8), "DT_FP32", 16, 0, (16, 8, 8)),
    ("GatherElement_test_14", (32, 32), (32, 32), "DT_FP32", 32, 1, (16, 32)),
] + [(f"dtypes_{n}", (17, 4097), (13, 67), n, 4097, 1, (7, 17))
     for n in ["DT_FP32", "DT_FP16", "DT_BF16", "DT_INT32", "DT_INT16", "DT_UINT16", "DT_UINT32"]]


@pytest.mark.parametrize("platform", ["ascend950", "atlas_a2"])
@pytest.mark.parametrize("case,shape,ishape,name,bound,dim,tile", OFFICIAL)
def test_official_rows(platform, case, shape, ishape, name, bound, dim, tile):
    rng = np.random.default_rng(len(case))
    x = (rng.uniform(-10, 10, size=shape)).astype(np_dtype(name))
    index = rng.integers(0, bound, size=ishape)
    with ptocpu.platform(platform), ptocpu.vec_tile_shapes(*tile):
        got = ptocpu.gather(x, dim, index)
    assert_same_bits(got, ref.gather(x, dim, index))


# ---------------------------------------------------------------- errors: one rule each
def small():
    return np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[0, 1], [2, 0]])


def test_error_dtype_not_in_platform_table():
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match=r"gather: input dtype DT_INT8 is not supported on platform "
                                                     r"atlas_a2; allowed: .*DT_UINT16"):
            ptocpu.gather(np.zeros((2, 2), np.int8), 0, np.zeros((1, 1), np.int64))
    assert ptocpu.gather(np.zeros((2, 2), np.int8), 0, np.zeros((1, 1), np.int64)).shape == (1, 1)  # cpu: all


def test_error_index_dtype():
    x, index = small()
    with pytest.raises(ptocpu.DTypeError, match=r"gather: index dtype DT_INT16 is not an index dtype"):
        ptocpu.gather(x, 0, index.astype(np.int16))


@pytest.mark.parametrize("platform,rank", [("cpu", 9), ("ascend950", 6), ("atlas_a3", 6)])
def test_error_input_rank(platform, rank):
    with ptocpu.platform(platform):
        with pytest.raises(ptocpu.ArgumentError, match=rf"gather: input rank {rank} is out of range"):
            ptocpu.gather(np.zeros([1] * rank, np.float32), 0, np.zeros([1] * rank, np.int64))


def test_error_index_rank_must_equal_input_rank():
    x, index = small()
    with pytest.raises(ptocpu.ArgumentError, match=r"index rank 1 \(shape \[2\]\) must equal input rank 2"):
        ptocpu.gather(x, 0, index[0])


def test_error_dim_out_of_range():
    x, index = small()
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"gather: dim 2 is out of range \[-2, 2\)"):
        ptocpu.gather(x, 2, index)
    with pytest.raises(ptocpu.DTypeError, match=r"dim must be an integer"):
        ptocpu.gather(x, 0.0, index)


def test_error_index_larger_than_input_off_dim():
    x, _ = small()
    with pytest.raises(ptocpu.ArgumentError, match=r"index shape \[1, 5\] is larger than input shape \[3, 4\] at axis 1"):
        ptocpu.gather(x, 0, np.zeros((1, 5), np.int64))
    assert ptocpu.gather(x, 0, np.zeros((7, 4), np.int64)).shape == (7, 4)  # free along dim


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_error_index_value_at_the_very_end(index_dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 200)).astype(np.float32)
    index = rng.integers(0, 300, size=(1000, 200)).astype(index_dtype)
    index[-1, -1] = 300
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"gather: index value 300 at index position \(999, 199\) is "
                                                     r"out of range \[0, 300\) for dim 0 of input shape \[300, 200\]"):
        ptocpu.gather(x, 0, index)
    index[-1, -1] = -1  # negative values are errors, not wrapped
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"index value -1 at index position \(999, 199\)"):
        ptocpu.gather(x, 0, index)


def test_error_non_tensor_arguments():
    x, index = small()
    with pytest.raises(ptocpu.DTypeError, match=r"gather: index must be a tensor, got NoneType None"):
        ptocpu.gather(x, 0, None)
    with pytest.raises(ptocpu.DTypeError, match=r"gather: input must be a tensor, got str"):
        ptocpu.gather("x", 0, index)


def test_error_empty_input_on_ascend():
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match=r"input shape \[0, 4\] is empty"):
            ptocpu.gather(np.zeros((0, 4), np.float32), 1, np.zeros((0, 2), np.int64))
    assert ptocpu.gather(np.zeros((0, 4), np.float32), 1, np.zeros((0, 2), np.int64)).shape == (0, 2)


# ---------------------------------------------------------------- tile rules
def test_tile_rank_must_match_index():
    x, index = small()
    with ptocpu.vec_tile_shapes(4):
        with pytest.raises(ptocpu.TileError, match=r"gather: tile shape \[4\] has rank 1 but the index has rank 2"):
            ptocpu.gather(x, 0, index)


@pytest.mark.parametrize("platform,limit", [("ascend950", 253952), ("atlas_a2", 196608)])
def test_tile_ub_budget_reads_the_dim_axis_whole(platform, limit):
    x = np.zeros((3000, 64), np.float32)
    index = np.zeros((64, 64), np.int64)
    with ptocpu.platform(platform):
        for cols in (8, 16, 32, 64):
            tile = (4, cols)
            need = (ub_bytes((3000, cols), x.shape, 4) + ub_bytes(tile, index.shape, 8) + ub_bytes(tile, index.shape, 4)
                    + ub_bytes((2 * ((cols + 3) // 4 * 4),), (10**9,), 8))
            with ptocpu.vec_tile_shapes(*tile):
                if need <= limit:
                    ptocpu.gather(x, 0, index)
                else:
                    with pytest.raises(ptocpu.TileError, match=rf"gather: tile shape \[4, {cols}\] needs {need} UB "
                                                               rf"bytes .* has {limit}"):
                        ptocpu.gather(x, 0, index)
        assert ub_bytes((3000, 64), x.shape, 4) > limit  # the last tile failed: the test can tell


def test_tile_worked_example_gather_element_test_0():
    """fp32 [10, 10] (view [10, 8]), int64 index [5, 9], tile [3, 8]: 320 + 192 + 96 + 128 = 736 bytes."""
    x = np.zeros((10, 8), np.float32)
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(3, 8):
        ptocpu.gather(x, 0, np.zeros((5, 8), np.int64))
