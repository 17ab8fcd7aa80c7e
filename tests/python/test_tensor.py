"""docs/tensors.md: ptocpu.Tensor — properties, numpy / DLPack exchange (zero-copy both ways, with numpy
and torch), asarray / from_numpy, basic indexing views, assignment and creation."""
from __future__ import annotations

import array
import gc

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ptocpu

from helpers import DTYPES  # (ptocpu dtype, numpy / ml_dtypes type, torch dtype), docs/dtypes.md

IDS = [d[0].name for d in DTYPES]
NUMPY_NATIVE = [d for d in DTYPES if np.dtype(d[1]).kind in "iubf" and np.dtype(d[1]).type.__module__ == "numpy"]


def uint_view(a: np.ndarray) -> np.ndarray:
    """The bits of an array (bool as uint8), for bit-exact comparisons."""
    a = np.array(a, order="C")  # a C-contiguous copy; keeps 0-d as 0-d
    return a.view(np.dtype(f"u{a.dtype.itemsize}"))


def random_array(shape, npt, seed=0) -> np.ndarray:
    """Random bits of the dtype (bool: 0 / 1), so every comparison is bit-exact."""
    rng = np.random.default_rng(seed)
    item = np.dtype(npt).itemsize
    n = int(np.prod(shape))
    if np.dtype(npt) == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_).reshape(shape)
    raw = rng.integers(0, 256, n * item, dtype=np.uint8)
    return raw.view(npt).reshape(shape)


def torch_bits(x: torch.Tensor) -> np.ndarray:
    """The bits of a torch tensor, read without going through DLPack or ptocpu."""
    x = x.contiguous()
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    return x.view(width).numpy().view(np.dtype(f"u{x.element_size()}"))


def torch_from_bits(bits: np.ndarray, tdt: torch.dtype) -> torch.Tensor:
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[bits.dtype.itemsize]
    signed = bits.view(np.dtype(f"i{bits.dtype.itemsize}")) if bits.dtype.itemsize > 1 else bits
    return torch.from_numpy(np.ascontiguousarray(signed)).view(width).view(tdt)


# ------------------------------------------------------------------------------- properties
@pytest.mark.parametrize("dt,npt,tdt", DTYPES, ids=IDS)
def test_properties_follow_numpy(dt, npt, tdt):
    a = random_array((3, 4, 5), npt)
    for view in (a, a[::2, 1:, ::-1], a.transpose(2, 0, 1), a[1], a[None, :, 2, None]):
        t = ptocpu.from_numpy(view)
        assert t.shape == view.shape
        assert t.strides == tuple(s // view.itemsize for s in view.strides)
        assert t.dtype == dt and isinstance(t.dtype, ptocpu.DType)
        assert t.ndim == view.ndim and t.numel == view.size and t.itemsize == view.itemsize
        assert type(t.ndim) is int and type(t.numel) is int and type(t.itemsize) is int
        assert len(t) == view.shape[0]
        assert uint_view(t.numpy()).tolist() == uint_view(view).tolist()


def test_len_of_0d_is_a_type_error():
    with pytest.raises(TypeError):
        len(ptocpu.tensor([], "float32"))


@given(st.data())
def test_is_contiguous_and_contiguous(data):
    shape = data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=4), label="shape")
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    key = tuple(data.draw(st.sampled_from([slice(None), slice(None, None, -1), slice(1, None), slice(None, None, 2)]))
                for _ in shape)
    perm = data.draw(st.permutations(range(len(shape))), label="perm")
    view = (a[key] if shape else a).transpose(perm)
    t = ptocpu.from_numpy(view)
    assert t.is_contiguous() == view.flags.c_contiguous
    c = t.contiguous()
    assert c.is_contiguous() and c.shape == view.shape and c.dtype == ptocpu.DT_INT32
    row_major = np.array(view, order="C").strides
    for n, mine, theirs in zip(view.shape, c.strides, row_major):
        if n > 1 and view.size:  # strides of dims of size 1, or of empty tensors, never matter
            assert mine * 4 == theirs
    np.testing.assert_array_equal(c.numpy(), view)
    if view.size:
        c.numpy().reshape(-1)[0] = -1  # contiguous() of a contiguous tensor is the same memory
        assert (view.reshape(-1)[0] == -1) == view.flags.c_contiguous


