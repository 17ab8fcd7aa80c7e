"""scatter_ / scatter (docs/ops/scatter.md) against a numpy reference that follows docs/precision.md (np.add.at /
np.multiply.at on a copy in the accumulator dtype, then one cast), against torch and numpy's
own scatter functions, over every dtype of each platform table; one test per error rule."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ptocpu
from helpers import ub_bytes
from ptocpu.tools import reference as ref

PLATFORMS = ["cpu", "ascend950", "atlas_a3", "atlas_a2"]
FP8 = {"DT_FP8E4M3", "DT_FP8E5M2", "DT_FP8E8M0"}
REDUCES = [None, "add", "multiply"]


def table(platform: str) -> dict:
    return next(p for p in ptocpu.platform_table() if p["name"] == platform)["ops"]["scatter_"]


def platform_dtypes(platform: str) -> list[str]:
    return table(platform)["dtypes"].split(", ")


def takes_reduce(name: str) -> bool:
    return name != "DT_BOOL" and name not in FP8


def npdt(name: str) -> np.dtype:
    return np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, name)))


def uint_view(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def random_values(rng, shape, dt: np.dtype, reduce=None) -> np.ndarray:
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    if dt.itemsize == 1:  # fp8 (reduce None only): any bit pattern, NaNs included
        return rng.integers(0, 256, size=shape, dtype=np.uint8).view(dt)
    if reduce == "multiply":
        return rng.uniform(0.5, 1.5, size=shape).astype(np.float32).astype(dt)
    return (rng.standard_normal(size=shape) * 4).astype(np.float32).astype(dt)


def convert_scalar(value, dt: np.dtype) -> np.ndarray:
    """docs/ops/scatter.md's scalar conversion for the values these tests use (in range, exact in fp32)."""
    if dt == np.bool_:
        return np.array(bool(value))
    if dt.kind in "iu":
        return np.array(int(value)).astype(dt)  # int() truncates toward zero
    return np.array(value, dtype=np.float32).astype(dt)


def scalar_for(dt: np.dtype, rng):
    if dt == np.bool_:
        return bool(rng.integers(0, 2))
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return int(rng.integers(max(info.min, -100), min(info.max, 100), endpoint=True))
    if dt == np.dtype(ml_dtypes.float8_e8m0fnu):
        return 2.0
    return float(rng.choice([2.0, -1.5, 0.375, 3]))


def assert_same_bits(got, expected: np.ndarray):
    got = got.numpy() if isinstance(got, ptocpu.Tensor) else np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if not np.array_equal(uint_view(got), uint_view(expected)):
        if expected.dtype.kind == "f" or expected.dtype.itemsize == 2 and expected.dtype.kind not in "iu":
            with np.errstate(invalid="ignore"):  # NaN payloads cast
                both_nan = np.isnan(got.astype(np.float64)) & np.isnan(expected.astype(np.float64))
            same = (uint_view(got) == uint_view(expected)) | both_nan
            assert same.all(), f"{(~same).sum()} elements differ:\n{got}\n{expected}"
        else:
            raise AssertionError(f"bits differ:\n{got}\n{expected}")


def random_case(rng, rank: int, dt: np.dtype, reduce, scalar_src: bool, index_dtype, dup=True):
    """input, dim (maybe negative), index (smaller on other axes), src (maybe larger)."""
    shape = [int(rng.integers(1, 5)) for _ in range(rank)]
    d = int(rng.integers(0, rank))
    ishape = [int(rng.integers(1, n + 1)) for n in shape]
    ishape[d] = int(rng.integers(1, 2 * shape[d] + 2))
    x = random_values(rng, shape, dt, reduce)
    hi = shape[d]
    index = rng.integers(0, hi, size=ishape).astype(index_dtype)
    if not dup:
        ishape[d] = min(ishape[d], hi)
        index = np.argsort(rng.random([*ishape[:d], hi, *ishape[d + 1:]]), axis=d)
        index = index[tuple(slice(0, m) for m in ishape)].astype(index_dtype)
    if scalar_src:
        src = scalar_for(dt, rng)
    else:
        src = random_values(rng, [m + int(rng.integers(0, 2)) for m in ishape], dt, reduce)
    dim = d - rank if rng.integers(0, 2) else d
    return x, dim, index, src


def sweep_params():
    out = []
    for platform in PLATFORMS:
        for name in platform_dtypes(platform):
            for reduce in REDUCES if takes_reduce(name) else [None]:
                out.append((platform, name, reduce))
    return out


