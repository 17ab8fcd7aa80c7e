"""PyPTO's option store (docs/running_pypto_programs.md#options): every option PyPTO's compiler
and runtime take, with its type, default and range, in scopes.

Scopes, as in PyPTO: the root holds the defaults (and what `pypto_impl.SetGlobalConfig` puts
there, which reset_options keeps); above it one scope the set_*_options functions write into,
and one more for each open `pypto.options(...)` block or running jit kernel with options. A
value is looked up from the innermost scope out. Values are checked as PyPTO checks them, with
its messages (its tests match them): a value of the wrong type is a DTypeError, an unknown key or
a value out of range an ArgumentError, each also a pypto.error.FeError.

On the CPU these options configure nothing, except the ones docs/tracing.md names
(debug.runtime_debug_mode, verify.*), which engine/debug.py and engine/golden.py read here.
"""
from __future__ import annotations

import enum
from typing import Any, NamedTuple, Optional

from .. import _core
from .dispatch import on_reset

__all__ = ["Option", "SCHEMA", "value", "section", "explicit", "checked", "set_values", "push", "pop", "reset",
           "set_root", "global_value", "set_global", "forget_global", "external_error"]

INT_MAX = 2**31 - 1


class Option(NamedTuple):
    type: str  # "int", "bool", "str", "list[str]", "list[int]", "list[float]" or "intmap"
    default: Any
    range: Optional[tuple] = None  # (low, high); for an intmap ((key low, key high), (value low, value high))


SCHEMA = {
    "pass.pg_parallel_lower_bound": Option("int", 20, (0, INT_MAX)),
    "pass.pg_lower_bound": Option("int", 512, (0, INT_MAX)),
    "pass.pg_partition_algorithm": Option("str", "Iso"),
    "pass.mg_copyin_upper_bound": Option("int", 104857600, (0, INT_MAX)),
    "pass.mg_vec_parallel_lb": Option("int", 48, (1, 48)),
    "pass.copyout_resolve_coalescing": Option("int", 0, (0, 1000000)),
    "pass.auto_mix_partition": Option("int", 0, (0, 1)),
    "pass.sg_set_tunevf_mode": Option("int", 0, (0, 2)),
    "pass.enable_slice": Option("bool", False),
    "pass.sg_set_scope": Option("list[int]", [-1, 0, 0]),
    "pass.sg_set_ooo_scope": Option("list[int]", [-1]),
    "pass.ooo_sched_mode": Option("str", ""),
    "pass.ooo_sort_mode_aic": Option("str", ""),
    "pass.ooo_sort_mode_aiv": Option("str", ""),
    "pass.cube_l1_reuse_setting": Option("intmap", {}, ((-1, INT_MAX), (0, INT_MAX))),
    "pass.cube_nbuffer_setting": Option("intmap", {-1: 1}, ((-1, INT_MAX), (1, INT_MAX))),
    "pass.vec_nbuffer_setting": Option("intmap", {}, ((-2, INT_MAX), (0, INT_MAX))),
    "runtime.device_sched_mode": Option("int", 0, (0, 3)),
    "runtime.run_mode": Option("int", 0, (0, 1)),
    "runtime.stitch_function_max_num": Option("int", 128, (1, 1024)),
    "runtime.max_workspace_kb": Option("int", 0, (0, INT_MAX)),
    "runtime.valid_shape_optimize": Option("int", 0, (0, 1)),
    "runtime.ready_on_host_tensors": Option("list[str]", []),
    "runtime.device_sched_parallelism": Option("int", 1, (1, 8)),
    "runtime.launch_sched_aicpu_num": Option("int", 7, (1, 7)),
    "runtime.launch_early_mode": Option("int", 0, (0, 2)),
    "host.compile_stage": Option("int", 0, (0, 5)),
    "host.compile_monitor_enable": Option("int", 1, (0, 2)),
    "host.compile_timeout": Option("int", 600, (0, INT_MAX)),
    "host.compile_timeout_stage": Option("int", 0, (0, INT_MAX)),
    "host.compile_monitor_print_interval": Option("int", 60, (0, INT_MAX)),
    "codegen.support_dynamic_aligned": Option("bool", False),
    "codegen.soc_version": Option("str", ""),
    "codegen.enable_pmu_trace": Option("bool", False),
    "codegen.vf_options": Option("str", ""),
    "verify.enable_pass_verify": Option("bool", False),
    "verify.pass_verify_save_tensor": Option("bool", False),
    "verify.pass_verify_save_tensor_dir": Option("str", ""),
    "verify.pass_verify_pass_filter": Option("list[str]", ["ExpandFunction", "ProcessAtomic", "L1CopyInReuseMerge",
                                                           "InferDynShape", "PreGraphProcess", "InferParamIndex",
                                                           "CodegenPreproc"]),
    "verify.pass_verify_error_tol": Option("list[float]", [0.001, 0.001]),
    "debug.compile_debug_mode": Option("int", 0, (0, 2)),
    "debug.runtime_debug_mode": Option("int", 0, (0, 4)),
    "debug.dump_pass_graph": Option("list[str]", []),
    "operation.combine_axis": Option("bool", True),
    "print.edgeitems": Option("int", 3),
    "print.precision": Option("int", 4),
    "print.threshold": Option("int", 1000),
    "print.linewidth": Option("int", 80),
}

