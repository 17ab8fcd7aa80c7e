"""index_put_ (docs/ops/index_put_.md) against ptocpu.tools.reference's numpy loop over the positions in
index order (assignment, or one addition per position rounded to the dtype: fp16 / bf16 through fp32),
against torch's index_put_ where positions do not repeat, hand-computed fp16 / bf16 sums, upstream's
doc example, one test per error rule, tiles and threads."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from helpers import assert_same_bits, np_dtype, op_table
from ptocpu.tools.reference import index_put as reference

PLATFORMS = ["cpu", "ascend950", "atlas_a3", "atlas_a2"]
ACCUMULATING_ON_CHIPS = {"DT_BF16", "DT_FP16", "DT_FP32", "DT_INT8", "DT_INT16", "DT_INT32"}


def random_values(rng, shape, dt: np.dtype) -> np.ndarray:
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dt)
    return (rng.standard_normal(shape) * 8).astype(np.float32).astype(dt)


def random_case(rng, rank, dt, index_dtype, repeats=True):
    shape = [int(rng.integers(1, 5)) for _ in range(rank)]
    k = int(rng.integers(1, rank + 1))
    t = int(rng.integers(1, 7))
    if repeats:
        indices = [rng.integers(0, shape[i], size=t).astype(index_dtype) for i in range(k)]
    else:  # distinct positions
        flat = rng.permutation(int(np.prod(shape[:k])))[:t]
        indices = [c.astype(index_dtype) for c in np.unravel_index(flat, shape[:k])]
    values = random_values(rng, [len(indices[0])] + shape[k:], dt)
    return random_values(rng, shape, dt), indices, values


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_platform_dtype_against_the_loop(platform):
    lo, hi = op_table(platform, "index_put_")["rank"]
    rng = np.random.default_rng(PLATFORMS.index(platform))
    index_dtypes = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
    with ptocpu.platform(platform):
        for name in op_table(platform, "index_put_")["dtypes"].split(", "):
            dt = np_dtype(name)
            for rank in range(lo, min(hi, 5) + 1):
                for accumulate in (False, True):
                    if accumulate and platform != "cpu" and name not in ACCUMULATING_ON_CHIPS:
                        continue
                    x, indices, values = random_case(rng, rank, dt, index_dtypes[rank % len(index_dtypes)])
                    want = reference(x, indices, values, accumulate)
                    assert ptocpu.index_put_(x, tuple(indices), values, accumulate) is None
                    assert_same_bits(x, want)


def test_the_pages_example_with_and_without_accumulate():
    start = np.array([[1, 1, 1], [1, 1, 1], [0, 0, 0]], np.int32)
    indices = (np.array([1, 2], np.int32),)
    values = np.array([[0, 1, 0], [0, 2, 0]], np.int32)
    x = start.copy()
    ptocpu.index_put_(x, indices, values, True)
    assert x.tolist() == [[1, 1, 1], [1, 2, 1], [0, 2, 0]]
    x = start.copy()
    ptocpu.index_put_(x, list(indices), values)
    assert x.tolist() == [[1, 1, 1], [0, 1, 0], [0, 2, 0]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32])
@pytest.mark.parametrize("accumulate", [False, True])
def test_torch_tensors_in_place_match_torch(dtype, accumulate):
    rng = np.random.default_rng(7)
    x, indices, values = random_case(rng, 3, np.dtype(np.float32), np.int64, repeats=False)
    tx = torch.from_numpy(x).to(dtype)
    tv = torch.from_numpy(values).to(dtype)
    ti = tuple(torch.from_numpy(i) for i in indices)
    want = tx.clone().index_put_(ti, tv, accumulate=accumulate)
    ptocpu.index_put_(tx, ti, tv, accumulate)
    assert torch.equal(tx, want)


def test_fp16_accumulates_one_rounding_per_position():
    # 2048 + 1 + 1 in fp16: each step rounds to 2048 (ties to even); one fp32 sum would give 2050.
    x = np.array([2048.0], np.float16)
    ptocpu.index_put_(x, (np.array([0, 0]),), np.array([1.0, 1.0], np.float16), accumulate=True)
    assert x.tolist() == [2048.0]
    y = np.array([0.0], ml_dtypes.bfloat16)
    ptocpu.index_put_(y, (np.array([0, 0, 0]),), np.array([256.0, 1.0, 1.0], ml_dtypes.bfloat16), accumulate=True)
    assert y.astype(np.float32).tolist() == [256.0]


def test_repeated_positions_follow_the_index_order():
    x = np.zeros((3, 2), np.float32)
    ptocpu.index_put_(x, (np.array([2, 0, 2]),), np.array([[1, 1], [2, 2], [3, 3]], np.float32))
    assert x.tolist() == [[2, 2], [0, 0], [3, 3]]


def test_values_sharing_memory_with_input_are_read_first():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = reference(x, [np.array([1, 2])], x[0:2].copy(), False)
    ptocpu.index_put_(x, (np.array([1, 2]),), x[0:2])
    assert_same_bits(x, want)


def test_results_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 300, 40)).astype(np.float16)
    indices = (rng.integers(0, 64, 500), rng.integers(0, 300, 500))
    values = rng.standard_normal((500, 40)).astype(np.float16)
    outs = []
    for threads in (1, 2):
        ptocpu.set_num_threads(threads)
        y = x.copy()
        ptocpu.index_put_(y, indices, values, accumulate=True)
        outs.append(y)
    assert_same_bits(outs[0], outs[1])
    assert_same_bits(outs[0], reference(x, indices, values, True))


@pytest.mark.parametrize("call, error, words", [
    (lambda x: ptocpu.index_put_(x, (np.array([0]),), np.zeros((1, 3), np.int32)), ptocpu.DTypeError, "values dtype"),
    (lambda x: ptocpu.index_put_(x, (), np.zeros((1, 3), np.float32)), ptocpu.ArgumentError, "indices holds 0"),
    (lambda x: ptocpu.index_put_(x, (np.array([0]),) * 3, np.zeros((1,), np.float32)), ptocpu.ArgumentError,
     "indices holds 3"),
    (lambda x: ptocpu.index_put_(x, (np.array([0.0]),), np.zeros((1, 3), np.float32)), ptocpu.DTypeError, "indices[0]"),
    (lambda x: ptocpu.index_put_(x, (np.array([0, 1]), np.array([0])), np.zeros((2,), np.float32)),
     ptocpu.ArgumentError, "indices[1] shape [1]"),
    (lambda x: ptocpu.index_put_(x, (np.array([[0]]),), np.zeros((1, 3), np.float32)), ptocpu.ArgumentError,
     "must be 1-D"),
    (lambda x: ptocpu.index_put_(x, (np.array([0, 1]),), np.zeros((1, 3), np.float32)), ptocpu.ArgumentError,
     "values shape [1, 3] must be [2, 3]"),
    (lambda x: ptocpu.index_put_(x, (np.array([0]),), np.zeros((3,), np.float32)), ptocpu.ArgumentError,
     "values do not broadcast"),
    (lambda x: ptocpu.index_put_(x, (np.array([0, 3]),), np.zeros((2, 3), np.float32)), ptocpu.IndexOutOfRange,
     "index value 3"),
    (lambda x: ptocpu.index_put_(x, (np.array([-1]),), np.zeros((1, 3), np.float32)), ptocpu.IndexOutOfRange,
     "index value -1"),
])
def test_errors_name_the_rule_and_write_nothing(call, error, words):
    x = np.ones((3, 3), np.float32)
    with pytest.raises(error, match=None) as info:
        call(x)
    assert words in str(info.value)
    assert (x == 1).all()


def test_read_only_input_and_chip_only_rules():
    x = np.ones((3, 3), np.float32)
    x.flags.writeable = False
    with pytest.raises(ptocpu.ArgumentError, match="read-only|writable"):
        ptocpu.index_put_(x, (np.array([0]),), np.zeros((1, 3), np.float32))
    with ptocpu.platform("atlas_a2"):
        y = np.ones((3, 3), np.uint8)
        with pytest.raises(ptocpu.DTypeError, match="accumulate=True"):
            ptocpu.index_put_(y, (np.array([0]),), np.zeros((1, 3), np.uint8), True)
        ptocpu.index_put_(y, (np.array([0]),), np.zeros((1, 3), np.uint8))  # assignment takes it
        assert y[0].tolist() == [0, 0, 0]
        with pytest.raises(ptocpu.ArgumentError, match="rank 5"):
            ptocpu.index_put_(np.ones((1,) * 5, np.float32), (np.array([0]),), np.zeros((1,) * 5, np.float32))


def test_tile_rules():
    x = np.zeros((8, 4, 16), np.float32)
    indices = (np.arange(8),)
    values = np.ones((8, 4, 16), np.float32)
    with ptocpu.vec_tile_shapes(4, 16):  # completed to [4, 16, 16] from values' trailing dims
        ptocpu.index_put_(x, indices, values)
    assert (x == 1).all()
    with ptocpu.vec_tile_shapes(4, 4, 16, 1), pytest.raises(ptocpu.TileError, match="at most 3"):
        ptocpu.index_put_(x, indices, values)
    big = np.zeros((8, 256, 256), np.float32)
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(8, 256), pytest.raises(ptocpu.TileError, match="values tile"):
        ptocpu.index_put_(big, indices, np.ones((8, 256, 256), np.float32))  # a [8, 256, 256] fp32 tile: 2 MB
    assert not big.any()
