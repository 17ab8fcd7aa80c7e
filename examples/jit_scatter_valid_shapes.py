"""A jit kernel with valid shapes, written for the device and run unchanged with `ptocpu run`
(see docs/running_pypto_programs.md).

The kernel walks `out` in blocks of BLOCK x BLOCK. Each block of `index` that runs past the end
of `index` is viewed with its full block shape and a smaller valid shape, so scatter_ reads only
the valid index rows (the padding would otherwise scatter into row 0). `out[:]`-style slice
assignment of a smaller block is an assemble, as in PyPTO.
    ptocpu run examples/jit_scatter_valid_shapes.py
"""
import torch

import pypto

ROWS, COLS, INDEX_ROWS, BLOCK = 6, 8, 3, 4


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def scatter_rows(x: pypto.Tensor([], pypto.DT_FP32), index: pypto.Tensor([], pypto.DT_INT64),
                 out: pypto.Tensor([pypto.STATIC, pypto.STATIC], pypto.DT_FP32), value: float):
    pypto.set_vec_tile_shapes(ROWS, BLOCK)
    for c in pypto.loop(COLS // BLOCK):
        col = c * BLOCK
        block = pypto.view(x, [ROWS, BLOCK], [0, col])
        idx = index[0:BLOCK, col:col + BLOCK]  # 4 rows asked, 3 exist: valid shape [3, 4]
        assert idx.shape == [BLOCK, BLOCK] and idx.valid_shape == [INDEX_ROWS, BLOCK]
        out[:, col:col + BLOCK] = pypto.scatter(block, 0, idx, value)


def main():
    torch.npu.set_device(0)
    x = torch.rand(ROWS, COLS, device="npu:0")
    index = torch.randint(0, ROWS, (INDEX_ROWS, COLS), device="npu:0")
    out = torch.zeros(ROWS, COLS, device="npu:0")
    scatter_rows(x, index, out, 2.0)
    assert torch.equal(out.cpu(), torch.scatter(x, 0, index, 2.0).cpu())
    print(f"scatter of {INDEX_ROWS} index rows in blocks of {BLOCK}: matches torch.scatter")


if __name__ == "__main__":
    main()