# -------------------------------------------------------------------------------- numpy()
def test_numpy_is_zero_copy_both_ways():
    t = ptocpu.tensor([2, 3], "float32")
    n = t.numpy()
    n[1, 2] = 5.0
    assert t.tolist() == [[0, 0, 0], [0, 0, 5.0]]
    t[0, 0] = 7.0
    assert n[0, 0] == 7.0
    a = np.zeros((4, 6), np.int16)
    v = ptocpu.from_numpy(a)[1::2, ::-3]
    v.numpy()[...] = 9
    expected = np.zeros((4, 6), np.int16)
    expected[1::2, ::-3] = 9
    np.testing.assert_array_equal(a, expected)
    assert np.shares_memory(v.numpy(), a)


def test_numpy_keeps_the_storage_alive():
    n = ptocpu.asarray([1.5, 2.5, 3.5]).numpy()
    gc.collect()
    junk = [ptocpu.tensor([3], "float64") for _ in range(50)]
    assert n.tolist() == [1.5, 2.5, 3.5] and junk


@pytest.mark.parametrize("dt,npt,tdt", DTYPES, ids=IDS)
def test_numpy_dtype_is_numpy_or_ml_dtypes(dt, npt, tdt):
    a = random_array((5, 3), npt, seed=1)
    n = ptocpu.from_numpy(a).numpy()
    assert n.dtype == np.dtype(npt)
    assert uint_view(n).tolist() == uint_view(a).tolist()
    assert np.asarray(ptocpu.from_numpy(a)).dtype == np.dtype(npt)  # __array__


ML_DTYPES = [d for d in DTYPES if np.dtype(d[1]).type.__module__.startswith("ml_dtypes")]


@pytest.mark.parametrize("dt,npt,tdt", ML_DTYPES, ids=[d[0].name for d in ML_DTYPES])
def test_asarray_of_an_ml_dtypes_array_is_its_memory(dt, npt, tdt):
    # docs/tensors.md: ml_dtypes arrays (no buffer protocol of their own) are read as unsigned
    # integers of their width, the same memory: strided views, writes, read-only flags and values.
    a = random_array((4, 6), npt, seed=3)
    t = ptocpu.asarray(a[1::2, ::-2])
    assert t.dtype == dt and t.shape == [2, 3]
    assert uint_view(t.numpy()).tolist() == uint_view(a[1::2, ::-2]).tolist()
    assert np.shares_memory(t.numpy(), a)
    t.numpy()[0, 0] = a[0, 0]
    assert uint_view(a[1, 5]) == uint_view(a[0, 0])
    frozen = a.copy()
    frozen.flags.writeable = False
    with pytest.raises(ptocpu.ArgumentError):
        ptocpu.asarray(frozen)[0, 0] = a[0, 1]
    if np.dtype(npt).itemsize == 2:  # byte-swapped data is copied into native order
        swapped = a.astype(a.dtype.newbyteorder())
        assert uint_view(ptocpu.asarray(swapped).numpy()).tolist() == uint_view(a).tolist()


def test_tolist_matches_numpy():
    for a in (np.arange(6, dtype=np.int64).reshape(2, 3) - 3, np.array([[0.5, -1.25]], np.float32),
              np.array([True, False]), np.array(3.25), np.arange(4, dtype=np.uint64) + 2 ** 63):
        assert ptocpu.from_numpy(a).tolist() == a.tolist()
    b = np.array([1.5, -2.0, 0.25], ml_dtypes.bfloat16)
    assert [float(x) for x in ptocpu.from_numpy(b).tolist()] == [1.5, -2.0, 0.25]


