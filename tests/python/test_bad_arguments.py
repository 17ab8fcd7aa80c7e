"""Every public function, every parameter, every kind of bad argument: the error is one of
ptocpu's classes (docs/errors.md), never a bare TypeError / ValueError / RuntimeError /
BufferError from the binding layer.

The functions come from ptocpu.__all__, so a new one is covered as soon as it is exported: a
function listed in SIGNATURES gets the full matrix (each parameter in turn replaced by each bad
value, the others valid); any other gets None for each of its required parameters.
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
import torch

import ptocpu

D, A, ANY = ptocpu.DTypeError, ptocpu.ArgumentError, ptocpu.Error


class MalformedProducer:
    """__dlpack__ returns something that is not a DLPack capsule."""

    def __dlpack__(self, **kwargs):
        return object()

    def __dlpack_device__(self):
        return (1, 0)


class RefusingProducer:
    """__dlpack__ raises the producer's own BufferError."""

    def __dlpack__(self, **kwargs):
        raise BufferError("cannot export")

    def __dlpack_device__(self):
        return (1, 0)


I = ptocpu.IndexOutOfRange
KINDS = ["tensor", "ndarray", "dlpack", "int", "dim", "ints", "dtype", "name", "reduce", "tuple", "copy"]
# Each bad value and the class expected for each kind of parameter, in the order of KINDS
# (ANY: some ptocpu error, the op's own rules decide; None: valid there). A float or a bool is a
# 0-d tensor; only a numpy array is an ndarray; a parameter of kind "tuple" takes a tuple of ints.
BAD = {
    "None":              (None,                [D, D, D, D, D, D, D, D, None, None, None]),
    "object()":          (object(),            [D, D, D, D, D, D, D, D, A, D, D]),
    "str":               ("text",              [D, D, D, D, D, D, A, A, A, D, D]),
    "float":             (1.5,                 [ANY, D, D, D, D, D, D, D, A, D, D]),
    "complex":           (3 + 4j,              [D, D, D, D, D, D, D, D, A, D, D]),
    "numpy complex":     (np.complex64(1),     [D, D, D, D, D, D, D, D, A, D, D]),
    "bool":              (True,                [ANY, D, D, D, D, D, D, D, A, D, None]),
    "list of None":      ([None],              [D, D, D, D, D, D, D, D, A, D, D]),
    "ragged list":       ([[1, 2], [3]],       [A, D, D, D, D, D, D, D, A, D, D]),
    "dict":              ({},                  [D, D, D, D, D, ANY, D, D, A, D, D]),
    "malformed capsule": (MalformedProducer(), [A, D, A, D, D, D, D, D, A, D, D]),
    "refusing producer": (RefusingProducer(),  [A, D, A, D, D, D, D, D, A, D, D]),
    "int beyond int64":  (2 ** 64,             [D, D, D, A, I, A, D, D, A, D, D]),
}


