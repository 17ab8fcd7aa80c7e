"""PyPTO's graph style on the CPU (docs/kernel_model.md#pypto-function).

    x = pypto.tensor(shape, dtype, "x"); y = pypto.tensor(shape, dtype, "y")
    with pypto.function("MAIN", x, y):      # records the body
        ...ops on x, y, views of them, loops...
    pypto.runtime._device_run_once_data_from_host(pypto.from_torch(tx), pypto.from_torch(ty))

Recording runs the body once on the declared (zero-filled) tensors, so every check fires at
record time as PyPTO's do, while a dispatch handler keeps each outermost op call: its op, the
Python objects it was given (argument tree and keywords), the platform and tile shapes it ran
under, and the objects it returned. A run binds the declared tensors to the caller's data
(zero-copy) and replays the calls in order: each op runs again on what its argument objects hold
now, under its recorded platform and tile shape, and its result objects are rebound to the new
results. Loops and scalars were fixed at record time (they are Python), unless the body read tensor
values into Python: then each run executes the body again on its data. Tensors the body creates
start zero-filled again on every run; declared tensors that the body rebound with `move` have
their final value copied back. After the run the declared tensors are the placeholders again: no
caller memory is kept.
"""
from __future__ import annotations

import ast
import contextlib
import linecache
import sys
import threading
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, List, Optional

from .. import _core
from ..lang.tensor_spec import is_dynamic_declaration
from . import compile as _compile
from . import golden, trace
from .dispatch import Handler, handling, on_reset

__all__ = ["Program", "function", "run_program", "last_program", "forget_programs"]


class _State(threading.local):
    def __init__(self):
        self.programs: List["Program"] = []  # recorded on this thread, the last one runs by default
        self.recording: Optional["Program"] = None


_state = _State()


@on_reset
def forget_programs() -> None:
    """The programs recorded on this thread are forgotten."""
    _state.programs.clear()


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


@dataclass
class _Call:
    op: str
    args: tuple
    kwargs: dict
    result: Any
    platform: str
    tile: tuple
    cube: tuple
    conv: tuple

    def describe(self) -> str:
        return f"{self.op} on {self.platform}" + (f", tile {list(self.tile)}" if self.tile else "")

    def replay(self, program: "Program") -> None:
        _core.set_platform(self.platform)
        _core._restore_cube_tile_shapes(self.cube)
        _core._restore_conv_tile_shapes(self.conv)
        if self.tile:
            _core.set_vec_tile_shapes(*self.tile)
        else:
            _core.reset_vec_tile_shapes()
        _rebind(self.result, _core._call(self.op, self.args, self.kwargs))


@dataclass
class _Create:
    tensor: _core.Tensor
    shape: tuple
    dtype: Any

    def describe(self) -> str:
        return f"tensor {list(self.shape)} {getattr(self.dtype, 'name', self.dtype)}"

    def replay(self, program: "Program") -> None:
        self.tensor._rebind(_core.Tensor(list(self.shape), self.dtype))


@dataclass
class _Move:
    tensor: _core.Tensor
    other: _core.Tensor

    def describe(self) -> str:
        return "move"

    def replay(self, program: "Program") -> None:
        self.tensor.move(self.other)
        program.moved.add(id(self.tensor))


