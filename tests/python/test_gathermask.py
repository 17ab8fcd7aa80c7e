"""gathermask (docs/ops/gathermask.md) against numpy / torch slicing over every dtype of each
platform table and every pattern mode, upstream's doc example and official rows (GatherMask_test_0
.. 19 with their tiles), one test per error rule."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, np_dtype, random_bits, ranks_of
from ptocpu.tools import reference as ref


def test_every_platform_dtype_rank_and_mode(platform):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "gathermask"):
        for rank in ranks_of(platform, "gathermask"):
            shape = [int(rng.integers(1, 4)) for _ in range(rank - 1)] + [4 * int(rng.integers(1, 5))]
            x = random_bits(rng, shape, dt)
            for mode in range(1, 8):
                assert_same_bits(ptocpu.gathermask(x, mode), ref.gathermask(x, mode))


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.float64])
@pytest.mark.parametrize("mode", [1, 2, 4, 6, 7])
def test_large_and_strided_against_torch(dt, mode):
    rng = np.random.default_rng(mode)
    x = (rng.standard_normal((300, 2048)) * 50).astype(dt)
    want = torch.from_numpy(x)[ref.GATHERMASK_LANES[mode]].contiguous().numpy()
    assert_same_bits(ptocpu.gathermask(x, mode), want)
    view = x[::-3, 8:1032]  # negative row stride, offset columns
    assert_same_bits(ptocpu.gathermask(view, mode), ref.gathermask(view, mode))
    t = ptocpu.asarray(np.ascontiguousarray(x.T)).numpy().T  # a transposed layout (last axis strided)
    assert_same_bits(ptocpu.gathermask(t, mode), ref.gathermask(x, mode))


def test_doc_example_and_method_form():
    x = ptocpu.asarray(np.arange(18, dtype=np.int32).reshape(3, 6))
    want = [[0, 2, 4], [6, 8, 10], [12, 14, 16]]
    assert ptocpu.gathermask(x, 1).tolist() == want
    assert x.gathermask(1).tolist() == want
    with ptocpu.vec_tile_shapes(4, 16, 32):  # upstream's tile example: a longer tile is fine
        assert ptocpu.gathermask(x, 1).tolist() == want


def test_upstream_unit_example_ones():
    x = np.ones((16, 32), np.float32)
    for mode in range(1, 7):
        out = ptocpu.gathermask(x, mode).numpy()
        assert out.shape == ((16, 16) if mode <= 2 else (16, 8)) and (out == 1).all()


# GatherMask_st_test_cases.csv: (input, dtype, mode, tile); data ranges as the CSV ([-1, 1], test_18 [50, 100]).
OFFICIAL = [
    ((8, 32), "DT_FP32", 1, (8, 16)), ((8, 16), "DT_FP32", 2, (8, 16)), ((8, 16), "DT_FP32", 1, (8, 8)),
    ((8, 16), "DT_FP32", 2, (2, 8)), ((2, 8), "DT_FP32", 2, (2, 8)), ((8, 34), "DT_FP32", 2, (8, 32)),
    ((8, 32), "DT_FP32", 3, (8, 16)), ((64, 192), "DT_FP32", 3, (64, 16)), ((4, 5, 260), "DT_FP32", 4, (2, 3, 136)),
    ((4, 8, 8, 780), "DT_FP32", 5, (2, 3, 5, 136)), ((4, 8, 8, 780), "DT_FP32", 7, (2, 3, 5, 136)),
    ((4, 8, 8, 780), "DT_INT16", 6, (2, 3, 5, 136)), ((4, 8, 8, 780), "DT_UINT16", 5, (2, 3, 5, 136)),
    ((4, 8, 8, 780), "DT_INT32", 4, (2, 3, 5, 136)), ((4, 8, 8, 780), "DT_UINT32", 3, (2, 3, 5, 136)),
    ((4, 8, 8, 780), "DT_FP16", 2, (2, 3, 5, 136)), ((16000,), "DT_FP32", 1, (64,)), ((16000,), "DT_FP16", 1, (64,)),
    ((8, 3, 112), "DT_UINT32", 2, (1, 1, 8)), ((4, 8, 8, 780), "DT_UINT32", 3, (2, 3, 5, 136)),
]


@pytest.mark.parametrize("platform", ["ascend950", "atlas_a2"])
@pytest.mark.parametrize("case", range(len(OFFICIAL)))
def test_official_rows(platform, case):
    shape, name, mode, tile = OFFICIAL[case]
    rng = np.random.default_rng(case)
    lo, hi = (50, 100) if case == 18 else (-1, 1)
    x = rng.uniform(lo, hi, size=shape).astype(np_dtype(name))
    if case == 19:  # the migrated row: randint(-1, 1) as int64, then cast to uint32 -> {0, 4294967295}
        x = rng.integers(-1, 1, size=shape).astype(np.uint32)
    with ptocpu.platform(platform), ptocpu.vec_tile_shapes(*tile):
        out = ptocpu.gathermask(x, mode)
    assert_same_bits(out, ref.gathermask(x, mode))


# ---------------------------------------------------------------- errors: one rule each
@pytest.mark.parametrize("mode", [0, 8, 257, -1, 255])
def test_error_pattern_mode(mode):
    with pytest.raises(ptocpu.ArgumentError, match=rf"gathermask: pattern_mode {mode} is not supported; allowed: 1, "
                                                   r"2, 3, 4, 5, 6, 7"):
        ptocpu.gathermask(np.zeros((2, 8), np.float32), mode)
    with pytest.raises(ptocpu.DTypeError, match=r"pattern_mode must be an integer"):
        ptocpu.gathermask(np.zeros((2, 8), np.float32), 1.0)


@pytest.mark.parametrize("mode,last,step", [(1, 7, 2), (2, 5, 2), (3, 6, 4), (6, 10, 4)])
def test_error_last_axis_not_divisible(mode, last, step):
    with pytest.raises(ptocpu.ArgumentError, match=rf"x shape \[2, {last}\] has a last axis of {last}, not divisible "
                                                   rf"by {step} as pattern_mode {mode} requires"):
        ptocpu.gathermask(np.zeros((2, last), np.float32), mode)
    assert ptocpu.gathermask(np.zeros((2, last), np.float32), 7).shape == (2, last)  # mode 7 takes any width


@pytest.mark.parametrize("mode,tile_last,step", [(1, 7, 2), (4, 6, 4)])
def test_error_tile_last_not_divisible(mode, tile_last, step):
    x = np.zeros((4, 16), np.float32)
    with ptocpu.vec_tile_shapes(4, tile_last):
        with pytest.raises(ptocpu.TileError, match=rf"tile shape \[4, {tile_last}\] has a last dim of {tile_last}, "
                                                   rf"not divisible by {step}"):
            ptocpu.gathermask(x, mode)


def test_error_tile_rank_below_output_rank():
    with ptocpu.vec_tile_shapes(16):
        with pytest.raises(ptocpu.TileError, match=r"tile shape \[16\] has rank 1 but the output has rank 2"):
            ptocpu.gathermask(np.zeros((4, 16), np.float32), 1)


@pytest.mark.parametrize("platform,limit", [("ascend950", 253952), ("atlas_a2", 196608)])
def test_tile_ub_budget(platform, limit):
    """input tile + output tile; GatherMask_test_9 (fp32, tile [2,3,5,136], mode 5) is 30 x 544 + 30 x 160."""
    x = np.zeros((64, 4096), np.float32)
    with ptocpu.platform(platform):
        with ptocpu.vec_tile_shapes(32, 4096):  # 32 x 16384 + 32 x 8192 = 786432: too big
            with pytest.raises(ptocpu.TileError, match=rf"needs 786432 UB bytes \(input tile 524288 \+ output tile "
                                                       rf"262144\) but platform {platform} has {limit}"):
                ptocpu.gathermask(x, 1)
        with ptocpu.vec_tile_shapes(4, 4096):  # 65536 + 32768
            ptocpu.gathermask(x, 1)


def test_error_dtype_and_rank_on_ascend():
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.DTypeError, match=r"gathermask: x dtype DT_INT8 is not supported on platform "
                                                    r"ascend950"):
            ptocpu.gathermask(np.zeros((2, 8), np.int8), 1)
        with pytest.raises(ptocpu.ArgumentError, match=r"gathermask: x rank 5 is out of range \[1, 4\]"):
            ptocpu.gathermask(np.zeros((1, 1, 1, 1, 8), np.float32), 1)
        with pytest.raises(ptocpu.ArgumentError, match=r"x shape \[0, 8\] is empty"):
            ptocpu.gathermask(np.zeros((0, 8), np.float32), 1)
    assert ptocpu.gathermask(np.zeros((0, 8), np.int8), 1).shape == (0, 4)  # cpu: any dtype, empty allowed
    with pytest.raises(ptocpu.DTypeError, match=r"gathermask: x must be a tensor, got NoneType"):
        ptocpu.gathermask(None, 1)
