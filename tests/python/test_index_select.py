"""index_select (docs/ops/index_select.md) against numpy.take and torch.index_select, bit for bit, over every
dtype, input rank, dim, index rank and layout each platform allows; then one test per rule of
docs/ops/index_select.md, docs/platforms.md, docs/kernel_model.md, each checking the exception class and that the message names the value."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

import ptocpu

from helpers import DTYPES  # (ptocpu dtype, numpy / ml_dtypes type, torch dtype), docs/dtypes.md

BY_NAME = {d[0].name: d for d in DTYPES}

# docs/platforms.md, written out here (not read from ptocpu.platform_table()).
_A2_DTYPES = {"DT_INT8", "DT_INT16", "DT_INT32", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_FP16", "DT_FP32", "DT_BF16"}
PLATFORMS = {
    "cpu": dict(dtypes=set(BY_NAME), max_rank=8, max_index_rank=8, ub=None, empty_ok=True),
    "ascend950": dict(dtypes=_A2_DTYPES | {"DT_BOOL", "DT_FP8E4M3", "DT_FP8E5M2", "DT_FP8E8M0"},
                      max_rank=4, max_index_rank=2, ub=253952, empty_ok=False),
    "atlas_a3": dict(dtypes=_A2_DTYPES, max_rank=4, max_index_rank=2, ub=196608, empty_ok=False),
    "atlas_a2": dict(dtypes=_A2_DTYPES, max_rank=4, max_index_rank=2, ub=196608, empty_ok=False),
}
ASCEND = ["ascend950", "atlas_a3", "atlas_a2"]
INT32_MAX = 2 ** 31 - 1


def examples(fraction: float):
    """A share of the loaded hypothesis profile's examples (conftest.py), for big matrices."""
    return settings(max_examples=max(4, int(settings().max_examples * fraction)))


# ---------------------------------------------------------------------------------- helpers
def bits(a) -> np.ndarray:
    """The bits of an array (bool as uint8), C order, for bit-exact comparisons."""
    a = np.array(a, order="C")
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def random_bits(shape, npt, rng) -> np.ndarray:
    """Random bit patterns of the dtype (NaN payloads included); bool as 0 / 1."""
    n = int(np.prod(shape))
    if np.dtype(npt) == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    return rng.integers(0, 256, n * np.dtype(npt).itemsize, dtype=np.uint8).view(npt).reshape(shape)


def to_torch(a: np.ndarray, tdt) -> torch.Tensor:
    """A torch tensor with the bits of a contiguous numpy array (no DLPack, no ptocpu)."""
    a = np.ascontiguousarray(a)
    width = {1: (np.uint8, torch.uint8), 2: (np.int16, torch.int16), 4: (np.int32, torch.int32),
             8: (np.int64, torch.int64)}[a.dtype.itemsize]
    return torch.from_numpy(a.view(width[0]).copy()).view(tdt)


def torch_bits(x: torch.Tensor) -> np.ndarray:
    x = x.contiguous()
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    return x.view(width).numpy().view(np.dtype(f"u{x.element_size()}"))


LAYOUTS = ["contiguous", "transposed", "reversed", "sliced", "broadcast", "torch_transposed", "torch_sliced"]


def make_input(draw, shape, npt, tdt, rng, layouts=LAYOUTS):
    """(argument for ptocpu, numpy reference with the same values) in a drawn memory layout."""
    layout = draw(st.sampled_from(layouts), label="layout")
    r = len(shape)
    if layout == "contiguous":
        a = random_bits(shape, npt, rng)
        return a, a
    if layout in ("transposed", "torch_transposed"):
        perm = draw(st.permutations(range(r)), label="perm")
        base = random_bits([shape[p] for p in perm], npt, rng)
        inverse = np.argsort(perm)
        ref = base.transpose(inverse)
        if layout == "torch_transposed":
            return to_torch(base, tdt).permute(*inverse.tolist()), ref
        return ref, ref
    if layout == "reversed":
        a = random_bits(shape, npt, rng)
        key = tuple(slice(None, None, -1) if draw(st.booleans()) else slice(None) for _ in shape)
        return a[key], a[key]
    if layout in ("sliced", "torch_sliced"):
        steps = [draw(st.integers(1, 3)) for _ in shape]
        starts = [draw(st.integers(0, 2)) for _ in shape]
        base = random_bits([n * s + o for n, s, o in zip(shape, steps, starts)], npt, rng)
        key = tuple(slice(o, o + n * s, s) for n, s, o in zip(shape, steps, starts))
        if layout == "torch_sliced":
            return to_torch(base, tdt)[key], base[key]
        return base[key], base[key]
    # broadcast: some dims have stride 0
    small = [1 if draw(st.booleans()) else n for n in shape]
    ref = np.broadcast_to(random_bits(small, npt, rng), shape)
    return ref, ref