# ---------------------------------------------------------------- the sweep over the tables
@pytest.mark.parametrize("platform,name,reduce", sweep_params())
def test_every_platform_dtype_against_reference(platform, name, reduce):
    dt = npdt(name)
    lo, hi = table(platform)["rank"]
    rng = np.random.default_rng(abs(hash((platform, name, reduce))) % 2**32)
    with ptocpu.platform(platform):
        for rank in range(lo, hi + 1):
            for index_dtype in (np.int32, np.int64):
                for scalar_src in (False, True):
                    x, dim, index, src = random_case(rng, rank, dt, reduce, scalar_src, index_dtype)
                    src_np = convert_scalar(src, dt) if scalar_src else src
                    expected = ref.scatter(x, dim, index, src_np, reduce)
                    before = x.copy()
                    out = ptocpu.scatter(x, dim, index, src, reduce=reduce)  # out of place
                    assert_same_bits(out, expected)
                    assert_same_bits(x, before)
                    ret = ptocpu.scatter_(x, dim, index, src, reduce=reduce)  # in place on numpy
                    assert isinstance(ret, ptocpu.Tensor)
                    assert_same_bits(x, expected)
                    assert_same_bits(ret, expected)


@given(st.data())
def test_hypothesis_duplicates_and_layouts(data):
    name = data.draw(st.sampled_from(platform_dtypes("cpu")))
    dt = npdt(name)
    reduce = data.draw(st.sampled_from(REDUCES if takes_reduce(name) else [None]))
    rank = data.draw(st.integers(1, 5))
    shape = data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank))
    d = data.draw(st.integers(-rank, rank - 1))
    ishape = [data.draw(st.integers(1, n)) for n in shape]
    ishape[d] = data.draw(st.integers(1, 12))
    index = np.array(data.draw(st.lists(st.integers(0, shape[d] - 1), min_size=int(np.prod(ishape)),
                                        max_size=int(np.prod(ishape)))), dtype=data.draw(
        st.sampled_from([np.int32, np.int64]))).reshape(ishape)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, shape, dt, reduce)
    if data.draw(st.booleans()):
        src = scalar_for(dt, rng)
        src_np = convert_scalar(src, dt)
    else:
        src = src_np = random_values(rng, [m + data.draw(st.integers(0, 2)) for m in ishape], dt, reduce)
    expected = ref.scatter(x, d, index, src_np, reduce)
    # input as a transposed ptocpu view of a bigger base, to exercise strided writes
    base = np.ascontiguousarray(np.swapaxes(np.concatenate([x, x], axis=0), 0, -1))
    view = np.swapaxes(base, 0, -1)[: shape[0]]
    t = ptocpu.asarray(view)
    assert ptocpu.scatter_(t, d, index, src, reduce=reduce) is t
    assert_same_bits(t, expected)
    assert_same_bits(np.swapaxes(base, 0, -1)[shape[0]:], x)  # the other half of the base is untouched


def test_seed_example():
    x = ptocpu.tensor([3, 5], ptocpu.DT_FP32)
    y = ptocpu.asarray(np.array([[1, 2], [0, 1]], dtype=np.int64))
    o = ptocpu.scatter_(x, 0, y, 2.0)
    assert o is x
    assert o.tolist() == [[2, 0, 0, 0, 0], [2, 2, 0, 0, 0], [0, 2, 0, 0, 0]]


def test_methods_and_return_values():
    x = ptocpu.asarray(np.zeros((2, 3), np.float32))
    index = np.array([[2], [0]])
    y = x.scatter(1, index, 5.0)
    assert y is not x and x.numpy().sum() == 0
    assert y.tolist() == [[0, 0, 5], [5, 0, 0]]
    assert x.scatter_(1, index, np.ones((2, 1), np.float32), reduce="add") is x
    assert x.tolist() == [[0, 0, 1], [1, 0, 0]]
    assert x.scatter_(1, index, 3, reduce="multiply") is x
    assert x.tolist() == [[0, 0, 3], [3, 0, 0]]


# ---------------------------------------------------------------- the peers
def torch_dtype(name):
    dt = npdt(name)
    return torch.bfloat16 if dt == np.dtype(ml_dtypes.bfloat16) else getattr(torch, np.dtype(dt).name)


def torch_scatters(name) -> bool:
    """torch 2.13 has no CPU scatter kernels for uint16 / uint32 / uint64 (numpy covers those)."""
    try:
        torch.zeros(2, dtype=torch_dtype(name)).scatter_(0, torch.tensor([1]), torch.ones(1, dtype=torch_dtype(name)))
    except (RuntimeError, NotImplementedError):
        return False
    return True


TORCH_CASES = [(name, reduce) for name in platform_dtypes("cpu") if name not in FP8 and torch_scatters(name)
               for reduce in REDUCES if reduce is None or takes_reduce(name)]


