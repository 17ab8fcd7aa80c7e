"""An interleave kernel (docs/ops/interleave.md + 7): a loop over row blocks with view + interleave + assemble.

Every block of ROWS_PER_BLOCK rows of `a` and `b` is viewed (the last block declares the full
block shape and a smaller valid_shape), interleaved along the last axis, and assembled into the
two output arguments. Interleave is offered on ascend950 (and the cpu profile), not on atlas_a2.
Run: PYTHONPATH=python:build python3 examples/interleave_kernel.py
"""
import numpy as np

import ptocpu as pypto

ROWS, COLS, ROWS_PER_BLOCK = 37, 64, 8  # 37 rows: four full blocks and a tail of 5


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def interleave_kernel(
    a: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    b: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    out0: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    out1: pypto.Tensor([ROWS, COLS], pypto.DT_FP16),
    rows_per_block: int,
):
    rows, cols = a.shape
    # interleave tiles: tile[-1] must be the whole last axis; 2 inputs + 2 outputs of
    # rows_per_block x cols fp16 = 4 * 8 * 128 = 4096 UB bytes.
    pypto.set_vec_tile_shapes(rows_per_block, cols)
    for i in pypto.loop((rows + rows_per_block - 1) // rows_per_block):
        offsets = [i * rows_per_block, 0]
        valid = [min(rows_per_block, rows - offsets[0]), cols]
        a_block = pypto.view(a, [rows_per_block, cols], offsets, valid_shape=valid)
        b_block = pypto.view(b, [rows_per_block, cols], offsets, valid_shape=valid)
        lo, hi = pypto.interleave(a_block, b_block)
        pypto.assemble(lo, offsets, out0)
        pypto.assemble(hi, offsets, out1)


def make_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((ROWS, COLS)).astype(np.float16)
    b = rng.standard_normal((ROWS, COLS)).astype(np.float16)
    return a, b


def reference(a, b):
    """docs/ops/interleave.md with torch: the stream a0 b0 a1 b1 ... split into its two halves."""
    import torch

    s = torch.stack([torch.from_numpy(a), torch.from_numpy(b)], dim=-1).reshape(a.shape[0], -1)
    n = a.shape[-1]
    return s[:, :n].numpy(), s[:, n:].numpy()


def run(platform: str = "ascend950"):
    """Runs the kernel on `platform`; returns (a, b, out0, out1)."""
    a, b = make_inputs()
    out0, out1 = np.zeros_like(a), np.zeros_like(a)
    with pypto.platform(platform):
        interleave_kernel(a, b, out0, out1, ROWS_PER_BLOCK)
    return a, b, out0, out1


def main() -> int:
    a, b, out0, out1 = run()
    e0, e1 = reference(a, b)
    ok = np.array_equal(out0, e0) and np.array_equal(out1, e1)
    print(f"interleave kernel on ascend950: {ROWS}x{COLS} fp16 in blocks of {ROWS_PER_BLOCK} rows; outputs "
          f"{'match' if ok else 'DIFFER FROM'} the torch reference")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
