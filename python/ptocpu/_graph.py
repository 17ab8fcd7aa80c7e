"""PyPTO's graph style on the CPU (see docs/running_pypto_programs.md).

    x = pypto.tensor(shape, dtype, "x"); y = pypto.tensor(shape, dtype, "y")
    with pypto.function("MAIN", x, y):      # records the body
        ...ops on x, y, views of them, loops...
    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(tx), pypto.from_torch(ty))

Recording runs the body once on the declared (zero-filled) tensors, so every check fires at
record time as PyPTO's do, and keeps the list of tensor operations it made, each with the Python
objects it read and returned. A run rebinds the declared tensors to the caller's data (zero-copy)
and replays that list in order: each operation runs again on what its argument objects hold now
and its result objects are rebound to the new results. Loops and scalars were fixed at record
time (they are Python). Tensors the body creates start zero-filled again on every run. Declared
tensors that the body rebound with `move` have their final value copied back into the caller's
tensor.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, List, Optional

from . import _core, golden, trace
from ._convert import asarray
from .error import FeError, as_fe_error

__all__ = ["function", "from_torch", "run_program", "last_program", "recorded"]


class _State(threading.local):
    def __init__(self):
        self.recording: Optional["Program"] = None
        self.replaying: Optional["Program"] = None
        self.last: Optional["Program"] = None
        self.jit_depth = 0


def in_kernel() -> bool:
    """True while a pypto.function records or replays, or a jit kernel runs (this thread)."""
    return _state.recording is not None or _state.replaying is not None or _state.jit_depth > 0


class jit_call:  # noqa: N801
    """`with jit_call():` around a jit kernel's body marks the thread as inside a kernel."""

    def __enter__(self):
        _state.jit_depth += 1

    def __exit__(self, *exc) -> bool:
        _state.jit_depth -= 1
        return False


_state = _State()


