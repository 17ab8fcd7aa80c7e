"""The layout family (docs/ops/layout.md) against numpy: reshape, unsqueeze, transpose, permute,
concat, expand_clone, clone, pad, fillpad, tril / triu (+ tril_ / triu_), pack, unpack. Every dtype
and rank of each platform's row, non-contiguous inputs, valid shapes, empty tensors, the device's
mask-multiply numerics of tril / triu, the pages' examples, every error rule with its message, tile
and UB rules, the same results for 1 and 2 threads, and upstream-style kernels under
ptocpu.function."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, np_dtype, op_table, random_bits, ranks_of

CHIPS = PLATFORMS[1:]


def shape_of(rng, rank: int, lo: int = 1, hi: int = 5) -> tuple:
    return tuple(int(v) for v in rng.integers(lo, hi, size=rank))


def strided(a: np.ndarray) -> np.ndarray:
    """The same values in a non-contiguous layout (every other element of a larger array)."""
    if a.ndim == 0:
        return a
    big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
    big[..., ::2] = a
    return big[..., ::2]


def partly_valid(a: np.ndarray, valid) -> ptocpu.Tensor:
    """a's leading box `valid` as a partly valid view of shape a.shape (zeros past valid)."""
    t = ptocpu.view(ptocpu.asarray(a), list(a.shape), [0] * a.ndim, valid_shape=list(valid))
    assert t.valid_shape == tuple(valid) and t.shape == a.shape
    return t


def zero_past(a: np.ndarray, valid) -> np.ndarray:
    out = np.zeros_like(a)
    box = tuple(slice(0, v) for v in valid)
    out[box] = a[box]
    return out


# ---- reshape / unsqueeze -------------------------------------------------------------------------

def test_reshape_every_dtype_is_a_view_of_the_same_bits(platform):
    rng = np.random.default_rng(1)
    for dt in dtypes_of(platform, "reshape"):
        x = random_bits(rng, (2, 3, 4), dt)
        for shape in ([4, 6], [-1], [24, 1], [2, -1, 3], [1, 2, 1, 12]):
            out = ptocpu.reshape(x, shape)
            assert_same_bits(out, x.reshape(shape))
            assert np.shares_memory(out.numpy(), x)


def test_reshape_view_writes_through_and_copies_when_strides_forbid_a_view():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    view = ptocpu.reshape(x, [2, 12])
    view[0, 0] = 100.0
    assert x[0, 0] == 100.0
    t = x.T  # a transposed layout: no view of it is row-major
    out = ptocpu.reshape(t, [24])
    assert_same_bits(out, t.reshape(24))
    assert not np.shares_memory(out.numpy(), x)
    # a slice along the first axis stays a view
    rows = x[1:3]
    assert np.shares_memory(ptocpu.reshape(rows, [12]).numpy(), x)
    sliced = strided(np.arange(12, dtype=np.int16).reshape(3, 4))
    assert_same_bits(ptocpu.reshape(sliced, [2, 6]), sliced.reshape(2, 6))
    assert_same_bits(ptocpu.reshape(sliced, [3, 2, 2]), sliced.reshape(3, 2, 2))  # splits the strided axis


def test_reshape_inplace_shares_memory_and_refuses_what_cannot_share():
    x = ptocpu.asarray(np.arange(4, dtype=np.float32).reshape(2, 2))
    y = x.reshape([4], inplace=True)
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
    y[1] = 7.0
    assert x.tolist() == [[0.0, 7.0], [2.0, 3.0]]
    with pytest.raises(ptocpu.ArgumentError, match=r"cannot be viewed as shape \[4\]; inplace=True shares"):
        ptocpu.reshape(np.arange(4, dtype=np.float32).reshape(2, 2).T, [4], inplace=True)
    with pytest.raises(ptocpu.ArgumentError, match=r"valid_shape cannot be given with inplace=True; use inplace=False "
                                                   r"\(PyPTO: \"Reshape\(Inplace=true\) is not supported for tensors "
                                                   r"derived from dynamic view\"\)"):
        ptocpu.reshape(x, [4], valid_shape=[2], inplace=True)
    with pytest.raises(ptocpu.ArgumentError, match=r"has -1 at index 0; with inplace=True every dim must be given"):
        ptocpu.reshape(x, [-1], inplace=True)
    with pytest.raises(ptocpu.ArgumentError, match="may only be reshaped with inplace=False"):
        ptocpu.reshape(partly_valid(np.ones((2, 2), np.float32), (1, 2)), [4], inplace=True)


def test_reshape_valid_shape_and_partly_valid_inputs():
    # The page's example: the data stays, valid_shape is the output's valid shape.
    x = ptocpu.asarray(np.array([[1, 2], [3, 4]], np.float32))
    y = ptocpu.reshape(x, [4, 1], [2, 1])  # the page passes valid_shape by position
    assert y.tolist() == [[1.0], [2.0], [3.0], [4.0]] and y.valid_shape == (2, 1) and y.shape == (4, 1)
    assert ptocpu.add(y, 1.0).tolist() == [[2.0], [3.0]]  # ops read the valid part
    assert x.reshape([4, 1], valid_shape=[2, 1]).valid_shape == (2, 1)
    # A partly valid input is reshaped whole (its padding reads 0); the result is fully valid.
    p = partly_valid(np.arange(6, dtype=np.float32).reshape(2, 3), (2, 2))
    out = ptocpu.reshape(p, [3, 2])
    assert out.tolist() == [[0.0, 1.0], [0.0, 3.0], [4.0, 0.0]] and not out.partially_valid


def test_reshape_moves_a_valid_part_into_the_valid_block():
    # upstream's st/frontend/test_reshape_copy_out.py: a tile viewed past the tensor's end, reshaped
    # with a valid_shape of its valid elements, and back to the tile shape after an op.
    data = np.arange(4 * 3 * 5, dtype=np.float32).reshape(4, 3, 5)
    tile = ptocpu.view(ptocpu.asarray(data), [4, 8, 5], [0, 0, 0], valid_shape=[4, 3, 5])
    rows = ptocpu.reshape(tile, [32, 5], valid_shape=[12, 5])
    assert rows.shape == (32, 5) and rows.valid_shape == (12, 5)
    np.testing.assert_array_equal(rows.numpy()[:12], data.reshape(12, 5))
    assert not rows.numpy()[12:].any()  # the padding
    squared = ptocpu.mul(rows, rows)  # the valid part: [12, 5]
    back = ptocpu.reshape(squared, [4, 8, 5], valid_shape=[4, 3, 5])
    assert back.shape == (4, 8, 5) and back.valid_shape == (4, 3, 5)
    np.testing.assert_array_equal(back.numpy()[:, :3], data ** 2)
    assert not back.numpy()[:, 3:].any()
    # a transposed valid part is read in its logical order
    t = ptocpu.view(ptocpu.asarray(np.ascontiguousarray(data[0].T)).transpose(0, 1), [3, 6], [0, 0],
                    valid_shape=[3, 5])
    np.testing.assert_array_equal(ptocpu.reshape(t, [16], valid_shape=[15]).numpy()[:15], data[0].ravel())
    # element counts of neither rule: refused
    with pytest.raises(ptocpu.ArgumentError, match="does not hold the 60 elements"):
        ptocpu.reshape(data, [4, 8, 5], valid_shape=[4, 2, 5])


def test_reshape_flattens_with_minus_one_and_handles_empty_and_0d():
    x = np.zeros((4, 3, 2, 2), np.float32)
    assert ptocpu.reshape(x, [-1]).shape == (48,)  # the docstring's example
    assert ptocpu.reshape(np.array(3.5, np.float32), [1, 1]).tolist() == [[3.5]]
    assert ptocpu.reshape(np.zeros((1, 1), np.int8), []).shape == ()
    assert ptocpu.reshape(np.zeros((0, 4), np.float32), [2, 0, 2]).shape == (2, 0, 2)


@pytest.mark.parametrize("shape, error, needle", [
    ([5, 5], ptocpu.ArgumentError, r"shape \[5, 5\] does not hold the 24 elements of input shape \[2, 3, 4\]"),
    ([-1, -1], ptocpu.ArgumentError, "has -1 at indices 0 and 1; only one dim can be inferred"),
    ([-2, 12], ptocpu.ArgumentError, "has the negative dim -2 at index 0"),
    ([-1, 5], ptocpu.ArgumentError, r"shape \[-1, 5\] cannot hold the 24 elements"),
    ([0, -1], ptocpu.ArgumentError, "cannot hold the 24 elements"),
])
def test_reshape_shape_errors(shape, error, needle):
    with pytest.raises(error, match=needle):
        ptocpu.reshape(np.zeros((2, 3, 4), np.float32), shape)