@pytest.mark.parametrize("name, reduce", TORCH_CASES)
def test_against_torch(name, reduce):
    dt = npdt(name)
    tdt = torch_dtype(name)
    rng = np.random.default_rng(7)
    for rank in (1, 2, 3, 4):
        for scalar_src in (False, True):
            x, dim, index, src = random_case(rng, rank, dt, reduce, scalar_src, np.int64, dup=reduce is not None)
            tx = torch.from_numpy(x.view(np.uint16)).view(tdt) if tdt == torch.bfloat16 else torch.from_numpy(x.copy())
            tx = tx.clone()
            ti = torch.from_numpy(index.astype(np.int64))
            src_np = convert_scalar(src, dt) if scalar_src else src
            prefix = tuple(slice(0, m) for m in index.shape)
            full = np.broadcast_to(src_np, index.shape) if scalar_src else src_np[prefix]
            full = np.ascontiguousarray(full)
            full = full.copy()
            tsrc = torch.from_numpy(full.view(np.uint16)).view(tdt) if tdt == torch.bfloat16 else torch.from_numpy(full)
            if reduce is None:
                tx.scatter_(dim, ti, tsrc)
            else:
                tx.scatter_reduce_(dim, ti, tsrc, "sum" if reduce == "add" else "prod", include_self=True)
            got = ptocpu.scatter(x, dim, index, src, reduce=reduce).numpy()
            want = tx.view(torch.uint16).numpy().view(dt) if tdt == torch.bfloat16 else tx.numpy()
            if reduce is None or dt.kind in "iub":
                assert_same_bits(got, want)  # data movement and integer wrap-around are exact
            else:  # torch may round per step or in another order; docs/precision.md's reference is exact
                np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-2, atol=1e-2)


def test_torch_input_written_in_place():
    t = torch.zeros(3, 4, dtype=torch.float16)
    index = torch.tensor([[3, 0], [1, 1]])
    out = ptocpu.scatter_(t, 1, index, 1.5, reduce="add")
    assert isinstance(out, ptocpu.Tensor)
    assert t.tolist() == [[1.5, 0, 0, 1.5], [0, 3, 0, 0], [0, 0, 0, 0]]
    out.numpy()[2, 2] = 9  # the returned tensor is the same memory
    assert t[2, 2].item() == 9


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_against_numpy_peers(dim):
    rng = np.random.default_rng(dim + 10)
    x = rng.standard_normal((40, 50)).astype(np.float32)
    d = dim % 2
    index = np.argsort(rng.random((40, 50)), axis=d)[:30, :30]  # no duplicate per line
    src = rng.standard_normal((35, 31)).astype(np.float32)
    want = x.copy()
    np.put_along_axis(want[:30] if d == 1 else want[:, :30], index, src[:30, :30], axis=d)
    assert_same_bits(ptocpu.scatter(x, dim, index, src), want)
    index = rng.integers(0, x.shape[d], size=(60, 30) if d == 0 else (30, 60))
    src = rng.standard_normal(index.shape).astype(np.float32)
    want = x.copy()
    pos = list(np.indices(index.shape))
    pos[d] = index
    np.add.at(want, tuple(pos), src)
    assert_same_bits(ptocpu.scatter(x, dim, index, src, reduce="add"), want)
    want = x.copy()
    np.multiply.at(want, tuple(pos), src)
    assert_same_bits(ptocpu.scatter(x, dim, index, src, reduce="multiply"), want)


# ---------------------------------------------------------------- precision (docs/ops/scatter.md, docs/precision.md)
@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_low_precision_accumulates_in_fp32_and_rounds_once(dt, reduce):
    rng = np.random.default_rng(3)
    n = 5000  # contributions per target
    x = np.array([[1.0, 2.0, 0.5, -1.0]], dtype=dt)
    index = np.zeros((n, 4), dtype=np.int64)  # dim 0: every row lands on row 0
    if reduce == "add":
        src = rng.uniform(0.05, 0.15, size=(n, 4)).astype(dt)
    else:
        src = rng.choice([1 + 2**-7, 1 - 2**-7, 1 + 2**-6, 1 - 2**-6], size=(n, 4)).astype(dt)
    expected = ref.scatter(x, 0, index, src, reduce)
    got = ptocpu.scatter(x, 0, index, src, reduce=reduce).numpy()
    assert_same_bits(got, expected)
    # per-step rounding to the dtype gives a different answer: the test can tell them apart
    step = x.copy()
    for i in range(n):
        step[0] = (step[0].astype(np.float32) + src[i].astype(np.float32) if reduce == "add"
                   else step[0].astype(np.float32) * src[i].astype(np.float32)).astype(dt)
    assert not np.array_equal(uint_view(step), uint_view(expected))
    # the same along the last axis (row mode) and with the threads split differently
    got_t = ptocpu.scatter(np.ascontiguousarray(x.T), 1, np.ascontiguousarray(index.T),
                           np.ascontiguousarray(src.T), reduce=reduce).numpy()
    assert_same_bits(got_t, np.ascontiguousarray(expected.T))


def test_fp32_add_order_is_row_major_and_thread_independent():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    index = rng.integers(0, 64, size=(5000, 300))
    src = (rng.standard_normal((5000, 300)) * 1e3).astype(np.float32)
    expected = ref.scatter(x, 0, index, src, "add")
    results = []
    for threads in (1, 2, 3):
        ptocpu.set_num_threads(threads)
        results.append(ptocpu.scatter(x, 0, index, src, reduce="add").numpy())
    for r in results:
        assert_same_bits(r, expected)


