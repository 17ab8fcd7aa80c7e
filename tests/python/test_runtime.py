"""docs/platforms.md, docs/kernel_model.md runtime state and threads: platforms (names, aliases, scope, per thread), vector
tile shapes (set / get / reset / scope, errors, per thread), the thread count
(set_num_threads, PTOCPU_NUM_THREADS), and kernels that release the GIL and give correct
results when several Python threads call them at once."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import ml_dtypes
import numpy as np
import pytest

import ptocpu

CANONICAL = ["cpu", "ascend950", "atlas_a3", "atlas_a2"]
ALIASES = {"950": "ascend950", "DAV_3510": "ascend950", "a3": "atlas_a3", "a2": "atlas_a2"}
FP8 = np.array([[1.0, 2.0]], dtype=ml_dtypes.float8_e4m3fn)


def fp8_allowed() -> bool:
    """Whether the current platform takes fp8 index_select input (ascend950 and cpu do)."""
    try:
        ptocpu.index_select(FP8, 0, [0])
        return True
    except ptocpu.DTypeError:
        return False


def run_in_thread(fn):
    """fn() in a new thread; its return value, or its exception re-raised here."""
    box = {}

    def body():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            box["error"] = e

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


# -------------------------------------------------------------------------------- platforms
def test_default_platform_is_cpu():
    assert run_in_thread(ptocpu.get_platform) == "cpu"


@pytest.mark.parametrize("name", CANONICAL + list(ALIASES))
def test_set_platform_names_and_aliases(name):
    canonical = ALIASES.get(name, name)
    ptocpu.set_platform(name)
    assert ptocpu.get_platform() == canonical
    # the platform's limits apply: ascend950's index_select takes fp8, the Atlas ones do not
    assert fp8_allowed() == (canonical in ("cpu", "ascend950"))
    with pytest.raises(ptocpu.ArgumentError, match=f"input rank {5 if canonical != 'cpu' else 9}"):
        ptocpu.index_select(np.zeros((1,) * (5 if canonical != "cpu" else 9), np.float32), 0, [0])


def test_platform_context_restores_even_on_error():
    ptocpu.set_platform("a3")
    with ptocpu.platform("950"):
        assert ptocpu.get_platform() == "ascend950"
        with ptocpu.platform("cpu"):
            assert ptocpu.get_platform() == "cpu"
        assert ptocpu.get_platform() == "ascend950"
    assert ptocpu.get_platform() == "atlas_a3"
    with pytest.raises(RuntimeError, match="boom"):
        with ptocpu.platform("a2"):
            assert ptocpu.get_platform() == "atlas_a2"
            raise RuntimeError("boom")
    assert ptocpu.get_platform() == "atlas_a3"


@pytest.mark.parametrize("bad", ["ascend", "gpu", "", "atlas_a1", "DAV_9999", "cpu "])
def test_unknown_platform_lists_the_names(bad):
    ptocpu.set_platform("a2")
    with pytest.raises(ptocpu.ArgumentError) as e:
        ptocpu.set_platform(bad)
    assert isinstance(e.value, ValueError)
    msg = str(e.value)
    assert f"'{bad}'" in msg
    for name in CANONICAL + list(ALIASES):
        assert name in msg
    assert ptocpu.get_platform() == "atlas_a2"  # unchanged
    with pytest.raises(ptocpu.ArgumentError, match=f"'{bad}'"):
        with ptocpu.platform(bad):
            pass
    assert ptocpu.get_platform() == "atlas_a2"


def test_platform_is_per_thread():
    ptocpu.set_platform("atlas_a2")
    assert run_in_thread(ptocpu.get_platform) == "cpu"  # a new thread starts on cpu

    def other():
        ptocpu.set_platform("ascend950")
        return ptocpu.get_platform(), fp8_allowed()

    assert run_in_thread(other) == ("ascend950", True)
    assert ptocpu.get_platform() == "atlas_a2" and not fp8_allowed()


def test_platforms_interleaved_across_threads():
    """Two threads alternate index_select calls under different platforms in lock-step."""
    barrier = threading.Barrier(2)
    results = {}

    def worker(name, expect_fp8):
        ptocpu.set_platform(name)
        seen = []
        for _ in range(20):
            barrier.wait()
            seen.append((ptocpu.get_platform(), fp8_allowed()))
        results[name] = seen
        assert all(s == (name, expect_fp8) for s in seen)

    threads = [threading.Thread(target=worker, args=a) for a in (("ascend950", True), ("atlas_a2", False))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results["ascend950"] == [("ascend950", True)] * 20
    assert results["atlas_a2"] == [("atlas_a2", False)] * 20


def test_platform_table_is_spec_6():
    table = {p["name"]: p for p in ptocpu.platform_table()}
    assert list(table) == CANONICAL
    assert table["ascend950"]["ub_bytes"] == 253952 and table["ascend950"]["arch"] == "DAV_3510"
    assert table["atlas_a3"]["ub_bytes"] == table["atlas_a2"]["ub_bytes"] == 196608
    assert table["atlas_a2"]["arch"] == "DAV_2201"
    assert all(table[p]["max_extent"] == 2 ** 31 - 1 for p in CANONICAL[1:])
    assert table["cpu"]["empty_inputs_allowed"] and not table["atlas_a2"]["empty_inputs_allowed"]


# ------------------------------------------------------------------------------ tile shapes
def test_tile_shapes_set_get_reset():
    assert ptocpu.get_vec_tile_shapes() == []
    ptocpu.set_vec_tile_shapes(4, 16)
    assert ptocpu.get_vec_tile_shapes() == [4, 16]
    ptocpu.set_vec_tile_shapes(np.int64(8), np.int32(2), 1)
    assert ptocpu.get_vec_tile_shapes() == [8, 2, 1]
    ptocpu.reset_vec_tile_shapes()
    assert ptocpu.get_vec_tile_shapes() == []
    ptocpu.reset_vec_tile_shapes()  # resetting twice is fine
    assert ptocpu.get_vec_tile_shapes() == []


def test_tile_shape_scope():
    with ptocpu.vec_tile_shapes(2, 8):
        assert ptocpu.get_vec_tile_shapes() == [2, 8]
        with ptocpu.vec_tile_shapes(1, 2, 3):
            assert ptocpu.get_vec_tile_shapes() == [1, 2, 3]
        assert ptocpu.get_vec_tile_shapes() == [2, 8]
        with pytest.raises(KeyError):
            with ptocpu.vec_tile_shapes(5):
                raise KeyError("x")
        assert ptocpu.get_vec_tile_shapes() == [2, 8]
    assert ptocpu.get_vec_tile_shapes() == []


def test_tile_shape_applies_to_ops():
    x = np.zeros((4, 8), np.float32)
    with ptocpu.vec_tile_shapes(4):
        with pytest.raises(ptocpu.TileError, match=r"tile shape \[4\]"):
            ptocpu.index_select(x, 0, [0])
    assert ptocpu.index_select(x, 0, [0]).shape == (1, 8)  # the scope ended: no tile rule


@pytest.mark.parametrize("dims,error,shown", [
    ((), ptocpu.TileError, "at least one dim"),
    ((0, 4), ptocpu.TileError, "dim 0 is 0"),
    ((4, -2), ptocpu.TileError, "dim 1 is -2"),
    ((2.0, 4), ptocpu.DTypeError, "2.0"),
    ((4, "8"), ptocpu.DTypeError, "'8'"),
    ((True, 4), ptocpu.DTypeError, "True"),
    (([2, 3],), ptocpu.DTypeError, "[2, 3]"),
    ((None,), ptocpu.DTypeError, "None"),
])
def test_tile_shape_errors(dims, error, shown):
    ptocpu.set_vec_tile_shapes(3, 3)
    with pytest.raises(error) as e:
        ptocpu.set_vec_tile_shapes(*dims)
    assert isinstance(e.value, TypeError if error is ptocpu.DTypeError else ValueError)
    assert str(e.value).startswith("set_vec_tile_shapes") and shown in str(e.value)
    assert ptocpu.get_vec_tile_shapes() == [3, 3]  # unchanged
    with pytest.raises(error):
        with ptocpu.vec_tile_shapes(*dims):
            pass
    assert ptocpu.get_vec_tile_shapes() == [3, 3]


def test_tile_shapes_are_per_thread():
    ptocpu.set_vec_tile_shapes(7, 7)
    assert run_in_thread(ptocpu.get_vec_tile_shapes) == []

    def other():
        ptocpu.set_vec_tile_shapes(1, 2)
        return ptocpu.get_vec_tile_shapes()

    assert run_in_thread(other) == [1, 2]
    assert ptocpu.get_vec_tile_shapes() == [7, 7]


# ---------------------------------------------------------------------------------- threads
def default_thread_count() -> int:
    return len(os.sched_getaffinity(0))


def test_set_and_get_num_threads():
    n = ptocpu.get_num_threads()
    assert type(n) is int and n >= 1
    for k in (1, 3, 8, np.int64(2)):
        ptocpu.set_num_threads(k)
        assert ptocpu.get_num_threads() == k
    assert run_in_thread(ptocpu.get_num_threads) == 2  # one setting for the process


@pytest.mark.parametrize("bad,error,shown", [(0, ptocpu.ArgumentError, "got 0"), (-3, ptocpu.ArgumentError, "got -3"),
                                             (2 ** 40, ptocpu.ArgumentError, str(2 ** 40)),
                                             (2.0, ptocpu.DTypeError, "2.0"), ("4", ptocpu.DTypeError, "'4'"),
                                             (True, ptocpu.DTypeError, "True")])
def test_set_num_threads_errors(bad, error, shown):
    ptocpu.set_num_threads(2)
    with pytest.raises(error) as e:
        ptocpu.set_num_threads(bad)
    assert str(e.value).startswith("set_num_threads") and shown in str(e.value)
    assert ptocpu.get_num_threads() == 2


def _thread_count_in_subprocess(env_value):
    env = {k: v for k, v in os.environ.items() if k != "PTOCPU_NUM_THREADS"}
    if env_value is not None:
        env["PTOCPU_NUM_THREADS"] = env_value
    code = ("import numpy as np, ptocpu\n"
            "x = np.arange(400000, dtype=np.float32).reshape(1000, 400)\n"
            "assert (ptocpu.index_select(x, 1, np.arange(399, -1, -1)).numpy() == x[:, ::-1]).all()\n"
            "print(ptocpu.get_num_threads())\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_PTOCPU_NUM_THREADS():
    cases = [("3", 3), ("1", 1), (None, default_thread_count()), ("0", default_thread_count()),
             ("abc", default_thread_count()), ("", default_thread_count())]
    for value, expected in cases:
        assert _thread_count_in_subprocess(value) == expected, value


_WORKER_SPIN_SCRIPT = """
import os, time, numpy as np, ptocpu
ptocpu.set_num_threads(2)
x = ptocpu.asarray(np.ones(1 << 17, np.float32))  # two chunks of a few microseconds each

