"""The strided-copy engine (src/kernels/strided_copy.cpp) through Tensor.contiguous(), assignment
and strided_slice: transposed, negative-stride, broadcast and odd layouts against numpy, every
element width, small and large (threaded, streaming-store) sizes."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptocpu

WIDTHS = [np.uint8, np.int16, np.float32, np.float64]


def arange(shape, dtype):
    """Distinct-looking values of every width; taken as raw bits so no cast can overflow."""
    n = int(np.prod(shape))
    dtype = np.dtype(dtype)
    bits = (np.arange(n, dtype=np.uint64) * 7919 % 65521).astype(f"u{dtype.itemsize}")
    return bits.view(dtype).reshape(shape)


def contiguous_of(view: np.ndarray) -> np.ndarray:
    out = ptocpu.asarray(view).contiguous()
    assert out.is_contiguous()
    return out.numpy()


@pytest.mark.parametrize("dtype", WIDTHS)
def test_transposed(dtype):
    for shape in [(3, 5), (67, 130), (300, 257)]:
        a = arange(shape, dtype)
        np.testing.assert_array_equal(contiguous_of(a.T), a.T)
    a = arange((4, 33, 70), dtype)
    for perm in itertools.permutations(range(3)):
        np.testing.assert_array_equal(contiguous_of(a.transpose(perm)), a.transpose(perm))


@pytest.mark.parametrize("dtype", WIDTHS)
@pytest.mark.parametrize("step", [-1, -2, -3, -4, -5, 2, 3, 4, 5, 17])
def test_strided_last_dim(dtype, step):
    for n in [1, 2, 7, 64, 1000]:
        a = arange((3, n * abs(step) + 1), dtype)
        v = a[:, ::step]
        np.testing.assert_array_equal(contiguous_of(v), v)
        v = a[::-1, 1::step]
        np.testing.assert_array_equal(contiguous_of(v), v)


@pytest.mark.parametrize("dtype", WIDTHS)
def test_negative_strides_everywhere(dtype):
    a = arange((5, 6, 7, 8), dtype)
    for key in [np.s_[::-1], np.s_[:, ::-1], np.s_[::-1, :, ::-2, ::-1], np.s_[::-2, ::3, ::-1, 1::2]]:
        np.testing.assert_array_equal(contiguous_of(a[key]), a[key])


@pytest.mark.parametrize("dtype", WIDTHS)
def test_broadcast_views(dtype):
    a = arange((1, 5, 1), dtype)
    for shape in [(4, 5, 3), (2, 5, 1000)]:
        v = np.broadcast_to(a, shape)
        np.testing.assert_array_equal(contiguous_of(v), v)
    v = np.broadcast_to(arange((7,), dtype)[::-1], (300, 7))
    np.testing.assert_array_equal(contiguous_of(v), v)


def test_scalar_and_empty():
    np.testing.assert_array_equal(contiguous_of(np.float32(3.0).reshape(())), np.float32(3.0))
    assert contiguous_of(np.zeros((0, 5), np.float32)[:, ::2]).shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.int32, np.float64])
def test_large_outputs_stream(dtype):
    """Above the streaming-store threshold, several threads, unaligned starts."""
    a = arange((1031, 2053), dtype)
    for key in [np.s_[1:, 1:-1], np.s_[:, ::2], np.s_[::-1, ::-1], np.s_[::3, 1::3], np.s_[:, 3::4]]:
        np.testing.assert_array_equal(contiguous_of(a[key]), a[key])
    np.testing.assert_array_equal(contiguous_of(a.T), a.T)
    flat = arange((3 * (1 << 20) + 13,), dtype)
    np.testing.assert_array_equal(contiguous_of(flat[1:]), flat[1:])


@pytest.mark.parametrize("dtype", WIDTHS)
def test_assignment_into_views(dtype):
    """dst strided / negative / transposed: t[key] = value goes through the engine too."""
    for key in [np.s_[::-1, ::2], np.s_[1:, ::-3], np.s_[...]]:
        base = np.zeros((40, 90), dtype)
        t = ptocpu.asarray(base)
        want = np.zeros((40, 90), dtype)
        value = arange(want[key].shape, dtype)
        want[key] = value
        t[key] = ptocpu.asarray(value)
        np.testing.assert_array_equal(base, want)
    base = np.zeros((50, 60), dtype)
    t = ptocpu.asarray(base.T)
    value = arange((60, 50), dtype)
    t[...] = ptocpu.asarray(value)
    np.testing.assert_array_equal(base, value.T)
    t[...] = 3  # a scalar broadcast (src strides 0)
    assert (base == 3).all()


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_hypothesis_random_views(data):
    rank = data.draw(st.integers(1, 5))
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    dtype = data.draw(st.sampled_from(WIDTHS))
    a = arange(shape, dtype)
    key = tuple(slice(data.draw(st.integers(0, n - 1)), None, data.draw(st.sampled_from([-3, -2, -1, 1, 2, 3])))
                for n in shape)
    v = a[key].transpose(data.draw(st.permutations(range(rank))))
    if data.draw(st.booleans()):
        v = np.broadcast_to(v[:, None], (v.shape[0], 3) + v.shape[1:])
    np.testing.assert_array_equal(contiguous_of(v), v)


def _check_stream_layouts():
    for dtype in (np.uint8, np.int16, np.float32, np.float64):
        a = (np.arange(3 * 1029 * 13, dtype=np.int64) * 7919 % 65521).astype(dtype).reshape(3, 1029, 13)
        b = a.reshape(3, -1)
        for view in (b[:, 1:], b[:, ::2], b[:, 1::3], b[:, ::4], b[:, ::-1], b[::-1, -2::-1], b[:, 5::5],
                     a.transpose(0, 2, 1), b[1, 3:][::2], b[:, ::-2], np.broadcast_to(b[:1, 7:9], (500, 2))):
            for start in range(3):  # unaligned dst starts
                v = view[..., start:]
                out = ptocpu.asarray(v).contiguous().numpy()
                assert np.array_equal(out, v), (dtype, v.shape, v.strides)


@pytest.mark.parametrize("isa", ["avx512", "avx2", "baseline"])
def test_streaming_kernels_every_isa(isa):
    """The streaming-store kernels (normally only for outputs above half the last-level cache),
    forced on for every output through the private tuning hook, with each ISA the dispatcher can pick."""
    ptocpu._core._set_kernel_tuning(0, isa)
    try:
        _check_stream_layouts()
    finally:
        ptocpu._core._set_kernel_tuning(-1, None)
