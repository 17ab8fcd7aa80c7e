"""index_add_ / index_add (docs/ops/index_add.md) against ptocpu.tools.reference's numpy loop of the device's
rule (fp16 / bf16: one fp32 accumulator per element, rounded once; fp32 / fp64: every step rounded; integers
wrap), against this file's own numpy references of fp32 accumulation and of per-step rounding (inputs where
the two differ), against torch's index_add (bit for bit with alpha 1 wherever torch takes the same rule),
upstream's doc example and official rows, one test per error rule."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ptocpu
from helpers import PLATFORMS, assert_same_bits, dtypes_of, np_dtype, ranks_of, ub_bytes
from ptocpu.tools import reference as ref

BF16 = np.dtype(ml_dtypes.bfloat16)


def random_values(rng, shape, dt: np.dtype) -> np.ndarray:
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -10**6), min(info.max, 10**6), size=shape, endpoint=True).astype(dt)
    return (rng.standard_normal(shape) * 8).astype(np.float32).astype(dt)


def random_case(rng, rank, dt, index_dtype):
    shape = [int(rng.integers(1, 5)) for _ in range(rank)]
    d = int(rng.integers(0, rank))
    n = int(rng.integers(1, 2 * shape[d] + 3))
    sshape = list(shape)
    sshape[d] = n
    index = rng.integers(0, shape[d], size=n).astype(index_dtype)
    return random_values(rng, shape, dt), d - rank if rng.integers(0, 2) else d, index, random_values(rng, sshape, dt)


def test_every_platform_dtype_against_reference(platform):
    rng = np.random.default_rng(PLATFORMS.index(platform))
    for dt in dtypes_of(platform, "index_add_"):
        for rank in ranks_of(platform, "index_add_"):
            for alpha in (1, 2.5, 3) if dt.kind == "u" else (1, -1.2, 3):
                x, dim, index, src = random_case(rng, rank, dt, (np.int32, np.int64)[rank % 2])
                want = ref.index_add(x, dim, index, src, alpha)
                before = x.copy()
                assert_same_bits(ptocpu.index_add(x, dim, index, src, alpha=alpha), want)
                assert_same_bits(x, before)  # out of place
                ret = ptocpu.index_add_(x, dim, index, src, alpha=alpha)  # numpy input: in place
                assert isinstance(ret, ptocpu.Tensor)
                assert_same_bits(x, want)


def torch_steps(dim, index_dtype, rank) -> bool:
    """torch 2.13 adds slice by slice (one rounding per step) except on its scatter_add path:
    dim 0 or last, int64 index, rank > 1, alpha 1 — there fp16 / bf16 accumulate in fp32."""
    return not (index_dtype == torch.int64 and rank > 1 and dim in (0, rank - 1))


TORCH_LAYOUTS = [((300, 70), 0, 500), ((70, 300), 1, 500), ((6, 120, 33), 1, 400), ((5000,), 0, 9000),
                 ((3, 4, 50, 7), -2, 80)]


@pytest.mark.parametrize("dt", [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32,
                                torch.int8, torch.int64])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_alpha_one_is_torch_bit_for_bit(dt, index_dtype):
    """fp16 / bf16 where torch accumulates in fp32 (its scatter_add path), every other dtype everywhere."""
    torch.manual_seed(3)
    compared = 0
    for shape, dim, n in TORCH_LAYOUTS:
        d = dim % len(shape)
        if dt.is_floating_point and dt.itemsize == 2 and torch_steps(d, index_dtype, len(shape)):
            continue
        x = (torch.randn(shape) * 20).to(dt)
        sshape = list(shape)
        sshape[d] = n
        src = (torch.randn(sshape) * 20).to(dt)
        index = torch.randint(0, shape[d], (n,), dtype=index_dtype)
        want = x.index_add(dim, index, src)
        assert torch.equal(torch.from_dlpack(ptocpu.index_add(x, dim, index, src)), want), (shape, dim)
        ptocpu.index_add_(x, dim, index, src)  # in place on the torch tensor
        assert torch.equal(x, want)
        compared += 1
    assert compared >= (2 if index_dtype == torch.int64 else 0)


# ---------------------------------------------------------------- fp16 / bf16: fp32 accumulation
# Two numpy references written here, independent of ptocpu: the device's rule (an fp32 accumulator
# per element, one rounding) and the per-step rounding it replaces; the inputs make them differ.

def to_f32(a):
    return np.asarray(a).astype(np.float32)


def fp32_accumulate(x, dim, index, src, alpha=None, round_product=False):
    """acc = fp32(x); acc += v in fp32 for each contribution in index order (v = s, or fp32(alpha * s),
    rounded to the dtype first when round_product); x = round(acc) for every element an index names."""
    acc = to_f32(x)
    for i, t in enumerate(index):
        v = to_f32(np.take(src, i, axis=dim))
        if alpha is not None:
            v = np.float32(alpha) * v
            if round_product:
                v = to_f32(v.astype(x.dtype))
        sel = [slice(None)] * x.ndim
        sel[dim] = t
        acc[tuple(sel)] += v
    out = x.copy()
    sel = [slice(None)] * x.ndim
    sel[dim] = sorted(set(int(t) for t in index))
    out[tuple(sel)] = acc[tuple(sel)].astype(x.dtype)
    return out


def per_step(x, dim, index, src):
    out = x.copy()
    for i, t in enumerate(index):
        sel = [slice(None)] * x.ndim
        sel[dim] = t
        out[tuple(sel)] = (to_f32(out[tuple(sel)]) + to_f32(np.take(src, i, axis=dim))).astype(x.dtype)
    return out


def differs(a, b) -> bool:
    return bool((a.view(np.uint16) != b.view(np.uint16)).any())


@pytest.mark.parametrize("dt", [np.float16, BF16])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("layout", [((40, 24), 0, 300), ((24, 40), 1, 300), ((3, 30, 5), 1, 200), ((500,), 0, 2000)])
def test_half_accumulates_in_fp32_and_rounds_once(dt, index_dtype, layout):
    shape, dim, n = layout
    rng = np.random.default_rng(n)
    x = rng.standard_normal(shape).astype(np.float32).astype(dt)
    sshape = list(shape)
    sshape[dim] = n
    src = (rng.standard_normal(sshape) * 0.3).astype(np.float32).astype(dt)
    index = rng.integers(0, shape[dim], size=n).astype(index_dtype)
    want = fp32_accumulate(x, dim, index, src)
    assert differs(want, per_step(x, dim, index, src))  # the inputs tell the two rules apart
    assert_same_bits(ptocpu.index_add(x, dim, index, src), want)
    for threads in (1, 2, 3):
        ptocpu.set_num_threads(threads)
        y = x.copy()
        ptocpu.index_add_(y, dim, index, src)
        assert_same_bits(y, want)
    # torch rounds per slice on its slice-by-slice path (an int32 index here): ours differs from it there
    if index_dtype == np.int32:
        tx = torch.from_numpy(x.view(np.int16)).view(torch.bfloat16) if dt == BF16 else torch.from_numpy(x)
        tsrc = torch.from_numpy(src.view(np.int16)).view(torch.bfloat16) if dt == BF16 else torch.from_numpy(src)
        t = tx.index_add(dim, torch.from_numpy(index), tsrc)
        t = t.view(torch.int16).numpy().view(BF16) if dt == BF16 else t.numpy()
        assert_same_bits(t, per_step(x, dim, index, src))


@pytest.mark.parametrize("dt", [np.float16, BF16])
def test_half_alpha_product_rounded_on_the_last_dim_only(dt):
    """The device's last-axis path rounds alpha * s to the dtype before the fp32 add; the other
    dims add the fp32 product. The same numbers along the last dim and along dim 0 (transposed)
    give both rules."""
    rng = np.random.default_rng(7)
    alpha = 1.1
    a = np.float32(np.float32(alpha).astype(dt))  # alpha as the device holds it
    x = rng.standard_normal((16, 48)).astype(np.float32).astype(dt)
    src = rng.standard_normal((16, 300)).astype(np.float32).astype(dt)
    index = rng.integers(0, 48, size=300)
    last = fp32_accumulate(x, 1, index, src, a, round_product=True)
    inner = fp32_accumulate(x, 1, index, src, a, round_product=False)
    assert differs(last, inner)
    assert_same_bits(ptocpu.index_add(x, 1, index, src, alpha=alpha), last)
    xt, st = np.ascontiguousarray(x.T), np.ascontiguousarray(src.T)  # [48, 16]: dim 0 is not the last
    assert_same_bits(ptocpu.index_add(xt, 0, index, st, alpha=alpha), np.ascontiguousarray(inner.T))
    x3, s3 = x[:, :, None], src[:, :, None]  # [16, 48, 1]: dim 1 is not the last, a trailing axis of 1
    assert_same_bits(ptocpu.index_add(x3, 1, index, s3, alpha=alpha), inner[:, :, None])


def test_fp16_accumulates_in_fp32_and_rounds_once():
    """1 + 1000 * 2^-12 in fp16: per-step rounding would stay at 1 (each 2^-12 is below half an ulp
    of 1); the fp32 accumulator reaches 1.244140625, which fp16 holds exactly."""
    x = np.ones((1, 4), np.float16)
    src = np.full((1000, 4), 2.0**-12, np.float16)
    out = ptocpu.index_add(x, 0, np.zeros(1000, np.int64), src)
    assert out.numpy().tolist() == [[1.244140625] * 4]
    out = ptocpu.index_add(x, 1, np.zeros(1000, np.int32), src.reshape(4, 1000)[:1])
    assert out.numpy().tolist() == [[1.244140625, 1.0, 1.0, 1.0]]


def test_alpha_as_the_device_holds_it():
    """alpha counts as 1 within 1e-6 of 1 in fp32; a float alpha for fp16 / bf16 is rounded to fp32,
    then to the dtype (1 + 2^-11 + 2^-40 rounds to 1 + 2^-10 directly, to the tie 1 + 2^-11 through
    fp32 and then to 1)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    src = rng.standard_normal((9, 8)).astype(np.float32) * np.float32(3.3)
    index = rng.integers(0, 6, size=9)
    one = ptocpu.index_add(x, 0, index, src).numpy()
    assert_same_bits(ptocpu.index_add(x, 0, index, src, alpha=1 + 2.0**-23).numpy(), one)  # 1.2e-7: as 1
    assert_same_bits(ptocpu.index_add(x, 0, index, src, alpha=1 - 2.0**-21).numpy(), one)  # 4.8e-7: as 1
    scaled = ptocpu.index_add(x, 0, index, src, alpha=1 + 2.0**-19).numpy()  # 1.9e-6: multiplied
    assert_same_bits(scaled, ref.index_add(x, 0, index, src, 1 + 2.0**-19))
    assert not np.array_equal(scaled.view(np.uint32), one.view(np.uint32))
    for dt, alpha in ((np.float16, 1 + 2.0**-11 + 2.0**-40), (BF16, 1 + 2.0**-8 + 2.0**-40)):
        assert np.array(alpha).astype(dt) != 1  # rounded directly it would not be 1
        h, hs = x.astype(dt), src.astype(dt)
        assert_same_bits(ptocpu.index_add(h, 1, index[:8] % 8, hs[:6], alpha=alpha),
                         ptocpu.index_add(h, 1, index[:8] % 8, hs[:6]).numpy())


