"""`pypto._controller`: the parts of PyPTO's recording controller its tests call (reset, dump);
the rest is internal to PyPTO's compiler and an UnsupportedError naming it."""
from __future__ import annotations

from .engine import record
from .engine.record import function
from .lang.unsupported import unsupported_name

__all__ = ["reset", "dump", "function"]


def reset() -> None:
    """Forgets the functions recorded on this thread (a fresh controller)."""
    record.forget_programs()


def dump() -> str:
    """The last recorded function as text: its declared tensors, then one line per step."""
    program = record.last_program()
    lines = [f"function {program.name}({', '.join(getattr(t, 'name', '') or '?' for t in program.tensors)})"]
    lines += [f"  {step.describe()}" for step in program.steps]
    return "\n".join(lines)


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(f"module 'pypto._controller' has no attribute {name!r}")
    raise unsupported_name(f"pypto._controller.{name}")
