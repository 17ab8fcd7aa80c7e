"""Softmax over row blocks, composed as PyPTO's softmax example composes it: amax, sub, exp, sum, div.

Each loop iteration takes one batch of a [batch, seq, 1, dim] tensor and normalises its last axis.
Run: python examples/kernels/softmax_rows.py
"""
import numpy as np

import ptocpu as pypto

SHAPE = (64, 1024, 1, 256)


def softmax_core(x: pypto.Tensor) -> pypto.Tensor:
    row_max = pypto.amax(x, dim=-1, keepdim=True)
    exp = pypto.exp(x - row_max)
    esum = pypto.sum(exp, dim=-1, keepdim=True)
    return exp / esum


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def softmax_kernel(input_tensor: pypto.Tensor(), output_tensor: pypto.Tensor()):
    bs, seqlen, head, dim = input_tensor.shape
    pypto.set_vec_tile_shapes(1, 4, 1, dim)
    for idx in pypto.loop(0, bs, 1, name="LOOP_L0_bIdx", idx_name="idx"):
        input_view = input_tensor[idx:idx + 1, :seqlen, :head, :dim]
        output_tensor[idx:, ...] = softmax_core(input_view)


def make_inputs(shape=SHAPE, seed: int = 0):
    x = np.random.default_rng(seed).random(shape, dtype=np.float32)
    return [x, np.zeros_like(x)]


def golden(x):
    import torch

    return torch.softmax(torch.from_numpy(x), dim=-1)


def main():
    x, out = make_inputs()
    softmax_kernel(x, out)
    softmax_kernel(x, out)
    err = np.abs(out - golden(x).numpy()).max()
    assert err < 1e-6, err
    print(f"softmax over {list(x.shape)}: max abs difference from torch.softmax {err:.2e}")


if __name__ == "__main__":
    main()