def make_index(draw, shape, bound, rng):
    """(argument for ptocpu, numpy int64 reference) with values in [0, bound)."""
    idx = rng.integers(0, bound, int(np.prod(shape))).reshape(shape) if bound else np.zeros(shape, np.int64)
    form = draw(st.sampled_from(["int64", "int32", "torch64", "torch32", "reversed", "list", "tensor", "broadcast"]),
                label="index form")
    if form == "broadcast":  # every index row the same: a stride-0 view
        idx = np.broadcast_to(idx.reshape(-1)[:shape[-1]], shape) if idx.size else idx
        return idx, idx
    if form == "int32":
        return idx.astype(np.int32), idx
    if form == "torch64":
        return torch.from_numpy(idx.copy()), idx
    if form == "torch32":
        return torch.from_numpy(idx.astype(np.int32)), idx
    if form == "reversed":
        held = np.ascontiguousarray(idx[(slice(None, None, -1),) * idx.ndim])
        return held[(slice(None, None, -1),) * idx.ndim], idx
    if form == "list":
        return idx.tolist(), idx
    if form == "tensor":
        return ptocpu.asarray(idx.astype(np.int32)), idx
    return idx, idx


def _torch_index_select_works(npt, tdt) -> bool:
    try:
        for shape, dim in (((2,), 0), ((2, 2), 0), ((2, 2), 1)):
            torch.index_select(to_torch(np.zeros(shape, npt), tdt), dim, torch.tensor([1]))
        return True
    except (NotImplementedError, RuntimeError):
        return False


# torch.index_select lacks some dtypes (uint16 / 32 / 64 in torch 2.13): numpy.take covers those.
TORCH_OK = {d[0] for d in DTYPES if _torch_index_select_works(d[1], d[2])}


def check_against_references(out, ref: np.ndarray, dim: int, idx: np.ndarray, dt, tdt):
    expected = np.take(ref, idx, axis=dim)
    assert isinstance(out, ptocpu.Tensor)
    assert out.dtype == dt
    assert out.shape == expected.shape == ref.shape[:dim] + idx.shape + ref.shape[dim + 1:]
    got = bits(out.numpy())
    assert np.array_equal(got, bits(expected))
    if idx.ndim == 1 and dt in TORCH_OK:
        t = torch.index_select(to_torch(ref, tdt), dim, torch.from_numpy(idx.astype(np.int64)))
        assert np.array_equal(got, torch_bits(t).reshape(expected.shape))


# ------------------------------------------------------------ cpu: every dtype x input rank
@st.composite
def cpu_case(draw, rank):
    max_dim = {1: 9, 2: 7, 3: 5, 4: 4}.get(rank, 2)
    shape = draw(st.lists(st.integers(1, max_dim), min_size=rank, max_size=rank), label="shape")
    dim = draw(st.integers(-rank, rank - 1), label="dim")
    index_rank = draw(st.integers(1, 3), label="index rank")
    index_shape = draw(st.lists(st.integers(1, 4), min_size=index_rank, max_size=index_rank), label="index shape")
    seed = draw(st.integers(0, 2 ** 32 - 1), label="seed")
    return shape, dim, index_shape, seed


