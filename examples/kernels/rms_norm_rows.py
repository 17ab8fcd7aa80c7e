"""RMSNorm over row blocks: each [rows, hidden] tile normalised with pypto.rms_norm and a gamma.

Run: python examples/kernels/rms_norm_rows.py
"""
import numpy as np

import ptocpu as pypto

TILE_ROWS = 16
SHAPE = (4096, 4096)
EPS = 1e-6


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def rms_norm_kernel(x: pypto.Tensor(), gamma: pypto.Tensor(), out: pypto.Tensor()):
    rows, hidden = x.shape
    pypto.set_vec_tile_shapes(TILE_ROWS, hidden)
    for i in pypto.loop(rows // TILE_ROWS, name="LOOP_rows", idx_name="i"):
        offsets = [i * TILE_ROWS, 0]
        tile = pypto.view(x, [TILE_ROWS, hidden], offsets)
        pypto.assemble(pypto.rms_norm(tile, gamma, EPS), offsets, out)


def make_inputs(shape=SHAPE, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape, dtype=np.float32)
    gamma = rng.random(shape[-1:], dtype=np.float32)
    return [x, gamma, np.zeros_like(x)]


def golden(x, gamma):
    """The device's order in torch: mean of squares, eps inside the sqrt, divide, times gamma."""
    import torch

    t = torch.from_numpy(x)
    return t / torch.sqrt((t * t).mean(-1, keepdim=True) + EPS) * torch.from_numpy(gamma)


def main():
    x, gamma, out = make_inputs()
    rms_norm_kernel(x, gamma, out)
    rms_norm_kernel(x, gamma, out)
    err = np.abs(out - golden(x, gamma).numpy()).max()
    assert err < 1e-5, err
    print(f"rms_norm over {list(x.shape)}: max abs difference from the torch formula {err:.2e}")


if __name__ == "__main__":
    main()
