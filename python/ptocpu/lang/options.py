"""PyPTO's option setters (docs/running_pypto_programs.md#options): kept and returned, without
effect on the CPU unless a docs/ page says otherwise; each module's state is forgotten by
engine.dispatch.reset_state."""
from __future__ import annotations

from typing import Callable

from .. import _core
from ..engine.dispatch import on_reset
from .symbolic import int_arg

__all__ = ["options", "set_cube_tile_shapes", "get_cube_tile_shapes", "set_matrix_size", "reset_options",
           "set_semantic_label",
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


def _int_list(value, function: str, param: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise _core.DTypeError(f"{function}: {param} must be a list of ints, got {type(value).__name__}")
    return [int_arg(v, function, param) for v in value]


def set_cube_tile_shapes(m, k, n, enable_split_k: bool = False) -> None:
    """`pypto.set_cube_tile_shapes(m, k, n, enable_split_k=False)`: the cube tile of matmul /
    scaled_mm for this thread (docs/ops/matmul.md#tiles): m = [mL0, mL1], k = [kL0, kL1] or
    [kL0, kAL1, kBL1], n = [nL0, nL1]. Wrong lengths are a TileError here; the values are checked
    by each matmul against its operands and the platform's cube buffers."""
    if not isinstance(enable_split_k, bool):
        raise _core.DTypeError(f"set_cube_tile_shapes: enable_split_k must be a bool, got {type(enable_split_k).__name__}")
    _core._set_cube_tile_shapes(_int_list(m, "set_cube_tile_shapes", "m"), _int_list(k, "set_cube_tile_shapes", "k"),
                                _int_list(n, "set_cube_tile_shapes", "n"), enable_split_k)


def get_cube_tile_shapes() -> tuple:
    """`pypto.get_cube_tile_shapes()`: (m, k, n, enable_split_k) as last set, k with its three
    entries [kL0, kAL1, kBL1] (empty lists before)."""
    return _core._get_cube_tile_shapes()


def set_matrix_size(size) -> None:
    """`pypto.set_matrix_size([m, k, n])`: the sizes of NZ matmul operands before a reshape. Kept;
    the CPU stores every tensor ND, so no op reads it."""
    _core._set_matrix_size(_int_list(size, "set_matrix_size", "size"))


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
on_reset(_core._reset_cube_tile_shapes)
on_reset(lambda: _core._set_matrix_size([]))
