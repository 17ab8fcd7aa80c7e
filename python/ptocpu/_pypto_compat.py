"""PyPTO's surface names that carry no semantics of their own (see docs/running_pypto_programs.md):
symbolic scalars, enums, options, loop_unroll, and the Tensor methods PyPTO programs call.

The semantics behind them (valid shapes, views, assemble) live in the C++ core; these are names,
argument forms and sugar that forward to it.
"""
from __future__ import annotations

import builtins
import enum
import operator
from typing import Any, Callable, Iterator, Optional

from . import _core

__all__ = ["CompStage", "set_cube_tile_shapes", "get_cube_tile_shapes", "reset_options", "set_semantic_label", "cond", "is_loop_begin", "is_loop_end", "SymbolicScalar", "symbolic_scalar", "min", "max", "DataType", "TileOpFormat", "StatusType", "DYN",
           "DYNAMIC", "STATIC", "options", "loop", "loop_unroll", "bytes_of", "ceil", "ceildiv", "DT_DOUBLE", "Shape"]


class SymbolicScalar(int):
    """`pypto.symbolic_scalar(n)`: on the CPU every scalar is known when the kernel runs, so a
    symbolic scalar is an int that stays one through arithmetic and has PyPTO's methods."""

    def __new__(cls, *args):
        # PyPTO's forms: (), (value), (name), (name, value)
        values = [a for a in args if not isinstance(a, str)]
        if len(args) > 2 or len(values) > 1:
            raise TypeError(f"symbolic_scalar() takes (value), (name) or (name, value), got {args!r}")
        self = super().__new__(cls, int(values[0]) if values else 0)
        self.name = next((a for a in args if isinstance(a, str)), "")
        self._kind = "symbol" if self.name else "immediate"
        return self

    def is_immediate(self) -> bool:
        """A literal value (SymbolicScalar(10)), not a name or an expression of one."""
        return self._kind == "immediate"

    def is_symbol(self) -> bool:
        """A named scalar (SymbolicScalar("x") or ("x", value))."""
        return self._kind == "symbol"

    def is_expression(self) -> bool:
        """Arithmetic on a named scalar (SymbolicScalar("x") + 5)."""
        return self._kind == "expression"

    def as_variable(self) -> "SymbolicScalar":
        """Marks an intermediate variable for the device compiler; the scalar itself on the CPU."""
        return self

    def min(self, other) -> "SymbolicScalar":
        return SymbolicScalar(builtins.min(int(self), int(other)))

    def max(self, other) -> "SymbolicScalar":
        return SymbolicScalar(builtins.max(int(self), int(other)))

    def simplify(self) -> "SymbolicScalar":
        return self

    def is_concrete(self) -> bool:
        return True

    def concrete(self) -> int:
        return int(self)

    def __repr__(self) -> str:
        return f"SymbolicScalar({int(self)})"


def _int_result(name: str) -> Callable:
    method = getattr(int, name)

    def op(self, *other):
        result = method(self, *other)
        if not isinstance(result, int) or isinstance(result, bool):
            return result
        out = SymbolicScalar(result)
        if any(getattr(v, "_kind", "immediate") != "immediate" for v in (self, *other)):
            out._kind = "expression"
        return out
    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
              "__rfloordiv__", "__mod__", "__rmod__", "__neg__", "__pos__", "__abs__", "__and__", "__rand__",
              "__or__", "__ror__", "__lshift__", "__rshift__"):
    setattr(SymbolicScalar, _name, _int_result(_name))

symbolic_scalar = SymbolicScalar


def _int_arg(value, function: str, param: str) -> int:
    """value as an int, or the DTypeError PyPTO's scalar checks map to (docs/errors.md): ints,
    numpy ints and symbolic scalars are integers; None, bool, float, str and the rest are not."""
    if isinstance(value, bool) or not hasattr(type(value), "__index__"):
        raise _core.DTypeError(f"{function}: {param} must be an integer, got {type(value).__name__}")
    return operator.index(value)


def min(a, b) -> SymbolicScalar:  # noqa: A001 — PyPTO's name
    """`pypto.min(a, b)`: the smaller of two scalars (ints, loop values or symbolic scalars), as a
    SymbolicScalar -- e.g. a tail block's valid rows, pypto.min(n - offset, block)."""
    return SymbolicScalar(builtins.min(_int_arg(a, "min", "a"), _int_arg(b, "min", "b")))


