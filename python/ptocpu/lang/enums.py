"""PyPTO's enums and type names that carry no semantics of their own on the CPU."""
from __future__ import annotations

import enum

from .. import _core

__all__ = ["DataType", "DT_DOUBLE", "DT_FP8", "TileOpFormat", "CompStage", "StatusType", "DYN", "DYNAMIC", "STATIC", "AtomicRMWMode",
           "NamedIntEnum", "ROUND_UP", "ROUND_DOWN"]

TileOpFormat = _core.TileOpFormat
DataType = _core.DType  # DT_FP32 and the others are its members
DT_DOUBLE = _core.DT_FP64  # PyPTO's second name for fp64
DT_FP8 = _core.DT_FP8E4M3  # PyPTO's generic 8-bit float: E4M3 here (docs/dtypes.md)


class CompStage(enum.Enum):
    """How far PyPTO's compiler goes (`host_options={"compile_stage": ...}`); accepted, the CPU
    always runs the whole kernel."""
    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


class StatusType(enum.Enum):
    """Markers for a jit annotation's dims (`pypto.Tensor([pypto.DYNAMIC, 64], ...)`); an
    annotation with markers accepts any shape."""
    DYN = "DYN"
    DYNAMIC = "DYNAMIC"
    STATIC = "STATIC"


DYN = StatusType.DYN
DYNAMIC = StatusType.DYNAMIC
STATIC = StatusType.STATIC




class NamedIntEnum(enum.IntEnum):
    """An IntEnum that prints as PyPTO's enums do ("AtomicRMWMode.ADD"), not as its number."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class AtomicRMWMode(NamedIntEnum):
    """An atomic read-modify-write's operation (PyPTO's atomic ops)."""
    ADD = 0
    MAX = 1
    MIN = 2


ROUND_UP = _core.DequantScaleRoundingMode.ROUND_UP
ROUND_DOWN = _core.DequantScaleRoundingMode.ROUND_DOWN