# pypto.get_global_config(key) for keys nobody set (PyPTO's defaults of the ones programs read).
GLOBAL_DEFAULTS = {
    "platform.enable_cost_model": False,
    "platform.enable_dyn_cost_model": False,
    "platform.device_platform": "ASCEND_910B2",
    "host.strategy": "PVC2_OOO",
    "simulation.accuracy_level": 1,
    "simulation.log_level": 3,
    "codegen.parallel_compile": 128,
    "codegen.support_dynamic_aligned": False,
    "pass.enable_pass_configs": True,
    "pass.pass_thread_num": 1,
}

_TYPE_NAMES = {"int": "int64", "bool": "bool", "str": "string", "float": "double", "list[str]": "list[string]",
               "list[int]": "list[int64]", "list[float]": "list[double]", "intmap": "dict[int64, int64]"}


class ExternalError(enum.IntEnum):
    """PyPTO's error categories (pypto_impl.ExternalError); an error code is 0xF00000 | category."""
    INVALID_TYPE = 0x1
    INVALID_VAL = 0x2
    RUNTIME_ERROR = 0x3
    NAME_ERROR = 0x4
    NOT_IMPLEMENTED_ERROR = 0x5
    KEY_ERROR = 0x6
    INVALID_OPERATION = 0x7
    OUT_OF_RANGE = 0x8
    BAD_FD = 0x9
    DYNAMIC_SHAPE_COMPUTE_UNSUPPORTED = 0xA
    COMMON_EXTERNAL_ERROR = 0xFFFF
    UNKNOWN = 0xFFFF  # the same member as COMMON_EXTERNAL_ERROR


def external_error(cls: type, category: ExternalError, text: str) -> BaseException:
    """A ptocpu error (cls) that is also a pypto.error.FeError, its message led as PyPTO's failed
    checks are ("CHECK FAILED: ErrCode: F00001! Enum: ExternalError::INVALID_TYPE")."""
    from ..error import as_fe_error
    code = 0xF00000 | category
    return as_fe_error(cls(f"CHECK FAILED: ErrCode: {code:X}! Enum: ExternalError::{category.name}\n{text}"))


def _type_name(obj: Any) -> str:
    """The type of a Python value as PyPTO names it in option errors."""
    if isinstance(obj, bool):
        return "bool"
    if isinstance(obj, int):
        return "int64"
    if isinstance(obj, float):
        return "double"
    if isinstance(obj, str):
        return "string"
    if isinstance(obj, (list, tuple)):
        kinds = {_type_name(v) for v in obj}
        return f"list[{kinds.pop()}]" if len(kinds) == 1 else "list"
    if isinstance(obj, dict):
        keys, values = {_type_name(k) for k in obj}, {_type_name(v) for v in obj.values()}
        if len(keys) == 1 and len(values) == 1:
            return f"dict[{keys.pop()}, {values.pop()}]"
        return "dict"
    return type(obj).__name__


_ELEMENT = {"list[str]": str, "list[int]": int, "list[float]": (int, float)}


