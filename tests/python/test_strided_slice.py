"""strided_slice / strided_slice_view (docs/ops/strided_slice.md) against the seed 003 reference, numpy slicing
(negative strides too), torch, and one test per error rule."""
from __future__ import annotations


import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import ptocpu
from ptocpu.tools.reference import seed003_strided_slice  # the seed's golden code

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "shrink_axis_mask", "new_axis_mask")


# ---------------------------------------------------------------- an independent docs/ops/strided_slice.md model
class Expected(Exception):
    """The reference's verdict that a call must fail with `cls`."""

    def __init__(self, cls):
        super().__init__(cls.__name__)
        self.cls = cls


def spec_reference(x: np.ndarray, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0,
                   shrink_axis_mask=0, new_axis_mask=0) -> np.ndarray:
    """docs/ops/strided_slice.md written out literally in numpy (np.take with explicit index ranges, so no
    Python slice wrapping is involved). Raises Expected(cls) where docs/ops/strided_slice.md asks for an error."""
    n = len(begin)
    if len(end) != n or len(strides) != n or n > 32:
        raise Expected(ptocpu.ArgumentError)
    if any(s == 0 for s in strides):
        raise Expected(ptocpu.ArgumentError)
    masks = (begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask)
    if any(m < 0 or m >> n for m in masks):
        raise Expected(ptocpu.ArgumentError)
    if bin(ellipsis_mask).count("1") > 1:
        raise Expected(ptocpu.ArgumentError)
    if ellipsis_mask & shrink_axis_mask or ellipsis_mask & new_axis_mask or shrink_axis_mask & new_axis_mask:
        raise Expected(ptocpu.ArgumentError)
    indexing = n - bin(new_axis_mask).count("1") - bin(ellipsis_mask).count("1")
    if indexing > x.ndim:
        raise Expected(ptocpu.ArgumentError)
    out = x
    axis = 0  # axis of `out` the next input dim sits at
    for i in range(n):
        bit = 1 << i
        if new_axis_mask & bit:
            out = np.expand_dims(out, axis)
            axis += 1
            continue
        if ellipsis_mask & bit:
            axis += x.ndim - indexing
            continue
        size = out.shape[axis]
        if shrink_axis_mask & bit:
            idx = 0 if begin_mask & bit else begin[i]
            idx = idx + size if idx < 0 else idx
            if not 0 <= idx < size:
                raise Expected(ptocpu.IndexOutOfRange)
            out = np.take(out, idx, axis=axis)
            continue
        s = strides[i]
        lo, hi = (0, size) if s > 0 else (-1, size - 1)

        def canon(v, masked, masked_value):
            if masked:
                return masked_value
            v = v + size if v < 0 else v
            return min(max(v, lo), hi)

        b = canon(begin[i], begin_mask & bit, 0 if s > 0 else size - 1)
        e = canon(end[i], end_mask & bit, size if s > 0 else -1)
        out = np.take(out, np.arange(b, e, s, dtype=np.int64), axis=axis)
        axis += 1
    return np.array(out, order="C", copy=True)  # ascontiguousarray would make a 0-d result 1-d


def numpy_key_to_args(key: tuple, ndim: int):
    """A numpy basic-indexing key (ints, slices, Ellipsis, None) as strided_slice arguments."""
    begin, end, strides = [], [], []
    masks = dict.fromkeys(MASKS, 0)
    for i, k in enumerate(key):
        bit = 1 << i
        if k is None:
            masks["new_axis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif k is Ellipsis:
            masks["ellipsis_mask"] |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, int):
            masks["shrink_axis_mask"] |= bit
            begin.append(k), end.append(k + 1), strides.append(1)
        else:
            step = 1 if k.step is None else k.step
            if k.start is None:
                masks["begin_mask"] |= bit
            if k.stop is None:
                masks["end_mask"] |= bit
            begin.append(0 if k.start is None else k.start)
            end.append(0 if k.stop is None else k.stop)
            strides.append(step)
    return begin, end, strides, masks


def dtypes_of(platform: str):
    table = {p["name"]: p for p in ptocpu.platform_table()}
    names = table[platform]["ops"]["strided_slice"]["dtypes"].split(", ")
    return [getattr(ptocpu, name) for name in names]


