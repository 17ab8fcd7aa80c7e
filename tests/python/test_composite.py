"""softmax, rms_norm, online_softmax, online_softmax_update and expand_exp_dif (docs/ops/softmax.md,
rms_norm.md, online_softmax.md, expand_exp_dif.md) against references written from the device's
formulas (ptocpu.tools.reference_composite: numpy step by step in fp32) and against torch in
float64; the pages' examples; every dtype of every platform row; strided inputs and valid shapes;
NaN / inf; every error; 1 and 2 threads giving the same bits."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, ranks_of
from ptocpu.tools import reference_composite as ref

BF16 = np.dtype(ml_dtypes.bfloat16)


def ulps(got, want) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype; NaN equals NaN only."""
    got = np.ascontiguousarray(got.numpy() if isinstance(got, ptocpu.Tensor) else got)
    want = np.ascontiguousarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    width = 8 * want.dtype.itemsize

    def ordered(a):
        u = a.view(f"u{want.dtype.itemsize}").astype(np.int64)
        magnitude = u & ((1 << (width - 1)) - 1)
        return np.where(u >> (width - 1), -magnitude, magnitude)

    diff = np.abs(ordered(got) - ordered(want))
    g, w = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    return np.where(g & w, 0, np.where(g | w, 1 << 40, diff))


def assert_within(got, want, max_ulps: int):
    d = ulps(got, want)
    assert d.max(initial=0) <= max_ulps, f"{int((d > max_ulps).sum())} elements beyond {max_ulps} ulp, worst {d.max()}"


def random(rng, shape, dtype, scale=3.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32).astype(dtype)


def truncated(t, decimals=4) -> np.ndarray:
    """Values cut off after `decimals` decimals, as the pages print them."""
    scale = 10.0 ** decimals
    return np.round(np.floor(t.numpy().astype(np.float64) * scale)) / scale


# ---- softmax -------------------------------------------------------------------------------------

def test_softmax_every_dtype_rank_and_dim(platform):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "softmax"):
        for rank in ranks_of(platform, "softmax"):
            shape = tuple(int(v) for v in rng.integers(1, 6, rank - 1)) + (int(rng.integers(1, 80)),)
            x = random(rng, shape, dt)
            for dim in range(-rank, rank):
                # exp is SLEEF's (within an ulp of the correctly rounded one, as the elementwise exp):
                # with the sum and the division, the result within 4 ulp (fp32) or 1 (fp16 / bf16)
                assert_within(ptocpu.softmax(x, dim), ref.softmax(x, dim), 4 if dt == np.float32 else 1)


def test_softmax_many_short_rows_go_in_groups():
    # contiguous rows go in groups, rows of up to 32 elements as the columns of 64-row blocks
    # (docs/ops/softmax.md): lengths with and without a fixed-size transpose, row counts that leave
    # a partial block, long rows, strided rows and a NaN row
    rng = np.random.default_rng(21)
    for rows, n, dt in ((1000, 16, np.float32), (130, 128, BF16), (65, 129, np.float32), (200, 1, np.float16),
                        (700, 8, np.float32), (333, 20, np.float32), (129, 32, np.float16), (64, 2, BF16)):
        x = random(rng, (rows, n), dt)
        assert_within(ptocpu.softmax(x, -1), ref.softmax(x, -1), 4 if dt == np.float32 else 1)
    base = random(rng, (300, 40), np.float32)
    base[6, 3] = np.nan
    view = base[::2, ::3]
    got = ptocpu.softmax(view, -1).numpy()
    assert np.isnan(got[3]).all() and not np.isnan(np.delete(got, 3, 0)).any()
    assert_within(np.delete(got, 3, 0), ref.softmax(np.delete(view, 3, 0), -1), 4)


def test_softmax_page_example_and_method():
    x = ptocpu.asarray(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))
    want = [[0.0900, 0.2447, 0.6652], [0.0900, 0.2447, 0.6652]]
    np.testing.assert_allclose(truncated(ptocpu.softmax(x, -1)), want, rtol=0, atol=1e-9)
    assert_same_bits(x.softmax(-1), ptocpu.softmax(x, -1).numpy())