def worker_ns():  # CPU time of the pool's workers (named ptocpu-worker)
    total = 0
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/comm") as comm:
            if comm.read().strip() == "ptocpu-worker":
                with open(f"/proc/self/task/{tid}/schedstat") as stat:
                    total += int(stat.read().split()[0])
    return total

ptocpu.add(x, x)  # starts the worker
time.sleep(0.2)
before = worker_ns()
ptocpu.add(x, x)
if os.environ.get("PARK"):
    ptocpu._core._park_workers()
time.sleep(0.2)
print(worker_ns() - before)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="needs Linux's per-thread schedstat")
def test_idle_workers_spin_for_milliseconds_unless_passive_or_parked():
    """docs/kernels.md#threads: after a job an idle worker keeps spinning for about 5 ms (libgomp's
    default policy), so the next call finds it awake; PTOCPU_WAIT_POLICY=passive makes it sleep at once,
    and so does ptocpu._core._park_workers() (the benchmark's, before a peer's timed call). Measured as
    the worker threads' CPU time over the 200 ms after one small parallel add."""
    def spun_ns(policy=None, park=False):
        env = dict(os.environ)
        env.pop("PTOCPU_WAIT_POLICY", None)
        env.pop("PARK", None)
        if policy:
            env["PTOCPU_WAIT_POLICY"] = policy
        if park:
            env["PARK"] = "1"
        out = subprocess.run([sys.executable, "-c", _WORKER_SPIN_SCRIPT], env=env, capture_output=True, text=True,
                             check=True)
        return int(out.stdout.strip())
    assert spun_ns() > 1_000_000  # 5 ms of spinning, at least 1 ms of it on a core even when shared
    # The least of three runs: on a loaded machine (the suite's other process on both cores) one run
    # in about fifty measured a worker's 5 ms inside the window though parked. Below half the spin, not
    # near zero: on a VM whose vCPUs sleep while idle, waking the worker for the job alone measured
    # 0.4-3 ms of its CPU time (2 vCPUs of a Xeon, 2026-12-07; the call itself took 1.6-4 ms there).
    assert min(spun_ns("passive") for _ in range(3)) < 2_500_000
    assert min(spun_ns(park=True) for _ in range(3)) < 2_500_000


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_results_do_not_depend_on_the_thread_count(threads):
    ptocpu.set_num_threads(threads)
    rng = np.random.default_rng(threads)
    x = rng.standard_normal((300, 257)).astype(np.float32)
    for dim, idx in ((0, rng.integers(0, 300, 5000)), (1, rng.integers(0, 257, (40, 30))), (-1, np.arange(257)[::-1])):
        np.testing.assert_array_equal(ptocpu.index_select(x, dim, idx).numpy(), np.take(x, idx, axis=dim))
    big = np.arange(2 ** 21, dtype=np.int64)
    np.testing.assert_array_equal(ptocpu.from_numpy(big[::-3]).contiguous().numpy(), big[::-3])
    f = rng.standard_normal(2 ** 18).astype(np.float32)
    assert np.array_equal(ptocpu.from_numpy(f).astype("bf16").numpy().view(np.uint16),
                          f.astype(ml_dtypes.bfloat16).view(np.uint16))