def test_reshape_valid_shape_errors_and_chip_rules():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match=r"valid_shape \[3, 1\] has 2 entries but the output shape \[6\] has rank 1"):
        ptocpu.reshape(x, [6], valid_shape=[3, 1])
    with pytest.raises(ptocpu.ArgumentError, match=r"valid_shape \[-1\] has -1 at dim 0, outside \[0, 6\]"):
        ptocpu.reshape(x, [6], valid_shape=[-1])
    with pytest.raises(ptocpu.ArgumentError, match=r"valid_shape \[7\] has 7 at dim 0, outside \[0, 6\]"):
        ptocpu.reshape(x, [6], valid_shape=[7])
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.ArgumentError, match="does not accept empty input tensors"):
            ptocpu.reshape(np.zeros((0, 2), np.float32), [0])
        assert ptocpu.reshape(x, [3, 2]).shape == (3, 2)
        with ptocpu.vec_tile_shapes(1, 1, 1):  # no tile rule
            assert ptocpu.reshape(x, [6]).shape == (6,)


def test_unsqueeze_every_dim_is_a_view(platform):
    rng = np.random.default_rng(2)
    for dt in dtypes_of(platform, "unsqueeze"):
        x = random_bits(rng, (3, 4), dt)
        for dim in range(-3, 3):
            out = ptocpu.unsqueeze(x, dim)
            assert_same_bits(out, np.expand_dims(x, dim))
            assert np.shares_memory(out.numpy(), x)


def test_unsqueeze_keeps_the_valid_shape_and_checks_dim():
    assert ptocpu.asarray(np.zeros((8, 16, 16), np.float32)).unsqueeze(-4).shape == (1, 8, 16, 16)
    p = partly_valid(np.ones((3, 4), np.float32), (2, 3))
    out = ptocpu.unsqueeze(p, 1)
    assert out.shape == (3, 1, 4) and out.valid_shape == (2, 1, 3)
    assert ptocpu.unsqueeze(np.array(1.0, np.float32), 0).shape == (1,)
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"dim 3 is out of range \[-3, 2\] for a tensor of rank 2"):
        ptocpu.unsqueeze(np.zeros((2, 2)), 3)
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"dim -4 is out of range \[-3, 2\]"):
        ptocpu.unsqueeze(np.zeros((2, 2)), -4)
    with pytest.raises(ptocpu.ArgumentError, match=r"input rank 8 is out of range \[0, 7\]"):
        ptocpu.unsqueeze(np.zeros((1,) * 8), 0)


# ---- transpose / permute -------------------------------------------------------------------------

def _pairs(rank: int, chip: bool):
    pairs = [(a, b) for a in range(rank) for b in range(a + 1, rank)]
    if chip and rank == 4:
        return [(0, 2), (1, 2), (1, 3), (2, 3)]
    if chip and rank == 5:
        return [(3, 4)]
    return pairs


def test_transpose_every_dtype_rank_and_pair(platform):
    rng = np.random.default_rng(3)
    for dt in dtypes_of(platform, "transpose"):
        for rank in ranks_of(platform, "transpose"):
            x = random_bits(rng, shape_of(rng, rank, 2, 5), dt)
            for a, b in _pairs(rank, platform != "cpu"):
                want = np.ascontiguousarray(np.swapaxes(x, a, b))
                assert_same_bits(ptocpu.transpose(x, a, b), want)
                assert_same_bits(ptocpu.transpose(strided(x), b - rank, a), want)
                assert_same_bits(ptocpu.asarray(x).transpose(b, a), want)


def test_permute_every_dtype_and_rank(platform):
    rng = np.random.default_rng(4)
    for dt in dtypes_of(platform, "permute"):
        for rank in ranks_of(platform, "permute"):
            x = random_bits(rng, shape_of(rng, rank, 2, 4), dt)
            for _ in range(3):
                dims = [int(v) for v in rng.permutation(rank)]
                want = np.ascontiguousarray(np.transpose(x, dims))
                assert_same_bits(ptocpu.permute(x, dims), want)
                negative = [d - rank for d in dims]
                assert_same_bits(ptocpu.asarray(strided(x)).permute(negative), want)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.float64])
def test_large_transposes_match_torch(dt):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((515, 1030)) * 100).astype(dt)
    assert_same_bits(ptocpu.transpose(x, 0, 1), torch.from_numpy(x).t().contiguous().numpy())
    y = (rng.standard_normal((3, 70, 33, 130)) * 100).astype(dt)
    for a, b in [(2, 3), (1, 2), (0, 2), (1, 3)]:
        assert_same_bits(ptocpu.transpose(y, a, b), torch.from_numpy(y).transpose(a, b).contiguous().numpy())
    assert_same_bits(ptocpu.permute(y, [0, 2, 1, 3]), torch.from_numpy(y).permute(0, 2, 1, 3).contiguous().numpy())
    assert_same_bits(ptocpu.permute(y, [3, 1, 0, 2]), torch.from_numpy(y).permute(3, 1, 0, 2).contiguous().numpy())
    # the blocked transpose on row-reversed, column-sliced and batched-with-gaps sources, odd edges
    for view in (x[::-1], x[7:400, 3:1001], x[::-2, 5:], y[1:, ::2][..., 1:129]):
        a, b = view.ndim - 2, view.ndim - 1
        assert_same_bits(ptocpu.transpose(view, a, b), np.swapaxes(view, a, b).copy())
    z = (rng.standard_normal((5, 17, 300)) * 100).astype(dt)  # tiles of 1, 16 and 64 rows
    assert_same_bits(ptocpu.permute(z, [2, 0, 1]), np.transpose(z, [2, 0, 1]).copy())
    assert_same_bits(ptocpu.permute(z, [1, 2, 0]), np.transpose(z, [1, 2, 0]).copy())
    # a side of 9 to 33 elements: register blocks that overlap the ones before at the edges
    for side in (9, 11, 15, 17, 23, 33):
        w = (rng.standard_normal((3, side, 257)) * 100).astype(dt)
        assert_same_bits(ptocpu.transpose(w, 1, 2), np.swapaxes(w, 1, 2).copy())
        assert_same_bits(ptocpu.transpose(np.swapaxes(w, 1, 2).copy(), 1, 2), w)


@pytest.mark.parametrize("dt", [np.int8, np.float16, np.float32, np.float64])
def test_channels_moved_last_match_torch(dt):
    """A last dim of up to 8 elements read from as many planes ([N, C, H, W] to [N, H, W, C]) is copied
    as an interleave of the planes (docs/ops/layout.md); 9 planes and more take the blocked transpose.
    Every plane count, whole, sliced and reversed sources, batches of one."""
    rng = np.random.default_rng(6)
    for c in range(2, 11):
        x = (rng.standard_normal((3, c, 37, 41)) * 100).astype(dt)
        for view in (x, x[:, :, 3:30, ::2], x[1:2, :, 5:], x[::-1, :, ::-1]):
            want = torch.from_numpy(view.copy()).permute(0, 2, 3, 1).contiguous().numpy()
            assert_same_bits(ptocpu.permute(view, [0, 2, 3, 1]), want)
        assert_same_bits(ptocpu.transpose(x[0], 0, 2), np.swapaxes(x[0], 0, 2).copy())  # [W, H, C]
        assert_same_bits(ptocpu.permute(x, [2, 3, 0, 1]), np.transpose(x, [2, 3, 0, 1]).copy())  # two small dims last


@pytest.mark.parametrize("dt", [np.int8, np.float16, np.float32, np.float64])
def test_channels_moved_first_match_torch(dt):
    """The mirror: a contiguous last dim of up to 8 elements spread into as many planes ([N, H, W, C]
    to [N, C, H, W]) is split plane by plane (docs/ops/layout.md), 9 and more take the blocked
    transpose. Every plane count, runs of 16 KiB and a part run, sliced and reversed sources."""
    rng = np.random.default_rng(9)
    for c in range(2, 11):
        x = (rng.standard_normal((2, 45, 200, c)) * 100).astype(dt)
        for view in (x, x[:, 3:30, ::-1], x[1:2, 5:], x[::-1, ::2]):
            want = torch.from_numpy(view.copy()).permute(0, 3, 1, 2).contiguous().numpy()
            assert_same_bits(ptocpu.permute(view, [0, 3, 1, 2]), want)
        assert_same_bits(ptocpu.transpose(x[0], 0, 2), np.swapaxes(x[0], 0, 2).copy())  # [C, W, H]


