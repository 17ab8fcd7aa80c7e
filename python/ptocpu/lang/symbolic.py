"""PyPTO's scalars (docs/running_pypto_programs.md#symbolic-scalars): symbolic scalars and the scalar helpers
(min, max, ceildiv, cond, is_loop_begin / is_loop_end, bytes_of).

A scalar whose value is known -- a literal, a loop value, a named scalar given a value, and
anything computed from those -- is a `SymbolicScalar`, an int subclass the core reads as an
int. A named unknown (`symbolic_scalar("n")`) and expressions over it are `SymbolicExpr`
objects, not ints: they print as PyPTO prints them ("((b>=2)*(b<8))"), simplify, and can be
checked for satisfiability (`SymbolicScalar.check`, lang/symbolic_check.py), but cannot be used
where a value is needed (a shape, an offset, `if`): that is an ArgumentError naming them.
`isinstance(x, pypto.SymbolicScalar)` holds for both.

Integer arithmetic is PyPTO's (C++): `/` and `//` divide truncating toward zero, `%` takes the
dividend's sign, comparisons give 0 / 1, `&` `|` `~` are logical and / or / not.
"""
from __future__ import annotations

import builtins
import operator
from typing import Callable, Optional, Union

from .. import _core
from .enums import NamedIntEnum

__all__ = ["SymbolicScalar", "SymbolicExpr", "KnownDim", "SatStatus", "SymInt", "symbolic_scalar", "min", "max", "ceildiv",
           "ceil", "cond", "is_loop_begin", "is_loop_end", "bytes_of", "int_arg"]


class SatStatus(NamedIntEnum):
    """SymbolicScalar.check's verdict on a conjunction of conditions."""
    SAT = 0  # every condition is provably true
    UNSAT = 1  # they contradict each other
    UNKNOWN = 2  # neither could be shown


# --- expression nodes -------------------------------------------------------------------------
# A node is a tuple: ("c", value), ("s", name), ("call", name, args), (op, a, b) for the
# binary ops below, ("neg" | "pos" | "not", a), ("min" | "max", a, b).

BINARY = ("+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||")
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_UNARY_TOKEN = {"neg": "-", "pos": "+", "not": "!"}


def const(value: int) -> tuple:
    return ("c", int(value))


def is_const(node: tuple) -> bool:
    return node[0] == "c"


def render(node: tuple) -> str:
    """The node as PyPTO prints it: "(x+8)", "(!x)", "RUNTIME_Min(x, 5)", "f(a,0)"."""
    kind = node[0]
    if kind == "c" or kind == "s":
        return str(node[1])
    if kind == "call":
        return f"{node[1]}({','.join(render(a) for a in node[2])})"
    if kind in _UNARY_TOKEN:
        return f"({_UNARY_TOKEN[kind]}{render(node[1])})"
    if kind in ("min", "max"):
        return f"RUNTIME_{kind.capitalize()}({render(node[1])}, {render(node[2])})"
    return f"({render(node[1])}{kind}{render(node[2])})"


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def apply(op: str, *values: int) -> Optional[int]:
    """op on known values as PyPTO's C++ computes it; None for a division or modulo by zero."""
    if op in ("/", "%") and values[1] == 0:
        return None
    a = values[0]
    b = values[1] if len(values) > 1 else None
    if op == "/":
        return _trunc_div(a, b)
    if op == "%":
        return a - b * _trunc_div(a, b)
    simple = {"+": operator.add, "-": operator.sub, "*": operator.mul, "==": operator.eq, "!=": operator.ne,
              "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
              "min": builtins.min, "max": builtins.max}
    if op in simple:
        return int(simple[op](a, b))
    return {"&&": lambda: int(bool(a) and bool(b)), "||": lambda: int(bool(a) or bool(b)),
            "neg": lambda: -a, "pos": lambda: a, "not": lambda: int(a == 0)}[op]()


def evaluate(node: tuple, values: dict) -> Optional[int]:
    """The node's value with the symbols in `values` (name -> int); None when a symbol has no
    value, for a call, or for a division by zero."""
    kind = node[0]
    if kind == "c":
        return node[1]
    if kind == "s":
        return values.get(node[1])
    if kind == "call":
        return None
    operands = [evaluate(a, values) for a in node[1:]]
    if any(v is None for v in operands):
        return None
    return apply(kind, *operands)


# --- the two classes --------------------------------------------------------------------------

class _ScalarType(type):
    """isinstance(x, SymbolicScalar) also holds for the unknowns (SymbolicExpr), as in PyPTO
    where one class holds both."""

    def __instancecheck__(cls, obj) -> bool:
        return type.__instancecheck__(cls, obj) or (cls is SymbolicScalar and isinstance(obj, SymbolicExpr))


