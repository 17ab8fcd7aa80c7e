"""PyPTO's option functions (docs/running_pypto_programs.md#options) over the option store
(engine/config.py): the set_*_options / get_*_options pairs, set_options, `pypto.options(...)`
scopes, the global config, pass configs and the cube tile shapes. They take PyPTO's keywords and
check values as PyPTO does; on the CPU they configure nothing but what docs/tracing.md names.
"""
from __future__ import annotations

import enum
import functools
import re
from typing import Callable, Optional

from .. import _core
from ..engine import config
from ..engine.dispatch import on_reset
from ..error import as_fe_error
from .symbolic import int_arg

__all__ = ["options", "set_options", "reset_options", "set_print_options", "get_print_options",
           "set_pass_options", "get_pass_options", "set_host_options", "get_host_options", "set_codegen_options",
           "get_codegen_options", "set_verify_options", "get_verify_options", "set_debug_options",
           "get_debug_options", "set_operation_options", "get_operation_options", "get_global_config",
           "set_global_config", "set_semantic_label", "set_cube_tile_shapes", "get_cube_tile_shapes",
           "set_conv_tile_shapes", "get_conv_tile_shapes", "ConvTile", "set_matrix_size", "PassConfigKey", "PassConfigs", "get_pass_default_config", "set_pass_default_config",
           "get_pass_config", "set_pass_config", "get_pass_configs"]

# A per-function setting ("func<magic>_<order>") or DEFAULT: cannot be mixed with int keys.
_FUNCTION_KEY = re.compile(r"^func\d+_\d+$")
_OOO_SCOPE_MAX = 100000
_SETTINGS = ("vec_nbuffer_setting", "cube_l1_reuse_setting", "cube_nbuffer_setting")


def _fe(error: BaseException) -> BaseException:
    return as_fe_error(error)


def _given(values: dict, prefix: str) -> dict:
    return {f"{prefix}.{k}": v for k, v in values.items() if v is not None}


# --- pass options -----------------------------------------------------------------------------

def _scope_id(scope_id: int) -> None:
    if not -1 <= scope_id <= 2**31 - 1:
        raise _fe(_core.ArgumentError(f"Option 'pass.sg_set_scope' scope_id {scope_id} is out of range. "
                                      f"Expected -1~2147483647."))


def _sg_set_scope(value) -> list:
    """sg_set_scope: a scope id, or (scope id, allow parallel merge, allow cross-scope merge)."""
    if isinstance(value, int) and not isinstance(value, bool):
        _scope_id(value)
        return [value, 0, 0]
    if not isinstance(value, (tuple, list)):
        raise _fe(_core.DTypeError(f"Option 'pass.sg_set_scope' has invalid type. Expected int64 or tuple, "
                                   f"but got {type(value).__name__}."))
    if len(value) != 3:
        raise _fe(_core.ArgumentError(f"Option 'pass.sg_set_scope' has {len(value)} elements. Expected 3: "
                                      f"(scope id, allow parallel merge, allow cross-scope merge)."))
    for i, (item, wanted) in enumerate(zip(value, (int, bool, bool))):
        if not isinstance(item, wanted) or (wanted is int and isinstance(item, bool)):
            raise _fe(_core.DTypeError(f"Option 'pass.sg_set_scope[{i}]' has invalid type. Expected "
                                       f"{wanted.__name__}, but got {type(item).__name__}."))
    _scope_id(value[0])
    return [value[0], int(value[1]), int(value[2])]  # PyPTO keeps it as a list of int64


# cube_l1_reuse_setting values are a merge count or (count, side): PyPTO packs the side into the
# count's int as side * _L1_SIDE_BASE + count.
_L1_SIDES = {"auto": 0, "left": 1, "right": 2}
_L1_SIDE_BASE = 1000000


