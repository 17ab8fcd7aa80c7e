"""torch CPU tensors as op arguments and through asarray: wrapped by their data pointer, with the
semantics of a DLPack import (docs/tensors.md, memory at the boundary). torch is the reference."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import torch

import ptocpu


def test_non_contiguous_views_are_shared_with_torch_strides():
    base = torch.arange(48, dtype=torch.float32).reshape(6, 8)
    view = base[1::2, ::3].t()  # strides (3, 16), storage offset 8
    t = ptocpu.asarray(view)
    assert t.shape == tuple(view.shape) and t.strides == view.stride()
    np.testing.assert_array_equal(t.numpy(), view.numpy())
    base[3, 3] = -1.0  # a write through torch is seen by the import
    assert t.numpy()[1, 1] == -1.0


def test_scatter_into_a_non_contiguous_torch_view_lands_in_its_memory():
    base = torch.zeros(5, 8)
    expect = base.clone()
    index = torch.tensor([[0, 2, 1], [3, 0, 2]])
    src = torch.arange(1.0, 7.0).reshape(2, 3)
    ptocpu.scatter_(base[::2, 1::2], 1, index, src)
    expect[::2, 1::2].scatter_(1, index, src)
    assert torch.equal(base, expect)


@pytest.mark.parametrize("dtype,ptodtype", [(torch.bfloat16, ptocpu.DT_BF16), (torch.bool, ptocpu.DT_BOOL),
                                            (torch.float8_e4m3fn, ptocpu.DT_FP8E4M3), (torch.int64, ptocpu.DT_INT64),
                                            (torch.uint16, ptocpu.DT_UINT16)])
def test_dtypes_map_to_ptocpu_dtypes(dtype, ptodtype):
    x = torch.tensor([[0.0, 1.5, -2.0], [3.0, 0.0, 1.0]]).to(dtype)
    t = ptocpu.asarray(x)
    assert t.dtype == ptodtype
    got = ptocpu.index_select(x, 1, torch.tensor([2, 0])).numpy()
    expect = torch.index_select(x, 1, torch.tensor([2, 0]))
    np.testing.assert_array_equal(got.astype(np.float32), expect.to(torch.float32).numpy())


def test_requires_grad_is_read_only_and_refused_as_a_write_target():
    x = torch.nn.Parameter(torch.arange(12.0).reshape(3, 4))
    t = ptocpu.asarray(x)
    assert not t.numpy().flags.writeable
    with pytest.raises(ptocpu.ArgumentError):
        t[0, 0] = 5.0
    got = ptocpu.index_select(x, 0, torch.tensor([2])).numpy()
    np.testing.assert_array_equal(got, torch.index_select(x, 0, torch.tensor([2])).detach().numpy())
    with pytest.raises(ptocpu.ArgumentError, match="requires grad"):
        ptocpu.scatter_(x, 0, torch.tensor([[1]]), 5.0)
    with pytest.raises(ptocpu.ArgumentError, match="requires grad"):
        ptocpu.asarray(x, copy=False)
    assert torch.equal(x.detach(), torch.arange(12.0).reshape(3, 4))


def test_the_torch_memory_is_kept_alive_while_the_import_lives():
    x = torch.arange(10, dtype=torch.int32)[2:8]
    storage = weakref.ref(x.untyped_storage())
    t = ptocpu.asarray(x)
    x.set_(torch.zeros(3, dtype=torch.int32))  # x lets go of its memory, as does
    del x
    gc.collect()
    assert storage() is not None
    reused = [torch.full((10,), -7, dtype=torch.int32) for _ in range(8)]  # what a freed block would become
    np.testing.assert_array_equal(t.numpy(), np.arange(2, 8, dtype=np.int32))
    del t, reused
    gc.collect()
    assert storage() is None


def test_dtypes_and_tensors_torch_cannot_export_keep_their_errors():
    with pytest.raises(ptocpu.DTypeError, match="no ptocpu dtype"):
        ptocpu.index_select(torch.ones(3, dtype=torch.complex64), 0, torch.tensor([0]))
    with pytest.raises(ptocpu.ArgumentError, match="conjugate"):
        ptocpu.asarray(torch.ones(3, dtype=torch.complex64).conj())
    with pytest.raises(ptocpu.ArgumentError, match="meta"):
        ptocpu.asarray(torch.ones(3, device="meta"))
    with pytest.raises(ptocpu.ArgumentError, match="layout"):
        ptocpu.asarray(torch.ones(3).to_sparse())


def test_negated_views_are_read_with_their_sign_and_refused_as_write_targets():
    x = torch.arange(6.0).reshape(2, 3)
    negated = torch._neg_view(x)
    np.testing.assert_array_equal(ptocpu.asarray(negated).numpy(), (-x).numpy())
    got = ptocpu.index_select(negated, 1, torch.tensor([2, 0])).numpy()
    np.testing.assert_array_equal(got, torch.index_select(negated, 1, torch.tensor([2, 0])).numpy())
    with pytest.raises(ptocpu.ArgumentError, match="negative bit"):
        ptocpu.scatter_(negated, 0, torch.tensor([[1]]), 5.0)


def test_subclasses_take_the_dlpack_path():
    class Tagged(torch.Tensor):
        pass

    x = torch.arange(6.0).reshape(2, 3).as_subclass(Tagged)
    got = ptocpu.index_select(x, 0, torch.tensor([1]))
    np.testing.assert_array_equal(got.numpy(), torch.arange(3.0, 6.0).reshape(1, 3).numpy())