def _node_of(value) -> tuple:
    if isinstance(value, SymbolicExpr):
        return value.node
    return const(int(value))


def _operand(value):
    """value as an operand of scalar arithmetic: an int, a SymbolicScalar or a SymbolicExpr;
    None for anything else (the operator then returns NotImplemented)."""
    if isinstance(value, (SymbolicExpr, int)):
        return value
    if hasattr(type(value), "__index__") and not isinstance(value, float):
        return operator.index(value)
    return None


def _kind_of(*values) -> str:
    return "expression" if any(getattr(v, "_kind", "immediate") != "immediate" for v in values) else "immediate"


def _combine(op: str, *values):
    """op on scalars: a known result when every operand is known, else an expression node.
    And / or with a known operand that decides them fold at once, as in PyPTO."""
    if not any(isinstance(v, SymbolicExpr) for v in values):
        ints = [int(v) for v in values]
        if op in ("/", "%") and ints[1] == 0:
            raise _core.ArgumentError(f"symbolic scalar: {'division' if op == '/' else 'modulo'} by zero")
        result = SymbolicScalar(apply(op, *ints))
        result._kind = _kind_of(*values)
        return result
    known = [int(v) for v in values if not isinstance(v, SymbolicExpr)]
    if op == "&&" and 0 in known:
        return SymbolicScalar(0)
    if op == "||" and any(known):
        return SymbolicScalar(1)
    return SymbolicExpr((op, *[_node_of(v) for v in values]))


# Index arithmetic on known scalars (loop values, ints) is the common case in a kernel body: it
# takes a short way, with the result _combine would give.
_KNOWN_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "==": operator.eq, "!=": operator.ne,
                 "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def _binary(op: str, reflected: bool = False) -> Callable:
    known = _KNOWN_BINARY.get(op)

    def method(self, other):
        if known is not None and type(other) in _KNOWN_TYPES and type(self) in _KNOWN_TYPES:
            result = int.__new__(SymbolicScalar, known(int(other), int(self)) if reflected
                                 else known(int(self), int(other)))
            result.name = ""
            result._kind = ("immediate" if getattr(self, "_kind", "immediate") == "immediate"
                            and getattr(other, "_kind", "immediate") == "immediate" else "expression")
            return result
        other = _operand(other)
        if other is None:
            return NotImplemented
        return _combine(op, other, self) if reflected else _combine(op, self, other)
    return method


def _unary(op: str) -> Callable:
    def method(self):
        return _combine(op, self)
    return method


class _ScalarOps:
    """The operators and methods both kinds of scalar share."""

    __slots__ = ()

    __add__, __radd__ = _binary("+"), _binary("+", True)
    __sub__, __rsub__ = _binary("-"), _binary("-", True)
    __mul__, __rmul__ = _binary("*"), _binary("*", True)
    __truediv__, __rtruediv__ = _binary("/"), _binary("/", True)  # PyPTO divides integers
    __floordiv__, __rfloordiv__ = _binary("/"), _binary("/", True)
    __mod__, __rmod__ = _binary("%"), _binary("%", True)
    __and__, __rand__ = _binary("&&"), _binary("&&", True)
    __or__, __ror__ = _binary("||"), _binary("||", True)
    __eq__, __ne__ = _binary("=="), _binary("!=")
    __lt__, __le__, __gt__, __ge__ = _binary("<"), _binary("<="), _binary(">"), _binary(">=")
    __neg__, __pos__, __invert__ = _unary("neg"), _unary("pos"), _unary("not")

    def min(self, other):
        """The smaller of this scalar and other (RUNTIME_Min(a, b) when one is unknown)."""
        return min(self, other)

    def max(self, other):
        """The larger of this scalar and other (RUNTIME_Max(a, b) when one is unknown)."""
        return max(self, other)

    def as_variable(self):
        """Marks an intermediate variable for PyPTO's compiler; the scalar itself on the CPU."""
        return self

    def is_immediate(self) -> bool:
        """A literal value (symbolic_scalar(10)), not a name or an expression."""
        return self._kind == "immediate"

    def is_symbol(self) -> bool:
        """A named scalar (symbolic_scalar("x") or ("x", value))."""
        return self._kind == "symbol"

    def is_expression(self) -> bool:
        """Arithmetic on a named scalar (symbolic_scalar("x") + 5)."""
        return self._kind == "expression"

    @staticmethod
    def check(conds) -> SatStatus:
        """`SymbolicScalar.check([c1, c2, ...])`: whether the conditions can hold together
        (lang/symbolic_check.py)."""
        from .symbolic_check import check
        return check(conds)


