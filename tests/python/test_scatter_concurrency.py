"""scatter_ writes only the elements it targets (docs/ops/scatter.md): two threads scattering into
disjoint rows of one array, at the same time, must both see their updates land. Run in a
subprocess so that the thread counts and any crash stay out of the test process."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys, threading
    import ml_dtypes
    import numpy as np
    import ptocpu

    kind, rounds = sys.argv[1], int(sys.argv[2])
    ptocpu.set_num_threads(1)  # each call on its own thread; the two calls overlap in time
    rng = np.random.default_rng(7)
    dim = 0

    def distinct_rows(rows, cols, lo, hi):
        # index [rows, cols], values in [lo, hi), distinct down each column
        return (np.argsort(rng.random((hi - lo, cols)), axis=0)[:rows] + lo).astype(np.int64)

    if kind == "fp32-dim0":      # block mode, dense: targets [4096, 128] packed per block
        shape, dt, reduce = (4096, 128), np.float32, None
        halves = [distinct_rows(2048, 128, 0, 2048), distinct_rows(2048, 128, 2048, 4096)]
    elif kind == "fp16-add-dim0":  # block mode, fp16 add through fp32 accumulators
        shape, dt, reduce = (4096, 64), np.float16, "add"
        halves = [rng.integers(0, 2048, (4096, 64)), rng.integers(2048, 4096, (4096, 64))]
    elif kind == "bf16-add-dim0-long":  # block mode, dense blocks too long to pack
        shape, dt, reduce = (9000, 20), ml_dtypes.bfloat16, "add"
        halves = [rng.integers(0, 4500, (3000, 20)), rng.integers(4500, 9000, (3000, 20))]
    elif kind == "fp16-add-short-lines":  # short lines back to back: the calls share every line
        shape, dt, reduce = (30000, 8), np.float16, "add"
        halves = [rng.integers(0, 4, (30000, 4)), rng.integers(4, 8, (30000, 4))]
        dim = 1
    else:                        # "fp16-add-1d": row mode, one dense contiguous line
        shape, dt, reduce = (1 << 20,), np.float16, "add"
        halves = [rng.integers(0, 1 << 19, 1 << 20), rng.integers(1 << 19, 1 << 20, 1 << 20)]
    srcs = [np.full(h.shape, v, dt) for h, v in zip(halves, (1.0, 2.0))]

    want = np.zeros(shape, np.float32)
    for h, s in zip(halves, srcs):
        if reduce is None:
            np.put_along_axis(want, h, s.astype(np.float32), axis=dim)
        else:
            grid = list(np.ogrid[tuple(slice(0, n) for n in h.shape)])
            grid[dim] = h
            np.add.at(want, tuple(grid), s.astype(np.float32))
    want = want.astype(dt)

    lost = 0
    for _ in range(rounds):
        x = np.zeros(shape, dt)
        t = ptocpu.asarray(x)
        args = [(ptocpu.asarray(h), ptocpu.asarray(s)) for h, s in zip(halves, srcs)]
        gate = threading.Barrier(2)

        def work(i):
            gate.wait()
            ptocpu.scatter_(t, dim, args[i][0], args[i][1], reduce=reduce)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        lost += int(np.count_nonzero(x.astype(np.float32) != want.astype(np.float32)))
    print("lost", lost)
""")


@pytest.mark.parametrize("kind", ["fp32-dim0", "fp16-add-dim0", "bf16-add-dim0-long", "fp16-add-short-lines",
                                  "fp16-add-1d"])
def test_two_threads_scattering_into_disjoint_rows_lose_nothing(kind):
    r = subprocess.run([sys.executable, "-c", SCRIPT, kind, "20"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["lost", "0"], r.stdout