def test_softmax_against_torch_float64():
    rng = np.random.default_rng(7)
    x = random(rng, (64, 3000), np.float32, 10.0)
    want = torch.softmax(torch.from_numpy(x).double(), -1).numpy()
    got = ptocpu.softmax(x, -1).numpy().astype(np.float64)
    rel = np.abs(got - want) / want
    # docs/ops/softmax.md: x - max is rounded to fp32 before the exp, which turns its half-ulp error
    # into a relative error of the result of |x - max| * 2^-24; the exp, sum and division add a few ulp
    distance = np.max(x, -1, keepdims=True) - x
    assert (rel <= (distance + 8) * 2.0 ** -24).all(), rel.max()


def test_softmax_strided_and_valid_shape():
    rng = np.random.default_rng(3)
    base = random(rng, (10, 40), np.float32)
    for view in (base[::3, 5:30], base.T, base[:, ::-2]):
        for dim in (0, 1):
            assert_within(ptocpu.softmax(view, dim), ref.softmax(view, dim), 2)
    t = ptocpu.view(ptocpu.asarray(base), [8, 32], [0, 0], valid_shape=[5, 20])
    out = ptocpu.softmax(t, -1)
    assert out.shape == [5, 20]
    assert_within(out, ref.softmax(base[:5, :20], -1), 2)
    # the dims after dim taken as one where they follow each other, and where they do not
    deep = random(rng, (3, 20, 6, 5), np.float32)
    for view in (deep, deep[..., ::2], deep[:, :, ::2], deep.transpose(0, 1, 3, 2)):
        for dim in (0, 1):
            assert_within(ptocpu.softmax(view, dim), ref.softmax(view, dim), 4)
    t = ptocpu.view(ptocpu.asarray(deep), [3, 16, 6, 5], [0, 2, 0, 0], valid_shape=[3, 16, 4, 5])
    assert_within(ptocpu.softmax(t, 1), ref.softmax(deep[:, 2:18, :4], 1), 4)


def test_softmax_along_any_dim_is_the_last_dim_transposed():
    # the same order of max and sum whether dim is the last axis or not: bit-identical results
    rng = np.random.default_rng(12)
    for shape, dim, dt in (((300, 700), 0, np.float32), ((3, 50, 4, 7), 1, np.float16), ((5, 6, 300), 0, BF16)):
        x = random(rng, shape, dt)
        moved = np.ascontiguousarray(np.moveaxis(x, dim, -1))
        want = np.moveaxis(ptocpu.softmax(moved, -1).numpy(), -1, dim)
        assert_same_bits(ptocpu.softmax(x, dim), np.ascontiguousarray(want))


def test_softmax_nan_inf_and_empty():
    x = np.array([[0.0, np.nan, 1.0], [0.0, np.inf, 1.0], [-np.inf, 0.0, 0.0], [-np.inf, -np.inf, -np.inf]],
                 np.float32)
    out = ptocpu.softmax(x, -1).numpy()
    assert np.isnan(out[0]).all() and np.isnan(out[1]).all() and np.isnan(out[3]).all()
    assert out[2].tolist() == [0.0, 0.5, 0.5]
    assert ptocpu.softmax(np.zeros((0, 4), np.float32), 1).shape == [0, 4]
    assert ptocpu.softmax(np.zeros((3, 0), np.float16), 1).shape == [3, 0]


def test_softmax_large_rows_and_threads():
    rng = np.random.default_rng(11)
    for shape, dim in (((300, 4096), -1), ((4096, 300), 0), ((3, 70000), 1)):
        x = random(rng, shape, np.float32, 20.0)
        ptocpu.set_num_threads(1)
        one = ptocpu.softmax(x, dim).numpy()
        ptocpu.set_num_threads(2)
        two = ptocpu.softmax(x, dim).numpy()
        assert_same_bits(two, one)
        assert_within(one, ref.softmax(x, dim), 4)


