"""Differential fuzzing of every operator against numpy: random shapes (empty ones included),
every dtype, dims, index values, masks, strides, and inputs that are strided / reversed /
transposed numpy views. Data movement is compared bit for bit (NaN payloads included);
scatter's add / multiply against an accumulator reference (docs/ops/*.md). Each test is bounded
by its example count and takes a few seconds."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptocpu

DTYPES = [ptocpu.DT_INT8, ptocpu.DT_INT16, ptocpu.DT_INT32, ptocpu.DT_INT64, ptocpu.DT_UINT8, ptocpu.DT_UINT16,
          ptocpu.DT_UINT32, ptocpu.DT_UINT64, ptocpu.DT_BOOL, ptocpu.DT_FP16, ptocpu.DT_BF16, ptocpu.DT_FP32,
          ptocpu.DT_FP64, ptocpu.DT_FP8E4M3, ptocpu.DT_FP8E5M2, ptocpu.DT_FP8E8M0]
NUMPY = {ptocpu.DT_INT8: np.int8, ptocpu.DT_INT16: np.int16, ptocpu.DT_INT32: np.int32, ptocpu.DT_INT64: np.int64,
         ptocpu.DT_UINT8: np.uint8, ptocpu.DT_UINT16: np.uint16, ptocpu.DT_UINT32: np.uint32,
         ptocpu.DT_UINT64: np.uint64, ptocpu.DT_BOOL: np.bool_, ptocpu.DT_FP16: np.float16,
         ptocpu.DT_BF16: ml_dtypes.bfloat16, ptocpu.DT_FP32: np.float32, ptocpu.DT_FP64: np.float64,
         ptocpu.DT_FP8E4M3: ml_dtypes.float8_e4m3fn, ptocpu.DT_FP8E5M2: ml_dtypes.float8_e5m2,
         ptocpu.DT_FP8E8M0: ml_dtypes.float8_e8m0fnu}
FUZZ = settings(max_examples=max(150, settings.default.max_examples), deadline=None)  # "thorough" runs more

dtypes = st.sampled_from(DTYPES).map(lambda d: np.dtype(NUMPY[d]))
shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4)


def bits(a) -> np.ndarray:
    a = a.numpy() if isinstance(a, ptocpu.Tensor) else np.asarray(a)
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}") if a.dtype != np.bool_ else a


def assert_bits(got, want: np.ndarray):
    g = got.numpy() if isinstance(got, ptocpu.Tensor) else got
    assert g.dtype == want.dtype and g.shape == want.shape, (g.dtype, g.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(bits(g), bits(want))


def random_data(seed: int, shape, dt: np.dtype) -> np.ndarray:
    """Any bit pattern of the dtype (NaNs and infinities too); bools are 0 / 1."""
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    raw = rng.integers(0, 256, size=(*shape, dt.itemsize), dtype=np.uint8)
    return raw.view(dt).reshape(shape)


@st.composite
def arrays(draw, dt=None, shape=None, min_rank=1, max_rank=4):
    """A numpy array of `shape`, often a view: every axis strided (maybe reversed) inside a
    larger buffer, and sometimes transposed back into place."""
    dt = dt if dt is not None else draw(dtypes)
    shape = list(shape) if shape is not None else draw(st.lists(st.integers(0, 4), min_size=min_rank, max_size=max_rank))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    kind = draw(st.sampled_from(["contiguous", "strided", "transposed"]))
    if kind == "contiguous" or not shape:  # (x[()] of a 0-d array is a numpy scalar)
        return random_data(seed, shape, dt)
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in shape]
    base = random_data(seed, [n * abs(s) + 1 for n, s in zip(shape, steps)], dt)
    view = base[tuple(slice(None, None, s) for s in steps)][tuple(slice(0, n) for n in shape)]
    if kind == "transposed" and len(shape) > 1:  # the same values with permuted strides
        order = draw(st.permutations(range(len(shape))))
        view = np.ascontiguousarray(view.transpose(order)).transpose(np.argsort(order))
    assert view.shape == tuple(shape)
    return view


@st.composite
def index_arrays(draw, shape, upper: int):
    """An int32 / int64 index of `shape` with values in [0, upper), maybe a reversed view."""
    dt = draw(st.sampled_from([np.int32, np.int64]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    n = int(np.prod(shape))
    values = np.random.default_rng(seed).integers(0, max(upper, 1), size=n).astype(dt).reshape(shape)
    if draw(st.booleans()) and values.ndim:
        values = np.ascontiguousarray(values[::-1])[::-1]  # a negative stride on axis 0
    return values


# ------------------------------------------------------------------------------- index_select
@st.composite
def index_select_cases(draw):
    x = draw(arrays())
    dim = draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[dim]
    index_shape = draw(st.lists(st.integers(0 if n else 0, 4 if n else 0), min_size=1, max_size=2))
    return x, dim, draw(index_arrays(index_shape, n))


@FUZZ
@given(index_select_cases())
def test_index_select(case):
    x, dim, index = case
    assert_bits(ptocpu.index_select(x, dim, index), np.take(x, index, axis=dim))


@FUZZ
@given(index_select_cases(), st.integers(0, 2 ** 31 - 1), st.booleans())
def test_index_select_out_of_range_values(case, position, negative):
    x, dim, index = case
    if index.size == 0:
        return
    bad = index.copy()
    bad.reshape(-1)[position % bad.size] = -1 if negative else x.shape[dim]
    with pytest.raises(ptocpu.IndexOutOfRange, match="index_select: index value"):
        ptocpu.index_select(x, dim, bad)


# ------------------------------------------------------------------------ interleave / deinterleave
@st.composite
def pairs(draw):
    dt = draw(dtypes)
    shape = draw(shapes)
    shape[-1] = 2 * draw(st.integers(0, 3))
    return draw(arrays(dt, shape)), draw(arrays(dt, shape))


@FUZZ
@given(pairs())
def test_interleave(pair):
    a, b = pair
    n = a.shape[-1]
    stream = np.stack([a, b], axis=-1).reshape(*a.shape[:-1], 2 * n)
    out0, out1 = ptocpu.interleave(a, b)
    assert_bits(out0, stream[..., :n])
    assert_bits(out1, stream[..., n:])


@FUZZ
@given(pairs(), st.booleans())
def test_deinterleave(pair, two_inputs):
    a, b = pair
    c = np.concatenate([a, b], axis=-1) if two_inputs else a
    out0, out1 = ptocpu.deinterleave(a, b) if two_inputs else ptocpu.deinterleave(a)
    assert_bits(out0, c[..., 0::2])
    assert_bits(out1, c[..., 1::2])


# ---------------------------------------------------------------------------- scatter_ / scatter
FP8 = {np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2), np.dtype(ml_dtypes.float8_e8m0fnu)}


def accumulator(dt: np.dtype) -> np.dtype:
    """fp32 for fp16 / bf16 / fp32, fp64 for fp64, the dtype itself for integers."""
    return np.dtype(np.float32) if dt.kind == "f" and dt.itemsize < 8 or dt == ml_dtypes.bfloat16 else dt


def finite_values(seed: int, shape, dt: np.dtype, reduce) -> np.ndarray:
    """Values for add / multiply: integers of any size (they wrap), floats of modest size."""
    rng = np.random.default_rng(seed)
    if dt.kind in "iu":
        return random_data(seed, shape, dt)
    if reduce == "multiply":
        return rng.uniform(0.5, 1.5, size=shape).astype(np.float32).astype(dt)
    return (rng.standard_normal(size=shape) * 4).astype(np.float32).astype(dt)


def scatter_reference(x: np.ndarray, dim: int, index: np.ndarray, src, reduce) -> np.ndarray:
    """Position by position in row-major order; add / multiply in the accumulator, rounded once."""
    out = x.copy()
    acc = out.astype(accumulator(x.dtype)) if reduce else None
    touched = np.zeros(x.shape, bool)
    with np.errstate(all="ignore"):  # integers wrap, floats may overflow
        for p in np.ndindex(*index.shape):
            q = list(p)
            q[dim] = int(index[p])
            q = tuple(q)
            v = src if np.ndim(src) == 0 else src[p]
            touched[q] = True
            if reduce is None:
                out[q] = v
            elif reduce == "add":
                acc[q] = acc[q] + np.asarray(v).astype(acc.dtype)
            else:
                acc[q] = acc[q] * np.asarray(v).astype(acc.dtype)
        if reduce:
            out[touched] = acc[touched].astype(x.dtype)
    return out


def scalar_for(dt: np.dtype, seed: int):
    """A scalar exact in the dtype, so the reference needs no conversion rules."""
    rng = np.random.default_rng(seed)
    if dt == np.bool_:
        return bool(rng.integers(0, 2))
    if dt.kind in "iu":
        return int(rng.integers(0 if dt.kind == "u" else -100, 100))
    if dt == ml_dtypes.float8_e8m0fnu:
        return 2.0
    return float(rng.choice([2.0, -1.5, 0.375, 3.0, 0.0]))


@st.composite
def scatter_cases(draw):
    dt = draw(dtypes)
    reduce = None if dt == np.bool_ or dt in FP8 else draw(st.sampled_from([None, "add", "multiply"]))
    x_shape = draw(shapes)
    rank = len(x_shape)
    dim = draw(st.integers(-rank, rank - 1))
    d = dim % rank
    index_shape = [draw(st.integers(0, n)) if a != d else draw(st.integers(0, 4 if x_shape[d] else 0))
                   for a, n in enumerate(x_shape)]
    index = draw(index_arrays(index_shape, x_shape[d]))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    x = draw(arrays(dt, x_shape)) if reduce is None else finite_values(seed, x_shape, dt, reduce)
    if draw(st.booleans()):
        src = scalar_for(dt, seed)
    else:
        src_shape = [n + draw(st.integers(0, 1)) for n in index_shape]
        src = draw(arrays(dt, src_shape)) if reduce is None else finite_values(seed + 1, src_shape, dt, reduce)
    return x, dim, index, src, reduce


def same_up_to_nan(got: np.ndarray, want: np.ndarray):
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
        return
    both_nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    same = (bits(got) == bits(want)) | both_nan
    assert same.all(), f"{(~same).sum()} elements differ"


@FUZZ
@given(scatter_cases())
def test_scatter_and_scatter_in_place(case):
    x, dim, index, src, reduce = case
    d = dim % x.ndim
    want = scatter_reference(x, d, index, src, reduce)
    original = x.copy()
    out = ptocpu.scatter(x, dim, index, src, reduce=reduce)
    same_up_to_nan(out.numpy(), want)
    assert_bits(x, original)  # scatter leaves its input alone
    # In place into every other element of a larger buffer: the elements between stay as they were.
    buffer = random_data(0, (*x.shape[:-1], 2 * x.shape[-1]), x.dtype)
    target = buffer[..., ::2]
    target[...] = x
    neighbours = buffer[..., 1::2].copy()
    returned = ptocpu.scatter_(target, dim, index, src, reduce=reduce)
    same_up_to_nan(target, want)
    same_up_to_nan(returned.numpy(), want)
    assert_bits(buffer[..., 1::2], neighbours)


# ------------------------------------------------------------------------------- strided_slice
@st.composite
def strided_slice_cases(draw):
    x = draw(arrays(min_rank=0, max_rank=4))
    kinds = []
    consumed = 0
    for _ in range(draw(st.integers(0, x.ndim + 2))):
        allowed = ["new_axis"] + (["slice", "slice", "shrink"] if consumed < x.ndim else [])
        if "ellipsis" not in kinds:
            allowed.append("ellipsis")
        kind = draw(st.sampled_from(allowed))
        consumed += kind in ("slice", "shrink")
        kinds.append(kind)
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = shrink_mask = new_axis_mask = 0
    for i, kind in enumerate(kinds):
        begin.append(draw(st.integers(-6, 6)))
        end.append(draw(st.integers(-6, 6)))
        strides.append(draw(st.sampled_from([1, 2, 3, -1, -2, -3])))
        begin_mask |= draw(st.booleans()) << i
        end_mask |= draw(st.booleans()) << i
        ellipsis_mask |= (kind == "ellipsis") << i
        shrink_mask |= (kind == "shrink") << i
        new_axis_mask |= (kind == "new_axis") << i
    return x, begin, end, strides, dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                                        shrink_axis_mask=shrink_mask, new_axis_mask=new_axis_mask), kinds


def numpy_key(x: np.ndarray, begin, end, strides, masks, kinds):
    """The slots as a numpy index; None when a shrink index is out of range (an IndexError).
    Dims a slot refers to are counted the way numpy counts them (ellipsis takes the rest)."""
    key = []
    dims_after_ellipsis = sum(k in ("slice", "shrink") for k in kinds[kinds.index("ellipsis") + 1:]) \
        if "ellipsis" in kinds else 0
    dim = 0
    for i, kind in enumerate(kinds):
        if kind == "ellipsis":
            key.append(Ellipsis)
            dim = x.ndim - dims_after_ellipsis
        elif kind == "new_axis":
            key.append(None)
        elif kind == "shrink":
            n = x.shape[dim]
            at = 0 if masks["begin_mask"] >> i & 1 else begin[i]
            at = at + n if at < 0 else at
            if not 0 <= at < n:
                return None
            key.append(at)
            dim += 1
        else:
            key.append(slice(None if masks["begin_mask"] >> i & 1 else begin[i],
                             None if masks["end_mask"] >> i & 1 else end[i], strides[i]))
            dim += 1
    return tuple(key)


@FUZZ
@given(strided_slice_cases())
def test_strided_slice_and_view(case):
    x, begin, end, strides, masks, kinds = case
    key = numpy_key(x, begin, end, strides, masks, kinds)
    if key is None:
        with pytest.raises(ptocpu.IndexOutOfRange):
            ptocpu.strided_slice(x, begin, end, strides, **masks)
        return
    want = np.asarray(x[key])  # numpy gives a scalar when every slot shrinks
    assert_bits(ptocpu.strided_slice(x, begin, end, strides, **masks), want)
    view = ptocpu.strided_slice_view(x, begin, end, strides, **masks)
    assert_bits(view, want)
    if want.ndim and want.size:  # a write through the view lands in x
        first = (0,) * want.ndim
        expected = x.copy()
        expected[key][first] = np.zeros((), x.dtype)
        view[first] = ptocpu.asarray(np.zeros((), x.dtype))
        assert_bits(x, expected)
