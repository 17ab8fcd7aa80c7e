"""Rotary position embedding on interleaved pairs, written like PyPTO's interleave_rope case:
gathermask splits each tile into its even and odd lanes, four muls and an add / sub rotate them,
and the two halves are assembled side by side.

Run: python examples/kernels/rope.py
"""
import numpy as np

import ptocpu as pypto

S_TILE = 64
SHAPE = (64, 1, 4096, 64)  # batch, heads, seq, dim


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def rope_kernel(x: pypto.Tensor(), cos: pypto.Tensor(), sin: pypto.Tensor(), out: pypto.Tensor()):
    batch, _, seq, dim = x.shape
    half = dim // 2
    tile = [1, 1, S_TILE, dim]
    pypto.set_vec_tile_shapes(*tile)
    for b in pypto.loop(batch, name="b_loop"):
        for s_blk in pypto.loop(seq // S_TILE, name="s_loop"):
            offsets = [b, 0, s_blk * S_TILE, 0]
            x_t = pypto.view(x, tile, offsets)
            c_t = pypto.view(cos, tile, offsets)
            s_t = pypto.view(sin, tile, offsets)
            x_e, x_o = pypto.gathermask(x_t, pattern_mode=1), pypto.gathermask(x_t, pattern_mode=2)
            c_e, c_o = pypto.gathermask(c_t, pattern_mode=1), pypto.gathermask(c_t, pattern_mode=2)
            s_e, s_o = pypto.gathermask(s_t, pattern_mode=1), pypto.gathermask(s_t, pattern_mode=2)
            pypto.set_vec_tile_shapes(1, 1, S_TILE, half)
            ye = pypto.sub(pypto.mul(x_e, c_e), pypto.mul(x_o, s_e))
            yo = pypto.add(pypto.mul(x_e, s_o), pypto.mul(x_o, c_o))
            pypto.assemble(ye, [b, 0, s_blk * S_TILE, 0], out)
            pypto.assemble(yo, [b, 0, s_blk * S_TILE, half], out)
            pypto.set_vec_tile_shapes(*tile)


def make_inputs(shape=SHAPE, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape, dtype=np.float32)
    angle = rng.random(shape, dtype=np.float32) * np.float32(6.0)
    return [x, np.cos(angle), np.sin(angle), np.zeros_like(x)]


def golden(x, cos, sin):
    """The same rotation in torch: even / odd lanes by strided slicing, halves concatenated."""
    import torch

    x, c, s = (torch.from_numpy(a) for a in (x, cos, sin))
    xe, xo = x[..., 0::2], x[..., 1::2]
    ye = xe * c[..., 0::2] - xo * s[..., 0::2]
    yo = xe * s[..., 1::2] + xo * c[..., 1::2]
    return torch.cat([ye, yo], dim=-1)


def main():
    x, cos, sin, out = make_inputs()
    with pypto.platform("ascend950"):
        rope_kernel(x, cos, sin, out)
        rope_kernel(x, cos, sin, out)
    assert np.array_equal(out, golden(x, cos, sin).numpy())
    print(f"rope over {list(x.shape)}: matches torch bit for bit")


if __name__ == "__main__":
    main()