def test_softmax_errors():
    x = np.zeros((2, 8), np.float32)
    with pytest.raises(ptocpu.IndexOutOfRange, match="softmax: dim 2 is out of range"):
        ptocpu.softmax(x, 2)
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match="softmax: input dtype DT_FP64 is not supported on platform atlas_a2"):
            ptocpu.softmax(x.astype(np.float64), -1)
        with pytest.raises(ptocpu.ArgumentError, match="rank 5"):
            ptocpu.softmax(np.zeros((1,) * 5, np.float32), -1)
        with pytest.raises(ptocpu.ArgumentError, match="empty"):
            ptocpu.softmax(np.zeros((0, 8), np.float32), -1)
        with ptocpu.vec_tile_shapes(8):
            with pytest.raises(ptocpu.TileError, match="softmax: tile shape \\[8\\] has rank 1"):
                ptocpu.softmax(x, -1)
        with ptocpu.vec_tile_shapes(128, 256):
            with pytest.raises(ptocpu.TileError, match="131072 bytes of fp32; its reductions take tiles of at most 65536"):
                ptocpu.softmax(np.zeros((128, 256), np.float32), -1)
        with ptocpu.vec_tile_shapes(4096, 1):  # 16 KB of fp32, but each row of a tile takes 32 bytes of UB
            with pytest.raises(ptocpu.TileError, match="needs 393216 UB bytes"):
                ptocpu.softmax(np.zeros((4096, 1), np.float32), -1)
        with ptocpu.vec_tile_shapes(16, 256):
            assert ptocpu.softmax(np.zeros((64, 256), np.float32), -1).shape == [64, 256]
    with ptocpu.vec_tile_shapes(128, 256):  # the cpu has no UB limit
        assert ptocpu.softmax(np.zeros((128, 256), np.float32), -1).shape == [128, 256]


# ---- rms_norm ------------------------------------------------------------------------------------

def test_rms_norm_every_dtype_bit_exact(platform):
    rng = np.random.default_rng(20 + PLATFORMS.index(platform))
    dtypes = dtypes_of(platform, "rms_norm")
    for dt in dtypes:
        for rank in ranks_of(platform, "rms_norm"):
            shape = tuple(int(v) for v in rng.integers(1, 5, rank - 1)) + (int(rng.integers(1, 100)),)
            x = random(rng, shape, dt)
            assert_same_bits(ptocpu.rms_norm(x), ref.rms_norm(x))
            for gdt in dtypes:
                gamma = random(rng, shape[-1:], gdt)
                assert_same_bits(ptocpu.rms_norm(x, gamma, 1e-3), ref.rms_norm(x, gamma, 1e-3))


def test_rms_norm_page_example():
    x = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    got = ptocpu.rms_norm(x, np.ones(4, np.float32))
    # the page prints four decimals, cut off (1.46059... as 1.4605)
    np.testing.assert_allclose(truncated(got), [[0.3651, 0.7302, 1.0954, 1.4605], [0.7580, 0.9097, 1.0613, 1.2129]],
                               rtol=0, atol=1e-9)


def test_rms_norm_is_not_x_times_rsqrt():
    # the device divides x by the root; x * (1 / root) rounds twice and differs somewhere here
    rng = np.random.default_rng(5)
    x = random(rng, (200, 64), np.float32)
    got = ptocpu.rms_norm(x, epsilon=0.0).numpy()
    root = np.sqrt(ref.lane_sum((x * x) * np.float32(1 / 64))[:, None])
    assert_same_bits(got, x / root)
    assert not np.array_equal(got, x * (np.float32(1) / root))


def test_rms_norm_against_torch_and_threads():
    rng = np.random.default_rng(9)
    x = random(rng, (513, 4096), np.float32)
    gamma = random(rng, (4096,), np.float32)
    ptocpu.set_num_threads(1)
    one = ptocpu.rms_norm(x, gamma).numpy()
    ptocpu.set_num_threads(2)
    assert_same_bits(ptocpu.rms_norm(x, gamma), one)
    t = torch.from_numpy(x).double()
    want = (t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * torch.from_numpy(gamma).double()).numpy()
    assert np.abs(one - want).max() / np.abs(want).max() < 2e-6


def test_rms_norm_strided_valid_shape_nan_empty():
    rng = np.random.default_rng(4)
    base = random(rng, (9, 50), np.float32)
    for view in (base[::2, 3:40], base.T):
        assert_same_bits(ptocpu.rms_norm(view), ref.rms_norm(view))
    gamma = random(rng, (60,), np.float32)[::2][:25]
    t = ptocpu.view(ptocpu.asarray(base), [6, 32], [0, 0], valid_shape=[4, 25])
    assert_same_bits(ptocpu.rms_norm(t, gamma), ref.rms_norm(base[:4, :25], gamma))
    x = np.array([[1.0, np.nan], [np.inf, 1.0], [0.0, 0.0]], np.float32)
    out = ptocpu.rms_norm(x, epsilon=0.0).numpy()
    assert np.isnan(out[0]).all() and np.isnan(out[2]).all()  # NaN in the row; 0 / 0
    assert np.isnan(out[1, 0]) and out[1, 1] == 0.0  # inf / inf, 1 / inf
    assert ptocpu.rms_norm(x, epsilon=1).numpy()[2].tolist() == [0.0, 0.0]
    assert ptocpu.rms_norm(np.zeros((0, 3), np.float32)).shape == [0, 3]


