"""PyPTO's tensors without storage: what a `pypto.Tensor(...)` that is not data says about a tensor
(docs/running_pypto_programs.md#tensors-views-and-valid-shapes).

- `Tensor(dtype=...)`, `Tensor([pypto.STATIC, 32], dtype)`, `Tensor([pypto.DYNAMIC, ...], dtype)`:
  jit annotations. Dims written as ints must match, STATIC / DYNAMIC / DYN accept any size, a
  trailing `...` any number of further dims; the dtype is checked when it was given.
- `pypto.tensor([-1, 32], dtype, "x")` or a dim that is an unknown symbolic scalar: a tensor with
  dynamic dims, whose size is known when data is bound to it (a pypto.function run). Its
  `shape[i]` is PyPTO's `RUNTIME_GetInputShapeDim(ARG_x,i)`, an unknown.

The core's Tensor() stores the spec in `_spec` (bindings/python/tensor.cpp calls `spec_of`).
A kernel's tensor whose dims are dynamic carries their indices in `_dynamic_dims`: operators
refuse it as an operand (a view of it is static), as PyPTO's do.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from .. import _core
from .enums import DYN, DYNAMIC, StatusType

__all__ = ["Spec", "spec_of", "attach", "is_dynamic_declaration", "shape_of", "dtype_of", "dynamic_dims_of", "declared_dtype",
           "check_argument", "ordinal"]

def _is_unknown(dim: Any) -> bool:
    from .symbolic import SymbolicExpr
    return isinstance(dim, SymbolicExpr)


class Spec:
    """A tensor as written without data: `dims` (an int, None for any size, ... for any further
    dims) or None for any shape, the dtype when one was given, and the dynamic dims."""

    def __init__(self, given: Optional[Sequence], dtype: Optional[_core.DType]):
        self.given = None if given is None else list(given)
        self.dtype = dtype
        self.markers = self.given is not None and any(d is Ellipsis or isinstance(d, StatusType) for d in self.given)
        self.dims: Optional[List[Any]] = None
        self.dynamic: Tuple[int, ...] = ()
        if self.given is not None:
            self.dims = [d if d is Ellipsis else None if (isinstance(d, StatusType) or _is_unknown(d) or d == -1)
                         else int(d) for d in self.given]
            self.dynamic = tuple(i for i, d in enumerate(self.given)
                                 if _is_unknown(d) or d is DYNAMIC or d is DYN or (isinstance(d, int) and d == -1))

    def shown(self) -> str:
        """The shape as PyPTO prints the definition: [STATIC, 32], [-1, 32], [...]."""
        if self.given is None:
            return "[]"
        return "[" + ", ".join("..." if d is Ellipsis else d.name if isinstance(d, StatusType)
                               else "-1" if i in self.dynamic else str(d) for i, d in enumerate(self.given)) + "]"


def spec_of(shape, dtype: Optional[_core.DType]) -> Optional[Spec]:
    """The spec for Tensor(shape, dtype), or None when shape is an ordinary shape (ints: the core
    makes that tensor, or refuses the shape)."""
    if shape is not None:
        if not isinstance(shape, (list, tuple)):
            return None
        if not any(d is Ellipsis or isinstance(d, StatusType) or _is_unknown(d)
                   or (isinstance(d, int) and not isinstance(d, bool) and d == -1) for d in shape):
            return None
        if Ellipsis in shape[:-1]:
            raise _core.ArgumentError(f"Tensor: shape {list(shape)!r} has ... before its last dim; only the last "
                                      f"dim may be ...")
    return Spec(shape, dtype)


def attach(tensor: _core.Tensor, spec: Spec) -> None:
    """Called by Tensor(...) for a tensor without storage: keeps the spec; a declaration's dynamic
    dims also mark the tensor (operators refuse it, views of it are static)."""
    tensor._spec = spec
    if spec.dynamic:
        tensor._dynamic_dims = spec.dynamic


def is_dynamic_declaration(tensor: _core.Tensor) -> bool:
    """`pypto.tensor([-1, 32], ...)`: dims that are sizes or dynamic (no markers), at least one dynamic."""
    spec: Optional[Spec] = getattr(tensor, "_spec", None)
    return spec is not None and spec.dims is not None and not spec.markers and bool(spec.dynamic)


def shape_of(tensor: _core.Tensor) -> list:
    """A tensor without storage's shape as PyPTO's Tensor.shape gives it: the markers as written,
    or the dims with each dynamic one as the unknown RUNTIME_GetInputShapeDim(ARG_<name>,<dim>)."""
    spec: Optional[Spec] = getattr(tensor, "_spec", None)
    if spec is None or spec.given is None:
        return []
    if spec.markers:
        return list(spec.given)
    from .symbolic import SymbolicExpr
    name = f"ARG_{getattr(tensor, 'name', '')}"
    return [SymbolicExpr(("call", "RUNTIME_GetInputShapeDim", (("s", name), ("c", i))), kind="expression")
            if i in spec.dynamic else d for i, d in enumerate(spec.dims)]


def dtype_of(tensor: _core.Tensor) -> _core.DType:
    """A tensor without storage's dtype: the one given, else fp32 (PyPTO's default)."""
    spec: Optional[Spec] = getattr(tensor, "_spec", None)
    return spec.dtype if spec is not None and spec.dtype is not None else _core.DT_FP32


def dynamic_dims_of(annotation) -> Tuple[int, ...]:
    """The dims an annotation or a declared tensor marks dynamic (DYNAMIC, DYN, -1, unknowns)."""
    spec: Optional[Spec] = getattr(annotation, "_spec", None)
    return spec.dynamic if spec is not None else ()


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def declared_dtype(annotation) -> Optional[_core.DType]:
    """The dtype a tensor annotation declares, or None when it takes any dtype."""
    if annotation is _core.Tensor:
        return None
    spec: Optional[Spec] = getattr(annotation, "_spec", None)
    if spec is not None:
        return spec.dtype
    if _core._is_placeholder(annotation) or getattr(annotation, "_any_dtype", False):
        return None
    return annotation.dtype


def check_argument(where: str, position: int, value: _core.Tensor, annotation) -> None:
    """A kernel's tensor argument against its annotation, as PyPTO's front end checks it: the
    number of dims and the dims written as ints (ArgumentError), then the dtype when the
    annotation gives one (DTypeError). `where` leads the message ("jit: kernel k parameter 'x'"),
    `position` counts the tensor parameters from 1. (Messages are built only on failure: every
    call of a kernel runs this.)"""
    if annotation is _core.Tensor:
        return
    spec: Optional[Spec] = getattr(annotation, "_spec", None)
    if spec is not None:
        dims, dtype = spec.dims, spec.dtype
    elif _core._is_placeholder(annotation):  # Tensor(): a tensor of any shape and dtype
        return
    else:  # Tensor(shape, dtype) with int dims; Tensor([], dtype) takes any shape; no dtype: any dtype
        dims = list(annotation.shape) or None
        dtype = None if getattr(annotation, "_any_dtype", False) else annotation.dtype

    def lead() -> str:
        return f"{where} (the {ordinal(position)} input tensor)"

    def shown() -> str:
        return spec.shown() if spec is not None else str(list(annotation.shape))

    if dims is not None:
        fixed = [d for d in dims if d is not Ellipsis]
        open_rank = len(fixed) < len(dims)
        if value.ndim < len(fixed) or (not open_rank and value.ndim != len(fixed)):
            raise _core.ArgumentError(f"{lead()}: the number of dimensions of shape {list(value.shape)} does not "
                                      f"match the number of dimensions of its definition {shown()}")
        shape = value.shape
        if any(d is not None and shape[i] != d for i, d in enumerate(fixed)):
            raise _core.ArgumentError(f"{lead()}: shape {list(value.shape)} does not match the shape of its "
                                      f"definition {shown()}")
    if dtype is not None and value.dtype != dtype:
        raise _core.DTypeError(f"{lead()}: dtype {value.dtype.name} does not match the dtype of its definition "
                               f"{dtype.name}")