def test_repr_shows_values_like_numpy():
    a = np.array([[1.5, -2.0], [3.25, 4.0]], np.float32)
    values = np.array2string(a, separator=", ", prefix="Tensor(")
    assert repr(ptocpu.from_numpy(a)) == f"Tensor({values}, dtype=DT_FP32)"
    assert repr(ptocpu.from_numpy(a)[:, ::-1]) == f"Tensor({np.array2string(a[:, ::-1], separator=', ', prefix='Tensor(')}, dtype=DT_FP32)"
    assert repr(ptocpu.asarray(np.int8(7))) == "Tensor(7, dtype=DT_INT8)"
    assert repr(ptocpu.asarray([True, False])) == "Tensor([ True, False], dtype=DT_BOOL)"
    assert repr(ptocpu.from_numpy(np.array([1.5, 3.0], ml_dtypes.bfloat16))) == "Tensor([1.5, 3], dtype=DT_BF16)"


# ------------------------------------------------------------------------------- DLPack
def test_dlpack_device():
    assert ptocpu.tensor([2], "int8").__dlpack_device__() == (1, 0)


def test_numpy_from_dlpack_zero_copy_with_strides():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    for view in (ptocpu.from_numpy(a), ptocpu.from_numpy(a)[::2, ::-1], ptocpu.from_numpy(a)[:, 1].__getitem__(None)):
        n = np.from_dlpack(view)
        np.testing.assert_array_equal(n, view.numpy())
        assert np.shares_memory(n, a)
    n = np.from_dlpack(ptocpu.from_numpy(a)[1:, ::-2])
    n[0, 0] = -1
    assert a[1, 5] == -1
    p = ptocpu.from_dlpack(a[::-1, 1::2])  # numpy -> ptocpu through DLPack, negative strides
    assert p.strides == (-6, 2)
    p[0, 0] = -2
    assert a[3, 1] == -2


@pytest.mark.parametrize("dt,npt,tdt", DTYPES, ids=IDS)
def test_torch_from_dlpack_zero_copy(dt, npt, tdt):
    a = random_array((4, 6), npt, seed=2)
    t = ptocpu.from_numpy(a.copy())
    for view, ref in ((t, a), (t[1:, ::2], a[1:, ::2]), (t[:, 3], a[:, 3]),
                      (ptocpu.from_numpy(a.T.copy().T), a)):
        x = torch.from_dlpack(view)
        assert x.dtype == tdt and tuple(x.shape) == ref.shape
        assert tuple(x.stride()) == view.strides
        assert torch_bits(x).tolist() == uint_view(ref).tolist()
    # Writes through torch land in the ptocpu tensor and the other way round.
    x = torch.from_dlpack(t)
    one = torch_from_bits(uint_view(a[2:3, 4:5]).reshape(()), tdt)
    x[0, 1] = one
    assert uint_view(t.numpy()[0, 1:2]).tolist() == uint_view(a[2, 4:5]).tolist()
    t[3, 5] = t[2, 4]
    assert torch_bits(x[3, 5]).tolist() == uint_view(a[2, 4]).tolist()


@pytest.mark.parametrize("dt,npt,tdt", DTYPES, ids=IDS)
def test_from_dlpack_of_torch_zero_copy(dt, npt, tdt):
    a = random_array((5, 4), npt, seed=3)
    base = torch_from_bits(uint_view(a), tdt).reshape(5, 4).clone()
    for x, ref in ((base, a), (base.T, a.T), (base[::2, 1:], a[::2, 1:]), (base[1].expand(3, 4), np.broadcast_to(a[1], (3, 4)))):
        p = ptocpu.from_dlpack(x)
        assert p.dtype == dt and p.shape == tuple(x.shape) and p.strides == tuple(x.stride())
        assert uint_view(p.numpy()).tolist() == uint_view(ref).tolist()
        q = ptocpu.asarray(x)
        assert q.strides == tuple(x.stride())
    p = ptocpu.from_dlpack(base.T)
    p[1, 2] = p[0, 0]
    assert torch_bits(base[2, 1]).tolist() == uint_view(a[0, 0]).tolist()
    base[4, 3] = base[0, 1]
    assert uint_view(p.numpy()[3, 4]).tolist() == uint_view(a[0, 1]).tolist()