@pytest.mark.parametrize("dt", [np.int8, np.uint16, np.int32, np.int64])
def test_integers_wrap_around(dt):
    info = np.iinfo(dt)
    x = np.array([info.max, info.min, 3], dtype=dt)
    index = np.array([0, 1, 2, 2, 2])
    src = np.array([1, -1 if info.min < 0 else 1, info.max, info.max, 2], dtype=np.int64).astype(dt)
    assert_same_bits(ptocpu.scatter(x, 0, index, src, reduce="add"), ref.scatter(x, 0, index, src, "add"))
    assert_same_bits(ptocpu.scatter(x, 0, index, src, reduce="multiply"), ref.scatter(x, 0, index, src, "multiply"))


def test_larger_blocks_and_views():
    """Block mode with several blocks per thread, inner axes smaller than input, strided src."""
    rng = np.random.default_rng(11)
    for dt in (np.float32, ml_dtypes.bfloat16, np.int16):
        x = random_values(rng, (70, 9, 130), np.dtype(dt))
        index = rng.integers(0, 70, size=(150, 7, 120))
        src_base = random_values(rng, (160, 8, 250), np.dtype(dt))
        src = src_base[:, :, ::2]
        for reduce in REDUCES:
            expected = ref.scatter(x, 0, index, src, reduce)
            assert_same_bits(ptocpu.scatter(x, 0, index, src, reduce=reduce), expected)
            assert_same_bits(ptocpu.scatter(x, -2 + 2, index, 7, reduce=reduce),
                             ref.scatter(x, 0, index, convert_scalar(7, np.dtype(dt)), reduce))


LAYOUTS = {  # (input shape, dim, index shape): each kernel path
    "row-dense": ((6, 40), 1, (6, 30)),
    "row-sparse": ((6, 400), 1, (6, 7)),
    "block-dense": ((40, 64), 0, (50, 60)),
    "block-sparse": ((400, 64), 0, (7, 60)),
    "block-dense-inner-smaller": ((12, 5, 33), 0, (20, 4, 30)),
    "block-dense-too-long-to-pack": ((9000, 20), 0, (3000, 20)),
    "block-dense-slabs-in-place": ((6, 40, 24), 1, (6, 50, 24)),  # a slab per outer row, no packed copy
}