def _packed_l1_reuse(setting):
    if not isinstance(setting, dict):
        return setting  # the store reports the type
    packed = {}
    for key, value in setting.items():
        if isinstance(value, (tuple, list)):
            if len(value) != 2:
                raise _fe(_core.ArgumentError(f"cube_l1_reuse_setting[{key!r}] must be a count or (count, side), got "
                                              f"{len(value)} elements"))
            count, side = value
            if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count < _L1_SIDE_BASE:
                raise _fe(_core.ArgumentError(f"cube_l1_reuse_setting[{key!r}]: the merge count must be an int in "
                                              f"[1, {_L1_SIDE_BASE}), got {count!r}"))
            if not isinstance(side, str) or side.lower() not in _L1_SIDES:
                raise _fe(_core.ArgumentError(f"cube_l1_reuse_setting[{key!r}]: the side must be one of "
                                              f"{sorted(_L1_SIDES)}, got {side!r}"))
            value = _L1_SIDES[side.lower()] * _L1_SIDE_BASE + count
        packed[key] = value
    return packed


def _unpacked_l1_reuse(value):
    if isinstance(value, int) and value >= _L1_SIDE_BASE:
        side = {code: name for name, code in _L1_SIDES.items()}.get(value // _L1_SIDE_BASE)
        if side is not None:
            return (value % _L1_SIDE_BASE, side)
    return value


def _pass_value(key: str, value):
    """A pass option as the store keeps it (checks PyPTO makes before storing)."""
    if key in _SETTINGS:
        _setting(key, value)
    if key == "cube_l1_reuse_setting":
        return _packed_l1_reuse(value)
    if key == "sg_set_scope":
        return _sg_set_scope(value)
    return value


def _setting(name: str, value) -> None:
    """vec_nbuffer_setting & co: int keys (hash orders) or string keys (per-function keys, DEFAULT,
    semantic labels); per-function keys and DEFAULT do not mix with int keys."""
    if not isinstance(value, dict):
        return  # the store reports the type
    ints = any(isinstance(k, int) and not isinstance(k, bool) for k in value)
    named = any(isinstance(k, str) and (_FUNCTION_KEY.match(k) or k == "DEFAULT") for k in value)
    if ints and named:
        raise _fe(_core.ArgumentError(f"{name} cannot mix integer keys with per-function (func<magic>_<order>) or "
                                      f"DEFAULT keys: use one kind"))


def set_pass_options(*, vec_nbuffer_setting: Optional[dict] = None, cube_l1_reuse_setting: Optional[dict] = None,
                     cube_nbuffer_setting: Optional[dict] = None, sg_set_scope=None,
                     sg_set_ooo_scope: Optional[int] = None, ooo_sched_mode: Optional[str] = None,
                     auto_mix_partition: Optional[int] = None, sg_set_tunevf_mode: Optional[int] = None,
                     enable_slice: Optional[bool] = None) -> None:
    """`pypto.set_pass_options(...)`: PyPTO's graph-pass settings (checked and kept; no effect
    on the CPU)."""
    settings = {"vec_nbuffer_setting": vec_nbuffer_setting, "cube_l1_reuse_setting": cube_l1_reuse_setting,
                "cube_nbuffer_setting": cube_nbuffer_setting, "auto_mix_partition": auto_mix_partition,
                "enable_slice": enable_slice, "ooo_sched_mode": ooo_sched_mode}
    for name in _SETTINGS:
        settings[name] = _pass_value(name, settings[name])
    if sg_set_scope is not None:
        settings["sg_set_scope"] = _sg_set_scope(sg_set_scope)
    if sg_set_tunevf_mode is not None:
        if sg_set_tunevf_mode not in (0, 1, 2):
            raise _fe(_core.ArgumentError(f"Invalid sg_set_tunevf_mode: '{sg_set_tunevf_mode}'. Expected 0, 1 or 2."))
        settings["sg_set_tunevf_mode"] = sg_set_tunevf_mode
    if sg_set_ooo_scope is not None:
        if sg_set_ooo_scope != -1 and not 1 <= sg_set_ooo_scope <= _OOO_SCOPE_MAX:
            raise _fe(_core.ArgumentError(f"Invalid sg_set_ooo_scope: '{sg_set_ooo_scope}'. Expected -1 or an "
                                          f"integer in [1, {_OOO_SCOPE_MAX}]."))
        settings["sg_set_ooo_scope"] = [sg_set_ooo_scope]
    if ooo_sched_mode is not None and ooo_sched_mode not in ("", "GAPMIN", "HLF"):
        raise _fe(_core.ArgumentError(f"Invalid ooo_sched_mode: '{ooo_sched_mode}'. Expected '', 'GAPMIN' or 'HLF'."))
    if enable_slice is not None and not isinstance(enable_slice, bool):
        raise _fe(_core.DTypeError(f"Invalid enable_slice: '{enable_slice}'. Expected bool."))
    config.set_values(_given(settings, "pass"))


def get_pass_options() -> dict:
    """`pypto.get_pass_options()`: one entry per set_pass_options keyword."""
    scope = config.value("pass.sg_set_scope")
    return {
        **{name: {k: _unpacked_l1_reuse(v) if name == "cube_l1_reuse_setting" else v
                  for k, v in config.value(f"pass.{name}").items()} for name in _SETTINGS},
        "sg_set_scope": (int(scope[0]), bool(scope[1]), bool(scope[2])),
        "sg_set_ooo_scope": config.value("pass.sg_set_ooo_scope")[0],
        **{name: config.value(f"pass.{name}") for name in ("auto_mix_partition", "ooo_sched_mode",
                                                             "sg_set_tunevf_mode", "enable_slice")},
    }


# --- the other sections -----------------------------------------------------------------------

def set_host_options(*, compile_stage=None, compile_monitor_enable: Optional[int] = None,
                     compile_timeout: Optional[int] = None, compile_timeout_stage: Optional[int] = None,
                     compile_monitor_print_interval: Optional[int] = None) -> None:
    """`pypto.set_host_options(...)`: how far PyPTO compiles and its watchdog (the CPU always runs
    the whole kernel)."""
    config.set_values(_given(dict(compile_stage=compile_stage, compile_monitor_enable=compile_monitor_enable,
                                  compile_timeout=compile_timeout, compile_timeout_stage=compile_timeout_stage,
                                  compile_monitor_print_interval=compile_monitor_print_interval), "host"))


def set_codegen_options(*, support_dynamic_aligned: Optional[bool] = None, soc_version: Optional[str] = None,
                        enable_pmu_trace: Optional[bool] = None, vf_options: Optional[str] = None) -> None:
    """`pypto.set_codegen_options(...)`: PyPTO's code generation settings (kept; no effect on the CPU)."""
    config.set_values(_given(dict(support_dynamic_aligned=support_dynamic_aligned, soc_version=soc_version,
                                  enable_pmu_trace=enable_pmu_trace, vf_options=vf_options), "codegen"))


def set_verify_options(*, enable_pass_verify: Optional[bool] = None, pass_verify_save_tensor: Optional[bool] = None,
                       pass_verify_save_tensor_dir: Optional[str] = None, pass_verify_pass_filter: Optional[list] = None,
                       pass_verify_error_tol: Optional[list] = None) -> None:
    """`pypto.set_verify_options(enable_pass_verify=True, pass_verify_error_tol=[rtol, atol], ...)`:
    golden checks for the kernels that give no verify_options of their own (docs/tracing.md)."""
    if isinstance(pass_verify_error_tol, (list, tuple)) and (
            len(pass_verify_error_tol) != 2 or any(not isinstance(v, (int, float)) or not v >= 0 for v in pass_verify_error_tol)):
        raise _fe(_core.ArgumentError(f"set_verify_options: pass_verify_error_tol must be [rtol, atol] with both "
                                      f">= 0 (not nan), got {pass_verify_error_tol!r}"))
    config.set_values(_given(dict(enable_pass_verify=enable_pass_verify, pass_verify_save_tensor=pass_verify_save_tensor,
                                  pass_verify_save_tensor_dir=pass_verify_save_tensor_dir,
                                  pass_verify_pass_filter=pass_verify_pass_filter,
                                  pass_verify_error_tol=pass_verify_error_tol), "verify"))


def set_debug_options(*, compile_debug_mode: Optional[int] = None, runtime_debug_mode: Optional[int] = None,
                      dump_pass_graph: Optional[list] = None) -> None:
    """`pypto.set_debug_options(...)`: runtime_debug_mode=1 traces every kernel call
    (docs/tracing.md); the other modes and options are kept and change nothing on the CPU."""
    config.set_values(_given(dict(compile_debug_mode=compile_debug_mode, runtime_debug_mode=runtime_debug_mode,
                                  dump_pass_graph=dump_pass_graph), "debug"))


def set_operation_options(*, combine_axis: Optional[bool] = None) -> None:
    """`pypto.experimental.set_operation_options(combine_axis=...)` (kept; no effect on the CPU)."""
    config.set_values(_given(dict(combine_axis=combine_axis), "operation"))


def set_print_options(*, edgeitems: Optional[int] = 3, precision: Optional[int] = 4, threshold: Optional[int] = 10,
                      linewidth: Optional[int] = 10) -> None:
    """`pypto.set_print_options(...)`: how PyPTO prints tensors (kept for get_print_options)."""
    config.set_values(_given(dict(edgeitems=edgeitems, precision=precision, threshold=threshold,
                                  linewidth=linewidth), "print"))


def _getter(section: str) -> Callable[[], dict]:
    def get() -> dict:
        return config.section(section)
    get.__name__ = f"get_{section}_options"
    get.__doc__ = f"`pypto.get_{section}_options()`: every {section} option, as set or by default."
    return get


get_host_options = _getter("host")
get_codegen_options = _getter("codegen")
get_verify_options = _getter("verify")
get_debug_options = _getter("debug")
get_operation_options = _getter("operation")
get_print_options = _getter("print")


def _name(function: str, param: str, value) -> str:
    if not isinstance(value, str):
        raise _core.DTypeError(f"{function}: {param} must be a str, got {type(value).__name__}")
    return value


def get_global_config(key: str):
    """`pypto.get_global_config("platform.enable_cost_model")`: a global setting (FeError if unknown)."""
    return config.global_value(_name("get_global_config", "key", key))


def set_global_config(key: str, value) -> None:
    """`pypto.set_global_config(key, value)`: kept for get_global_config (no effect on the CPU)."""
    config.set_global(_name("set_global_config", "key", key), value)


def set_matrix_size(size: list) -> None:
    """`pypto.set_matrix_size([m, k, n])`: the sizes of NZ matmul operands before a reshape. Kept;
    the CPU stores every tensor ND, so no op reads it."""
    _core._set_matrix_size(_int_list(size, "set_matrix_size", "size"))


def _int_list(value, function: str, param: str) -> list:
    if not isinstance(value, (list, tuple)):
        raise _core.DTypeError(f"{function}: {param} must be a list of ints, got {type(value).__name__}")
    return [int_arg(v, function, param) for v in value]


# --- set_options and scopes -------------------------------------------------------------------

_SECTIONS = ("codegen", "host", "pass", "runtime", "verify", "debug", "operation")


def section_values(sections: dict) -> dict:
    """{"pass": {...}, "host": {...}, ...} (None for a section not given) as the option store's
    keys ("pass.sg_set_scope"), with the checks PyPTO makes before storing them."""
    values = {}
    for name, given in sections.items():
        if given is None:
            continue
        if not isinstance(given, dict):
            raise _fe(_core.DTypeError(f"{name}_options must be a dict, got {type(given).__name__}"))
        for key, value in given.items():
            if name == "pass":
                value = _pass_value(key, value)
            values[f"{name}.{key}"] = value.value if isinstance(value, enum.Enum) else value
    return values


def _apply_shapes(vec_tile_shapes, cube_tile_shapes, conv_tile_shapes, matrix_size) -> None:
    if vec_tile_shapes is not None:
        _core.set_vec_tile_shapes(*vec_tile_shapes)
    if cube_tile_shapes is not None:
        set_cube_tile_shapes(*cube_tile_shapes)
    if conv_tile_shapes is not None:
        tile = conv_tile_shapes if isinstance(conv_tile_shapes, ConvTile) else ConvTile(*conv_tile_shapes)
        set_conv_tile_shapes(tile.tile_l1_info, tile.tile_l0_info if tile.set_l0_tile else None)
    if matrix_size is not None:
        set_matrix_size(matrix_size)


def set_options(codegen_options=None, host_options=None, pass_options=None, runtime_options=None,
                verify_options=None, debug_options=None, operation_options=None, vec_tile_shapes=None,
                cube_tile_shapes=None, conv_tile_shapes=None, matrix_size=None) -> None:
    """`pypto.set_options(pass_options={...}, ...)`: several sections at once ("section options"
    dicts keyed by option name), checked as the set_*_options functions check them."""
    config.set_values(section_values({"codegen": codegen_options, "host": host_options, "pass": pass_options,
                                       "runtime": runtime_options, "verify": verify_options,
                                       "debug": debug_options, "operation": operation_options}))
    _apply_shapes(vec_tile_shapes, cube_tile_shapes, conv_tile_shapes, matrix_size)


class _Options:
    """`with pypto.options(...)` / `@pypto.options(...)`: a scope whose options end with it (the
    tile shapes it sets too)."""

    def __init__(self, name: str, sections: dict, shapes: tuple):
        self.name = name
        self.values = config.checked(section_values(sections))
        self.shapes = shapes
        self._saved: list = []

    def __enter__(self):
        self._saved.append((_core.get_vec_tile_shapes(), _core._get_cube_tile_shapes(), _core._get_conv_tile_shapes(),
                            _core._get_matrix_size()))
        config.push(self.name, self.values)
        _apply_shapes(*self.shapes)
        return self

    def __exit__(self, *exc) -> bool:
        config.pop()
        vec, cube, conv, matrix = self._saved.pop()
        _core.set_vec_tile_shapes(*vec) if vec else _core.reset_vec_tile_shapes()
        _core._restore_cube_tile_shapes(cube)
        _core._restore_conv_tile_shapes(conv)
        _core._set_matrix_size(matrix)
        return False

    def __call__(self, func: Callable) -> Callable:
        if not self.name:
            self.name = getattr(func, "__name__", "")

        @functools.wraps(func)
        def scoped(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return scoped


def options(name: str = "", codegen_options=None, host_options=None, pass_options=None, runtime_options=None,
            verify_options=None, operation_options=None, debug_options=None, vec_tile_shapes=None,
            cube_tile_shapes=None, conv_tile_shapes=None, matrix_size=None) -> _Options:
    """`@pypto.options(pass_options=..., ...)` on kernels and functions, or `with pypto.options(...)`:
    the options hold inside and end with the block (checked when made)."""
    sections = {"codegen": codegen_options, "host": host_options, "pass": pass_options, "runtime": runtime_options,
                "verify": verify_options, "debug": debug_options, "operation": operation_options}
    return _Options(name, sections, (vec_tile_shapes, cube_tile_shapes, conv_tile_shapes, matrix_size))


def reset_options() -> None:
    """`pypto.reset_options()`: every option back to its default (SetGlobalConfig's stay)."""
    config.reset()


def set_semantic_label(label: str) -> None:
    """`pypto.set_semantic_label(label)`: names the following operations in the device's profiles;
    accepted and without effect on the CPU. A label shaped like a per-function key (func12_0) is
    refused."""
    if not isinstance(label, str):
        raise _core.DTypeError(f"set_semantic_label: label must be a str, got {type(label).__name__}")
    if _FUNCTION_KEY.match(label):
        raise _fe(_core.ArgumentError(f"set_semantic_label: label '{label}' conflicts with function-granularity "
                                      f"hashOrder keys (func<magic>_<order>); choose another label"))


# --- cube tile shapes -------------------------------------------------------------------------

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


# --- conv tile shapes -------------------------------------------------------------------------

class _TileInfo:
    """PyPTO's conv tile records (its pypto_impl structs): named int fields, all 0 when made
    without arguments, else every field given (by position or name)."""
    _FIELDS: tuple = ()

    def __init__(self, *args, **kwargs):
        name = type(self).__name__
        if not args and not kwargs:
            values = [0] * len(self._FIELDS)
        else:
            if len(args) > len(self._FIELDS):
                raise _core.ArgumentError(f"{name}: takes {len(self._FIELDS)} values, got {len(args)}")
            given = dict(zip(self._FIELDS, args))
            for key, value in kwargs.items():
                if key not in self._FIELDS:
                    raise _core.ArgumentError(f"{name}: no field {key!r}; fields: {', '.join(self._FIELDS)}")
                if key in given:
                    raise _core.ArgumentError(f"{name}: {key} given twice")
                given[key] = value
            missing = [f for f in self._FIELDS if f not in given]
            if missing:
                raise _core.ArgumentError(f"{name}: missing {', '.join(missing)} (give all of "
                                          f"{', '.join(self._FIELDS)}, or none)")
            values = [given[f] for f in self._FIELDS]
        for field, value in zip(self._FIELDS, values):
            setattr(self, field, value)

    def __setattr__(self, field, value):
        if field not in self._FIELDS:
            raise AttributeError(f"{type(self).__name__} has no field {field!r}")
        object.__setattr__(self, field, int_arg(value, type(self).__name__, field))

    def values(self) -> list:
        return [getattr(self, f) for f in self._FIELDS]

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.values() == self.values()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.values()})"


