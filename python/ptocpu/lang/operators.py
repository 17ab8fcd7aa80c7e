"""Tensor operators whose PyPTO definition is more than one op call with the operands as they come
(docs/ops/matmul.md#the--operator, docs/tensors.md#indexing). Installed on the Tensor class when
ptocpu is imported."""
from __future__ import annotations

import numbers

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


_setitem_op = _core.Tensor.__setitem__


def _whole(key) -> bool:
    """A key of empty slices only (`:`, or a tuple of them): PyPTO's whole-tensor assignment."""
    parts = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, slice) and k.start is None and k.stop is None and k.step is None for k in parts)


def _setitem_operator(self: _core.Tensor, key, value) -> None:
    """`t[key] = value`: the setitem op, except that a Tensor() without storage assigned whole
    (`q = pypto.tensor()` then `q[:] = pypto.matmul(...)`) is rebound to value, PyPTO's move."""
    if isinstance(value, _core.Tensor) and _whole(key) and _core._is_placeholder(self):
        self.move(value)
        return
    _setitem_op(self, key, value)


_getitem_op = _core.Tensor.__getitem__


def _getitem_operator(self: _core.Tensor, key):
    """`t[key]`: the getitem op; on a DT_INT32 tensor a key of one integer per dim gives the element
    as a SymbolicScalar, as PyPTO's GetTensorData (loop bounds and offsets read from a tensor:
    `pypto.loop(seq_lens[b])`). Reading it lets the value reach Python (a compiled kernel stays eager)."""
    result = _getitem_op(self, key)
    parts = key if isinstance(key, tuple) else (key,)
    if (result.dtype == _core.DT_INT32 and result.ndim == 0 and parts
            and all(isinstance(k, numbers.Integral) and not isinstance(k, bool) for k in parts)):
        return SymbolicScalar(int(result.numpy()))
    return result


def install() -> None:
    _core.Tensor.__getitem__ = _getitem_operator
    _core.Tensor.__matmul__ = _matmul_operator
    _core.Tensor.__setitem__ = _setitem_operator