@pytest.mark.parametrize("dt", [np.int8, np.float16, np.float32, np.float64])
def test_first_and_last_small_dims_swapped_match_torch(dt):
    """[a, M, b] to [b, M, a] with a <= 8: planes read with a step of b elements (docs/ops/layout.md)
    while b elements span at most a cache line; past it each plane transposed into a stage, then the
    stage's planes interleaved; a = 9 the blocked transpose. Leading batches, views."""
    rng = np.random.default_rng(8)
    line = 64 // np.dtype(dt).itemsize
    for a, b in ((3, 3), (2, 4), (5, 4), (8, 7), (2, line), (3, line + 1), (9, 3)):
        x = (rng.standard_normal((2, a, 301, b)) * 100).astype(dt)
        for view in (x, x[:, :, ::3], x[::-1, :, 7:]):
            for perm in ([0, 3, 2, 1], [3, 2, 1, 0], [3, 0, 2, 1]):
                want = torch.from_numpy(view.copy()).permute(*perm).contiguous().numpy()
                assert_same_bits(ptocpu.permute(view, perm), want)
        assert_same_bits(ptocpu.transpose(x[1], 0, 2), np.swapaxes(x[1], 0, 2).copy())


def test_transpose_and_permute_no_op_cases_return_the_input():
    x = ptocpu.asarray(np.arange(6, dtype=np.float32).reshape(1, 6, 1))
    assert np.shares_memory(ptocpu.transpose(x, 1, -2).numpy(), x.numpy())
    assert np.shares_memory(ptocpu.transpose(x, 0, 2).numpy(), x.numpy())  # both axes of size 1
    assert np.shares_memory(ptocpu.permute(x, [0, 1, 2]).numpy(), x.numpy())
    v = np.arange(3)
    assert np.shares_memory(ptocpu.permute(v, [-1]).numpy(), v)  # 1-D
    assert not np.shares_memory(ptocpu.transpose(x, 0, 1).numpy(), x.numpy())
    with ptocpu.platform("ascend950"):  # the 4-D pair rule does not apply to a no-op
        y = np.zeros((1, 2, 3, 1), np.float32)
        assert ptocpu.transpose(y, 0, 3).shape == (1, 2, 3, 1)
        with ptocpu.vec_tile_shapes(1, 2, 3, 4):  # 16 bytes: the returned input's copy needs 32-byte rows
            with pytest.raises(ptocpu.TileError, match=r"tile shape \[1, 2, 3, 4\] has a last dim of 4 DT_FP32 elements "
                                                       r"\(16 bytes\); the input is returned unchanged"):
                ptocpu.transpose(y, 0, 3)
            with pytest.raises(ptocpu.TileError, match="the input is returned unchanged"):
                ptocpu.permute(y, [0, 1, 2, 3])
        with ptocpu.vec_tile_shapes(1, 2, 3, 8):
            assert ptocpu.permute(y, [0, 1, 2, 3]).shape == (1, 2, 3, 1)


def test_transpose_and_permute_keep_the_valid_shape():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    p = partly_valid(a, (2, 3))
    out = ptocpu.transpose(p, 0, 1)
    assert out.shape == (4, 3) and out.valid_shape == (3, 2)
    assert_same_bits(out, zero_past(a, (2, 3)).T.copy())
    b = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    q = partly_valid(b, (1, 2, 3))
    out = ptocpu.permute(q, [2, 0, 1])
    assert out.shape == (4, 2, 3) and out.valid_shape == (3, 1, 2)
    assert_same_bits(out, np.transpose(zero_past(b, (1, 2, 3)), [2, 0, 1]).copy())


def test_transpose_errors():
    x4 = np.zeros((2, 3, 4, 5), np.float32)
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"dim 4 is out of range \[-4, 4\)"):
        ptocpu.transpose(x4, 0, 4)
    assert ptocpu.transpose(x4, 0, 3).shape == (5, 3, 4, 2)  # the host has no pair rule
    assert ptocpu.transpose(np.zeros((2,) * 8, np.float32), 0, 7).shape == (2,) * 8
    for platform in CHIPS:
        with ptocpu.platform(platform):
            for a, b in [(0, 3), (1, 0)]:
                with pytest.raises(ptocpu.ArgumentError, match=r"dims \(0, \d\) of a 4-D input are not supported on platform "
                                                               + platform + r"; supported pairs: \(0, 2\), \(1, 2\), \(1, 3\), \(2, 3\)"):
                    ptocpu.transpose(x4, a, b)
            with pytest.raises(ptocpu.ArgumentError, match=r"dims \(2, 4\) of a 5-D input .* supported pairs: \(3, 4\)"):
                ptocpu.transpose(np.zeros((2,) * 5, np.float32), 2, 4)
            with pytest.raises(ptocpu.ArgumentError, match=r"input rank 6 is out of range \[1, 5\]"):
                ptocpu.transpose(np.zeros((2,) * 6, np.float32), 0, 1)
            with pytest.raises(ptocpu.DTypeError, match="input dtype DT_FP64 is not supported on platform " + platform):
                ptocpu.transpose(np.zeros((2, 2)), 0, 1)
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match="DT_FP8E4M3 is not supported on platform atlas_a2"):
            ptocpu.transpose(np.zeros((2, 2), ml_dtypes.float8_e4m3fn), 0, 1)
    with ptocpu.platform("ascend950"):
        assert ptocpu.transpose(np.zeros((2, 3), ml_dtypes.float8_e4m3fn), 0, 1).shape == (3, 2)
    with pytest.raises(ptocpu.ArgumentError, match=r"input rank 0 is out of range \[1, 8\]"):
        ptocpu.transpose(np.float32(1), 0, 0)


def test_permute_errors():
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match=r"dims \[0, 1\] has 2 entries but input_tensor has rank 3"):
        ptocpu.permute(x, [0, 1])
    with pytest.raises(ptocpu.ArgumentError, match=r"dims \[0, 2, 2\] names axis 2 twice"):
        ptocpu.permute(x, [0, 2, 2])
    with pytest.raises(ptocpu.ArgumentError, match=r"dims \[0, -1, 2\] names axis 2 twice"):
        ptocpu.permute(x, [0, -1, 2])
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"dims \[0, 3, 1\] has the axis 3, out of range \[-3, 3\)"):
        ptocpu.permute(x, [0, 3, 1])
    with ptocpu.platform("atlas_a3"):
        assert ptocpu.permute(np.zeros((2, 3), np.uint64), [1, 0]).shape == (3, 2)  # 64-bit on the chips
        with pytest.raises(ptocpu.DTypeError, match="input_tensor dtype DT_FP8E5M2 is not supported"):
            ptocpu.permute(np.zeros((2, 3), ml_dtypes.float8_e5m2), [1, 0])


def test_transpose_and_permute_tiles():
    from ptocpu import _core
    x = np.zeros((64, 128), np.float32)
    with ptocpu.platform("ascend950"):
        with ptocpu.vec_tile_shapes(8, 16, 4):
            with pytest.raises(ptocpu.TileError, match=r"transpose: tile shape \[8, 16, 4\] has rank 3 but the input has rank 2"):
                ptocpu.transpose(x, 0, 1)
            with pytest.raises(ptocpu.TileError, match="permute: tile shape .* has rank 3 but the input has rank 2"):
                ptocpu.permute(x, [1, 0])
        with ptocpu.vec_tile_shapes(64, 128):  # 32768 bytes each: input, output and the scratch tile
            ptocpu.transpose(x, 0, 1)
            use = _core._take_ub_use()
            assert use["total"] == 3 * 32768 and [b for b, _ in use["buffers"]][-1] == "transpose scratch"
            ptocpu.permute(x, [1, 0])
            assert _core._take_ub_use()["total"] == 2 * 32768
        big = np.zeros((128, 256), np.float32)
        with ptocpu.vec_tile_shapes(128, 256):
            with pytest.raises(ptocpu.TileError, match=r"transpose: tile shape \[128, 256\] needs 393216 UB bytes "
                                                       r"\(input tile 131072 \+ output tile 131072 \+ transpose scratch 131072\)"):
                ptocpu.transpose(big, 0, 1)
            with pytest.raises(ptocpu.TileError, match=r"needs 262144 UB bytes \(input tile 131072 \+ output tile 131072\)"):
                ptocpu.permute(big, [1, 0])
        # The scratch tile rounds the other swapped axis up to 16 rows (32 for 1-byte dtypes) and
        # the last to 32 bytes: page example, dims (2, 3) of a 4-D fp32 input under [2, 3, 5, 7].
        y = np.zeros((4, 6, 10, 14), np.float32)
        with ptocpu.vec_tile_shapes(2, 3, 5, 7):
            ptocpu.transpose(y, 2, 3)
            buffers = dict(_core._take_ub_use()["buffers"])
            assert buffers["transpose scratch"] == 2 * 3 * 16 * 8 * 4
            assert buffers["input tile"] == 2 * 3 * 5 * 32 and buffers["output tile"] == 2 * 3 * 7 * 32
            ptocpu.transpose(y.astype(np.int8), 2, 3)
            assert dict(_core._take_ub_use()["buffers"])["transpose scratch"] == 2 * 3 * 32 * 32
            ptocpu.transpose(y, 1, 2)  # the last axis stays: no scratch
            assert "transpose scratch" not in dict(_core._take_ub_use()["buffers"])