def test_rms_norm_errors():
    x = np.ones((2, 4), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match="rms_norm: gamma shape \\[3\\] must be \\[4\\]"):
        ptocpu.rms_norm(x, np.ones(3, np.float32))
    with pytest.raises(ptocpu.ArgumentError, match="gamma shape \\[1, 4\\] must be \\[4\\]"):
        ptocpu.rms_norm(x, np.ones((1, 4), np.float32))
    with pytest.raises(ptocpu.DTypeError, match="rms_norm: gamma dtype DT_INT32"):
        ptocpu.rms_norm(x, np.ones(4, np.int32))
    with pytest.raises(ptocpu.DTypeError, match="rms_norm: input dtype DT_FP64"):
        ptocpu.rms_norm(x.astype(np.float64))
    with pytest.raises(ptocpu.DTypeError, match="epsilon True is a bool"):
        ptocpu.rms_norm(x, None, True)
    with ptocpu.vec_tile_shapes(2, 4, 1), pytest.raises(ptocpu.TileError, match="rms_norm: tile shape"):
        ptocpu.rms_norm(x)


# ---- online_softmax / online_softmax_update ------------------------------------------------------

def test_online_softmax_against_reference():
    rng = np.random.default_rng(30)
    # (40, 600): two whole blocks of 256 columns and a partial one
    for shape, scale in (((128, 128), 1 / 128 ** 0.5), ((7, 33), 2.0), ((1, 5), -0.5), ((300, 64), 0.1),
                         ((40, 600), 0.3)):
        s = random(rng, shape, np.float32, 4.0)
        e, m, total = ptocpu.experimental.online_softmax(s, scale)
        we, wm, wt = ref.online_softmax(s, scale)
        assert e.dtype == ptocpu.DT_BF16 and e.shape == list(shape)
        assert m.shape == [1, shape[1]] and total.shape == [1, shape[1]]
        assert_same_bits(m, wm)  # no exp on the way
        assert_within(e, we, 1)
        assert_within(total, wt, 4)


def test_online_softmax_rounds_ties_away_and_sums_in_row_order():
    # exp(0) = 1 in every row: the sum is exact; a value halfway between two bf16 values rounds away
    s = np.zeros((3, 2), np.float32)
    e, m, total = ptocpu.online_softmax(s, 1.0)
    assert e.numpy().astype(np.float32).tolist() == [[1.0, 1.0]] * 3 and total.tolist() == [[3.0, 3.0]]
    assert ref.bf16_ties_away(np.array([1 + 2 ** -8], np.float32)).astype(np.float32)[0] == 1 + 2 ** -7
    assert ref.bf16_ties_away(np.array([-(1 + 2 ** -8)], np.float32)).astype(np.float32)[0] == -(1 + 2 ** -7)


def test_online_softmax_upstream_shapes_and_threads():
    rng = np.random.default_rng(31)
    s = random(rng, (128, 4096), np.float32)
    with ptocpu.platform("ascend950"), ptocpu.vec_tile_shapes(128, 64):
        ptocpu.set_num_threads(1)
        one = [t.numpy() for t in ptocpu.experimental.online_softmax(s, 1.0)]
        ptocpu.set_num_threads(2)
        two = [t.numpy() for t in ptocpu.experimental.online_softmax(s, 1.0)]
    for a, b in zip(one, two):
        assert_same_bits(b, a)


