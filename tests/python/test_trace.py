"""ptocpu.trace (docs/tracing.md): the Chrome trace of the seed 000 kernel, op span args against
numbers worked out by hand from docs/kernel_model.md's UB formula, the summary, the UB plot,
PyPTO's runtime_debug_mode switch, and that tracing leaves the package as it found it."""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import ptocpu
import ptocpu as pypto
from helpers import EXAMPLES, gather_rows_program, load_example
from ptocpu import _core, trace


def load_seed000():
    """The seed example, with its kernel's compiled programs dropped: the kernel is the package's
    (ptocpu.tools.kernels_demo, one per process, maybe run by another test already), and these tests
    trace its first call, which runs the body (loop spans included), not a compiled program."""
    seed = load_example("seed000_index_select_kernel")
    seed.gather_onboard_2d_2input_2d_output_kernel.kernel.compiled.programs.clear()
    return seed


def check_chrome_schema(doc: dict) -> list:
    """The Chrome trace event format: a traceEvents list; complete events (ph X) carry name, ts,
    dur, pid, tid and args; metadata events (ph M) name a process or thread."""
    assert isinstance(doc["traceEvents"], list)
    spans = []
    for e in doc["traceEvents"]:
        assert {"name", "ph", "pid", "tid", "args"} <= set(e), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and isinstance(e["args"], dict)
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
            spans.append(e)
        else:
            assert e["ph"] == "M" and e["name"] in ("process_name", "thread_name", "thread_sort_index"), e
    return spans


def inside(inner: dict, outer: dict) -> bool:
    return (inner["tid"] == outer["tid"] and inner["ts"] >= outer["ts"] - 1e-3
            and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 1e-3)


def test_seed000_kernel_trace(tmp_path):
    seed = load_seed000()
    path = tmp_path / "trace.json"
    with trace.recording(str(path)):
        input0, input1, output0 = seed.run("ascend950")
    np.testing.assert_array_equal(output0, torch.index_select(torch.from_numpy(input0), 0,
                                                              torch.from_numpy(input1)).numpy())
    spans = check_chrome_schema(json.loads(path.read_text()))
    names = [s["name"] for s in spans]
    kernel = [s for s in spans if s["cat"] == "jit"]
    assert [k["name"] for k in kernel] == ["gather_onboard_2d_2input_2d_output_kernel"]
    loops = [s for s in spans if s["cat"] == "loop"]
    assert sorted(names) == sorted(["gather_onboard_2d_2input_2d_output_kernel", "loop 0", "loop 0",
                                    "getitem", "getitem", "index_select", "assemble"])
    ops = [s for s in spans if s["cat"] == "op"]
    assert all(inside(s, kernel[0]) for s in loops + ops)
    inner_loop = min(loops, key=lambda s: s["dur"])
    assert all(inside(s, inner_loop) for s in ops)
    threads = {e["tid"]: e["args"]["name"] for e in json.loads(path.read_text())["traceEvents"]
               if e["name"] == "thread_name"}
    assert threads[kernel[0]["tid"]] == "jit gather_onboard_2d_2input_2d_output_kernel #1"

    (sel,) = [s for s in ops if s["name"] == "index_select"]
    args = sel["args"]
    assert args["op"] == "index_select"
    assert args["shapes"] == [[32, 64], [16]] and args["valid_shapes"] == [[32, 64], [16]]
    assert args["dtypes"] == ["DT_FP32", "DT_INT64"] and args["out_shapes"] == [[16, 64]]
    assert args["tile_shape"] == [8, 64] and args["platform"] == "ascend950"
    # UB: the output tile [8, 64] fp32 = 8 * roundup(64 * 4, 32) = 2048 bytes; ascend950 has 253952.
    assert args["ub_bytes"] == 2048 and args["ub_buffers"] == {"output tile": 2048} and args["ub_limit"] == 253952
    # read the 16 selected rows and the index, write the output: 2 * 16 * 64 * 4 + 16 * 8
    assert args["bytes_moved"] == 2 * 16 * 64 * 4 + 16 * 8
    assert args["time_us"] == pytest.approx(sel["dur"], abs=1e-3)
    (asm,) = [s for s in ops if s["name"] == "assemble"]
    assert asm["args"]["bytes_moved"] == 2 * 16 * 64 * 4 and asm["args"]["ub_bytes"] is None
    assert all(s["args"]["bytes_moved"] == 0 for s in ops if s["name"] == "getitem")