class TileL1Info(_TileInfo):
    """`pypto_impl.TileL1Info(tileHin, tileHout, tileWin, tileWout, tileCinFmap, tileCinWeight, tileN,
    tileBatch)`: conv's L1 tile (docs/ops/conv.md#tiles); tileN counts output channels."""
    _FIELDS = ("tileHin", "tileHout", "tileWin", "tileWout", "tileCinFmap", "tileCinWeight", "tileN", "tileBatch")


class TileL0Info(_TileInfo):
    """`pypto_impl.TileL0Info(tileH, tileW, tileK, tileN)`: conv's L0 tile (docs/ops/conv.md#tiles)."""
    _FIELDS = ("tileH", "tileW", "tileK", "tileN")


class ConvTile:
    """`pypto.ConvTile(tile_l1_info, tile_l0_info, set_l0_tile=False)`: a conv tile as one value
    (set_options(conv_tile_shapes=...)); PyPTO's names tileL1Info / tileL0Info / setL0Tile also read."""

    def __init__(self, tile_l1_info, tile_l0_info=None, set_l0_tile: bool = False):
        _tile_info(tile_l1_info, TileL1Info, "tile_l1_info")
        if tile_l0_info is not None:
            _tile_info(tile_l0_info, TileL0Info, "tile_l0_info")
        self.tile_l1_info = tile_l1_info
        self.tile_l0_info = tile_l0_info if tile_l0_info is not None else TileL0Info()
        self.set_l0_tile = bool(set_l0_tile)

    tileL1Info = property(lambda self: self.tile_l1_info)  # noqa: N815 — PyPTO's names
    tileL0Info = property(lambda self: self.tile_l0_info)  # noqa: N815
    setL0Tile = property(lambda self: self.set_l0_tile)  # noqa: N815

    def __repr__(self) -> str:
        return f"ConvTile({self.tile_l1_info!r}, {self.tile_l0_info!r}, {self.set_l0_tile})"