@pytest.mark.parametrize("dt", [np.float16, BF16, np.float32, np.float64, np.int8, np.uint16, np.int64])
@pytest.mark.parametrize("alpha", [0.3, -2, 1.7, 127])
def test_large_blocks_rows_and_threads(dt, alpha):
    """Sizes that split over threads (block and row mode, dense and strided layouts)."""
    dt = np.dtype(dt)
    if dt.kind == "u":
        alpha = abs(alpha)
    rng = np.random.default_rng(int(alpha * 10) % 7)
    x = random_values(rng, (40, 3, 600), dt)
    src = random_values(rng, (40, 3, 900), dt)[:, :, ::3][:, :, :300]  # strided source
    index = rng.integers(0, 40, size=70)
    src0 = random_values(rng, (70, 3, 600), dt)
    for threads in (1, 2, 3):
        ptocpu.set_num_threads(threads)
        assert_same_bits(ptocpu.index_add(x, 0, index, src0, alpha=alpha), ref.index_add(x, 0, index, src0, alpha))
        idx2 = rng.integers(0, 600, size=300)
        assert_same_bits(ptocpu.index_add(x, 2, idx2, src, alpha=alpha), ref.index_add(x, 2, idx2, src, alpha))
        xt = ptocpu.asarray(np.ascontiguousarray(np.swapaxes(x, 0, 2)))  # [600, 3, 40]
        view = np.swapaxes(xt.numpy(), 0, 2)  # a transposed (strided) target written in place
        want = ref.index_add(view.copy(), 0, index, src0, alpha)
        ptocpu.index_add_(ptocpu.asarray(view), 0, index, src0, alpha=alpha)
        assert_same_bits(view, want)