def max(a, b) -> SymbolicScalar:  # noqa: A001 — PyPTO's name
    """`pypto.max(a, b)`: the larger of two scalars (ints, loop values or symbolic scalars), as a
    SymbolicScalar."""
    return SymbolicScalar(builtins.max(_int_arg(a, "max", "a"), _int_arg(b, "max", "b")))


def ceildiv(a, b) -> int:
    """`pypto.ceildiv(a, b)`: a / b rounded up, for integers (the number of blocks of b that cover a)."""
    a, b = _int_arg(a, "ceildiv", "a"), _int_arg(b, "ceildiv", "b")
    if b == 0:
        raise _core.ArgumentError("ceildiv: b must not be 0")
    return -(-a // b)


def ceil(a, b=None) -> int:
    """`pypto.ceil(a, b)`, older PyPTO's spelling of ceildiv for scalars: a / b rounded up. (The
    elementwise tensor ceil is not an operator ptocpu offers: UnsupportedError.)"""
    if isinstance(a, _core.Tensor) or b is None:
        raise _core.UnsupportedError("ceil: the elementwise tensor ceil is not an operator ptocpu offers; "
                                     "ceil(a, b) of two integers is ceildiv")
    return ceildiv(a, b)


def bytes_of(dtype) -> int:
    """`pypto.bytes_of(dtype)`: the size of one element of dtype in bytes (as ptocpu.itemsize)."""
    return _core.itemsize(dtype)


DataType = _core.DType  # DT_FP32 and the others are its members
DT_DOUBLE = _core.DT_FP64  # PyPTO's second name for fp64


class TileOpFormat(enum.IntEnum):
    """A tensor's layout on the device; the CPU stores every tensor row-major (ND)."""
    TILEOP_ND = 0
    TILEOP_NZ = 1


class CompStage(enum.Enum):
    """How far PyPTO's compiler goes (`host_options={"compile_stage": ...}`); accepted, the CPU
    always runs the whole kernel."""
    ALL_COMPLETE = 0
    TENSOR_GRAPH = 1
    TILE_GRAPH = 2
    EXECUTE_GRAPH = 3
    CODEGEN_INSTRUCTION = 4
    CODEGEN_BINARY = 5


class StatusType(enum.Enum):
    """Markers for a jit annotation's dims (`pypto.Tensor([pypto.DYNAMIC, 64], ...)`); an
    annotation with markers accepts any shape."""
    DYN = "DYN"
    DYNAMIC = "DYNAMIC"
    STATIC = "STATIC"


DYN = StatusType.DYN
DYNAMIC = StatusType.DYNAMIC
STATIC = StatusType.STATIC


def options(name: str = "", **kwargs) -> Callable:
    """`@pypto.options(pass_options=..., ...)` on kernels and test functions, or
    `with pypto.options(...)`: compiler settings, accepted and without effect on the CPU."""
    return _Options(kwargs)


# (debug and verify options have their own modules: ptocpu.debug, ptocpu.golden)
_OPTION_KINDS = ("pass", "host", "codegen", "print")
_option_values: dict = {kind: {} for kind in _OPTION_KINDS}


def _option_setter(kind: str) -> Callable:
    def set_options(**settings) -> None:
        _option_values[kind].update(settings)
    set_options.__name__ = f"set_{kind}_options"
    set_options.__doc__ = f"PyPTO's {kind} options: kept (get_{kind}_options returns them), no effect on the CPU."
    return set_options


def _option_getter(kind: str) -> Callable:
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
        return [_int_arg(v, "set_cube_tile_shapes", param) for v in value]
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


def cond(scalar, file: Optional[str] = None, lineno: Optional[int] = None) -> bool:
    """`if pypto.cond(expr):` — the condition's value (scalars are known on the CPU)."""
    if isinstance(scalar, bool):
        return scalar
    return _int_arg(scalar, "cond", "scalar") != 0


def is_loop_begin(scalar) -> bool:
    """`pypto.is_loop_begin(i)`: True when i is a pypto.loop value on the loop's first iteration
    (False for any other scalar)."""
    return getattr(scalar, "_loop_first", None) == _int_arg(scalar, "is_loop_begin", "scalar")


def is_loop_end(scalar) -> bool:
    """`pypto.is_loop_end(i)`: True when i is a pypto.loop value on the loop's last iteration
    (False for any other scalar)."""
    return getattr(scalar, "_loop_last", None) == _int_arg(scalar, "is_loop_end", "scalar")


class _Options:
    def __init__(self, settings: dict):
        self.settings = settings

    def __call__(self, func: Callable) -> Callable:
        return func

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False


def loop(*args, **kwargs) -> Iterator[SymbolicScalar]:
    """`pypto.loop(stop)` / `loop(start, stop, step=1, name=..., idx_name=...)`: the iteration
    values as symbolic scalars (an int subclass) that know the loop's first and last value
    (is_loop_begin / is_loop_end). The core checks the arguments at the call."""
    values = _core.loop(*args, **kwargs)
    first, last = (values[0], values[-1]) if len(values) else (None, None)

    def value(i: int) -> SymbolicScalar:
        s = SymbolicScalar(i)
        s._loop_first, s._loop_last = first, last
        return s
    return map(value, values)


def loop_unroll(*args, unroll_list=(1,), **kwargs) -> Iterator[tuple]:
    """`pypto.loop_unroll(start, stop, step, unroll_list=[4, 2, 1])` yields `(idx, factor)`: the
    range is covered by blocks of the largest factor first, the rest by smaller ones (PyPTO's
    order); the body handles `factor` steps from idx. The bounds are converted and checked at the
    call, as pypto.loop's are."""
    if not 1 <= len(args) <= 3:
        raise _core.ArgumentError(f"loop_unroll: takes 1 to 3 positional arguments, {len(args)} were given")
    bounds = _core.loop(*args)
    factors = {_int_arg(f, "loop_unroll", "unroll_list") for f in unroll_list} | {1}
    if builtins.min(factors) < 1:
        raise _core.ArgumentError(f"loop_unroll: unroll_list factors must be at least 1, got {sorted(factors)}")
    return _unrolled(bounds.start, bounds.stop, bounds.step, sorted(factors, reverse=True), kwargs)


def _unrolled(start: int, stop: int, step: int, factors: list, kwargs: dict) -> Iterator[tuple]:
    begin = start
    for factor in factors:
        stride = step * factor
        end = stop - (stop - start) % stride
        for idx in loop(begin, end, stride, **kwargs):
            yield idx, factor
        begin = end


class Shape(tuple):
    """A tensor's shape: a tuple that also equals the list PyPTO returns (`t.shape == [4, 8]`)."""

    def __eq__(self, other: Any) -> bool:
        return tuple.__eq__(self, tuple(other) if isinstance(other, list) else other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__


# --- Tensor: PyPTO's attributes and indexing sugar ------------------------------------------

def _tensor_shape(t) -> Shape:
    return Shape(t._shape)


def _tensor_valid_shape(t) -> Shape:
    return Shape(t._valid_shape)


def _move(t, other) -> None:
    """`t.move(other)`: t now stands for other's value (PyPTO's rebinding, no copy)."""
    from . import _graph
    if not isinstance(other, _core.Tensor):
        raise TypeError(f"'{type(other).__name__}' type cannot be moved to Tensor")
    t._rebind(other)
    _graph.note_move(t)


def _base(t):
    return t


def _to_tensor(t, name: str = ""):
    if name:
        t.name = name
    return t


def _is_empty(t) -> bool:
    return _core._is_placeholder(t) or t.numel == 0


def _view_method(t, shape=None, offsets=None, *, valid_shape=None, dtype=None):
    import ptocpu
    return ptocpu.view(t, shape, offsets, valid_shape=valid_shape, dtype=dtype)


def _assemble_method(t, input, offsets) -> None:
    """`t.assemble(input, offsets)`: assemble(input, offsets, t)."""
    import ptocpu
    ptocpu.assemble(input, offsets, t)


def _is_index_slice(key) -> bool:
    """`a[dim:index]`: PyPTO's gather / scatter sugar."""
    return isinstance(key, slice) and isinstance(key.stop, _core.Tensor)


def _block_of(key, shape) -> Optional[tuple]:
    """(offsets, sizes, int_dims) when key is unit-step slices and ints (after Ellipsis), PyPTO's
    view / assemble form (an int i is the block [i, i + 1) of its dim); else None (None, steps or
    other keys take ptocpu's general indexing)."""
    items = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in items):
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (len(shape) - len(items) + 1) + items[at + 1:]
    if len(items) > len(shape):
        return None
    items = items + (slice(None),) * (len(shape) - len(items))
    offsets, sizes, int_dims = [], [], []
    for dim, (k, n) in enumerate(zip(items, shape)):
        if isinstance(k, int) and not isinstance(k, bool):
            offsets.append(k + n if k < 0 else k)
            sizes.append(1)
            int_dims.append(dim)
            continue
        if not isinstance(k, slice) or k.step not in (None, 1) or any(
                v is not None and (isinstance(v, bool) or not isinstance(v, int)) for v in (k.start, k.stop)):
            return None
        start = 0 if k.start is None else (k.start + n if k.start < 0 else k.start)
        stop = n if k.stop is None else (k.stop + n if k.stop < 0 else k.stop)
        offsets.append(start)
        sizes.append(stop - start)
    return offsets, sizes, int_dims


def _make_getitem(basic_getitem: Callable) -> Callable:
    def __getitem__(t, key):
        """`a[dim:index]` is gather(a, dim, index). Inside a kernel (a recording pypto.function
        or a jit call) `a[i:j, k:l]` is PyPTO's view(a, [j-i, l-k], [i, k]): a block that runs
        past the end keeps its shape, its valid shape clipped. Everything else, and all indexing
        outside kernels, is numpy's (the same as PyPTO's for blocks inside the tensor)."""
        import ptocpu
        if _is_index_slice(key):
            return ptocpu.gather(t, key.start, key.stop)
        from . import _graph
        block = None if _core._is_placeholder(t) or not _graph.in_kernel() else _block_of(key, t._shape)
        if block is not None and not block[2]:
            offsets, sizes, _ = block
            if all(o >= 0 and s >= 0 for o, s in zip(offsets, sizes)) and any(
                    o + s > n for o, s, n in zip(offsets, sizes, t._shape)):
                return ptocpu.view(t, sizes, offsets)  # numpy would shorten the block
        return basic_getitem(t, key)
    return __getitem__


def _make_setitem(basic_getitem: Callable, basic_setitem: Callable) -> Callable:
    def __setitem__(t, key, value):
        """PyPTO's assignment: `a[dim:index] = v` scatters v into a in place; `a[block] = b` with b
        of the block's rank that does not broadcast to it (or has a partial valid shape)
        assembles b's valid part at the block's start (an int in the key is a dim of size 1 that
        b does not have); other assignments copy, broadcasting like numpy."""
        import ptocpu
        if _is_index_slice(key):
            ptocpu.scatter_(t, key.start, key.stop, value)
            return
        if isinstance(value, _core.Tensor) and not _core._is_placeholder(t):
            block = _block_of(key, t._shape)
            if block is not None:
                offsets, sizes, int_dims = block
                kept = [n for d, n in enumerate(sizes) if d not in int_dims]
                broadcasts = all(v in (n, 1) for v, n in zip(value._shape, kept)) and not value.partially_valid
                if value.ndim == len(kept) and not broadcasts:
                    if int_dims:  # b gains the key's int dims as dims of size 1
                        value = basic_getitem(value, tuple(None if d in int_dims else slice(None)
                                                           for d in range(t.ndim)))
                    ptocpu.assemble(value, offsets, t)
                    return
        basic_setitem(t, key, value)
    return __setitem__


def install_tensor_methods(recorded: Callable) -> None:
    """PyPTO's Tensor attributes on ptocpu.Tensor; the ones that make or change tensors are
    recorded by a surrounding `pypto.function`."""
    T = _core.Tensor
    T._shape, T._valid_shape = T.__dict__["shape"], T.__dict__["valid_shape"]  # the core's tuples
    T.shape = property(_tensor_shape, doc="The shape; equals both the tuple and the list form")
    T.partially_valid = property(lambda t: tuple(t._valid_shape) != tuple(t._shape))
    T.valid_shape = property(_tensor_valid_shape,
                             doc="The part of each dim that holds data (the shape unless a view set less)")
    T.name = ""  # instances made with a name keep their own
    T.format = TileOpFormat.TILEOP_ND
    T.dim = property(lambda t: t.ndim)
    T.base = _base
    # Tensor[shape, dtype]: PyPTO's annotation spelling, the same as Tensor(shape, dtype).
    T.__class_getitem__ = classmethod(lambda cls, params: cls(*params) if isinstance(params, tuple) else cls(params))
    T.to_tensor = _to_tensor
    T.is_empty = _is_empty
    T.move = recorded(_move)
    T.view = recorded(_view_method)
    T.assemble = _assemble_method  # records through pypto.assemble
    basic_getitem = T.__getitem__
    T.__getitem__ = recorded(_make_getitem(basic_getitem))
    T.__setitem__ = recorded(_make_setitem(basic_getitem, T.__setitem__))
