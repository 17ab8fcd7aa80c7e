"""A PyPTO checkout's own test suite and scripts under `ptocpu test` / `ptocpu run`
(python/ptocpu/tools/runner.py, pytest_plugin.py, cli.py): its conftest with soc filtering and
teardown hooks, the NPU stand-ins, --report, pytest-xdist, names ptocpu does not offer, exit
statuses, and what PyPTO's kernel front ends refuse (lang/kernel_source.py).

Each test names the upstream hicann/pypto file whose behaviour it checks; the conftest, tests and
scripts written here are our own, shaped like upstream's.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ptocpu as pypto
from ptocpu.error import FeError, ParserError, PyptoGeneralError
from ptocpu.tools.pytest_plugin import first_missing_name


def child_env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)
    env.pop("TILE_FWK_DEVICE_ID", None)
    env.pop("PTOCPU_PLATFORM", None)
    env.update(extra)
    return env


def ptocpu_cli(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "ptocpu.tools.cli", *args], capture_output=True, text=True,
                          cwd=cwd, env=env or child_env(), timeout=600)


# A checkout shaped like hicann/pypto's root: pytest.ini with its markers, a conftest that asks
# torch_npu for the soc version (and exits the session when it cannot), imports pypto in
# pytest_configure, resets pypto_impl after every ut test; ut/ and st/ test files.
CONFTEST = '''
import os
import pytest
import pypto as _pypto_at_import  # conftest files are imported before the plugins' hooks run

FOUND = {}

def pytest_configure(config):
    import pypto.pypto_impl
    pypto.pypto_impl.SetGlobalConfig({"pass.enable_slice": True})
    FOUND["pypto"] = _pypto_at_import.__name__

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    try:
        import torch_npu
        soc = torch_npu.npu.get_soc_version()
    except Exception as e:
        pytest.exit(f"no soc version: {e}", returncode=1)
    tag = "950" if soc == 260 else "910"
    def wanted(item):
        if "/tests/ut/" in str(item.fspath).replace(os.sep, "/"):
            return True
        marker = item.get_closest_marker("soc")
        return tag in (marker.args if marker else ("910",))
    def one_card(item):
        marker = item.get_closest_marker("world_size")
        return marker is None or marker.args[0] == 1
    items[:] = [i for i in items if wanted(i) and one_card(i)]

@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    if "/tests/ut/" in str(item.fspath).replace(os.sep, "/"):
        import pypto
        pypto.pypto_impl.Reset()
'''

UT_TEST = '''
import pypto

def test_conftest_saw_ptocpu_and_set_the_root_default():
    import conftest
    assert conftest.FOUND["pypto"] == "ptocpu"
    pypto.reset_options()
    assert pypto.get_pass_options()["enable_slice"] is True

def test_options_left_by_a_test_are_reset_for_the_next_a():
    pypto.set_pass_options(sg_set_tunevf_mode=2)

def test_options_left_by_a_test_are_reset_for_the_next_b():
    assert pypto.get_pass_options()["sg_set_tunevf_mode"] == 0

def test_a_name_ptocpu_lacks():
    pypto.get_last_function()

def test_a_typo_is_a_plain_attribute_error():
    pypto.get_lats_function()

def test_a_module_ptocpu_lacks():
    import pypto.frontend.parser
'''

ST_TEST = '''
import os
import pytest
import torch
import torch_npu
import pypto

@pytest.mark.soc("950")
def test_on_950():
    assert torch_npu.npu.get_soc_version() == 260 and torch.npu.get_device_name().startswith("Ascend950")

@pytest.mark.soc("910")
def test_on_910():
    assert torch_npu.npu.get_soc_version() != 260 and torch.npu.get_device_name().startswith("Ascend910")

def test_unmarked_is_910():
    assert os.environ["TILE_FWK_DEVICE_ID"] == "0"  # set when absent, as the device scripts need it
    assert torch.npu.is_initialized() is False and torch.npu.memory_reserved() == 0
    torch.npu.current_stream().synchronize()
    torch.npu.empty_cache()
    t = torch.ones(2, 3, device=0)
    assert torch_npu.npu_format_cast(t, 2) is t and torch_npu.get_npu_format(t) == 2
    nz = torch_npu.npu_format_cast(t, 29)  # NZ: zero-padded to the fractal, 16 rows x 32 bytes
    assert nz.shape == (16, 8) and nz.sum() == 6 and nz[:2, :3].eq(1).all()
    aligned = torch.zeros(16, 8)
    assert torch_npu.npu_format_cast(aligned, 29) is aligned
    bits = torch_npu.npu_trans_quant_param(torch.tensor([1.0, 3.1415927]))
    assert bits.dtype == torch.int64 and bits.tolist() == [0x3F800000, 0x40490FDB & 0xFFFFE000]

@pytest.mark.soc("950", "910")
@pytest.mark.world_size(2)
def test_two_cards():
    pass
'''


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    root = tmp_path_factory.mktemp("checkout")
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    soc: chips\n    world_size: cards\n")
    (root / "conftest.py").write_text(CONFTEST)
    for part, text in (("ut", UT_TEST), ("st", ST_TEST)):
        directory = root / "python" / "tests" / part
        directory.mkdir(parents=True)
        (directory / f"test_{part}_harness.py").write_text(textwrap.dedent(text))
    # A PyPTO wheel installed beside ptocpu: the checkout's conftest must still get ptocpu.
    fake = root / "site" / "pypto"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('the real pypto needs the CANN toolkit')\n")
    return root


def run_checkout(checkout, *args):
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(checkout / "site"), env["PYTHONPATH"]])
    return ptocpu_cli("test", "-p", "no:cacheprovider", "-rs", *args, cwd=str(checkout), env=env)


def test_an_upstream_shaped_checkout_runs_with_its_own_conftest(checkout, tmp_path):
    # hicann/pypto's conftest.py and pytest.ini: the soc version comes from --platform (ascend950
    # keeps the soc("950") tests), the conftest's own pypto import is ptocpu, pypto_impl.Reset
    # runs after every ut test, multi-card tests are skipped with a reason.
    report = tmp_path / "report.json"
    r = run_checkout(checkout, "--report", str(report), "python/tests")
    assert "no soc version" not in r.stdout + r.stderr
    assert "3 failed, 4 passed, 1 skipped" in r.stdout, r.stdout + r.stderr
    assert "needs 2 NPU cards (world_size)" in r.stdout
    assert "UnsupportedError: pypto.get_last_function is not offered by ptocpu" in r.stdout
    assert "AttributeError: module 'ptocpu' has no attribute 'get_lats_function'" in r.stdout
    data = json.loads(report.read_text())
    assert data["platform"] == "ascend950" and data["outcomes"] == {"passed": 4, "failed": 3, "skipped": 1}
    tests = {k.split("::")[-1]: v for k, v in data["tests"].items()}
    assert tests["test_a_name_ptocpu_lacks"]["missing"] == "pypto.get_last_function"
    assert tests["test_a_typo_is_a_plain_attribute_error"]["missing"] == "pypto.get_lats_function"
    assert tests["test_a_module_ptocpu_lacks"]["missing"] == "pypto.frontend.parser"
    assert "UnsupportedError: pypto.frontend.parser is not offered by ptocpu" in r.stdout
    assert data["failures_by_missing_name"] == {"pypto.get_last_function": 1, "pypto.get_lats_function": 1,
                                                "pypto.frontend.parser": 1}
    assert "failures by the first PyPTO name ptocpu lacks" in r.stdout


def test_the_platform_selects_the_910_tests(checkout):
    # hicann/pypto's conftest.py keeps unmarked and soc("910") tests when the soc is not 260
    r = run_checkout(checkout, "--platform", "atlas_a2", "-q", "python/tests/st")
    assert r.returncode == 0 and "2 passed, 1 skipped" in r.stdout, r.stdout + r.stderr


def test_xdist_gives_the_serial_outcomes(checkout, tmp_path):
    # build_ci.py runs the suites with pytest-xdist (-n); ptocpu test -n 2 must agree with serial
    serial, parallel = tmp_path / "serial.json", tmp_path / "parallel.json"
    run_checkout(checkout, "--report", str(serial), "python/tests")
    r = run_checkout(checkout, "-n", "2", "--report", str(parallel), "python/tests")
    assert "3 failed, 4 passed, 1 skipped" in r.stdout, r.stdout + r.stderr
    outcomes = [{k: v["outcome"] for k, v in json.loads(p.read_text())["tests"].items()} for p in (serial, parallel)]
    assert outcomes[0] == outcomes[1]


def test_a_module_ptocpu_lacks_is_named_once_under_xdist(tmp_path):
    (tmp_path / "test_import_time.py").write_text("import pypto\nX = pypto.get_last_function\n")
    (tmp_path / "test_fine.py").write_text("def test_fine():\n    pass\n")
    for extra in ((), ("-n", "2")):
        r = ptocpu_cli("test", "-p", "no:cacheprovider", "-q", *extra, str(tmp_path), cwd=str(tmp_path))
        assert "1 passed, 1 error" in r.stdout, r.stdout + r.stderr  # the other files still run


def test_first_missing_name():
    # The forms a missing PyPTO name takes in a failure's text.
    cases = {
        "E   ptocpu.UnsupportedError: pypto.conv is not offered by ptocpu 0.1.0": "pypto.conv",
        "E   ImportError: cannot import name 'SatStatus' from 'ptocpu' (/x/__init__.py)": "pypto.SatStatus",
        "E   ModuleNotFoundError: No module named 'pypto.frontend.parser'; 'pypto.frontend' is not a package":
            "pypto.frontend.parser",
        "E   AttributeError: 'Tensor' object has no attribute 'exp'": "Tensor.exp",
        "E   AttributeError: module 'torch_npu' has no attribute 'profiler'": "torch_npu.profiler",
        "E   TypeError: unsupported operand type(s) for ** or pow(): 'Tensor' and 'float'": "Tensor.__pow__",
        "E   TypeError: unsupported operand type(s) for @: 'Tensor' and 'Tensor'": "Tensor.__matmul__",
        "E   AttributeError: DT_FP4_E2M1": "pypto.DataType.DT_FP4_E2M1",
        "E   AssertionError: assert 1 == 2": None,
    }
    for text, name in cases.items():
        assert first_missing_name("  some traceback line\n" + text) == name
    both = ("E   UnsupportedError: pypto.pypto_impl.RecordFunc is not offered by ptocpu 0.1.0\n"
            "E   ptocpu.error.FeError: ErrCode: F00003, construct fail\n"
            "E   UnsupportedError: pypto.conv is not offered by ptocpu 0.1.0")
    assert first_missing_name(both) == "pypto.pypto_impl.RecordFunc"  # the first, the root cause


# --- names ptocpu does not offer ----------------------------------------------------------------

def test_a_pypto_name_ptocpu_lacks_is_one_unsupported_error_that_probes_see_as_missing():
    # The ranking of names upstream's tests use (python/pypto/__init__.py): a missing one says so
    # in one line; hasattr / getattr probes see it as absent; a typo stays an AttributeError.
    with pytest.raises(pypto.UnsupportedError, match=r"^pypto\.get_last_function is not offered by ptocpu 0\.1\.0$") as e:
        pypto.get_last_function
    assert isinstance(e.value, AttributeError) and type(e.value).__name__ == "UnsupportedError"
    assert not hasattr(pypto, "get_last_function") and getattr(pypto, "get_last_function", 7) == 7
    with pytest.raises(AttributeError) as typo:
        pypto.get_lats_function
    assert not isinstance(typo.value, pypto.UnsupportedError)
    with pytest.raises(ImportError, match="get_last_function"):
        from ptocpu import get_last_function  # noqa: F401
    with pytest.raises(pypto.UnsupportedError, match=r"pypto\.experimental\.shmem_load is not offered"):
        pypto.experimental.shmem_load
    with pytest.raises(pypto.UnsupportedError, match=r"pypto\._controller\.Controller is not offered"):
        pypto._controller.Controller


def test_controller_reset_and_dump():
    # python/tests/ut/interface/test_record_function.py and test_pto_loop.py
    x = pypto.tensor([2, 4], pypto.DT_FP32, "x")
    with pypto.function("MAIN", x) as program:
        for _ in program:  # python/tests/st/pypto_test.py records `for _ in rlf:` once
            pypto.set_vec_tile_shapes(2, 4)
            pypto.view(x, [1, 4], [0, 0])
    text = pypto._controller.dump()
    assert text.splitlines()[0] == "function MAIN(x)" and "view on cpu, tile [2, 4]" in text
    pypto._controller.reset()
    with pytest.raises(RuntimeError, match="no pypto.function has been recorded"):
        pypto._controller.dump()


# --- ptocpu run ---------------------------------------------------------------------------------

@pytest.mark.parametrize("body, status, stderr", [
    # issue 27 F12: sys.exit("message") prints the message and exits 1, as python does
    ("sys.exit('the data is missing')", 1, "the data is missing"),
    # issue 27 F6: an exit status inside a pypto.function body or a jit kernel is kept
    ("x = pypto.tensor([3], pypto.DT_FP32, 'x')\nwith pypto.function('F', x):\n    sys.exit(3)", 3, ""),
    ("@pypto.frontend.jit\ndef k(x: pypto.Tensor([3], pypto.DT_FP32)):\n    for i in pypto.loop(2):\n"
     "        sys.exit(4)\nk(np.zeros(3, np.float32))", 4, ""),
    ("sys.exit()", 0, ""),
    ("raise SystemExit(None)", 0, ""),
])
def test_ptocpu_run_keeps_the_scripts_exit(tmp_path, body, status, stderr):
    script = tmp_path / "script.py"
    script.write_text("import sys\nimport numpy as np\nimport pypto\n" + body + "\n")
    r = ptocpu_cli("run", str(script), cwd=str(tmp_path))
    assert r.returncode == status, r.stderr
    assert r.stderr.strip() == stderr


EXAMPLE = '''
import argparse
import os
import sys
import numpy as np
import pypto

EXAMPLES = {"math::double": "doubles a vector", "math::negate": "negates one"}


def device_id():
    raw = os.environ.get("TILE_FWK_DEVICE_ID")
    if raw is None:
        print("Please set the environment variable TILE_FWK_DEVICE_ID before running")
        return None
    return int(raw)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def double(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
    pypto.assemble(pypto.view(x, [2], [2]), [0], out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("example_id", nargs="?")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        for name in sorted(EXAMPLES):
            print(name, "-", EXAMPLES[name])
        return
    if device_id() is None:
        return
    if args.example_id not in (None, *EXAMPLES):
        print("ERROR: Invalid case/example ID")
        sys.exit(1)
    out = np.zeros(4, np.float32)
    double(np.arange(4, dtype=np.float32), out)
    print("ran", out.tolist())


if __name__ == "__main__":
    main()
'''


def test_ptocpu_run_runs_an_example_script_with_its_arguments(tmp_path):
    # examples/*/*.py of hicann/pypto: `--list`, an example id, and an early exit 0 when
    # TILE_FWK_DEVICE_ID is unset that would hide a silent pass (ptocpu run sets it).
    script = tmp_path / "example.py"
    script.write_text(EXAMPLE)
    listed = ptocpu_cli("run", str(script), "--list", cwd=str(tmp_path))
    assert listed.returncode == 0 and listed.stdout.splitlines()[0] == "math::double - doubles a vector"
    ran = ptocpu_cli("run", str(script), "math::double", cwd=str(tmp_path))
    assert ran.returncode == 0 and "ran [2.0, 3.0, 0.0, 0.0]" in ran.stdout, ran.stderr
    bad = ptocpu_cli("run", str(script), "math::nothing", cwd=str(tmp_path))
    assert bad.returncode == 1 and "Invalid case/example ID" in bad.stdout


# --- what PyPTO's front ends refuse -------------------------------------------------------------

def kernels():
    """Kernels PyPTO refuses, one per rule, for both front ends."""
    def with_return(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
        out[:] = x
        if True:
            return out

    def with_break(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
        for i in pypto.loop(2):
            break

    def with_continue(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
        for i in pypto.loop(2):
            continue

    def with_with(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
        with pypto.options():
            out[:] = x

    def with_varargs(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32), *more):
        out[:] = x

    def with_kwargs(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32), **more):
        out[:] = x

    return with_return, with_break, with_continue, with_with, with_varargs, with_kwargs


@pytest.mark.parametrize("index, parser_pattern, code, ir_pattern", [
    # python/tests/ut/interface/test_control_flow_error.py and test_error.py (new_ir=False: PyPTO's
    # parser, ParserError with its error code); python/pypto/pil/parser.py (new_ir=True, the default)
    (0, "Return statements are not allowed", "F00002", "return statement in entry point"),
    (1, "Break is not supported by the PTO parser", "F00005", "break is not supported in pypto.loop"),
    (2, "Continue is not supported by the PTO parser", "F00005", "continue is not supported in pypto.loop"),
    (3, "With is not supported by the PTO parser", "F00005", r"Unsupported syntax <class 'ast.With'>"),
    (4, r"Variable-length arguments \(\*more\)", "F00005", "vararg and kwarg not supported"),
    (5, r"Keyword argument packing \(\*\*more\)", "F00005", "vararg and kwarg not supported"),
])
def test_what_the_front_ends_refuse_is_refused(index, parser_pattern, code, ir_pattern):
    func = kernels()[index]
    x, out = torch.ones(4), torch.zeros(4)
    with pytest.raises(ParserError, match=parser_pattern) as caught:
        pypto.frontend.jit(new_ir=False)(func)(x, out)
    assert f"ErrCode: {code}" in str(caught.value) and caught.value.node is not None
    assert f"test_upstream_harness.py:{caught.value.node.lineno}" in str(caught.value)
    with pytest.raises(PyptoGeneralError, match=ir_pattern):
        pypto.frontend.jit(func)(x, out)
    assert not out.any()  # refused before anything ran


def test_the_front_ends_accept_what_they_accept():
    # python/tests/st/frontend/test_kernel_reuse.py (new_ir: a parameter may be rebound),
    # python/pypto/pil/parser.py (break in a Python loop; helpers may return)
    @pypto.frontend.jit
    def rebinding(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
        def first_half(t):
            return pypto.view(t, [2], [0])
        x = first_half(x)
        for i in range(3):
            if i == 1:
                break
            pypto.assemble(x, [2 * i], out)

    out = torch.zeros(4)
    rebinding(torch.arange(4.0), out)
    assert out.tolist() == [0.0, 1.0, 0.0, 0.0]

    @pypto.frontend.jit(new_ir=False)
    def reassigning(a: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([4], pypto.DT_FP32)):
        a = pypto.view(a, [2], [0])

    with pytest.raises(ParserError, match="Input tensor 'a' cannot be reassigned"):
        reassigning(torch.ones(4), torch.zeros(4))


def test_jit_arguments_are_checked_before_the_source():
    # python/tests/ut/interface/test_error.py (test_error_on_non_contiguous_input_tensor): PyPTO's
    # runtime takes contiguous torch tensors; the argument errors come first.
    @pypto.frontend.jit(new_ir=False)
    def k(a: pypto.Tensor([4, 4], pypto.DT_FP32), out: pypto.Tensor([4, 4], pypto.DT_FP32)):
        out = a  # noqa: F841 — refused too, but after the arguments

    with pytest.raises(FeError, match="not all tensors are contiguous") as caught:
        k(torch.ones(4, 4).t(), torch.zeros(4, 4))
    assert isinstance(caught.value, pypto.ArgumentError)
    with pytest.raises(FeError, match="missing a required argument: 'out'"):
        k(torch.ones(4, 4))


def test_out_move_in_a_kernel_lands_in_the_argument():
    # python/tests/st/test_multi_jit_new_front.py: c.move(a + b) writes the caller's c
    @pypto.frontend.jit
    def half(x: pypto.Tensor([4], pypto.DT_FP32), out: pypto.Tensor([2], pypto.DT_FP32)):
        out.move(pypto.view(x, [2], [2]))

    out = torch.zeros(2)
    half(torch.arange(4.0), out)
    assert out.tolist() == [2.0, 3.0]