@pytest.mark.parametrize("dt", [np.float32, np.int32, BF16, np.float16])
@pytest.mark.parametrize("width", [1024, 1000])
def test_lines_a_multiple_of_4_kib_apart_go_one_at_a_time(dt, width):
    """Along the last dim, lines whose updated rows lie a multiple of 4 KiB apart (fp32 rows of 1024,
    fp16 / bf16 accumulators of 1024 floats) are taken one line at a time, other widths in bands of 8
    lines side by side (docs/ops/index_add.md#speed): both in index order, every thread count, a
    partial band at the end, duplicates."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(width)
    x = random_values(rng, (21, width), dt)
    index = rng.integers(0, width, size=2 * width)
    src = random_values(rng, (21, 2 * width), dt)
    for threads in (1, 2):
        ptocpu.set_num_threads(threads)
        assert_same_bits(ptocpu.index_add(x, 1, index, src), ref.index_add(x, 1, index, src, 1))
        assert_same_bits(ptocpu.index_add(x, 1, index, src, alpha=3), ref.index_add(x, 1, index, src, 3))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int8])
@pytest.mark.parametrize("positions", [1, 4, 8, 9])
def test_tall_short_lines_with_few_positions(dt, positions):
    """The last dim of a tall matrix taking a few columns (the short-line path up to 8 positions),
    duplicates included, a strided source and a strided target, every thread count."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(positions)
    x = random_values(rng, (5003, 16), dt)
    index = rng.integers(0, 16, size=positions)
    index[-1] = index[0]  # a duplicate
    src = random_values(rng, (5003, 2 * positions), dt)[:, ::2]
    for threads in (1, 2, 3):
        ptocpu.set_num_threads(threads)
        assert_same_bits(ptocpu.index_add(x, 1, index, src, alpha=3), ref.index_add(x, 1, index, src, 3))
        target = random_values(rng, (5003, 32), dt)
        want = ref.index_add(target[:, :16].copy(), -1, index, src, 1)
        ptocpu.index_add_(ptocpu.asarray(target)[:, :16], -1, index, src)  # rows of 16 at a stride of 32
        assert_same_bits(target[:, :16], want)


