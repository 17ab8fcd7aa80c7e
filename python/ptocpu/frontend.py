"""PyPTO's kernel front end on the CPU (docs/kernel_model.md): `@pypto.frontend.jit` kernels run eagerly.

There is no compilation: calling a jit kernel runs its Python body once, on ptocpu tensors that
share memory with the caller's arrays, so `pypto.assemble(..., out)` and `out[:] = ...` write
into the arrays the caller passed. The checks themselves live in the C++ core.
"""
from __future__ import annotations

import enum
import functools
import inspect
import sys
from typing import Any, Callable, Optional

import numpy as np

from . import _core
from .engine import compile as _compile
from .engine import debug
from .engine.golden import is_array as _is_array
from .error import as_fe_error

__all__ = ["jit", "function", "RunMode", "JIT_OPTIONS"]

# The keywords PyPTO's frontend.jit takes. They configure the device compiler and runtime, so
# here they are accepted (and kept on the kernel as `.options`) but change nothing.
_DICT_OPTIONS = ("host_options", "codegen_options", "pass_options", "runtime_options", "verify_options",
                 "debug_options")
_BOOL_OPTIONS = ("new_ir", "create_new_logical_tensor")
JIT_OPTIONS = _DICT_OPTIONS + _BOOL_OPTIONS


class RunMode(enum.IntEnum):
    """PyPTO's `runtime_options={"run_mode": ...}` values (accepted; the CPU always runs eagerly)."""
    NPU = 0
    SIM = 1


def _check_options(options: dict) -> dict:
    for name, value in options.items():
        if name not in JIT_OPTIONS:
            raise TypeError(f"jit() got an unexpected keyword argument {name!r}; "
                            f"accepted: {', '.join(JIT_OPTIONS)}")
        if name in _DICT_OPTIONS and value is not None and not isinstance(value, dict):
            raise TypeError(f"jit(): {name} must be a dict or None, got {type(value).__name__}")
        if name in _BOOL_OPTIONS and not isinstance(value, (bool, int, np.bool_)):
            raise TypeError(f"jit(): {name} must be a bool, got {type(value).__name__}")
    return dict(options)


def _to_tensor(obj) -> _core.Tensor:
    if type(obj).__module__.startswith("torch") and getattr(obj, "requires_grad", False):
        obj = obj.detach()  # same memory; DLPack refuses tensors that require grad
    # A kernel may write any array argument, so an array must be the caller's memory (no copy);
    # a list given for a tensor parameter can only be an input.
    return _core.asarray(obj, copy=False if _is_array(obj) else None)


def _is_tensor_annotation(annotation) -> bool:
    return annotation is _core.Tensor or isinstance(annotation, _core.Tensor)


