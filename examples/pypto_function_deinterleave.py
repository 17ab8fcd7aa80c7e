"""PyPTO's older graph style, run unchanged with `ptocpu run` (see docs/running_pypto_programs.md).

`with pypto.function(...)` records a loop of view + deinterleave + assemble over row blocks
(the last block is partly valid: 10 rows in blocks of 4); `from_torch` binds torch tensors and
`runtime._device_run_once_data_from_host` runs the recording, writing into `even` and `odd`.
The script is written for the device (`import pypto`, `torch.npu`, "npu:0" tensors):
    ptocpu run examples/pypto_function_deinterleave.py
    ptocpu run --platform atlas_a2 examples/pypto_function_deinterleave.py   # deinterleave not offered
"""
import torch

import pypto

ROWS, COLS, BLOCK = 10, 32, 4


def record():
    x = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "x")
    even = pypto.tensor([ROWS, COLS // 2], pypto.DT_FP32, "even")
    odd = pypto.tensor([ROWS, COLS // 2], pypto.DT_FP32, "odd")
    with pypto.function("DEINTERLEAVE_ROWS", x, even, odd):
        pypto.set_vec_tile_shapes(BLOCK, COLS)
        for b in pypto.loop((ROWS + BLOCK - 1) // BLOCK, name="rows", idx_name="b"):
            start = b * BLOCK
            rows = pypto.min(pypto.symbolic_scalar(ROWS) - start, pypto.symbolic_scalar(BLOCK))
            block = pypto.view(x, [BLOCK, COLS], [start, 0], valid_shape=[rows, COLS])
            lo, hi = pypto.deinterleave(block)
            pypto.assemble(lo, [start, 0], even)
            pypto.assemble(hi, [start, 0], odd)
    assert isinstance(even, pypto.tensor) and even.shape == [ROWS, COLS // 2]


def main():
    torch.npu.set_device(0)
    pypto.runtime._device_init()
    record()
    x = torch.arange(ROWS * COLS, dtype=torch.float32, device="npu:0").reshape(ROWS, COLS)
    even = torch.zeros(ROWS, COLS // 2, device="npu:0")
    odd = torch.zeros(ROWS, COLS // 2, device="npu:0")
    pypto.runtime._device_run_once_data_from_host(
        pypto.from_torch(x, "x"), pypto.from_torch(even, "even"), pypto.from_torch(odd, "odd"))
    torch.npu.synchronize()
    assert torch.equal(even.cpu(), x[:, 0::2].cpu()) and torch.equal(odd.cpu(), x[:, 1::2].cpu())
    pypto.runtime._device_fini()
    print(f"deinterleave of a {ROWS}x{COLS} tensor in blocks of {BLOCK} rows: even and odd columns match")


if __name__ == "__main__":
    main()