@given(st.data())
def test_hypothesis_device_rule(data):
    name = data.draw(st.sampled_from(["DT_FP16", "DT_BF16", "DT_FP32", "DT_INT16", "DT_UINT8"]))
    dt = np_dtype(name)
    rank = data.draw(st.integers(1, 4))
    shape = data.draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    d = data.draw(st.integers(0, rank - 1))
    n = data.draw(st.integers(1, 12))
    index = np.array(data.draw(st.lists(st.integers(0, shape[d] - 1), min_size=n, max_size=n)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    sshape = list(shape)
    sshape[d] = n
    x, src = random_values(rng, shape, dt), random_values(rng, sshape, dt)
    alpha = data.draw(st.sampled_from([1, 2, -1, 0.1, 1.5]) if dt.kind != "u" else st.sampled_from([1, 2, 3]))
    assert_same_bits(ptocpu.index_add(x, d, index, src, alpha=alpha), ref.index_add(x, d, index, src, alpha))


def test_integers_wrap_and_alpha_truncates():
    x = np.array([[127, -128]], np.int8)
    out = ptocpu.index_add(x, 0, np.array([0, 0]), np.array([[1, -1], [2, 3]], np.int8), alpha=1.9)  # alpha 1
    assert out.numpy().tolist() == [[-126, -126]]
    out = ptocpu.index_add(x, 0, np.array([0]), np.array([[100, 100]], np.int8), alpha=-2.7)  # alpha -2: -200 -> 56
    assert out.numpy().tolist() == [[127 + 56 - 256, -128 + 56]]


def test_doc_example_and_method_forms():
    x = ptocpu.tensor([2, 3], ptocpu.DT_INT32)
    index = np.array([0, 1, 0], np.int32)
    source = np.ones((3, 3), np.int32)
    y = x.index_add(0, index, source)
    assert y is not x and x.numpy().sum() == 0
    assert y.tolist() == [[2, 2, 2], [1, 1, 1]]
    assert x.index_add_(0, index, source) is x
    assert x.tolist() == [[2, 2, 2], [1, 1, 1]]
    assert ptocpu.index_add_(x, 0, index, source, alpha=2) is x
    assert x.tolist() == [[6, 6, 6], [3, 3, 3]]


def test_upstream_unit_examples():
    x = np.ones((2, 8), np.float32)
    assert ptocpu.index_add(x, 0, np.array([0, 0], np.int32), np.ones((2, 8), np.float32), alpha=2).numpy()[:, 0].tolist() == [5, 1]
    y = np.ones((4, 16), np.float32)
    for _ in range(2):  # two loop iterations, each adding a [2, 16] source block at row 0
        ptocpu.index_add_(y, 0, np.zeros(2, np.int32), np.ones((2, 16), np.float32), alpha=2)
    assert y[:, 0].tolist() == [9, 1, 1, 1]


def test_source_and_index_sharing_memory_with_input():
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    index = np.array([1, 0, 3, 3])
    want = ref.index_add(x, 0, index, x.copy(), 1.5)
    ptocpu.index_add_(x, 0, index, x, alpha=1.5)  # source is input itself
    assert_same_bits(x, want)
    z = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    want = ref.index_add(z, 1, z[0].copy(), z.copy())
    ptocpu.index_add_(z, 1, z[0], z)  # index is a row of input
    assert_same_bits(z, want)


# ---------------------------------------------------------------- upstream's official rows
# (case, self, source, index, dtype, index dtype, dim, alpha, tile): IndexAddInplace rows.
OFFICIAL = [
    ("IndexAddInplace_test_0", (10, 10), (5, 10), "DT_FP32", np.int32, 0, 1.2, (10, 16)),
    ("IndexAddInplace_test_2", (10, 10), (8, 10), "DT_FP16", np.int32, 0, 1.2, (13, 16)),
    ("IndexAddInplace_test_5", (10, 10), (9, 10), "DT_INT32", np.int64, -2, 1.2, (10, 16)),
    ("IndexAddInplace_test_7", (10, 10), (13, 10), "DT_FP32", np.int32, 0, 1.2, (3, 8)),
    ("IndexAddInplace_test_11", (10, 15), (10, 17), "DT_FP32", np.int32, -1, 3.14, (3, 8)),
    ("IndexAddInplace_test_13", (10, 10), (10, 11), "DT_INT16", np.int32, 1, 1, (10, 16)),
    ("IndexAddInplace_test_17", (10, 30), (27, 30), "DT_BF16", np.int32, 0, 1.2, (10, 16)),
    ("IndexAddInplace_test_18", (10, 10), (10, 5), "DT_INT8", np.int32, 1, 127, (10, 32)),
    ("IndexAddInplace_test_22", (10, 10, 17), (10, 10, 78), "DT_FP32", np.int32, 2, -1.2, (8, 8, 16)),
    ("IndexAddInplace_test_26", (10, 17, 20, 49), (10, 17, 20, 13), "DT_FP32", np.int32, 3, 1, (8, 8, 8, 16)),
    ("IndexAddInplace_test_29", (10, 10, 10, 10, 10), (10, 10, 17, 10, 10), "DT_BF16", np.int64, 2, 1,
     (3, 2, 8, 8, 16)),
    ("IndexAddInplace_test_32", (10,), (19,), "DT_FP16", np.int64, 0, 2.0, (16,)),
]


@pytest.mark.parametrize("platform", ["ascend950", "atlas_a2"])
@pytest.mark.parametrize("case,shape,sshape,name,idt,dim,alpha,tile", OFFICIAL)
def test_official_rows(platform, case, shape, sshape, name, idt, dim, alpha, tile):
    rng = np.random.default_rng(len(case))
    dt = np_dtype(name)
    bound = 100 if dt == np.int8 and alpha == 127 else 10
    x = rng.uniform(-bound, bound, size=shape).astype(dt)
    src = rng.uniform(-bound, bound, size=sshape).astype(dt)
    index = rng.integers(0, 10, size=sshape[dim]).astype(idt)
    want = ref.index_add(x, dim, index, src, alpha)
    with ptocpu.platform(platform), ptocpu.vec_tile_shapes(*tile):
        ptocpu.index_add_(x, dim, index, src, alpha=alpha)
    assert_same_bits(x, want)


# ---------------------------------------------------------------- errors: one rule each
def assert_raises_unchanged(exc, match, x, *args, **kwargs):
    before = x.copy()
    with pytest.raises(exc, match=match):
        ptocpu.index_add_(x, *args, **kwargs)
    assert_same_bits(x, before)


def small():
    return np.zeros((4, 3), np.float32), np.array([0, 2]), np.ones((2, 3), np.float32)


@pytest.mark.parametrize("name", ["DT_BOOL", "DT_FP8E4M3"])
def test_error_dtype_without_adds(name):
    x = np.zeros((2, 2), np_dtype(name))
    assert_raises_unchanged(ptocpu.DTypeError, rf"index_add_: input dtype {name} is not supported on platform cpu",
                            x, 0, np.array([0]), x[:1])


def test_error_dtype_not_in_ascend_table():
    x = np.zeros((2, 2), np.uint8)
    with ptocpu.platform("ascend950"):
        assert_raises_unchanged(ptocpu.DTypeError, r"input dtype DT_UINT8 is not supported on platform ascend950",
                                x, 0, np.array([0]), x[:1])


def test_error_source_dtype_and_index_dtype():
    x, index, src = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"source dtype DT_FP16 must match input dtype DT_FP32", x, 0, index,
                            src.astype(np.float16))
    assert_raises_unchanged(ptocpu.DTypeError, r"index dtype DT_INT16 is not an index dtype", x, 0,
                            index.astype(np.int16), src)


@pytest.mark.parametrize("platform,rank", [("ascend950", 6), ("atlas_a2", 6), ("cpu", 9)])
def test_error_rank(platform, rank):
    x = np.zeros([1] * rank, np.float32)
    with ptocpu.platform(platform):
        assert_raises_unchanged(ptocpu.ArgumentError, rf"input rank {rank} is out of range", x, 0, np.array([0]), x)


def test_error_shapes_and_dim():
    x, index, src = small()
    assert_raises_unchanged(ptocpu.ArgumentError, r"index rank 2 \(shape \[1, 2\]\) must be 1", x, 0,
                            index.reshape(1, 2), src)
    assert_raises_unchanged(ptocpu.ArgumentError, r"source rank 1 .* must equal input rank 2", x, 0, index, src[0])
    assert_raises_unchanged(ptocpu.ArgumentError, r"source shape \[3, 3\] has 3 entries along dim 0 but index has 2",
                            x, 0, index, np.ones((3, 3), np.float32))
    assert_raises_unchanged(ptocpu.ArgumentError, r"source shape \[2, 4\] differs from input shape \[4, 3\] at axis 1",
                            x, 0, index, np.ones((2, 4), np.float32))
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"index_add_: dim -3 is out of range \[-2, 2\)", x, -3, index, src)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_error_index_value_at_the_very_end_changes_nothing(index_dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((100, 400)).astype(np.float32)
    index = rng.integers(0, 100, size=5000).astype(index_dtype)
    index[-1] = 100
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"index_add_: index value 100 at index position \(4999,\) is out "
                            r"of range \[0, 100\) for dim 0 of input shape \[100, 400\]", x, 0, index,
                            np.ones((5000, 400), np.float32))
    index[-1] = -1
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"index value -1 at index position \(4999,\)", x, 0, index,
                            np.ones((5000, 400), np.float32))