# --------------------------------------------------------------------------- GIL and threads
def assert_releases_the_gil(call):
    """While a background thread is inside call(), the main thread runs Python.

    The main thread lets the worker enter a call (it sleeps, so the worker gets the GIL) and
    notes when it wakes. A kernel that kept the GIL would keep the main thread asleep until
    the kernel ended; with the GIL released it wakes while the call is still running. The nap
    is a quarter of the shortest call seen so far: first calls (fresh pages) can take twice as
    long as later ones, so a round that napped too long is repeated with the new estimate."""
    durations = []
    for _ in range(3):
        t0 = time.perf_counter()
        call()
        durations.append(time.perf_counter() - t0)
    reports = []
    for _ in range(3):
        nap = min(durations) / 4
        go, done = threading.Event(), threading.Event()
        trials = []

        def worker():
            for _ in range(6):
                go.wait()
                go.clear()
                t_call = time.perf_counter()
                call()
                trials.append([t_call, time.perf_counter()])
                done.set()

        w = threading.Thread(target=worker)
        w.start()
        woken = []
        for _ in range(6):
            go.set()
            time.sleep(nap)  # releases the GIL: the worker starts its call
            woken.append(time.perf_counter())
            done.wait()
            done.clear()
        w.join()
        # woke well before the end: a call that kept the GIL lets the main thread wake only as
        # the call returns (give or take the worker's own perf_counter)
        inside = [t_call < woke < t_end - max(5e-4, (t_end - t_call) / 10)
                  for (t_call, t_end), woke in zip(trials, woken)]
        if sum(inside) >= 2:
            return
        durations += [t_end - t_call for t_call, t_end in trials]
        reports.append([(round((woke - a) * 1e3, 2), round((b - a) * 1e3, 2))
                        for (a, b), woke in zip(trials, woken)])
    raise AssertionError(f"(woke, ended) ms after each call began, per round: {reports}")