def test_online_softmax_update_against_reference():
    rng = np.random.default_rng(32)
    h, q = 40, 70
    mp, mc = random(rng, (1, q), np.float32), random(rng, (1, q), np.float32)
    sp, sc = np.abs(random(rng, (1, q), np.float32)), np.abs(random(rng, (1, q), np.float32))
    op, oc = random(rng, (h, q), np.float32), random(rng, (h, q), np.float32)
    got = ptocpu.experimental.online_softmax_update(mp, sp, op, mc, sc, oc)
    want = ref.online_softmax_update(mp, sp, op, mc, sc, oc)
    assert_same_bits(got[0], want[0])
    assert_within(got[1], want[1], 4)
    # O = Op * a + Oc * b can cancel: its error is a few ulp of the terms' magnitude, not of O
    terms = ref.online_softmax_update_terms(mp, op, mc, oc)
    assert np.all(np.abs(got[2].numpy().astype(np.float64) - want[2]) <= 4 * np.spacing(terms))
    # the larger max side has factor exactly 1
    same = ptocpu.online_softmax_update(mp, sp, op, mp, sp, op)
    assert_same_bits(same[1], sp + sp)
    assert_same_bits(same[2], op + op)


def test_online_softmax_blocks_make_softmax():
    # two column blocks merged, then normalised: the softmax of the whole column
    rng = np.random.default_rng(33)
    s = random(rng, (64, 16), np.float32)
    e1, m1, s1 = ptocpu.online_softmax(s[:32], 1.0)
    e2, m2, s2 = ptocpu.online_softmax(s[32:], 1.0)
    v = np.eye(64, dtype=np.float32)  # "values": the output rows are the probabilities themselves
    o1 = v[:, :32] @ e1.numpy().astype(np.float32)
    o2 = v[:, 32:] @ e2.numpy().astype(np.float32)
    m, total, o = ptocpu.online_softmax_update(m1, s1, o1, m2, s2, o2)
    want = torch.softmax(torch.from_numpy(s).double(), 0).numpy()
    assert np.abs(o.numpy() / total.numpy() - want).max() < 4e-3  # bf16 probabilities


def test_online_errors_and_platforms():
    s = np.zeros((4, 8), np.float32)
    with ptocpu.platform("atlas_a2"), pytest.raises(ptocpu.UnsupportedError, match="online_softmax: not offered"):
        ptocpu.experimental.online_softmax(s, 1.0)
    with pytest.raises(ptocpu.DTypeError, match="scores dtype DT_FP16"):
        ptocpu.online_softmax(s.astype(np.float16), 1.0)
    with pytest.raises(ptocpu.ArgumentError, match="scores rank 3"):
        ptocpu.online_softmax(s[None], 1.0)
    with pytest.raises(ptocpu.DTypeError, match="scale True is a bool"):
        ptocpu.online_softmax(s, True)
    with ptocpu.vec_tile_shapes(2, 8), pytest.raises(ptocpu.TileError, match="splits axis 0 of scores shape \\[4, 8\\]"):
        ptocpu.online_softmax(s, 1.0)
    with ptocpu.vec_tile_shapes(4), pytest.raises(ptocpu.TileError, match="at least one dim per scores dim"):
        ptocpu.online_softmax(s, 1.0)
    stat, out = np.zeros((1, 8), np.float32), np.zeros((4, 8), np.float32)
    update = ptocpu.experimental.online_softmax_update
    with pytest.raises(ptocpu.ArgumentError, match="current_output shape \\[4, 7\\] must equal previous_output shape"):
        update(stat, stat, out, stat, stat, out[:, :7])
    with pytest.raises(ptocpu.ArgumentError, match="current_sum shape \\[1, 7\\] must be \\[1, 8\\]"):
        update(stat, stat, out, stat, stat[:, :7], out)
    with pytest.raises(ptocpu.DTypeError, match="previous_sum dtype DT_FP64"):
        update(stat, stat.astype(np.float64), out, stat, stat, out)
    with ptocpu.vec_tile_shapes(4, 12), pytest.raises(ptocpu.TileError, match="multiple of 8"):
        update(stat, stat, out, stat, stat, out)
    with ptocpu.vec_tile_shapes(3, 8), pytest.raises(ptocpu.TileError, match="splits axis 0 of previous_output"):
        update(stat, stat, out, stat, stat, out)
    with ptocpu.platform("ascend950"), pytest.raises(ptocpu.ArgumentError, match="empty"):
        ptocpu.online_softmax(np.zeros((0, 8), np.float32), 1.0)


def test_experimental_module_is_read_from_the_op_table():
    names = [row["name"] for row in ptocpu.op_table() if row["submodule"] == "experimental"]
    assert {"online_softmax", "online_softmax_update"} <= set(names)
    # beside the ops, pypto.experimental has the operation options (python/ptocpu/experimental.py)
    assert sorted(ptocpu.experimental.__all__) == sorted([*names, "get_operation_options", "set_operation_options"])
    for name in names:
        assert getattr(ptocpu.experimental, name) is getattr(ptocpu, name)