@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.float64])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_kernel_paths_and_untouched_bits(dt, reduce, layout):
    """Dense / sparse rows and blocks; untouched elements keep their exact bits (NaN payloads too)."""
    dt = np.dtype(dt)
    shape, dim, ishape = LAYOUTS[layout]
    rng = np.random.default_rng(len(layout) * 7 + REDUCES.index(reduce))
    x = random_values(rng, shape, dt, reduce)
    if dt.kind == "f":  # NaNs with payloads, signalling ones included, all over the input
        bits = uint_view(x).copy()
        nan = {2: [0x7C01, 0xFD55, 0x7E00], 4: [0x7F800001, 0xFFC01234], 8: [0x7FF0000000000001]}[dt.itemsize]
        if dt == np.dtype(ml_dtypes.bfloat16):
            nan = [0x7F81, 0xFFA5, 0x7FC0]
        flat = bits.reshape(-1)
        flat[rng.choice(flat.size, size=flat.size // 5, replace=False)] = rng.choice(nan, size=flat.size // 5)
        x = bits.view(dt)
    index = rng.integers(0, shape[dim], size=ishape)
    src = random_values(rng, [m + 1 for m in ishape], dt, reduce)
    expected = ref.scatter(x, dim, index, src, reduce)
    got = ptocpu.scatter(x, dim, index, src, reduce=reduce).numpy()
    assert_same_bits(got, expected)
    touched = np.zeros(shape, bool)
    pos = list(np.indices(ishape))
    pos[dim] = index
    touched[tuple(pos)] = True
    assert np.array_equal(uint_view(got)[~touched], uint_view(x)[~touched])


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.float64, np.int8])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("nd,md", [(4, 4), (8, 1), (8, 8), (16, 2), (16, 16), (12, 3), (64, 20), (5, 9)])
def test_short_rows_applied_in_place_along_one_outer_axis(dt, reduce, nd, md):
    """Short lines with unit steps along dim (the unrolled row loop): lines back to back and a
    column slice of a wider array written in place, src rows wider than the index rows, a scalar
    src; duplicates within a row are applied in index order."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(nd * 100 + md)
    rows = 1500
    for width in (nd, nd + 5):
        base = random_values(rng, (rows, width), dt, reduce)
        x = base[:, :nd]
        index = rng.integers(0, nd, size=(rows, md))
        src = random_values(rng, (rows, md + 3), dt, reduce)
        for value in (src, 3):
            value_np = src[:, :md] if value is src else convert_scalar(value, dt)
            expected = ref.scatter(x, 1, index, value_np, reduce)
            outside = base[:, nd:].copy()
            ptocpu.scatter_(x, 1, index, value, reduce=reduce)
            assert_same_bits(x, expected)
            assert_same_bits(base[:, nd:], outside)


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("shape,dim,ishape", [
    ((9000, 20), 0, (3000, 20)),  # one block, too long to pack
    ((2, 9000, 40), 1, (2, 3000, 40)),  # outer positions, each a block
    ((9000, 300), 0, (2500, 300)),  # blocks of the accumulator budget (233 columns) and a rest
])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_dense_16_bit_blocks_on_all_threads(dt, reduce, shape, dim, ishape, threads):
    """Dense fp16 / bf16 blocks too long to pack and too few for the threads: rows widened and
    stored back on all threads, columns walked on all threads; every thread count gives the
    reference's bits (one rounding per target, NaN payloads of untouched elements kept)."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(sum(shape) + threads)
    x = random_values(rng, shape, dt, reduce)
    bits = uint_view(x).copy().reshape(-1)
    nan = [0x7F81, 0xFFA5] if dt == np.dtype(ml_dtypes.bfloat16) else [0x7C01, 0xFD55]
    bits[rng.choice(bits.size, size=bits.size // 100, replace=False)] = rng.choice(nan, size=bits.size // 100)
    x = bits.view(dt).reshape(shape)
    index = rng.integers(0, shape[dim], size=ishape)
    src = random_values(rng, ishape, dt, reduce)
    previous = ptocpu.get_num_threads()
    ptocpu.set_num_threads(threads)
    try:
        got = ptocpu.scatter(x, dim, index, src, reduce=reduce).numpy()
    finally:
        ptocpu.set_num_threads(previous)
    assert_same_bits(got, ref.scatter(x, dim, index, src, reduce))


@pytest.mark.parametrize("dt", [np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
@pytest.mark.parametrize("nd,md", [(8, 8), (16, 4), (40, 30), (3, 1), (64, 64), (32, 100), (500, 200)])
@pytest.mark.parametrize("threads", [1, 2])
def test_short_16_bit_lines_back_to_back_accumulate_in_fp32(dt, reduce, nd, md, threads):
    """Lines, src rows and index rows back to back (groups of rows widened and rounded at once,
    whatever the number of contributions per row): many rows (whole and partial groups), NaN
    payloads in input and src, a scalar src too."""
    dt = np.dtype(dt)
    rows = 2999
    rng = np.random.default_rng(nd * 31 + md)
    nan = [0x7F81, 0xFFA5, 0x7FC0] if dt == np.dtype(ml_dtypes.bfloat16) else [0x7C01, 0xFD55, 0x7E00]

    def with_nans(a):
        bits = uint_view(a).copy().reshape(-1)
        bits[rng.choice(bits.size, size=bits.size // 50, replace=False)] = rng.choice(nan, size=bits.size // 50)
        return bits.view(dt).reshape(a.shape)

    x = with_nans(random_values(rng, (rows, nd), dt, reduce))
    index = rng.integers(0, nd, size=(rows, md))
    src = with_nans(random_values(rng, (rows, md), dt, reduce))
    previous = ptocpu.get_num_threads()
    ptocpu.set_num_threads(threads)
    try:
        assert_same_bits(ptocpu.scatter(x, 1, index, src, reduce=reduce).numpy(), ref.scatter(x, 1, index, src, reduce))
        assert_same_bits(ptocpu.scatter(x, 1, index, 1.5, reduce=reduce).numpy(),
                         ref.scatter(x, 1, index, np.array(1.5, dt), reduce))
    finally:
        ptocpu.set_num_threads(previous)


# ---------------------------------------------------------------- views and overlap
def test_scatter_on_a_view_writes_through_to_the_base():
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    before = base.copy()
    t = ptocpu.asarray(base)[::2, 1:7:2]  # shape [3, 3], strides [16, 2]
    index = np.array([[2, 0, 1]])
    ptocpu.scatter_(t, 0, index, -1.0)
    expected = before.copy()
    expected[4, 1], expected[0, 3], expected[2, 5] = -1, -1, -1
    assert_same_bits(base, expected)


def test_src_overlapping_input_is_read_before_any_write():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    index = np.array([[1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]])
    expected = ref.scatter(x, 1, index, x.copy(), None)
    ptocpu.scatter_(x, 1, index, x)  # src is input itself
    assert_same_bits(x, expected)
    y = np.arange(12, dtype=np.float32).reshape(3, 4)
    i2 = index[:2, :3] % 3
    expected = ref.scatter(y, 0, i2, y[1:].copy(), "add")
    ptocpu.scatter_(y, 0, i2, y[1:], reduce="add")  # src is a shifted view of input
    assert_same_bits(y, expected)


def test_index_overlapping_input_is_read_before_any_write():
    x = np.array([[1, 0, 2], [2, 2, 0]], dtype=np.int64)
    expected = ref.scatter(x, 1, x.copy(), np.array(5), None)
    ptocpu.scatter_(x, 1, x, 5)  # index is input itself
    assert_same_bits(x, expected)


# ---------------------------------------------------------------- errors: one rule each
def assert_raises_unchanged(exc, match, x, *args, **kwargs):
    xs = x if isinstance(x, np.ndarray) else x.numpy()
    before = xs.copy()
    with pytest.raises(exc, match=match):
        ptocpu.scatter_(x, *args, **kwargs)
    assert_same_bits(xs, before)


def small():
    return np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[0, 1], [2, 0]])


def test_error_input_dtype_not_in_platform_table():
    x = np.zeros((2, 2), np.float64)
    with ptocpu.platform("ascend950"):
        assert_raises_unchanged(ptocpu.DTypeError, r"scatter_: input dtype DT_FP64 .*ascend950", x, 0,
                                np.array([[0, 1]]), 1.0)
    assert issubclass(ptocpu.DTypeError, TypeError)


@pytest.mark.parametrize("name", ["DT_BOOL", "DT_FP8E4M3"])
def test_error_bool_and_fp8_take_reduce_none_only(name):
    x = np.zeros((2, 2), npdt(name))
    assert_raises_unchanged(ptocpu.DTypeError, rf"input dtype {name} takes reduce None only, got reduce 'add'",
                            x, 0, np.array([[0, 1]]), x, reduce="add")


def test_error_index_dtype():
    x, index = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"index dtype DT_FP32 is not an index dtype", x, 0,
                            index.astype(np.float32), 1.0)


def test_error_src_dtype_mismatch():
    x, index = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"src dtype DT_FP64 must match input dtype DT_FP32", x, 0, index,
                            np.ones((2, 2)))


def test_error_non_integer_dim():
    x, index = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"dim must be an integer", x, 1.0, index, 1.0)


@pytest.mark.parametrize("platform,rank", [("cpu", 9), ("cpu", 0), ("ascend950", 5), ("atlas_a2", 5)])
def test_error_input_rank(platform, rank):
    x = np.zeros([1] * rank, np.float32)
    with ptocpu.platform(platform):
        assert_raises_unchanged(ptocpu.ArgumentError, rf"input rank {rank} is out of range", x, 0,
                                np.zeros([1] * max(rank, 1), np.int64), 1.0)


def test_error_extent_above_the_ascend_limit():
    x = np.zeros(4, np.float32)
    index = torch.zeros(1, dtype=torch.int64).expand(2**31)  # 2^31 positions, one element of memory
    with ptocpu.platform("ascend950"):
        assert_raises_unchanged(ptocpu.ArgumentError, r"index shape \[2147483648\] has a dim of 2147483648 above the "
                                r"platform ascend950 limit of 2147483647", x, 0, index, 1.0)


def test_error_index_rank():
    x, index = small()
    assert_raises_unchanged(ptocpu.ArgumentError, r"index rank 1 .* must equal input rank 2", x, 0, index[0], 1.0)


def test_error_zero_d_src_is_a_tensor_of_the_wrong_rank():
    x, index = small()
    assert_raises_unchanged(ptocpu.ArgumentError, r"src rank 0 .* must equal input rank 2", x, 0, index,
                            ptocpu.asarray(np.array(1.0, np.float32)))


def test_error_index_larger_than_input_off_dim():
    x, _ = small()
    assert_raises_unchanged(ptocpu.ArgumentError, r"index shape \[1, 5\] is larger than input shape \[3, 4\] at axis 1",
                            x, 0, np.zeros((1, 5), np.int64), 1.0)


def test_error_index_larger_than_src():
    x, index = small()
    assert_raises_unchanged(ptocpu.ArgumentError, r"index shape \[2, 2\] is larger than src shape \[2, 1\] at axis 1",
                            x, 0, index, np.ones((2, 1), np.float32))


def test_error_reduce_name():
    x, index = small()
    assert_raises_unchanged(ptocpu.ArgumentError, r"reduce 'sum' is not supported; allowed: None, 'add', 'multiply'",
                            x, 0, index, 1.0, reduce="sum")
    assert_raises_unchanged(ptocpu.ArgumentError, r"reduce 1 is not supported", x, 0, index, 1.0, reduce=1)


@pytest.mark.parametrize("dt,value,match", [
    (np.int8, 300, r"src value 300 is out of range \[-128, 127\] of DT_INT8"),
    (np.uint8, -1, r"src value -1 is negative, out of range \[0, 255\] of DT_UINT8"),
    (np.int64, 2**63, r"src value 9223372036854775808 is out of range"),
    (np.uint64, -1, r"src value -1 is negative, out of range \[0, 18446744073709551615\]"),
    (np.bool_, 2, r"src value 2 cannot be stored in DT_BOOL"),
])
def test_error_scalar_out_of_range(dt, value, match):
    x = np.zeros((2, 2), dt)
    assert_raises_unchanged(ptocpu.ArgumentError, match, x, 0, np.array([[0, 1]]), value)


def test_scalar_conversion_on_cpu():
    x = np.zeros((1, 3), np.int16)
    ptocpu.scatter_(x, 1, np.array([[0, 1, 2]]), -2.9)  # truncates toward zero
    assert x.tolist() == [[-2, -2, -2]]
    h = np.zeros((1, 2), np.float16)
    ptocpu.scatter_(h, 1, np.array([[0, 1]]), 1e6)  # overflow gives inf on cpu
    assert np.isinf(h).all()
    ptocpu.scatter_(h, 1, np.array([[0]]), np.float64(0.1))  # numpy scalars are scalars
    assert h[0, 0] == np.float16(0.1)
    b = np.zeros((1, 2), np.bool_)
    ptocpu.scatter_(b, 1, np.array([[1]]), True)
    assert b.tolist() == [[False, True]]


@pytest.mark.parametrize("platform", ["ascend950", "atlas_a3"])
@pytest.mark.parametrize("dt,value", [(np.float32, float("inf")), (np.float32, float("nan")),
                                      (np.float16, 70000.0), (ml_dtypes.bfloat16, 1e39)])
def test_error_ascend_scalar_must_be_finite(platform, dt, value):
    x = np.zeros((2, 2), dt)
    with ptocpu.platform(platform):
        assert_raises_unchanged(ptocpu.ArgumentError, r"src value .* (infinite|NaN) after conversion .*finite",
                                x, 0, np.array([[0, 1]]), value)


def test_error_empty_input_on_ascend():
    x = np.zeros((0, 4), np.float32)
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match=r"input shape \[0, 4\] is empty"):
            ptocpu.scatter_(x, 0, np.zeros((0, 4), np.int64), 1.0)
    assert ptocpu.scatter_(x, 0, np.zeros((0, 4), np.int64), 1.0).shape == (0, 4)  # cpu allows it
    y = np.ones((2, 2), np.float32)
    ptocpu.scatter_(y, 0, np.zeros((2, 0), np.int64), 5.0)  # an empty index changes nothing
    assert y.tolist() == [[1, 1], [1, 1]]


