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
from typing import Any, Callable, Hashable, Optional

import numpy as np

from . import _core
from .engine import compile as _compile
from .engine import config, debug, trace
from .engine.golden import is_array as _is_array
from .error import as_fe_error
from .lang.convert import fp4_argument
from .lang.enums import NamedIntEnum
from .lang.kernel_source import located, refusal
from .lang.options import section_values
from .lang.tensor_spec import check_argument as _check_annotation, declared_dtype, dynamic_dims_of

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
    if type(obj).__module__.startswith("torch"):
        # Reading a torch tensor's layout and taking its DLPack capsule are plain torch calls: no
        # torch function mode (`ptocpu test`'s npu-to-cpu mode among them) has a say in them, and
        # passing each call through a mode's Python costs more than the conversion.
        with sys.modules["torch"]._C.DisableTorchFunction():
            return _convert(kernel, param, obj, torch=True)
    return _convert(kernel, param, obj, torch=False)


def _convert(kernel: str, param: str, obj, torch: bool) -> _core.Tensor:
    if torch and hasattr(obj, "is_contiguous") and not obj.is_contiguous():
        # PyPTO's runtime takes torch tensors as they lie in memory: contiguous ones only
        raise as_fe_error(_core.ArgumentError(
            f"jit: kernel {kernel} argument {param!r}: not all tensors are contiguous (a torch tensor of shape "
            f"{list(obj.shape)} with strides {list(obj.stride())}); pass .contiguous()"))
    # A kernel may write any array argument, so an array must be the caller's memory (no copy);
    # a list given for a tensor parameter can only be an input. A torch tensor that requires grad
    # comes in read-only: writing it would bypass autograd (ArgumentError, docs/tensors.md).
    requires_grad = getattr(obj, "requires_grad", False) is True
    copy = False if _is_array(obj) and not requires_grad else None
    if torch:  # its memory is pinned only if the body runs (_Kernel.__call__)
        return _core._kernel_argument(obj, copy)
    return _core.asarray(obj, copy=copy)


def _is_tensor_annotation(annotation) -> bool:
    return annotation is _core.Tensor or isinstance(annotation, _core.Tensor)


def check_tensor_argument(where: str, position: int, value: Any, annotation) -> None:
    """A tensor parameter's argument: a tensor (DTypeError) that fits its annotation
    (lang/tensor_spec.py: the number of dims and fixed dims, ArgumentError; the dtype, DTypeError)."""
    if not isinstance(value, _core.Tensor):
        raise _core.DTypeError(f"{where} is annotated as a pypto.Tensor but got {type(value).__name__} {value!r}; "
                               f"pass a numpy array, a torch CPU tensor or a ptocpu.Tensor")
    if _core._is_placeholder(value):
        raise _core.DTypeError(f"{where} got a tensor without storage (an annotation or a declaration with dynamic "
                               f"dims), not data")
    _check_annotation(where, position, value, annotation)


_UNCHECKED = object()


def _pypto_options(options: Optional[dict]) -> Optional[dict]:
    """A kernel's options without ptocpu's own keys (debug_options' "eager")."""
    return {k: v for k, v in options.items() if k != "eager"} if options else options


def _evaluated_signature(func: Callable, scope: dict, what: str) -> inspect.Signature:
    """func's signature with string annotations (from __future__ import annotations) evaluated like
    PyPTO does: in the function's globals, its closure and the locals of the scope that decorated it."""
    sig = inspect.signature(func)
    if not any(isinstance(p.annotation, str) for p in sig.parameters.values()):
        return sig
    unwrapped = inspect.unwrap(func)
    names = dict(getattr(unwrapped, "__globals__", {}))
    names.update(scope)
    names.update(inspect.getclosurevars(unwrapped).nonlocals if inspect.isfunction(unwrapped) else {})

    def evaluate(param: inspect.Parameter) -> inspect.Parameter:
        if not isinstance(param.annotation, str):
            return param
        try:
            return param.replace(annotation=eval(param.annotation, names))  # noqa: S307 — the function's own source
        except Exception as e:  # noqa: BLE001
            if "Tensor" in param.annotation or "tensor" in param.annotation:
                raise NameError(f"{what} parameter {param.name!r}: cannot evaluate the annotation "
                                f"{param.annotation!r} ({e})") from e
            return param  # a non-tensor annotation that does not evaluate constrains nothing

    return sig.replace(parameters=[evaluate(p) for p in sig.parameters.values()])