class _Kernel:
    """A jit kernel: the signature (annotations resolved on the first call) and the options."""

    def __init__(self, func: Callable, options: dict, scope: Optional[dict] = None):
        self.func = func
        self.options = options
        self.name = getattr(func, "__qualname__", getattr(func, "__name__", "kernel"))
        self._scope = scope or {}  # the decorating scope's locals, for string annotations
        self._signature: Optional[inspect.Signature] = None
        self.compiled = _compile.Kernels(self.name)  # docs/kernel_model.md#compiled-kernels

    def _evaluate(self, param: inspect.Parameter) -> inspect.Parameter:
        """A string annotation (from __future__ import annotations) evaluated like PyPTO does: in
        the kernel's globals, its closure and the locals of the scope that decorated it."""
        if not isinstance(param.annotation, str):
            return param
        func = inspect.unwrap(self.func)
        names = dict(getattr(func, "__globals__", {}))
        names.update(self._scope)
        names.update(inspect.getclosurevars(func).nonlocals if inspect.isfunction(func) else {})
        try:
            return param.replace(annotation=eval(param.annotation, names))  # noqa: S307 — the kernel's own source
        except Exception as e:  # noqa: BLE001
            if "Tensor" in param.annotation or "tensor" in param.annotation:
                raise NameError(f"jit: kernel {self.name} parameter {param.name!r}: cannot evaluate the annotation "
                                f"{param.annotation!r} ({e})") from e
            return param  # a non-tensor annotation that does not evaluate constrains nothing

    def signature(self) -> inspect.Signature:
        if self._signature is None:
            sig = inspect.signature(self.func)
            self._signature = sig.replace(parameters=[self._evaluate(p) for p in sig.parameters.values()])
        return self._signature

    def convert(self, param: inspect.Parameter, value: Any) -> Any:
        tensor_param = _is_tensor_annotation(param.annotation)
        if _is_array(value) or (tensor_param and isinstance(value, (list, tuple))):
            value = _to_tensor(value)
        if tensor_param:
            annotation = param.annotation if isinstance(param.annotation, _core.Tensor) else None
            _core._check_kernel_argument(self.name, param.name, value, annotation)
        return value

    def __call__(self, *args, **kwargs):
        # Tile shapes and platform set inside the kernel end with the call.
        tile, platform, cube = _core.get_vec_tile_shapes(), _core.get_platform(), _core._get_cube_tile_shapes()
        try:
            bound = self.signature().bind(*args, **kwargs)
            for name, value in bound.arguments.items():
                param = self.signature().parameters[name]
                if param.kind is inspect.Parameter.VAR_POSITIONAL:
                    bound.arguments[name] = tuple(self.convert(param, v) for v in value)
                elif param.kind is inspect.Parameter.VAR_KEYWORD:
                    bound.arguments[name] = {k: self.convert(param, v) for k, v in value.items()}
                else:
                    bound.arguments[name] = self.convert(param, value)
            values = [x for v in bound.arguments.values()
                      for x in (v if isinstance(v, tuple) else v.values() if isinstance(v, dict) else (v,))]
            eager = _compile.eager_forced(self.options.get("debug_options"))
            key = None if eager else _compile.signature(values)
            tensors = [v for v in values if isinstance(v, _core.Tensor)]
            _core._enter_kernel()
            try:
                return self.compiled.call(key, tensors, lambda: self.func(*bound.args, **bound.kwargs))
            finally:
                _core._exit_kernel()
        except _core.Error as e:  # a failed check of a kernel is also a pypto.error.FeError
            raise as_fe_error(e) from None
        finally:
            _core.set_platform(platform)
            _core._restore_cube_tile_shapes(cube)
            if tile:
                _core.set_vec_tile_shapes(*tile)
            else:
                _core.reset_vec_tile_shapes()


def jit(func: Optional[Callable] = None, /, **options):
    """`@pypto.frontend.jit`, `@pypto.frontend.jit()` or `@pypto.frontend.jit(debug_options={...})`.

    The kernel `def k(a: pypto.Tensor(...), ..., *scalars)` is called with numpy arrays, torch CPU
    tensors or ptocpu tensors; each array argument reaches the body as a zero-copy ptocpu tensor,
    other arguments as they are. A `pypto.Tensor(shape, dtype)` annotation is checked
    (ArgumentError / DTypeError naming the parameter); `pypto.Tensor()` only says "a tensor".
    Options: host_options, codegen_options, pass_options, runtime_options, verify_options,
    debug_options, new_ir, create_new_logical_tensor (accepted, no effect on the CPU); any other
    keyword is a TypeError. The body runs eagerly; the kernel's return value is returned.
    """
    options = _check_options(options)
    caller = sys._getframe(1)
    scope = dict(caller.f_locals) if caller.f_locals is not caller.f_globals else {}
    del caller

    def decorate(f: Callable) -> Callable:
        if not callable(f) or isinstance(f, type):
            raise TypeError(f"jit can only decorate functions, got {type(f).__name__}")
        kernel = _Kernel(f, options, scope)
        call = debug.kernel_runner(kernel)  # tracing and golden checks (docs/tracing.md)

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            return call(*args, **kwargs)

        wrapper.options = options
        wrapper.kernel = kernel
        return wrapper

    if func is None:
        return decorate
    return decorate(func)


def function(func: Optional[Callable] = None):
    """`@pypto.frontend.function`: a helper that PyPTO inlines into kernels; here it is the
    function itself."""
    if func is None:
        return lambda f: f
    return func
