"""A timeline of kernel runs as a Chrome trace (see docs/tracing.md).

    with ptocpu.trace.recording("trace.json", summary=True, plot="ub.png"):
        kernel(...)

While a recording is open, a dispatch handler (engine/dispatch.py) on the opening thread times
each op call; nothing is swapped. The trace has one track per kernel call (`pypto.frontend.jit`,
`pypto.function`), a span per loop iteration and a span per op whose args give the op, its
shapes, valid shapes, dtypes, tile shape, UB bytes per buffer, the platform's UB limit, the bytes
it moved (the op table's formula) and its time. Ops called outside a kernel go to the track
"outside kernels". Open the JSON in https://ui.perfetto.dev or chrome://tracing.

`ptocpu run --trace trace.json SCRIPT.py [ARGS]` runs a script under a recording and prints the
summary.
"""
from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, List, Optional


from .. import _core
from .dispatch import Handler, handling

__all__ = ["recording", "Recorder", "OpRecord", "active", "kernel_call", "iterations"]

OUTSIDE_KERNELS = 0  # the track of ops called outside any kernel


def _tensors(value: Any) -> List[_core.Tensor]:
    """The tensors in an argument or result (lists and tuples flattened)."""
    if isinstance(value, _core.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _valid_shape(t: _core.Tensor) -> list:
    # A tensor from a view with a smaller valid shape reports it; otherwise it is all valid.
    return list(getattr(t, "valid_shape", t.shape))


@dataclass
class OpRecord:
    """One op call: what the summary and the UB plot are made of."""
    op: str
    track: int
    start_ns: int
    dur_ns: int
    bytes_moved: int
    platform: str
    ub_limit: int              # 0: the platform has no UB limit
    ub_total: Optional[int]    # None: no UB check ran (no tile shape, or the op has no UB rule)
    ub_buffers: dict = field(default_factory=dict)
    error: Optional[str] = None


class _Track(threading.local):
    def __init__(self):
        self.current = OUTSIDE_KERNELS


class Recorder:
    """The events of one recording: Chrome trace events (`events`) and op records (`ops`)."""

    def __init__(self):
        self.origin_ns = time.perf_counter_ns()
        self.events: List[dict] = []
        self.ops: List[OpRecord] = []
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._tracks = 0
        self._thread_track = _Track()
        self._limits = {p["name"]: p["ub_bytes"] for p in _core.platform_table()}
        self._meta("process_name", OUTSIDE_KERNELS, {"name": "ptocpu"})
        self._meta("thread_name", OUTSIDE_KERNELS, {"name": "outside kernels"})

    def _us(self, ns: int) -> float:
        return round((ns - self.origin_ns) / 1000.0, 3)

    def _meta(self, name: str, tid: int, args: dict) -> None:
        self.events.append({"name": name, "ph": "M", "ts": 0, "pid": self.pid, "tid": tid, "args": args})

    def span(self, name: str, cat: str, start_ns: int, end_ns: int, args: dict, tid: Optional[int] = None) -> None:
        event = {"name": name, "cat": cat, "ph": "X", "ts": self._us(start_ns),
                 "dur": round((end_ns - start_ns) / 1000.0, 3), "pid": self.pid,
                 "tid": self._thread_track.current if tid is None else tid, "args": args}
        with self._lock:
            self.events.append(event)

    @contextlib.contextmanager
    def track(self, name: str, kind: str, args: Optional[dict] = None) -> Iterator[int]:
        """A new track for one kernel call, with a span over the whole call."""
        with self._lock:
            self._tracks += 1
            tid = self._tracks
            self._meta("thread_name", tid, {"name": f"{kind} {name} #{tid}"})
            self._meta("thread_sort_index", tid, {"sort_index": tid})
        previous, self._thread_track.current = self._thread_track.current, tid
        start = time.perf_counter_ns()
        try:
            yield tid
        finally:
            self._thread_track.current = previous
            call_args = dict(args or {}, kernel=name, kind=kind, platform=_core.get_platform())
            self.span(name, kind, start, time.perf_counter_ns(), call_args, tid)

    def op(self, name: str, args: tuple, kwargs: dict, result: Any, start_ns: int, end_ns: int,
           ub: Optional[dict], moved: int, error: Optional[str] = None, platform: Optional[str] = None,
           tile: Optional[list] = None) -> None:
        """One op's span; platform and tile shape: those it ran under (default: this thread's now)."""
        platform = platform or _core.get_platform()
        tile = list(_core.get_vec_tile_shapes()) if tile is None else list(tile)
        inputs = _tensors(list(args) + list(kwargs.values()))
        outputs = _tensors(result)
        record = OpRecord(name, self._thread_track.current, start_ns, end_ns - start_ns, moved, platform,
                          ub["limit"] if ub else self._limits.get(platform, 0), ub["total"] if ub else None,
                          dict(ub["buffers"]) if ub else {}, error)
        span_args = {
            "op": name,
            "shapes": [list(t.shape) for t in inputs],
            "valid_shapes": [_valid_shape(t) for t in inputs],
            "dtypes": [t.dtype.name for t in inputs],
            "out_shapes": [list(t.shape) for t in outputs],
            "tile_shape": tile or None,
            "platform": platform,
            "ub_bytes": record.ub_total,
            "ub_buffers": record.ub_buffers or None,
            "ub_limit": record.ub_limit or None,
            "bytes_moved": moved,
            "time_us": round(record.dur_ns / 1000.0, 3),
        }
        if error:
            span_args["error"] = error
        with self._lock:
            self.ops.append(record)
        self.span(name, "op", start_ns, end_ns, span_args)

    def chrome_trace(self) -> dict:
        """The Chrome trace event format object (traceEvents + metadata)."""
        return {"traceEvents": list(self.events), "displayTimeUnit": "ns",
                "otherData": {"producer": "ptocpu.trace", "version": _package_version()}}

    def write(self, path: str) -> None:
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)

    def summary_rows(self) -> List[dict]:
        """Per op: calls, time, bytes, GB/s, peak UB and the limit it ran against."""
        rows: dict = {}
        for r in self.ops:
            row = rows.setdefault(r.op, {"op": r.op, "calls": 0, "time_ns": 0, "bytes": 0, "peak_ub": None,
                                         "ub_limit": 0, "errors": 0})
            row["calls"] += 1
            row["time_ns"] += r.dur_ns
            row["bytes"] += r.bytes_moved
            row["errors"] += r.error is not None
            if r.ub_total is not None and (row["peak_ub"] is None or r.ub_total > row["peak_ub"]):
                row["peak_ub"], row["ub_limit"] = r.ub_total, r.ub_limit
            elif row["peak_ub"] is None:
                row["ub_limit"] = r.ub_limit
        for row in rows.values():
            row["gb_per_s"] = row["bytes"] / row["time_ns"] if row["time_ns"] else 0.0  # bytes/ns == GB/s
        return sorted(rows.values(), key=lambda row: -row["time_ns"])

    def summary(self) -> str:
        lines = [f"{'op':<20}{'calls':>7}{'time us':>11}{'bytes':>12}{'GB/s':>8}{'peak UB':>10}{'UB limit':>10}"
                 f"{'UB use':>8}"]
        for row in self.summary_rows():
            peak, limit = row["peak_ub"], row["ub_limit"]
            use = f"{100.0 * peak / limit:.1f}%" if peak is not None and limit else "-"
            lines.append(f"{row['op']:<20}{row['calls']:>7}{row['time_ns'] / 1000:>11.1f}{row['bytes']:>12}"
                         f"{row['gb_per_s']:>8.2f}{'-' if peak is None else peak:>10}{limit or 'none':>10}{use:>8}"
                         + (f"  ({row['errors']} failed)" if row["errors"] else ""))
        return "\n".join(lines)

    def plot(self, path: str) -> None:
        """A PNG of each UB-checked op call's UB bytes, in call order, against the platform's UB
        line (log scale: a tile's bytes are often a small fraction of the UB)."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from matplotlib.ticker import MaxNLocator
        except ImportError as e:
            raise RuntimeError("the UB plot needs matplotlib: pip install 'ptocpu[plot]'") from e
        calls = [(r, r.ub_total) for r in self.ops if r.ub_total is not None]
        fig, ax = plt.subplots(figsize=(7, 3.2), dpi=100)
        names = sorted({r.op for r, _ in calls})
        colors = plt.get_cmap("tab10")
        for i, name in enumerate(names):
            xs = [n for n, (r, _) in enumerate(calls) if r.op == name]
            ax.bar(xs, [calls[n][1] for n in xs], color=colors(i % 10), label=name, width=0.8)
        if len(calls) <= 24:  # room to write each call's bytes and share of the UB
            for n, (r, total) in enumerate(calls):
                share = f"\n{100.0 * total / r.ub_limit:.1f}%" if r.ub_limit else ""
                ax.annotate(f"{total}{share}", (n, total), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7)
        for limit, platform in sorted({(r.ub_limit, r.platform) for r, _ in calls if r.ub_limit}):
            ax.axhline(limit, color="red", linestyle="--", linewidth=1)
            ax.annotate(f"{platform} UB {limit} B", (0.01, limit), xycoords=ax.get_yaxis_transform(),
                        xytext=(0, -11), textcoords="offset points", color="red", fontsize=8)
        ax.set_yscale("log")
        top = max([total for _, total in calls] + [r.ub_limit for r, _ in calls] + [1024])
        ax.set_ylim(16, top * 4)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("op call (in order)")
        ax.set_ylabel("UB bytes")
        ax.set_title("UB use per op call" if calls else "UB use per op call (no op ran a UB check)")
        if names:
            ax.legend(fontsize=8, loc="upper right")
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)


def _package_version() -> str:
    from .. import __version__
    return __version__


# --- the handler ------------------------------------------------------------------------------

_recorder: Optional[Recorder] = None
_depth = 0
_lock = threading.Lock()


def active() -> Optional[Recorder]:
    """The open recording, or None."""
    return _recorder


class _Tracer(Handler):
    """Times each op call and records it as a span of the open recording."""

    def __init__(self, rec: Recorder):
        self.rec = rec

    def __call__(self, call: _core.OpCall) -> Any:
        _core._take_ub_use()
        start = time.perf_counter_ns()
        try:
            result = call.proceed()
        except Exception as e:
            self.rec.op(call.op, call.args, call.kwargs, None, start, time.perf_counter_ns(), _core._take_ub_use(), 0,
                        str(e))
            raise
        end = time.perf_counter_ns()
        self.rec.op(call.op, call.args, call.kwargs, result, start, end, _core._take_ub_use(),
                    call.bytes_moved(result))
        return result


def iterations(values: Iterable, label: str) -> Iterator:
    """The values of a loop, a span per iteration while a recording is open (ptocpu.loop uses it)."""
    for value in values:
        rec = _recorder
        start = time.perf_counter_ns()
        try:
            yield value
        finally:
            if rec is not None:
                index = [int(v) for v in value] if isinstance(value, tuple) else int(value)
                rec.span(f"{label} {index}", "loop", start, time.perf_counter_ns(), {"loop": label, "index": index})


@contextlib.contextmanager
def recording(path: Optional[str] = None, *, summary: bool = False, plot: Optional[str] = None,
              file=None) -> Iterator[Recorder]:
    """Records kernel calls, loop iterations and ops made inside the block.

    On exit the Chrome trace is written to `path` (if given), the per-op summary printed to `file`
    (stdout) if `summary`, and the UB plot saved to `plot` (a PNG; needs matplotlib). A recording
    opened inside another adds to the outer one."""
    global _recorder, _depth
    if path:  # a path that cannot be written fails now, not after the work (F11)
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        open(path, "a").close()
    with _lock:
        if _recorder is None:
            _recorder = Recorder()
        _depth += 1
        rec = _recorder
    try:
        with handling(_Tracer(rec)):
            yield rec
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _recorder = None
        if path:
            rec.write(path)
        if summary:
            out = file or sys.stdout
            print(f"ptocpu trace: {len(rec.ops)} op calls" + (f", timeline in {path}" if path else ""), file=out)
            print(rec.summary(), file=out)
        if plot:
            rec.plot(plot)
            if summary:
                print(f"UB plot in {plot}", file=file or sys.stdout)


@contextlib.contextmanager
def kernel_call(name: str, kind: str = "jit", args: Optional[dict] = None) -> Iterator[None]:
    """The track of one kernel call while a recording is open; nothing otherwise."""
    rec = _recorder
    if rec is None:
        yield
        return
    with rec.track(name, kind, args):
        yield