def test_dlpack_lifetimes():
    x = torch.arange(10, dtype=torch.float32)
    p = ptocpu.from_dlpack(x)
    del x
    gc.collect()
    assert p.tolist() == list(range(10))  # ptocpu keeps torch's memory alive
    t = ptocpu.asarray(np.arange(5, dtype=np.int32))
    y = torch.from_dlpack(t[1:])
    del t
    gc.collect()
    assert y.tolist() == [1, 2, 3, 4]  # and torch keeps ptocpu's
    caps = [ptocpu.tensor([100], "float32").__dlpack__() for _ in range(20)]
    del caps  # unconsumed capsules free their tensors
    gc.collect()


def test_legacy_and_versioned_capsules():
    t = ptocpu.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
    legacy = t.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    x = torch.utils.dlpack.from_dlpack(legacy)
    x[1, 1] = 40
    assert t.tolist() == [[0, 1, 2], [3, 40, 5]]
    versioned = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    assert "versioned" not in repr(t.__dlpack__(max_version=(0, 8)))
    copied = np.from_dlpack(t, copy=True)
    copied[0, 0] = 99
    assert t.tolist()[0][0] == 0
    # A producer that predates max_version and hands out legacy capsules.
    class Legacy:
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, stream=None):
            return torch.utils.dlpack.to_dlpack(self.x)

        def __dlpack_device__(self):
            return (1, 0)

    z = torch.arange(6.0).reshape(2, 3)
    p = ptocpu.from_dlpack(Legacy(z))
    p[0, 2] = -1.0
    assert z[0, 2].item() == -1.0


def test_from_dlpack_errors():
    with pytest.raises(ptocpu.DTypeError, match="list"):
        ptocpu.from_dlpack([1, 2])
    with pytest.raises(ptocpu.DTypeError, match=r"code 5"):  # complex
        ptocpu.from_dlpack(torch.ones(2, dtype=torch.complex64))


# ------------------------------------------------------------------- asarray / from_numpy
@pytest.mark.parametrize("obj", [
    [1, 2, 3], [[1.5, 2], [3, 4]], [True, False], 7, -2.5, True, [], [[1, 2], [3, 4.5]],
    np.float16(1.5), np.int8(-3), np.uint64(2 ** 64 - 1), np.bool_(True), ml_dtypes.bfloat16(2.5),
])
def test_asarray_infers_dtypes_as_numpy(obj):
    expected = np.asarray(obj)
    t = ptocpu.asarray(obj)
    assert isinstance(t, ptocpu.Tensor)
    assert t.dtype == ptocpu.dtype(expected.dtype) and t.shape == expected.shape
    assert uint_view(t.numpy()).tolist() == uint_view(expected).tolist()


def test_asarray_with_dtype_converts():
    t = ptocpu.asarray([1, 2, 3], dtype="float16")
    assert t.dtype == ptocpu.DT_FP16 and t.numpy().tolist() == [1.0, 2.0, 3.0]
    t = ptocpu.asarray(np.array([0.1, 3.7], np.float32), dtype=ml_dtypes.bfloat16)
    assert uint_view(t.numpy()).tolist() == uint_view(np.array([0.1, 3.7], np.float32).astype(ml_dtypes.bfloat16)).tolist()
    src = ptocpu.asarray([1.5])
    assert ptocpu.asarray(src, dtype="float64") is src  # already that dtype: no copy
    assert ptocpu.asarray(src, dtype="float32").tolist() == [1.5]
    with pytest.raises(ptocpu.ArgumentError, match="'nope'"):
        ptocpu.asarray([1], dtype="nope")