@pytest.mark.parametrize("dt,alpha,match", [
    (np.float32, float("inf"), r"alpha inf is not finite"),
    (np.float32, float("nan"), r"alpha nan is not finite"),
    (np.float16, 65505.0, r"alpha 65505 cannot be converted to DT_FP16 without overflow; allowed: \[-65504, 65504\]"),
    (np.float16, 70000, r"alpha 70000 cannot be converted to DT_FP16"),
    (BF16, 3.4e38, r"alpha 3.4e\+38 cannot be converted to DT_BF16 .*3.3895313892515355e\+38\]"),
    (np.int8, 128, r"alpha value 128 is out of range \[-128, 127\] of DT_INT8"),
    (np.int8, 127.5, r"alpha 127.5 cannot be converted to DT_INT8 without overflow; allowed: \[-128, 127\]"),
    (np.uint16, -1, r"alpha value -1 is negative, out of range \[0, 65535\] of DT_UINT16"),
])
def test_error_alpha_not_representable(dt, alpha, match):
    x = np.zeros((2, 2), dt)
    assert_raises_unchanged(ptocpu.ArgumentError, match, x, 0, np.array([0]), x[:1], alpha=alpha)
    ptocpu.index_add_(np.zeros((2, 2), np.float16), 0, np.array([0]), np.ones((1, 2), np.float16), alpha=65504)


