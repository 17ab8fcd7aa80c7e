"""What tracing costs when it is off, and when it is on (docs/tracing.md).

    PYTHONPATH=python:build/dev python3 bench/trace_overhead.py [--calls 2000] [--rounds 15]

Off: a tight loop of jit kernel calls through the decorated kernel (which checks the debug
switches) against the same kernel object called directly (`kernel.kernel`, no check), and a
loop of `ptocpu.index_select` against `ptocpu._core.index_select` (the same object when no
recording is open). Rounds alternate between the variants; the median per-call times and their
ratio are printed (ratios within one run; the machine is shared and noisy). On: the same kernel
inside `ptocpu.trace.recording()`, for scale.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import ptocpu as pypto
from ptocpu import _core, trace


@pypto.frontend.jit
def tiles(a: pypto.Tensor(), index: pypto.Tensor(), out: pypto.Tensor()):
    pypto.set_vec_tile_shapes(8, 64)
    for i in pypto.loop(2):
        rows = pypto.view(a, [16, 64], [16 * i, 0])
        pypto.assemble(pypto.index_select(rows, 0, index), [8 * i, 0], out)


def per_call_us(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e6


def compare(name: str, variants: dict, calls: int, rounds: int) -> None:
    times = {k: [] for k in variants}
    for _ in range(rounds):
        for k, fn in variants.items():
            times[k].append(per_call_us(fn, calls))
    medians = {k: statistics.median(v) for k, v in times.items()}
    base, *others = medians
    text = ", ".join(f"{k} {v:.2f} us" for k, v in medians.items())
    ratios = ", ".join(f"{k} / {base} = {medians[k] / medians[base]:.3f}" for k in others)
    print(f"{name}: {text}; {ratios}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    pypto.set_platform("ascend950")
    a = np.random.default_rng(0).standard_normal((32, 64)).astype(np.float32)
    index = np.arange(8, dtype=np.int64)
    out = np.zeros((16, 64), np.float32)
    ta, ti = pypto.asarray(a), pypto.asarray(index)

    assert pypto.index_select is _core.index_select, "tracing off leaves the op functions unwrapped"
    compare("op call, tracing off", {"_core.index_select": lambda: _core.index_select(ta, 0, ti),
                                     "ptocpu.index_select": lambda: pypto.index_select(ta, 0, ti)},
            args.calls * 5, args.rounds)
    compare("kernel call, tracing off", {"kernel object (no switch check)": lambda: tiles.kernel(a, index, out),
                                         "jit kernel": lambda: tiles(a, index, out)}, args.calls, args.rounds)
    with trace.recording() as rec:
        on = per_call_us(lambda: tiles(a, index, out), args.calls // 10)
    off = per_call_us(lambda: tiles(a, index, out), args.calls // 10)
    print(f"kernel call, tracing on: {on:.2f} us against {off:.2f} us off ({len(rec.events)} events recorded)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