@pytest.mark.parametrize("rank", range(1, 9))
@pytest.mark.parametrize("dtype", list(BY_NAME))
@examples(0.5)
@given(data=st.data())
def test_cpu_matches_numpy_and_torch(dtype, rank, data):
    dt, npt, tdt = BY_NAME[dtype]
    shape, dim, index_shape, seed = data.draw(cpu_case(rank))
    rng = np.random.default_rng(seed)
    x, ref = make_input(data.draw, shape, npt, tdt, rng)
    d = dim % rank
    index, idx = make_index(data.draw, index_shape, shape[d], rng)
    if rank - 1 + len(index_shape) > 8:  # docs/platforms.md: output rank <= 8 on cpu
        with pytest.raises(ptocpu.ArgumentError, match=f"output rank {rank - 1 + len(index_shape)}"):
            ptocpu.index_select(x, dim, index)
        return
    out = ptocpu.index_select(x, dim, index)
    check_against_references(out, ref, d, idx, dt, tdt)


@given(data=st.data())
def test_cpu_large_inputs_every_path(data):
    """Sizes that take the kernels' parallel and wide-row paths (rows of 1 .. 4096 elements)."""
    name = data.draw(st.sampled_from(["DT_INT8", "DT_FP16", "DT_FP32", "DT_FP64", "DT_BF16"]))
    dt, npt, tdt = BY_NAME[name]
    rows = data.draw(st.sampled_from([1, 3, 64, 700]))
    inner = data.draw(st.sampled_from([1, 2, 7, 33, 512, 4096]))
    assume(rows * inner <= 2 ** 16)  # at most 2.6 M elements
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    x, ref = make_input(data.draw, [rows, 40, inner], npt, tdt, rng, ["contiguous", "transposed", "reversed", "sliced"])
    dim = data.draw(st.integers(-3, 2))
    index, idx = make_index(data.draw, [data.draw(st.integers(1, 300))], ref.shape[dim], rng)
    check_against_references(ptocpu.index_select(x, dim, index), ref, dim % 3, idx, dt, tdt)


# ------------------------------------------------------------- ascend profiles: their tables
@pytest.mark.parametrize("platform,dtype", [(p, d) for p in ASCEND for d in BY_NAME if d in PLATFORMS[p]["dtypes"]])
@examples(0.7)
@given(data=st.data())
def test_ascend_matches_numpy_and_torch(platform, dtype, data):
    dt, npt, tdt = BY_NAME[dtype]
    rank = data.draw(st.integers(1, 4), label="rank")
    shape = data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank), label="shape")
    dim = data.draw(st.integers(-rank, rank - 1), label="dim")
    index_shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=2), label="index shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    x, ref = make_input(data.draw, shape, npt, tdt, rng)
    index, idx = make_index(data.draw, index_shape, shape[dim % rank], rng)
    with ptocpu.platform(platform):
        out = ptocpu.index_select(x, dim, index)
    check_against_references(out, ref, dim % rank, idx, dt, tdt)


@pytest.mark.parametrize("platform", list(PLATFORMS))
@pytest.mark.parametrize("dtype", list(BY_NAME))
def test_dtype_table(platform, dtype):
    dt, npt, tdt = BY_NAME[dtype]
    x = random_bits((3, 4), npt, np.random.default_rng(0))
    with ptocpu.platform(platform):
        if dtype in PLATFORMS[platform]["dtypes"]:
            out = ptocpu.index_select(x, 1, np.array([3, 0]))
            assert bits(out.numpy()).tolist() == bits(x[:, [3, 0]]).tolist()
        else:
            with pytest.raises(ptocpu.DTypeError) as e:
                ptocpu.index_select(x, 1, np.array([3, 0]))
            assert isinstance(e.value, TypeError)
            msg = str(e.value)
            assert msg.startswith("index_select:") and dtype in msg and platform in msg
            assert "DT_FP32" in msg  # says what is allowed


def test_fp8_on_ascend950_but_not_atlas_a2():
    x = np.array([[1.0, -2.0], [0.5, 448.0]], dtype=ml_dtypes.float8_e4m3fn)
    with ptocpu.platform("ascend950"):
        assert ptocpu.index_select(x, 0, [1]).numpy().astype(np.float32).tolist() == [[0.5, 448.0]]
    with ptocpu.platform("atlas_a2"), pytest.raises(ptocpu.DTypeError, match="DT_FP8E4M3.*atlas_a2"):
        ptocpu.index_select(x, 0, [1])


