"""A scatter_ kernel (docs/ops/scatter.md + 7): scatter-add a long index / src pair block by block.

The output starts as a copy of `x` (`out[:] = x`), then each block of INDEX_ROWS_PER_BLOCK rows
of `index` and `src` is viewed (the tail block with a smaller valid_shape) and scattered into
`out` along dim 0 with reduce="add". Blocks run in order, so the contributions arrive in the
row-major order docs/ops/scatter.md fixes and the result equals one scatter_add over the whole index.
Run: PYTHONPATH=python:build python3 examples/scatter_kernel.py
"""
import numpy as np

import ptocpu as pypto

ROWS, COLS = 16, 32               # out / x
INDEX_ROWS, INDEX_ROWS_PER_BLOCK = 40, 16   # index / src: two full blocks and a tail of 8


@pypto.frontend.jit(debug_options={"runtime_debug_mode": 0})
def scatter_add_kernel(
    x: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    index: pypto.Tensor([INDEX_ROWS, COLS], pypto.DT_INT64),
    src: pypto.Tensor([INDEX_ROWS, COLS], pypto.DT_FP32),
    out: pypto.Tensor([ROWS, COLS], pypto.DT_FP32),
    block: int,
):
    out[:] = x
    # scatter_ tiles: tile[dim] covers the whole of input's and index's dim 0 (docs/kernel_model.md).
    pypto.set_vec_tile_shapes(out.shape[0], out.shape[1])
    n = index.shape[0]
    for i in pypto.loop(0, n, block):
        offsets = [i, 0]
        valid = [min(block, n - i), index.shape[1]]
        index_block = pypto.view(index, [block, index.shape[1]], offsets, valid_shape=valid)
        src_block = pypto.view(src, [block, src.shape[1]], offsets, valid_shape=valid)
        pypto.scatter_(out, 0, index_block, src_block, reduce="add")


def make_inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.integers(-8, 8, size=(ROWS, COLS)).astype(np.float32)
    index = rng.integers(0, ROWS, size=(INDEX_ROWS, COLS), dtype=np.int64)
    src = rng.integers(-4, 5, size=(INDEX_ROWS, COLS)).astype(np.float32)  # exact sums in fp32
    return x, index, src


def reference(x, index, src):
    import torch

    return torch.from_numpy(x.copy()).scatter_add_(0, torch.from_numpy(index), torch.from_numpy(src)).numpy()


def run(platform: str = "ascend950"):
    """Runs the kernel on `platform`; returns (x, index, src, out)."""
    x, index, src = make_inputs()
    out = np.zeros_like(x)
    with pypto.platform(platform):
        scatter_add_kernel(x, index, src, out, INDEX_ROWS_PER_BLOCK)
    return x, index, src, out


def main() -> int:
    x, index, src, out = run()
    ok = np.array_equal(out, reference(x, index, src))
    print(f"scatter_ kernel on ascend950: {INDEX_ROWS}x{COLS} index in blocks of {INDEX_ROWS_PER_BLOCK} rows "
          f"into {ROWS}x{COLS}; output {'matches' if ok else 'DIFFERS FROM'} torch.scatter_add_")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