def _address(t: _core.Tensor) -> int:
    return t._address if t.numel else 0


def _write_back_moved(tensors: list) -> None:
    """`out.move(value)` in a kernel rebinds out; as on the device, value lands in the argument's
    memory (`kept`, a second handle on it), padding included when value has out's shape."""
    for argument, kept in tensors:
        if _address(argument) != _address(kept):
            whole = argument._whole
            _core.assemble(whole if whole.shape == kept.shape else argument, [0] * argument.ndim, kept)


def _name_arguments(arguments: dict) -> list:
    """A tensor argument without a name of its own is named after its parameter for the call, as
    PyPTO names a kernel's input tensors (`a.name == "a"` in the body). Returns the tensors named."""
    named = []
    for name, value in arguments.items():
        if isinstance(value, _core.Tensor) and not value.name:
            value.name = name
            named.append(value)
    return named


def _mark_dynamic(arguments: dict, parameters) -> list:
    """Marks the tensors given for parameters annotated with dynamic dims (pypto.DYNAMIC, DYN, -1):
    as in PyPTO, where such a dim has no size while the kernel is built, operators refuse them as
    operands (views of them are static). Returns the tensors marked here, unmarked after the call."""
    marked = []
    for name, value in arguments.items():
        dims = dynamic_dims_of(parameters[name].annotation)
        if dims and isinstance(value, _core.Tensor) and not hasattr(value, "_dynamic_dims"):
            value._dynamic_dims = dims
            marked.append(value)
    return marked


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

    def signature(self) -> inspect.Signature:
        if self._signature is None:
            self._signature = _evaluated_signature(self.func, self._scope, f"jit: kernel {self.name}")
            tensors = [p.name for p in self._signature.parameters.values() if _is_tensor_annotation(p.annotation)]
            # each tensor parameter's place among them, from 1 (PyPTO's messages count those)
            self._positions = {name: i for i, name in enumerate(tensors, 1)}
        return self._signature

    def convert(self, param: inspect.Parameter, value: Any) -> Any:
        position = self._positions.get(param.name)
        if _is_array(value) or (position is not None and isinstance(value, (list, tuple))):
            value = _to_tensor(self.name, param.name, value)
        if position is not None:
            value = fp4_argument(value, declared_dtype(param.annotation))  # packed FP4 bytes, as PyPTO reads them
            check_tensor_argument(f"jit: kernel {self.name} parameter {param.name!r}", position, value,
                                  param.annotation)
        return value

    def _program(self, key: Optional[Hashable]) -> Optional[_core._Program]:
        """The program compiled for this signature, or None: the body runs."""
        if key is None or _core._tracing() or trace.active() is not None:
            return None  # (a trace recording keeps the tensors of each op it records)
        return self.compiled.programs.get(key)

    def refusal(self) -> Optional[BaseException]:
        """What PyPTO's parser refuses in this kernel's source (found once), or None."""
        if self._refusal is _UNCHECKED:
            self._refusal = refusal(self.func, self.signature(), self.name, bool(self.options.get("new_ir", True)),
                                    _is_tensor_annotation)
        return self._refusal

    def __call__(self, *args, **kwargs):
        # Tile shapes, platform and options set inside the kernel end with the call.
        tile, platform, cube = _core.get_vec_tile_shapes(), _core.get_platform(), _core._get_cube_tile_shapes()
        conv = _core._get_conv_tile_shapes()
        scoped = False
        marked: list = []
        named: list = []
        try:
            try:
                bound = self.signature().bind(*args, **kwargs)
            except TypeError as e:  # a missing or surplus argument: PyPTO's FeError
                raise _core.ArgumentError(f"jit: kernel {self.name}: {e}") from None
            for name, value in bound.arguments.items():  # the arguments first, as PyPTO's runtime
                bound.arguments[name] = self.convert(self.signature().parameters[name], value)
            eager = _compile.eager_forced(self.options.get("debug_options"))
            key = None if eager else _compile.signature(list(bound.arguments.values()))
            program = self._program(key)
            if program is not None:  # nothing of the body's own (its names, marks, option scope) is needed
                tensors = [t for t in bound.arguments.values()
                           if isinstance(t, _core.Tensor) and not _core._is_placeholder(t)]
                _core._enter_kernel()
                try:
                    return _compile.run(program, tensors)
                finally:
                    _core._exit_kernel()
            for t in bound.arguments.values():  # the body may keep them: torch memory under them stays put
                if isinstance(t, _core.Tensor):
                    _core._pin_torch_memory(t)
            marked = _mark_dynamic(bound.arguments, self.signature().parameters)
            named = _name_arguments(bound.arguments)
            refusal = self.refusal()
            if refusal is not None:
                raise refusal
            config.push(self.name, section_values({kind[:-len("_options")]: _pypto_options(self.options.get(kind))
                                                   for kind in _DICT_OPTIONS}))
            scoped = True
            tensors = [(t, t._whole) for t in bound.arguments.values()
                       if isinstance(t, _core.Tensor) and not _core._is_placeholder(t)]
            _core._enter_kernel()
            try:
                result = self.compiled.call(key, [t for t, _ in tensors], lambda: self.func(*bound.args, **bound.kwargs),
                                            lambda: [t if _address(t) != _address(kept) else None for t, kept in tensors])
            except Exception as e:
                parser_error = None if self.options.get("new_ir", True) else located(self.func, e)
                if parser_error is None:
                    raise
                raise parser_error from None
            finally:
                _core._exit_kernel()
            _write_back_moved(tensors)  # (a compiled run writes moved values itself: nothing moved here)
            return result
        except _core.Error as e:  # a failed check of a kernel is also a pypto.error.FeError
            raise as_fe_error(e) from None
        finally:
            for t in marked:
                vars(t).pop("_dynamic_dims", None)  # (a whole assignment in the body may have taken it)
            for t in named:
                del t.name
            if scoped:
                config.pop()
            _core.set_platform(platform)
            _core._restore_cube_tile_shapes(cube)
            _core._restore_conv_tile_shapes(conv)
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
    """`@pypto.frontend.function`: a helper that PyPTO inlines into kernels. It runs as the function
    itself; the tensors it is given for parameters annotated with a `pypto.Tensor(...)` are checked
    against the annotations as a kernel's are (PyPTO checks them when it inlines the call)."""
    if func is None:
        return function
    name = getattr(func, "__qualname__", getattr(func, "__name__", "function"))
    caller = sys._getframe(1)
    scope = dict(caller.f_locals) if caller.f_locals is not caller.f_globals else {}
    del caller
    resolved: list = []  # the signature, its annotations evaluated at the first call

    @functools.wraps(func)
    def checked(*args, **kwargs):
        if not resolved:
            signature = _evaluated_signature(func, scope, f"function {name}")
            resolved[:] = [signature, [n for n, p in signature.parameters.items() if _is_tensor_annotation(p.annotation)]]
        signature, tensor_params = resolved
        bound = signature.bind(*args, **kwargs)
        for position, param in enumerate(tensor_params, 1):
            value = bound.arguments.get(param)
            if isinstance(value, _core.Tensor):
                check_tensor_argument(f"function {name} parameter {param!r}", position, value,
                                      signature.parameters[param].annotation)
        return func(*args, **kwargs)

    return checked