def test_error_dim_out_of_range():
    x, index = small()
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"dim 2 is out of range \[-2, 2\)", x, 2, index, 1.0)
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"dim -3 is out of range", x, -3, index, 1.0)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_error_index_value_at_the_very_end_changes_nothing(index_dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 300)).astype(np.float32)
    index = rng.integers(0, 200, size=(4000, 300)).astype(index_dtype)  # large: the check also narrows it
    index[-1, -1] = 200
    assert_raises_unchanged(ptocpu.IndexOutOfRange,
                            r"scatter_: index value 200 at index position \(3999, 299\) is out of range \[0, 200\) "
                            r"for dim 0 of input shape \[200, 300\]",
                            x, 0, index, np.ones((4000, 300), np.float32), reduce="add")
    index[-1, -1] = -1
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"index value -1 at index position \(3999, 299\)", x, 0, index,
                            1.0)
    index[-1, -1] = 65536 + 5  # would wrap to 5 if narrowed before being checked
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"index value 65541 at index position", x, 0, index, 1.0)
    xt = np.ascontiguousarray(x.T)  # row mode
    assert_raises_unchanged(ptocpu.IndexOutOfRange, r"index value 65541 at index position \(299, 3999\)", xt, 1,
                            np.ascontiguousarray(index.T), 1.0)
    assert issubclass(ptocpu.IndexOutOfRange, IndexError)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("size", [1, 255, 257, (1 << 20) + 77])  # from 1 << 20 on, also narrowed
