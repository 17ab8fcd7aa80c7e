"""experimental.gather_in_ub / gather_in_l1 (docs/ops/paged_gather.md) against a loop that walks the
page table token by token, as upstream's golden does, upstream's page example, views, and one test
per error and tile rule."""
from __future__ import annotations

import numpy as np
import pytest

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, random_bits

gather_in_ub = ptocpu.experimental.gather_in_ub
gather_in_l1 = ptocpu.experimental.gather_in_l1
CUBE = ([32, 64], [64, 128], [32, 64])


@pytest.fixture
def cube_tile():
    ptocpu.set_cube_tile_shapes(*CUBE)
    yield
    ptocpu._core._reset_cube_tile_shapes()


def page_walk(cache, ids, pages, block_size, size=None):
    """Row by row: logical page, physical page, row in the cache."""
    size = cache.shape[1] if size is None else size
    out = np.empty((ids.shape[1], size), cache.dtype)
    for i, token in enumerate(ids[0].tolist()):
        physical_page = int(pages[0][token // block_size])
        out[i] = cache[physical_page * block_size + token % block_size, :size]
    return out


def random_case(rng, rows, block_size, n_pages, k, index_dtype=np.int32):
    pages = rng.permutation(rows // block_size)[:n_pages].reshape(1, -1).astype(np.int32)
    ids = rng.integers(0, n_pages * block_size, size=(1, k)).astype(index_dtype)
    return ids, pages


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("op", ["gather_in_ub", "gather_in_l1"])
def test_every_platform_dtype_against_page_walk(platform, op, cube_tile):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    for dt in dtypes_of(platform, op):
        for rows, hidden, block, n_pages, k in ((32, 4, 4, 3, 8), (82, 64, 8, 9, 200), (7, 33, 1, 7, 5)):
            cache = random_bits(rng, (rows, hidden), dt)
            ids, pages = random_case(rng, rows, block, n_pages, k)
            with ptocpu.platform(platform):
                if op == "gather_in_ub":
                    assert_same_bits(gather_in_ub(cache, ids, pages, block, -2), page_walk(cache, ids, pages, block))
                else:
                    for b_matrix, trans in ((False, False), (True, True), (True, False)):
                        got = gather_in_l1(cache, ids, pages, block, hidden - 1 or 1, b_matrix, trans)
                        assert_same_bits(got, page_walk(cache, ids, pages, block, hidden - 1 or 1))


def test_upstream_page_example():
    # Token t's row holds 10 * t + column; block_size 2; token 4 sits in physical page 1.
    cache = (10 * np.arange(6)[:, None] + np.arange(4)).astype(np.float32)
    out = gather_in_ub(cache, np.array([[0, 4, 3]], np.int32), np.array([[0, 2, 1]], np.int32), 2, -2)
    np.testing.assert_array_equal(out.numpy(), [[0, 1, 2, 3], [20, 21, 22, 23], [50, 51, 52, 53]])


def test_int64_ids_repeats_and_strided_cache():
    rng = np.random.default_rng(7)
    base = rng.standard_normal((40, 24)).astype(np.float32)
    cache = base[::2, 1::2]  # strided rows and columns
    ids = np.array([[3, 3, 0, 19, 3]], np.int64)
    pages = np.array([[4, 0, 1, 2, 3]], np.int32)
    assert_same_bits(gather_in_ub(cache, ids, pages, 4, -2), page_walk(cache, ids, pages, 4))
    assert_same_bits(gather_in_l1(cache, ids, pages, 4, 5, False, True), page_walk(cache, ids, pages, 4, 5))


def test_valid_shapes_are_read():
    # A view's valid shape sets k and the cache's columns (docs/kernel_model.md).
    cache = np.arange(48, dtype=np.float32).reshape(8, 6)
    ids = np.array([[1, 6, 2, 7]], np.int32)
    pages = np.array([[0, 1]], np.int32)
    ids_view = ptocpu.view(ptocpu.asarray(ids), [1, 4], [0, 0], valid_shape=[1, 3])
    cache_view = ptocpu.view(ptocpu.asarray(cache), [8, 6], [0, 0], valid_shape=[8, 5])
    got = gather_in_ub(cache_view, ids_view, pages, 4, -2)
    assert_same_bits(got, page_walk(cache[:, :5], ids[:, :3], pages, 4))


def test_result_is_a_copy():
    cache = np.ones((4, 4), np.float32)
    out = gather_in_ub(cache, np.array([[0]], np.int32), np.array([[0]], np.int32), 4, -2)
    cache[0, 0] = 5
    assert out.numpy()[0, 0] == 1


@pytest.mark.parametrize("ids,pages,needle", [
    ([[0, 6]], [[0, 1, 0]], r"indices\[0, 1\] = 6 is outside the page table: block_table holds 3 pages of block_size 2"),
    ([[-1]], [[0]], r"indices\[0, 0\] = -1 is outside the page table"),
    ([[5]], [[0, 0, 4]], r"indices\[0, 0\] = 5 is in page block_table\[0, 2\] = 4 .* the cache has 8 rows"),
    ([[1]], [[-1]], r"block_table\[0, 0\] = -1"),
])
@pytest.mark.parametrize("op", ["gather_in_ub", "gather_in_l1"])
def test_index_errors(op, ids, pages, needle):
    args = (np.zeros((8, 4), np.float32), np.array(ids, np.int32), np.array(pages, np.int32), 2)
    with pytest.raises(ptocpu.IndexOutOfRange, match=needle):
        gather_in_ub(*args, -2) if op == "gather_in_ub" else gather_in_l1(*args, 4, False, False)


def test_argument_errors():
    cache, ids, pages = np.zeros((8, 4), np.float32), np.zeros((1, 2), np.int32), np.zeros((1, 2), np.int32)
    with pytest.raises(ptocpu.ArgumentError, match="axis 0 is not supported; only -2"):
        gather_in_ub(cache, ids, pages, 2, 0)
    with pytest.raises(ptocpu.ArgumentError, match=r"indices shape \[2, 1\] must be \[1, n\]"):
        gather_in_ub(cache, np.zeros((2, 1), np.int32), pages, 2, -2)
    with pytest.raises(ptocpu.ArgumentError, match=r"block_table rank 1 is out of range \[2, 2\]"):
        gather_in_ub(cache, ids, np.zeros(2, np.int32), 2, -2)
    with pytest.raises(ptocpu.ArgumentError, match=r"param shape \[0, 4\] is empty"):
        gather_in_ub(np.zeros((0, 4), np.float32), ids, pages, 2, -2)
    with pytest.raises(ptocpu.ArgumentError, match="block_size 0 must be > 0"):
        gather_in_ub(cache, ids, pages, 0, -2)
    for size in (0, 5):
        with pytest.raises(ptocpu.ArgumentError, match=rf"size {size} must be in \[1, 4\]"):
            gather_in_l1(cache, ids, pages, 2, size, False, False)


def test_dtype_errors_per_platform(cube_tile):
    cache, ids, pages = np.zeros((8, 4), np.float32), np.zeros((1, 2), np.int64), np.zeros((1, 2), np.int32)
    gather_in_ub(cache, ids, pages, 2, -2)  # the cpu platform takes int64 ids
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match="gather_in_ub: indices dtype DT_INT64 is not supported on platform atlas_a2"):
            gather_in_ub(cache, ids, pages, 2, -2)
        gather_in_l1(cache, ids, pages, 2, 4, False, False)  # gather_in_l1 takes int64 ids on the chips
        with pytest.raises(ptocpu.DTypeError, match="block_table dtype DT_INT64"):
            gather_in_l1(cache, ids, pages.astype(np.int64), 2, 4, False, False)
        with pytest.raises(ptocpu.DTypeError, match="param dtype DT_INT8"):
            gather_in_ub(cache.astype(np.int8), ids.astype(np.int32), pages, 2, -2)
        gather_in_l1(cache.astype(np.int8), ids, pages, 2, 4, False, False)


def test_vector_tile_rule():
    cache, ids, pages = np.zeros((64, 4096), np.float32), np.zeros((1, 64), np.int32), np.zeros((1, 1), np.int32)
    with ptocpu.platform("atlas_a2"):
        with ptocpu.vec_tile_shapes(8, 4096):
            gather_in_ub(cache, ids, pages, 64, -2)  # 8 * 4096 * 4 = 128 KiB fits 192 KiB
        with ptocpu.vec_tile_shapes(16, 4096), pytest.raises(ptocpu.TileError, match="output tile"):
            gather_in_ub(cache, ids, pages, 64, -2)
        with ptocpu.vec_tile_shapes(8, 8, 8), pytest.raises(ptocpu.TileError, match="rank 3"):
            gather_in_ub(cache, ids, pages, 64, -2)


def test_cube_tile_rule():
    cache, ids, pages = np.zeros((1024, 512), np.float32), np.zeros((1, 1024), np.int32), np.zeros((1, 1), np.int32)
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.TileError, match="no cube tile shape is set"):
            gather_in_l1(cache, ids, pages, 1024, 512, False, False)
        try:
            # a left operand's L1 tile [mL1, kAL1] = [128, 512]: 256 KiB of fp32 fits the 512 KiB L1
            ptocpu.set_cube_tile_shapes([128, 128], [128, 512], [128, 1024])
            gather_in_l1(cache, ids, pages, 1024, 512, False, False)
            # as a right operand the tile is [kBL1, nL1] = [512, 1024], cut to [k, size] = [1024, 512]
            with pytest.raises(ptocpu.TileError,
                               match=r"L1 tile \[512, 512\] needs 1048576 bytes of L1 \(512 \* 512 \* 4 bytes\) but platform atlas_a2 has 524288"):
                gather_in_l1(cache, ids, pages, 1024, 512, True, False)
            # transposed, the left operand's tile is [kAL1, mL1] = [512, 128]: fits again
            gather_in_l1(cache, ids, pages, 1024, 512, False, True)
        finally:
            ptocpu._core._reset_cube_tile_shapes()
    gather_in_l1(cache, ids, pages, 1024, 512, True, False)  # the cpu platform has no L1