def f32(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def entered(context_manager_factory):
    """A context-manager factory as a plain function: enter and leave it."""
    def call(*args, **kwargs):
        with context_manager_factory(*args, **kwargs):
            pass
    return call


# name -> (call, [(parameter, kind, valid value)], keyword parameters). Parameters are passed
# by position unless listed as keyword parameters.
SIGNATURES = {
    "tensor": (ptocpu.tensor, [("shape", "ints", [2, 3]), ("dtype", "dtype", ptocpu.DT_FP32)], ()),
    "Tensor": (ptocpu.Tensor, [("shape", "ints", [2, 3]), ("dtype", "dtype", ptocpu.DT_FP32)], ()),
    "from_dlpack": (ptocpu.from_dlpack, [("x", "dlpack", torch.zeros(2))], ()),
    "from_numpy": (ptocpu.from_numpy, [("a", "ndarray", f32(2))], ()),
    "asarray": (ptocpu.asarray, [("obj", "tensor", f32(2)), ("dtype", "dtype", ptocpu.DT_FP64)], ()),
    "dtype": (ptocpu.dtype, [("obj", "dtype", "float16")], ()),
    "numpy_dtype": (ptocpu.numpy_dtype, [("dtype", "dtype", "bf16")], ()),
    "itemsize": (ptocpu.itemsize, [("dtype", "dtype", ptocpu.DT_FP16)], ()),
    "index_select": (ptocpu.index_select,
                     [("input", "tensor", f32(3, 4)), ("dim", "dim", 1), ("index", "tensor", np.array([0, 2]))], ()),
    "interleave": (ptocpu.interleave, [("input", "tensor", f32(2, 4)), ("other", "tensor", f32(2, 4))], ()),
    "deinterleave": (ptocpu.deinterleave, [("input", "tensor", f32(2, 4)), ("other", "tensor", f32(2, 4))], ()),
    "scatter_": (ptocpu.scatter_, [("input", "tensor", f32(3, 4)), ("dim", "dim", 0),
                                   ("index", "tensor", np.array([[1, 2]])), ("src", "tensor", f32(1, 2)),
                                   ("reduce", "reduce", "add")], ("reduce",)),
    "scatter": (ptocpu.scatter, [("input", "tensor", f32(3, 4)), ("dim", "dim", 0),
                                 ("index", "tensor", np.array([[1, 2]])), ("src", "tensor", f32(1, 2)),
                                 ("reduce", "reduce", "add")], ("reduce",)),
    "strided_slice": (ptocpu.strided_slice, [("x", "tensor", f32(4, 6)), ("begin", "ints", [0, 1]),
                                             ("end", "ints", [4, 6]), ("strides", "ints", [2, 2]),
                                             ("begin_mask", "int", 0), ("end_mask", "int", 0),
                                             ("ellipsis_mask", "int", 0), ("shrink_axis_mask", "int", 0),
                                             ("new_axis_mask", "int", 0)], ()),
    "strided_slice_view": (ptocpu.strided_slice_view, [("x", "tensor", f32(4, 6)), ("begin", "ints", [0, 1]),
                                                       ("end", "ints", [4, 6]), ("strides", "ints", [2, 2]),
                                                       ("begin_mask", "int", 0), ("end_mask", "int", 0),
                                                       ("ellipsis_mask", "int", 0), ("shrink_axis_mask", "int", 0),
                                                       ("new_axis_mask", "int", 0)], ()),
    "view": (ptocpu.view, [("input", "tensor", f32(4, 8)), ("shape", "ints", [2, 4]), ("offsets", "ints", [2, 4]),
                           ("valid_shape", "ints", [1, 3])], ("valid_shape",)),
    "assemble": (ptocpu.assemble, [("input", "tensor", f32(1, 2)), ("offsets", "ints", [1, 1]),
                                   ("out", "tensor", np.zeros((3, 4), np.float32))], ()),
    "loop": (ptocpu.loop, [("start", "int", 0), ("stop", "int", 4), ("step", "int", 2)], ()),
    "loop_unroll": (ptocpu.loop_unroll, [("start", "int", 0), ("stop", "int", 4), ("step", "int", 2)], ()),
    "set_platform": (ptocpu.set_platform, [("name", "name", "ascend950")], ()),
    "platform": (entered(ptocpu.platform), [("name", "name", "atlas_a2")], ()),
    "set_vec_tile_shapes": (ptocpu.set_vec_tile_shapes, [("d0", "int", 8), ("d1", "int", 16)], ()),
    "vec_tile_shapes": (entered(ptocpu.vec_tile_shapes), [("d0", "int", 8), ("d1", "int", 16)], ()),
    "set_num_threads": (ptocpu.set_num_threads, [("n", "int", 2)], ()),
    # Tensor methods (a fresh tensor each call, so in-place calls cannot leak into the next).
    "Tensor.astype": (lambda dtype: ptocpu.asarray(f32(2)).astype(dtype), [("dtype", "dtype", "fp16")], ()),
    "Tensor.__getitem__": (lambda key: ptocpu.asarray(f32(2, 3))[key], [("key", "int", 1)], ()),
    "Tensor.__setitem__": (lambda key, value: ptocpu.asarray(f32(2, 3)).__setitem__(key, value),
                           [("key", "int", 1), ("value", "tensor", f32(3))], ()),
    "Tensor.scatter_": (lambda *a, **k: ptocpu.asarray(f32(3, 4)).scatter_(*a, **k),
                        [("dim", "dim", 0), ("index", "tensor", np.array([[1]])), ("src", "tensor", f32(1, 1))], ()),
    "Tensor.scatter": (lambda *a, **k: ptocpu.asarray(f32(3, 4)).scatter(*a, **k),
                       [("dim", "dim", 0), ("index", "tensor", np.array([[1]])), ("src", "tensor", f32(1, 1))], ()),
    "Tensor.__dlpack__": (lambda **k: ptocpu.asarray(f32(2)).__dlpack__(**k),
                          [("max_version", "tuple", (1, 0)), ("dl_device", "tuple", (1, 0)),
                           ("copy", "copy", False)], ("max_version", "dl_device", "copy")),
}
# Parameters whose None means "not given". Tensor / tensor (the same class) follow upstream PyPTO's
# Tensor (python/pypto/tensor.py in hicann/pypto): shape=None makes an annotation placeholder and
# dtype=None means DT_FP32.
NONE_ALLOWED = {("tensor", "shape"), ("Tensor", "shape"), ("tensor", "dtype"), ("Tensor", "dtype"),
                ("deinterleave", "other"), ("view", "valid_shape"), ("asarray", "dtype"),
                ("Tensor.__getitem__", "key"), ("Tensor.__setitem__", "key")}
# None for these means "not given": the op's own error (view needs shape and offsets together).
NONE_IS_MISSING = {("view", "shape"), ("view", "offsets")}
# Scalar values: a float, a bool and an int of any size are values there (for a float input).
SCALAR_VALUES = {("scatter_", "src"), ("scatter", "src"), ("Tensor.scatter_", "src"), ("Tensor.scatter", "src"),
                 ("Tensor.__setitem__", "value")}


def public_functions() -> list[str]:
    """Every callable ptocpu exports that is a function (classes other than Tensor are types)."""
    names = []
    for name in getattr(ptocpu, "__all__", dir(ptocpu)):
        obj = getattr(ptocpu, name)
        if name.startswith("_") or not callable(obj) or not getattr(obj, "__module__", "").startswith("ptocpu"):
            continue
        if isinstance(obj, type) and obj is not ptocpu.Tensor:
            continue
        names.append(name)
    return names


def expected_class(function: str, param: str, kind: str, bad_name: str):
    if bad_name == "None" and (function, param) in NONE_ALLOWED:
        return None
    if bad_name == "None" and (function, param) in NONE_IS_MISSING:
        return A
    if bad_name in ("float", "bool", "int beyond int64") and (function, param) in SCALAR_VALUES:
        return None
    return BAD[bad_name][1][KINDS.index(kind)]


def matrix():
    for function, (call, params, keywords) in SIGNATURES.items():
        for i, (param, kind, _) in enumerate(params):
            for bad_name in BAD:
                yield pytest.param(function, i, bad_name, id=f"{function}-{param}-{bad_name}")


@pytest.mark.parametrize("function, position, bad_name", list(matrix()))
def test_bad_argument(function, position, bad_name):
    call, params, keywords = SIGNATURES[function]
    param, kind, _ = params[position]
    bad = BAD[bad_name][0]
    values = [bad if i == position else valid for i, (_, _, valid) in enumerate(params)]
    args = [v for (name, _, _), v in zip(params, values) if name not in keywords]
    kwargs = {name: v for (name, _, _), v in zip(params, values) if name in keywords}
    expected = expected_class(function, param, kind, bad_name)
    with ptocpu.platform("cpu"), ptocpu.vec_tile_shapes(8, 16):
        try:
            call(*args, **kwargs)
        except ptocpu.Error as e:
            assert expected is not None, f"{function}({param}={bad_name}) was valid but raised {e!r}"
            assert isinstance(e, expected), f"{function}({param}={bad_name}) raised {e!r}, expected {expected.__name__}"
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{function}({param}={bad_name}) raised a foreign {type(e).__name__}: {e}")
        else:
            assert expected in (None, ANY), f"{function}({param}={bad_name}) did not raise {expected.__name__}"


def test_valid_calls_of_the_matrix_succeed():
    """The matrix's valid values are valid: each bad value is the only thing wrong."""
    for function, (call, params, keywords) in SIGNATURES.items():
        args = [valid for name, _, valid in params if name not in keywords]
        kwargs = {name: valid for name, _, valid in params if name in keywords}
        call(*args, **kwargs)


def parameters(function) -> tuple[int, bool]:
    """(required positional parameters, whether it takes *args), from inspect or, for nanobind
    functions, from their signature text."""
    try:
        ps = inspect.signature(function).parameters.values()
        return (sum(1 for p in ps if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)),
                any(p.kind == p.VAR_POSITIONAL for p in ps))
    except (TypeError, ValueError):
        text = function.__nb_signature__[0][0]
        inside = re.sub(r"\[[^\]]*\]", "", text[text.index("(") + 1:text.rindex(")")])  # type arguments hold commas
        required = 0
        for part in (p.strip() for p in inside.split(",")):
            if part.startswith("*"):
                return required, part.startswith("*args")
            if part not in ("", "/") and "=" not in part:
                required += 1
        return required, False


@pytest.mark.parametrize("name", public_functions())
def test_every_public_function_refuses_none(name):
    """None for every required parameter (or as the one variadic argument); a function without
    parameters must simply run. Exported functions not in SIGNATURES are covered this way."""
    function = SIGNATURES[name][0] if name in SIGNATURES else getattr(ptocpu, name)
    if name in SIGNATURES:
        params, keywords = SIGNATURES[name][1], SIGNATURES[name][2]
        required, variadic = len([p for p in params if p[0] not in keywords]), False
    else:
        required, variadic = parameters(function)
    if required == 0 and not variadic:
        function()
        return
    if name in SIGNATURES and all((name, param) in NONE_ALLOWED for param, _, _ in SIGNATURES[name][1]):
        # Tensor(None, None): the annotation placeholder (see NONE_ALLOWED)
        assert ptocpu._core._is_placeholder(function(*[None] * required))
        return
    with ptocpu.platform("cpu"):
        try:
            function(*[None] * max(required, 1))
        except ptocpu.Error:
            return
        except Exception as e:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{name}(None, ...) raised a foreign {type(e).__name__}: {e}")
    pytest.fail(f"{name}(None, ...) did not raise")
