"""pytest plugin behind `ptocpu test`: PyPTO test files run unchanged on the CPU
(`pytest -p ptocpu.tools.pytest_plugin ...`; see docs/running_pypto_programs.md#ptocpu-test).

- `import pypto` gives ptocpu from the moment the plugin is imported, before any conftest.py
  (upstream's root conftest imports pypto in its own pytest_configure, which runs before ours).
- PyPTO's markers: `soc` (upstream's conftest selects tests by the soc version the torch_npu
  stand-in reports for --platform), `world_size(n)`: a test that needs n > 1 NPU cards is
  skipped with a reason, also when a conftest dropped it from the run.
- Each test starts from a fresh process's state (platform, tile shapes, options, recorded
  programs).
- `--ptocpu-report PATH.json` (`ptocpu test --report PATH.json`) writes each test's outcome and,
  for a failure, the first PyPTO name ptocpu lacks that it ran into; the terminal summary
  groups the failures by that name. Works under pytest-xdist (`-n auto`).
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Optional

import pytest

from . import runner

runner.install_alias()  # at import: conftest files are imported after the plugins, hooks run later


def pytest_addoption(parser):
    group = parser.getgroup("ptocpu")
    group.addoption("--platform", dest="ptocpu_platform", default=None,
                    help=f"ptocpu platform for the tests (default {runner.DEFAULT_PLATFORM}, or PTOCPU_PLATFORM); "
                         "torch_npu.npu.get_soc_version() answers for it, so upstream's conftest keeps the "
                         "soc('950') tests on ascend950 and the soc('910') / unmarked ones on atlas_a2 / atlas_a3")
    group.addoption("--ptocpu-report", dest="ptocpu_report", default=None, metavar="PATH.json",
                    help="write each test's outcome and, for failures, the first PyPTO name ptocpu lacks")


def pytest_configure(config):
    platform = config.getoption("ptocpu_platform") or os.environ.get("PTOCPU_PLATFORM")
    if platform:
        os.environ["PTOCPU_PLATFORM"] = platform
    runner.install(platform)
    # pytest keeps the collected tests -- and the kernels and annotation tensors their closures
    # hold -- until the interpreter's last teardown, after ptocpu's own module: nanobind would list
    # them as leaks at exit.
    from .. import _core
    _core._set_leak_warnings(False)
    for line in ("soc(name, ...): the chips a PyPTO test targets (upstream's conftest selects by them)",
                 "world_size(n): NPU cards a PyPTO test needs (skipped on the CPU when n > 1)",
                 "duration_estimate(seconds): a PyPTO test's expected run time (ordering only)"):
        config.addinivalue_line("markers", line)
    config.pluginmanager.register(_Outcomes(config), "ptocpu-outcomes")


@pytest.fixture(autouse=True)
def _ptocpu_fresh_state():
    """Each test starts as a fresh device process would: the selected platform, no tile shape,
    no options, goldens, recorded programs or debug switches left by an earlier test."""
    from ..engine.dispatch import reset_state
    reset_state()
    runner.install(os.environ.get("PTOCPU_PLATFORM"))
    yield


def _cards(item) -> int:
    marker = item.get_closest_marker("world_size")
    if marker is None or not marker.args or not isinstance(marker.args[0], int):
        return 1
    return marker.args[0]


_deselected: set = set()


def pytest_deselected(items):
    _deselected.update(id(item) for item in items)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(session, config, items):
    """Multi-card tests are skipped with their reason; upstream's conftest drops those whose
    world_size differs from --cards-per-case without a word, so they are put back (skipped)."""
    before = list(items)
    yield
    kept = {id(item) for item in items}
    dropped = [item for item in before
               if id(item) not in kept and id(item) not in _deselected and _cards(item) > 1]
    items.extend(dropped)
    for item in items:
        if _cards(item) > 1:
            item.add_marker(pytest.mark.skip(reason=f"needs {_cards(item)} NPU cards (world_size); "
                                                    "ptocpu runs one process on the CPU"))


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """Under xdist every worker collects every file; the controller shows a file's collection
    error once only when the workers' reports compare equal, which holds for text. As text, an
    import-time UnsupportedError is listed once, as in a serial run."""
    outcome = yield
    report = outcome.get_result()
    if report.failed and hasattr(collector.config, "workerinput") and not isinstance(report.longrepr, str):
        report.longrepr = str(report.longrepr)


# --- the report -----------------------------------------------------------------------------

_MISSING = [  # (pattern on an "E" line of a failure, how the PyPTO name is written)
    (re.compile(r"(pypto(?:\.\w+)+) is not offered by ptocpu"), "{0}"),
    (re.compile(r"cannot import name '(\w+)' from '(?:ptocpu|pypto)((?:\.\w+)*)'"), "pypto{1}.{0}"),
    (re.compile(r"No module named '(?:ptocpu|pypto)((?:\.\w+)+)'"), "pypto{0}"),
    (re.compile(r"module '(?:ptocpu|pypto)((?:\.\w+)*)' has no attribute '(\w+)'"), "pypto{0}.{1}"),
    (re.compile(r"'(?:Tensor|Shape|SymbolicScalar|DataType)' object has no attribute '(\w+)'"), "Tensor.{0}"),
    (re.compile(r"type object '(\w+)' has no attribute '(\w+)'"), "pypto.{0}.{1}"),
    (re.compile(r"module '(torch_npu|torch\.npu)' has no attribute '(\w+)'"), "{0}.{1}"),
    (re.compile(r"AttributeError: (DT_\w+)$"), "pypto.DataType.{0}"),  # a dtype the DataType enum lacks
    (re.compile(r"UnsupportedError: (\w+): (?:not offered|the elementwise|.*not an operator ptocpu offers)"),
     "pypto.{0}"),
]


# Tensor operators ptocpu's Tensor lacks: Python says "unsupported operand type(s) for **".
_OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
              "@": "matmul", "&": "and", "|": "or", "^": "xor", "<<": "lshift", ">>": "rshift"}
_OPERATOR = re.compile(r"unsupported operand type\(s\) for (\S+?)(?: or pow\(\))?: '(?:Tensor|\w+)' and '(?:Tensor|\w+)'")


def first_missing_name(text: str) -> Optional[str]:
    """The first PyPTO name ptocpu lacks that a failure's text shows (its "E" lines, first
    exception first), or None."""
    for line in text.splitlines():
        if not line.startswith("E "):
            continue
        for pattern, form in _MISSING:
            match = pattern.search(line)
            if match:
                return form.format(*match.groups())
        match = _OPERATOR.search(line)
        if match and "Tensor" in line and match.group(1) in _OPERATORS:
            return f"Tensor.__{_OPERATORS[match.group(1)]}__"
    return None


def _failure_text(report) -> str:
    text = getattr(report, "longreprtext", "") or ""
    if not any(line.startswith("E ") for line in text.splitlines()):
        # collection errors carry the text without the "E" prefix
        text = "\n".join("E " + line for line in text.splitlines())
    return text


class _Outcomes:
    """Each test's outcome (under xdist, from the workers' reports on the controller)."""

    def __init__(self, config):
        self.config = config
        self.tests: dict = {}

    def _record(self, nodeid: str, outcome: str, report=None) -> None:
        entry = self.tests.setdefault(nodeid, {"outcome": outcome, "missing": None, "message": None})
        if outcome in ("failed", "error") or entry["outcome"] == "passed":
            entry["outcome"] = outcome
        if report is not None and outcome in ("failed", "error"):
            text = _failure_text(report)
            entry["missing"] = entry["missing"] or first_missing_name(text)
            errors = [line[2:].strip() for line in text.splitlines() if line.startswith("E ")]
            entry["message"] = entry["message"] or (errors[-1] if errors else None)

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            elif report.failed and report.when != "call":
                outcome = "error"
            else:
                outcome = report.outcome
            self._record(report.nodeid, outcome, report)

    def pytest_collectreport(self, report):
        if report.failed:
            self._record(report.nodeid, "error", report)

    def summary(self) -> dict:
        outcomes = Counter(t["outcome"] for t in self.tests.values())
        missing = Counter(t["missing"] for t in self.tests.values()
                          if t["outcome"] in ("failed", "error") and t["missing"])
        return {"outcomes": dict(outcomes), "failures_by_missing_name": dict(missing.most_common())}

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workerinput"):
            return
        by_name = self.summary()["failures_by_missing_name"]
        if by_name:
            terminalreporter.section("ptocpu: failures by the first PyPTO name ptocpu lacks")
            for name, count in list(by_name.items())[:20]:
                terminalreporter.line(f"{count:6d}  {name}")
            if len(by_name) > 20:
                terminalreporter.line(f"        ... {len(by_name) - 20} more (--ptocpu-report PATH.json lists all)")

    def pytest_sessionfinish(self, session):
        path = self.config.getoption("ptocpu_report")
        if not path or hasattr(self.config, "workerinput"):
            return
        import ptocpu
        with open(path, "w") as f:
            json.dump({"ptocpu": ptocpu.__version__, "platform": os.environ.get("PTOCPU_PLATFORM")
                       or runner.DEFAULT_PLATFORM, **self.summary(), "tests": self.tests}, f, indent=1, sort_keys=True)
