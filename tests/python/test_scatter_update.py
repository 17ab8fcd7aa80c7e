"""scatter_update (docs/ops/scatter_update.md), the paged KV-cache write, against the numpy loop of
ptocpu._reference (row-major, negative slots skipped, last write wins), against torch's
index_copy_ / row assignment for unique slots, upstream's doc examples and official rows, one
test per error rule."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import ptocpu
from helpers import assert_same_bits, np_dtype, op_table, random_bits
from ptocpu.tools import reference as ref

PLATFORMS = ["cpu", "ascend950", "atlas_a3", "atlas_a2"]


def random_case(rng, four_d: bool, dt, index_dtype, negatives=True, unique=False):
    b, s = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    if four_d:
        cache_shape = (int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 3)), int(rng.integers(1, 6)))
        slots = cache_shape[0] * cache_shape[1]
        src_shape = (b + int(rng.integers(0, 2)), s + int(rng.integers(0, 2)), *cache_shape[2:])
    else:
        cache_shape = (int(rng.integers(1, 12)), int(rng.integers(1, 7)))
        slots = cache_shape[0]
        src_shape = (b * s + int(rng.integers(0, 3)), cache_shape[1])
    if unique:
        b, s = 1, min(s, slots)
        index = rng.permutation(slots)[:s].reshape(1, s)
    else:
        index = rng.integers(-2 if negatives else 0, slots, size=(b, s))
    return random_bits(rng, cache_shape, dt), index.astype(index_dtype), random_bits(rng, src_shape, dt)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_platform_dtype_2d_and_4d(platform):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    with ptocpu.platform(platform):
        for name in op_table(platform, "scatter_update")["dtypes"].split(", "):
            dt = np_dtype(name)
            for four_d in (False, True):
                for index_dtype in (np.int16, np.int32, np.int64):
                    cache, index, src = random_case(rng, four_d, dt, index_dtype, negatives=platform == "cpu")
                    want = ref.scatter_update(cache, index, src)
                    ret = ptocpu.scatter_update(cache, -2, index, src)  # numpy cache: written in place
                    assert isinstance(ret, ptocpu.Tensor)
                    assert_same_bits(cache, want)
                    assert_same_bits(ret, want)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("four_d", [False, True])
def test_duplicates_last_write_wins_and_negatives_skip(threads, four_d):
    """Big enough to run in parallel; many duplicate and negative slots."""
    ptocpu.set_num_threads(threads)
    rng = np.random.default_rng(threads)
    if four_d:
        cache = random_bits(rng, (40, 16, 2, 24), np.dtype(np.float32))
        index = rng.integers(-50, 640, size=(30, 400))
        src = random_bits(rng, (31, 401, 2, 24), np.dtype(np.float32))
    else:
        cache = random_bits(rng, (500, 96), np.dtype(np.float16))
        index = rng.integers(-100, 500, size=(40, 300))
        src = random_bits(rng, (12000, 96), np.dtype(np.float16))
    want = ref.scatter_update(cache, index, src)
    t = ptocpu.asarray(cache)
    assert ptocpu.scatter_update(t, -2, index, src) is t
    assert_same_bits(cache, want)


@pytest.mark.parametrize("isa", ["baseline", "avx2", "avx512"])
def test_streaming_rows_every_isa(isa):
    """Rows of >= 256 bytes into a cache above the streaming threshold (lowered to 0 here) go with
    streaming stores: unaligned rows, duplicates and skipped slots, each instruction set."""
    rng = np.random.default_rng(8)
    cache = random_bits(rng, (300, 1, 3, 37), np.dtype(np.float32))  # 444-byte rows: lines split every way
    index = rng.integers(-20, 300, size=(20, 40))
    src = random_bits(rng, (20, 40, 3, 37), np.dtype(np.float32))
    want = ref.scatter_update(cache, index, src)
    ptocpu._core._set_kernel_tuning(0, isa)
    try:
        for threads in (1, 2):
            ptocpu.set_num_threads(threads)
            got = cache.copy()
            ptocpu.scatter_update(got, -2, index, src)
            assert_same_bits(got, want)
    finally:
        ptocpu._core._set_kernel_tuning(-1, None)


@pytest.mark.parametrize("dt", [torch.float32, torch.bfloat16, torch.int8])
def test_against_torch_index_copy_and_row_assignment(dt):
    rng = np.random.default_rng(4)
    cache = torch.from_numpy(rng.standard_normal((4096, 64)).astype(np.float32) * 10).to(dt)
    index = torch.from_numpy(rng.permutation(4096)[:3000].reshape(30, 100))
    src = torch.from_numpy(rng.standard_normal((3000, 64)).astype(np.float32) * 10).to(dt)
    want = cache.clone().index_copy_(0, index.flatten(), src)
    rows = cache.clone()
    rows[index.flatten()] = src
    assert torch.equal(want, rows)
    got = cache.clone()
    ptocpu.scatter_update(got, -2, index, src)  # a torch cache is written in place
    assert torch.equal(got, want)
    cache4 = cache.view(256, 16, 1, 64)  # the same rows as a paged cache
    ptocpu.scatter_update(cache4, -2, index, src.view(30, 100, 1, 64))
    assert torch.equal(cache, want)


def test_strided_cache_and_src():
    rng = np.random.default_rng(5)
    base = random_bits(rng, (12, 20), np.dtype(np.int32))
    before = base.copy()
    view = ptocpu.asarray(base)[::2, 1:13:2]  # cache [6, 6], strides [40, 2]
    src = random_bits(rng, (8, 12), np.dtype(np.int32))[::2, ::2]  # [4, 6], strided
    index = np.array([[5, -1], [0, 3]])
    ptocpu.scatter_update(view, -2, index, src)
    want = before.copy()
    want_view = want[::2, 1:13:2]
    want_view[:] = ref.scatter_update(before[::2, 1:13:2], index, src)
    assert_same_bits(base, want)


def test_src_sharing_memory_with_cache_is_read_first():
    cache = np.arange(24, dtype=np.float32).reshape(8, 3)
    src = cache[1:5]  # rows 1..4 of the cache itself
    index = np.array([[2, 3], [4, 5]])
    want = ref.scatter_update(cache, index, src.copy())
    ptocpu.scatter_update(cache, -2, index, src)
    assert_same_bits(cache, want)
    c64 = np.array([[1, 0], [3, 2], [0, 0], [0, 0]], dtype=np.int64)
    want = ref.scatter_update(c64, c64[:2].copy(), c64[:4].copy())
    ptocpu.scatter_update(c64, -2, c64[:2], c64[:4])  # index and src are the cache itself
    assert_same_bits(c64, want)


# ---------------------------------------------------------------- upstream's examples and rows
def test_doc_example_2d_and_method_form():
    x = ptocpu.tensor([8, 3], ptocpu.DT_INT32)
    index = np.array([[1, 2], [4, 5]], np.int64)
    src = np.arange(1, 13, dtype=np.int32).reshape(4, 3)
    assert x.scatter_update(-2, index, src) is x
    assert x.tolist() == [[0, 0, 0], [1, 2, 3], [4, 5, 6], [0, 0, 0], [7, 8, 9], [10, 11, 12], [0, 0, 0], [0, 0, 0]]


def test_doc_example_4d():
    x = ptocpu.tensor([2, 6, 1, 3], ptocpu.DT_FP32)
    src = np.arange(1, 13, dtype=np.float32).reshape(2, 2, 1, 3)
    out = ptocpu.scatter_update(x, -2, np.array([[1, 8], [4, 10]]), src)
    want = np.zeros((2, 6, 1, 3), np.float32)
    want[0, 1, 0], want[1, 2, 0], want[0, 4, 0], want[1, 4, 0] = [1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]
    assert out is x
    assert_same_bits(x, want)


def test_upstream_unit_examples():
    dst = np.zeros((10, 3), np.float32)
    ptocpu.scatter_update(dst, -2, np.array([[3, 5, 4], [8, 7, 1]]), np.arange(1, 19, dtype=np.float32).reshape(6, 3))
    assert dst[[3, 5, 4, 8, 7, 1]].tolist() == np.arange(1, 19).reshape(6, 3).tolist()
    dst4 = np.zeros((3, 2, 1, 4), np.float32)
    src4 = np.repeat(np.array([1, 2, 3, 4], np.float32), 4).reshape(2, 2, 1, 4)
    ptocpu.scatter_update(dst4, -2, np.array([[3, 5], [4, 1]]), src4)
    assert dst4[1, 1, 0].tolist() == [1] * 4 and dst4[2, 1, 0].tolist() == [2] * 4
    assert dst4[2, 0, 0].tolist() == [3] * 4 and dst4[0, 1, 0].tolist() == [4] * 4
    assert dst4[0, 0].sum() == dst4[1, 0].sum() == 0


@pytest.mark.parametrize("platform", ["ascend950", "atlas_a2"])
def test_official_rows(platform):
    rng = np.random.default_rng(9)
    with ptocpu.platform(platform):
        # ScatterUpdate_test_1: src [1,1,1,64], index [1,1] unique in [0, 2), dst zeros [2,1,1,64], tile [1,1,1,64]
        src = rng.uniform(-10, 10, size=(1, 1, 1, 64)).astype(np.float32)
        index = rng.permutation(2)[:1].reshape(1, 1)
        dst = np.zeros((2, 1, 1, 64), np.float32)
        want = ref.scatter_update(dst, index, src)
        with ptocpu.vec_tile_shapes(1, 1, 1, 64):
            ptocpu.scatter_update(dst, -2, index, src)
        assert_same_bits(dst, want)
        # ScatterUpdate_test_2: src [10,8], index [5,2] unique in [0, 15), dst zeros [15,8], tile [2,8]
        src = rng.uniform(-10, 10, size=(10, 8)).astype(np.float32)
        index = rng.permutation(15)[:10].reshape(5, 2)
        dst = np.zeros((15, 8), np.float32)
        want = ref.scatter_update(dst, index, src)
        with ptocpu.vec_tile_shapes(2, 8):
            ptocpu.scatter_update(dst, -2, index, src)
        assert_same_bits(dst, want)
        # test_scatterupdate_onboard: src (1,1,1,8) int32 = 2, index [[0]] int32, dst ones, tile (1,1,1,8)
        dst = np.ones((1, 1, 1, 8), np.int32)
        with ptocpu.vec_tile_shapes(1, 1, 1, 8):
            ptocpu.scatter_update(dst, -2, np.zeros((1, 1), np.int32), np.full((1, 1, 1, 8), 2, np.int32))
        assert dst.tolist() == [[[[2] * 8]]]


# ---------------------------------------------------------------- errors: one rule each
def assert_raises_unchanged(exc, match, cache, *args):
    before = cache.copy()
    with pytest.raises(exc, match=match):
        ptocpu.scatter_update(cache, *args)
    assert_same_bits(cache, before)


def small():
    return np.zeros((6, 4), np.float32), np.array([[0, 1], [2, 3]]), np.ones((4, 4), np.float32)


@pytest.mark.parametrize("dim", [0, -1, 1, 2])
def test_error_dim_must_be_minus_2(dim):
    cache, index, src = small()
    assert_raises_unchanged(ptocpu.ArgumentError, rf"scatter_update: dim {dim} is not supported; .* dim -2 only",
                            cache, dim, index, src)


@pytest.mark.parametrize("rank", [1, 3, 5])
def test_error_input_rank(rank):
    cache = np.zeros([2] * rank, np.float32)
    assert_raises_unchanged(ptocpu.ArgumentError, rf"input rank {rank}", cache, -2, np.zeros((1, 1), np.int64),
                            np.zeros([2] * rank, np.float32))


def test_error_dtypes():
    cache, index, src = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"src dtype DT_FP64 must match input dtype DT_FP32", cache, -2, index,
                            src.astype(np.float64))
    assert_raises_unchanged(ptocpu.DTypeError, r"index dtype DT_UINT8 is not an index dtype; allowed: DT_INT64, "
                            r"DT_INT32, DT_INT16", cache, -2, index.astype(np.uint8), src)
    with ptocpu.platform("ascend950"):
        assert_raises_unchanged(ptocpu.DTypeError, r"input dtype DT_UINT8 is not supported on platform ascend950",
                                cache.astype(np.uint8), -2, index, src.astype(np.uint8))


def test_error_shapes():
    cache, index, src = small()
    assert_raises_unchanged(ptocpu.ArgumentError, r"src rank 4 .* must equal input rank 2", cache, -2, index,
                            src.reshape(4, 1, 1, 4))
    assert_raises_unchanged(ptocpu.ArgumentError, r"index shape \[4\] must be \[b, s\]", cache, -2, index.ravel(), src)
    assert_raises_unchanged(ptocpu.ArgumentError, r"index shape \[2, 0\] must be \[b, s\] with b > 0 and s > 0",
                            cache, -2, np.zeros((2, 0), np.int64), src)
    assert_raises_unchanged(ptocpu.ArgumentError, r"src shape \[4, 3\] differs from input shape \[6, 4\] at axis 1",
                            cache, -2, index, src[:, :3])
    assert_raises_unchanged(ptocpu.ArgumentError, r"src shape \[3, 4\] has 3 rows but index shape \[2, 2\] writes "
                            r"b\*s = 4", cache, -2, index, src[:3])
    c4 = np.zeros((2, 3, 2, 4), np.float32)
    assert_raises_unchanged(ptocpu.ArgumentError, r"src shape \[2, 1, 2, 4\] is smaller than index shape \[2, 2\]",
                            c4, -2, index, np.ones((2, 1, 2, 4), np.float32))
    assert_raises_unchanged(ptocpu.ArgumentError, r"differs from input shape \[2, 3, 2, 4\] at axis 2", c4, -2, index,
                            np.ones((2, 2, 1, 4), np.float32))


@pytest.mark.parametrize("four_d", [False, True])
def test_error_slot_too_large_at_the_very_end_changes_nothing(four_d):
    rng = np.random.default_rng(1)
    if four_d:
        cache = np.zeros((20, 16, 1, 32), np.float32)
        slots = 320
        src = np.ones((30, 300, 1, 32), np.float32)
    else:
        cache = np.zeros((320, 32), np.float32)
        slots = 320
        src = np.ones((9000, 32), np.float32)
    index = rng.integers(-3, slots, size=(30, 300))
    index[-1, -1] = slots
    shape = "[20, 16, 1, 32]" if four_d else "[320, 32]"
    assert_raises_unchanged(ptocpu.IndexOutOfRange, rf"scatter_update: index value {slots} at index position "
                            rf"\(29, 299\) is out of range \[0, {slots}\) for the {slots} cache rows of input shape "
                            rf"{re.escape(shape)} \(a negative value skips its row\)", cache, -2, index, src)


def test_error_read_only_and_shared_elements():
    cache, index, src = small()
    cache.flags.writeable = False
    with pytest.raises(ptocpu.ArgumentError, match=r"read-only"):
        ptocpu.scatter_update(cache, -2, index, src)
    t = torch.zeros(1, 4).expand(6, 4)
    with pytest.raises(ptocpu.ArgumentError, match=r"share memory"):
        ptocpu.scatter_update(t, -2, torch.tensor([[0, 1]]), torch.ones(2, 4))
    assert t.sum().item() == 0


def test_error_non_tensor_arguments():
    cache, index, src = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"scatter_update: src must be a tensor, got NoneType", cache, -2, index,
                            None)
    assert_raises_unchanged(ptocpu.DTypeError, r"scatter_update: dim must be an integer", cache, "-2", index, src)


# ---------------------------------------------------------------- tile rules
def test_tile_rules_2d():
    cache = np.zeros((15, 8), np.float32)
    src = np.ones((12, 8), np.float32)
    index = np.arange(12).reshape(3, 4)
    for tile_bs in (1, 2, 4, 8, 12):  # divides s = 4, or a multiple of it
        with ptocpu.vec_tile_shapes(tile_bs, 8):
            ptocpu.scatter_update(cache, -2, index, src)
    for tile_bs in (3, 6):
        with ptocpu.vec_tile_shapes(tile_bs, 8):
            assert_raises_unchanged(ptocpu.TileError, rf"tile\[0\] = {tile_bs} which neither divides nor is a multiple "
                                    r"of index.shape\[1\] = 4", cache, -2, index, src)
    with ptocpu.vec_tile_shapes(4, 4):
        assert_raises_unchanged(ptocpu.TileError, r"tile\[1\] = 4 but src.shape\[1\] is 8", cache, -2, index, src)
    with ptocpu.vec_tile_shapes(4, 8, 1):
        assert_raises_unchanged(ptocpu.TileError, r"tile shape \[4, 8, 1\] has rank 3 but the input has rank 2",
                                cache, -2, index, src)


def test_tile_rules_4d_and_ub():
    cache = np.zeros((4, 16, 1, 64), np.float32)
    src = np.ones((2, 8, 1, 64), np.float32)
    index = np.arange(16).reshape(2, 8)
    with ptocpu.vec_tile_shapes(1, 8, 1, 32):
        assert_raises_unchanged(ptocpu.TileError, r"tile\[3\] = 32 below src.shape\[3\] = 64", cache, -2, index, src)
    big = np.zeros((8, 1024), np.float32)
    bsrc = np.ones((256, 1024), np.float32)
    bindex = np.arange(256).reshape(1, 256) % 8
    with ptocpu.platform("atlas_a2"):
        with ptocpu.vec_tile_shapes(32, 1024):  # 32 x 4096 + 1 x 256 bytes: fits
            ptocpu.scatter_update(big, -2, bindex, bsrc)
        with ptocpu.vec_tile_shapes(64, 1024):  # 64 x 4096 = 262144 + index > 196608
            assert_raises_unchanged(ptocpu.TileError, r"needs 262656 UB bytes \(src tile 262144 \+ index tile 512\) "
                                    r"but platform atlas_a2 has 196608", big, -2, bindex, bsrc)
