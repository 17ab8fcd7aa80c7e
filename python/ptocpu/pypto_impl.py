"""`pypto.pypto_impl`: the few parts of PyPTO's C++ binding that its test harness and tests call
directly, and conv's TileL1Info / TileL0Info / ConvReLuType, which its conv tests use. Anything
else there is internal to PyPTO's compiler: an UnsupportedError (also an AttributeError) naming it."""
from __future__ import annotations

from .engine import config
from .engine.config import ExternalError
from .engine.dispatch import reset_state
from ._core import ConvReLuType
from .lang.options import TileL0Info, TileL1Info
from .lang.unsupported import unsupported_name

__all__ = ["ExternalError", "Reset", "SetGlobalConfig", "TileL1Info", "TileL0Info", "ConvReLuType"]


def Reset() -> None:  # noqa: N802 — PyPTO's name
    """PyPTO's Program::Reset (its conftest calls it after every ut test): the state a fresh
    process has -- no recorded functions, options, tile shapes or pending goldens."""
    reset_state()


def SetGlobalConfig(values: dict) -> None:  # noqa: N802 — PyPTO's name
    """Sets defaults that reset_options keeps ("pass.enable_slice": True, as PyPTO's conftest
    does) or global config entries ("global.platform.enable_cost_model")."""
    config.set_root(values)


def __getattr__(name: str):
    if name.startswith("_"):
        raise AttributeError(f"module 'pypto.pypto_impl' has no attribute {name!r}")
    raise unsupported_name(f"pypto.pypto_impl.{name}")
