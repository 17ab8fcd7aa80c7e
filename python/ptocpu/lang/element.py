"""`pypto.Element(dtype, value)` (also `pypto.element`): a scalar constant with a dtype, for the
operators that take scalars (docs/running_pypto_programs.md#loops-and-scalars)."""
from __future__ import annotations

import math

from .. import _core
from ..error import as_fe_error

__all__ = ["Element"]


class Element:
    """A scalar of a given dtype: `value` is the number as that dtype holds it (an int for integer
    and bool dtypes, truncated toward zero as a C++ conversion does; a float otherwise)."""

    __slots__ = ("_dtype", "_value")

    def __init__(self, dtype, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise as_fe_error(_core.DTypeError(f"Element: value must be an int or a float, got {type(value).__name__}"))
        dtype = _core.dtype(dtype)
        name = dtype.name
        if "FP" in name or "BF" in name:
            self._value = float(value)
        else:
            if not math.isfinite(value):
                raise as_fe_error(_core.ArgumentError(f"Element: {value} has no {name} value"))
            self._value = int(value) if name != "DT_BOOL" else int(value != 0)
        self._dtype = dtype

    @property
    def dtype(self):
        return self._dtype

    @property
    def value(self):
        return self._value

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __repr__(self) -> str:
        return f"Element({self._dtype.name}, {self._value!r})"