# ------------------------------------------------------------------------------ docs/ops/index_select.md seed
SEED_X = [[0.1427, 0.0231, -0.5414, -1.0009], [-0.4664, 0.2647, -0.1228, -1.1068],
          [-1.1734, -0.6571, 0.7230, -0.6004]]


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_seed_example(platform):
    x = np.array(SEED_X, dtype=np.float32)
    with ptocpu.platform(platform):
        rows = ptocpu.index_select(x, 0, np.array([0, 2]))
        cols = ptocpu.index_select(x, 1, np.array([0, 2]))
    assert rows.shape == (2, 4) and cols.shape == (3, 2)
    f = np.float32
    assert rows.numpy().tolist() == [[f(0.1427), f(0.0231), f(-0.5414), f(-1.0009)],
                                     [f(-1.1734), f(-0.6571), f(0.7230), f(-0.6004)]]
    assert cols.numpy().tolist() == [[f(0.1427), f(-0.5414)], [f(-0.4664), f(-0.1228)], [f(-1.1734), f(0.7230)]]
    t = torch.tensor(SEED_X)
    assert torch.equal(torch.from_dlpack(rows), torch.index_select(t, 0, torch.tensor([0, 2])))
    assert torch.equal(torch.from_dlpack(cols), torch.index_select(t, 1, torch.tensor([0, 2])))


# ---------------------------------------------------------------------------- empty tensors
@pytest.mark.parametrize("shape,dim,index_shape", [((0, 3), 0, (2,)), ((0, 3), 1, (2,)), ((2, 3), 0, (0,)),
                                                     ((2, 0, 4), 2, (3, 0)), ((4, 0), 0, (2, 2))])
def test_empty_tensors_on_cpu(shape, dim, index_shape):
    x = np.zeros(shape, np.float32)
    bound = shape[dim]
    if bound == 0 and int(np.prod(index_shape)) > 0:
        # any index value is out of range [0, 0)
        with pytest.raises(ptocpu.IndexOutOfRange, match=r"\[0, 0\)"):
            ptocpu.index_select(x, dim, np.zeros(index_shape, np.int64))
        return
    idx = np.zeros(index_shape, np.int64)
    out = ptocpu.index_select(x, dim, idx)
    assert out.shape == np.take(x, idx, axis=dim).shape


@pytest.mark.parametrize("platform", ASCEND)
def test_empty_inputs_rejected_on_ascend(platform):
    with ptocpu.platform(platform):
        with pytest.raises(ptocpu.ArgumentError, match=r"input shape \[2, 0\] is empty.*" + platform) as e:
            ptocpu.index_select(np.zeros((2, 0), np.float32), 0, [1])
        assert isinstance(e.value, ValueError)
        with pytest.raises(ptocpu.ArgumentError, match=r"index shape \[0\] is empty"):
            ptocpu.index_select(np.zeros((2, 3), np.float32), 0, np.zeros(0, np.int64))


# ------------------------------------------------------------------------ one test per rule
def test_index_value_out_of_range_names_value_and_position():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(ptocpu.IndexOutOfRange) as e:
        ptocpu.index_select(x, 0, np.array([0, 7], np.int64))
    assert isinstance(e.value, IndexError) and isinstance(e.value, ptocpu.Error)
    assert str(e.value) == ("index_select: index value 7 at index position (1,) is out of range [0, 3) "
                            "for dim 0 of input shape [3, 4]")
    with pytest.raises(IndexError, match=r"index value 4 at index position \(1, 0\) is out of range \[0, 4\) for dim 1"):
        ptocpu.index_select(x, -1, np.array([[0, 1], [4, 2]], np.int32))


def test_negative_index_values_are_errors_not_wrapped():
    x = np.arange(12, dtype=np.int16).reshape(3, 4)
    for idx in (np.array([-1], np.int64), np.array([2, -3], np.int32), [0, -2 ** 40]):
        with pytest.raises(ptocpu.IndexOutOfRange, match=r"index value -\d+ at index position"):
            ptocpu.index_select(x, 0, idx)