def test_a_bad_index_value_anywhere_in_the_checks_streams(threads, size):
    """The bounds check reads each thread's part as four streams of 64-value blocks
    (src/ops/index_bounds.cpp): one bad value at each part's and each stream's first and last
    position, and in what the streams' rounding leaves, is found and named."""
    x = np.zeros((1, 200), np.float32)
    index = np.arange(size, dtype=np.int64).reshape(1, size) % 200
    part, edges = size // threads, set()
    for t in range(threads):
        lo = t * part
        n = size - lo if t == threads - 1 else part
        stream = -(-(n // 4) // 64) * 64
        for s in range(5):
            edges |= {lo + s * stream - 1, lo + s * stream, lo + s * stream + 63, lo + s * stream + 64}
        edges |= {lo + n - 1}
    previous = ptocpu.get_num_threads()
    try:
        ptocpu.set_num_threads(threads)
        for at in sorted(e for e in edges if 0 <= e < size):
            bad = index.copy()
            bad[0, at] = 200 + at % 3 - (400 if at % 2 else 0)  # too large or negative
            with pytest.raises(ptocpu.IndexOutOfRange, match=rf"index value {bad[0, at]} at index position \(0, {at}\)"):
                ptocpu.scatter_(x.copy(), 1, bad, 1.0)
        ptocpu.scatter_(x, 1, index, 1.0)  # and no value out of range passes
        assert (x[0, : min(size, 200)] == 1).all() and not x[0, size:].any()
    finally:
        ptocpu.set_num_threads(previous)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("rows, cols", [(300, 500), (256, 200)])  # bounds above 256: a uint16 copy; up to 256: uint8
def test_large_index_rows_and_blocks(index_dtype, rows, cols):
    """Indices large enough for the narrowed (uint8 / uint16) copy, in row and block mode."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    narrowed = 1 << 20  # index sizes from which the bounds check also writes the narrowed copy
    width = -(-narrowed // rows)
    index = rng.integers(0, cols, size=(rows, width)).astype(index_dtype)
    src = rng.standard_normal((rows, width)).astype(np.float32)
    for reduce in REDUCES:
        assert_same_bits(ptocpu.scatter(x, 1, index, src, reduce=reduce), ref.scatter(x, 1, index, src, reduce))
    height = -(-narrowed // cols)
    index0 = rng.integers(0, rows, size=(height, cols)).astype(index_dtype)
    src0 = rng.standard_normal((height, cols)).astype(np.float32)
    for reduce in REDUCES:
        assert_same_bits(ptocpu.scatter(x, 0, index0, src0, reduce=reduce), ref.scatter(x, 0, index0, src0, reduce))


def test_error_on_a_view_leaves_the_base_unchanged():
    base = np.arange(48, dtype=np.float32).reshape(6, 8)
    before = base.copy()
    t = ptocpu.asarray(base)[1::2, ::3]
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"index value 3 at index position \(1, 2\)"):
        t.scatter_(0, np.array([[0, 1, 2], [1, 2, 3]]), 0.0)
    assert_same_bits(base, before)


def test_error_input_with_shared_elements():
    t = torch.zeros(1, 4).expand(3, 4)  # stride 0: three rows are one memory row
    with pytest.raises(ptocpu.ArgumentError, match=r"share memory"):
        ptocpu.scatter_(t, 1, torch.tensor([[0], [1], [2]]), 1.0)
    assert t.sum().item() == 0
    out = ptocpu.scatter(t, 1, torch.tensor([[0], [1], [2]]), 1.0)  # out of place is fine
    assert out.tolist() == [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]


def test_error_read_only_numpy_input():
    x = np.zeros((2, 2), np.float32)
    x.flags.writeable = False
    with pytest.raises(ptocpu.ArgumentError, match=r"read-only"):
        ptocpu.scatter_(x, 0, np.array([[0, 1]]), 1.0)
    assert ptocpu.scatter(x, 0, np.array([[0, 1]]), 1.0).tolist() == [[1, 0], [0, 1]]


def test_error_non_tensor_arguments():
    x, index = small()
    assert_raises_unchanged(ptocpu.DTypeError, r"scatter_: src must be a tensor, got str '2.0'", x, 0,
                            index, "2.0")
    assert_raises_unchanged(ptocpu.DTypeError, r"scatter_: index must be a tensor, got NoneType None", x, 0, None,
                            1.0)


# ---------------------------------------------------------------- tile rules (docs/kernel_model.md)
def test_tile_rank_must_match_input():
    x, index = small()
    with ptocpu.vec_tile_shapes(4):
        assert_raises_unchanged(ptocpu.TileError, r"tile shape \[4\] has rank 1 but the input has rank 2", x, 0,
                                index, 1.0)


def test_tile_must_cover_the_dim_axis():
    x, index = small()
    with ptocpu.vec_tile_shapes(2, 4):
        assert_raises_unchanged(ptocpu.TileError, r"tile\[0\] = 2 below max\(input.shape\[0\], index.shape\[0\]\) = 3",
                                x, 0, index, 1.0)
    with ptocpu.vec_tile_shapes(3, 4):
        assert_raises_unchanged(ptocpu.TileError, r"tile\[0\] = 3 below .* = 5", x, 0, np.zeros((5, 1), np.int64),
                                1.0)
    with ptocpu.vec_tile_shapes(3, 1):  # other axes may be split
        ptocpu.scatter_(x, 0, index, 1.0)


@pytest.mark.parametrize("platform,limit", [("ascend950", 253952), ("atlas_a2", 196608)])
def test_tile_ub_budget(platform, limit):
    x = np.zeros((64, 1024), np.float16)
    index = np.zeros((64, 1024), np.int64)
    src = np.zeros((64, 1024), np.float16)
    with ptocpu.platform(platform):
        # tensor src, add on fp16: input / src tiles count as fp32, + one padded index row
        for rows in range(1, 65):
            tile = (rows, 1024)
            need = (ub_bytes(tile, x.shape, 4) + ub_bytes(tile, index.shape, 8) + ub_bytes(tile, index.shape, 4)
                    + ub_bytes((1, 1024), (1, 1024), 8))
            with ptocpu.vec_tile_shapes(*tile):
                if need <= limit:
                    ptocpu.scatter_(x, 1, index, src, reduce="add")
                else:
                    assert_raises_unchanged(ptocpu.TileError, rf"needs {need} UB bytes .* has {limit}", x, 1, index,
                                            src, reduce="add")
                    break
        else:
            pytest.fail("no tile exceeded the budget")
        # scalar src with reduce None: input tile at 2 bytes + index tile
        tile = (16, 1024)
        need = ub_bytes(tile, x.shape, 2) + ub_bytes(tile, index.shape, 8)
        with ptocpu.vec_tile_shapes(*tile):
            if need <= limit:
                ptocpu.scatter_(x, 1, index, 1.0)
            else:
                assert_raises_unchanged(ptocpu.TileError, rf"needs {need} UB bytes", x, 1, index, 1.0)