def _tile_info(value, cls, param: str) -> None:
    if not isinstance(value, cls):
        raise _core.DTypeError(f"set_conv_tile_shapes: {param} must be a pypto_impl.{cls.__name__}, "
                               f"got {type(value).__name__}")


def set_conv_tile_shapes(tile_l1_info, tile_l0_info=None) -> None:
    """`pypto.set_conv_tile_shapes(tile_l1_info, tile_l0_info=None)`: the conv tile for this thread
    (docs/ops/conv.md#tiles). Without tile_l0_info the L0 rules are not checked (PyPTO's
    setL0Tile False). Each conv checks the values against its operands and the platform."""
    _tile_info(tile_l1_info, TileL1Info, "tile_l1_info")
    if tile_l0_info is not None:
        _tile_info(tile_l0_info, TileL0Info, "tile_l0_info")
    _core._set_conv_tile_shapes(tile_l1_info.values(), tile_l0_info.values() if tile_l0_info is not None else [])


def get_conv_tile_shapes() -> tuple:
    """`pypto.get_conv_tile_shapes()`: (TileL1Info, TileL0Info, set_l0_tile) as last set (all 0
    and False before; a TileL0Info of 0s when none was given)."""
    l1, l0, set_l0 = _core._get_conv_tile_shapes()
    return (TileL1Info(*l1) if l1 else TileL1Info(), TileL0Info(*l0) if l0 else TileL0Info(), set_l0)


