"""PyPTO's kernel front end on the CPU (docs/kernel_model.md): `@pypto.frontend.jit` kernels run eagerly.

There is no compilation: calling a jit kernel runs its Python body once, on ptocpu tensors that
share memory with the caller's arrays, so `pypto.assemble(..., out)`, `out[:] = ...` and
`out.move(...)` write into the arrays the caller passed. The operators' checks live in the C++
core; what PyPTO's front end refuses in a kernel's source is refused first (lang/kernel_source.py).
"""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Optional

import numpy as np

from . import _core
from .engine import compile as _compile
from .engine import config, debug
from .engine.golden import is_array as _is_array
from .error import as_fe_error
from .lang.enums import NamedIntEnum
from .lang.kernel_source import refusal
from .lang.options import section_values

__all__ = ["jit", "function", "RunMode", "JIT_OPTIONS"]

# The keywords PyPTO's frontend.jit takes, kept on the kernel as `.options`. The option dicts
# configure PyPTO's compiler and runtime: at each call they open the kernel's option scope
# (engine/config.py checks them there); only docs/tracing.md's switches change what runs.
_DICT_OPTIONS = ("host_options", "codegen_options", "pass_options", "runtime_options", "verify_options",
                 "debug_options")
_BOOL_OPTIONS = ("new_ir", "create_new_logical_tensor")
JIT_OPTIONS = _DICT_OPTIONS + _BOOL_OPTIONS


class RunMode(NamedIntEnum):
    """PyPTO's `runtime_options={"run_mode": ...}` values: NPU runs on the device, SIM in PyPTO's
    CPU simulator; on ptocpu both run the kernel eagerly on the CPU, with the chip's checks."""
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


def _to_tensor(kernel: str, param: str, obj) -> _core.Tensor:
    if type(obj).__module__.startswith("torch") and hasattr(obj, "is_contiguous") and not obj.is_contiguous():
        # PyPTO's runtime takes torch tensors as they lie in memory: contiguous ones only
        raise as_fe_error(_core.ArgumentError(
            f"jit: kernel {kernel} argument {param!r}: not all tensors are contiguous (a torch tensor of shape "
            f"{list(obj.shape)} with strides {list(obj.stride())}); pass .contiguous()"))
    # A kernel may write any array argument, so an array must be the caller's memory (no copy);
    # a list given for a tensor parameter can only be an input. A torch tensor that requires grad
    # comes in read-only: writing it would bypass autograd (ArgumentError, docs/tensors.md).
    requires_grad = getattr(obj, "requires_grad", False) is True
    return _core.asarray(obj, copy=False if _is_array(obj) and not requires_grad else None)


def _is_tensor_annotation(annotation) -> bool:
    return annotation is _core.Tensor or isinstance(annotation, _core.Tensor)


_UNCHECKED = object()


def _pypto_options(options: Optional[dict]) -> Optional[dict]:
    """A kernel's options without ptocpu's own keys (debug_options' "eager")."""
    return {k: v for k, v in options.items() if k != "eager"} if options else options


def _address(t: _core.Tensor) -> int:
    return t._address if t.numel else 0


def _write_back_moved(tensors: list) -> None:
    """`out.move(value)` in a kernel rebinds out; as on the device, value lands in the argument's
    memory (`kept`, a second handle on it), padding included when value has out's shape."""
    for argument, kept in tensors:
        if _address(argument) != _address(kept):
            whole = argument._whole
            _core.assemble(whole if whole.shape == kept.shape else argument, [0] * argument.ndim, kept)


class _Kernel:
    """A jit kernel: the signature (annotations resolved on the first call) and the options."""

    def __init__(self, func: Callable, options: dict, scope: Optional[dict] = None):
        self.func = func
        self.options = options
        self._refusal: Any = _UNCHECKED
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
            value = _to_tensor(self.name, param.name, value)
        if tensor_param:
            annotation = param.annotation if isinstance(param.annotation, _core.Tensor) else None
            _core._check_kernel_argument(self.name, param.name, value, annotation)
        return value

    def refusal(self) -> Optional[BaseException]:
        """What PyPTO's parser refuses in this kernel's source (found once), or None."""
        if self._refusal is _UNCHECKED:
            self._refusal = refusal(self.func, self.signature(), self.name, bool(self.options.get("new_ir", True)),
                                    _is_tensor_annotation)
        return self._refusal

    def __call__(self, *args, **kwargs):
        # Tile shapes, platform and options set inside the kernel end with the call.
        tile, platform, cube = _core.get_vec_tile_shapes(), _core.get_platform(), _core._get_cube_tile_shapes()
        scoped = False
        try:
            try:
                bound = self.signature().bind(*args, **kwargs)
            except TypeError as e:  # a missing or surplus argument: PyPTO's FeError
                raise _core.ArgumentError(f"jit: kernel {self.name}: {e}") from None
            for name, value in bound.arguments.items():  # the arguments first, as PyPTO's runtime
                bound.arguments[name] = self.convert(self.signature().parameters[name], value)
            refusal = self.refusal()
            if refusal is not None:
                raise refusal
            config.push(self.name, section_values({kind[:-len("_options")]: _pypto_options(self.options.get(kind))
                                                   for kind in _DICT_OPTIONS}))
            scoped = True
            tensors = [(t, t._whole) for t in bound.arguments.values()
                       if isinstance(t, _core.Tensor) and not _core._is_placeholder(t)]
            eager = _compile.eager_forced(self.options.get("debug_options"))
            key = None if eager else _compile.signature(list(bound.arguments.values()))
            _core._enter_kernel()
            try:
                result = self.compiled.call(key, [t for t, _ in tensors], lambda: self.func(*bound.args, **bound.kwargs),
                                            lambda: [t if _address(t) != _address(kept) else None for t, kept in tensors])
            finally:
                _core._exit_kernel()
            _write_back_moved(tensors)  # (a compiled run writes moved values itself: nothing moved here)
            return result
        except _core.Error as e:  # a failed check of a kernel is also a pypto.error.FeError
            raise as_fe_error(e) from None
        finally:
            if scoped:
                config.pop()
            _core.set_platform(platform)
            _core._restore_cube_tile_shapes(cube)
            if tile:
                _core.set_vec_tile_shapes(*tile)
            else:
                _core.reset_vec_tile_shapes()


def jit(func: Optional[Callable] = None, /, **options):
    """`@pypto.frontend.jit`, `@pypto.frontend.jit()` or `@pypto.frontend.jit(debug_options={...})`.

    The kernel `def k(a: pypto.Tensor(...), ..., n)` is called with numpy arrays, torch CPU
    tensors or ptocpu tensors; each array argument reaches the body as a zero-copy ptocpu tensor,
    other arguments as they are. A `pypto.Tensor(shape, dtype)` annotation is checked
    (ArgumentError / DTypeError naming the parameter); `pypto.Tensor()` only says "a tensor".
    Options: host_options, codegen_options, pass_options, runtime_options, verify_options,
    debug_options (the kernel's option scope), new_ir (which PyPTO front end's rules the source
    follows, docs/kernel_model.md#what-a-kernel-may-contain), create_new_logical_tensor; any
    other keyword is a TypeError. The body runs eagerly and writes its results into its tensor
    arguments.
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