@dataclass
class Program:
    """One recorded `pypto.function`: its declared tensors and the steps of its body."""
    name: str
    tensors: List[_core.Tensor]
    steps: list = field(default_factory=list)
    moved: set = field(default_factory=set)
    compiled: Optional[_core._Program] = None  # the body as a C++ program (docs/kernel_model.md#compiled-kernels)
    body: Optional["_Body"] = None  # over tensors with dynamic dims: the body, executed by each run

    def __iter__(self):
        """`with pypto.function(...) as f: for _ in f:` records the body once (PyPTO may record a
        body once per path through its dynamic branches; on the CPU one recording serves all)."""
        yield self

    def _bind(self, data: List[Any]) -> List[_core.Tensor]:
        if len(data) != len(self.tensors):
            raise _fe(ValueError(f"function {self.name!r} declares {len(self.tensors)} tensors but the run got "
                                 f"{len(data)}"))
        bound = []
        for i, (declared, given) in enumerate(zip(self.tensors, data)):
            if not isinstance(given, _core.Tensor):
                raise _fe(TypeError(f"function {self.name!r} argument {i} must be a tensor (pypto.from_torch), "
                                    f"got {type(given).__name__}"))
            if is_dynamic_declaration(declared):
                dims = declared._spec.dims  # None: a dynamic dim, any size
                if declared.dtype != given.dtype or given.ndim != len(dims) or any(
                        d is not None and d != n for d, n in zip(dims, given.shape)):
                    raise _fe(ValueError(
                        f"function {self.name!r} argument {i} ({getattr(declared, 'name', '')!r}) was declared "
                        f"{declared._spec.shown()} {declared.dtype.name} but the run got {list(given.shape)} "
                        f"{given.dtype.name}"))
                bound.append(given)
                continue
            shape = tuple(declared.shape)
            if (declared.dtype == given.dtype and tuple(given.shape) != shape and declared.numel == given.numel
                    and given.is_contiguous() and declared.ndim > 0):
                # The device reads a bound tensor as memory: the same elements in another shape
                # (e.g. a flat output buffer) are that memory in the declared shape.
                given = _core.asarray(given.numpy().reshape(shape), copy=False)
            if declared.dtype != given.dtype or tuple(given.shape) != shape:
                raise _fe(ValueError(
                    f"function {self.name!r} argument {i} ({getattr(declared, 'name', '')!r}) was declared "
                    f"{list(shape)} {declared.dtype.name} but the run got {list(given.shape)} {given.dtype.name}"))
            bound.append(given)
        return bound

    def run(self, data: List[Any]) -> None:
        bound = self._bind(list(data))
        if self.body is not None:
            self._run_body(bound)
            return
        if self.compiled is not None and all(
                g.strides == d.strides and g.is_contiguous() == d.is_contiguous() for d, g in zip(self.tensors, bound)):
            try:
                with trace.kernel_call(self.name, "function"):
                    _compile.run(self.compiled, bound)
            except _core.Error as e:
                raise _fe(e) from e
            self._check_goldens(bound)
            return
        self.moved = set()
        with self._bound(bound):
            for step in self.steps:
                step.replay(self)
            for declared, given in zip(self.tensors, bound):
                if id(declared) in self.moved:
                    _copy_moved(declared, given)
        self._check_goldens(bound)

    def _run_body(self, bound: List[_core.Tensor]) -> None:
        """A function over tensors with dynamic dims: its body runs again, eagerly, with the declared
        tensors bound to this run's data (their sizes are known now)."""
        with self._bound(bound):
            self.body.run()
            for declared, given in zip(self.tensors, bound):
                if declared._address != given._address:  # rebound by move: its value lands in the data
                    _copy_moved(declared, given)
        self._check_goldens(bound)

    @contextlib.contextmanager
    def _bound(self, bound: List[_core.Tensor]):
        """One run: the declared tensors bound to the run's data inside a kernel scope (a trace
        track per run, docs/tracing.md); afterwards the platform and tile shape are restored and
        the declared tensors are placeholders again (the caller's memory is not kept, F5)."""
        placeholders = [t._whole for t in self.tensors]
        platform, tile, cube = _core.get_platform(), _core.get_vec_tile_shapes(), _core._get_cube_tile_shapes()
        conv = _core._get_conv_tile_shapes()
        for declared, given in zip(self.tensors, bound):
            declared._rebind(given)
        _core._enter_kernel()
        try:
            with trace.kernel_call(self.name, "function"):
                yield
        except _core.Error as e:
            raise _fe(e) from e
        finally:
            _core._exit_kernel()
            _core.set_platform(platform)
            _core._restore_cube_tile_shapes(cube)
            _core._restore_conv_tile_shapes(conv)
            _core.set_vec_tile_shapes(*tile) if tile else _core.reset_vec_tile_shapes()
            for declared, placeholder in zip(self.tensors, placeholders):
                declared._rebind(placeholder)

    def _check_goldens(self, bound: List[_core.Tensor]) -> None:
        if golden.wanted(None):  # set_verify_options(enable_pass_verify=True) + set_verify_golden_data
            golden.check(f"function {self.name}",
                         [(getattr(t, "name", "") or f"tensor {i}", t) for i, t in enumerate(bound)],
                         golden.take_goldens()[1])


def _copy_moved(declared: _core.Tensor, given: _core.Tensor) -> None:
    """A declared tensor the body rebound with `move`: its whole value, padding included, lands in
    the bound data, as PyPTO's move."""
    whole = declared._whole
    _core.assemble(whole if whole.shape == given.shape else declared, [0] * declared.ndim, given)


class _Body:
    """The body of the `with pypto.function(...)` statement running in `frame`, from its source, as
    module-level code over a snapshot of the names the frame sees (when the statement starts for
    dynamic dims; when it ends for a body that read values), so it reads and assigns names as the
    body itself does. Each run executes it on a copy of that snapshot."""

    def __init__(self, frame, name: str, program: "Program"):
        filename = frame.f_code.co_filename
        source = "".join(linecache.getlines(filename, frame.f_globals))
        line = frame.f_lineno
        statement = None
        if source:
            statements = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.With)
                          and n.lineno <= line <= max(n.lineno, n.body[0].lineno - 1)]
            statement = max(statements, key=lambda n: (n.lineno, n.col_offset), default=None)
        if statement is None:
            raise _fe(RuntimeError(f"pypto.function {name!r} declares tensors with dynamic dims, so each run executes "
                                   f"its body again, but the source of the with statement at {filename}:{line} "
                                   f"cannot be read"))
        try:
            self.code: CodeType = compile(ast.Module(body=statement.body, type_ignores=[]), filename, "exec")
        except SyntaxError as e:  # return / yield / nonlocal: the body is not a block of its own
            raise _fe(RuntimeError(f"pypto.function {name!r} declares tensors with dynamic dims, so each run executes "
                                   f"its body again, which needs a body that runs on its own: {e}")) from None
        self.names = dict(frame.f_globals)
        self.names.update(frame.f_locals)
        for item in statement.items:  # `with pypto.function(...) as f:` -- f is the program
            if isinstance(item.optional_vars, ast.Name):
                self.names[item.optional_vars.id] = program

    def run(self) -> None:
        exec(self.code, dict(self.names))  # noqa: S102 -- the program's own source


