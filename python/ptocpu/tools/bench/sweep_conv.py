"""`ptocpu bench --sweep` cases of conv (docs/ops/conv.md) against torch's convolution of the same
operands: fp32 operands against torch.nn.functional.conv1d / conv2d; bf16 operands against torch
widening to fp32, convolving and rounding once (the same math as the cube's fp32 accumulation).
Results are compared within fp32 summation-order tolerances (the orders differ).

Ids read SW-CONV<rank>D-<shape class>.
"""
from __future__ import annotations

import numpy as np

import ptocpu

from .cases import Case, Tool, _random, _torch, torch

_TOL = {"fp32": (1e-4, 1e-4), "bf16": (1e-2, 1e-2)}  # bf16: the two results may round apart by an ulp
_DTYPE = {"fp32": ptocpu.DT_FP32, "bf16": ptocpu.DT_BF16}


def _conv(id_, x_shape, w_shape, stride=1, padding=0, groups=1, dtype="fp32") -> Case:
    nd = len(x_shape) - 2
    strides, paddings, dilations = [stride] * nd, [padding] * (2 * nd), [1] * nd

    def build(rng):
        return {"x": _random(rng, x_shape, dtype), "w": _random(rng, w_shape, dtype)}

    def tools(inp):
        x, w = ptocpu.asarray(inp["x"]), ptocpu.asarray(inp["w"])
        t = {"ptocpu": Tool(lambda: ptocpu.conv(x, w, _DTYPE[dtype], strides, paddings, dilations, groups=groups))}
        if torch is not None:
            conv = (torch.nn.functional.conv1d, torch.nn.functional.conv2d, torch.nn.functional.conv3d)[nd - 1]
            tx, tw = _torch(inp["x"]), _torch(inp["w"])
            if dtype == "fp32":
                t["torch"] = Tool(lambda: conv(tx, tw, stride=stride, padding=padding, groups=groups))
            else:  # widen (exact), the fp32 convolution, one rounding
                t["torch"] = Tool(lambda: conv(tx.float(), tw.float(), stride=stride, padding=padding,
                                               groups=groups).to(tx.dtype))
        return t

    def nbytes(inp):
        out = [x_shape[0], w_shape[0]] + [(x_shape[2 + d] + 2 * padding - w_shape[2 + d]) // stride + 1
                                          for d in range(nd)]
        return inp["x"].nbytes + inp["w"].nbytes + int(np.prod(out)) * inp["x"].itemsize

    call = f"[{', '.join(map(str, x_shape))}] * [{', '.join(map(str, w_shape))}] stride {stride} pad {padding}" + (
        f" groups {groups}" if groups > 1 else "")
    return Case(id_, "conv", call, dtype, build, tools, nbytes, tol=_TOL[dtype])


def conv_shapes() -> list[Case]:
    return [
        _conv("SW-CONV2D-8x64x56x56-K3", (8, 64, 56, 56), (64, 64, 3, 3), padding=1),
        _conv("SW-CONV2D-8x64x56x56-K3-BF16", (8, 64, 56, 56), (64, 64, 3, 3), padding=1, dtype="bf16"),
        _conv("SW-CONV2D-8x256x28x28-K1", (8, 256, 28, 28), (64, 256, 1, 1)),
        _conv("SW-CONV2D-8x128x56x56-K3-S2", (8, 128, 56, 56), (128, 128, 3, 3), stride=2, padding=1),
        _conv("SW-CONV2D-DEPTHWISE-8x64x56x56-K3", (8, 64, 56, 56), (64, 1, 3, 3), padding=1, groups=64),
        _conv("SW-CONV2D-DEPTHWISE-16x512x7x7-K3", (16, 512, 7, 7), (512, 1, 3, 3), padding=1, groups=512),
        _conv("SW-CONV1D-DEPTHWISE-8x32x1024-K7", (8, 32, 1024), (32, 1, 7), padding=3, groups=32),
        _conv("SW-CONV1D-16x128x1024-K5", (16, 128, 1024), (128, 128, 5), padding=2),
    ]


SWEEP = [conv_shapes]