class SymbolicScalar(_ScalarOps, int, metaclass=_ScalarType):
    """`pypto.symbolic_scalar(...)`: (value), (name, value) -- a known scalar, an int -- or (name)
    -- a named unknown (a SymbolicExpr); (scalar) gives the scalar back."""

    def __new__(cls, *args):
        if len(args) == 1 and isinstance(args[0], (SymbolicScalar, SymbolicExpr)):
            return args[0]
        names = [a for a in args if isinstance(a, str)]
        values = [a for a in args if not isinstance(a, str)]
        if len(args) > 2 or len(names) > 1 or len(values) > 1 or (len(args) == 2 and not isinstance(args[0], str)):
            raise _core.DTypeError(f"symbolic_scalar: takes (value), (name) or (name, value), got {args!r}")
        if names and not values:
            return SymbolicExpr(("s", names[0]), kind="symbol")
        self = super().__new__(cls, int_arg(values[0], "symbolic_scalar", "value") if values else 0)
        self.name = names[0] if names else ""
        self._kind = "symbol" if self.name else "immediate"
        return self

    __hash__ = int.__hash__  # (defining __eq__ would unset it)

    def simplify(self) -> "SymbolicScalar":
        return self

    def is_concrete(self) -> bool:
        return True

    def concrete(self) -> int:
        return int(self)

    def __str__(self) -> str:
        return str(int(self))

    def __repr__(self) -> str:
        return f"SymbolicScalar({int(self)})"


class KnownDim(SymbolicScalar):
    """An entry of a tensor's valid shape: PyPTO gives symbolic scalars there (`[d.concrete() for d
    in t.valid_shape]`); on the CPU each is known, and prints as the int it is."""

    name = ""
    _kind = "immediate"

    def __new__(cls, value: int):
        return int.__new__(cls, value)

    __repr__ = __str__ = int.__repr__


_KNOWN_TYPES = frozenset((int, SymbolicScalar, KnownDim))  # (bool, numpy ints: the long way)


class SymbolicExpr(_ScalarOps):
    """A named unknown or an expression over one: prints, simplifies and takes part in
    SymbolicScalar.check, but has no value on the CPU."""

    __slots__ = ("node", "_kind")

    def __init__(self, node: tuple, kind: str = "expression"):
        self.node = node
        self._kind = kind

    __hash__ = None  # == builds an expression, as in PyPTO

    def _no_value(self, use: str):
        raise _core.ArgumentError(f"symbolic scalar {render(self.node)} has no value on the CPU: it cannot be {use}; "
                                  f"give it one with symbolic_scalar(name, value)")

    def __bool__(self):
        self._no_value("a condition")

    def __int__(self):
        self._no_value("converted to an int")

    def __index__(self):
        self._no_value("used as an integer")

    def concrete(self):
        self._no_value("made concrete")

    def is_concrete(self) -> bool:
        return False

    def simplify(self):
        """PyPTO's algebraic simplification (lang/symbolic_check.py simplify)."""
        from .symbolic_check import simplify
        return scalar_of(simplify(self.node))

    def __str__(self) -> str:
        return render(self.node)

    __repr__ = __str__


def scalar_of(node: tuple) -> Union[SymbolicScalar, SymbolicExpr]:
    """A node as a scalar: a known SymbolicScalar for a constant, else a SymbolicExpr."""
    if is_const(node):
        return SymbolicScalar(node[1])
    return SymbolicExpr(node, kind="symbol" if node[0] == "s" else "expression")


symbolic_scalar = SymbolicScalar
SymInt = Union[int, SymbolicScalar]  # PyPTO's annotation for "an int or a symbolic scalar"


def int_arg(value, function: str, param: str) -> int:
    """value as an int, or the DTypeError PyPTO's scalar checks map to (docs/errors.md): ints,
    numpy ints and known symbolic scalars are integers; None, bool, float, str and the rest are
    not; an unknown symbolic scalar is an ArgumentError (it has no value on the CPU)."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise _core.DTypeError(f"{function}: {param} must be an integer, got {type(value).__name__}")
    return operator.index(value)


def _extremum(op: str, a, b):
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, SymbolicExpr):
            int_arg(v, op, name)
    return _combine(op, a, b)


def min(a, b) -> SymbolicScalar:  # noqa: A001 — PyPTO's name
    """`pypto.min(a, b)`: the smaller of two scalars (ints, loop values or symbolic scalars), as a
    SymbolicScalar -- e.g. a tail block's valid rows, pypto.min(n - offset, block)."""
    return _extremum("min", a, b)


def max(a, b) -> SymbolicScalar:  # noqa: A001 — PyPTO's name
    """`pypto.max(a, b)`: the larger of two scalars (ints, loop values or symbolic scalars), as a
    SymbolicScalar."""
    return _extremum("max", a, b)


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
