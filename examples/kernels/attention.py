"""Scaled dot-product attention as PyPTO's attention example writes it: matmul of q and kᵀ, a scale,
softmax, matmul with v — one loop iteration per batch.

Run: python examples/kernels/attention.py
"""
import numpy as np

import ptocpu as pypto

SHAPE = (32, 16, 256, 128)  # batch, heads, seq, head_dim


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def attention_kernel(q: pypto.Tensor(), k: pypto.Tensor(), v: pypto.Tensor(), output: pypto.Tensor()):
    batch, heads, seq, head_dim = q.shape
    scale = 1.0 / (head_dim ** 0.5)
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    pypto.set_vec_tile_shapes(1, 8, 16, head_dim)
    for b in pypto.loop(batch, name="LOOP_b", idx_name="b"):
        view_shape = [1, heads, seq, head_dim]
        q_b = pypto.view(q, view_shape, [b, 0, 0, 0])
        k_b = pypto.view(k, view_shape, [b, 0, 0, 0])
        v_b = pypto.view(v, view_shape, [b, 0, 0, 0])
        scores = pypto.matmul(q_b, pypto.transpose(k_b, 2, 3), out_dtype=pypto.DT_BF16)
        weights = pypto.softmax(pypto.mul(scores, scale), dim=-1)
        pypto.assemble(pypto.matmul(weights, v_b, out_dtype=pypto.DT_BF16), [b, 0, 0, 0], output)


def make_inputs(shape=SHAPE, seed: int = 0):
    import ml_dtypes

    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(shape, dtype=np.float32).astype(ml_dtypes.bfloat16) for _ in range(3))
    return [q, k, v, np.zeros_like(q)]


def golden(q, k, v):
    """torch in bf16: matmul, scale, softmax, matmul."""
    import torch

    q, k, v = (torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) for a in (q, k, v))
    scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / q.shape[-1] ** 0.5)
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def main():
    q, k, v, out = make_inputs()
    attention_kernel(q, k, v, out)
    attention_kernel(q, k, v, out)
    want = golden(q, k, v).float().numpy()
    err = np.abs(out.astype(np.float32) - want).max()
    assert err < 0.05, err
    print(f"attention over {list(q.shape)}: max abs difference from torch {err:.3f}")


if __name__ == "__main__":
    main()
