"""A pypto.function program traced with `ptocpu run --trace` (see docs/tracing.md).

Records a two-block loop of view + index_select + assemble (each block of 4 rows gathers its rows
in the order given by `index`), runs it on torch tensors and checks the result against torch, once
through PyPTO's golden check (set_verify_golden_data) and once with torch.equal:
    ptocpu run --trace trace.json examples/pypto_function_gather_rows.py
The trace has one track `function GATHER_ROWS #1` holding the six replayed op calls.
"""
import torch

import pypto

pypto.runtime._device_init()
x = pypto.tensor([8, 8], pypto.DT_FP32, "x")
index = pypto.tensor([4], pypto.DT_INT64, "index")
out = pypto.tensor([8, 8], pypto.DT_FP32, "out")
with pypto.function("GATHER_ROWS", x, index, out):
    pypto.set_vec_tile_shapes(4, 8)
    for i in pypto.loop(2, name="LOOP_ROWS", idx_name="i"):
        block = pypto.view(x, [4, 8], [4 * i, 0])
        pypto.assemble(pypto.index_select(block, 0, index), [4 * i, 0], out)

tx = torch.arange(64, dtype=torch.float32).reshape(8, 8)
ti = torch.tensor([3, 0, 2, 1])
to = torch.zeros(8, 8)
expected = torch.cat([tx[0:4][ti], tx[4:8][ti]])
pypto.set_verify_options(enable_pass_verify=True)
pypto.set_verify_golden_data(goldens=[None, None, expected])
pypto.runtime._device_run_once_data_from_host(pypto.from_torch(tx, "x"), pypto.from_torch(ti, "index"),
                                              pypto.from_torch(to, "out"))
assert torch.equal(to, expected)
print("gathered rows match torch")
pypto.runtime._device_fini()