# ---- expand_exp_dif ------------------------------------------------------------------------------

def test_expand_exp_dif_page_examples():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    out = ptocpu.expand_exp_dif(x, np.array([[1], [2]], np.float32)).numpy()
    np.testing.assert_allclose(out, [[1.0, 2.718282, 7.3890557], [7.3890557, 20.085537, 54.59815]], rtol=1e-7)
    out = ptocpu.expand_exp_dif(x, np.array([[1]], np.float32)).numpy()
    np.testing.assert_allclose(out, [[1.0, 2.718282, 7.3890557], [20.085537, 54.59815, 148.41316]], rtol=1e-7)
    out = ptocpu.expand_exp_dif(x, np.array([[1, 2, 3]], np.float32)).numpy()
    np.testing.assert_allclose(out, [[1, 1, 1], [20.085537, 20.085537, 20.085537]], rtol=1e-7)


def test_expand_exp_dif_every_dtype_and_broadcast(platform):
    rng = np.random.default_rng(40 + PLATFORMS.index(platform))
    shapes = [((5, 6), (5, 6)), ((5, 6), (1, 6)), ((5, 6), (5, 1)), ((3, 5, 6), (1, 5, 6)), ((4, 2, 3, 6), (3, 1)),
              ((7,), (7,)), ((7,), (1,))]
    for dt in dtypes_of(platform, "expand_exp_dif"):
        for xs, os in shapes:
            x, o = random(rng, xs, dt, 2.0), random(rng, os, dt, 2.0)
            assert_within(ptocpu.expand_exp_dif(x, o), ref.expand_exp_dif(x, o), 1)


def test_expand_exp_dif_fp16_rounds_the_difference_without_broadcast():
    # x - y = 8 + 2^-8 is not an fp16 value: the native SUB rounds it to 8 (ties to even), the fused
    # broadcast instruction does not round it
    x = np.full((1, 8), 8 + 2 ** -7, np.float16)
    y = np.full((1, 8), 2 ** -8, np.float16)
    same = ptocpu.expand_exp_dif(x, y).numpy()
    fused = ptocpu.expand_exp_dif(x, y[:, :1]).numpy()
    assert (same == np.float16(2980.0)).all()  # exp(8) = 2980.96
    assert (fused == np.float16(2992.0)).all()  # exp(8.0039) = 2992.6


def test_expand_exp_dif_strided_threads_and_errors():
    rng = np.random.default_rng(41)
    x = random(rng, (600, 300), np.float32)
    o = random(rng, (600, 1), np.float32)
    ptocpu.set_num_threads(1)
    one = ptocpu.expand_exp_dif(x[:, ::2], o).numpy()
    ptocpu.set_num_threads(2)
    assert_same_bits(ptocpu.expand_exp_dif(x[:, ::2], o), one)
    assert_within(one, ref.expand_exp_dif(x[:, ::2], o), 1)
    with pytest.raises(ptocpu.DTypeError, match="other dtype DT_FP16 must match input dtype DT_FP32"):
        ptocpu.expand_exp_dif(x, o.astype(np.float16))
    with pytest.raises(ptocpu.ArgumentError, match="shapes do not broadcast"):
        ptocpu.expand_exp_dif(x, o[:5].T)
    with pytest.raises(ptocpu.DTypeError, match="input dtype DT_INT32"):
        ptocpu.expand_exp_dif(x.astype(np.int32), o.astype(np.int32))
    with ptocpu.vec_tile_shapes(8), pytest.raises(ptocpu.TileError, match="has rank 1"):
        ptocpu.expand_exp_dif(x, o)


def test_empty_and_zero_d_inputs_on_the_cpu():
    f32 = np.float32
    assert ptocpu.expand_exp_dif(np.zeros((0, 3), f32), np.zeros((1, 3), f32)).shape == [0, 3]
    assert ptocpu.expand_exp_dif(np.array(1.0, f32), np.array(0.5, f32)).tolist() == float(np.float32(np.exp(0.5)))
    e, m, s = ptocpu.online_softmax(np.zeros((0, 3), f32), 1.0)  # no rows: the max of nothing, a sum of nothing
    assert e.shape == [0, 3] and m.tolist() == [[-np.inf] * 3] and s.tolist() == [[0.0] * 3]
    assert ptocpu.rms_norm(np.zeros((2, 0), f32)).shape == [2, 0]


