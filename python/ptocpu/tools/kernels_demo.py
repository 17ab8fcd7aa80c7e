"""Seed 000's jit kernel (PyPTO's test_gather_onboard.py, unchanged apart from `import ptocpu as
pypto`), shipped with the package for the `ptocpu` command, and its run on docs/ops/index_select.md's data.

examples/seed000_index_select_kernel.py imports the kernel and GatherOnboardConfig from here (examples/
is not installed with the package) and runs it on the seed's own data.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import ptocpu as pypto


@dataclass(frozen=True)
class GatherOnboardConfig:
    """The fields the seed kernel reads (PyPTO's VectorConfig for a Gather test case)."""
    axis: int
    tile_shape: tuple
    loop_ranges: tuple
    execution_view_shape: tuple
    output_offset_map: tuple  # output axis -> offsets axis (< 0: offset 0)


@pypto.frontend.jit(debug_options={"runtime_debug_mode": 0, "compile_debug_mode": 0})
def gather_onboard_2d_2input_2d_output_kernel(
    input0: pypto.Tensor(), input1: pypto.Tensor(), output0: pypto.Tensor(), config: GatherOnboardConfig
):
    pypto.set_vec_tile_shapes(*config.tile_shape)
    for index_0 in pypto.loop(config.loop_ranges[0]):
        for index_1 in pypto.loop(config.loop_ranges[1]):
            offsets = [index_0 * config.execution_view_shape[0], index_1 * config.execution_view_shape[1]]
            input0_view = input0[:]
            input1_view = input1[:]
            result = pypto.index_select(input0_view, config.axis, input1_view)
            output_offset = [
                0 if config.output_offset_map[axis] < 0 else offsets[config.output_offset_map[axis]]
                for axis in range(2)
            ]
            pypto.assemble(result, output_offset, output0)


# docs/ops/index_select.md's seed data, gathered along dim 0 and along dim 1; tile = the output (fits any UB).
SEED_X = np.array([[0.1427, 0.0231, -0.5414, -1.0009],
                   [-0.4664, 0.2647, -0.1228, -1.1068],
                   [-1.1734, -0.6571, 0.7230, -0.6004]], dtype=np.float32)
SEED_INDEX = np.array([0, 2], dtype=np.int32)
CONFIGS = {
    0: GatherOnboardConfig(axis=0, tile_shape=(2, 4), loop_ranges=(1, 1), execution_view_shape=(2, 4),
                           output_offset_map=(0, 1)),
    1: GatherOnboardConfig(axis=1, tile_shape=(3, 2), loop_ranges=(1, 1), execution_view_shape=(3, 2),
                           output_offset_map=(0, 1)),
}


def run_seed_kernel(axis: int, platform: str = "ascend950") -> np.ndarray:
    """The seed kernel on docs/ops/index_select.md's data along `axis`, on `platform`; returns output0."""
    config = CONFIGS[axis]
    shape = list(SEED_X.shape)
    shape[axis] = SEED_INDEX.shape[0]
    output0 = np.zeros(shape, dtype=SEED_X.dtype)
    with pypto.platform(platform):
        gather_onboard_2d_2input_2d_output_kernel(SEED_X, SEED_INDEX, output0, config)
    return output0


def show(show_arrays) -> None:
    """Prints the kernel's outputs with the CLI's formatter."""
    show_arrays("index_select jit kernel (seed 000: set_vec_tile_shapes, loop, index_select, assemble) on "
                "ascend950: output0 along dim 0 and along dim 1",
                input0=SEED_X, input1=SEED_INDEX, output0_dim0=run_seed_kernel(0), output0_dim1=run_seed_kernel(1))