# ---- concat --------------------------------------------------------------------------------------

def test_concat_every_dtype_rank_and_dim(platform):
    rng = np.random.default_rng(6)
    for dt in dtypes_of(platform, "concat"):
        for rank in range(1, 5):
            base = shape_of(rng, rank, 1, 4)
            for dim in range(-rank, rank):
                parts = []
                for k in range(3):
                    shape = list(base)
                    shape[dim] = k + 1
                    parts.append(random_bits(rng, shape, dt))
                want = np.concatenate(parts, axis=dim)
                assert_same_bits(ptocpu.concat(parts, dim), want)
                assert_same_bits(ptocpu.concat([strided(p) for p in parts], dim=dim), want)


def test_concat_many_pieces_mixed_layouts_and_large():
    rng = np.random.default_rng(7)
    pieces = [rng.standard_normal((64, int(w))).astype(np.float32) for w in rng.integers(1, 20, size=128)]
    pieces[3] = np.asfortranarray(pieces[3])          # not dense along the rows
    pieces[5] = rng.standard_normal((128, 7)).astype(np.float32)[::2]  # rows of a larger array
    assert_same_bits(ptocpu.concat(pieces, 1), np.concatenate(pieces, 1))
    assert_same_bits(ptocpu.concat(pieces[:40], -1), torch.cat([torch.from_numpy(p) for p in pieces[:40]], -1).numpy())
    big = [rng.integers(0, 100, size=(300, 1000 + i)).astype(np.int16) for i in range(3)]
    assert_same_bits(ptocpu.concat(big, 1), np.concatenate(big, 1))
    rows = [rng.standard_normal((1000 * (i + 1), 96)).astype(np.float16) for i in range(4)]
    assert_same_bits(ptocpu.concat(rows, 0), np.concatenate(rows, 0))
    for dt in (np.int8, np.float16, np.float32, np.int64):  # columns of 1 to 8 bytes and wider runs
        columns = [rng.integers(-100, 100, size=(5000, w)).astype(dt) for w in (1, 1, 2, 1, 3)]
        columns[2] = columns[2][::-1]  # rows read backwards
        assert_same_bits(ptocpu.concat(columns, 1), np.concatenate(columns, 1))
    one = rng.standard_normal((2, 3)).astype(np.float32)
    assert_same_bits(ptocpu.concat([one]), one)  # one tensor is accepted
    assert ptocpu.concat([np.zeros((2, 0)), np.zeros((2, 3))], 1).shape == (2, 3)  # empty on the host


def test_concat_valid_shapes():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(100, 106, dtype=np.float32).reshape(3, 2)
    pa, pb = partly_valid(a, (2, 4)), partly_valid(b, (2, 2))
    out = ptocpu.concat([pa, pb], 1)
    assert out.shape == (3, 6) and out.valid_shape == (2, 6)
    assert_same_bits(out, np.concatenate([zero_past(a, (2, 4)), zero_past(b, (2, 2))], 1))
    with pytest.raises(ptocpu.ArgumentError, match=r"tensors\[1\] has valid shape \[2, 2\] "
                                                   r"inside shape \[3, 2\]; along dim 0 the whole extent must be valid"):
        ptocpu.concat([a[:, :2], pb], 0)
    with pytest.raises(ptocpu.ArgumentError, match=r"tensors\[1\] valid shape \[3, 2\] differs from tensors\[0\] valid shape "
                                                   r"\[2, 4\] at axis 0; the valid shapes must agree off dim 1"):
        ptocpu.concat([pa, b], 1)


def test_concat_errors():
    a = np.zeros((2, 3), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match="tensors is empty"):
        ptocpu.concat([], 0)
    with pytest.raises(ptocpu.DTypeError, match=r"tensors\[1\] dtype DT_FP16 must match tensors\[0\] dtype DT_FP32"):
        ptocpu.concat([a, a.astype(np.float16)])
    with pytest.raises(ptocpu.ArgumentError, match=r"tensors\[1\] rank 3 \(shape \[1, 2, 3\]\) must equal tensors\[0\] rank 2"):
        ptocpu.concat([a, a[None]])
    with pytest.raises(ptocpu.ArgumentError, match=r"tensors\[1\] shape \[2, 4\] differs from tensors\[0\] shape \[2, 3\] at "
                                                   r"axis 1 \(4 != 3\); only dim 0 may differ"):
        ptocpu.concat([a, np.zeros((2, 4), np.float32)], 0)
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"dim 2 is out of range \[-2, 2\)"):
        ptocpu.concat([a, a], 2)
    with pytest.raises(ptocpu.DTypeError, match=r"tensors must be a sequence of tensors"):
        ptocpu.concat(ptocpu.asarray(a), 0)
    assert ptocpu.concat([a] * 129, 0).shape == (258, 3)  # the host joins any number
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match="129 tensors given; platform ascend950 joins at most 128"):
            ptocpu.concat([a] * 129, 0)
        assert ptocpu.concat([a] * 128, 0).shape == (256, 3)
        with pytest.raises(ptocpu.DTypeError, match=r"tensors\[0\] dtype DT_BOOL is not supported on platform ascend950"):
            ptocpu.concat([a.astype(bool)] * 2)
        with pytest.raises(ptocpu.ArgumentError, match=r"tensors\[1\] shape \[2, 0\] is empty"):
            ptocpu.concat([a, np.zeros((2, 0), np.float32)], 1)
        with ptocpu.vec_tile_shapes(2, 3, 1):
            with pytest.raises(ptocpu.TileError, match="tile shape .* has rank 3 but the output has rank 2"):
                ptocpu.concat([a, a])
        with ptocpu.vec_tile_shapes(512, 256):
            with pytest.raises(ptocpu.TileError, match=r"needs 524288 UB bytes \(output tile 524288\)"):
                ptocpu.concat([np.zeros((512, 256), np.float32)] * 2, 0)


# ---- expand_clone / clone ------------------------------------------------------------------------

def test_expand_clone_every_dtype_and_rank(platform):
    rng = np.random.default_rng(8)
    for dt in dtypes_of(platform, "expand_clone"):
        for rank in ranks_of(platform, "expand_clone"):
            target = shape_of(rng, rank, 2, 5)
            ones = rng.integers(0, 2, size=rank).astype(bool)
            shape = tuple(1 if o else t for o, t in zip(ones, target))
            x = random_bits(rng, shape, dt)
            want = np.broadcast_to(x, target).copy()
            assert_same_bits(ptocpu.expand_clone(x, list(target)), want)
            assert_same_bits(ptocpu.asarray(strided(x)).expand_clone(list(target)), want)


def test_expand_clone_of_many_short_rows_across_thread_ranges():
    # rows are filled many at a time; thread ranges (and the streamed stage of a large output) start
    # and end inside rows of 7, 64 and 1000 elements of each width
    rng = np.random.default_rng(81)
    for rows, width, dt in ((300007, 7, np.int8), (262144, 64, np.int8), (20011, 1000, np.float16),
                            (70001, 3, np.float32), (9973, 5, np.int64)):
        x = random_bits(rng, (rows, 1), np.dtype(dt))
        assert_same_bits(ptocpu.expand_clone(x, [rows, width]), np.broadcast_to(x, (rows, width)).copy())