def test_asarray_from_buffers_is_zero_copy():
    buf = bytearray(b"\x01\x02\x03")
    t = ptocpu.asarray(buf)
    assert t.dtype == ptocpu.DT_UINT8 and t.tolist() == [1, 2, 3]
    t[1] = 200
    assert buf[1] == 200
    arr = array.array("h", [1, -2, 3])
    t = ptocpu.asarray(arr)
    assert t.dtype == ptocpu.DT_INT16 and t.tolist() == [1, -2, 3]
    t[2] = -7
    assert arr[2] == -7
    m = memoryview(array.array("f", [0.5, 1.5, 2.5, 3.5]))[::2]
    t = ptocpu.asarray(m)
    assert t.dtype == ptocpu.DT_FP32 and t.tolist() == [0.5, 2.5] and t.strides == (2,)
    data = b"\x05\x06"
    t = ptocpu.asarray(data)  # immutable bytes: a copy
    assert t.dtype == ptocpu.DT_UINT8 and t.tolist() == [5, 6]
    t[0] = 1
    assert data == b"\x05\x06"
    t = ptocpu.asarray(memoryview(buf))
    t[0] = 9
    assert buf[0] == 9


def test_asarray_of_numpy_torch_and_tensors_is_zero_copy():
    a = np.zeros(4, np.float32)
    ptocpu.asarray(a)[2] = 3.0
    assert a[2] == 3.0
    x = torch.zeros(2, 3, dtype=torch.int64)
    ptocpu.asarray(x.T)[2, 1] = 5
    assert x[1, 2].item() == 5
    t = ptocpu.tensor([3], "int8")
    assert ptocpu.asarray(t) is t


def test_asarray_rejects_what_has_no_dtype():
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.asarray("abc")
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.asarray([1 + 2j])
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.asarray(None)


@given(st.data())
def test_from_numpy_of_strided_arrays(data):
    shape = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4), label="shape")
    npt = data.draw(st.sampled_from([np.int8, np.float16, np.float32, np.int64, ml_dtypes.bfloat16]), label="dtype")
    a = random_array(shape, npt, seed=data.draw(st.integers(0, 1000)))
    key = tuple(data.draw(st.sampled_from([slice(None), slice(None, None, -1), slice(None, None, -2),
                                           slice(1, None, 2), slice(None, None, 3)])) for _ in shape)
    view = a[key].transpose(data.draw(st.permutations(range(len(shape)))))
    t = ptocpu.from_numpy(view)
    assert t.shape == view.shape and t.strides == tuple(s // view.itemsize for s in view.strides)
    assert uint_view(t.numpy()).tolist() == uint_view(view).tolist()
    if view.size:  # a view of the array: writes land in it
        idx = tuple(data.draw(st.integers(0, n - 1)) for n in view.shape)
        expected = view.copy()
        expected[idx] = 5 if expected[idx] == 3 else 3
        t[idx] = expected[idx]  # a numpy scalar of the tensor's dtype
        assert uint_view(view).tolist() == uint_view(expected).tolist()


def test_from_numpy_of_odd_layouts():
    rec = np.zeros(4, dtype=[("a", np.int8), ("b", np.int32)])
    rec["b"] = [1, 2, 3, 4]
    t = ptocpu.from_numpy(rec["b"])  # byte strides of 5: not whole elements, so a copy
    assert t.tolist() == [1, 2, 3, 4] and t.dtype == ptocpu.DT_INT32
    big = np.arange(5, dtype=">i4")
    t = ptocpu.from_numpy(big)
    assert t.dtype == ptocpu.DT_INT32 and t.tolist() == [0, 1, 2, 3, 4]
    bcast = np.broadcast_to(np.arange(3, dtype=np.int16), (4, 3))
    t = ptocpu.from_numpy(bcast)
    assert t.strides == (0, 1) and t.tolist() == bcast.tolist()
    with pytest.raises(ptocpu.DTypeError, match="list"):
        ptocpu.from_numpy([1, 2])


# ------------------------------------------------------------------------- basic indexing
def index_item(draw, n):
    """An int (sometimes out of range) or a slice for a dim of size n."""
    return draw(st.one_of(
        st.integers(-n - 2, n + 1),
        st.builds(slice, st.none() | st.integers(-n - 2, n + 2), st.none() | st.integers(-n - 2, n + 2),
                  st.none() | st.integers(-3, 3).filter(lambda s: s != 0)),
    ))


@st.composite
def shape_and_key(draw):
    shape = draw(st.lists(st.integers(0, 5), min_size=0, max_size=4))
    n_indexed = draw(st.integers(0, len(shape)))
    ellipsis = draw(st.booleans())
    front = draw(st.integers(0, n_indexed)) if ellipsis else n_indexed
    back = n_indexed - front
    items = [index_item(draw, n) for n in shape[:front]]
    if ellipsis:
        items.append(Ellipsis)
    items += [index_item(draw, n) for n in shape[len(shape) - back:]]
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    key = tuple(items)
    if len(key) == 1 and draw(st.booleans()):
        key = key[0]
    return shape, key


@given(shape_and_key())
def test_basic_indexing_matches_numpy(case):
    shape, key = case
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    t = ptocpu.from_numpy(a)
    try:
        expected = a[key]
    except IndexError:
        with pytest.raises(IndexError):
            t[key]
        return
    got = t[key]
    assert isinstance(got, ptocpu.Tensor)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)
    if expected.size:
        assert np.shares_memory(got.numpy(), a)  # a view, not a copy
        for n, mine, theirs in zip(expected.shape, got.strides, expected.strides):
            if n > 1:
                assert mine * 8 == theirs


