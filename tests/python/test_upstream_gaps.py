"""Behaviours of hicann/pypto (883e7df) that its own test suite relies on, outside the operators.

Each test names the upstream file the behaviour comes from; the programs are our own and the
expected values come from numpy / torch or are written out by hand.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ptocpu as pypto
from ptocpu.error import FeError


def run_program(*torch_tensors):
    pypto.runtime._device_run_once_data_from_host(*[pypto.from_torch(t) for t in torch_tensors])


# --- view with a valid shape larger than the view's shape ---------------------------------------
# python/tests/st/operation/vector/test_log10.py (and test_relu.py, test_tanh.py, ... 12 files)
# give every block `valid_shape=[min(n - b * block, n), ...]`, which is n for the first block;
# framework/src/interface/operation/operation_impl.cpp (CheckViewValidShapesConstraint) bounds a
# valid shape by the viewed tensor's shape only.

def test_view_valid_shape_larger_than_shape_is_clipped_to_the_block():
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    v = pypto.view(x, [2, 4], [1, 2], valid_shape=[4, 8])
    assert v.shape == [2, 4] and v.valid_shape == [2, 4]
    np.testing.assert_array_equal(v.numpy(), x[1:3, 2:6])
    # one dim clipped, the other partly valid: the padding reads 0
    w = pypto.view(x, [2, 4], [2, 4], valid_shape=[1, 8])
    assert w.valid_shape == [1, 4]
    np.testing.assert_array_equal(w.numpy(), [[20, 21, 22, 23], [0, 0, 0, 0]])


@pytest.mark.parametrize("valid, pattern", [
    ([5, 4], r"^view: valid_shape \[5, 4\] exceeds input shape \[4, 8\] at dim 0 \(5 > 4\)"),
    ([4, 9], r"^view: valid_shape \[4, 9\] exceeds input shape \[4, 8\] at dim 1 \(9 > 8\)"),
    # clipped to [2, 4], which at offset 3 runs past the input's 4 rows
    ([4, 4], r"^view: offsets \[3, 0\] \+ valid_shape \(clipped to shape\) \[2, 4\] = \[5, 4\] is outside input"),
])
def test_view_valid_shape_beyond_the_input_is_a_tile_error(valid, pattern):
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(pypto.TileError, match=pattern):
        pypto.view(x, [2, 4], [3 if valid == [4, 4] else 0, 0], valid_shape=valid)


def test_blocks_with_the_whole_tensor_as_valid_shape_compute_the_whole_tensor():
    # the kernel shape of test_log10.py: 16x16 blocks of a 32x32 tensor, valid shape min(n - i*16, n)
    pypto.set_platform("ascend950")
    n = 32
    a = pypto.tensor([n, n], pypto.DT_FP32, "a")
    b = pypto.tensor([n, n], pypto.DT_FP32, "b")
    with pypto.function("MAIN", a, b):
        for i in pypto.loop(2):
            for j in pypto.loop(2):
                block = pypto.view(a, [16, 16], [i * 16, j * 16],
                                   valid_shape=[pypto.min(pypto.symbolic_scalar(n) - i * 16, pypto.symbolic_scalar(n)),
                                                pypto.min(pypto.symbolic_scalar(n) - j * 16, pypto.symbolic_scalar(n))])
                pypto.set_vec_tile_shapes(8, 8)
                block.move(pypto.exp(block))
                pypto.assemble(block, [i * 16, j * 16], b)
    ta = torch.rand(n, n)
    tb = torch.zeros(n, n)
    run_program(ta, tb)
    torch.testing.assert_close(tb, torch.exp(ta), rtol=1e-6, atol=0)