def test_first_bad_index_value_is_reported_in_large_indices():
    x = np.zeros((5, 2), np.float32)
    idx = np.zeros(300000, np.int64)
    idx[123457] = 5
    idx[200000] = -1
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"index value 5 at index position \(123457,\)"):
        ptocpu.index_select(x, 0, idx)
    idx = idx.reshape(600, 500).astype(np.int32)
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"index value 5 at index position \(246, 457\)"):
        ptocpu.index_select(x, 0, idx)


def test_inputs_unchanged_after_a_failed_call():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([2, 9])
    x0, i0 = x.copy(), idx.copy()
    with pytest.raises(ptocpu.IndexOutOfRange):
        ptocpu.index_select(x, 0, idx)
    assert (x == x0).all() and (idx == i0).all()


@pytest.mark.parametrize("index", [np.array([0.0, 1.0], np.float32), np.array([0, 1], np.int16),
                                   np.array([0, 1], np.uint8), np.array([True, False]), [0.0, 1.0],
                                   np.array([0, 1], np.uint64), torch.tensor([0.0])])
def test_index_dtype_must_be_int32_or_int64(index):
    with pytest.raises(ptocpu.DTypeError) as e:
        ptocpu.index_select(np.zeros((3, 4), np.float32), 0, index)
    assert isinstance(e.value, TypeError)
    got = ptocpu.asarray(index).dtype.name
    assert str(e.value).startswith("index_select: index dtype " + got)
    assert "DT_INT32, DT_INT64" in str(e.value)


@pytest.mark.parametrize("dim", [2, -3, 100, -(2 ** 40)])
def test_dim_out_of_range(dim):
    with pytest.raises(ptocpu.IndexOutOfRange) as e:
        ptocpu.index_select(np.zeros((3, 4), np.float32), dim, [0])
    assert isinstance(e.value, IndexError)
    assert f"dim {dim} is out of range [-2, 2)" in str(e.value)


@pytest.mark.parametrize("dim,shown", [(0.0, "0.0"), ("0", "'0'"), (None, "None"), (True, "True"),
                                       ([0], "[0]"), (np.float64(1.0), "1.0")])
def test_non_integer_dim_is_a_dtype_error(dim, shown):
    with pytest.raises(ptocpu.DTypeError) as e:
        ptocpu.index_select(np.zeros((3, 4), np.float32), dim, [0])
    assert isinstance(e.value, TypeError)
    assert str(e.value).startswith("index_select: dim must be an integer") and shown in str(e.value)


def test_numpy_and_torch_integer_dims_are_accepted():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    for dim in (np.int64(1), np.int32(-1), torch.tensor(1)):
        assert ptocpu.index_select(x, dim, [2]).numpy().tolist() == [[2], [6], [10]]


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_rank_limits(platform):
    limits = PLATFORMS[platform]
    r, k = limits["max_rank"], limits["max_index_rank"]
    ok = np.zeros((1,) * r, np.float32)
    with ptocpu.platform(platform):
        assert ptocpu.index_select(ok, 0, np.zeros((1,) * min(k, 8 - r + 1), np.int64)).ndim <= 8
        cases = [
            (np.zeros((1,) * (r + 1), np.float32), np.zeros(1, np.int64), f"input rank {r + 1} is out of range [1, {r}]"),
            (np.zeros((), np.float32), np.zeros(1, np.int64), f"input rank 0 is out of range [1, {r}]"),
            (np.zeros(2, np.float32), np.zeros((), np.int64), f"index rank 0 is out of range [1, {k}]"),
        ]
        if k < 8:
            cases.append((np.zeros(2, np.float32), np.zeros((1,) * (k + 1), np.int64),
                          f"index rank {k + 1} is out of range [1, {k}]"))
        else:  # cpu: output rank <= 8
            cases.append((np.zeros((1,) * 4, np.float32), np.zeros((1,) * 6, np.int64), "output rank 9 is out of range [1, 8]"))
        for x, idx, message in cases:
            with pytest.raises(ptocpu.ArgumentError) as e:
                ptocpu.index_select(x, 0, idx)
            assert isinstance(e.value, ValueError)
            assert str(e.value).startswith("index_select: ") and message in str(e.value) and platform in str(e.value)