def test_nothing_is_swapped_while_recording():
    # Tracing is a dispatch handler: the package's functions and the Tensor's methods stay what
    # they are, so an op bound to another name before the recording is traced all the same.
    from ptocpu import index_select as bound_before
    names = {row["name"] for row in ptocpu.op_table()}
    before = {name: getattr(ptocpu, name) for name in names if hasattr(ptocpu, name)}
    methods = dict(vars(_core.Tensor))
    with trace.recording() as rec:
        assert {name: getattr(ptocpu, name) for name in before} == before
        assert dict(vars(_core.Tensor)) == methods
        bound_before(np.zeros((3, 2), np.float32), 0, [1])
    assert [r.op for r in rec.ops] == ["index_select"]
    assert trace.active() is None


def test_op_args_ub_for_each_rule():
    """UB bytes worked out from docs/kernel_model.md's formula for ops with different buffers."""
    a = ptocpu.asarray(np.zeros((37, 64), np.float16))
    with trace.recording() as rec, pypto.platform("ascend950"), pypto.vec_tile_shapes(8, 64):
        pypto.interleave(a, a)     # 2 input + 2 output tiles of 8 * roundup(64 * 2, 32) = 1024
        pypto.deinterleave(a)      # input tile 1024 + 2 output tiles [8, 32]: 8 * 64 = 512 each
        x = ptocpu.asarray(np.zeros((4, 64), np.float32))
        index = ptocpu.asarray(np.zeros((2, 64), np.int32))
        with pypto.vec_tile_shapes(4, 64):
            x.scatter_(0, index, 1.0)   # input tile 4 * 256 + index tile 2 * 256
    by_op = {r.op: r for r in rec.ops}
    assert by_op["interleave"].ub_total == 4096 and by_op["interleave"].ub_limit == 253952
    assert by_op["deinterleave"].ub_buffers == {"input tile": 1024, "output tiles": 1024}
    assert by_op["scatter_"].ub_buffers == {"input tile": 1024, "index tile": 512}
    assert by_op["scatter_"].bytes_moved == 2 * 64 * 4 + 2 * 64 * 4  # the index read, one element written per index


def test_bytes_moved_with_numpy_arguments():
    y = ptocpu.tensor([3, 5], ptocpu.DT_FP32)
    with trace.recording() as rec:
        pypto.scatter_(y, 0, np.array([[1, 2], [0, 1]]), 2.0)  # int64 index read (32) + 4 fp32 written
        y[0:2] = np.float32(1.0)                               # a scalar fills 2 x 5 fp32
        y[:] = np.ones((3, 5), np.float32)                     # 60 bytes read and written
        pypto.index_select(y, 0, np.array([0, 2]))             # 2 rows read and written + 16 index bytes
    assert [(r.op, r.bytes_moved) for r in rec.ops] == [("scatter_", 32 + 16), ("setitem", 40), ("setitem", 120),
                                                         ("index_select", 80 + 16)]