def test_torch_operators_eager_and_compiled():
    import ptocpu.torch  # noqa: F401  (registers torch.ops.ptocpu)
    P = torch.ops.ptocpu
    x = torch.from_numpy(random(np.random.default_rng(50), (6, 40), np.float32))
    assert torch.equal(P.softmax(x, 0), torch.from_numpy(ptocpu.softmax(x.numpy(), 0).numpy()))
    v, i = P.topk(x, 3, None, False, 0)
    assert i.dtype == torch.int32 and torch.equal(v, torch.topk(x, 3, -1, False).values)

    def graph(t):
        return P.rms_norm(t, None, 1e-6) + P.expand_exp_dif(t, t[:, :1]), P.argsort(t, 0, True)
    compiled = torch.compile(graph, fullgraph=True, backend="aot_eager")
    for got, want in zip(compiled(x), graph(x)):
        assert torch.equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_streamed_outputs_keep_the_bits(dtype):
    # docs/kernels.md#streaming-stores: with the threshold at 0 every contiguous output is streamed
    # from L1 after each group of rows; rms_norm is bit-exact against its reference, softmax within
    # its bound, on 1 and 2 threads and with rows that end inside a cache line
    rng = np.random.default_rng(31)
    x = random(rng, (129, 77), dtype)
    gamma = random(rng, (77,), dtype)
    previous = ptocpu.get_num_threads()
    try:
        ptocpu._core._set_kernel_tuning(0)
        for threads in (1, 2):
            ptocpu.set_num_threads(threads)
            assert_same_bits(ptocpu.rms_norm(x, gamma, 1e-3), ref.rms_norm(x, gamma, 1e-3))
            assert_within(ptocpu.softmax(x, -1), ref.softmax(x, -1), 4 if dtype == np.float32 else 1)
    finally:
        ptocpu._core._set_kernel_tuning()
        ptocpu.set_num_threads(previous)


def test_softmax_gives_the_same_bits_on_every_instruction_set():
    # docs/ops/softmax.md: on AVX-512 rows of 9 to 4095 elements, on AVX2 of 9 to 65536, in registers
    # (up to 32 in one to four, two rows at a time, the last register whole where the next row follows;
    # longer ones in four passes); elsewhere from 64 elements the exp and the lane sums a row at a time
    # (the last set of lanes partly idle), shorter ones three passes; each instruction set's build and
    # the scalar one agree bit for bit, with NaN, inf and rows that are all -inf, odd and even row counts;
    # fp16 / bf16 rows (on AVX-512 read and written in their dtype, elsewhere through fp32 copies) with
    # results down into the subnormals
    rng = np.random.default_rng(41)
    cases = []
    for n in (8, 9, 12, 16, 17, 20, 24, 25, 31, 32, 33, 40, 48, 63, 64, 65, 80, 95, 96, 97, 128, 200, 1000, 4095, 4096, 4097,
              65536, 65537):
        x = random(rng, (max(4, 3000 // n), n), np.float32, 10.0)
        x[0, 1], x[1, 2], x[-1] = np.nan, np.inf, -np.inf
        x[2] = -np.linspace(0, 110, n)  # bf16 results from 1 down through the subnormals to 0
        x[3] = -np.linspace(0, 18, n)  # fp16 likewise
        cases += [x, x.astype(BF16), x.astype(np.float16)]
    try:
        results = {}
        for isa in ("avx512", "avx2", "baseline"):
            ptocpu._core._set_kernel_tuning(isa=isa)
            results[isa] = [ptocpu.softmax(x, -1).numpy() for x in cases]
    finally:
        ptocpu._core._set_kernel_tuning()
    for isa in ("avx2", "baseline"):
        for got, want in zip(results[isa], results["avx512"]):
            assert_same_bits(got, want)
    for x, got in zip(cases, results["avx512"]):
        finite = np.isfinite(x.astype(np.float32)).all(-1)
        assert np.isnan(got[~finite]).all()
        assert_within(got[finite], ref.softmax(x[finite], -1), 4 if x.dtype == np.float32 else 1)