@pytest.mark.parametrize("platform", ASCEND)
def test_extent_above_int32_max_on_ascend(platform):
    """Zero-stride broadcast views give huge extents without memory."""
    dim_too_big = np.broadcast_to(np.zeros(1, np.int8), (INT32_MAX + 1,))
    numel_too_big = np.broadcast_to(np.zeros(1, np.int8), (65536, 32769))
    just_fits = np.broadcast_to(np.ones(1, np.int8), (INT32_MAX,))
    wide = np.broadcast_to(np.ones(1, np.int8), (1, 2 ** 30))
    with ptocpu.platform(platform):
        with pytest.raises(ptocpu.ArgumentError, match=rf"input shape \[2147483648\] has a dim of 2147483648 .*{INT32_MAX}"):
            ptocpu.index_select(dim_too_big, 0, [0])
        with pytest.raises(ptocpu.ArgumentError, match=rf"input shape \[65536, 32769\] has 2147549184 elements.*{INT32_MAX}"):
            ptocpu.index_select(numel_too_big, 0, [0])
        with pytest.raises(ptocpu.ArgumentError, match=r"output shape \[2, 1073741824\] has 2147483648 elements"):
            ptocpu.index_select(wide, 0, [0, 0])
        assert ptocpu.index_select(just_fits, 0, [5, INT32_MAX - 1]).numpy().tolist() == [1, 1]
        assert ptocpu.index_select(wide, 1, [7]).numpy().tolist() == [[1]]


def test_no_extent_limit_on_cpu():
    huge = np.broadcast_to(np.arange(3, dtype=np.int8), (2 ** 20, 2 ** 12, 3))  # 2^33 elements
    out = ptocpu.index_select(huge, 0, [0, 2 ** 20 - 1])
    assert out.shape == (2, 2 ** 12, 3) and out.numpy()[1, 4095].tolist() == [0, 1, 2]