# --- pass configs -----------------------------------------------------------------------------

class PassConfigKey(enum.Enum):
    """A pass's debug switch (PyPTO's pass configs; no passes run on the CPU)."""
    KEY_DUMP_GRAPH = "dumpGraph"


class PassConfigs:
    """get_pass_configs(strategy, pass): every switch of one pass (read-only)."""

    # PyPTO's defaults for every pass
    _FIELDS = {"printGraph": False, "dumpGraph": False, "dumpPassTimeCost": True, "preCheck": False,
               "postCheck": False, "disablePass": False, "healthCheck": False}

    def __init__(self, values: dict):
        for field, default in self._FIELDS.items():
            object.__setattr__(self, field, values.get(field, default))

    def __setattr__(self, name, value):
        raise AttributeError("PassConfigs is read-only")

    def __repr__(self) -> str:
        return f"PassConfigs({', '.join(f'{f}={getattr(self, f)}' for f in self._FIELDS)})"


_pass_defaults: dict = {}
_pass_configs: dict = {}


def _pass_args(function: str, key, value, *names: str) -> None:
    """PyPTO reports bad pass-config arguments as PassError."""
    from ..error import PassError
    for param, name in zip(("strategy", "identifier"), names):
        _name(function, param, name)
    if not isinstance(value, bool):
        raise as_fe_error(_core.DTypeError(f"{function}: Expected boolean type, but received {type(value).__name__}"),
                          PassError)
    if not isinstance(key, PassConfigKey):
        raise as_fe_error(_core.ArgumentError(f"{function}: key must be a member of PassConfigKey, got {key!r}"),
                          PassError)


