"""pypto.from_torch (docs/tensors.md#torch): a ptocpu tensor over a torch tensor's memory."""
from __future__ import annotations

from .. import _core
from ..error import FeError

__all__ = ["from_torch"]


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
