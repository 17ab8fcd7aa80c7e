"""topk and argsort (docs/ops/topk.md, argsort.md) against numpy's stable sort (ties by index, NaN
last) and torch; the pages' examples; every dtype of every platform row and algorithm; ties, +-0,
NaN, inf; strided inputs and valid shapes; every error and tile rule; 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, ranks_of
from ptocpu.tools import reference_composite as ref

MERGE, RADIX = ptocpu.TopKAlgo.MERGE_SORT, ptocpu.TopKAlgo.RADIX_SELECT


def values(rng, shape, dt, distinct=8) -> np.ndarray:
    """Few distinct values (many ties) of dt; floats with +-0."""
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        pool = np.array([info.min, info.max, 0, 1, 2, info.max - 1, info.min + 1, 7], dt.type)
        return pool[rng.integers(0, distinct, shape)]
    pool = np.array([0.0, -0.0, 1.5, -2.25, 3.0, -np.inf, np.inf, 1e-3], np.float32)
    return pool[rng.integers(0, distinct, shape)].astype(dt)


def algorithms(platform, dt):
    """The algorithms that take dt on the platform: MERGE_SORT fp32 everywhere, RADIX_SELECT on the 950."""
    found = [MERGE] if platform == "cpu" or dt == np.float32 else []
    return found + ([RADIX] if platform in ("cpu", "ascend950") else [])


def test_topk_every_dtype_algorithm_and_rank(platform):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "topk"):
        for algo in algorithms(platform, dt):
            for rank in ranks_of(platform, "topk"):
                shape = tuple(int(v) for v in rng.integers(1, 5, rank - 1)) + (int(rng.integers(1, 70)),)
                x = values(rng, shape, dt, distinct=int(rng.integers(2, 9)))
                for k in sorted({1, shape[-1], int(rng.integers(1, shape[-1] + 1))}):
                    for largest in (True, False):
                        v, i = ptocpu.topk(x, k, -1, largest, algo)
                        wv, wi = ref.topk(x, k, largest)
                        assert_same_bits(i, wi)
                        assert_same_bits(v, wv)


def test_topk_page_examples_and_method():
    x = ptocpu.asarray(np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], np.float32))
    v, i = ptocpu.topk(x, 2, -1, True, MERGE)
    assert v.tolist() == [[3.0, 2.0], [3.0, 2.0]] and i.tolist() == [[2, 1], [2, 1]]
    v, i = x.topk(2)
    assert v.tolist() == [[3.0, 2.0], [3.0, 2.0]] and i.tolist() == [[2, 1], [2, 1]]
    # the page's figure: a 4 x 32 matrix, k = 1 -> [[32], [32], [32], [32]]
    v, _ = ptocpu.topk(np.tile(np.arange(1, 33, dtype=np.float32), (4, 1)), 1)
    assert v.tolist() == [[32.0]] * 4


def test_topk_ties_zeros_and_nan():
    x = np.array([[2.0, np.nan, -0.0, 2.0, 0.0, -np.inf, np.nan, 2.0]], np.float32)
    v, i = ptocpu.topk(x, 8)
    assert i.tolist() == [[0, 3, 7, 2, 4, 5, 1, 6]]  # ties in index order, -0 == +0, NaN last
    assert_same_bits(v, x[:, [0, 3, 7, 2, 4, 5, 1, 6]])
    v, i = ptocpu.topk(x, 8, largest=False)
    assert i.tolist() == [[5, 2, 4, 0, 3, 7, 1, 6]]
    assert np.signbit(v.numpy()[0, 1]) and not np.signbit(v.numpy()[0, 2])  # the values themselves


def test_topk_against_torch_without_ties():
    rng = np.random.default_rng(3)
    x = rng.permutation(64 * 1000).astype(np.float32).reshape(64, 1000)
    for k, largest in ((10, True), (1000, False), (37, False)):
        v, i = ptocpu.topk(x, k, largest=largest)
        tv, ti = torch.topk(torch.from_numpy(x), k, -1, largest, True)
        assert v.numpy().tolist() == tv.tolist() and i.numpy().tolist() == ti.tolist()


def test_topk_strided_valid_shape_and_threads():
    rng = np.random.default_rng(4)
    base = values(rng, (500, 600), np.float32)
    for view in (base[::2, 10:500], base.T[:, ::-1]):
        v, i = ptocpu.topk(view, 17)
        wv, wi = ref.topk(view, 17)
        assert_same_bits(i, wi)
        assert_same_bits(v, wv)
    t = ptocpu.view(ptocpu.asarray(base), [8, 64], [0, 0], valid_shape=[5, 40])
    v, i = ptocpu.topk(t, 3)
    assert v.shape == [5, 3]
    assert_same_bits(i, ref.topk(base[:5, :40], 3)[1])
    ptocpu.set_num_threads(1)
    one = [t.numpy() for t in ptocpu.topk(base, 100, largest=False)]
    ptocpu.set_num_threads(2)
    two = [t.numpy() for t in ptocpu.topk(base, 100, largest=False)]
    assert_same_bits(two[0], one[0])
    assert_same_bits(two[1], one[1])


def test_topk_errors_and_tiles():
    x = np.zeros((4, 64), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match="topk: k 0 is out of range \\[1, 64\\]"):
        ptocpu.topk(x, 0)
    with pytest.raises(ptocpu.ArgumentError, match="k 65 is out of range"):
        ptocpu.topk(x, 65)
    with pytest.raises(ptocpu.ArgumentError, match="topk works along the last axis only"):
        ptocpu.topk(x, 2, 0)
    with pytest.raises(ptocpu.IndexOutOfRange, match="dim 2 is out of range"):
        ptocpu.topk(x, 2, 2)
    with pytest.raises(ptocpu.ArgumentError, match="algo 2 is not supported"):
        ptocpu.topk(x, 2, algo=2)
    with pytest.raises(ptocpu.DTypeError, match="input dtype DT_FP64"):
        ptocpu.topk(x.astype(np.float64), 2)
    with ptocpu.platform("atlas_a3"):
        with pytest.raises(ptocpu.ArgumentError, match="RADIX_SELECT is not supported on platform atlas_a3"):
            ptocpu.topk(x, 2, algo=RADIX)
        with pytest.raises(ptocpu.DTypeError, match="input dtype DT_FP16 is not supported on platform atlas_a3"):
            ptocpu.topk(x.astype(np.float16), 2)
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.DTypeError, match="DT_INT32 is not supported"):
            ptocpu.topk(x.astype(np.int32), 2)  # MERGE_SORT: fp32 only
        assert ptocpu.topk(x.astype(np.int32), 2, algo=RADIX)[1].shape == [4, 2]
        with ptocpu.vec_tile_shapes(4, 32):
            with pytest.raises(ptocpu.TileError, match="last dim of 32 < k 40"):
                ptocpu.topk(x, 40)
            with pytest.raises(ptocpu.TileError, match="RADIX_SELECT does not split the last axis"):
                ptocpu.topk(x, 2, algo=RADIX)
            assert ptocpu.topk(x, 2)[0].shape == [4, 2]
        with ptocpu.vec_tile_shapes(1, 5632), pytest.raises(ptocpu.TileError, match="22528 bytes"):
            ptocpu.topk(np.zeros((1, 6000), np.float32), 2)
        with ptocpu.vec_tile_shapes(64, 1024), pytest.raises(ptocpu.TileError, match="radix workspace 1703936"):
            ptocpu.topk(np.zeros((64, 1024), np.float32), 2, algo=RADIX)
        with ptocpu.vec_tile_shapes(4, 64, 1):
            with pytest.raises(ptocpu.TileError, match="has rank 3"):
                ptocpu.topk(x, 2)
    with ptocpu.vec_tile_shapes(1, 5632):  # no UB rules on the cpu
        assert ptocpu.topk(np.zeros((1, 6000), np.float32), 2)[0].shape == [1, 2]


def test_argsort_every_dtype_dim_and_direction(platform):
    rng = np.random.default_rng(10 + PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "argsort"):
        for rank in ranks_of(platform, "argsort"):
            shape = tuple(int(v) for v in rng.integers(1, 6, rank))
            x = values(rng, shape, dt, distinct=int(rng.integers(2, 9)))
            for dim in range(-rank, rank):
                if rank == 4 and dim % 4 == 0:
                    continue
                for descending in (True, False):
                    assert_same_bits(ptocpu.argsort(x, dim, descending), ref.sort_order(x, dim, descending))
            assert_same_bits(ptocpu.argsort(x), ref.sort_order(x, -1, False))


def test_argsort_page_example_and_torch():
    x = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], np.float32)
    assert ptocpu.argsort(x, -1, True).tolist() == [[2, 1, 0], [2, 1, 0]]
    rng = np.random.default_rng(5)
    x = (rng.integers(0, 50, (12, 10000)) * 0.5).astype(np.float32)  # many ties
    for descending in (True, False):
        want = torch.argsort(torch.from_numpy(x), dim=1, descending=descending, stable=True)
        assert ptocpu.argsort(x, 1, descending).numpy().tolist() == want.tolist()


def test_argsort_nan_zeros_strided_threads():
    x = np.array([np.nan, 1.0, -0.0, 0.0, -1.0, np.nan], np.float32)
    assert ptocpu.argsort(x).tolist() == [4, 2, 3, 1, 0, 5]
    assert ptocpu.argsort(x, descending=True).tolist() == [1, 2, 3, 4, 0, 5]
    rng = np.random.default_rng(6)
    base = values(rng, (300, 400), np.float16)
    for view, dim in ((base[::3, ::-1], 1), (base.T, 0), (base[5:200, 7:], 0)):
        assert_same_bits(ptocpu.argsort(view, dim, True), ref.sort_order(view, dim, True))
    ptocpu.set_num_threads(1)
    one = ptocpu.argsort(base, 0).numpy()
    ptocpu.set_num_threads(2)
    assert_same_bits(ptocpu.argsort(base, 0), one)


def test_argsort_errors_and_tiles():
    x = np.zeros((2, 3, 4, 64), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match="argsort: dim 0 is not supported for a 4-D input"):
        ptocpu.argsort(x, 0)
    with pytest.raises(ptocpu.ArgumentError, match="dim -4 is not supported"):
        ptocpu.argsort(x, -4)
    with pytest.raises(ptocpu.IndexOutOfRange, match="dim 4 is out of range"):
        ptocpu.argsort(x, 4)
    with ptocpu.platform("atlas_a2"), pytest.raises(ptocpu.DTypeError, match="input dtype DT_BF16"):
        ptocpu.argsort(np.zeros(4, np.float32).astype(ref.BF16))
    with ptocpu.vec_tile_shapes(2, 3, 4, 48), pytest.raises(ptocpu.TileError, match="has 48 along dim 3"):
        ptocpu.argsort(x)
    with ptocpu.vec_tile_shapes(2, 3, 4, 64):
        assert ptocpu.argsort(x).shape == [2, 3, 4, 64]
    big = np.zeros((2, 8192), np.float32)
    with ptocpu.platform("atlas_a2"):
        with ptocpu.vec_tile_shapes(1, 32), pytest.raises(ptocpu.TileError, match="into 256 tiles"):
            ptocpu.argsort(big)
        with ptocpu.vec_tile_shapes(1, 128):
            assert ptocpu.argsort(big).shape == [2, 8192]
    with ptocpu.vec_tile_shapes(1, 32):
        assert ptocpu.argsort(big).shape == [2, 8192]


def test_empty_inputs_on_the_cpu():
    v, i = ptocpu.topk(np.zeros((0, 5), np.float32), 2)
    assert v.shape == [0, 2] and i.shape == [0, 2]
    assert ptocpu.argsort(np.zeros((0, 3), np.float32)).shape == [0, 3]
    assert ptocpu.argsort(np.zeros((3, 0), np.float16), 1).shape == [3, 0]
    with pytest.raises(ptocpu.ArgumentError, match=r"k 1 is out of range \[1, 0\]"):
        ptocpu.topk(np.zeros((3, 0), np.float32), 1)