def test_expand_clone_examples_valid_shapes_and_errors():
    a = np.arange(1, 9, dtype=np.int32).reshape(1, 8)
    want = np.repeat(a, 4, 0)
    assert_same_bits(ptocpu.expand_clone(a, [4, 8]), want)
    out = ptocpu.expand_clone(a, [4, 8], valid_shape=[4, 8])
    assert_same_bits(out, want) and not out.partially_valid
    tail = ptocpu.expand_clone(np.array([[1], [2]], np.float32), [2, 2], valid_shape=[2, 1])
    assert tail.valid_shape == (2, 1) and tail.tolist() == [[1.0, 1.0], [2.0, 2.0]]
    p = partly_valid(np.array([[1], [2], [3]], np.float32), (2, 1))
    out = ptocpu.expand_clone(p, [3, 4])
    assert out.tolist() == [[1.0] * 4, [2.0] * 4, [0.0] * 4] and out.valid_shape == (3, 4)
    assert ptocpu.expand_clone(np.float32(2), []).tolist() == 2.0
    x = np.zeros((3, 1), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match=r"shape \[3\] has 1 entries but input has rank 2; expand_clone keeps the rank"):
        ptocpu.expand_clone(x, [3])
    with pytest.raises(ptocpu.ArgumentError, match=r"shape \[4, 5\] does not match input shape \[3, 1\] at axis 0 \(4 != 3\); "
                                                   "only size-1 axes expand"):
        ptocpu.expand_clone(x, [4, 5])
    with pytest.raises(ptocpu.ArgumentError, match=r"shape \[3, -1\] has the negative dim -1 at index 1"):
        ptocpu.expand_clone(x, [3, -1])
    with pytest.raises(ptocpu.ArgumentError, match=r"valid_shape \[3, 6\] has 6 at dim 1, outside \[0, 5\]"):
        ptocpu.expand_clone(x, [3, 5], valid_shape=[3, 6])
    with ptocpu.platform("atlas_a3"):
        with pytest.raises(ptocpu.ArgumentError, match=r"input rank 5 is out of range \[1, 4\]"):
            ptocpu.expand_clone(np.zeros((1,) * 5, np.float32), [2] * 5)
        with pytest.raises(ptocpu.DTypeError, match="DT_INT64 is not supported on platform atlas_a3"):
            ptocpu.expand_clone(np.zeros((1, 2), np.int64), [2, 2])
        with ptocpu.vec_tile_shapes(4):
            with pytest.raises(ptocpu.TileError, match="tile shape \\[4\\] has rank 1 but the output has rank 2"):
                ptocpu.expand_clone(x, [3, 5])
        with ptocpu.vec_tile_shapes(256, 256):  # input tile 256 * 32 + output tile 256 * 1024
            with pytest.raises(ptocpu.TileError, match=r"needs 270336 UB bytes \(input tile 8192 \+ output tile 262144\)"):
                ptocpu.expand_clone(np.zeros((256, 1), np.float32), [256, 256])


def test_clone_copies_every_dtype(platform):
    rng = np.random.default_rng(9)
    for dt in dtypes_of(platform, "clone"):
        x = random_bits(rng, (3, 5), dt)
        out = ptocpu.clone(strided(x))
        assert_same_bits(out, x)
        assert not np.shares_memory(out.numpy(), x)


def test_clone_page_example_keeps_the_valid_shape_and_takes_empty_inputs():
    a = np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    assert ptocpu.asarray(a).clone().tolist() == [[1.0, 2.0], [3.0, 4.0]]  # the page's example
    p = partly_valid(np.arange(6, dtype=np.float32).reshape(2, 3), (1, 2))
    out = ptocpu.clone(p)
    assert out.valid_shape == (1, 2) and out.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    assert ptocpu.clone(np.zeros((0, 3), np.int8)).shape == (0, 3)


# ---- pad / fillpad -------------------------------------------------------------------------------

def _value_for(dt: np.dtype):
    return 7 if dt.kind in "iub" and dt.kind != "b" else (True if dt.kind == "b" else -2.5)


def test_pad_every_dtype_and_rank(platform):
    rng = np.random.default_rng(10)
    for dt in dtypes_of(platform, "pad"):
        value = _value_for(dt)
        for rank in ranks_of(platform, "pad"):
            x = random_bits(rng, shape_of(rng, rank), dt)
            for right, bottom in [(0, 0), (3, 0), (0, 2), (1, 4)]:
                if rank == 1:
                    padding, widths = (0, right), [(0, right)]
                else:
                    padding = (0, right, 0, bottom)
                    widths = [(0, 0)] * (rank - 2) + [(0, bottom), (0, right)]
                want = np.pad(x, widths, constant_values=np.array(value).astype(dt))
                assert_same_bits(ptocpu.pad(x, padding, "constant", value), want)
                assert_same_bits(ptocpu.asarray(strided(x)).pad(list(padding), value=value), want)


def test_pad_page_example_values_and_valid_shapes():
    t4d = np.array([0.0, 1.0, 2.0, 3.0], np.float32).reshape(1, 1, 2, 2)
    out = ptocpu.pad(t4d, (0, 1, 0, 1), mode="constant", value=0.0)
    assert out.tolist() == [[[[0.0, 1.0, 0.0], [2.0, 3.0, 0.0], [0.0, 0.0, 0.0]]]]
    x = np.ones((2, 2), np.float32)
    assert np.isneginf(ptocpu.pad(x, [0, 1, 0, 0], value=float("-inf")).numpy()[:, 2]).all()
    assert ptocpu.pad(x.astype(np.float16), [0, 1, 0, 0], value=1e6).numpy()[0, 2] == np.inf  # rounds to fp16
    assert ptocpu.pad(np.zeros(2, np.int32), [0, 2], value=-2147483648).tolist() == [0, 0, -2147483648, -2147483648]
    # A partly valid x: its padding stays (zeros), the pad starts at its declared shape, and the
    # valid shape grows by the padding.
    p = partly_valid(np.arange(6, dtype=np.float32).reshape(2, 3), (1, 2))
    out = ptocpu.pad(p, (0, 2, 0, 1), value=9.0)
    assert out.shape == (3, 5) and out.valid_shape == (2, 4)
    assert out.tolist() == [[0.0, 1.0, 0.0, 9.0, 9.0], [0.0, 0.0, 0.0, 9.0, 9.0], [9.0] * 5]


@pytest.mark.parametrize("padding, needle", [
    ([0, 1], r"padding \[0, 1\] has 2 values; a rank-2 x takes 4 \(pad_left, pad_right, pad_top, pad_bottom\)"),
    ([1, 1, 0, 0], r"padding \[1, 1, 0, 0\] pads on the left or top; only right and bottom padding is supported"),
    ([0, 1, 2, 0], "pads on the left or top"),
    ([0, -1, 0, 0], r"padding \[0, -1, 0, 0\] has a negative value; padding must be >= 0 \(no cropping\)"),
    ([0, 0, 0, -3], "has a negative value"),
])
def test_pad_padding_errors(padding, needle):
    with pytest.raises(ptocpu.ArgumentError, match=needle):
        ptocpu.pad(np.zeros((2, 2), np.float32), padding)


def test_pad_and_fillpad_other_errors():
    x = np.zeros((2, 2), np.int32)
    with pytest.raises(ptocpu.ArgumentError, match=r"padding \[0\] has 1 values; a rank-1 x takes 2 \(pad_left, pad_right\)"):
        ptocpu.pad(np.zeros(3, np.float32), [0])
    for op, args in (("pad", ([0, 1, 0, 0],)), ("fillpad", ())):
        fn = getattr(ptocpu, op)
        with pytest.raises(ptocpu.ArgumentError, match=op + ": mode 'reflect' is not supported; allowed: 'constant'"):
            fn(x, *args, "reflect")
        with pytest.raises(ptocpu.ArgumentError, match=op + r": value -inf is a float but x dtype DT_INT32 is not floating"):
            fn(x, *args, value=float("-inf"))
        with pytest.raises(ptocpu.ArgumentError, match=op + r": value 1.5 is a float but x dtype DT_INT32"):
            fn(x, *args, value=1.5)
        with pytest.raises(ptocpu.ArgumentError, match=op + r": constant value 300 is out of range \[-128, 127\] of DT_INT8"):
            fn(x.astype(np.int8), *args, value=300)
        with pytest.raises(ptocpu.ArgumentError, match=op + r": mode 3 is not supported; allowed: 'constant'"):
            fn(x, *args, 3)
        with ptocpu.platform("atlas_a2"):
            with pytest.raises(ptocpu.DTypeError, match=op + ": x dtype DT_INT64 is not supported on platform atlas_a2"):
                fn(x.astype(np.int64), *args)
            with ptocpu.vec_tile_shapes(2, 2, 2):
                with pytest.raises(ptocpu.TileError, match=op + r": tile shape \[2, 2, 2\] has rank 3 but the output has rank 2"):
                    fn(x, *args)
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match=r"pad: x rank 5 is out of range \[1, 4\]"):
            ptocpu.pad(np.zeros((1,) * 5, np.float32), [0, 1, 0, 1])
        with pytest.raises(ptocpu.ArgumentError, match=r"fillpad: x rank 3 is out of range \[1, 2\]"):
            ptocpu.fillpad(np.zeros((1,) * 3, np.float32))
        with ptocpu.vec_tile_shapes(128, 256):  # 128 * 1024 + 128 * 1024 bytes
            with pytest.raises(ptocpu.TileError, match=r"pad: tile shape \[128, 256\] needs 262144 UB bytes "
                                                       r"\(input tile 131072 \+ output tile 131072\)"):
                ptocpu.pad(np.zeros((128, 256), np.float32), [0, 8, 0, 0])
            with pytest.raises(ptocpu.TileError, match=r"fillpad: .* needs 262144 UB bytes"):
                ptocpu.fillpad(np.zeros((128, 256), np.float32))
        with ptocpu.vec_tile_shapes(8, 8):  # upstream's test_pad tile: fine
            assert ptocpu.pad(np.zeros((16, 16), np.float32), [0, 4, 0, 4]).shape == (20, 20)