def _freeze(value: Any) -> Any:
    """An argument as recorded: containers copied (a later mutation must not change the
    recording), tensors and scalars kept as the objects they are."""
    if isinstance(value, list):
        return [_freeze(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return {k: _freeze(v) for k, v in value.items()}
    return value


def _rebind(old: Any, new: Any) -> None:
    if isinstance(old, _core.Tensor) and isinstance(new, _core.Tensor):
        if old is not new:
            old._rebind(new)
    elif isinstance(old, (tuple, list)) and isinstance(new, (tuple, list)):
        for o, n in zip(old, new):
            _rebind(o, n)


class Program:
    """One recorded `pypto.function`: its declared tensors and operations."""

    def __init__(self, name: str, tensors: List[_core.Tensor]):
        self.name = name
        self.tensors = tensors
        self.operations: list = []
        self.moved: set = set()

    def record(self, fn: Callable, args: tuple, kwargs: dict, result: Any) -> None:
        self.operations.append((fn, _freeze(args), _freeze(kwargs), result))

    def run(self, data: List[_core.Tensor]) -> None:
        if len(data) != len(self.tensors):
            raise FeError(ValueError(f"function {self.name!r} declares {len(self.tensors)} tensors but the run "
                                     f"got {len(data)}"))
        data = list(data)
        for i, (declared, given) in enumerate(zip(self.tensors, data)):
            if not isinstance(given, _core.Tensor):
                raise FeError(TypeError(f"function {self.name!r} argument {i} must be a tensor (pypto.from_torch), "
                                        f"got {type(given).__name__}"))
            if (declared.ndim and declared.dtype == given.dtype and tuple(declared._shape) != tuple(given._shape)
                    and declared.numel == given.numel and given.is_contiguous()):
                # The device reads a bound tensor as memory: the same elements in another shape
                # (e.g. a flat output buffer) are that memory in the declared shape.
                given = data[i] = asarray(given.numpy().reshape(tuple(declared._shape)), copy=False)
            if declared.dtype != given.dtype or (declared.ndim and tuple(declared._shape) != tuple(given._shape)):
                raise FeError(ValueError(
                    f"function {self.name!r} argument {i} ({getattr(declared, 'name', '')!r}) was declared "
                    f"{list(declared._shape)} {declared.dtype.name} but the run got {list(given._shape)} "
                    f"{given.dtype.name}"))
        for declared, given in zip(self.tensors, data):
            declared._rebind(given)
        self.moved = set()
        _state.replaying = self
        try:
            with trace.kernel_call(self.name, "function"):  # a track per run while tracing (docs/tracing.md)
                for fn, args, kwargs, result in self.operations:
                    _rebind(result, trace.replay_op(fn, args, kwargs))
        except Exception as e:
            raise as_fe_error(e) from None
        finally:
            _state.replaying = None
        for declared, given in zip(self.tensors, data):
            if id(declared) in self.moved:  # the whole moved value, padding included, as PyPTO's move
                whole = declared._whole
                _core.assemble(whole if whole._shape == given._shape else declared, [0] * declared.ndim, given)
        if golden.wanted(None):  # set_verify_options(enable_pass_verify=True) + set_verify_golden_data
            golden.check(f"function {self.name}",
                         [(getattr(t, "name", "") or f"tensor {i}", t) for i, t in enumerate(data)],
                         golden.take_goldens()[1])


def note_move(tensor: _core.Tensor) -> None:
    """Tensor.move calls this: a declared tensor moved during a run is copied back at its end."""
    if _state.replaying is not None:
        _state.replaying.moved.add(id(tensor))


def _zeros_like(shape, dtype) -> _core.Tensor:
    return _core.Tensor(list(shape), dtype)


def tensor_created(tensor: _core.Tensor, shape: tuple, dtype: _core.DType) -> None:
    """Tensor(shape, dtype, ...) calls this: inside a recording function, the new tensor is
    recorded so that every run starts it zero-filled again."""
    program = _state.recording
    if program is not None:
        program.record(_zeros_like, (shape, dtype), {}, tensor)


def recorded(fn: Callable) -> Callable:
    """fn as an operation that a recording `pypto.function` keeps; errors inside a function
    are FeErrors too."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        program = _state.recording
        if program is None:
            return fn(*args, **kwargs)
        try:
            result = fn(*args, **kwargs)
        except Exception as e:
            raise as_fe_error(e) from None
        program.record(fn, args, kwargs, result)
        return result
    call.__wrapped_op__ = fn
    return call


def _flatten(items) -> List[_core.Tensor]:
    out: List[_core.Tensor] = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(_flatten(item))
        elif isinstance(item, _core.Tensor):
            out.append(item)
    return out


# The operators a recording function keeps: while it records, these names of the ptocpu module
# (and the matching Tensor methods) are recording wrappers; otherwise they are what they were (the
# core's functions), so calls outside functions pay nothing. Names the build lacks are skipped.
RECORDED_OPS = ("view", "assemble", "index_select", "interleave", "deinterleave", "scatter_", "scatter",
                "strided_slice", "strided_slice_view", "gather", "scatter_update", "index_add_", "index_add",
                "gathermask")
RECORDED_METHODS = ("scatter_", "scatter", "scatter_update", "index_add_", "index_add", "astype", "contiguous")


def _install_recording() -> list:
    """Swaps the operators (module functions and Tensor methods) for recording wrappers around
    whatever is installed now (the core's functions, or a trace's wrappers); returns what it
    replaced, for _uninstall_recording."""
    import ptocpu
    saved = []
    targets = [(ptocpu, name) for name in RECORDED_OPS] + [(_core.Tensor, name) for name in RECORDED_METHODS]
    for owner, name in targets:
        current = vars(owner).get(name)
        if current is not None:
            saved.append((owner, name, current))
            setattr(owner, name, recorded(current))
    return saved


def _uninstall_recording(saved: list) -> None:
    for owner, name, original in reversed(saved):
        setattr(owner, name, original)


_always_recording = False


def record_always() -> None:
    """Installs the recording wrappers for the rest of the process (`ptocpu run` / `ptocpu test`
    do): then even an operator bound to another name before a function, as `from pypto import
    view` does, is recorded. Elsewhere they are installed only while a function records."""
    global _always_recording
    if not _always_recording:
        _install_recording()
        _always_recording = True


class function:  # noqa: N801 — PyPTO's name
    """`with pypto.function(name, *tensors):` records the body as a program over the declared
    tensors (lists of tensors are flattened); `runtime._device_run_once_data_from_host` runs it."""

    def __init__(self, name: str, *tensors):
        self.name = name
        self.program = Program(name, _flatten(tensors))

    def __enter__(self) -> "Program":
        if _state.recording is not None:
            raise FeError(RuntimeError(f"pypto.function {self.name!r} inside pypto.function "
                                       f"{_state.recording.name!r}: functions do not nest"))
        _state.recording = self.program
        _core._count_recording(1)
        self._saved = [] if _always_recording else _install_recording()
        return self.program

    def __exit__(self, exc_type, exc, tb) -> bool:
        _state.recording = None
        _core._count_recording(-1)
        _uninstall_recording(self._saved)
        if exc is None:
            _state.last = self.program
            return False
        raise as_fe_error(exc) from None


def last_program() -> Program:
    if _state.last is None:
        raise FeError(RuntimeError("no pypto.function has been recorded yet"))
    return _state.last


def run_program(*tensors) -> None:
    last_program().run(_flatten(tensors))


def from_torch(tensor, name: str = "", dynamic_axis=None, tensor_format=None, dtype=None) -> _core.Tensor:
    """`pypto.from_torch(t, name)`: a ptocpu tensor over the torch tensor's memory (no copy), so a
    program's writes land in `t`."""
    from ._convert import asarray
    if type(tensor).__module__.split(".")[0] != "torch" or not hasattr(tensor, "is_contiguous"):
        # PyPTO's FeError(TypeError) for a wrong type is ptocpu's DTypeError (docs/errors.md)
        raise _core.DTypeError(f"from_torch: input type {type(tensor).__name__} is not supported; "
                               f"pass a torch.Tensor")
    if not tensor.is_contiguous():
        raise FeError(RuntimeError("from_torch: the tensor is not contiguous"))
    if getattr(tensor, "requires_grad", False):
        tensor = tensor.detach()
    t = asarray(tensor, copy=False)
    if dtype is not None and dtype != t.dtype:
        t = _core.view(t, dtype=dtype)
    t.name = name
    if tensor_format is not None:
        t.format = tensor_format
    return t
