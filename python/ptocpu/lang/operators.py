"""Tensor operators whose PyPTO definition is more than one op call with the operands as they come
(docs/ops/matmul.md#the--operator, docs/tensors.md#indexing, docs/kernel_model.md#assemble). Installed on the Tensor class when
ptocpu is imported."""
from __future__ import annotations

from .. import _core
from .symbolic import SymbolicScalar

__all__ = ["install"]

# a @ b: matmul with out_dtype from b's dtype, as PyPTO's Tensor.__matmul__ picks it.
_MATMUL_OUT_DTYPE = {_core.DT_FP16: _core.DT_FP16, _core.DT_BF16: _core.DT_BF16, _core.DT_FP32: _core.DT_FP32,
                     _core.DT_INT8: _core.DT_INT32}


def _matmul_operator(self: _core.Tensor, other) -> _core.Tensor:
    """`a @ b` = `pypto.matmul(a, b, out_dtype)` with out_dtype b's dtype for fp16 / bf16 / fp32
    and DT_INT32 for int8; another dtype is a DTypeError."""
    mat2 = other if isinstance(other, _core.Tensor) else _core.asarray(other)
    out_dtype = _MATMUL_OUT_DTYPE.get(mat2.dtype)
    if out_dtype is None:
        raise _core.DTypeError(f"matmul (a @ b): mat2 dtype {mat2.dtype.name} has no @ result dtype; allowed: "
                               f"{', '.join(d.name for d in _MATMUL_OUT_DTYPE)} (or call matmul with an out_dtype)")
    return _core.matmul(self, mat2, out_dtype)


def _assemble_method(self: _core.Tensor, input: _core.Tensor, offsets) -> None:
    """`out.assemble(input, offsets)`: PyPTO's method form of `assemble(input, offsets, out)` (the
    tensor it is called on is the target, not the source)."""
    _core.assemble(input, offsets, self)


def install() -> None:
    # t[i, j] of a DT_INT32 tensor is a SymbolicScalar, as PyPTO's GetTensorData (docs/tensors.md#indexing)
    _core._set_int32_element_type(SymbolicScalar)
    _core.Tensor.__matmul__ = _matmul_operator
    _core.Tensor.assemble = _assemble_method
