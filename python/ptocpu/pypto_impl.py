"""`pypto.pypto_impl`: the few parts of PyPTO's C++ binding that its test harness and tests call
directly (Reset, SetGlobalConfig, and DeviceTensorData / SetVerifyData, the harness's way to hand
goldens over by address), and conv's TileL1Info / TileL0Info / ConvReLuType, which its conv tests
use. Anything else there is internal to PyPTO's compiler: an UnsupportedError (also an
AttributeError) naming it."""
from __future__ import annotations

import ctypes
import math
from typing import Sequence

import numpy as np

from .engine import config
from .engine.config import ExternalError
from .engine.dispatch import reset_state
from .engine.golden import set_verify_golden_data
from .error import PyptoError
from . import _core
from ._core import ConvReLuType
from .lang.options import TileL0Info, TileL1Info
from .lang.unsupported import unsupported_name

__all__ = ["ExternalError", "Reset", "SetGlobalConfig", "DeviceTensorData", "SetVerifyData", "TileL1Info", "TileL0Info",
           "ConvReLuType"]

# PyPTO's codes for a golden that does not match its tensor (VerifyResultScene: SHAPE_DIFF, DTYPE_DIFF).
_SHAPE_DIFF, _DTYPE_DIFF = 0xFB4002, 0xFB4003


def Reset() -> None:  # noqa: N802 — PyPTO's name
    """PyPTO's Program::Reset (its conftest calls it after every ut test): the state a fresh
    process has -- no recorded functions, options, tile shapes or pending goldens."""
    reset_state()


def SetGlobalConfig(values: dict) -> None:  # noqa: N802 — PyPTO's name
    """Sets defaults that reset_options keeps ("pass.enable_slice": True, as PyPTO's conftest
    does) or global config entries ("global.platform.enable_cost_model")."""
    config.set_root(values)


class DeviceTensorData:
    """A tensor's data by address: dtype, the address of its first element (0: none) and its
    shape, as PyPTO's binding takes them (`DeviceTensorData(dtype, tensor.data_ptr(), shape)`).
    The memory must stay alive and hold the shape's elements, contiguous."""

    def __init__(self, dtype, addr: int, shape: Sequence[int]):
        self.dtype = _core.dtype(dtype)
        self.addr = int(addr or 0)
        self.shape = [int(d) for d in shape]

    def GetDataType(self):  # noqa: N802 — PyPTO's names
        return self.dtype

    def GetAddr(self) -> int:  # noqa: N802
        return self.addr

    def GetShape(self) -> list:  # noqa: N802
        return list(self.shape)

    def array(self) -> np.ndarray:
        """A copy of the data as a numpy array of the shape (dtypes numpy holds, ml_dtypes' included)."""
        np_dtype = np.dtype(_core.numpy_dtype(self.dtype))
        count = math.prod(self.shape)
        raw = (ctypes.c_uint8 * (count * np_dtype.itemsize)).from_address(self.addr)
        return np.frombuffer(raw, dtype=np_dtype, count=count).reshape(self.shape).copy()


def _check_goldens(in_out: Sequence[DeviceTensorData], goldens: Sequence[DeviceTensorData]) -> None:
    """PyPTO's checks of goldens against the run's tensors, position by position, when the counts
    match: the same dtype (a uint8 golden may stand for HiFloat8), rank and extents."""
    if len(in_out) != len(goldens):
        return
    for i, (t, g) in enumerate(zip(in_out, goldens)):
        if not t.addr or not g.addr:
            continue
        hf8_as_bytes = t.dtype.name == "DT_HF8" and g.dtype.name == "DT_UINT8"
        if t.dtype != g.dtype and not hf8_as_bytes:
            raise PyptoError(_DTYPE_DIFF, f"dtype mismatch at index {i}, output dtype: {t.dtype.name}, "
                                          f"golden dtype: {g.dtype.name}")
        if len(t.shape) != len(g.shape):
            raise PyptoError(_SHAPE_DIFF, f"shape rank mismatch at golden index {i}, output rank: {len(t.shape)}, "
                                          f"golden rank: {len(g.shape)}")
        for dim, (a, b) in enumerate(zip(t.shape, g.shape)):
            if a != b:
                raise PyptoError(_SHAPE_DIFF, f"shape mismatch at golden index {i}, dim {dim}, output shape: "
                                              f"{t.shape}, golden shape: {g.shape}")


def SetVerifyData(inputs: Sequence[DeviceTensorData], outputs: Sequence[DeviceTensorData],  # noqa: N802
                  goldens: Sequence[DeviceTensorData]) -> None:
    """PyPTO's SetVerifyData: goldens for the next verifying run, one per input then output
    (address 0: none), checked against those tensors first (docs/tracing.md#golden-checks); then
    as `set_verify_golden_data(goldens=...)` with copies of the goldens' data."""
    _check_goldens([*inputs, *outputs], goldens)
    set_verify_golden_data(goldens=[g.array() if g.addr else None for g in goldens])


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module 'pypto.pypto_impl' has no attribute {name!r}")
    raise unsupported_name(f"pypto.pypto_impl.{name}")