def test_indexing_family_bytes_and_ub():
    """gather / scatter_update / index_add_ / gathermask: bytes from docs/tracing.md's rules, UB from
    the pages' buffers, function and method forms alike."""
    x = ptocpu.asarray(np.zeros((8, 16), np.float32))
    index = ptocpu.asarray(np.zeros((8, 4), np.int64))
    with trace.recording() as rec, pypto.platform("ascend950"), pypto.vec_tile_shapes(8, 16):
        x.gather(1, index)                                        # 2 * 32 fp32 + 256 index bytes
        pypto.scatter_update(x, -2, np.array([[1, 3]]), np.ones((2, 16), np.float32))  # 2 rows of 64 B, twice
        x.index_add_(0, np.array([0, 7]), np.ones((2, 16), np.float32))  # 2 * 128 source + 16 index
        pypto.gathermask(x, 1)                                    # 2 * 8 * 8 fp32
    by_op = {r.op: r for r in rec.ops}
    assert by_op["gather"].bytes_moved == 2 * 32 * 4 + 256
    assert by_op["gather"].ub_buffers == {"input tile": 512, "index tile": 256, "output tile": 256,
                                          "index scratch row": 64}
    assert by_op["scatter_update"].bytes_moved == 16 + 2 * 2 * 64
    assert by_op["index_add_"].bytes_moved == 16 + 2 * 128
    assert by_op["gathermask"].bytes_moved == 2 * 8 * 8 * 4
    assert by_op["gathermask"].ub_buffers == {"input tile": 512, "output tile": 256}


def test_failed_op_is_a_span_with_its_ub():
    x = ptocpu.asarray(np.zeros((256, 1024), np.float32))
    index = ptocpu.asarray(np.arange(256, dtype=np.int32))
    with trace.recording() as rec, pypto.platform("ascend950"), pypto.vec_tile_shapes(256, 1024):
        with pytest.raises(ptocpu.TileError, match="UB bytes"):
            pypto.index_select(x, 0, index)
    (failed,) = rec.ops
    assert failed.error and failed.ub_total == 256 * 1024 * 4 > failed.ub_limit == 253952
    assert "failed" in rec.summary()