def test_indexing_views_write_through():
    a = np.zeros((3, 4, 5), np.float32)
    t = ptocpu.from_numpy(a)
    v = t[1, ::-2, None, 1:4]
    assert v.shape == (2, 1, 3)
    v[...] = 2.0
    expected = np.zeros((3, 4, 5), np.float32)
    expected[1, ::-2, None, 1:4] = 2.0
    np.testing.assert_array_equal(a, expected)
    assert t[..., None].shape == (3, 4, 5, 1) and t[None].shape == (1, 3, 4, 5)
    assert t[np.int64(2), np.int32(-1)].shape == (5,)


def test_indexing_errors_name_the_value():
    t = ptocpu.tensor([3, 4], "float32")
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"index 5 .*\[-4, 4\).*dim 1") as e:
        t[0, 5]
    assert isinstance(e.value, IndexError)
    with pytest.raises(IndexError, match="-4"):
        t[-4]
    with pytest.raises(IndexError, match="3 indices"):
        t[0, 0, 0]
    with pytest.raises(ptocpu.ArgumentError, match="Ellipsis"):
        t[..., ...]
    for bad, name in ((0.5, "float"), ([0, 1], "list"), (True, "bool"), ("a", "str")):
        with pytest.raises(ptocpu.DTypeError, match=name):
            t[bad]


# ------------------------------------------------------------------------------ assignment
@pytest.mark.parametrize("dt,npt,tdt", NUMPY_NATIVE, ids=[d[0].name for d in NUMPY_NATIVE])
def test_scalar_assignment_matches_numpy(dt, npt, tdt):
    values = [0, 1, True, False] if npt is np.bool_ else [0, 1, -1, 5, 2.75, -2.75, True] if np.dtype(npt).kind == "i" else \
        [0, 1, 7, 2.75, True] if np.dtype(npt).kind == "u" else [0, 1, -1.5, 1e30, -0.0, np.inf, 1 / 3, 2 ** 40 + 1]
    for v in values:
        a = np.zeros((3, 4), npt)
        t = ptocpu.from_numpy(a.copy())
        with np.errstate(over="ignore"):
            # numpy converts Python floats for integer arrays by truncation too
            a[1:, ::-2] = np.trunc(v) if np.dtype(npt).kind in "iu" and isinstance(v, float) else v
        t[1:, ::-2] = v
        assert uint_view(t.numpy()).tolist() == uint_view(a).tolist(), v


