"""Compiled kernels (docs/kernel_model.md#compiled-kernels).

A jit kernel's body (or a pypto.function's) runs eagerly the first time it is called with a
given signature -- its tensors' shapes, strides, dtypes and valid shapes, its other arguments'
values, the platform and the tile shape -- while a tracer records every op call into a program
of nodes over resolved views. Later calls with that signature run the program in C++: no Python
between ops. A body whose tensor values reach Python (Tensor.numpy(), DLPack, ...) may branch on
them, so it stays eager, and the first call says why in one line. `PTOCPU_EAGER=1` or a kernel's
`debug_options={"eager": True}` keeps every call eager (for debugging).
"""
from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Hashable, List, Optional, Tuple

from .. import _core
from . import trace

__all__ = ["Kernels", "begin", "end", "run", "loop_event", "signature", "eager_forced"]


class _State(threading.local):
    def __init__(self):
        self.tracer: Optional[_core._Tracer] = None


_state = _State()
_AUTOCAST_DTYPES = (_core.DT_FP16, _core.DT_BF16)  # the dtypes AutoCast rows hold


def loop_event(event: str, count: int = 0) -> None:
    """pypto.loop's iterations, for the tracer of the body being traced on this thread."""
    if _state.tracer is not None:
        _state.tracer.loop(event, count)


def eager_forced(debug_options: Optional[dict] = None) -> bool:
    """PTOCPU_EAGER=1, or a kernel's debug_options={"eager": True} (ptocpu's own key: it is not one
    of PyPTO's options, so the option store never sees it)."""
    return os.environ.get("PTOCPU_EAGER", "") not in ("", "0") or bool((debug_options or {}).get("eager"))


def _tensor_key(t: _core.Tensor) -> tuple:
    # (valid_shape's entries are KnownDims, whose == builds a symbolic scalar: plain ints hash and compare faster)
    return (t.shape, t.strides, t.dtype, tuple(map(int, t.valid_shape)), t.is_contiguous())


def signature(values: List[Any]) -> Optional[Hashable]:
    """What a program depends on besides its tensors' data: None when a value cannot be a key
    (then the call runs eagerly)."""
    m, k, n, split_k = _core._get_cube_tile_shapes()
    l1, l0, _ = _core._get_conv_tile_shapes()
    key = [_core.get_platform(), tuple(_core.get_vec_tile_shapes()), (tuple(m), tuple(k), tuple(n), split_k),
           (tuple(l1), tuple(l0))]
    for v in values:
        if isinstance(v, _core.Tensor):
            key.append(_tensor_key(v))
        else:
            try:
                hash(v)
            except TypeError:
                return None
            key.append((type(v), v))
    return tuple(key)


class Kernels:
    """The programs of one kernel, one per signature; or why the kernel runs eagerly."""

    def __init__(self, name: str):
        self.name = name
        self.programs: dict = {}
        self.eager_reason: Optional[str] = None

    def call(self, key: Optional[Hashable], tensors: List[_core.Tensor], body: Callable[[], Any],
             moved: Callable[[], List[Optional[_core.Tensor]]]) -> Any:
        """Runs the kernel: its program for this key, or the body (traced the first time). moved():
        after the body, each tensor's new value where the body rebound it with move(), else None."""
        if key is None or self.eager_reason is not None or _core._tracing():
            return body()  # (a kernel called by a body being traced is part of that trace)
        program = self.programs.get(key)
        if program is not None:
            return run(program, tensors)
        # The first call runs eagerly, rounding after every op; where its program keeps AutoCast
        # chains in fp32 (only fp16 / bf16 ops do), the call runs again as the program from the
        # saved inputs, so that every call gives the device's rounding.
        snapshot = _core._Snapshot(tensors) if any(t.dtype in _AUTOCAST_DTYPES for t in tensors) else None
        tracer = begin(self.name, tensors)
        try:
            result = body()
        except BaseException:
            end(tracer, "")
            raise
        current = moved()
        program, reason = end(tracer, f"kernel {self.name}", current)
        if program is None:
            self.eager_reason = reason
            return result
        self.programs[key] = program
        if snapshot is not None and program.keeps_fp32 and all(v is None for v in current):
            snapshot.restore()
            program.run(tensors)  # (a trace recording keeps the eager call's spans)
        return result



def begin(name: str, tensors: List[_core.Tensor]) -> _core._Tracer:
    """Starts tracing a body run on this thread over its tensor arguments."""
    tracer = _core._Tracer(name, tensors)
    _state.tracer = tracer
    return tracer


def end(tracer: _core._Tracer, what: str, current: Optional[List[Optional[_core.Tensor]]] = None,
        reason: str = "") -> Tuple[Optional[_core._Program], str]:
    """Ends the trace: (the program, ""), or (None, why) when the body cannot be a program -- then
    it stays eager and says why in one line on stderr -- or (None, "") when it failed (current is None)."""
    _state.tracer = None
    reason = reason or (tracer.tainted if current is not None else "")
    if current is None or reason:
        tracer.close()
        if reason:
            print(f"ptocpu: {what} runs eagerly: {reason}", file=sys.stderr)
        return None, reason
    return tracer.finish(current), ""


def run(program: _core._Program, tensors: List[_core.Tensor]) -> None:
    """Runs a program; while a trace recording is open its op spans go into it."""
    rec = trace.active()
    if rec is None:
        program.run(tensors)
        return None
    for op, start, end_ns, moved, inputs, outputs, ub, platform, tile in program.run(tensors, spans=True):
        rec.op(op, inputs, {}, outputs, start, end_ns, ub, moved, platform=platform, tile=tile)
    return None