def test_fillpad_every_dtype(platform):
    rng = np.random.default_rng(11)
    for dt in dtypes_of(platform, "fillpad"):
        value = _value_for(dt)
        for rank in ranks_of(platform, "fillpad", 3):
            x = random_bits(rng, shape_of(rng, rank, 2, 6), dt)
            valid = tuple(int(rng.integers(0, s + 1)) for s in x.shape)
            want = np.full(x.shape, np.array(value).astype(dt))
            box = tuple(slice(0, v) for v in valid)
            want[box] = x[box]
            out = ptocpu.fillpad(partly_valid(x, valid), "constant", value)
            assert_same_bits(out, want)
            assert not out.partially_valid
            assert_same_bits(ptocpu.asarray(strided(x)).fillpad(value=value), x)  # all valid: a copy


def test_fillpad_page_example():
    data = np.array([[1, 2, 0, 0], [3, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]], np.float32)
    a = ptocpu.view(ptocpu.asarray(data), [4, 4], [0, 0], valid_shape=[2, 2])
    out = ptocpu.fillpad(a, "constant", "-inf")  # the page passes the value as a string (upstream: float(value))
    inf = float("-inf")
    assert out.tolist() == [[1.0, 2.0, inf, inf], [3.0, 4.0, inf, inf], [inf] * 4, [inf] * 4]
    assert a.fillpad(value=5).tolist()[3] == [5.0] * 4
    assert ptocpu.pad(np.zeros(2, np.float32), [0, 1], value="1e3").tolist() == [0.0, 0.0, 1000.0]
    with pytest.raises(ptocpu.ArgumentError, match="fillpad: value 'abc' is not a number"):
        ptocpu.fillpad(a, value="abc")
    with pytest.raises(ptocpu.DTypeError, match="value must be an int or a float"):
        ptocpu.fillpad(a, value=[1.0])


# ---- tril / triu ---------------------------------------------------------------------------------

def mask_reference(x: np.ndarray, diagonal: int, upper: bool) -> np.ndarray:
    """The device's result: x times a 0 / 1 mask of x's dtype (numpy / ml_dtypes arithmetic)."""
    m, n = x.shape[-2:]
    ones = np.ones((m, n), np.float64)
    mask = (np.triu(ones, diagonal) if upper else np.tril(ones, diagonal)).astype(x.dtype)
    with np.errstate(invalid="ignore"):  # 0 * inf
        return (x * mask).astype(x.dtype)


def tri_data(rng, shape, dt: np.dtype) -> np.ndarray:
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), size=shape, endpoint=True).astype(dt)
    x = (rng.standard_normal(size=shape) * 8).astype(dt)
    flat = x.reshape(-1)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, -3.0]).astype(dt)
    flat[rng.integers(0, flat.size, size=min(flat.size, 5))] = specials[:min(flat.size, 5)]
    return x


@pytest.mark.parametrize("upper", [False, True])
def test_tril_triu_every_dtype_rank_and_diagonal(platform, upper):
    op = "triu" if upper else "tril"
    rng = np.random.default_rng(12 + upper)
    for dt in dtypes_of(platform, op):
        for rank in ranks_of(platform, op):
            x = tri_data(rng, shape_of(rng, rank, 2, 6), dt)
            for diagonal in (0, 1, -1, 3, -4, 100, -100):
                want = mask_reference(x, diagonal, upper)
                assert_same_bits(getattr(ptocpu, op)(x, diagonal), want)
                assert_same_bits(getattr(ptocpu.asarray(strided(x)), op)(diagonal=diagonal), want)
                t = ptocpu.asarray(x.copy())
                assert getattr(t, op + "_")(diagonal) is t
                assert_same_bits(t, want)


def test_tril_triu_mask_numerics():
    x = np.array([[1.0, np.nan, np.inf], [-np.inf, 2.0, -5.0], [-0.0, np.nan, 3.0]], np.float32)
    lower = ptocpu.tril(x).numpy()
    assert np.isnan(lower[0, 1]) and np.isnan(lower[0, 2])  # 0 * NaN, 0 * inf
    assert lower[1, 2] == 0 and np.signbit(lower[1, 2])     # 0 * -5 = -0.0
    assert np.isneginf(lower[1, 0]) and np.isnan(lower[2, 1])  # kept as they are
    upper = ptocpu.triu(x).numpy()
    assert np.isnan(upper[1, 0]) and np.signbit(upper[2, 0]) and upper[2, 0] == 0
    assert np.array_equal(torch.tril(torch.from_numpy(np.nan_to_num(x))).numpy(),
                          np.nan_to_num(ptocpu.tril(np.nan_to_num(x)).numpy()))  # finite: torch's values
    ints = np.array([[-3, -4], [5, -6]], np.int8)  # the device computes int8 in fp16: still 0
    assert ptocpu.tril(ints).tolist() == [[-3, 0], [5, -6]]
    b = ptocpu.triu(np.ones((3, 3), bool), 1)
    assert b.tolist() == [[False, True, True], [False, False, True], [False, False, False]]


def test_tril_page_example_large_batched_and_valid_shapes():
    x = np.arange(1, 10, dtype=np.int32).reshape(3, 3)
    assert ptocpu.tril(x, 0).tolist() == [[1, 0, 0], [4, 5, 0], [7, 8, 9]]
    assert ptocpu.triu(x, 0).tolist() == [[1, 2, 3], [0, 5, 6], [0, 0, 9]]
    rng = np.random.default_rng(14)
    big = rng.standard_normal((3, 700, 900)).astype(np.float32)
    assert_same_bits(ptocpu.tril(big, 5), mask_reference(big, 5, False))
    assert_same_bits(ptocpu.triu(big[:, ::-1, 1::2], -7), mask_reference(big[:, ::-1, 1::2], -7, True))
    half = rng.standard_normal((1030, 517)).astype(ml_dtypes.bfloat16)
    assert_same_bits(ptocpu.triu(half, 2), mask_reference(half, 2, True))
    # partly valid: the mask over the global rows and columns, the padding zero, the valid shape kept
    a = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    out = ptocpu.tril(partly_valid(a, (2, 3)), 1)
    assert out.valid_shape == (2, 3) and out.tolist() == [[1.0, 2.0, 0.0, 0.0], [5.0, 6.0, 7.0, 0.0], [0.0] * 4]
    p = partly_valid(a, (2, 3))
    p.triu_()
    assert p.valid_shape == (2, 3) and p.tolist() == [[1.0, 2.0, 3.0, 0.0], [0.0, 6.0, 7.0, 0.0], [0.0] * 4]
    strided_target = np.arange(16, dtype=np.float64).reshape(4, 4)
    ptocpu.asarray(strided_target[:, ::2]).tril_()  # in place through a view
    assert strided_target.tolist()[0] == [0.0, 1.0, 0.0, 3.0]