def test_scalar_assignment_to_small_floats_rounds_like_ml_dtypes():
    for npt in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.float16):
        for v in (0.1, -3.3, 1e-3, 100.0, np.float32(0.3), np.float16(-2.5), 7):
            t = ptocpu.tensor([2], npt)
            t[...] = v
            with np.errstate(over="ignore"):
                expected = np.array([v, v], dtype=np.float64).astype(np.float32).astype(npt)
            assert uint_view(t.numpy()).tolist() == uint_view(expected).tolist(), (npt, v)


def test_big_integer_scalar_rounds_once_to_float32():
    t = ptocpu.tensor([1], "float32")
    t[0] = 2 ** 60 + 2 ** 36 + 1  # above the float32 tie 2^60 + 2^36, so it rounds up
    assert t.numpy().view(np.uint32)[0] == np.array([2 ** 60 + 2 ** 36 + 1], np.int64).astype(np.float32).view(np.uint32)[0]
    assert t.tolist() == [2.0 ** 60 + 2.0 ** 37]


@pytest.mark.parametrize("dtype,value", [("int8", 128), ("int8", -129), ("uint8", -1), ("uint16", 65536),
                                         ("int64", 2 ** 63), ("uint64", 2 ** 64), ("uint64", -1),
                                         ("bool", 2), ("bool", 0.5), ("int32", float("nan")), ("int32", float("inf")),
                                         ("int16", 1e10)])
def test_scalar_out_of_range_is_an_argument_error_and_writes_nothing(dtype, value):
    t = ptocpu.asarray(np.array([0, 1, 0], dtype=np.dtype(dtype)))
    with pytest.raises(ptocpu.ArgumentError) as e:
        t[...] = value
    assert isinstance(e.value, ValueError)
    shown = "nan" if value != value else "inf" if value == float("inf") else "10000000000" if value == 1e10 else str(value)
    assert f"value {shown}" in str(e.value) and ptocpu.dtype(dtype).name in str(e.value)
    assert t.tolist() == [0, 1, 0]


def test_integer_limits_are_accepted():
    t = ptocpu.tensor([2], "uint64")
    t[0] = 2 ** 64 - 1
    t[1] = np.uint64(2 ** 63)
    assert t.tolist() == [2 ** 64 - 1, 2 ** 63]
    t = ptocpu.tensor([2], "int64")
    t[0], t[1] = -2 ** 63, 2 ** 63 - 1
    assert t.tolist() == [-2 ** 63, 2 ** 63 - 1]


@given(st.data())
def test_tensor_assignment_broadcasts_like_numpy(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3), label="shape")
    npt = data.draw(st.sampled_from([np.int8, np.float16, ml_dtypes.bfloat16, np.float64, np.bool_]), label="dtype")
    a = random_array(shape, npt, seed=1)
    # a value shape broadcastable to shape: drop leading dims, set some dims to 1
    k = data.draw(st.integers(0, len(shape)))
    vshape = [1 if data.draw(st.booleans()) else n for n in shape[k:]]
    v = random_array(vshape, npt, seed=2)
    form = data.draw(st.sampled_from(["tensor", "numpy", "torch", "reversed"]), label="form")
    if form == "tensor":
        value = ptocpu.from_numpy(v)
    elif form == "numpy":
        value = v
    elif form == "torch" and npt not in (ml_dtypes.bfloat16,):
        value = torch.from_numpy(v.copy())
    else:
        v = np.ascontiguousarray(v[(slice(None, None, -1),) * v.ndim])[(slice(None, None, -1),) * v.ndim]
        value = ptocpu.from_numpy(v)
    t = ptocpu.from_numpy(a.copy())
    t[...] = value
    expected = a.copy()
    expected[...] = v
    assert uint_view(t.numpy()).tolist() == uint_view(expected).tolist()


