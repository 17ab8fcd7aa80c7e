"""The typed Python surface: the shipped _core.pyi stub matches the module, help() is useful on
every public function (its examples run), dir(ptocpu) is clean, and mypy accepts a typed user
script against the stubs."""
import ast
import doctest
import inspect
import os
import pathlib
import shutil
import subprocess
import sys
import typing

import pytest

import ptocpu
from ptocpu import _core

CORE_DIR = pathlib.Path(_core.__file__).parent
PKG_DIR = pathlib.Path(ptocpu.__file__).parent
PATTERNS = pathlib.Path(__file__).resolve().parents[2] / "bindings" / "python" / "stub_patterns.txt"
# Functions: not classes, nor typing aliases such as PyPTO's SymInt (Union[int, SymbolicScalar]).
PUBLIC = [n for n in ptocpu.__all__ if callable(getattr(ptocpu, n)) and not isinstance(getattr(ptocpu, n), type)
          and typing.get_origin(getattr(ptocpu, n)) is None]


def _stub_functions(path: pathlib.Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def test_stub_and_marker_are_shipped_beside_the_module():
    assert (CORE_DIR / "_core.pyi").is_file()
    assert (CORE_DIR / "py.typed").is_file()


def test_stub_is_what_stubgen_makes_of_the_module_now(tmp_path):
    """Regenerating the stub from the loaded module gives the shipped file: signatures and docs
    cannot drift from the binding."""
    out = tmp_path / "_core.pyi"
    # In a subprocess: the extension cannot be loaded twice (as ptocpu._core and as _core) in one.
    r = subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-P", "-i", str(CORE_DIR), "-m", "_core",
                        "-p", str(PATTERNS), "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert out.read_text() == (CORE_DIR / "_core.pyi").read_text()


def test_every_module_function_is_in_the_stub_with_its_parameter_names():
    stub = _stub_functions(CORE_DIR / "_core.pyi")
    module_functions = {n for n in dir(_core) if type(getattr(_core, n)).__name__ == "nb_func"}
    assert module_functions == set(stub), module_functions ^ set(stub)
    for name in ("index_select", "scatter_", "strided_slice", "view"):
        args = [a.arg for a in stub[name].args.args + stub[name].args.kwonlyargs]
        first_line = getattr(_core, name).__doc__.splitlines()[0]
        for a in args:
            assert f"{a}:" in first_line, (name, a, first_line)


@pytest.mark.parametrize("name", PUBLIC)
def test_help_is_useful(name):
    fn = getattr(ptocpu, name)
    doc = inspect.getdoc(fn) or ""
    assert len(doc) >= 60, (name, doc)
    assert "SPEC" not in doc  # users do not have that document; docs/ pages are cited instead
    assert "object | None" not in doc.splitlines()[0]  # a real signature, not nanobind's fallback


@pytest.mark.parametrize("name", [n for n in PUBLIC if ">>>" in (getattr(ptocpu, n).__doc__ or "")])
def test_docstring_examples_run(name):
    fn = getattr(ptocpu, name)
    test = doctest.DocTestParser().get_doctest(fn.__doc__, {"ptocpu": ptocpu}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    try:
        runner.run(test)
    finally:
        ptocpu.set_platform("cpu")
        ptocpu.reset_vec_tile_shapes()
    assert runner.failures == 0, name


def test_dir_shows_only_the_api():
    # Submodules appear as attributes once imported (ptocpu.cli, ptocpu.verify, ...): not API names.
    names = {n for n in dir(ptocpu) if not n.startswith("_")
             and (n in ptocpu.__all__ or not inspect.ismodule(getattr(ptocpu, n)))}
    assert names == set(ptocpu.__all__), names ^ set(ptocpu.__all__)
    assert "annotations" not in names and "contextlib" not in names and "extend_path" not in names


USER_SCRIPT = '''
import numpy as np
import ptocpu

x: ptocpu.Tensor = ptocpu.asarray(np.zeros((4, 8), np.float32))
rows = ptocpu.index_select(x, 0, [0, 2])
a, b = ptocpu.interleave(rows, rows)
even, odd = ptocpu.deinterleave(a)
y = ptocpu.scatter_(x, 0, np.array([[1, 2]]), 2.0, reduce="add")
z = ptocpu.strided_slice(x, [0, 0], [4, 8], [1, 2], begin_mask=0)
v = ptocpu.view(x, [2, 8], [0, 0], valid_shape=[1, 8])
shape: tuple[int, ...] = z.shape
n: int = ptocpu.get_num_threads()
with ptocpu.platform("ascend950"):
    ptocpu.set_vec_tile_shapes(2, 8)
'''

BAD_SCRIPT = '''
import ptocpu
n: str = ptocpu.get_num_threads()
'''


def _typed_package(tmp_path: pathlib.Path) -> pathlib.Path:
    """The package as mypy sees it once installed: the Python sources with _core.pyi and
    py.typed beside them (a developer build keeps those in the build tree)."""
    root = tmp_path / "site"
    if root.exists():
        return root
    shutil.copytree(PKG_DIR, root / "ptocpu", ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("_core.pyi", "py.typed"):
        shutil.copy(CORE_DIR / f, root / "ptocpu" / f)
    return root


def _mypy(tmp_path, script: str):
    path = tmp_path / "user.py"
    path.write_text(script)
    env = dict(os.environ)
    if not (PKG_DIR / "_core.pyi").is_file():  # installed packages are found by mypy itself
        env["MYPYPATH"] = str(_typed_package(tmp_path))
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent",
                           "--ignore-missing-imports", str(path)], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


def test_mypy_accepts_a_typed_user_script_and_rejects_a_wrong_one(tmp_path):
    ok = _mypy(tmp_path, USER_SCRIPT)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = _mypy(tmp_path, BAD_SCRIPT)
    assert bad.returncode == 1 and "incompatible types in assignment" in bad.stdout.lower(), bad.stdout
