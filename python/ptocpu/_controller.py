"""`pypto._controller`: the parts of PyPTO's recording controller its tests call (reset, dump,
_loop_range); the rest is internal to PyPTO's compiler and an UnsupportedError naming it."""
from __future__ import annotations

from . import _core
from .engine import record
from .engine.record import function
from .lang.symbolic import SymbolicScalar
from .lang.unsupported import unsupported_name

__all__ = ["reset", "dump", "function", "_loop_range"]


def reset() -> None:
    """Forgets the functions recorded on this thread (a fresh controller)."""
    record.forget_programs()


def dump() -> str:
    """The last recorded function as text: its declared tensors, then one line per step."""
    program = record.last_program()
    lines = [f"function {program.name}({', '.join(getattr(t, 'name', '') or '?' for t in program.tensors)})"]
    lines += [f"  {step.describe()}" for step in program.steps]
    return "\n".join(lines)


class LoopRange:
    """A loop's begin, end and step as symbolic scalars, the numbers `pypto.loop` takes."""

    def __init__(self, begin, end, step) -> None:
        self._bounds = tuple(SymbolicScalar(v) for v in (begin, end, step))

    def begin(self) -> SymbolicScalar:
        return self._bounds[0]

    def end(self) -> SymbolicScalar:
        return self._bounds[1]

    def step(self) -> SymbolicScalar:
        return self._bounds[2]

    def __str__(self) -> str:
        return "LoopRange({}, {}, {})".format(*self._bounds)

    __repr__ = __str__


def _loop_range(*args) -> LoopRange:
    """(end), (begin, end) or (begin, end, step), as Python's range."""
    if not 1 <= len(args) <= 3:
        raise _core.ArgumentError(f"_loop_range: takes (end), (begin, end) or (begin, end, step), got {len(args)} "
                                  "arguments")
    begin, end, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    return LoopRange(begin, end, step)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'pypto._controller' has no attribute {name!r}")
    raise unsupported_name(f"pypto._controller.{name}")