def _fe(error: BaseException) -> BaseException:
    from ..error import as_fe_error
    return as_fe_error(error)


class _Recorder(Handler):
    """Keeps each outermost op call of a function body (and tensor creations and moves)."""

    def __init__(self, program: Program):
        self.program = program

    def __call__(self, call: _core.OpCall) -> Any:
        result = call.proceed()
        tile = _core.get_vec_tile_shapes()
        self.program.steps.append(_Call(call.op, _freeze(call.args), _freeze(call.kwargs), result,
                                        _core.get_platform(), tuple(tile), _core._get_cube_tile_shapes(),
                                        _core._get_conv_tile_shapes()))
        return result

    def created(self, tensor: _core.Tensor, shape: tuple, dtype) -> None:
        self.program.steps.append(_Create(tensor, shape, dtype))

    def moved(self, tensor: _core.Tensor, other: _core.Tensor) -> None:
        self.program.steps.append(_Move(tensor, other))


def _flatten(items) -> List[_core.Tensor]:
    out: List[_core.Tensor] = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(_flatten(item))
        elif isinstance(item, _core.Tensor):
            out.append(item)
    return out


class function:  # noqa: N801 — PyPTO's name
    """`with pypto.function(name, *tensors):` records the body as a program over the declared
    tensors (lists of tensors are flattened); `runtime._device_run_once_data_from_host` runs the
    last one recorded on this thread. Each `with` records a new program. A platform or tile shape
    set inside the body ends with it."""

    def __init__(self, name: str, *tensors):
        self.name = name
        self.tensors = _flatten(tensors)
        for i, t in enumerate(self.tensors):
            if _core._is_placeholder(t) and not is_dynamic_declaration(t):
                raise _fe(TypeError(f"function {name!r}: tensor {i} is Tensor(), a placeholder; declare tensors "
                                    f"with pypto.tensor(shape, dtype, name)"))
        self.dynamic = any(is_dynamic_declaration(t) for t in self.tensors)
        self.program: Optional[Program] = None

    def __enter__(self) -> Program:
        if _state.recording is not None:
            raise _fe(RuntimeError(f"pypto.function {self.name!r} inside pypto.function "
                                   f"{_state.recording.name!r}: functions do not nest"))
        self.program = Program(self.name, list(self.tensors))
        if self.dynamic:  # each run executes the body (a recording would fix the sizes)
            self.program.body = _Body(sys._getframe(1), self.name, self.program)
        self._saved = (_core.get_platform(), _core.get_vec_tile_shapes(), _core._get_cube_tile_shapes(),
                       _core._get_conv_tile_shapes())
        self._handling = handling(_Recorder(self.program))
        self._handling.__enter__()
        _state.recording = self.program
        self._tracer = None if _compile.eager_forced() or self.dynamic else _compile.begin(self.name, self.tensors)
        _core._enter_kernel()
        return self.program

    def __exit__(self, exc_type, exc, tb) -> bool:
        _core._exit_kernel()
        _state.recording = None
        if self._tracer is not None:
            moved = {id(step.tensor) for step in self.program.steps if isinstance(step, _Move)}
            current = None if exc is not None else [t if id(t) in moved else None for t in self.tensors]
            self.program.compiled, reason = _compile.end(self._tracer, f"function {self.name}", current)
            if reason:
                # Values read at record time (zeros) steered its loops and views; a replay would
                # repeat that path, so each run executes the body on its data instead. (Its names
                # are read now, not at the start: reading a frame's locals keeps them alive.)
                try:
                    self.program.body = _Body(sys._getframe(1), self.name, self.program)
                except Exception:  # noqa: BLE001 -- no source to run again: the body is replayed
                    self.program.body = None
        self._handling.__exit__(exc_type, exc, tb)
        platform, tile, cube, conv = self._saved
        _core.set_platform(platform)
        _core._restore_cube_tile_shapes(cube)
        _core._restore_conv_tile_shapes(conv)
        _core.set_vec_tile_shapes(*tile) if tile else _core.reset_vec_tile_shapes()
        if exc is None or (self.dynamic and isinstance(exc, _core.Error)):
            # Over dynamic dims the body stops at the first size it needs (or a check that needs
            # one); each run executes it with the data's sizes and raises what is still wrong.
            _state.programs.append(self.program)
            return exc is not None
        if isinstance(exc, _core.Error):  # a failed check inside a function is also a FeError
            raise _fe(exc) from exc
        return False  # anything else propagates as it is


def last_program() -> Program:
    if not _state.programs:
        raise _fe(RuntimeError("no pypto.function has been recorded yet on this thread"))
    return _state.programs[-1]


def run_program(*tensors) -> None:
    last_program().run(_flatten(tensors))