def test_summary_and_plot(tmp_path, capsys):
    seed = load_seed000()
    plot = tmp_path / "ub.png"
    with trace.recording(summary=True, plot=str(plot)) as rec:
        seed.run("ascend950")
        seed.run("ascend950")
    out = capsys.readouterr().out
    rows = {r["op"]: r for r in rec.summary_rows()}
    assert rows["index_select"]["calls"] == 2 and rows["index_select"]["bytes"] == 2 * (2 * 16 * 64 * 4 + 16 * 8)
    assert rows["index_select"]["peak_ub"] == 2048 and rows["index_select"]["ub_limit"] == 253952
    assert rows["getitem"]["calls"] == 4
    assert "index_select" in out and "0.8%" in out  # 2048 / 253952
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_runtime_debug_mode_writes_a_swimlane(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PTOCPU_TRACE_DIR", str(tmp_path))

    @pypto.frontend.jit(debug_options={"runtime_debug_mode": 1})
    def copy_rows(a: pypto.Tensor(), out: pypto.Tensor()):
        for i in pypto.loop(2, name="rows"):
            pypto.assemble(pypto.view(a, [1, 4], [i, 0]), [i, 0], out)

    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = np.zeros_like(a)
    copy_rows(a, out)
    np.testing.assert_array_equal(out, a)
    (written,) = tmp_path.glob("swimlane_*copy_rows*.json")
    spans = check_chrome_schema(json.loads(written.read_text()))
    assert sorted(s["name"] for s in spans if s["cat"] == "loop") == ["rows 0", "rows 1"]
    assert [s["name"] for s in spans if s["cat"] == "op"] == ["view", "assemble", "view", "assemble"]
    assert str(written) in capsys.readouterr().out
    assert trace.active() is None


def test_global_debug_option_and_off_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("PTOCPU_TRACE_DIR", str(tmp_path))

    @pypto.frontend.jit
    def fill(out: pypto.Tensor()):
        out[:] = 1.0

    out = np.zeros(4, np.float32)
    fill(out)
    assert list(tmp_path.iterdir()) == []
    try:
        pypto.set_debug_options(runtime_debug_mode=1)
        fill(out)
    finally:
        pypto.set_debug_options(runtime_debug_mode=0)
    (written,) = tmp_path.iterdir()
    (setitem,) = [s for s in check_chrome_schema(json.loads(written.read_text())) if s["cat"] == "op"]
    assert setitem["name"] == "setitem" and setitem["args"]["bytes_moved"] == 16
    with pytest.raises(ValueError, match="runtime_debug_mode"):
        pypto.set_debug_options(runtime_debug_mode=7)


def test_run_script_under_trace(tmp_path):
    path = tmp_path / "t.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run([sys.executable, "-m", "ptocpu.tools.trace_run", "-o", str(path),
                           str(EXAMPLES / "seed000_index_select_kernel.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "matches torch.index_select" in proc.stdout and "index_select" in proc.stdout.split("op calls")[1]
    spans = check_chrome_schema(json.loads(path.read_text()))
    (kernel,) = [s for s in spans if s["cat"] == "jit"]
    (select,) = [s for s in spans if s["name"] == "index_select"]
    assert inside(select, kernel)


@pytest.mark.parametrize("recorded_while_tracing", [True, False])
def test_function_program_trace(tmp_path, recorded_while_tracing):
    # recorded while tracing, the function keeps the trace's op wrappers; before it, the core's functions
    path = tmp_path / "f.json"
    with pypto.platform("ascend950"):
        with trace.recording(str(path)) if recorded_while_tracing else contextlib.nullcontext():
            tx, ti, to, want = gather_rows_program()
            with trace.recording(str(path)) if not recorded_while_tracing else contextlib.nullcontext():
                pypto.runtime._device_run_once_data_from_host(pypto.from_torch(tx), pypto.from_torch(ti),
                                                              pypto.from_torch(to))
    assert torch.equal(to, want)
    spans = check_chrome_schema(json.loads(path.read_text()))
    (run,) = [s for s in spans if s["cat"] == "function"]
    replayed = [s for s in spans if s["cat"] == "op" and s["tid"] == run["tid"]]
    assert [s["name"] for s in replayed] == ["view", "index_select", "assemble"] * 2
    assert all(inside(s, run) for s in replayed)
    select = [s for s in replayed if s["name"] == "index_select"][0]["args"]
    assert select["ub_bytes"] == 4 * 8 * 4 and select["ub_limit"] == 253952  # output tile [4, 8] fp32
    # the loop runs once, while the function records: its iterations are outside the function's track
    loops = sorted(s["name"] for s in spans if s["cat"] == "loop")
    assert loops == (["LOOP_ROWS 0", "LOOP_ROWS 1"] if recorded_while_tracing else [])


def test_ptocpu_run_with_trace_writes_a_chrome_trace(tmp_path):
    path = tmp_path / "run.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(os.path.abspath(p) for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-m", "ptocpu.tools.cli", "run", "--trace", str(path),
                           str(EXAMPLES / "pypto_function_gather_rows.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "gathered rows match torch" in proc.stdout and "PASS" in proc.stdout
    spans = check_chrome_schema(json.loads(path.read_text()))
    (run,) = [s for s in spans if s["cat"] == "function"]
    assert run["name"] == "GATHER_ROWS"
    assert {"name": "function GATHER_ROWS #1"} in [e["args"] for e in json.loads(path.read_text())["traceEvents"]
                                                   if e["name"] == "thread_name" and e["tid"] == run["tid"]]
    assert [s["name"] for s in spans if s["cat"] == "op" and inside(s, run)] == ["view", "index_select", "assemble"] * 2


def test_ptocpu_test_with_trace_records_the_tests_ops(tmp_path):
    (tmp_path / "test_select.py").write_text(
        "import torch\nimport pypto\n\n"
        "def test_select():\n"
        "    x = pypto.from_torch(torch.arange(12.0).reshape(4, 3))\n"
        "    got = pypto.index_select(x, 0, pypto.from_torch(torch.tensor([2, 0])))\n"
        "    assert torch.equal(torch.from_numpy(got.numpy()), torch.tensor([[6.0, 7, 8], [0, 1, 2]]))\n")
    path = tmp_path / "test.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(os.path.abspath(p) for p in sys.path if p))
    proc = subprocess.run([sys.executable, "-m", "ptocpu.tools.cli", "test", "--trace", str(path), "-q",
                           "-p", "no:cacheprovider", "test_select.py"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
    (select,) = [s for s in check_chrome_schema(json.loads(path.read_text())) if s["cat"] == "op"]
    assert select["name"] == "index_select" and select["args"]["out_shapes"] == [[2, 3]]
