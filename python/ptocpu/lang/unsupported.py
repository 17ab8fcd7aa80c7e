"""PyPTO names ptocpu does not offer (docs/running_pypto_programs.md#what-ptocpu-does-not-offer).

`pypto.get_last_function` on ptocpu raises, in one line, `UnsupportedError: pypto.get_last_function
is not offered by ptocpu 0.1.0`, so a test run's summary says what is missing instead of showing a
traceback into ptocpu. The exception is ptocpu's UnsupportedError and also an AttributeError (for
names) or a ModuleNotFoundError (for modules): `hasattr(pypto, "get_last_function")` is False,
`getattr(pypto, "get_last_function", None)` is None, and a name PyPTO does not have either (a typo)
stays a plain AttributeError.
"""
from __future__ import annotations

import functools
from pathlib import Path

from .. import _core

__all__ = ["UnsupportedName", "UnsupportedModule", "upstream_names", "module_getattr", "unsupported_name",
           "unsupported_module"]

class UnsupportedName(_core.UnsupportedError, AttributeError):
    """A PyPTO name this version of ptocpu does not offer (`name` is e.g. "pypto.get_last_function")."""


class UnsupportedModule(_core.UnsupportedError, ModuleNotFoundError):
    """A PyPTO module this version of ptocpu does not offer (`name` is e.g. "pypto.frontend.parser")."""


# Shown as PyPTO users know the class: "UnsupportedError: pypto.get_last_function is not offered by ptocpu 0.1.0".
for _cls in (UnsupportedName, UnsupportedModule):
    _cls.__name__ = _cls.__qualname__ = "UnsupportedError"
    _cls.__module__ = "ptocpu"
del _cls


def _message(name: str) -> str:
    import ptocpu
    return f"{name} is not offered by ptocpu {ptocpu.__version__}"


@functools.lru_cache(maxsize=None)
def upstream_names() -> frozenset:
    """The public names of PyPTO's `pypto` module (upstream_names.txt)."""
    lines = (Path(__file__).with_name("upstream_names.txt").read_text().splitlines())
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def unsupported_name(name: str) -> UnsupportedName:
    error = UnsupportedName(_message(name))
    error.pypto_name = name
    return error


def unsupported_module(name: str) -> UnsupportedModule:
    error = UnsupportedModule(_message(name))
    error.name = error.pypto_name = name
    return error


def module_getattr(module: str, known) -> "callable":
    """A module `__getattr__` for `pypto.<module>`: a name in `known` (PyPTO's names of that
    module) raises UnsupportedName, any other name the usual AttributeError."""
    prefix = "pypto" if module == "ptocpu" else "pypto" + module[len("ptocpu"):]

    def __getattr__(name: str):
        if name in known():
            raise unsupported_name(f"{prefix}.{name}")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