def get_pass_default_config(key: PassConfigKey, default_value: bool) -> bool:
    """`pypto.get_pass_default_config(key, default)`: the switch's default for every pass
    (default_value is for switches without one; every PassConfigKey has one)."""
    _pass_args("get_pass_default_config", key, default_value)
    return _pass_defaults.get(key, PassConfigs._FIELDS.get(key.value, default_value))


def set_pass_default_config(key: PassConfigKey, value: bool) -> None:
    """`pypto.set_pass_default_config(key, value)`: the switch's default for every pass (kept;
    no passes run on the CPU)."""
    _pass_args("set_pass_default_config", key, value)
    _pass_defaults[key] = value


def get_pass_config(strategy: str, identifier: str, key: PassConfigKey, default_value: bool) -> bool:
    """`pypto.get_pass_config(strategy, pass, key, default)`: one pass's switch."""
    _pass_args("get_pass_config", key, default_value, strategy, identifier)
    if (strategy, identifier, key) in _pass_configs:
        return _pass_configs[(strategy, identifier, key)]
    return get_pass_default_config(key, default_value)


def set_pass_config(strategy: str, identifier: str, key: PassConfigKey, value: bool) -> None:
    """`pypto.set_pass_config(strategy, pass, key, value)`: one pass's switch (kept; no passes run
    on the CPU)."""
    _pass_args("set_pass_config", key, value, strategy, identifier)
    _pass_configs[(strategy, identifier, key)] = value


def get_pass_configs(strategy: str, identifier: str) -> PassConfigs:
    """`pypto.get_pass_configs(strategy, pass)`: all switches of one pass."""
    _name("get_pass_configs", "strategy", strategy)
    _name("get_pass_configs", "identifier", identifier)
    values = {key.value: v for key, v in _pass_defaults.items()}
    values.update({key.value: v for (s, i, key), v in _pass_configs.items() if (s, i) == (strategy, identifier)})
    return PassConfigs(values)


@on_reset
def _forget() -> None:
    _core._reset_cube_tile_shapes()
    _core._reset_conv_tile_shapes()
    _core._set_matrix_size([])
    _pass_defaults.clear()
    _pass_configs.clear()
