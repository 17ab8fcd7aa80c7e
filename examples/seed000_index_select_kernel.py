"""Seed 000's jit kernel (PyPTO's test_gather_onboard.py) on its own data, compared with torch.index_select.

A PyPTO kernel: set the vector tile shape, loop over the execution blocks, index_select each
block and assemble the result into the output argument. Here it runs on the CPU, on the
ascend950 profile, with numpy inputs, and the output is compared with torch.index_select.
The kernel and its config class live in the package, python/ptocpu/tools/kernels_demo.py
(unchanged from upstream apart from `import ptocpu as pypto`), where the `ptocpu` tour runs them too.
Run: PYTHONPATH=python:build python3 examples/seed000_index_select_kernel.py
"""
import numpy as np

import ptocpu as pypto
from ptocpu.tools.kernels_demo import GatherOnboardConfig, gather_onboard_2d_2input_2d_output_kernel


# input [32, 64] fp32, index [16] int64 along axis 0 -> output [16, 64]; tile (8, 64):
# 8 * 64 * 4 = 2048 UB bytes, within every platform's UB.
CONFIG = GatherOnboardConfig(axis=0, tile_shape=(8, 64), loop_ranges=(1, 1), execution_view_shape=(16, 64),
                             output_offset_map=(0, 1))


def make_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    input0 = rng.uniform(-1, 1, size=(32, 64)).astype(np.float32)
    input1 = rng.integers(0, 32, size=(16,), dtype=np.int64)
    return input0, input1


def run(platform: str = "ascend950", config: GatherOnboardConfig = CONFIG):
    """Runs the kernel on `platform`; returns (input0, input1, output0)."""
    input0, input1 = make_inputs()
    out_shape = list(input0.shape)
    out_shape[config.axis:config.axis + 1] = input1.shape
    output0 = np.zeros(out_shape, dtype=input0.dtype)
    with pypto.platform(platform):
        gather_onboard_2d_2input_2d_output_kernel(input0, input1, output0, config)
    return input0, input1, output0


def main() -> int:
    import torch

    input0, input1, output0 = run()
    expected = torch.index_select(torch.from_numpy(input0), CONFIG.axis, torch.from_numpy(input1)).numpy()
    ok = np.array_equal(output0, expected)
    print(f"seed 000 index_select kernel on ascend950: output {output0.shape} "
          f"{'matches' if ok else 'DIFFERS FROM'} torch.index_select")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
