"""`pypto.platform`: ptocpu's platform block (`with pypto.platform("atlas_a2"):`) and PyPTO's
`pypto.platform.npuarch` (the chip's architecture name, which selects the platform when set)."""
from __future__ import annotations

import contextlib
from typing import Iterator

from .. import _core

__all__ = ["platform"]


class _Platform:
    """`pypto.platform(name)` is a block on that platform; `pypto.platform.npuarch` the current
    platform's architecture ("DAV_3510" on ascend950, "DAV_2201" on atlas_a2 / atlas_a3, "host"
    on cpu). Setting it selects the platform of that architecture (the current one if it has it,
    else the first in the platform table)."""

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        """`with ptocpu.platform("ascend950"):` -- the platform for this block (this thread); the
        previous one is restored afterwards, also when the block raises. Names as for set_platform."""
        previous = _core.get_platform()
        _core.set_platform(name)
        try:
            yield
        finally:
            _core.set_platform(previous)

    @staticmethod
    def _table() -> list:
        return _core.platform_table()

    @property
    def npuarch(self) -> str:
        current = _core.get_platform()
        return next(p["arch"] for p in self._table() if p["name"] == current)

    @npuarch.setter
    def npuarch(self, arch: str) -> None:
        if not isinstance(arch, str):
            raise _core.DTypeError(f"platform.npuarch: must be a str, got {type(arch).__name__}")
        if self.npuarch == arch:
            return
        names = [p["name"] for p in self._table() if p["arch"] == arch]
        if not names:
            known = ", ".join(sorted({p["arch"] for p in self._table()}))
            raise _core.ArgumentError(f"platform.npuarch: unknown architecture {arch!r}; expected one of {known}")
        _core.set_platform(names[0])

    def __repr__(self) -> str:
        return f"<pypto.platform: {_core.get_platform()} ({self.npuarch})>"


platform = _Platform()