def test_tril_triu_errors():
    with pytest.raises(ptocpu.ArgumentError, match=r"tril: input rank 1 is out of range \[2, 8\]"):
        ptocpu.tril(np.zeros(3, np.float32))
    with pytest.raises(ptocpu.DTypeError, match="triu: input dtype DT_FP8E8M0 is not supported on platform cpu"):
        ptocpu.triu(np.ones((2, 2), ml_dtypes.float8_e8m0fnu))
    with pytest.raises(ptocpu.ArgumentError, match=r"tril_: input \(shape \[2, 2\]\) is read-only memory; .* \(use tril\)"):
        ro = np.zeros((2, 2), np.float32)
        ro.flags.writeable = False
        ptocpu.asarray(ro).tril_()
    with pytest.raises(ptocpu.ArgumentError, match=r"triu_: .* has elements that share memory; .*\(use triu"):
        ptocpu.asarray(np.lib.stride_tricks.as_strided(np.zeros(3, np.float32), (3, 3), (0, 4))).triu_()
    with pytest.raises(ptocpu.DTypeError, match="diagonal"):
        ptocpu.tril(np.zeros((2, 2)), 1.5)
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match="tril: input dtype DT_UINT16 is not supported on platform atlas_a2"):
            ptocpu.tril(np.zeros((2, 2), np.uint16))
        with pytest.raises(ptocpu.ArgumentError, match=r"triu: input rank 6 is out of range \[2, 5\]"):
            ptocpu.triu(np.zeros((1,) * 6, np.float32))
        with ptocpu.vec_tile_shapes(4, 16, 16):
            with pytest.raises(ptocpu.TileError, match=r"tril: tile shape \[4, 16, 16\] has rank 3 but the output has rank 2"):
                ptocpu.tril(np.zeros((4, 4), np.float32))
        with ptocpu.vec_tile_shapes(128, 128):  # int8: 4096 + 4096 + 2 * 32768 bytes; fp32 4 * 16384 ... fits
            ptocpu.tril(np.zeros((128, 128), np.int8))
        with ptocpu.vec_tile_shapes(256, 256):  # int8 input 65536 + output 65536 + fp16 tiles 262144
            with pytest.raises(ptocpu.TileError, match=r"needs 393216 UB bytes \(input tile 65536 \+ output tile 65536 \+ "
                                                       r"fp16 tiles 262144\)"):
                ptocpu.tril(np.zeros((256, 256), np.int8))
    with ptocpu.platform("ascend950"):
        assert ptocpu.triu(np.ones((2, 2), np.uint32)).tolist() == [[1, 1], [0, 1]]


# ---- pack / unpack -------------------------------------------------------------------------------

def test_pack_every_dtype_and_unpack_back(platform):
    rng = np.random.default_rng(15)
    targets = [np_dtype(n) for n in op_table(platform, "pack")["dtypes"].split(", ")]
    for dt in dtypes_of(platform, "pack"):
        for rank in ranks_of(platform, "pack", 4):
            x = random_bits(rng, shape_of(rng, rank), dt)
            packed = ptocpu.pack(strided(x))
            assert_same_bits(packed, np.ascontiguousarray(x).reshape(-1).view(np.uint8))
            if dt in targets and platform != "cpu" or platform == "cpu":
                assert_same_bits(ptocpu.unpack(packed, ptocpu.dtype(dt)), np.ascontiguousarray(x).reshape(-1))


def test_pack_unpack_page_examples_and_valid_shapes():
    x = np.array([[0x03040506, 0x01050608]], np.int32)
    assert ptocpu.pack(x).tolist() == [6, 5, 4, 3, 8, 6, 5, 1]
    y = ptocpu.unpack(np.array([6, 5, 4, 3, 8, 6, 5, 1], np.uint8), ptocpu.DT_INT32)
    assert y.tolist() == [0x03040506, 0x01050608] and y.dtype == ptocpu.DT_INT32
    p = partly_valid(np.arange(1, 7, dtype=np.int16).reshape(2, 3), (1, 2))
    assert ptocpu.pack(p).tolist() == [1, 0, 2, 0] + [0] * 8  # the padding packs as zeros
    u = partly_valid(np.arange(1, 9, dtype=np.uint8), (4,))
    out = ptocpu.unpack(u, ptocpu.DT_UINT16)
    assert out.shape == (4,) and out.valid_shape == (2,) and out.tolist() == [0x0201, 0x0403, 0, 0]
    assert ptocpu.pack(np.float32(1.0)).tolist() == [0, 0, 128, 63]  # a 0-d tensor on the host


def test_pack_unpack_errors_and_tiles():
    with pytest.raises(ptocpu.DTypeError, match="unpack: input dtype DT_INT8 is not supported on platform cpu"):
        ptocpu.unpack(np.zeros(4, np.int8), ptocpu.DT_INT16)
    with pytest.raises(ptocpu.ArgumentError, match=r"unpack: input rank 2 is out of range \[1, 1\]"):
        ptocpu.unpack(np.zeros((2, 2), np.uint8), ptocpu.DT_INT16)
    with pytest.raises(ptocpu.ArgumentError, match=r"unpack: input has 6 bytes, not a multiple of 4 \(the width of DT_FP32\)"):
        ptocpu.unpack(np.zeros(6, np.uint8), ptocpu.DT_FP32)
    with pytest.raises(ptocpu.ArgumentError, match=r"unpack: input valid shape \[6\] is not a multiple of 4 bytes"):
        ptocpu.unpack(partly_valid(np.zeros(8, np.uint8), (6,)), ptocpu.DT_FP32)
    assert ptocpu.unpack(np.zeros(8, np.uint8), ptocpu.DT_FP64).shape == (1,)  # the host: any dtype
    with ptocpu.platform("atlas_a3"):
        with pytest.raises(ptocpu.DTypeError, match="unpack: output dtype DT_FP64 is not supported on platform atlas_a3; allowed: DT_INT8"):
            ptocpu.unpack(np.zeros(8, np.uint8), ptocpu.DT_FP64)
        with pytest.raises(ptocpu.DTypeError, match="pack: input dtype DT_BOOL is not supported on platform atlas_a3"):
            ptocpu.pack(np.zeros(4, bool))
        with pytest.raises(ptocpu.ArgumentError, match=r"pack: input rank 5 is out of range \[1, 4\]"):
            ptocpu.pack(np.zeros((1,) * 5, np.int8))
        with ptocpu.vec_tile_shapes(6):
            with pytest.raises(ptocpu.TileError, match=r"unpack: tile shape \[6\] is not a multiple of 4 bytes"):
                ptocpu.unpack(np.zeros(16, np.uint8), ptocpu.DT_INT32)
        with ptocpu.vec_tile_shapes(8, 8):
            with pytest.raises(ptocpu.TileError, match=r"unpack: tile shape \[8, 8\] has rank 2 but the input has rank 1"):
                ptocpu.unpack(np.zeros(16, np.uint8), ptocpu.DT_INT32)
            with pytest.raises(ptocpu.TileError, match=r"pack: tile shape \[8, 8\] has rank 2 but the input has rank 1"):
                ptocpu.pack(np.zeros(16, np.uint8))
        with ptocpu.vec_tile_shapes(32, 32):  # upstream's pack test: int32 [67, 69] under [32, 32]
            assert ptocpu.pack(np.zeros((67, 69), np.int32)).shape == (67 * 69 * 4,)
        with ptocpu.vec_tile_shapes(256, 128):  # 2 * 256 * 512 bytes
            with pytest.raises(ptocpu.TileError, match=r"pack: tile shape \[256, 128\] needs 262144 UB bytes "
                                                       r"\(input tile 131072 \+ output tile 131072\)"):
                ptocpu.pack(np.zeros((256, 128), np.int32))


# ---- shared behaviour ----------------------------------------------------------------------------

def _calls(rng):
    x = rng.standard_normal((300, 1200)).astype(np.float32)
    y = rng.standard_normal((8, 64, 40, 50)).astype(np.float16)
    pieces = [rng.standard_normal((400, int(w))).astype(np.float32) for w in rng.integers(1, 64, size=100)]
    return [
        lambda: ptocpu.transpose(x, 0, 1), lambda: ptocpu.transpose(y, 2, 3), lambda: ptocpu.permute(y, [0, 2, 1, 3]),
        lambda: ptocpu.concat(pieces, 1), lambda: ptocpu.concat([x, x, x], 0), lambda: ptocpu.pad(x, [0, 7, 0, 3], value=1.0),
        lambda: ptocpu.fillpad(partly_valid(x, (200, 1000)), value=2.0), lambda: ptocpu.tril(x, 3),
        lambda: ptocpu.triu(y, -2), lambda: ptocpu.expand_clone(x[:1], [300, 1200]),
        lambda: ptocpu.expand_clone(x[:, :1], [300, 1200]), lambda: ptocpu.clone(x.T),
        lambda: ptocpu.pack(y), lambda: ptocpu.reshape(x.T, [1200, 300]),
    ]


def test_results_do_not_depend_on_the_thread_count_or_streaming():
    from ptocpu import _core
    rng = np.random.default_rng(16)
    calls = _calls(rng)
    ptocpu.set_num_threads(1)
    one = [c().numpy().copy() for c in calls]
    ptocpu.set_num_threads(2)
    two = [c().numpy().copy() for c in calls]
    _core._set_kernel_tuning(1 << 16, None)  # everything past 64 KiB streams
    try:
        streamed = [c().numpy().copy() for c in calls]
    finally:
        _core._set_kernel_tuning(-1, None)
    for a, b, c in zip(one, two, streamed):
        assert_same_bits(b, a)
        assert_same_bits(c, a)


