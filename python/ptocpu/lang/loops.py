"""pypto.loop and pypto.loop_unroll (docs/kernel_model.md#loops): the iteration values as
symbolic scalars; a trace recording gets a span per iteration; tile shapes and options set in a
loop's body end with the loop."""
from __future__ import annotations

import builtins
from typing import Iterator

from .. import _core
from ..engine import compile, config, trace
from .symbolic import SymbolicScalar, int_arg

__all__ = ["loop", "loop_unroll"]


def loop(*args, parallel: bool = False, **kwargs) -> Iterator[SymbolicScalar]:
    """`pypto.loop(stop)` / `loop(start, stop, step=1, name=..., idx_name=..., parallel=...)`: the
    iteration values as symbolic scalars (an int subclass) that know the loop's first and last
    value (is_loop_begin / is_loop_end). The core checks the arguments at the call; `parallel`
    (iterations the device may run at once) changes nothing on the CPU."""
    if not isinstance(parallel, bool):
        raise _core.DTypeError(f"loop: parallel must be a bool, got {type(parallel).__name__}")
    values = _core.loop(*args, **kwargs)
    first, last = (values[0], values[-1]) if len(values) else (None, None)

    def value(i: int) -> SymbolicScalar:
        s = SymbolicScalar(i)
        s._loop_first, s._loop_last = first, last
        return s
    iterations = _scoped(trace.iterations(map(value, values), kwargs.get("name") or kwargs.get("idx_name") or "loop"))
    return _traced(iterations, len(values)) if _core._tracing() else iterations


def _scoped(iterations: Iterator) -> Iterator:
    """A loop's body is a scope, as in PyPTO: tile shapes and options set in it end with the loop."""
    tiles = _core.get_vec_tile_shapes()
    config.push("loop", {})
    try:
        yield from iterations
    finally:
        config.pop()
        _core.set_vec_tile_shapes(*tiles) if tiles else _core.reset_vec_tile_shapes()


def _traced(iterations: Iterator, count: int) -> Iterator:
    """The iterations, told to the tracer of a kernel being compiled (each iteration's ops)."""
    compile.loop_event("begin", count)
    try:
        for i, value in enumerate(iterations):
            if i:
                compile.loop_event("next")
            yield value
    finally:
        compile.loop_event("end")


def loop_unroll(*args, unroll_list=(1,), **kwargs) -> Iterator[tuple]:
    """`pypto.loop_unroll(start, stop, step, unroll_list=[4, 2, 1])` yields `(idx, factor)`: the
    range is covered by blocks of the largest factor first, the rest by smaller ones (PyPTO's
    order); the body handles `factor` steps from idx. The bounds are converted and checked at the
    call, as pypto.loop's are."""
    if not 1 <= len(args) <= 3:
        raise _core.ArgumentError(f"loop_unroll: takes 1 to 3 positional arguments, {len(args)} were given")
    bounds = _core.loop(*args)
    factors = {int_arg(f, "loop_unroll", "unroll_list") for f in unroll_list} | {1}
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


