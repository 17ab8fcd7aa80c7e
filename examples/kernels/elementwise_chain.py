"""A tiled elementwise chain (docs/kernel_model.md#compiled-kernels): five ops per [8, cols] row tile.

The kernel is written as PyPTO's examples write them: a tile shape, a loop over row tiles, a view of
each input, the ops, and an assemble of the result. On its second call ptocpu runs it compiled: the
five ops fuse into one pass over each tile, the result goes straight into `out`, and the row tiles run
on all threads.
Run: python examples/kernels/elementwise_chain.py
"""
import numpy as np

import ptocpu as pypto

TILE_ROWS = 8
SHAPE = (4096, 4096)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def elementwise_chain_kernel(x: pypto.Tensor(), y: pypto.Tensor(), out: pypto.Tensor()):
    rows, cols = x.shape
    pypto.set_vec_tile_shapes(TILE_ROWS, cols)
    for i in pypto.loop(rows // TILE_ROWS, name="LOOP_rows", idx_name="i"):
        offsets = [i * TILE_ROWS, 0]
        a = pypto.view(x, [TILE_ROWS, cols], offsets)
        b = pypto.view(y, [TILE_ROWS, cols], offsets)
        t = pypto.add(a, b)
        t = pypto.mul(t, a)
        t = pypto.sub(t, b)
        t = pypto.mul(t, 0.5)
        t = pypto.maximum(t, a)
        pypto.assemble(t, offsets, out)


def make_inputs(shape=SHAPE, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.standard_normal(shape, dtype=np.float32)
    return [x, y, np.zeros_like(x)]


def golden(x, y):
    """The same math in torch, op by op."""
    import torch

    a, b = torch.from_numpy(x), torch.from_numpy(y)
    return torch.maximum(((a + b) * a - b) * 0.5, a)


def main():
    x, y, out = make_inputs()
    elementwise_chain_kernel(x, y, out)  # traced
    elementwise_chain_kernel(x, y, out)  # compiled
    assert np.array_equal(out, golden(x, y).numpy())
    print(f"elementwise chain over {list(x.shape)}: matches torch bit for bit")


if __name__ == "__main__":
    main()
