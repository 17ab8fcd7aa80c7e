"""Behaviours of hicann/pypto (883e7df) that its own test suite relies on, outside the operators.

Each test names the upstream file the behaviour comes from; the programs are our own and the
expected values come from numpy / torch or are written out by hand.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import ptocpu as pypto
from ptocpu.error import FeError, ParserError


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


# --- tensors with dynamic dims ------------------------------------------------------------------
# python/tests/ut/interface/test_tensor.py (test_init_tensor) declares pypto.tensor([-1, 32], ...);
# test_symbolic_scalar_solver.py (test_affine_mop_call) reads its dim as
# RUNTIME_GetInputShapeDim(ARG_c,0); python/pypto/tensor.py (Tensor.shape) gives dynamic dims as
# symbolic scalars.

def test_a_declared_dynamic_dim_is_an_unknown_named_after_the_tensor():
    b = pypto.tensor([-1, 32], pypto.DT_FP16, "b", pypto.TileOpFormat.TILEOP_NZ)
    assert (b.dtype, b.name, b.format, b.dim) == (pypto.DT_FP16, "b", pypto.TileOpFormat.TILEOP_NZ, 2)
    assert str(b.shape[0]) == "RUNTIME_GetInputShapeDim(ARG_b,0)" and b.shape[1] == 32
    with pytest.raises(ValueError):  # an unknown dim cannot be compared
        assert b.shape == [-1, 32]
    n = pypto.symbolic_scalar("n")
    c = pypto.Tensor([n, 8], pypto.DT_INT32, "c")  # an unknown symbolic dim is dynamic too
    assert str(c.shape[0]) == "RUNTIME_GetInputShapeDim(ARG_c,0)" and c.dtype == pypto.DT_INT32
    a = pypto.symbolic_scalar("a")
    rows = b.shape[0]
    check = pypto.SymbolicScalar.check
    assert check([a + 1 == rows - 1, a + 2 == rows - 1]) == pypto.SatStatus.UNSAT
    assert check([a + 1 == rows - 1]) != pypto.SatStatus.UNSAT
    with pytest.raises(pypto.ArgumentError, match=r"exp: input of shape \[RUNTIME_GetInputShapeDim\(ARG_b,0\), 32\] "
                                                  r"has the dynamic dims \(0,\)\. Dynamic shape tensors are not"):
        pypto.exp(b)


def _record_add_rows(body):
    """The kernel of python/tests/ut/interface/test_pto_loop.py (test_loop_manual_unroll) over
    [-1, 64] tensors: every 64-row block of B is A's + 2, the block count read from A's dim."""
    pypto.set_platform("ascend950")
    A = pypto.tensor((-1, 64), pypto.DT_FP32, "A")  # noqa: N806
    B = pypto.tensor((-1, 64), pypto.DT_FP32, "B")  # noqa: N806
    with pypto.function("MAIN", A, B):
        body(A, B)


def _unrolled_blocks(A, B):  # noqa: N803
    pypto.set_vec_tile_shapes(64, 64)
    for b, k in pypto.loop_unroll(A.shape[0] // 64, unroll_list=[1, 2, 4], name="A", idx_name="b"):
        tile = A[b * 64:(b + k) * 64, :]
        tile = tile + 2
        B[b * 64:, :] = tile


def test_a_function_over_dynamic_dims_runs_its_body_with_each_runs_sizes():
    _record_add_rows(_unrolled_blocks)  # recording stops where it needs A's rows: no error
    for rows in (64 * 3, 64 * 7):
        a = torch.rand(rows, 64)
        out = torch.zeros(rows, 64)
        run_program(a, out)
        torch.testing.assert_close(out, a + 2, rtol=0, atol=0)
    with pytest.raises(FeError, match=r"argument 1 \('B'\) was declared \[-1, 64\] DT_FP32 but the run got \[64, 32\]"):
        run_program(torch.zeros(64, 64), torch.zeros(64, 32))
    with pytest.raises(FeError, match=r"argument 0 \('A'\) was declared \[-1, 64\] DT_FP32 but the run got \[64, 64\] "
                                      r"DT_INT32"):
        run_program(torch.zeros(64, 64, dtype=torch.int32), torch.zeros(64, 64))


def test_a_function_that_reads_values_runs_its_body_on_each_runs_data():
    """upstream's st/operator/test_page_attention.py: loop bounds and view offsets read from an INT32
    tensor (sequence lengths) were zeros when recorded; each run executes the body on its data."""
    lens = pypto.tensor([2], pypto.DT_INT32, "lens")
    x = pypto.tensor([2, 8], pypto.DT_FP32, "x")
    out = pypto.tensor([2, 8], pypto.DT_FP32, "out")
    with pypto.function("MAIN", lens, x, out):
        pypto.set_vec_tile_shapes(1, 8)
        for b in pypto.loop(2):
            for j in pypto.loop(lens[b]):  # a value read into Python
                row = pypto.view(x, [1, 1], [b, j])
                pypto.assemble(row + 1.0, [b, j], out)
    data = torch.arange(16, dtype=torch.float32).reshape(2, 8)
    for given in ([3, 5], [8, 1]):
        result = torch.zeros(2, 8)
        run_program(torch.tensor(given, dtype=torch.int32), data, result)
        want = torch.zeros(2, 8)
        for b, n in enumerate(given):
            want[b, :n] = data[b, :n] + 1
        torch.testing.assert_close(result, want, rtol=0, atol=0)


def test_a_function_over_dynamic_dims_refuses_them_as_operands_when_it_runs():
    def whole(A, B):  # noqa: N803
        pypto.set_vec_tile_shapes(64, 64)
        B[:] = A + 2

    _record_add_rows(whole)
    with pytest.raises(FeError, match="Dynamic shape tensors are not allowed as operation operands") as e:
        run_program(torch.zeros(64, 64), torch.zeros(64, 64))
    assert isinstance(e.value, pypto.ArgumentError)


def test_a_function_body_that_cannot_run_alone_is_refused_when_recorded():
    # the body is executed again by every run: it must be a block of its own (no return)
    A = pypto.tensor((-1, 8), pypto.DT_FP32, "A")  # noqa: N806

    def record():
        with pypto.function("MAIN", A):
            return A

    with pytest.raises(FeError, match="needs a body that runs on its own"):
        record()


# python/tests/ut/interface/test_dynamic_shape_error.py: in a jit kernel a dim annotated
# pypto.DYNAMIC has no size, so operators refuse the tensor (framework/src/interface/operation/
# operation_common.cpp CheckTensorDynamicShape; operation_impl.cpp Assemble's own check).

@pypto.frontend.jit
def _exp_of_dynamic(a: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
                    out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 16)
    out[:] = pypto.exp(a)


@pypto.frontend.jit
def _exp_of_views(a: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
                  out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 16)
    for i in pypto.loop(a.shape[0] // 2):
        block = pypto.view(a, [2, 8], [i * 2, 0])
        pypto.assemble(pypto.exp(block), [i * 2, 0], out)


@pypto.frontend.jit
def _assemble_dynamic(a: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32),
                      out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32), listed: bool):
    if listed:
        pypto.assemble([(a, [0, 0])], out)
    else:
        pypto.assemble(a, [0, 0], out)


def test_jit_operators_refuse_a_dynamic_argument_and_compute_on_its_views():
    a = torch.rand(4, 8)
    out = torch.zeros(4, 8)
    with pytest.raises(FeError, match=r"exp: input of shape \[4, 8\] has the dynamic dims \(0,\)\. Dynamic shape "
                                      r"tensors are not allowed as operation operands"):
        _exp_of_dynamic(a, out)
    assert not out.any()
    _exp_of_views(a, out)
    torch.testing.assert_close(out, torch.exp(a))
    for listed in (False, True):
        with pytest.raises(FeError, match=r"^.*Assemble: shape of src tensor requires integer"):
            _assemble_dynamic(a, out, listed)
    # the mark lasts for the call only: the caller's tensor computes afterwards
    t = pypto.asarray(np.ones((2, 8), np.float32))
    with pytest.raises(FeError):
        _exp_of_dynamic(t, np.zeros((2, 8), np.float32))
    assert not hasattr(t, "_dynamic_dims") and pypto.exp(t).shape == (2, 8)


# python/pypto/operation.py reshape: a shape computed from a DYNAMIC dim is a SymbolicScalar while
# the kernel is built, so only inplace=True (without valid_shape) takes it.

@pypto.frontend.jit
def _reshape_dynamic(q: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, pypto.STATIC], pypto.DT_FP32),
                     out: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP32), inplace: bool, valid: bool):
    pypto.set_vec_tile_shapes(8, 8)
    shape = [q.shape[0] * q.shape[1], q.shape[2]]
    flat = pypto.reshape(q, shape, valid_shape=shape if valid else None, inplace=inplace)
    for i in pypto.loop(q.shape[0]):
        rows = pypto.view(flat, [q.shape[1], q.shape[2]], [i * q.shape[1], 0])
        pypto.assemble(pypto.exp(rows), [i * q.shape[1], 0], out)


def test_jit_reshape_of_a_dynamic_tensor_only_in_place():
    q = torch.rand(2, 4, 8)
    out = torch.zeros(8, 8)
    for inplace, valid in ((False, False), (False, True), (True, True)):
        with pytest.raises(FeError, match=r"reshape\(\) requires integer shape when using non-inplace reshape"):
            _reshape_dynamic(q, out, inplace, valid)
    assert not out.any()
    _reshape_dynamic(q, out, True, False)
    torch.testing.assert_close(out, torch.exp(q.reshape(8, 8)))


def _error_of(call) -> str:
    try:
        call()
    except pypto.Error as e:
        return str(e)
    return ""


def test_jit_arguments_are_named_and_a_whole_assignment_makes_a_dynamic_tensor_static():
    """upstream's st/ir/test_compile_pipeline.py: the body checks its tensors' names, then assigns a
    static view of a DYN tensor to it whole and uses it as an operand."""
    @pypto.frontend.jit
    def kernel(a: pypto.Tensor([pypto.DYN, 8]), out: pypto.Tensor([pypto.DYN, 8])):
        assert (a.name, out.name) == ("a", "out")
        pypto.set_vec_tile_shapes(4, 8)
        assert "requires integer" in _error_of(lambda: pypto.assemble(a, [0, 0], out))  # still dynamic
        a[:] = pypto.view(a, [6, 8], [0, 0])
        pypto.assemble(a + 1.0, [0, 0], out)

    a = torch.arange(48, dtype=torch.float32).reshape(6, 8)
    out = torch.zeros(6, 8)
    kernel(a, out)
    torch.testing.assert_close(out, a + 1)
    named = pypto.asarray(a.numpy())
    kernel(named, out)
    assert named.name == "" and not hasattr(named, "_dynamic_dims")  # both only for the call
    own = pypto.asarray(a.numpy()).to_tensor("mine")

    @pypto.frontend.jit
    def keeps(x: pypto.Tensor()):
        assert x.name == "mine"

    keeps(own)


def test_new_ir_false_kernel_errors_name_their_statement(capsys):
    @pypto.frontend.jit(new_ir=False)
    def flatten(a: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP16),
                out: pypto.Tensor([pypto.STATIC], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(32, 32)
        out.move(pypto.reshape(a,
                               [a.shape[0] * a.shape[1]]))

    with pytest.raises(ParserError) as caught:
        flatten(torch.rand(4, 8, dtype=torch.float16), torch.zeros(32, dtype=torch.float16))
    assert isinstance(caught.value, pypto.ArgumentError)  # still ptocpu's class
    node = caught.value.node
    assert node.lineno == flatten.__wrapped__.__code__.co_firstlineno + 4 and node.end_lineno == node.lineno + 1
    printed = capsys.readouterr().out
    assert f"error: {__file__}:{node.lineno}:{node.col_offset + 1}: ArgumentError: reshape() requires" in printed
    lines = printed.splitlines()
    first = next(i for i, line in enumerate(lines) if line.endswith("out.move(pypto.reshape(a,"))
    assert lines[first + 1].strip() == "^" * len("out.move(pypto.reshape(a,")
    assert lines[first + 2].endswith("[a.shape[0] * a.shape[1]]))")
    assert lines[first + 3].strip() == "^" * len("[a.shape[0] * a.shape[1]]))")

    @pypto.frontend.jit  # the IR front end raises the error as it is
    def flatten_ir(a: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_FP16)):
        pypto.reshape(a, [a.shape[0] * a.shape[1]])

    with pytest.raises(FeError) as caught:
        flatten_ir(torch.rand(4, 8, dtype=torch.float16))
    assert not isinstance(caught.value, ParserError) and "error:" not in capsys.readouterr().out


# --- jit annotation checks ----------------------------------------------------------------------
# python/tests/st/frontend/test_function_kernel.py looks for "does not match the shape" and "does not
# match the dtype" (python/pypto/frontend/parser/entry.py _check_input_defs_match_tensors);
# st/frontend/test_annotation_check.py for the number of dimensions.

@pypto.frontend.jit
def _annotated(a: pypto.Tensor(dtype=pypto.DT_INT32), b: pypto.Tensor([], pypto.DT_INT32),
               c: pypto.Tensor([...], pypto.DT_INT32), d: pypto.Tensor([pypto.STATIC, 32], pypto.DT_INT32),
               e: pypto.Tensor([pypto.DYNAMIC, ...], pypto.DT_INT32), scalar=0):
    d[:] = a + b + c + scalar


def _ints(*shape):
    return torch.ones(shape, dtype=torch.int32)


def test_jit_checks_dtype_only_and_marker_annotations():
    d = _ints(8, 32)
    _annotated(_ints(8, 32), _ints(8, 32), _ints(8, 32), d, _ints(3, 2, 1), scalar=1)
    assert torch.equal(d, torch.full((8, 32), 4, dtype=torch.int32))
    cases = [
        ((torch.ones(8, 32), _ints(8, 32), _ints(8, 32), d, _ints(2)), pypto.DTypeError,
         r"parameter 'a' \(the 1st input tensor\): dtype DT_FP32 does not match the dtype of its definition DT_INT32"),
        ((_ints(8, 32), _ints(8, 32), _ints(8, 32), _ints(8, 31), _ints(2)), pypto.ArgumentError,
         r"parameter 'd' \(the 4th input tensor\): shape \[8, 31\] does not match the shape of its definition "
         r"\[STATIC, 32\]"),
        ((_ints(8, 32), _ints(8, 32), _ints(8, 32), _ints(8, 32, 1), _ints(2)), pypto.ArgumentError,
         r"parameter 'd' \(the 4th input tensor\): the number of dimensions of shape \[8, 32, 1\] does not match"),
        ((_ints(8, 32), _ints(8, 32), _ints(8, 32), d, torch.tensor(1, dtype=torch.int32)), pypto.ArgumentError,
         r"parameter 'e' \(the 5th input tensor\): the number of dimensions of shape \[\] does not match the number "
         r"of dimensions of its definition \[DYNAMIC, \.\.\.\]"),
        ((_ints(8, 32), torch.ones(8, 32, dtype=torch.int8), _ints(8, 32), d, _ints(2)), pypto.DTypeError,
         r"parameter 'b' \(the 2nd input tensor\): dtype DT_INT8 does not match"),
    ]
    for args, error, pattern in cases:
        with pytest.raises(error, match=pattern) as e:
            _annotated(*args)
        assert isinstance(e.value, FeError)


def test_nested_functions_check_their_annotations():
    # test_function_kernel.py's sub_add_kernel: a pypto.frontend.function with annotated tensors
    @pypto.frontend.function
    def inner(a: pypto.Tensor(dtype=pypto.DT_INT32), d: pypto.Tensor([pypto.STATIC, 32], pypto.DT_INT32), s=0):
        return a + d + s

    @pypto.frontend.jit
    def outer(a: pypto.Tensor(), d: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = inner(a, d, 1)

    out = _ints(4, 32)
    outer(_ints(4, 32), _ints(4, 32), out)
    assert torch.equal(out, torch.full((4, 32), 3, dtype=torch.int32))
    with pytest.raises(FeError, match=r"function .*inner parameter 'd' \(the 2nd input tensor\): shape \[4, 31\] does "
                                      r"not match the shape of its definition \[STATIC, 32\]"):
        outer(_ints(4, 31), _ints(4, 31), _ints(4, 31))
    with pytest.raises(FeError, match=r"function .*inner parameter 'a' \(the 1st input tensor\): dtype DT_FP32 does"):
        outer(torch.ones(4, 32), _ints(4, 32), _ints(4, 32))


# --- smaller surfaces ---------------------------------------------------------------------------

def test_get_vec_tile_shapes_is_a_list():
    # python/pypto/_controller.py returns List[int]; ut/interface/test_multi_jit_scope.py compares
    # `[64, 64] == pypto.get_vec_tile_shapes()`
    assert pypto.get_vec_tile_shapes() == [] and isinstance(pypto.get_vec_tile_shapes(), list)
    pypto.set_vec_tile_shapes(64, 64)
    assert [64, 64] == pypto.get_vec_tile_shapes()


def test_array_protocol_takes_numpy_2s_copy_keyword(recwarn):
    # numpy 2 passes copy= to __array__ (st/test_dynamic_reshape_new_front.py compares np.array(...))
    t = pypto.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    shared = np.asarray(t)
    shared[0, 0] = 7
    assert t.numpy()[0, 0] == 7
    assert np.shares_memory(np.array(t, copy=False), shared)
    copied = np.array(t, copy=True)
    copied[0, 0] = 1
    assert t.numpy()[0, 0] == 7
    np.testing.assert_array_equal(np.array(t, dtype=np.float64), [[7, 1, 2], [3, 4, 5]])
    with pytest.raises(pypto.ArgumentError, match="needs a copy, but copy=False"):
        np.array(t, dtype=np.float64, copy=False)
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_assemble_takes_parallel_as_a_keyword_in_both_forms():
    # ut/interface/test_tensor_view.py (test_single_assemble_explicit_parallel); python/pypto/
    # operation.py: assemble(*args, parallel=False)
    out = np.zeros((2, 4), np.float32)
    pypto.assemble(np.ones((2, 2), np.float32), [0, 2], out, parallel=True)
    pypto.assemble([(np.full((1, 2), 5, np.float32), [1, 0])], out, parallel=True)
    np.testing.assert_array_equal(out, [[0, 0, 1, 1], [5, 5, 1, 1]])
    with pytest.raises(TypeError, match="takes 3 positional arguments"):  # parallel: a keyword only, as in PyPTO
        pypto.assemble(np.ones((2, 2), np.float32), [0, 0], out, True)


def test_unpacking_a_tensor_in_a_function_is_an_fe_error():
    # ut/interface/test_tensor.py (test_tensor_starred); python/pypto/tensor.py: Tensor.__iter__
    # raises FeError(TypeError("Tensor is not iterable."))
    a = pypto.tensor([4, 4], pypto.DT_INT32, "a")
    with pytest.raises(FeError, match="not iterable") as e:
        with pypto.function("SUBS", a):
            first, *rest = a - 3
    assert isinstance(e.value, pypto.DTypeError)
    # outside kernels a ptocpu tensor iterates its rows, as an array
    rows = list(pypto.asarray(np.arange(6).reshape(3, 2)))
    assert [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]


def test_valid_shape_entries_are_known_symbolic_scalars():
    # ut/interface/test_tensor.py (test_tensor_subs_tensor_element): [x.concrete() for x in c.valid_shape]
    v = pypto.view(np.zeros((4, 8), np.float32), [4, 4], [2, 0])
    assert [x.concrete() for x in v.valid_shape] == [2, 4]
    assert all(isinstance(x, pypto.SymbolicScalar) for x in v.valid_shape)
    assert v.valid_shape == [2, 4] and v.valid_shape == (2, 4) and repr(v.valid_shape) == "(2, 4)"


# ---- pypto.Element as an operand (pypto-where.md, pypto-full.md; ut/operation/test_where_full_unsigned_scalar_check.py)

def test_an_element_is_a_scalar_of_its_dtype():
    x = np.array([1.5, -2.0, 0.25, 8.0], np.float16)
    got = pypto.add(x, pypto.Element(pypto.DT_FP16, 0.5)).numpy()
    assert got.dtype == np.float16 and np.array_equal(got, x + np.float16(0.5))
    cond = np.array([True, False, True, False])
    got = pypto.where(cond, x, pypto.Element(pypto.DT_FP16, 3.0)).numpy()
    assert np.array_equal(got, np.where(cond, x, np.float16(3.0)))
    u = np.array([1, 2, 3, 4], np.uint8)
    assert pypto.where(cond, pypto.Element(pypto.DT_UINT8, 200), u).numpy().tolist() == [200, 2, 200, 4]
    assert pypto.full([2, 2], pypto.Element(pypto.DT_INT32, 7), pypto.DT_INT32).numpy().tolist() == [[7, 7], [7, 7]]


@pytest.mark.parametrize("call", [
    lambda x, c: pypto.where(c, x, 1.0),                                      # a float is a DT_FP32 element
    lambda x, c: pypto.where(c, 0.0, x),
    lambda x, c: pypto.where(c, x, pypto.Element(pypto.DT_FP32, 1.0)),
    lambda x, c: pypto.where(c, pypto.Element(pypto.DT_FP32, 1.0), x),
    lambda x, c: pypto.where(c, pypto.Element(pypto.DT_FP16, 1.0), pypto.Element(pypto.DT_FP32, 0.0)),
    lambda x, c: pypto.where(c, x, x.astype(np.float32)),
    lambda x, c: pypto.add(x, pypto.Element(pypto.DT_FP32, 1.0)),
])
def test_values_of_another_dtype_are_data_type_inconsistent(call):
    x, cond = np.ones(4, np.float16), np.ones(4, bool)
    with pytest.raises(pypto.DTypeError, match="data type inconsistent"):
        call(x, cond)


@pytest.mark.parametrize("call", [
    lambda: pypto.full([2, 2], -100, pypto.DT_UINT8),
    lambda: pypto.full([2, 2], -1.0, pypto.DT_UINT16),
    lambda: pypto.full([2, 2], pypto.Element(pypto.DT_UINT32, -1), pypto.DT_UINT32),
    lambda: pypto.where(np.ones(4, bool), np.ones(4, np.uint8), -100),
    lambda: pypto.where(np.ones(4, bool), pypto.Element(pypto.DT_UINT8, -1), np.ones(4, np.uint8)),
])
def test_a_negative_value_for_an_unsigned_dtype_says_negative(call):
    with pytest.raises(pypto.ArgumentError, match=r"is negative, out of range \[0, "):
        call()


def test_a_negative_value_for_an_unsigned_tensor_is_checked_before_the_platform_dtypes():
    # PyPTO's entry refuses the number first; atlas_a2 has no DT_UINT8 where, which comes second.
    cond, u8 = pypto.tensor([4], pypto.DT_BOOL, "cond"), pypto.tensor([4], pypto.DT_UINT8, "x")
    with pypto.platform("atlas_a2"):
        for call in (lambda: pypto.where(cond, u8, -100), lambda: pypto.where(cond, -100, u8),
                     lambda: pypto.where(cond, u8, pypto.Element(pypto.DT_UINT8, -100))):
            with pytest.raises(pypto.ArgumentError, match=r"value -100 is negative, out of range \[0, 255\] of DT_UINT8"):
                call()
        with pytest.raises(pypto.DTypeError, match="input dtype DT_UINT8 is not supported on platform atlas_a2"):
            pypto.where(cond, u8, 100)


@pytest.mark.parametrize("call,cls,code", [
    (lambda: pypto.add(np.ones(2, np.float32), np.ones(2, np.float16)), pypto.DTypeError, 0xF00001),
    (lambda: pypto.full([2], -1, pypto.DT_UINT8), pypto.ArgumentError, 0xF00002),
    (lambda: pypto.index_select(np.ones((2, 2), np.float32), 0, [5]), pypto.IndexOutOfRange, 0xF00008),
])
def test_errors_outside_kernels_are_pypto_errors(call, cls, code):
    # PyPTO's checks at its Python entry raise PyptoError (code 0xF00000 | the builtin class's
    # category); ptocpu's errors are those too, and inside kernels also FeErrors.
    from ptocpu.error import PyptoError
    with pytest.raises(cls) as caught:
        call()
    assert isinstance(caught.value, PyptoError) and caught.value.err_code == code
    assert not isinstance(caught.value, FeError)
    x = pypto.tensor([2], pypto.DT_FP32, "x")
    with pytest.raises(FeError) as in_kernel, pypto.function("MAIN", x):
        call()
    assert isinstance(in_kernel.value, cls) and in_kernel.value.err_code == code


# ---- t[block] = value in a kernel assembles, never broadcasts (python/pypto/tensor.py __setitem__:
# `a[0:, 0:] = b` is assemble(b, (0, 0), a); the softmax example writes `out[idx:, ...] = tile`)

@pytest.mark.parametrize("eager", [False, True])
def test_block_assignment_in_a_kernel_writes_the_value_at_the_block_start(eager):
    @pypto.frontend.jit(debug_options={"eager": eager})
    def rows(x: pypto.Tensor(), out: pypto.Tensor()):
        for i in pypto.loop(0, 3, 1, name="L", idx_name="i"):
            out[i:, :] = x[i:i + 1, :] * 2.0

    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.full((4, 3), -1.0, np.float32)
    for _ in range(2):  # traced, then the compiled program
        rows(x, out)
        want = np.vstack([x[:3] * 2.0, np.full((1, 3), -1.0, np.float32)])  # row 3 is never written
        assert np.array_equal(out, want)


# --- the dtype enum's name and the controller's loop ranges ---------------------------------------
# python/pypto/enum.py names the dtype enum DataType; ut/interface/test_enum.py checks its str.
# ut/interface/test_loop_range.py builds pypto._controller._loop_range(end | begin, end[, step]).

def test_dtypes_print_as_members_of_data_type():
    assert str(pypto.DT_INT4) == "DataType.DT_INT4" and str(pypto.DT_FP32) == "DataType.DT_FP32"
    assert pypto.DataType is pypto.DType and pypto.DT_BF16 in pypto.DataType.__members__.values()


@pytest.mark.parametrize("args,bounds", [((7,), (0, 7, 1)), ((3, 9), (3, 9, 1)), ((11, 22, 2), (11, 22, 2))])
def test_loop_range_keeps_begin_end_and_step(args, bounds):
    from ptocpu import _controller
    loop = _controller._loop_range(*args)
    got = (loop.begin(), loop.end(), loop.step())
    assert all(v.is_concrete() for v in got) and tuple(v.concrete() for v in got) == bounds
    assert str(loop) == "LoopRange({}, {}, {})".format(*bounds)
    with pytest.raises(pypto.ArgumentError, match="takes"):
        _controller._loop_range()


# ---- `q = pypto.tensor()` then `q[:] = value` rebinds q (python/pypto/tensor.py __setitem__: a key of
# empty slices moves value into the tensor; ds_v32's MLA prolog writes `q_a_proj[:] = pypto.matmul(...)`)

def test_whole_assignment_to_a_tensor_without_storage_moves():
    x = pypto.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    for key in (slice(None), (slice(None), slice(None))):
        q = pypto.tensor()
        q[key] = pypto.add(x, 1.0)
        assert q.shape == (2, 3)
        np.testing.assert_array_equal(q.numpy(), np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    q = pypto.tensor()
    with pytest.raises(pypto.DTypeError, match="annotation placeholder without storage"):
        q[0:1] = x  # only a whole assignment rebinds
    stored = pypto.asarray(np.zeros((2, 3), np.float32))
    stored[:] = x  # a tensor with storage is written, not rebound
    np.testing.assert_array_equal(stored.numpy(), x.numpy())
    assert stored.numpy().ctypes.data != x.numpy().ctypes.data


def test_whole_assignment_of_another_shape_in_a_kernel_rebinds():
    """ds_v32's MLA prolog narrows a tensor to one tile's rows with `cos[:] = pypto.view(cos, [4, 64], [r, 0])`:
    upstream's __setitem__ moves the view into cos, which has its shape from then on (the same shape: the
    value is written into the tensor, as before)."""
    @pypto.frontend.jit
    def kernel(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([4, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 64)
        cos = pypto.add(x, 0.0)
        cos[:] = pypto.view(cos, [4, 64], [2, 0])
        assert cos.shape == (4, 64)
        out[:] = cos * 2.0  # the same shape: written into out

    x = torch.arange(512, dtype=torch.float32).reshape(8, 64)
    out = torch.zeros(4, 64)
    kernel(x, out)
    torch.testing.assert_close(out, x[2:6] * 2)
    kernel(x + 1, out)  # the compiled program
    torch.testing.assert_close(out, (x[2:6] + 1) * 2)
    eager = pypto.asarray(np.zeros((2, 3), np.float32))
    with pytest.raises(pypto.ArgumentError):
        eager[:] = pypto.asarray(np.ones((3, 2), np.float32))  # outside a kernel: numpy's rules


# ---- t[i, j] on a DT_INT32 tensor is the element as a scalar (python/pypto/tensor.py __getitem__:
# GetTensorData; ds_v32 reads act_seqs[b] and block_table[b, k] into loop bounds and offsets)

def test_an_int32_element_is_a_scalar():
    a = pypto.asarray(np.array([[3, 1], [2, 5]], np.int32))
    v = a[1, 1]
    assert isinstance(v, pypto.SymbolicScalar) and v == 5 and (v - 2).max(0).min(2) == 2
    assert a[pypto.SymbolicScalar(0), -1] == 1
    assert isinstance(a[np.int64(1), 0], pypto.SymbolicScalar) and a[np.int64(1), 0] == 2  # numpy ints too
    assert isinstance(a[1], pypto.Tensor) and a[1].shape == (2,)  # a row stays a tensor
    f = pypto.asarray(np.ones((2, 2), np.float32))
    assert isinstance(f[0, 0], pypto.Tensor) and f[0, 0].shape == ()  # other dtypes: a 0-d tensor
    view = a[0:2, 0:2]
    assert view[1, 0] == 2