# ------------------------------------------------------------------------------ tile rules
def tile_bytes(tile, out_shape, itemsize):
    """docs/kernel_model.md: prod(t[:-1]) * roundup(t[-1] * itemsize, 32), t = tile clipped to the output."""
    t = [min(a, b) for a, b in zip(tile, out_shape)]
    rows = int(np.prod(t[:-1])) if len(t) > 1 else 1
    return rows * ((t[-1] * itemsize + 31) // 32 * 32)


@pytest.mark.parametrize("platform", list(PLATFORMS))
def test_tile_rank_must_equal_output_rank(platform):
    x = np.zeros((4, 8), np.float32)
    with ptocpu.platform(platform):
        for tile, index in (((4,), [0]), ((1, 4, 8), [0]), ((2, 2), np.zeros((2, 2), np.int64))):
            with ptocpu.vec_tile_shapes(*tile):
                out_rank = 1 + np.asarray(index).ndim
                with pytest.raises(ptocpu.TileError) as e:
                    ptocpu.index_select(x, 0, index)
                assert isinstance(e.value, ValueError)
                msg = str(e.value)
                assert msg.startswith("index_select: tile shape [" + ", ".join(map(str, tile)) + "]")
                assert f"rank {len(tile)}" in msg and f"rank {out_rank}" in msg


@pytest.mark.parametrize("platform", ASCEND)
@pytest.mark.parametrize("dtype", ["DT_INT8", "DT_FP16", "DT_FP32"])
def test_tile_ub_limit_with_32_byte_padding(platform, dtype):
    ub = PLATFORMS[platform]["ub"]
    dt, npt, tdt = BY_NAME[dtype]
    size = np.dtype(npt).itemsize
    width = 1001  # 1001 * size bytes is not a multiple of 32: padding decides
    padded = (width * size + 31) // 32 * 32
    rows_fit = ub // padded
    x = np.broadcast_to(np.ones(1, npt), (1, 4096))
    idx = np.zeros(rows_fit + 5, np.int64)  # output [rows_fit + 5, 4096]
    with ptocpu.platform(platform):
        with ptocpu.vec_tile_shapes(rows_fit, width):
            assert tile_bytes((rows_fit, width), (rows_fit + 5, 4096), size) <= ub
            assert ptocpu.index_select(x, 0, idx).shape == (rows_fit + 5, 4096)
        with ptocpu.vec_tile_shapes(rows_fit + 1, width):
            need = tile_bytes((rows_fit + 1, width), (rows_fit + 5, 4096), size)
            assert need > ub
            with pytest.raises(ptocpu.TileError) as e:
                ptocpu.index_select(x, 0, idx)
            msg = str(e.value)
            assert msg.startswith("index_select: tile shape [" + f"{rows_fit + 1}, {width}]")
            assert str(need) in msg and str(ub) in msg and platform in msg


@pytest.mark.parametrize("platform", ["ascend950", "atlas_a2"])
def test_tile_over_ub_only_because_of_padding(platform):
    """fp16 rows of 1001 elements: 2002 bytes, 2016 padded. Choose rows so that the unpadded
    size fits the UB and the padded one does not."""
    ub = PLATFORMS[platform]["ub"]
    rows = ub // 2002  # 126 (ascend950) / 98 (atlas_a2)
    assert rows * 2002 <= ub < rows * 2016
    x = np.broadcast_to(np.ones(1, np.float16), (1, 1001))
    with ptocpu.platform(platform), ptocpu.vec_tile_shapes(rows, 1001):
        with pytest.raises(ptocpu.TileError, match=rf"needs {rows * 2016} UB bytes .*{ub} UB bytes"):
            ptocpu.index_select(x, 0, np.zeros(rows, np.int64))
        # the same tile over a narrower output is clipped to it and fits
        narrow = np.broadcast_to(np.ones(1, np.float16), (1, 992))
        assert rows * 992 * 2 <= ub
        assert ptocpu.index_select(narrow, 0, np.zeros(rows, np.int64)).shape == (rows, 992)


@pytest.mark.parametrize("platform", ASCEND)
@examples(1.5)
@given(data=st.data())
def test_tile_ub_rule_matches_the_formula(platform, data):
    ub = PLATFORMS[platform]["ub"]
    dtype = data.draw(st.sampled_from(["DT_INT8", "DT_UINT16", "DT_BF16", "DT_FP32"]))
    dt, npt, tdt = BY_NAME[dtype]
    in_rank = data.draw(st.integers(1, 3))
    shape = data.draw(st.lists(st.integers(1, 600), min_size=in_rank, max_size=in_rank))
    dim = data.draw(st.integers(0, in_rank - 1))
    index_shape = data.draw(st.lists(st.integers(1, 300), min_size=1, max_size=2))
    out_shape = tuple(shape[:dim]) + tuple(index_shape) + tuple(shape[dim + 1:])
    assume(int(np.prod(out_shape)) <= INT32_MAX)  # beyond, the extent rule fires first
    tile = data.draw(st.tuples(*[st.integers(1, 2 * n) for n in out_shape]))
    need = tile_bytes(tile, out_shape, np.dtype(npt).itemsize)
    x = np.broadcast_to(np.ones(1, npt), shape)  # no memory behind the input
    idx = np.zeros(index_shape, np.int64)
    with ptocpu.platform(platform), ptocpu.vec_tile_shapes(*tile):
        if need > ub:
            with pytest.raises(ptocpu.TileError, match=rf"needs {need} UB bytes"):
                ptocpu.index_select(x, dim, idx)
        elif int(np.prod(out_shape)) <= 4_000_000:
            assert ptocpu.index_select(x, dim, idx).shape == out_shape


def test_no_ub_limit_on_cpu_and_no_tile_rule_without_a_tile():
    x = np.zeros((2, 4096), np.float32)
    idx = np.zeros(512, np.int64)
    with ptocpu.vec_tile_shapes(512, 4096):  # 8 MiB of tile: no UB limit on cpu
        assert ptocpu.index_select(x, 0, idx).shape == (512, 4096)
    for platform in ASCEND:
        with ptocpu.platform(platform):  # no tile shape set: ops tile themselves
            assert ptocpu.index_select(x, 0, idx).shape == (512, 4096)


def test_tile_is_clipped_to_the_output():
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(10 ** 6, 10 ** 6):
        assert ptocpu.index_select(np.zeros((3, 5), np.float32), 0, [1, 2]).shape == (2, 5)