def test_empty_inputs_on_the_host_and_refused_on_the_chips():
    e = np.zeros((0, 4), np.float32)
    assert ptocpu.transpose(e, 0, 1).shape == (4, 0)
    assert ptocpu.permute(e, [1, 0]).shape == (4, 0)
    assert ptocpu.pad(e, [0, 1, 0, 2]).tolist() == [[0.0] * 5] * 2
    assert ptocpu.fillpad(e).shape == (0, 4)
    assert ptocpu.tril(e).shape == (0, 4) and ptocpu.asarray(e).triu_().shape == (0, 4)
    assert ptocpu.expand_clone(np.zeros((0, 1), np.float32), [0, 3]).shape == (0, 3)
    assert ptocpu.pack(e).shape == (0,) and ptocpu.unpack(np.zeros(0, np.uint8), ptocpu.DT_INT32).shape == (0,)
    for op, call in [("transpose", lambda: ptocpu.transpose(e, 0, 1)), ("concat", lambda: ptocpu.concat([e, e])),
                     ("clone", lambda: ptocpu.clone(e)), ("pad", lambda: ptocpu.pad(e, [0, 1, 0, 0])),
                     ("tril", lambda: ptocpu.tril(e)), ("pack", lambda: ptocpu.pack(e))]:
        with ptocpu.platform("ascend950"):
            with pytest.raises(ptocpu.ArgumentError, match=op + r": .*shape \[0, 4\] is empty; platform ascend950 does not"):
                call()


def test_method_forms_follow_upstream_tensor():
    t = ptocpu.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    for name in ("reshape", "unsqueeze", "transpose", "permute", "expand_clone", "clone", "pad", "fillpad",
                 "tril", "triu", "tril_", "triu_"):
        assert callable(getattr(ptocpu.Tensor, name)), name
    for name in ("concat", "pack", "unpack"):  # functions only
        assert callable(getattr(ptocpu, name)) and not hasattr(ptocpu.Tensor, name), name
    assert not hasattr(ptocpu, "tril_") and not hasattr(ptocpu, "triu_")  # methods only
    assert t.reshape([3, 2]).shape == (3, 2) and t.transpose(0, 1).shape == (3, 2) and t.permute([1, 0]).shape == (3, 2)
    assert t.unsqueeze(1).shape == (2, 1, 3)


def test_an_upstream_style_kernel_records_and_replays():
    # view -> transpose -> pad -> reshape -> assemble, recorded once and replayed on new data.
    x = ptocpu.tensor([4, 6], ptocpu.DT_FP32, "x")
    out = ptocpu.tensor([8, 6], ptocpu.DT_FP32, "out")
    with ptocpu.function("LAYOUT", x, out):
        for i in ptocpu.loop(2, name="LOOP", idx_name="i"):
            ptocpu.set_vec_tile_shapes(8, 8)
            tile = ptocpu.view(x, [2, 6], [2 * i, 0])
            t = ptocpu.transpose(tile, 0, 1)          # [6, 2]
            p = ptocpu.pad(t, [0, 2, 0, 0], value=1.0)  # [6, 4]
            r = ptocpu.reshape(p, [4, 6])
            ptocpu.assemble(r, [4 * i, 0], out)
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    result = np.zeros((8, 6), np.float32)
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(data), ptocpu.asarray(result))
    want = np.concatenate([np.pad(data[2 * i:2 * i + 2].T, [(0, 0), (0, 2)], constant_values=1.0).reshape(4, 6)
                           for i in range(2)])
    assert_same_bits(result, want)


def test_upstream_unsqueeze_move_program():
    # hicann/pypto test_unsqueeze.py: res.move(unsqueeze(x, 0)) inside a function.
    x = ptocpu.tensor([2, 2], ptocpu.DT_FP32)
    res = ptocpu.tensor([1, 2, 2], ptocpu.DT_FP32)
    with ptocpu.function("UNSQUEEZE_CONTENT", x, res):
        for _ in ptocpu.loop(1, name="LOOP_L0", idx_name="a_idx"):
            ptocpu.set_vec_tile_shapes(2, 2, 8)
            res.move(ptocpu.unsqueeze(x, 0))
    data = np.random.default_rng(17).random((2, 2)).astype(np.float32)
    got = np.zeros((1, 2, 2), np.float32)
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(data), ptocpu.asarray(got))
    assert_same_bits(got, data[None])


def test_bytes_moved_counts_views_as_free():
    from ptocpu.engine import trace
    x = np.zeros((64, 64), np.float32)
    with trace.recording() as log:
        ptocpu.reshape(x, [4096])
        ptocpu.reshape(x.T, [4096])
        ptocpu.transpose(x, 0, 1)
        ptocpu.transpose(x, 1, 1)
        ptocpu.concat([x, x])
    assert [r.bytes_moved for r in log.ops] == [0, 2 * x.nbytes, 2 * x.nbytes, 0, 4 * x.nbytes]


def _run_program(kernel, params, inputs, out_shape):
    """Records kernel(params, *tensors, out) in a function, as upstream's TestBuilder does, and
    runs it once on the given data; the output array."""
    x = [ptocpu.tensor(list(a.shape), ptocpu.DT_FP32, f"IN_{i}") for i, a in enumerate(inputs)]
    out = ptocpu.tensor(list(out_shape), ptocpu.DT_FP32, "OUT")
    with ptocpu.function("MAIN", *x, out):
        kernel(params, *x, out)
    result = np.zeros(out_shape, np.float32)
    ptocpu.runtime._device_run_once_data_from_host(*[ptocpu.asarray(a) for a in inputs], ptocpu.asarray(result))
    return result


@pytest.mark.parametrize("params", [((32, 32), (16, 16), (16, 16), 0.0), ((32, 32), (16, 16), (20, 24), 0.0),
                                    ((16, 16), (8, 8), (8, 8), -1.5)])
def test_upstream_fillpad_kernels(params):
    # hicann/pypto test_fillpad.py's kernel: a view with a valid shape, fillpad, assemble.
    def op_fillpad(params, a, b):
        view_shape, tile_shape, valid_shape, pad_val = params
        for _ in ptocpu.loop(1, name="LOOP_FILLPAD_L0", idx_name="b_idx"):
            tile_a = ptocpu.view(a, view_shape, [0, 0], valid_shape=list(valid_shape))
            ptocpu.set_vec_tile_shapes(*tile_shape)
            ptocpu.assemble(tile_a.fillpad(mode="constant", value=pad_val), [0, 0], b)
    a = (np.random.default_rng(18).random(params[0]) * 10).astype(np.float32)
    want = a.copy()
    want[params[2][0]:, :] = params[3]
    want[:, params[2][1]:] = params[3]
    with ptocpu.platform("ascend950"):
        assert_same_bits(_run_program(op_fillpad, params, [a], params[0]), want)


def test_upstream_pad_kernel():
    # hicann/pypto test_pad.py's kernel: symbolic valid shapes, Tensor.pad, assemble.
    def op_pad(params, a, b):
        view_shape, tile_shape, padding, pad_val = params
        n_in, m_in = a.shape
        for b_idx in ptocpu.loop(int(np.ceil(n_in / view_shape[0])), name="LOOP_PAD_L0", idx_name="b_idx"):
            for s_idx in ptocpu.loop(int(np.ceil(m_in / view_shape[1])), name="LOOP_PAD_L1", idx_name="s_idx"):
                offset_x, offset_y = b_idx * view_shape[0], s_idx * view_shape[1]
                valid_x = ptocpu.min(ptocpu.symbolic_scalar(n_in) - offset_x, ptocpu.symbolic_scalar(view_shape[0]))
                valid_y = ptocpu.min(ptocpu.symbolic_scalar(m_in) - offset_y, ptocpu.symbolic_scalar(view_shape[1]))
                tile_a = ptocpu.view(a, view_shape, [offset_x, offset_y], valid_shape=[valid_x, valid_y])
                ptocpu.set_vec_tile_shapes(tile_shape[0], tile_shape[1])
                ptocpu.assemble(tile_a.pad(padding, mode="constant", value=pad_val), [offset_x, offset_y], b)
    params = ((16, 16), (8, 8), (0, 4, 0, 4), 0)
    a = (np.random.default_rng(19).random((16, 16)) * 10).astype(np.float32)
    with ptocpu.platform("ascend950"):
        got = _run_program(op_pad, params, [a], (20, 20))
    assert_same_bits(got, torch.nn.functional.pad(torch.from_numpy(a), params[2], value=0.0).numpy())