ALL_DTYPES = dtypes_of("cpu")
PLATFORMS = [p["name"] for p in ptocpu.platform_table()]


def random_array(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    npdt = ptocpu.numpy_dtype(dtype)
    if npdt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(npdt, np.integer):
        info = np.iinfo(npdt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape).astype(npdt)
    if npdt == np.dtype(ml_dtypes.float8_e8m0fnu):
        return rng.uniform(0.01, 100, size=shape).astype(np.float32).astype(npdt)
    return rng.standard_normal(size=shape).astype(np.float32).astype(npdt)


def bits(a: np.ndarray) -> np.ndarray:
    """Raw bytes per element, so NaN payloads and -0.0 compare exactly."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape + (a.itemsize,)) if a.ndim else a.reshape(1).view(np.uint8)


def assert_same(got, want: np.ndarray):
    g = got.numpy() if isinstance(got, ptocpu.Tensor) else np.asarray(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    assert g.dtype == want.dtype, (g.dtype, want.dtype)
    np.testing.assert_array_equal(bits(g), bits(want))


def check_both(x: np.ndarray, *args, **masks):
    """strided_slice equals the documented model (docs/ops/strided_slice.md) and numpy; the view equals the copy."""
    want = spec_reference(x, *args, **masks)
    out = ptocpu.strided_slice(x, *args, **masks)
    assert out.is_contiguous()
    assert_same(out, want)
    assert_same(ptocpu.strided_slice_view(x, *args, **masks), want)
    return out


# ---------------------------------------------------------------- seed 003 and the documented examples
def test_seed_examples():
    x = torch.randn(1024, 1024, dtype=torch.float16)
    got = ptocpu.strided_slice(x, [0, 0], [512, 512], [2, 2], 0, 0, 0, 0, 0)
    assert torch.equal(torch.from_dlpack(got), seed003_strided_slice(x, [0, 0], [512, 512], [2, 2]))
    x = torch.randn(2, 8, 256, 256, dtype=torch.float32)
    args = ([0, 0, 0, 0], [-1, -1, 128, 128], [1, 1, 2, 2], 0, 0, 0, 0, 0)
    got = ptocpu.strided_slice(x, *args)
    assert tuple(got.shape) == (1, 7, 64, 64)
    assert torch.equal(torch.from_dlpack(got), seed003_strided_slice(x, *args).contiguous())


def test_end_minus_one_excludes_last_and_out_of_range_clamps():
    x = np.arange(10, dtype=np.int32)
    assert ptocpu.strided_slice(x, [0], [-1], [1]).tolist() == list(range(9))
    assert ptocpu.strided_slice(x, [-100], [100], [1]).tolist() == list(range(10))
    assert ptocpu.strided_slice(x, [100], [-100], [-1]).tolist() == list(range(9, -1, -1))
    assert ptocpu.strided_slice(x, [5], [2], [1]).tolist() == []
    assert ptocpu.strided_slice(x, [8], [1], [-3]).tolist() == [8, 5, 2]


# every mask alone and in combination, against the seed reference (positive strides)
SEED_CASES = [
    # (shape, begin, end, strides, begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask)
    ((4, 6), [1, 2], [3, 5], [1, 1], 0, 0, 0, 0, 0),
    ((4, 6), [1, 2], [3, 5], [1, 2], 1, 0, 0, 0, 0),
    ((4, 6), [1, 2], [3, 5], [1, 2], 2, 0, 0, 0, 0),
    ((4, 6), [1, 2], [3, 5], [2, 1], 0, 1, 0, 0, 0),
    ((4, 6), [1, 2], [3, 5], [1, 3], 3, 3, 0, 0, 0),
    ((4, 6, 5), [0, 1], [0, 4], [1, 2], 0, 0, 1, 0, 0),
    ((4, 6, 5), [1, 0], [3, 0], [1, 1], 0, 0, 2, 0, 0),
    ((4, 6, 5), [1, 0, 2], [3, 0, 4], [1, 1, 1], 0, 0, 2, 0, 0),
    ((4, 6), [2, 0], [3, 6], [1, 1], 0, 0, 0, 1, 0),
    ((4, 6), [-1, -2], [0, 0], [1, 1], 0, 0, 0, 3, 0),
    ((4, 6), [0, 1, 2], [0, 4, 5], [1, 1, 1], 0, 0, 0, 0, 1),
    ((4, 6), [1, 0, 2], [3, 0, 5], [1, 1, 1], 0, 0, 0, 0, 2),
    ((4, 6), [1, 2, 0], [3, 5, 0], [1, 1, 1], 0, 0, 0, 0, 4),
    ((4, 6, 5), [0, 0, 1, 2], [0, 0, 3, 5], [1, 1, 1, 2], 0, 0, 1, 0, 2),
    ((4, 6, 5), [0, 2, 0, 1], [2, 0, 0, 5], [1, 1, 1, 2], 1, 0, 4, 2, 0),
    ((4, 6, 5), [0, 0, 3, 1], [0, 0, 0, 5], [1, 1, 1, 1], 0, 8, 1, 4, 2),
    ((2, 3, 4, 5), [1, 0, 0], [2, 0, 3], [1, 1, 2], 1, 1, 2, 0, 0),
    ((2, 3, 4, 5), [0, 1, 0, 0, 2], [0, 2, 0, 0, 3], [1, 1, 1, 1, 1], 0, 0, 8, 2, 1 | 4),
    ((3,), [], [], [], 0, 0, 0, 0, 0),
    ((3, 4), [1], [2], [1], 0, 0, 0, 0, 0),
    ((3, 4), [0, 0], [0, 0], [1, 1], 0, 0, 1, 0, 2),
]


@pytest.mark.parametrize("case", SEED_CASES, ids=[f"case{i}" for i in range(len(SEED_CASES))])
def test_masks_against_seed_reference(case):
    shape, *args = case
    x = torch.arange(int(np.prod(shape)), dtype=torch.float32).reshape(shape)
    want = seed003_strided_slice(x, *args).contiguous()
    got = ptocpu.strided_slice(x, *args)
    assert tuple(got.shape) == tuple(want.shape)
    assert torch.equal(torch.from_dlpack(got), want)
    check_both(x.numpy(), *args)


def test_rank0():
    x = np.array(3.5, dtype=np.float32)
    assert_same(ptocpu.strided_slice(x, [], [], []), x)
    out = check_both(x, [0], [0], [1], new_axis_mask=1)
    assert out.shape == (1,)
    assert ptocpu.strided_slice(x, [0], [0], [1], ellipsis_mask=1).shape == ()
    with pytest.raises(ptocpu.ArgumentError):
        ptocpu.strided_slice(x, [0], [1], [1])


@pytest.mark.parametrize("rank", range(0, 9))
def test_ranks_0_to_8_negative_strides(rank):
    rng = np.random.default_rng(rank)
    shape = tuple(int(v) for v in rng.integers(1, 5, size=rank))
    x = random_array(shape, ptocpu.DT_FP32, seed=rank)
    begin = [int(v) for v in rng.integers(-5, 5, size=rank)]
    end = [int(v) for v in rng.integers(-5, 5, size=rank)]
    strides = [int(v) for v in rng.choice([-3, -2, -1, 1, 2, 3], size=rank)]
    check_both(x, begin, end, strides)
    check_both(x, begin, end, strides, begin_mask=(1 << rank) - 1 if rank else 0, end_mask=0b1010 & ((1 << rank) - 1))
    # numpy slicing of the same key
    key = tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))
    assert_same(ptocpu.strided_slice(x, begin, end, strides), np.array(x[key], order="C", copy=True))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_dtypes_of_every_platform(platform):
    with ptocpu.platform(platform):
        for dtype in dtypes_of(platform):
            x = random_array((5, 7, 3), dtype, seed=1)
            check_both(x, [4, 0, 1], [0, 7, 3], [-2, 3, 1], begin_mask=0, end_mask=1)
            check_both(x, [1, 0], [0, 0], [1, -1], ellipsis_mask=1, end_mask=2, begin_mask=2)
            check_both(x, [0, 2, 0], [0, 0, 0], [1, 1, 1], shrink_axis_mask=2, new_axis_mask=1, begin_mask=4, end_mask=4)
        for dtype in set(ALL_DTYPES) - set(dtypes_of(platform)):
            x = random_array((2, 3), dtype)
            with pytest.raises(ptocpu.DTypeError, match=r"strided_slice: x dtype DT_\w+ is not supported on platform"):
                ptocpu.strided_slice(x, [0], [1], [1])


def test_torch_peer_and_negative_strides_vs_flip():
    x = torch.randn(9, 10, 11)
    got = ptocpu.strided_slice(x, [1, 0, 2], [8, 10, 9], [2, 3, 1])
    assert torch.equal(torch.from_dlpack(got), x[1:8:2, 0:10:3, 2:9].contiguous())
    got = ptocpu.strided_slice(x, [0, 0, 0], [0, 0, 0], [-1, -1, -1], begin_mask=7, end_mask=7)
    assert torch.equal(torch.from_dlpack(got), torch.flip(x, [0, 1, 2]))
    got = ptocpu.strided_slice(x, [0, 0], [0, 0], [1, -1], begin_mask=3, end_mask=3, ellipsis_mask=1)
    assert torch.equal(torch.from_dlpack(got), torch.flip(x, [2]))


def test_non_contiguous_inputs():
    base = np.arange(2 * 9 * 10, dtype=np.int64).reshape(2, 9, 10)
    for x in (base.transpose(2, 0, 1), base[:, ::-2, 1::3], np.broadcast_to(base[:1], (4, 9, 10))):
        check_both(x, [1, -1, 0], [6, 0, 5], [2, -2, 1], end_mask=0)
        check_both(x, [0, 0], [0, 0], [-1, -1], begin_mask=3, end_mask=3, ellipsis_mask=1)


def test_empty_results_and_inputs():
    x = np.arange(12, dtype=np.int8).reshape(3, 4)
    assert ptocpu.strided_slice(x, [2, 0], [1, 4], [1, 1]).shape == (0, 4)
    check_both(x, [5, 5], [6, 7], [1, 2])
    check_both(np.zeros((0, 3), np.float32), [0, 1], [5, 3], [1, 1])
    with ptocpu.platform("ascend950"), pytest.raises(ptocpu.ArgumentError, match="empty"):
        ptocpu.strided_slice(np.zeros((0, 3), np.float32), [0], [1], [1])


# ---------------------------------------------------------------- the view
def test_view_shares_memory_and_equals_copy():
    x = ptocpu.asarray(np.arange(60, dtype=np.float32).reshape(3, 4, 5))
    args = ([2, 0, 4], [0, 4, 0], [-1, 2, -2])
    v = ptocpu.strided_slice_view(x, *args, end_mask=1)
    c = ptocpu.strided_slice(x, *args, end_mask=1)
    assert_same(v, c.numpy())
    v[...] = -1.0
    assert (spec_reference(x.numpy(), *args, end_mask=1) == -1).all()
    assert (x.numpy() == -1).sum() == v.numel
    assert (c.numpy() != -1).all()  # the copy is independent


def test_view_over_numpy_writes_into_the_array():
    a = np.zeros((4, 6), np.int32)
    v = ptocpu.strided_slice_view(a, [1, 0], [0, 0], [1, 2], shrink_axis_mask=1, end_mask=2)
    assert v.shape == (3,)
    v[...] = 7
    assert a[1].tolist() == [7, 0, 7, 0, 7, 0]


def test_view_of_new_axis_and_shrink():
    x = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    v = ptocpu.strided_slice_view(x, [0, 1, 0], [0, 2, 0], [1, 1, -1], new_axis_mask=1, shrink_axis_mask=2,
                                  begin_mask=4, end_mask=4)
    assert v.shape == (1, 3, 4)
    assert_same(v, x[None, 1, ::-1, :])


# ---------------------------------------------------------------- hypothesis
@st.composite
def numpy_keys(draw):
    rank = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    kinds = draw(st.lists(st.sampled_from(["slice", "slice", "int", "none", "ellipsis"]), max_size=rank + 2))
    if kinds.count("ellipsis") > 1:  # keep the first
        first = kinds.index("ellipsis")
        kinds = [k for i, k in enumerate(kinds) if k != "ellipsis" or i == first]
    while sum(k in ("slice", "int") for k in kinds) > rank:
        kinds.remove("int" if "int" in kinds else "slice")
    # the input dim each indexing slot takes: left to right, and after an ellipsis right-aligned
    indexing = [i for i, k in enumerate(kinds) if k in ("slice", "int")]
    ell = kinds.index("ellipsis") if "ellipsis" in kinds else len(kinds)
    before = [i for i in indexing if i < ell]
    after = [i for i in indexing if i > ell]
    dim_of = {i: j for j, i in enumerate(before)}
    dim_of.update({i: rank - len(after) + j for j, i in enumerate(after)})
    big = st.integers(-8, 8) | st.sampled_from([-2**63, 2**63 - 1, -2**40, 2**40])
    parts = []
    for i, kind in enumerate(kinds):
        if kind == "ellipsis":
            parts.append(Ellipsis)
        elif kind == "none":
            parts.append(None)
        elif kind == "int" and shape[dim_of[i]] > 0:
            n = shape[dim_of[i]]
            parts.append(draw(st.integers(-n, n - 1)))
        else:
            step = draw(st.integers(-4, 4).filter(bool) | st.sampled_from([2**62, -2**62, -2**63 + 1]))
            parts.append(slice(draw(st.none() | big), draw(st.none() | big), step))
    return shape, tuple(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numpy_keys(), st.sampled_from([ptocpu.DT_INT8, ptocpu.DT_FP16, ptocpu.DT_FP32, ptocpu.DT_FP64]))
def test_hypothesis_numpy_keys(shape_key, dtype):
    shape, key = shape_key
    x = random_array(shape, dtype, seed=3)
    begin, end, strides, masks = numpy_key_to_args(key, len(shape))
    want = np.array(x[key], order="C", copy=True)
    out = ptocpu.strided_slice(x, begin, end, strides, **masks)
    assert_same(out, want)
    assert_same(ptocpu.strided_slice_view(x, begin, end, strides, **masks), want)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_hypothesis_raw_arguments(data):
    """Any begin / end / strides / masks: the same result or the same error class as the model."""
    rank = data.draw(st.integers(0, 4))
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    n = data.draw(st.integers(0, rank + 2))
    ints = st.integers(-7, 7)
    begin = data.draw(st.lists(ints, min_size=n, max_size=n))
    end = data.draw(st.lists(ints, min_size=n, max_size=n))
    strides = data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n))
    masks = {name: data.draw(st.integers(0, (1 << (n + 1)) - 1)) for name in MASKS}
    x = random_array(shape, ptocpu.DT_INT32, seed=4)
    try:
        want = spec_reference(x, begin, end, strides, **masks)
    except Expected as e:
        with pytest.raises(e.cls):
            ptocpu.strided_slice(x, begin, end, strides, **masks)
        with pytest.raises(e.cls):
            ptocpu.strided_slice_view(x, begin, end, strides, **masks)
        return
    assert_same(ptocpu.strided_slice(x, begin, end, strides, **masks), want)
    assert_same(ptocpu.strided_slice_view(x, begin, end, strides, **masks), want)


# ---------------------------------------------------------------- errors, one per rule
X = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_error_zero_stride():
    with pytest.raises(ptocpu.ArgumentError, match=r"strided_slice: strides\[1\] = 0; every stride must be nonzero"):
        ptocpu.strided_slice(X, [0, 0], [1, 1], [1, 0])


def test_error_two_ellipsis_bits():
    with pytest.raises(ptocpu.ArgumentError, match=r"strided_slice: ellipsis_mask = 5 sets slots 0, 2; at most one"):
        ptocpu.strided_slice(X, [0, 0, 0], [1, 1, 1], [1, 1, 1], ellipsis_mask=5)


@pytest.mark.parametrize("a,b", [("ellipsis_mask", "shrink_axis_mask"), ("ellipsis_mask", "new_axis_mask"),
                                 ("shrink_axis_mask", "new_axis_mask")])
def test_error_slot_combines_two_kinds(a, b):
    with pytest.raises(ptocpu.ArgumentError,
                       match=rf"strided_slice: slot 1 is set in both {a} \(= 2\) and {b} \(= 2\); a slot may be at most one"):
        ptocpu.strided_slice(X, [0, 0], [1, 1], [1, 1], **{a: 2, b: 2})


@pytest.mark.parametrize("mask", MASKS)
def test_error_mask_bit_beyond_len(mask):
    with pytest.raises(ptocpu.ArgumentError,
                       match=rf"strided_slice: {mask} = 4 sets bit\(s\) 2 but begin / end / strides have 2 slot\(s\); "
                             r"allowed values are in \[0, 4\)"):
        ptocpu.strided_slice(X, [0, 0], [1, 1], [1, 1], **{mask: 4})
    with pytest.raises(ptocpu.ArgumentError, match=rf"{mask} = -1 sets bit"):
        ptocpu.strided_slice(X, [0, 0], [1, 1], [1, 1], **{mask: -1})


def test_error_lengths_differ():
    with pytest.raises(ptocpu.ArgumentError,
                       match=r"strided_slice: begin, end and strides must have the same length; "
                             r"got len\(begin\) = 2, len\(end\) = 1, len\(strides\) = 2"):
        ptocpu.strided_slice(X, [0, 0], [1], [1, 1])


def test_error_more_than_32_slots():
    n = 33
    with pytest.raises(ptocpu.ArgumentError, match=r"strided_slice: len\(begin\) = 33 is above the limit of 32"):
        ptocpu.strided_slice(X, [0] * n, [1] * n, [1] * n, new_axis_mask=(1 << 31) - 1)


def test_error_too_many_slots_for_rank():
    with pytest.raises(ptocpu.ArgumentError,
                       match=r"strided_slice: 3 slot\(s\) index input dims \(4 slot\(s\), 1 new-axis, 0 ellipsis\) "
                             r"but x has rank 2 \(shape \[3, 4\]\)"):
        ptocpu.strided_slice(X, [0] * 4, [1] * 4, [1] * 4, new_axis_mask=1)


def test_error_shrink_out_of_range():
    with pytest.raises(ptocpu.IndexOutOfRange,
                       match=r"strided_slice: shrink_axis_mask slot 1: begin\[1\] = 4 is out of range \[-4, 4\) "
                             r"for dim 1 of x shape \[3, 4\]"):
        ptocpu.strided_slice(X, [0, 4], [1, 5], [1, 1], shrink_axis_mask=2)
    with pytest.raises(IndexError, match=r"begin\[0\] = -4 is out of range \[-3, 3\)"):
        ptocpu.strided_slice(X, [-4], [1], [1], shrink_axis_mask=1)


@pytest.mark.parametrize("param", ["begin", "end", "strides"])
def test_error_non_integer_values(param):
    args = {"begin": [0, 0], "end": [1, 1], "strides": [1, 1]}
    args[param] = [0, 1.5]
    with pytest.raises(ptocpu.DTypeError, match=rf"strided_slice: {param} must be an integer, got float 1.5"):
        ptocpu.strided_slice(X, **args)
    args[param] = "ab"
    with pytest.raises(ptocpu.DTypeError, match=rf"strided_slice: {param} must be a sequence of integers"):
        ptocpu.strided_slice(X, **args)


@pytest.mark.parametrize("mask", MASKS)
def test_error_non_integer_mask(mask):
    with pytest.raises(ptocpu.DTypeError, match=rf"strided_slice: {mask} must be an integer, got float 1.0"):
        ptocpu.strided_slice(X, [0, 0], [1, 1], [1, 1], **{mask: 1.0})


def test_error_rank_above_8():
    x = np.zeros((1,) * 9, np.float32)
    with pytest.raises(ptocpu.ArgumentError, match=r"strided_slice: x rank 9 is out of range \[0, 8\]"):
        ptocpu.strided_slice(x, [], [], [])


def test_errors_are_python_builtins_too():
    with pytest.raises(ValueError):
        ptocpu.strided_slice(X, [0], [1], [0])
    with pytest.raises(TypeError):
        ptocpu.strided_slice(X, [0.5], [1], [1])
    with pytest.raises(IndexError):
        ptocpu.strided_slice(X, [9], [1], [1], shrink_axis_mask=1)


def test_numpy_integer_arguments():
    got = ptocpu.strided_slice(X, np.array([0, 1]), (np.int64(3), np.int32(4)), [np.int8(2), 2],
                               begin_mask=np.int64(0))
    assert_same(got, np.ascontiguousarray(X[0:3:2, 1:4:2]))