def test_error_alpha_types():
    x, index, src = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"alpha True is a bool", x, 0, index, src, alpha=True)
    assert_raises_unchanged(ptocpu.DTypeError, r"alpha must be an int or a float, got str", x, 0, index, src,
                            alpha="2")
    assert_raises_unchanged(ptocpu.DTypeError, r"alpha must be an int or a float, got NoneType", x, 0, index, src,
                            alpha=None)


def test_error_read_only_and_non_tensors():
    x, index, src = small()
    x.flags.writeable = False
    with pytest.raises(ptocpu.ArgumentError, match=r"read-only"):
        ptocpu.index_add_(x, 0, index, src)
    assert ptocpu.index_add(x, 0, index, src).numpy()[0].tolist() == [1, 1, 1]  # out of place is fine
    with pytest.raises(ptocpu.DTypeError, match=r"index_add: source must be a tensor, got NoneType"):
        ptocpu.index_add(x, 0, index, None)


# ---------------------------------------------------------------- tile rules
def test_tile_rank_must_match_source():
    x, index, src = small()
    with ptocpu.vec_tile_shapes(4, 16, 32):
        assert_raises_unchanged(ptocpu.TileError, r"tile shape \[4, 16, 32\] has rank 3 but the source has rank 2",
                                x, 0, index, src)


