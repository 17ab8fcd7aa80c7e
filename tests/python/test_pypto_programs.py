"""PyPTO programs on ptocpu: graph mode (pypto.function), valid shapes, Tensor surface, FeError,
loops and scalars, and `ptocpu run` / `ptocpu test` (docs/running_pypto_programs.md).

Each test names the upstream hicann/pypto file whose behaviour it checks; the programs here are
our own, and results are compared with numpy / torch references.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ptocpu as pypto
from ptocpu.error import FeError, PyptoError, PyptoGeneralError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_env():
    """This process's environment with PYTHONPATH made absolute (children may run elsewhere)."""
    env = dict(os.environ)
    paths = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run_cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ptocpu.tools.cli", *args], capture_output=True, text=True,
                          env=child_env(), timeout=600, cwd=cwd)


def run_program(*torch_tensors):
    pypto.runtime._device_run_once_data_from_host(*[pypto.from_torch(t) for t in torch_tensors])


# --- graph mode -----------------------------------------------------------------------------

# Mirrors python/tests/st/operation/vector/test_interleave_onboard.py (blocks of rows with a
# min()-computed valid shape), with a tail block so the valid shape is really partial.
def record_interleave(rows, cols, block):
    a, b = pypto.tensor([rows, cols], pypto.DT_FP32, "a"), pypto.tensor([rows, cols], pypto.DT_FP32, "b")
    lo, hi = pypto.tensor([rows, cols], pypto.DT_FP32, "lo"), pypto.tensor([rows, cols], pypto.DT_FP32, "hi")
    with pypto.function("INTERLEAVE", a, b, lo, hi):
        for i in pypto.loop(-(-rows // block), name="rows", idx_name="i"):
            offsets = [i * block, 0]
            valid = [pypto.min(pypto.symbolic_scalar(rows) - i * block, pypto.symbolic_scalar(block)), cols]
            va = pypto.view(a, [block, cols], offsets, valid_shape=valid)
            vb = pypto.view(b, [block, cols], offsets, valid_shape=valid)
            pypto.set_vec_tile_shapes(block, cols)
            r0, r1 = pypto.interleave(va, vb)
            pypto.assemble(r0, offsets, lo)
            pypto.assemble(r1, offsets, hi)
    return lo, hi


def test_function_records_and_replays_interleave_with_a_tail_block():
    pypto.set_platform("ascend950")
    record_interleave(10, 16, 4)
    for seed in (0, 1):  # the recording runs again with new data
        g = torch.Generator().manual_seed(seed)
        a, b = torch.rand(10, 16, generator=g), torch.rand(10, 16, generator=g)
        lo, hi = torch.zeros(10, 16), torch.zeros(10, 16)
        run_program(a, b, lo, hi)
        stream = torch.stack((a, b), dim=-1).flatten(-2)
        assert torch.equal(lo, stream[:, :16]) and torch.equal(hi, stream[:, 16:])


# Mirrors python/tests/st/operation/vector/test_vector_tensor.py (scatter_update as a Tensor
# method): the output declared [1, 1, 1, 8] is bound to a flat torch buffer of the same 8 elements,
# which the device reads as that memory in the declared shape.
def test_function_binds_a_same_size_buffer_of_another_shape_as_the_declared_tensor():
    pypto.set_platform("ascend950")
    src = pypto.tensor([1, 1, 1, 8], pypto.DT_INT32, "src")
    index = pypto.tensor([1, 1], pypto.DT_INT32, "index")
    cache = pypto.tensor([2, 1, 1, 8], pypto.DT_INT32, "cache")
    out = pypto.tensor([2, 1, 1, 8], pypto.DT_INT32, "out")
    with pypto.function("MAIN", src, index, cache, out):
        pypto.assemble(cache.scatter_update(-2, index, src), [0, 0, 0, 0], out)
    s = torch.arange(8, dtype=torch.int32).reshape(1, 1, 1, 8) + 100
    i = torch.tensor([[1]], dtype=torch.int32)
    c = torch.zeros(2, 1, 1, 8, dtype=torch.int32)
    flat_out = torch.full((16,), -1, dtype=torch.int32)
    run_program(s, i, c, flat_out)
    expected = torch.zeros(2, 1, 1, 8, dtype=torch.int32)
    expected[1, 0] = s[0, 0]
    assert torch.equal(flat_out, expected.reshape(16))
    with pytest.raises(FeError):  # a different element count is still an error
        run_program(s, i, c, torch.zeros(15, dtype=torch.int32))


def test_function_checks_fire_at_record_time_and_are_fe_errors():
    # test_interleave_onboard.py runs on 950 only: atlas_a2 does not offer interleave.
    pypto.set_platform("atlas_a2")
    with pytest.raises(FeError) as e:
        record_interleave(8, 16, 4)
    assert isinstance(e.value, pypto.UnsupportedError) and isinstance(e.value, NotImplementedError)
    assert isinstance(e.value, PyptoGeneralError) and isinstance(e.value, PyptoError)
    assert str(e.value).startswith("interleave: not offered on platform atlas_a2")


# Mirrors python/tests/st/operation/vector/test_deinterleave_onboard.py (single-input form).
def test_function_deinterleave_single_input():
    x = pypto.tensor([8, 32], pypto.DT_FP32, "x")
    even, odd = pypto.tensor([8, 16], pypto.DT_FP32), pypto.tensor([8, 16], pypto.DT_FP32)
    with pypto.function("MAIN", x, even, odd):
        for i in pypto.loop(2):
            v = pypto.view(x, [4, 32], [i * 4, 0])
            pypto.set_vec_tile_shapes(2, 32)
            r0, r1 = pypto.deinterleave(v)
            pypto.assemble(r0, [i * 4, 0], even)
            pypto.assemble(r1, [i * 4, 0], odd)
    tx, te, to = torch.randn(8, 32), torch.zeros(8, 16), torch.zeros(8, 16)
    run_program(tx, te, to)
    assert torch.equal(te, tx[:, 0::2]) and torch.equal(to, tx[:, 1::2])


# Mirrors python/tests/st/operation/vector/test_scatter_onboard.py: the index view asks for more
# rows than the index has; only its valid rows scatter, and move + assemble carry the result.
@pytest.mark.parametrize("in_place", [True, False])
def test_function_scatter_reads_only_the_valid_index_rows(in_place):
    src = pypto.tensor([4, 5], pypto.DT_FP32, "src")
    index = pypto.tensor([2, 5], pypto.DT_INT64, "index")
    dst = pypto.tensor([4, 5], pypto.DT_FP32, "dst")
    with pypto.function("MAIN", src, index, dst):
        tmp = pypto.tensor([4, 5], pypto.DT_FP32, "tmp")
        v_src = pypto.view(src, [4, 5], [0, 0])
        v_idx = pypto.view(index, [4, 5], [0, 0], valid_shape=[(pypto.symbolic_scalar(2) - 0).min(4), 5])
        assert v_idx.shape == [4, 5] and v_idx.valid_shape == [2, 5]
        if in_place:
            pypto.scatter_(v_src, 0, v_idx, 2.0)
            tmp.move(v_src)
        else:
            tmp.move(pypto.scatter(v_src, 0, v_idx, 2.0))
        pypto.assemble(tmp, [0, 0], dst)
    a = torch.rand(4, 5) - 2.0
    idx = torch.tensor([[3, 1, 2, 3, 1], [1, 3, 3, 2, 2]])
    out = torch.zeros(4, 5)
    run_program(a.clone() if in_place else a, idx, out)
    assert torch.equal(out, torch.scatter(a, 0, idx, 2.0))  # row 0 untouched: padding is not read


# Mirrors python/tests/st/test_view.py: move of a view into a declared output, with and without
# a valid shape, through pypto.view, Tensor.view and slicing.
@pytest.mark.parametrize("form", ["function", "method", "slice"])
def test_function_move_of_a_view_writes_the_output(form):
    x, res = pypto.tensor([4, 8], pypto.DT_FP32), pypto.tensor([4, 4], pypto.DT_FP32)
    with pypto.function("VIEW", x, res):
        for _ in pypto.loop(1):
            block = {"function": lambda: pypto.view(x, [4, 4], [0, 4]), "method": lambda: x.view([4, 4], [0, 4]),
                     "slice": lambda: x[:, 4:8]}[form]()
            res.move(block)
    tx, tres = torch.randn(4, 8), torch.full((4, 4), 7.0)
    run_program(tx, tres)
    assert torch.equal(tres, tx[:, 4:])


def test_function_move_of_a_partly_valid_view_pads_with_zeros():
    x, res = pypto.tensor([4, 4], pypto.DT_FP32), pypto.tensor([4, 4], pypto.DT_FP32)
    with pypto.function("VIEW_VALID", x, res):
        res.move(x.view([4, 4], [2, 0], valid_shape=[2, 4]))
    tx, tres = torch.randn(4, 4), torch.full((4, 4), 7.0)
    run_program(tx, tres)
    assert torch.equal(tres[:2], tx[2:]) and torch.equal(tres[2:], torch.zeros(2, 4))


# Mirrors python/tests/st/test_tensor_slice_assemble.py: a[b, off:, :] = x with x smaller than the
# block is an assemble at the block's start (the int dim becomes a dim of size 1).
def test_function_slice_assignment_of_a_smaller_value_assembles():
    x, res = pypto.tensor([4, 4], pypto.DT_FP32), pypto.tensor([3, 8, 4], pypto.DT_FP32)
    with pypto.function("SLICE_ASSEMBLE", x, res):
        for b in pypto.loop(res.shape[0]):
            for s in pypto.loop(2):
                res[b, s * 4:, :] = x
    tx, tres = torch.randn(4, 4), torch.zeros(3, 8, 4)
    run_program(tx, tres)
    assert torch.equal(tres, tx.repeat(3, 2, 1))


def test_tensors_made_inside_a_function_start_from_zeros_on_every_run():
    # The temporaries of python/tests/st/operation/vector/test_scatter_onboard.py (tmp_dst_tensor):
    # a scatter into a fresh tensor must not see what the recording or an earlier run wrote.
    index, out = pypto.tensor([1, 3], pypto.DT_INT64), pypto.tensor([3, 3], pypto.DT_FP32)
    with pypto.function("TMP", index, out):
        tmp = pypto.tensor([3, 3], pypto.DT_FP32, "tmp")
        pypto.scatter_(tmp, 0, index, 1.0)
        pypto.assemble(tmp, [0, 0], out)
    for rows in ([2, 1, 0], [1, 1, 1]):
        result = torch.zeros(3, 3)
        run_program(torch.tensor([rows]), result)
        assert torch.equal(result, torch.zeros(3, 3).scatter(0, torch.tensor([rows]), 1.0))


def test_recording_composes_with_a_trace_and_leaves_the_core_functions_in_place():
    # A pypto.function inside ptocpu.trace.recording (docs/tracing.md): both wrap the operators
    # and each puts back exactly what it found.
    from ptocpu import _core
    x, y = pypto.tensor([2, 4], pypto.DT_FP32), pypto.tensor([2, 4], pypto.DT_FP32)
    with pypto.trace.recording(None):
        traced_view = pypto.view
        with pypto.function("F", x, y):
            pypto.assemble(pypto.view(x, [2, 4], [0, 0]), [0, 0], y)
        assert pypto.view is traced_view
    assert pypto.view is _core.view and pypto.assemble is _core.assemble
    tx, ty = torch.rand(2, 4), torch.zeros(2, 4)
    run_program(tx, ty)
    assert torch.equal(tx, ty)


def test_function_errors_and_nesting():
    # python/pypto/_controller.py: functions do not nest; python/tests/ut/interface/test_tensor_view.py:
    # view errors inside a function are FeErrors (and stay ptocpu's classes).
    x = pypto.tensor([4, 8, 16], pypto.DT_FP32)
    with pytest.raises(FeError) as e:
        with pypto.function("OUTER", x):
            with pypto.function("INNER", x):
                pass
    assert "do not nest" in str(e.value)
    with pytest.raises(FeError) as e:
        with pypto.function("RANK", x):
            pypto.view(x, [2, 4], [0, 0])
    assert isinstance(e.value, pypto.ArgumentError) and isinstance(e.value, ValueError)
    y = pypto.tensor([4, 8], pypto.DT_FP32)
    with pytest.raises(FeError) as e:
        with pypto.function("VALID", y):
            pypto.view(y, [4, 8], [0, 0], valid_shape=[5, 8])
    assert isinstance(e.value, pypto.TileError) and "valid_shape [5, 8] exceeds input shape [4, 8]" in str(e.value)


def test_pypto_error_classes():
    # python/pypto/error.py: codes lead the message once; _catch_and_wrap_error names the operation.
    from ptocpu.error import _catch_and_wrap_error
    assert str(PyptoError(0xF00001, "bad value")) == "ErrCode: F00001, bad value"
    assert str(PyptoError(0xF00001, "ErrCode: F00003, earlier")).count("ErrCode") == 1
    assert str(FeError(TypeError("no"))) == "ErrCode: F00001, TypeError: no"

    @_catch_and_wrap_error("compile")
    def kernel():
        raise ValueError("broken")

    with pytest.raises(PyptoGeneralError, match="ErrCode: F00002, ValueError: Failed to compile 'kernel'.\nbroken"):
        kernel()
    # inside kernels ptocpu's message stays as it is (only the class gains FeError)
    with pytest.raises(FeError, match=r"^view: shape \[2\] has 1 entries"):
        with pypto.function("F", pypto.tensor([2, 2])):
            pypto.view(pypto.tensor([2, 2]), [2], [0, 0])


def test_run_checks_the_bound_tensors():
    x = pypto.tensor([2, 3], pypto.DT_FP32)
    with pypto.function("F", x):
        pass
    with pytest.raises(FeError, match="declares 1 tensors but the run got 2"):
        run_program(torch.zeros(2, 3), torch.zeros(2, 3))
    with pytest.raises(FeError, match=r"declared \[2, 3\] DT_FP32 but the run got \[3, 3\] DT_FP32"):
        run_program(torch.zeros(3, 3))
    with pytest.raises(FeError, match=r"declared \[2, 3\] DT_FP32 but the run got \[2, 3\] DT_INT32"):
        run_program(torch.zeros(2, 3, dtype=torch.int32))
    with pytest.raises(FeError, match="not contiguous"):
        pypto.from_torch(torch.zeros(3, 2).t())


def test_from_torch_shares_memory_and_keeps_the_name():
    # python/pypto/converter.py from_torch: a tensor over the torch data, named.
    t = torch.zeros(2, 3)
    p = pypto.from_torch(t, "t_in")
    p[0, 1] = 5.0
    assert t[0, 1] == 5.0 and p.name == "t_in" and p.shape == [2, 3] and p.dtype == pypto.DT_FP32
    assert pypto.from_torch(torch.zeros(2, 4), dtype=pypto.DT_INT32).dtype == pypto.DT_INT32


# --- tensors, views and valid shapes ----------------------------------------------------------

def test_tensor_class_names_and_shapes():
    # python/pypto/tensor.py Tensor.__init__ / shape / name, python/pypto/enum.py
    t = pypto.tensor((2, 3), pypto.DT_INT32, "t", pypto.TileOpFormat.TILEOP_ND)
    assert isinstance(t, pypto.tensor) and pypto.tensor is pypto.Tensor
    assert t.name == "t" and pypto.tensor([2]).name == "" and pypto.tensor([2]).dtype == pypto.DT_FP32
    assert t.shape == [2, 3] and t.shape == (2, 3) and t.shape != [3, 2] and t.valid_shape == [2, 3]
    assert t.dim == 2 and t.format == pypto.TileOpFormat.TILEOP_ND and t.base() is t
    assert pypto.DataType.DT_FP32 is pypto.DT_FP32 and pypto.DT_DOUBLE is pypto.DT_FP64
    assert repr(pypto.Tensor([pypto.STATIC, pypto.DYNAMIC], pypto.DT_FP32)) == "Tensor()"
    nz = pypto.TileOpFormat.TILEOP_NZ
    assert pypto.Tensor([2, 2], pypto.DT_FP16, "w", nz).format == nz
    assert pypto.from_torch(torch.zeros(2, 2), "w", tensor_format=nz).format == nz


def test_view_past_the_end_keeps_its_shape_and_clips_the_valid_shape():
    # python/tests/ut/interface/test_tensor_view.py: blocks past the end, in a recording function.
    x = pypto.asarray(np.arange(32, dtype=np.float32).reshape(4, 8))
    v = pypto.view(x, [4, 4], [2, 6])
    assert v.shape == [4, 4] and v.valid_shape == [2, 2]
    expected = np.zeros((4, 4), np.float32)
    expected[:2, :2] = x.numpy()[2:, 6:]
    np.testing.assert_array_equal(v.numpy(), expected)
    a = pypto.tensor([128, 128], pypto.DT_FP32)
    with pypto.function("MAIN", a):
        for k in pypto.loop(10):
            block = a[k * 16:(k + 1) * 16, k * 16:(k + 1) * 16]
            assert block.shape == [16, 16] and block.valid_shape == ([16, 16] if k < 8 else [0, 0])
    assert a[120:136].shape == (8, 128)  # outside kernels, indexing is numpy's


def test_ops_read_only_the_valid_part_and_assemble_writes_it():
    x = pypto.asarray(np.arange(24, dtype=np.float32).reshape(4, 6))
    v = pypto.view(x, [4, 6], [1, 0], valid_shape=[3, 6])
    index = pypto.asarray(np.array([5, 0], dtype=np.int64))
    picked = pypto.index_select(v, 1, index)
    np.testing.assert_array_equal(picked.numpy(), x.numpy()[1:, [5, 0]])
    out = pypto.tensor([4, 6], pypto.DT_FP32)
    out[:] = -1.0
    pypto.assemble(v, [0, 0], out)
    np.testing.assert_array_equal(out.numpy()[:3], x.numpy()[1:])
    assert (out.numpy()[3] == -1).all()


def test_view_dtype_is_a_bit_cast():
    # docs/zh/api/operation/pypto-view.md: dtype= reads the input's bytes as another dtype.
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = pypto.asarray(a)
    np.testing.assert_array_equal(pypto.view(x, dtype=pypto.DT_INT32).numpy(), a.view(np.int32))
    np.testing.assert_array_equal(pypto.view(x, dtype=pypto.DT_FP16).numpy(), a.view(np.float16))
    np.testing.assert_array_equal(pypto.view(x, dtype=pypto.DT_INT64).numpy(), a.view(np.int64))
    h = pypto.view(x, dtype=pypto.DT_INT16)
    h[0, 0] = 7  # shares memory
    assert a.view(np.int16)[0, 0] == 7
    with pytest.raises(pypto.ArgumentError, match="multiple of 8"):
        pypto.view(pypto.asarray(np.zeros((2, 3), np.float32)), dtype=pypto.DT_INT64)


def test_slice_sugar_scatters_and_move_rebinds():
    # python/pypto/tensor.py __setitem__ (a[dim:index] = v) and move.
    a = pypto.asarray(np.zeros((3, 4), np.float32))
    index = pypto.asarray(np.array([[2, 0, 1, 2]], dtype=np.int64))
    a[0:index] = 3.0
    np.testing.assert_array_equal(a.numpy(), np.zeros((3, 4), np.float32).__setitem__ and
                                  torch.zeros(3, 4).scatter(0, torch.tensor([[2, 0, 1, 2]]), 3.0).numpy())
    b = pypto.tensor([2, 2], pypto.DT_FP32, "b")
    c = pypto.asarray(np.ones((5,), np.float32))
    b.move(c)
    assert b.shape == [5] and b.name == "b"
    with pytest.raises(TypeError):
        b.move([1, 2])


def test_jit_annotations_of_any_shape_and_fe_errors():
    # examples/01_beginner/transform/transform_ops.py annotates with pypto.Tensor([], dtype).
    @pypto.jit
    def copy(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32)):
        out[:] = pypto.view(x, [2, 2], [1, 1], valid_shape=[1, 2])

    x = torch.arange(9, dtype=torch.float32).reshape(3, 3)
    out = torch.full((2, 2), 9.0)
    copy(x, out)
    assert torch.equal(out, torch.tensor([[4.0, 5.0], [9.0, 9.0]]))  # only the valid part is assembled
    with pytest.raises(FeError) as e:
        copy(torch.zeros(3, 3, dtype=torch.int32), out)
    assert isinstance(e.value, pypto.DTypeError) and "parameter 'x' (the 1st input tensor): dtype DT_INT32 does not match" in str(e.value)


# --- loops and scalars ------------------------------------------------------------------------

def test_loop_unroll_yields_index_and_factor():
    # python/pypto/_controller.py loop_unroll: the largest factor first, the rest with smaller ones.
    pairs = list(pypto.loop_unroll(0, 11, 1, name="L", idx_name="i", unroll_list=[4, 2]))
    assert pairs == [(0, 4), (4, 4), (8, 2), (10, 1)]
    covered = [i + k for i, f in pairs for k in range(f)]
    assert covered == list(range(11))
    assert list(pypto.loop_unroll(1, 8, 1, unroll_list=[4])) == [(1, 4), (5, 1), (6, 1), (7, 1)]


def test_symbolic_scalars_are_ints_with_pypto_methods():
    # docs/zh/api/symbolic/pypto-SymbolicScalar-min.md, python/pypto/operation.py min / max
    s = pypto.symbolic_scalar(10)
    assert isinstance(s, pypto.SymbolicScalar) and s == 10
    r = (s - 3 * 4).max(0) + 1
    assert r == 1 and isinstance(r, pypto.SymbolicScalar)
    assert pypto.min(s, 4) == 4 and pypto.max(s, 4) == 10 and s.min(pypto.symbolic_scalar(3)) == 3
    assert pypto.SymbolicScalar("n", 5) == 5 and pypto.SymbolicScalar("n", 5).name == "n"
    assert s.is_concrete() and s.concrete() == 10 and isinstance(next(iter(pypto.loop(1))), pypto.SymbolicScalar)
    # docs/zh/api/symbolic/pypto-SymbolicScalar-is_expression.md (and is_symbol / is_immediate)
    x = pypto.SymbolicScalar("x")
    kinds = [(v.is_immediate(), v.is_symbol(), v.is_expression()) for v in (s, x, x + 5, 5 + s)]
    assert kinds == [(True, False, False), (False, True, False), (False, False, True), (True, False, False)]
    assert x.as_variable() is x


def test_cube_tile_shapes_are_kept():
    # python/tests/ut/interface/test_pto_vec_tiles_shape.py (k keeps its three entries, as PyPTO's)
    pypto.set_cube_tile_shapes([16, 16], [256, 512, 512], [128, 128], False)
    assert pypto.get_cube_tile_shapes() == ([16, 16], [256, 512, 512], [128, 128], False)


def test_scalar_helpers():
    # python/pypto/_utils.py ceildiv / bytes_of; older python/tests/st/test_tensor_slice_assemble.py
    # spells ceildiv as pypto.ceil(a, b).
    assert pypto.ceildiv(9, 4) == 3 and pypto.ceil(8, 4) == 2 and pypto.ceil(pypto.symbolic_scalar(9), 2) == 5
    assert pypto.bytes_of(pypto.DT_BF16) == 2
    # a tensor's ceil is the elementwise op (docs/ops/rounding.md)
    assert pypto.ceil(pypto.asarray([1.5, -1.5])).tolist() == [2.0, -1.0]


def test_options_decorate_and_scope():
    # python/pypto/config.py: options(name, ...) as decorator and scope; set_/get_*_options.
    @pypto.options("scope", pass_options={"enable_slice": True})
    def f():
        return 3

    assert f() == 3
    with pypto.options(debug_options={"runtime_debug_mode": 1}):
        pass
    pypto.set_pass_options(vec_nbuffer_setting={-1: 2})
    assert pypto.get_pass_options()["vec_nbuffer_setting"] == {-1: 2}
    pypto.reset_options()
    assert pypto.get_pass_options()["vec_nbuffer_setting"] == {}
    assert pypto.get_codegen_options()["vf_options"] == ""

    @pypto.jit(host_options={"compile_stage": pypto.CompStage.TENSOR_GRAPH})
    def copy(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        out[:] = x

    out = np.zeros(3, np.float32)
    copy(np.ones(3, np.float32), out)
    assert (out == 1).all()  # the CPU runs the whole kernel whatever the compile stage


def test_loop_begin_end_and_cond():
    # python/pypto/_controller.py is_loop_begin / is_loop_end / cond
    seen = [(int(i), pypto.cond(pypto.is_loop_begin(i)), pypto.cond(pypto.is_loop_end(i))) for i in pypto.loop(1, 8, 3)]
    assert seen == [(1, True, False), (4, False, False), (7, False, True)]
    assert not pypto.is_loop_begin(0)  # a plain int belongs to no loop


def test_tensor_class_getitem_annotation():
    # python/pypto/tensor.py Tensor.__class_getitem__: Tensor[shape, dtype]
    ann = pypto.Tensor[[2, 3], pypto.DT_INT32]
    assert ann.shape == [2, 3] and ann.dtype == pypto.DT_INT32
    assert repr(pypto.Tensor[[pypto.DYNAMIC, 3], pypto.DT_FP32]) == "Tensor()"


# --- ptocpu run / ptocpu test ---------------------------------------------------------------

@pytest.mark.parametrize("example", ["pypto_function_deinterleave.py", "jit_scatter_valid_shapes.py"])
def test_ptocpu_run_runs_the_examples_unchanged(example):
    r = run_cli("run", os.path.join(ROOT, "examples", example))
    assert r.returncode == 0, r.stderr
    assert "match" in r.stdout


def test_ptocpu_test_runs_a_pypto_test_file(tmp_path):
    # The shape of python/tests/st/operation/vector/*_onboard.py files: import pypto, torch.npu,
    # a soc marker, an options decorator, "npu:N" devices and torch_npu.
    (tmp_path / "test_upstream_style.py").write_text(textwrap.dedent('''
        import pytest
        import torch
        import torch_npu
        import pypto
        import pypto.error
        from pypto import assemble  # bound before any function records: still recorded under ptocpu test

        @pytest.mark.soc("950")
        @pypto.options(pass_options={"enable_slice": False})
        def test_interleave_rows():
            torch.npu.set_device(0)
            a = pypto.tensor([4, 8], pypto.DT_FP32, "a")
            b = pypto.tensor([4, 8], pypto.DT_FP32, "b")
            o0 = pypto.tensor([4, 8], pypto.DT_FP32, "o0")
            o1 = pypto.tensor([4, 8], pypto.DT_FP32, "o1")
            with pypto.function("MAIN", a, b, o0, o1):
                pypto.set_vec_tile_shapes(4, 8)
                r0, r1 = pypto.interleave(a, b)
                assemble(r0, [0, 0], o0)
                assemble(r1, [0, 0], o1)
            ta = torch.rand(4, 8, device="npu:0")
            tb = torch.rand(4, 8).npu()
            t0, t1 = torch.zeros(4, 8, device="npu"), torch.zeros(4, 8, device="npu")
            pypto.runtime._device_run_once_data_from_host(*[pypto.from_torch(t) for t in (ta, tb, t0, t1)])
            torch_npu.npu.synchronize()
            stream = torch.stack((ta, tb), dim=-1).flatten(-2)
            assert torch.equal(t0.cpu(), stream[:, :8]) and torch.equal(t1.cpu(), stream[:, 8:])

        def test_platform_is_ascend950():
            assert pypto.get_platform() == "ascend950" and pypto.error.FeError.__name__ == "FeError"
    '''))
    r = run_cli("test", "-q", "-p", "no:cacheprovider", str(tmp_path), cwd=str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout
    r = run_cli("test", "--platform", "atlas_a2", "-q", "-p", "no:cacheprovider", str(tmp_path), cwd=str(tmp_path))
    assert r.returncode != 0 and "2 failed" in r.stdout and "interleave: not offered on platform atlas_a2" in r.stdout


def test_pypto_is_not_importable_outside_the_runner():
    r = subprocess.run([sys.executable, "-c", "import pypto"], capture_output=True, text=True, env=child_env())
    assert r.returncode != 0 and "No module named 'pypto'" in r.stderr
