"""pytest plugin behind `ptocpu test`: PyPTO test files run unchanged on the CPU
(`pytest -p ptocpu.tools.pytest_plugin ...`; see docs/running_pypto_programs.md)."""
from __future__ import annotations

import os

import pytest

from . import runner


def pytest_addoption(parser):
    parser.addoption("--platform", dest="ptocpu_platform", default=None,
                     help=f"ptocpu platform for the tests (default {runner.DEFAULT_PLATFORM}, or PTOCPU_PLATFORM)")


def pytest_configure(config):
    platform = config.getoption("ptocpu_platform") or os.environ.get("PTOCPU_PLATFORM")
    if platform:
        os.environ["PTOCPU_PLATFORM"] = platform
    runner.install(platform)
    config.addinivalue_line("markers", "soc(name): the chip a PyPTO test targets (accepted on the CPU)")


@pytest.fixture(autouse=True)
def _ptocpu_fresh_state():
    """Each test starts as a fresh device process would: the selected platform, no tile shape,
    no options, goldens or debug switches left by an earlier test."""
    from ..engine.dispatch import reset_state
    reset_state()
    runner.install(os.environ.get("PTOCPU_PLATFORM"))
    yield
