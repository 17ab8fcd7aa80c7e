"""Turning Python objects into ptocpu tensors and dtypes (zero-copy where the layout allows)."""
from __future__ import annotations

import numbers
import sys

import numpy as np
import ml_dtypes

from . import _core

# numpy / ml_dtypes dtype <-> ptocpu dtype, from the core's dtype table.
_NUMPY_DTYPES = {
    np.dtype(getattr(ml_dtypes, row["numpy"]) if row["ml_dtypes"] else row["numpy"]): row["dtype"]
    for row in _core.dtype_table()
}
_TO_NUMPY = {v: k for k, v in _NUMPY_DTYPES.items()}


def to_dtype(obj) -> _core.DType:
    """The ptocpu DType of a DT_* constant, a numpy / ml_dtypes / torch dtype, or a name
    ("float16", "bf16", "float8_e4m3fn", ...). Anything else is a DTypeError.

    >>> ptocpu.dtype("half")
    DType.DT_FP16
    """
    if isinstance(obj, _core.DType):
        return obj
    if isinstance(obj, str):
        return _core.dtype_from_name(obj)
    if obj is None:
        raise _core.DTypeError("dtype: None is not a dtype")
    if isinstance(obj, (numbers.Number, np.generic)):
        # numpy would read a scalar as "the dtype of this value"; an int or bool is not a dtype.
        raise _core.DTypeError(f"dtype: {obj!r} is a number, not a dtype; use a DT_* constant, a numpy / torch "
                               "dtype or a name such as 'float16'")
    module = type(obj).__module__
    if module.startswith("torch"):
        try:
            return _core.dtype_from_name(str(obj).removeprefix("torch."))
        except _core.ArgumentError:
            raise _core.DTypeError(f"dtype: torch dtype {obj} has no ptocpu dtype") from None
    try:
        npdt = np.dtype(obj)
    except TypeError:
        raise _core.DTypeError(f"dtype: cannot interpret {obj!r} as a dtype") from None
    if npdt not in _NUMPY_DTYPES:
        raise _core.DTypeError(f"dtype: numpy dtype {npdt} has no ptocpu dtype")
    return _NUMPY_DTYPES[npdt]


def numpy_dtype(dtype) -> np.dtype:
    """The numpy dtype of a ptocpu dtype (any spelling ptocpu.dtype accepts); bf16 and the fp8
    types give ml_dtypes' dtypes. An unknown dtype is a DTypeError.

    >>> ptocpu.numpy_dtype(ptocpu.DT_BF16)
    dtype(bfloat16)
    """
    return _TO_NUMPY[to_dtype(dtype)]


def torch_dtypes() -> dict:
    """{torch.dtype: ptocpu DType} for every dtype both have; torch must be imported already
    (the C++ torch import reads it once, docs/tensors.md)."""
    torch = sys.modules["torch"]
    found = {}
    for value in vars(torch).values():
        if isinstance(value, torch.dtype):
            try:
                found[value] = to_dtype(value)
            except _core.DTypeError:
                pass
    return found


def _torch_negated_view(obj) -> bool:
    """A torch tensor carrying the negative bit (torch._neg_view): its DLPack export would drop
    the negation, so its values are read through resolve_neg()."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor) and obj.is_neg()


def from_numpy(a: np.ndarray, *, copy: bool | None = None) -> _core.Tensor:
    """A tensor over the array's memory; writes through either are seen by both. Byte-swapped
    data and byte strides that are not whole elements need a copy: made unless copy=False, which
    raises ArgumentError instead (for arguments that are written in place). A read-only array
    gives a read-only tensor."""
    if not isinstance(a, np.ndarray):
        raise _core.DTypeError(f"from_numpy: expected a numpy.ndarray, got {type(a).__name__}")
    dtype = to_dtype(a.dtype.newbyteorder("="))
    item = a.itemsize
    if not a.dtype.isnative or any(s % item for s in a.strides):
        if copy is False:
            raise _core.ArgumentError(
                f"from_numpy: this array (dtype {a.dtype.str}, strides {a.strides}) can only be used through a "
                "copy (byte-swapped data or byte strides that are not whole elements), so writes would not reach it")
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("="))
    ptr = a.__array_interface__["data"][0]
    return _core._from_pointer(ptr, a.shape, [s // item for s in a.strides], dtype, a, not a.flags.writeable)


def _to_numpy(obj) -> np.ndarray:
    """np.asarray(obj), numpy's refusals raised as ptocpu errors (ragged lists, odd objects)."""
    try:
        return np.asarray(obj)
    except (ValueError, OverflowError) as e:
        raise _core.ArgumentError(f"asarray: cannot make an array of this {type(obj).__name__}: {e}") from None
    except TypeError as e:
        raise _core.DTypeError(f"asarray: cannot make an array of this {type(obj).__name__}: {e}") from None


def asarray(obj, dtype=None, *, copy: bool | None = None) -> _core.Tensor:
    """A tensor from a ptocpu.Tensor, numpy array, torch CPU tensor (wrapped by its data pointer),
    anything else with __dlpack__, the buffer protocol, numpy scalars or nested lists (dtypes
    inferred as numpy does).
    Zero-copy where the layout allows; copy=False raises ArgumentError where it does not."""
    if isinstance(obj, _core.Tensor):
        t = obj
    elif isinstance(obj, np.ndarray):
        t = from_numpy(obj, copy=copy)
    elif (torch_view := _core._from_torch(obj, copy is False)) is not None:
        t = torch_view  # a torch CPU tensor, wrapped zero-copy by its data pointer
    elif copy is False and not hasattr(obj, "__dlpack__"):
        from_numpy(_to_numpy(obj))  # what is not a tensor at all is refused as such first
        raise _core.ArgumentError(f"asarray: a {type(obj).__name__} is not memory that can be written in place; "
                                  "pass a ptocpu.Tensor, a numpy array or a torch tensor")
    elif copy is False and getattr(obj, "requires_grad", False) is True:
        raise _core.ArgumentError("asarray: a torch tensor that requires grad cannot be written in place (torch "
                                  "refuses that too); pass tensor.detach() to write its memory")
    elif _torch_negated_view(obj):
        if copy is False:
            raise _core.ArgumentError("asarray: a torch tensor with the negative bit set (a _neg_view) holds the "
                                      "values' negation, so writes cannot reach it; pass tensor.resolve_neg()")
        t = asarray(obj.resolve_neg())
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic):
        try:
            t = _core.from_dlpack(obj)
        except (_core.ArgumentError, _core.DTypeError) as error:
            if type(obj).__module__.startswith("torch"):
                raise
            try:  # other producers may still convert through numpy
                t = from_numpy(_to_numpy(obj))
            except _core.Error:
                raise error from None
    elif isinstance(obj, (bytes, memoryview)):
        # The buffer protocol (numpy would read bytes as a string); immutable memory is copied.
        view = memoryview(obj)
        a = np.asarray(view)
        t = from_numpy(a.copy() if view.readonly else a)
    else:
        t = from_numpy(_to_numpy(obj))
    if dtype is not None and t.dtype != to_dtype(dtype):
        if copy is False:
            raise _core.ArgumentError(f"asarray: converting {t.dtype.name} to {to_dtype(dtype).name} needs a copy")
        t = from_numpy(np.asarray(t.numpy()).astype(numpy_dtype(dtype)))
    return t