@pytest.mark.parametrize("platform,limit", [("ascend950", 253952), ("atlas_a2", 196608)])
def test_tile_ub_budget(platform, limit):
    """source tile + index tile ([tile[dim]]) + one padded source row; IndexAddInplace_test_7 is 96 + 32 + 32."""
    x = np.zeros((64, 2048), np.float32)
    src = np.zeros((100, 2048), np.float32)
    index = np.zeros(100, np.int32)
    with ptocpu.platform(platform):
        for rows in (8, 16, 24, 32):
            need = ub_bytes((rows, 2048), src.shape, 4) + ub_bytes((rows,), index.shape, 4) + 2048 * 4
            with ptocpu.vec_tile_shapes(rows, 2048):
                if need <= limit:
                    ptocpu.index_add_(x, 0, index, src)
                else:
                    assert_raises_unchanged(ptocpu.TileError, rf"needs {need} UB bytes \(source tile .* index tile "
                                            rf".* source row 8192\) but platform {platform} has {limit}",
                                            x, 0, index, src)
        assert ub_bytes((32, 2048), src.shape, 4) > limit


# ---- the UB forms (docs/ops/index_add_ub.md) ------------------------------------------------------------

def test_ub_forms_every_platform_dtype_against_reference(platform):
    """index_add__ub / index_add_ub: index_add's sums for every dtype and rank their rows list."""
    rng = np.random.default_rng(40 + PLATFORMS.index(platform))
    with ptocpu.platform(platform):
        for dt in dtypes_of(platform, "index_add__ub"):
            for rank in ranks_of(platform, "index_add__ub"):
                for alpha in (1, 3) if dt.kind == "u" else (1, -1.2):
                    x, dim, index, src = random_case(rng, rank, dt, (np.int32, np.int64)[rank % 2])
                    want = ref.index_add(x, dim, index, src, alpha)
                    before = x.copy()
                    assert_same_bits(ptocpu.index_add_ub(x, dim, index, src, alpha=alpha), want)
                    assert_same_bits(x, before)  # out of place
                    ptocpu.index_add__ub(x, dim, index, src, alpha=alpha)
                    assert_same_bits(x, want)