def test_the_gil_check_fails_on_a_call_that_keeps_the_gil():
    # builtin sum over a range is one C loop that never lets the GIL go
    with pytest.raises(AssertionError, match="woke, ended"):
        assert_releases_the_gil(lambda: sum(range(2_000_000)))


def test_kernels_release_the_gil():
    ptocpu.set_num_threads(1)
    rng = np.random.default_rng(0)
    # ptocpu tensors: no Python code (asarray) runs inside the calls
    x = ptocpu.from_numpy(rng.integers(0, 255, (4096, 8192), dtype=np.uint8))
    idx = ptocpu.from_numpy(rng.integers(0, 8192, 8192))
    assert_releases_the_gil(lambda: ptocpu.index_select(x, 1, idx))


def test_a_call_that_makes_a_large_tensor_from_numbers_releases_the_gil():
    # docs/tensors.md#threads: small calls keep the GIL; arange's end counts as a size
    ptocpu.set_num_threads(1)
    assert_releases_the_gil(lambda: ptocpu.arange(0, 1 << 25, 1))


def test_concurrent_calls_from_python_threads_are_correct():
    """4 threads x many index_selects on large inputs, each with its own platform and tile
    settings, all checked against numpy (the pool is busy: calls run on their own threads)."""
    ptocpu.set_num_threads(2)
    rng = np.random.default_rng(42)
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    xb = x.astype(ml_dtypes.bfloat16)
    jobs = []
    for k in range(4):
        idx0 = rng.integers(0, 512, 300 + k)
        idx1 = rng.integers(0, 1024, (8, 64)).astype(np.int32)
        jobs.append((idx0, idx1))
    errors = []
    start = threading.Barrier(4)

    def worker(k):
        try:
            platform = ["cpu", "ascend950", "atlas_a2", "cpu"][k]
            ptocpu.set_platform(platform)
            idx0, idx1 = jobs[k]
            start.wait()
            for i in range(15):
                if platform == "atlas_a2":
                    with ptocpu.vec_tile_shapes(16, 64):
                        out = ptocpu.index_select(xb, 0, idx0)
                    assert np.array_equal(out.numpy().view(np.uint16), xb[idx0].view(np.uint16))
                elif i % 2:
                    out = ptocpu.index_select(x, 1, idx1)
                    assert np.array_equal(out.numpy(), np.take(x, idx1, axis=1))
                else:
                    out = ptocpu.index_select(x[::-1], 0, idx0)
                    assert np.array_equal(out.numpy(), x[::-1][idx0])
                assert ptocpu.get_platform() == platform
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