def test_overlapping_assignment_reads_before_writing():
    a = np.arange(10, dtype=np.int32)
    t = ptocpu.from_numpy(a.copy())
    t[1:] = t[:-1]
    expected = a.copy()
    expected[1:] = a[:-1].copy()
    assert t.tolist() == expected.tolist()
    t = ptocpu.from_numpy(a.copy())
    t[::-1] = t
    assert t.tolist() == a[::-1].tolist()


def test_assignment_errors():
    t = ptocpu.tensor([2, 3], "float32")
    with pytest.raises(ptocpu.DTypeError, match=r"DT_FP64.*DT_FP32") as e:
        t[...] = np.ones(3)
    assert isinstance(e.value, TypeError)
    with pytest.raises(ptocpu.DTypeError, match="DT_INT64"):
        t[0] = ptocpu.asarray([1, 2, 3])
    with pytest.raises(ptocpu.DTypeError, match="DT_BF16"):
        t[0] = torch.zeros(3, dtype=torch.bfloat16)
    with pytest.raises(ptocpu.ArgumentError, match=r"\[2\].*\[3\]"):
        t[0] = np.ones(2, np.float32)
    with pytest.raises(ptocpu.ArgumentError, match=r"\[2, 2, 3\]"):
        t[...] = np.ones((2, 2, 3), np.float32)
    assert t.tolist() == [[0.0] * 3] * 2


# --------------------------------------------------------------------------------- creation
@pytest.mark.parametrize("dt,npt,tdt", DTYPES, ids=IDS)
def test_tensor_and_Tensor_are_zero_filled(dt, npt, tdt):
    for make in (ptocpu.tensor, ptocpu.Tensor):
        t = make([3, 5], dt)
        assert t.shape == (3, 5) and t.dtype == dt and t.is_contiguous() and t.strides == (5, 1)
        assert not uint_view(t.numpy()).any()
    big = ptocpu.tensor((257, 129), npt)  # larger than a page: calloc'd or cleared
    assert not uint_view(big.numpy()).any()
    assert ptocpu.tensor(4, dt).shape == (4,)
    assert ptocpu.tensor([], dt).shape == () and ptocpu.tensor([], dt).numel == 1
    assert ptocpu.tensor([2, 0, 3], dt).numel == 0


def test_creation_errors_name_the_value():
    with pytest.raises(ptocpu.ArgumentError, match=r"\[2, -2\]"):
        ptocpu.tensor([2, -2], "float32")
    # -1 is not an error: PyPTO's dynamic dim, a declaration without storage (test_upstream_gaps.py)
    declared = ptocpu.tensor([2, -1], "float32", "d")
    assert declared.shape[0] == 2 and str(declared.shape[1]) == "RUNTIME_GetInputShapeDim(ARG_d,1)"
    with pytest.raises(ptocpu.DTypeError, match="2.5"):
        ptocpu.tensor([2.5], "float32")
    with pytest.raises(ptocpu.DTypeError, match="str"):
        ptocpu.Tensor("ab", "float32")
    with pytest.raises(ptocpu.ArgumentError, match="'f33'"):
        ptocpu.Tensor([2], "f33")


def test_Tensor_placeholder():
    p = ptocpu.Tensor()
    assert repr(p) == "Tensor()"
    for use in (lambda: p.numpy(), lambda: p.tolist(), lambda: p[0], lambda: p.astype("float16"),
                lambda: p.contiguous(), lambda: p.__dlpack__(), lambda: torch.from_dlpack(p),
                lambda: p.__setitem__(Ellipsis, 1.0), lambda: ptocpu.index_select(p, 0, [0]),
                lambda: ptocpu.index_select([1, 2], 0, p), lambda: ptocpu.asarray([1.0]).__setitem__(0, p)):
        with pytest.raises(ptocpu.DTypeError, match="placeholder"):
            use()
