"""The one dispatch point (docs/CONTRIBUTING.md#the-dispatch-point).

Every op of the op table, called as a function, a Tensor method or a Tensor operator, goes
through the core's dispatch: with no handler on this thread it runs at once; otherwise the top
handler gets an `OpCall` (op name, args, kwargs) and decides what to do around
`call.proceed()`, which runs the next handler down and finally the op. A call made while another
is being dispatched (from inside a handler, or inside an op implemented from others) goes
straight to the op: handlers see outermost calls only. Nothing is swapped: an op bound to
another name before a handler was pushed (`from pypto import view`) is seen all the same.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, List

from .. import _core

__all__ = ["Handler", "handling", "handlers", "reset_state", "on_reset"]


class Handler:
    """A dispatch handler: override what you need. Handlers live on a per-thread stack."""

    def __call__(self, call: _core.OpCall) -> Any:
        return call.proceed()

    def created(self, tensor: _core.Tensor, shape: tuple, dtype: _core.DType) -> None:
        """A tensor was made with Tensor(shape, dtype) while this handler was on the stack (it is
        still being initialised: use shape and dtype, not its attributes)."""

    def moved(self, tensor: _core.Tensor, other: _core.Tensor) -> None:
        """tensor.move(other) was called while this handler was on the stack."""


@contextlib.contextmanager
def handling(handler: Handler) -> Iterator[Handler]:
    """`with handling(h):` -- h sees this thread's op calls for the block (on top of the others)."""
    _core._push_handler(handler)
    try:
        yield handler
    finally:
        _core._pop_handler(handler)


def handlers() -> List[Handler]:
    """This thread's handlers, top first."""
    return list(_core._handlers())


_resets: List[Callable[[], None]] = []


def on_reset(fn: Callable[[], None]) -> Callable[[], None]:
    """Registers fn to run in reset_state (each module with process state registers its reset)."""
    _resets.append(fn)
    return fn


def reset_state() -> None:
    """Back to a fresh process's settings on this thread: the cpu platform's defaults are not
    forced (callers set the platform they want), tile shapes cleared, every module's options,
    pending goldens and debug switches forgotten. The pytest plugin calls it between tests."""
    _core.reset_vec_tile_shapes()
    for fn in _resets:
        fn()
