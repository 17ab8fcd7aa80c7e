"""Shared pytest setup for the Python suite.

- A hypothesis profile "ptocpu" (no deadline, modest example counts so the whole suite stays
  fast on a small machine). Select another with HYPOTHESIS_PROFILE=...; "thorough" runs more
  examples.
- Every test starts and ends on platform "cpu" with no tile shapes set and the process's
  thread count, whatever a failing test left behind (these settings are per thread / global).
- A test that takes `platform` (and does not parametrize it itself) runs once per platform of
  helpers.PLATFORMS, with that platform set.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import ptocpu
from helpers import PLATFORMS

settings.register_profile(
    "ptocpu",
    deadline=None,
    max_examples=15,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "thorough",
    parent=settings.get_profile("ptocpu"),
    max_examples=300,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ptocpu"))


@pytest.fixture(autouse=True)
def _fresh_runtime_state():
    """cpu platform, no tile shapes and the same thread count before and after every test."""
    threads = ptocpu.get_num_threads()
    ptocpu.set_platform("cpu")
    ptocpu.reset_vec_tile_shapes()
    ptocpu._core._reset_cube_tile_shapes()
    ptocpu._core._reset_conv_tile_shapes()
    yield
    ptocpu.set_platform("cpu")
    ptocpu.reset_vec_tile_shapes()
    ptocpu._core._reset_cube_tile_shapes()
    ptocpu._core._reset_conv_tile_shapes()
    ptocpu.set_num_threads(threads)


@pytest.fixture(params=PLATFORMS)
def platform(request, _fresh_runtime_state):
    """Each platform in turn, set for the test (_fresh_runtime_state puts "cpu" back after it)."""
    ptocpu.set_platform(request.param)
    return request.param
