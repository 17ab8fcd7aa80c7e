"""PyPTO's scalars (docs/kernel_model.md#scalars): symbolic scalars and the scalar helpers
(min, max, ceildiv, cond, is_loop_begin / is_loop_end, bytes_of)."""
from __future__ import annotations

import builtins
import operator
from typing import Callable, Optional

from .. import _core

__all__ = ["SymbolicScalar", "symbolic_scalar", "min", "max", "ceildiv", "ceil", "cond", "is_loop_begin",
           "is_loop_end", "bytes_of", "int_arg"]


class SymbolicScalar(int):
    """`pypto.symbolic_scalar(n)`: on the CPU every scalar is known when the kernel runs, so a
    symbolic scalar is an int that stays one through arithmetic and has PyPTO's methods."""

    def __new__(cls, *args):
        # PyPTO's forms: (), (value), (name), (name, value)
        values = [a for a in args if not isinstance(a, str)]
        if len(args) > 2 or len(values) > 1:
            raise TypeError(f"symbolic_scalar() takes (value), (name) or (name, value), got {args!r}")
        self = super().__new__(cls, int(values[0]) if values else 0)
        self.name = next((a for a in args if isinstance(a, str)), "")
        self._kind = "symbol" if self.name else "immediate"
        return self

    def is_immediate(self) -> bool:
        """A literal value (SymbolicScalar(10)), not a name or an expression of one."""
        return self._kind == "immediate"

    def is_symbol(self) -> bool:
        """A named scalar (SymbolicScalar("x") or ("x", value))."""
        return self._kind == "symbol"

    def is_expression(self) -> bool:
        """Arithmetic on a named scalar (SymbolicScalar("x") + 5)."""
        return self._kind == "expression"

    def as_variable(self) -> "SymbolicScalar":
        """Marks an intermediate variable for the device compiler; the scalar itself on the CPU."""
        return self

    def min(self, other) -> "SymbolicScalar":
        return SymbolicScalar(builtins.min(int(self), int(other)))

    def max(self, other) -> "SymbolicScalar":
        return SymbolicScalar(builtins.max(int(self), int(other)))

    def simplify(self) -> "SymbolicScalar":
        return self

    def is_concrete(self) -> bool:
        return True

    def concrete(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return f"SymbolicScalar({int(self)})"


def _int_result(name: str) -> Callable:
    method = getattr(int, name)

    def op(self, *other):
        result = method(self, *other)
        if not isinstance(result, int) or isinstance(result, bool):
            return result
        out = SymbolicScalar(result)
        if any(getattr(v, "_kind", "immediate") != "immediate" for v in (self, *other)):
            out._kind = "expression"
        return out
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
              "__rfloordiv__", "__mod__", "__rmod__", "__neg__", "__pos__", "__abs__", "__and__", "__rand__",
              "__or__", "__ror__", "__lshift__", "__rshift__"):
    setattr(SymbolicScalar, _name, _int_result(_name))

symbolic_scalar = SymbolicScalar


def int_arg(value, function: str, param: str) -> int:
    """value as an int, or the DTypeError PyPTO's scalar checks map to (docs/errors.md): ints,
    numpy ints and symbolic scalars are integers; None, bool, float, str and the rest are not."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise _core.DTypeError(f"{function}: {param} must be an integer, got {type(value).__name__}")
    return operator.index(value)


def min(a, b) -> SymbolicScalar:  # noqa: A001 — PyPTO's name
    """`pypto.min(a, b)`: the smaller of two scalars (ints, loop values or symbolic scalars), as a
    SymbolicScalar -- e.g. a tail block's valid rows, pypto.min(n - offset, block)."""
    return SymbolicScalar(builtins.min(int_arg(a, "min", "a"), int_arg(b, "min", "b")))


def max(a, b) -> SymbolicScalar:  # noqa: A001 — PyPTO's name
    """`pypto.max(a, b)`: the larger of two scalars (ints, loop values or symbolic scalars), as a
    SymbolicScalar."""
    return SymbolicScalar(builtins.max(int_arg(a, "max", "a"), int_arg(b, "max", "b")))


def ceildiv(a, b) -> int:
    """`pypto.ceildiv(a, b)`: a / b rounded up, for integers (the number of blocks of b that cover a)."""
    a, b = int_arg(a, "ceildiv", "a"), int_arg(b, "ceildiv", "b")
    if b == 0:
        raise _core.ArgumentError("ceildiv: b must not be 0")
    return -(-a // b)


def ceil(input, b=None):  # noqa: A002 — the op's parameter name
    """`pypto.ceil(input)` is the elementwise ceil op (docs/ops/rounding.md), called through the op
    table like any op; `pypto.ceil(a, b)` of two integers is older PyPTO's spelling of ceildiv."""
    if b is None:
        return _core.ceil(input)
    return ceildiv(input, b)


# help() and the stub show the op's own signature and docstring first.
ceil.__doc__ = f"{_core.ceil.__doc__}\n\nAlso ceil(a, b) of two integers: a / b rounded up (ceildiv)."


def bytes_of(dtype) -> int:
    """`pypto.bytes_of(dtype)`: the size of one element of dtype in bytes (as ptocpu.itemsize)."""
    return _core.itemsize(dtype)


def cond(scalar, file: Optional[str] = None, lineno: Optional[int] = None) -> bool:
    """`if pypto.cond(expr):` — the condition's value (scalars are known on the CPU)."""
    if isinstance(scalar, bool):
        return scalar
    return int_arg(scalar, "cond", "scalar") != 0


def is_loop_begin(scalar) -> bool:
    """`pypto.is_loop_begin(i)`: True when i is a pypto.loop value on the loop's first iteration
    (False for any other scalar)."""
    return getattr(scalar, "_loop_first", None) == int_arg(scalar, "is_loop_begin", "scalar")


def is_loop_end(scalar) -> bool:
    """`pypto.is_loop_end(i)`: True when i is a pypto.loop value on the loop's last iteration
    (False for any other scalar)."""
    return getattr(scalar, "_loop_last", None) == int_arg(scalar, "is_loop_end", "scalar")
