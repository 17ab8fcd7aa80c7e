"""PyPTO's option setters (docs/running_pypto_programs.md#options): kept and returned, without
effect on the CPU unless a docs/ page says otherwise; each module's state is forgotten by
engine.dispatch.reset_state."""
from __future__ import annotations

from typing import Callable

from .. import _core
from ..engine.dispatch import on_reset
from .symbolic import int_arg

__all__ = ["options", "set_cube_tile_shapes", "get_cube_tile_shapes", "reset_options", "set_semantic_label",
           "OPTION_KINDS", "option_setter", "option_getter"]


def options(name: str = "", **kwargs) -> Callable:
    """`@pypto.options(pass_options=..., ...)` on kernels and test functions, or
    `with pypto.options(...)`: compiler settings, accepted and without effect on the CPU."""
    return _Options(kwargs)


# (debug and verify options have their own modules: ptocpu.debug, ptocpu.golden)
OPTION_KINDS = ("pass", "host", "codegen", "print")
_option_values: dict = {kind: {} for kind in OPTION_KINDS}


def option_setter(kind: str) -> Callable:
    def set_options(**settings) -> None:
        _option_values[kind].update(settings)
    set_options.__name__ = f"set_{kind}_options"
    set_options.__doc__ = f"PyPTO's {kind} options: kept (get_{kind}_options returns them), no effect on the CPU."
    return set_options


def option_getter(kind: str) -> Callable:
    def get_options() -> dict:
        return dict(_option_values[kind])
    get_options.__name__ = f"get_{kind}_options"
    get_options.__doc__ = f"PyPTO's {kind} options as set with set_{kind}_options (a new dict; empty after reset_options)."
    return get_options


_cube_tiles: list = []


def set_cube_tile_shapes(m, k, n, enable_split_k: bool = False) -> None:
    """`pypto.set_cube_tile_shapes(m, k, n, enable_split_k=False)`: matmul tiling, kept for
    get_cube_tile_shapes; ptocpu has no matmul, so it constrains nothing."""
    def ints(value, param: str) -> list:
        if not isinstance(value, (list, tuple)):
            raise _core.DTypeError(f"set_cube_tile_shapes: {param} must be a list of ints, got {type(value).__name__}")
        return [int_arg(v, "set_cube_tile_shapes", param) for v in value]
    if not isinstance(enable_split_k, bool):
        raise _core.DTypeError(f"set_cube_tile_shapes: enable_split_k must be a bool, got {type(enable_split_k).__name__}")
    _cube_tiles[:] = [(ints(m, "m"), ints(k, "k"), ints(n, "n"), enable_split_k)]


def get_cube_tile_shapes() -> tuple:
    """`pypto.get_cube_tile_shapes()`: (m, k, n, enable_split_k) as last set (empty lists before)."""
    return _cube_tiles[0] if _cube_tiles else ([], [], [], False)


def reset_options() -> None:
    """`pypto.reset_options()`: forgets every setting made with the set_*_options functions."""
    for values in _option_values.values():
        values.clear()


def set_semantic_label(label: str) -> None:
    """`pypto.set_semantic_label(label)`: names the following operations in the device's profiles;
    accepted and without effect on the CPU."""
    if not isinstance(label, str):
        raise _core.DTypeError(f"set_semantic_label: label must be a str, got {type(label).__name__}")


class _Options:
    def __init__(self, settings: dict):
        self.settings = settings

    def __call__(self, func: Callable) -> Callable:
        return func

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False




on_reset(reset_options)
on_reset(_cube_tiles.clear)
