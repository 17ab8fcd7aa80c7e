"""The op table's functions and Tensor methods as Python objects (bindings/python/op_function.cpp):
arguments bound as Python binds them, keywords as the dispatch handlers see them, methods bound
to their tensor, errors raised as the classes docs/errors.md names; all checked against numpy."""
import copy
import pickle
import pydoc

import numpy as np
import pytest

import ptocpu
from ptocpu import _core

X = np.arange(12, dtype=np.float32).reshape(3, 4)
Y = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)


def test_positional_and_keyword_arguments_bind_as_python_binds_them():
    x, y = ptocpu.asarray(X), ptocpu.asarray(Y)
    for result in (ptocpu.add(x, y), ptocpu.add(x, other=y), ptocpu.add(input=x, other=y),
                   ptocpu.add(other=y, input=x)):
        np.testing.assert_array_equal(result.numpy(), X + Y)
    np.testing.assert_array_equal(ptocpu.matmul(x, x, ptocpu.DT_FP32, b_trans=True).numpy(), X @ X.T)
    with pytest.raises(TypeError, match="multiple values for argument 'other'"):
        ptocpu.add(x, y, other=y)
    with pytest.raises(TypeError, match="unexpected keyword argument 'others'"):
        ptocpu.add(x, others=y)
    with pytest.raises(TypeError, match="missing required argument 'other'"):
        ptocpu.add(x)
    with pytest.raises(TypeError, match="positional arguments"):
        ptocpu.matmul(x, x, ptocpu.DT_FP32, True)  # a_trans is keyword-only


def test_methods_are_bound_to_their_tensor():
    x, y = ptocpu.asarray(X), ptocpu.asarray(Y)
    bound = x.add
    assert bound.__self__ is x
    for result in (x.add(y), bound(y), ptocpu.Tensor.add(x, y), x.add(other=y)):
        np.testing.assert_array_equal(result.numpy(), X + Y)
    assert ptocpu.Tensor.add is ptocpu.Tensor.__dict__["add"]

    class Holder:  # a module function kept on a class stays a plain function, as Python's builtins do
        add = ptocpu.add
    np.testing.assert_array_equal(Holder().add(x, y).numpy(), X + Y)


def test_operators_run_their_ops():
    x, y = ptocpu.asarray(X), ptocpu.asarray(Y)
    np.testing.assert_array_equal((x + y).numpy(), X + Y)
    np.testing.assert_array_equal((x - y).numpy(), X - Y)
    np.testing.assert_array_equal((x * 2.5).numpy(), X * np.float32(2.5))
    np.testing.assert_array_equal((-y).numpy(), -Y)
    np.testing.assert_array_equal((x < y).numpy(), X < Y)
    np.testing.assert_array_equal(x.__add__(y).numpy(), X + Y)
    np.testing.assert_array_equal((1.5 + x).numpy(), X + np.float32(1.5))  # a recipe: add(self, other)


def test_handlers_see_the_keywords_as_a_dict():
    x = ptocpu.asarray(X)
    seen = []

    def handler(call):
        seen.append((call.op, len(call.args), dict(call.kwargs)))
        return call.proceed()

    _core._push_handler(handler)
    try:
        out = ptocpu.matmul(x, x, ptocpu.DT_FP32, b_trans=True)
        x.sum(dim=1, keepdim=True)
    finally:
        _core._pop_handler(handler)
    np.testing.assert_array_equal(out.numpy(), X @ X.T)
    assert seen == [("matmul", 3, {"b_trans": True}), ("sum", 1, {"dim": 1, "keepdim": True})]


def test_errors_keep_their_classes():
    x = ptocpu.asarray(X)
    with pytest.raises(ptocpu.ArgumentError, match="K of input"):
        ptocpu.matmul(x, x, ptocpu.DT_FP32)
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.add(x, None)

    class Refused(Exception):
        pass

    def handler(call):
        raise Refused(call.op)

    _core._push_handler(handler)
    try:
        with pytest.raises(Refused, match="add"):
            x.add(x)
    finally:
        _core._pop_handler(handler)


def test_functions_describe_themselves():
    assert ptocpu.add.__name__ == "add" and ptocpu.Tensor.add.__qualname__ == "Tensor.add"
    assert ptocpu.add.__module__ == "ptocpu._core"
    assert ptocpu.add.__doc__.startswith("add(input: ")
    assert ptocpu.add.__nb_signature__[0][0].startswith("def add(input: ")
    # help() shows the signature and the docstring (pydoc reads __doc__ past getattro)
    x = ptocpu.asarray(X)
    for f in (ptocpu.add, ptocpu.Tensor.add, x.add):
        page = pydoc.render_doc(f, renderer=pydoc.plaintext)
        assert "add(" in page and "Elementwise input + other" in page, page[:300]


def test_functions_pickle_and_copy_by_name():
    for f in (ptocpu.add, ptocpu.Tensor.add, ptocpu.Tensor.__add__):
        assert pickle.loads(pickle.dumps(f)) is f
        assert copy.copy(f) is f and copy.deepcopy(f) is f