def test_ub_forms_dtypes_and_ranks_are_the_pages():
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.DTypeError, match="^index_add_ub: input dtype DT_INT8"):
            ptocpu.index_add_ub(np.zeros((4, 4), np.int8), 0, np.array([0]), np.ones((1, 4), np.int8))
        ptocpu.index_add_(np.zeros((4, 4), np.int8), 0, np.array([0]), np.ones((1, 4), np.int8))  # index_add_ takes it
        with pytest.raises(ptocpu.ArgumentError, match="^index_add__ub: input rank 6"):
            ptocpu.index_add__ub(np.zeros((1,) * 6, np.float32), 0, np.array([0]), np.ones((1,) * 6, np.float32))


def test_ub_forms_keep_dim_whole_in_one_tile():
    """The tile must cover dim (the larger of input's and source's extents); input, source, output tiles
    and the whole index share the UB; nothing is written on an error."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (8, 16, 64)).astype(np.float32)
    src = rng.uniform(-1, 1, (8, 20, 64)).astype(np.float32)
    index = rng.integers(0, 16, 20).astype(np.int32)
    want = ref.index_add(x, 1, index, src, 1)
    before = x.copy()
    with ptocpu.vec_tile_shapes(4, 16, 32):  # covers input's 16 but not source's 20
        with pytest.raises(ptocpu.TileError, match=r"splits dim 1 \(16 < 20"):
            ptocpu.index_add__ub(x, 1, index, src)
    assert_same_bits(x, before)
    with ptocpu.vec_tile_shapes(4, 20, 32):
        ptocpu.index_add__ub(x, 1, index, src)
    assert_same_bits(x, want)
    with ptocpu.platform("atlas_a2"):
        with ptocpu.vec_tile_shapes(8, 20, 64):  # input, output 32 KiB each, source 40 KiB, index: fits
            ptocpu.index_add__ub(np.zeros((8, 16, 64), np.float32), 1, index, src)
        with ptocpu.vec_tile_shapes(8, 20, 2048):  # a 1 MiB input tile: over any UB
            with pytest.raises(ptocpu.TileError, match="index_add__ub.*input tile.*source tile.*output tile"):
                ptocpu.index_add__ub(np.zeros((8, 16, 2048), np.float32), 1, index, np.ones((8, 20, 2048), np.float32))
