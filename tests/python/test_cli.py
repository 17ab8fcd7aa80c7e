"""The `ptocpu` command: exit codes, output, JSON schema, and that a failing case really fails."""
import argparse
import json
import os
import re
import subprocess
import sys
import types

import numpy as np
import pytest

import ptocpu
from ptocpu.tools import cli, verify


def run_cli(*args, env=None):
    env = dict(os.environ) if env is None else env
    return subprocess.run([sys.executable, "-m", "ptocpu.tools.cli", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def verify_args(**kw):
    base = dict(op=None, platform=None, quick=True, json=None)
    base.update(kw)
    return argparse.Namespace(**base)


def test_examples_show_every_seed_example():
    r = run_cli("examples")
    assert r.returncode == 0, r.stderr
    for title in ("index_select (docs/ops/index_select.md)", "interleave (docs/ops/interleave.md)", "deinterleave (docs/ops/deinterleave.md)",
                  "scatter_ (docs/ops/scatter.md)", "strided_slice (docs/ops/strided_slice.md)", "seed 000"):
        assert title in r.stdout
    assert "[-1.1734, -0.6571,  0.723 , -0.6004]" in r.stdout  # row 2 selected by index [0, 2]


def test_info_names_build_simd_threads_and_tables():
    r = run_cli("info")
    assert r.returncode == 0, r.stderr
    assert "SIMD targets compiled" in r.stdout and "dispatched here" in r.stdout
    assert "threads:" in r.stdout
    assert "atlas_a2 (DAV_2201" in r.stdout and "UB bytes 196608" in r.stdout
    assert "interleave     not offered" in r.stdout


def test_default_is_the_tour_and_exits_zero():
    r = run_cli()
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "index_select (docs/ops/index_select.md)" in r.stdout
    assert "passed, 0 failed" in r.stdout


def test_verify_json_schema(tmp_path):
    path = tmp_path / "v.json"
    r = run_cli("verify", "--quick", "--op", "index_select", "--platform", "cpu", "--json", str(path))
    assert r.returncode == 0, r.stdout[-2000:]
    assert "verify:" in r.stderr  # progress while it runs
    data = json.loads(path.read_text())
    assert set(data) == {"summary", "results", "thresholds", "ptocpu"}
    assert [row["op"] for row in data["summary"]] == ["index_select"]
    row = data["summary"][0]
    assert set(row) == {"op", "cases", "passed", "failed", "mere", "mare"}
    assert row["cases"] == row["passed"] > 50 and row["failed"] == 0
    for result in data["results"]:
        assert set(result) == {"op", "platform", "dtype", "case", "passed", "detail", "mere", "mare"}
        assert result["platform"] == "cpu"


def test_verify_filters_reject_unknown_names():
    assert run_cli("verify", "--op", "gather_nd").returncode == 2
    assert run_cli("verify", "--platform", "tpu").returncode == 2


def test_a_wrong_reference_makes_verify_fail(monkeypatch, capsys):
    def wrong(a, b):
        n = a.shape[-1]
        s = np.stack([b, a], axis=-1).reshape(a.shape[:-1] + (2 * n,))  # operands swapped
        return s[..., :n], s[..., n:]
    from ptocpu.tools.verify import indexing
    monkeypatch.setattr(indexing._reference, "interleave", wrong)
    assert verify.run(verify_args(op=["interleave"], platform=["ascend950"])) == 1
    out = capsys.readouterr().out
    assert "FAIL interleave [ascend950" in out and "elements differ" in out


def test_the_torch_reference_is_compared(monkeypatch, capsys):
    pytest.importorskip("torch")
    from ptocpu.tools.verify import indexing
    monkeypatch.setattr(indexing, "_torch_reference", lambda compute, like, *arrays: [np.zeros_like(like)])
    assert verify.run(verify_args(op=["index_select"], platform=["cpu"])) == 1
    assert "FAIL index_select [cpu" in capsys.readouterr().out


def test_an_error_rule_that_does_not_raise_fails(monkeypatch, capsys):
    monkeypatch.setattr(ptocpu, "scatter_", lambda *a, **k: None)
    assert verify.run(verify_args(op=["scatter_"], platform=["cpu"])) == 1
    out = capsys.readouterr().out
    assert "error: bad index at the end" in out and "nothing was raised" in out


def test_bench_tiny_prints_the_table(tmp_path):
    path = tmp_path / "b.json"
    r = run_cli("bench", "--case", "TINY", "--repeats", "3", "--json", str(path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "copy bandwidth" in r.stdout.lower()
    assert "TINY-IS" in r.stdout
    data = json.loads(path.read_text())
    assert data


@pytest.mark.parametrize("spin", [None, "50"])
def test_bench_sets_torchs_openmp_spin_before_libgomp_loads(tmp_path, spin):
    """libgomp (loaded with ptocpu, through oneDNN) reads GOMP_SPINCOUNT only when it loads: the command
    restarts itself with 3000 unless the environment gives a value, which it keeps."""
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    if spin is not None:
        env["GOMP_SPINCOUNT"] = spin
    path = tmp_path / "b.json"
    r = run_cli("bench", "--case", "TINY-IS", "--repeats", "1", "--quiet", "--json", str(path), env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(path.read_text())["header"]["torch_omp_spin"] == f"GOMP_SPINCOUNT={spin or 3000}"


def test_bench_sweep_runs_chosen_cases_and_prints_the_summary(tmp_path):
    path = tmp_path / "s.json"
    r = run_cli("bench", "--sweep", "--case", "SW-IS-tiny-rows,SW-SS-tiny", "--repeats", "3", "--quiet",
                "--json", str(path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "SW-IS-tiny-rows" in r.stdout and "SW-SS-tiny" in r.stdout
    summary = [line for line in r.stdout.splitlines() if line.startswith("sweep: ")]
    assert len(summary) == 1, r.stdout[-2000:]
    assert re.fullmatch(r"sweep: 2 cases vs torch: median \d+\.\d\dx, worst \d+\.\d\dx \(SW-\S+\), [012] below 1\.0x",
                        summary[0]), summary[0]
    assert "worst 2:" in r.stdout
    data = json.loads(path.read_text())
    assert data["peers"] == ["torch"] and [c["id"] for c in data["cases"]] == ["SW-IS-tiny-rows", "SW-SS-tiny"]
    assert data["header"]["sweep_summary"] == summary[0]
    if os.path.exists("/proc/stat"):
        assert all(0.0 <= c["steal"] <= 1.0 for c in data["cases"])


def test_bench_notes_the_cpu_time_the_host_took():
    from ptocpu.tools.bench import measure, sweep
    assert measure.steal_fraction((10, 1000), (60, 1500)) == 0.1
    assert measure.steal_fraction(None, (1, 2)) is None
    assert measure.steal_fraction((5, 100), (5, 100)) is None
    if os.path.exists("/proc/stat"):
        steal, total = measure._cpu_ticks()
        assert 0 <= steal <= total
    results = [{"id": "SW-A", "call": "a", "steal": 0.2, "tools": {"torch": {"speedup": 0.5}}},
               {"id": "SW-B", "call": "b", "steal": 0.01, "tools": {"torch": {"speedup": 2.0}}},
               {"id": "SW-C", "call": "c", "tools": {"torch": {"speedup": 3.0}}}]
    lines = sweep.summary(results)
    assert lines[2] == "  0.50x  SW-A: a (host took 20% of the CPU time meanwhile)"
    assert lines[3] == "  2.00x  SW-B: b" and lines[4] == "  3.00x  SW-C: c"


def test_bench_evicts_the_cache_after_each_reset_and_before_each_timed_call():
    from ptocpu.tools.bench import measure
    from ptocpu.tools.bench.cases import Tool

    events = []

    class Evict:
        def __call__(self):
            events.append("evict")

    class Copy:
        def time_once(self):
            events.append("copy")
            return 1e-3

    def tool(name):
        return Tool(run=lambda: events.append(name), reset=lambda: events.append(f"reset {name}"))

    tools = {"ptocpu": tool("ptocpu"), "torch": tool("torch")}
    rec = {"tools": {"ptocpu": {}, "torch": {}}}
    case = types.SimpleNamespace(id="SW-FAKE")
    measure._time_big(case, tools, ["ptocpu", "torch"], rec, 3, lambda text: None, Copy(), Evict(), budget=0.0)
    round_ = ["reset ptocpu", "evict", "ptocpu", "reset torch", "evict", "torch", "copy"]
    assert events == round_ * 4  # the warm-up round, then 3 timed rounds
    assert rec["tools"]["torch"]["runs"] == 3
    assert measure.CacheEvict().bytes >= max(64 << 20, 2 * measure._last_level_cache_bytes())


def test_bench_sweep_grid_covers_every_op_with_unique_ids():
    from ptocpu.tools.bench import sweep
    from ptocpu.tools.bench.cases import CASES
    cases = sweep.sweep_cases()
    assert len(cases) >= 100
    assert {c.op for c in CASES} <= {c.op for c in cases}  # every benchmarked op has sweep cases
    assert {"gather", "scatter_update", "index_add_", "gathermask"} <= {c.op for c in cases}
    assert len({c.id for c in cases}) == len(cases)
    with pytest.raises(SystemExit, match="unknown case"):
        sweep.select_sweep(["SW-NOPE"])
    assert [c.id for c in sweep.select_sweep(["sw-ss-1d*"])] == ["SW-SS-1d-step2", "SW-SS-1d-crop", "SW-SS-1d-reverse"]


def test_bench_published_cases_by_id_prefix_and_group():
    """`ptocpu bench --case` (README's `--case 'KERNEL-*'`): ids, a prefix ending in '*', TINY, KERNEL."""
    from ptocpu.tools.bench.cases import select_cases
    kernels = [c.id for c in select_cases(["KERNEL"])]
    assert kernels and all(k.startswith("KERNEL-") for k in kernels)
    assert [c.id for c in select_cases(["kernel-*"])] == kernels
    assert [c.id for c in select_cases(["SS1,ss2"])] == ["SS1", "SS2"]
    assert [c.id for c in select_cases(["TINY-S*"])] == ["TINY-SC", "TINY-SS", "TINY-SU"]
    for bad in ("NOPE", "NOPE*"):
        with pytest.raises(SystemExit, match="unknown case"):
            select_cases([bad])


def test_bench_plot_without_matplotlib_fails_naming_the_extra(tmp_path):
    """--plot asks for a file; without matplotlib that is an error (exit 1) before any case runs."""
    code = ("import sys; sys.modules['matplotlib'] = None; import importlib.util as u; "
            "u.find_spec = lambda name, *a: None if name == 'matplotlib' else _find(name, *a); ")
    code = ("import importlib.util as u; _find = u.find_spec; " + code +
            "from ptocpu.tools.cli import main; sys.exit(main(['bench', '--case', 'TINY-IS', '--plot', "
            f"{str(tmp_path / 'p.png')!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert "ptocpu[plot]" in r.stderr and "TINY-IS" not in r.stdout
    assert not (tmp_path / "p.png").exists()