def _check(key: str, option: Option, obj: Any) -> Any:
    """obj as the option's value (lists copied, tuples as lists), or PyPTO's type / range error."""
    kind = option.type
    if kind in _ELEMENT and isinstance(obj, (list, tuple)):
        wanted = _ELEMENT[kind]
        bad = [i for i, v in enumerate(obj) if isinstance(v, bool) or not isinstance(v, wanted)]
        if bad and len(bad) < len(obj):
            i = bad[0]
            raise external_error(_core.DTypeError, ExternalError.INVALID_TYPE,
                                 f"Option '{key}' has invalid list element type at index {i}. Expected "
                                 f"{kind[5:-1]}, but got {type(obj[i]).__name__}")
        if not bad:
            return [float(v) if kind == "list[float]" else v for v in obj]
    elif kind == "intmap" and isinstance(obj, dict) and all(
            isinstance(k, (int, str)) and not isinstance(k, bool) and isinstance(v, int) and not isinstance(v, bool)
            for k, v in obj.items()):
        if option.range:
            (key_low, key_high), (value_low, value_high) = option.range
            if any(isinstance(k, int) and not key_low <= k <= key_high or not value_low <= v <= value_high
                   for k, v in obj.items()):
                _out_of_range(key, obj, f"{{[{key_low}, {key_high}], [{value_low}, {value_high}]}}")
        return dict(obj)
    elif kind in ("int", "bool", "str"):
        python_type = {"int": int, "bool": bool, "str": str}[kind]
        if isinstance(obj, python_type) and (kind == "bool" or not isinstance(obj, bool)):
            if option.range and not option.range[0] <= obj <= option.range[1]:
                _out_of_range(key, obj, f"[{option.range[0]}, {option.range[1]}]")
            return obj
    raise external_error(_core.DTypeError, ExternalError.INVALID_TYPE,
                         f"Option '{key}' has invalid type. Expected {_TYPE_NAMES[kind]}, but got {_type_name(obj)}")


def _out_of_range(key: str, obj: Any, allowed: str) -> None:
    raise external_error(_core.ArgumentError, ExternalError.INVALID_VAL,
                         f"Option '{key}' = {obj!r}: its value doesn't within the value range. Range: {allowed}")


class _Scope:
    def __init__(self, name: str, values: Optional[dict] = None):
        self.name = name
        self.values = dict(values or {})


_root: dict = {}  # the defaults PyPTO's SetGlobalConfig changed; reset_options keeps them
_global: dict = {}  # get_global_config / set_global_config (kept by reset, as _root)
_scopes: list = [_Scope("global")]


def value(key: str) -> Any:
    """The option's value: the innermost scope that set it, else the root, else the default."""
    for scope in reversed(_scopes):
        if key in scope.values:
            return scope.values[key]
    return _root.get(key, SCHEMA[key].default)


def section(prefix: str) -> dict:
    """Every option of a section ("pass", "host", ...) by its name in the section."""
    return {key[len(prefix) + 1:]: value(key) for key in SCHEMA if key.startswith(prefix + ".")}


def explicit(prefix: str) -> dict:
    """The options of a section that a scope set (defaults left out)."""
    found: dict = {}
    for scope in _scopes:
        found.update({k[len(prefix) + 1:]: v for k, v in scope.values.items() if k.startswith(prefix + ".")})
    return found


def checked(values: dict) -> dict:
    """values ("section.name" -> value) as the store keeps them, or PyPTO's type / range error."""
    out = {}
    for key, obj in values.items():
        if isinstance(obj, enum.Enum):
            obj = obj.value
        if key not in SCHEMA:
            raise external_error(_core.ArgumentError, ExternalError.INVALID_VAL, f"key: {key} does not exist.")
        out[key] = _check(key, SCHEMA[key], obj)
    return out


def set_values(values: dict) -> None:
    """Sets options ("section.name" -> value) in the innermost scope, all or none."""
    _scopes[-1].values.update(checked(values))


def push(name: str, values: dict) -> None:
    """Opens a scope (a pypto.options block, a jit kernel's options) with these options set."""
    _scopes.append(_Scope(name, checked(values)))


def pop() -> None:
    if len(_scopes) > 1:
        _scopes.pop()


def set_root(values: dict) -> None:
    """PyPTO's SetGlobalConfig: "section.name" keys change the defaults (reset_options keeps
    them), "global.x.y" keys the global config."""
    for key, obj in values.items():
        if key.startswith("global."):
            _global[key[len("global."):]] = obj
        else:
            _root.update(checked({key: obj}))


def global_value(key: str) -> Any:
    if key in _global:
        return _global[key]
    if key in GLOBAL_DEFAULTS:
        return GLOBAL_DEFAULTS[key]
    from ..error import as_fe_error
    raise as_fe_error(_core.ArgumentError(f"get_global_config: option not found: global.{key}"))


def set_global(key: str, obj: Any) -> None:
    _global[key] = obj


def forget_global(key: str) -> None:
    """The global setting back to its default (for tests that must leave no trace)."""
    _global.pop(key, None)


@on_reset
def reset() -> None:
    """Every scope closed and every set option forgotten; the root's defaults and the global
    config stay (PyPTO keeps both in its root scope, which reset_options does not touch)."""
    _scopes[:] = [_Scope("global")]
