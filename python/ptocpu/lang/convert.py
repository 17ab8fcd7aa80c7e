"""pypto.from_torch (docs/tensors.md#torch): a ptocpu tensor over a torch tensor's memory; and a
kernel's packed FP4 arguments (docs/kernel_model.md#jit-kernels)."""
from __future__ import annotations

import numpy as np

from .. import _core
from ..error import FeError

__all__ = ["from_torch", "fp4_argument"]

# One FP4 value per element in ptocpu; the device (and torch's uint8 buffers) holds two per byte.
_FP4_SINGLE = (_core.DT_FP4_E2M1, _core.DT_FP4_E1M2)
_FP4_PAIRS = (_core.DT_FP4_E2M1X2, _core.DT_FP4_E1M2X2)


def fp4_argument(value, declared) -> object:
    """A DT_UINT8 tensor given for a kernel parameter declared with an FP4 dtype, as PyPTO reads it:
    for DT_FP4_E2M1 / DT_FP4_E1M2 each byte holds two values (low nibble first), so the kernel sees
    a read-only copy with the last dim doubled; for the X2 pair dtypes the same bytes (a zero-copy
    bit-cast view). Anything else is returned as it is."""
    if not isinstance(value, _core.Tensor) or value.dtype != _core.DT_UINT8 or value.ndim == 0:
        return value
    if declared in _FP4_PAIRS:
        return _core.view(value, dtype=declared)
    if declared not in _FP4_SINGLE:
        return value
    packed = np.asarray(value.numpy())
    nibbles = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(*packed.shape[:-1], 2 * packed.shape[-1])
    nibbles.flags.writeable = False  # writes would not reach the caller's packed buffer
    return _core.view(_core.asarray(nibbles), dtype=declared)


def from_torch(tensor, name: str = "", dynamic_axis=None, tensor_format=None, dtype=None) -> _core.Tensor:
    """`pypto.from_torch(t, name)`: a ptocpu tensor over the torch tensor's memory (no copy), so a
    program's writes land in `t`. A tensor that requires grad is imported read-only: a write
    would bypass autograd (an ArgumentError names it)."""
    if type(tensor).__module__.split(".")[0] != "torch" or not hasattr(tensor, "is_contiguous"):
        # PyPTO's FeError(TypeError) for a wrong type is ptocpu's DTypeError (docs/errors.md)
        raise _core.DTypeError(f"from_torch: input type {type(tensor).__name__} is not supported; "
                               f"pass a torch.Tensor")
    if not tensor.is_contiguous():
        raise FeError(RuntimeError("from_torch: the tensor is not contiguous"))
    t = _core.asarray(tensor)
    if dtype is not None and dtype != t.dtype:
        t = _core.view(t, dtype=dtype)
    t.name = name
    if tensor_format is not None:
        t.format = tensor_format
    return t
