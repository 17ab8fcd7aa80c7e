"""`ptocpu bench --sweep` cases of the layout family (docs/ops/layout.md): transposes of 2-D to 4-D
tensors (square, tall, wide, the attention head swap), permutes that move the last axis or keep it,
concat of two halves and of many small pieces along the first and the last axis, pad, fillpad,
tril / triu, expand_clone, clone and copying reshapes, pack / unpack; 16M elements (64 MB of fp32)
for the large cases, every dtype width, against torch eager doing the same copy.

Each op has its generator in SWEEP; `_case` builds one case from a ptocpu call and torch's.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

import ptocpu

from .cases import Case, Tool, _random, _torch, padded, torch

N = 1 << 24  # elements of a large case


def _shape(s) -> str:
    return "[" + ", ".join(str(v) for v in s) + "]"


def _case(id_: str, op: str, call: str, dtype: str, shapes: list, run: Callable, peer: Callable,
          strided: bool = False, out_elems: int | None = None, tiny: bool = False, lo: float = -1.0) -> Case:
    """run(*ptocpu tensors) and peer(*torch tensors) over random inputs of `shapes` (values in
    [lo, 1)); the bytes are the inputs' plus an output of out_elems (default: the inputs' count)."""
    def build(rng):
        arrays = [_random(rng, s, dtype, lo) for s in shapes]
        return {"arrays": [padded(a) for a in arrays] if strided else arrays}

    def tools(inp):
        views = [ptocpu.asarray(a) for a in inp["arrays"]]
        t = {"ptocpu": Tool(lambda: run(*views))}
        if torch is not None:
            tensors = [_torch(a) for a in inp["arrays"]]
            t["torch"] = Tool(lambda: peer(*tensors))
        return t

    def nbytes(inp):
        arrays = inp["arrays"]
        item = arrays[0].itemsize
        elems = sum(a.size for a in arrays)
        return elems * item + (out_elems if out_elems is not None else elems) * item

    return Case(id_, op, call, dtype, build, tools, nbytes, tiny=tiny)


def _contiguous(t):
    return t.contiguous()


def transpose_cases() -> list[Case]:
    def tr(id_, shape, a, b, dtype="fp32", tiny=False):
        return _case(id_, "transpose", f"x {_shape(shape)}, dims ({a}, {b})", dtype, [shape],
                     lambda x: ptocpu.transpose(x, a, b), lambda x: _contiguous(x.transpose(a, b)), tiny=tiny)
    return [
        tr("SW-TR-2d", (4096, 4096), 0, 1),
        tr("SW-TR-2d-fp16", (4096, 4096), 0, 1, "fp16"),
        tr("SW-TR-2d-int8", (4096, 4096), 0, 1, "int8"),
        tr("SW-TR-2d-fp64", (2048, 4096), 0, 1, "fp64"),
        tr("SW-TR-2d-tall", (N // 16, 16), 0, 1),
        tr("SW-TR-2d-wide", (16, N // 16), 0, 1),
        tr("SW-TR-2d-odd", (3001, 5003), 0, 1),
        tr("SW-TR-3d-bf16", (64, 512, 512), 1, 2, "bf16"),
        tr("SW-TR-4d-last2", (16, 16, 256, 256), 2, 3),
        tr("SW-TR-4d-heads-fp16", (8, 2048, 16, 128), 1, 2, "fp16"),
        tr("SW-TR-4d-02", (16, 64, 64, 256), 0, 2),
        tr("SW-TR-4d-13", (16, 64, 64, 256), 1, 3),
        tr("SW-TR-tiny", (16, 32), 0, 1, tiny=True),
    ]


def permute_cases() -> list[Case]:
    def pm(id_, shape, dims, dtype="fp32"):
        return _case(id_, "permute", f"x {_shape(shape)}, dims {list(dims)}", dtype, [shape],
                     lambda x: ptocpu.permute(x, list(dims)), lambda x: _contiguous(x.permute(*dims)))
    return [
        pm("SW-PM-4d-0213-fp16", (8, 2048, 16, 128), (0, 2, 1, 3), "fp16"),
        pm("SW-PM-4d-0231", (16, 64, 128, 128), (0, 2, 3, 1)),
        pm("SW-PM-4d-3102", (64, 16, 128, 128), (3, 1, 0, 2)),
        pm("SW-PM-3d-201", (256, 256, 256), (2, 0, 1)),
        pm("SW-PM-3d-021-int8", (256, 256, 256), (0, 2, 1), "int8"),
        # a few channels moved last and back (images: [N, C, H, W] <-> [N, H, W, C])
        pm("SW-PM-nchw-nhwc-c3", (8, 3, 224, 224), (0, 2, 3, 1)),
        pm("SW-PM-nchw-nhwc-c4-fp16", (64, 4, 128, 128), (0, 2, 3, 1), "fp16"),
        pm("SW-PM-nchw-nhwc-c2-int8", (16, 2, 512, 512), (0, 2, 3, 1), "int8"),
        pm("SW-PM-nhwc-nchw-c3", (8, 224, 224, 3), (0, 3, 1, 2)),
        pm("SW-PM-3d-210-lead2-fp16", (2, 528, 3302), (2, 1, 0), "fp16"),
        # small first and last dims swapped around a long one
        pm("SW-PM-3d-210-ends3-int16", (3, 1 << 20, 3), (2, 1, 0), "int16"),
        pm("SW-PM-4d-3120-ends2x4-bf16", (2, 262144, 8, 4), (3, 1, 2, 0), "bf16"),
    ]


def concat_cases() -> list[Case]:
    def cc(id_, shapes, dim, dtype="fp32", tiny=False):
        call = f"{len(shapes)} x {_shape(shapes[0])}" if len(set(shapes)) == 1 else " + ".join(_shape(s) for s in shapes)
        return _case(id_, "concat", f"{call}, dim {dim}", dtype, shapes,
                     lambda *xs: ptocpu.concat(list(xs), dim), lambda *xs: torch.cat(xs, dim), tiny=tiny)
    return [
        cc("SW-CC-halves-last", [(4096, 2048)] * 2, 1),
        cc("SW-CC-halves-first", [(2048, 4096)] * 2, 0),
        cc("SW-CC-many128-first", [(128, 1024)] * 128, 0),
        cc("SW-CC-many128-last", [(1024, 128)] * 128, 1),
        cc("SW-CC-many64-rows4", [(N // 256, 4)] * 64, 1),
        cc("SW-CC-many32-rows16-fp16", [(N // 512, 16)] * 32, 1, "fp16"),
        # columns of one or two elements side by side (pairs and triples of scalars per row)
        cc("SW-CC-columns1", [(N // 8, 1)] * 2, 1),
        cc("SW-CC-columns1-fp16", [(N // 8, 1)] * 3, 1, "fp16"),
        cc("SW-CC-columns2-int8", [(N // 8, 2), (N // 8, 1)], 1, "int8"),
        cc("SW-CC-ragged-mid", [(64, 64 * (i + 1), 64) for i in range(8)], 1),
        cc("SW-CC-many-tiny", [(4, 8)] * 16, 0, tiny=True),
    ]


def _pad_widths(shape, right, bottom):
    out = list(shape)
    out[-1] += right
    if len(shape) > 1:
        out[-2] += bottom
    return int(np.prod(out))


def pad_cases() -> list[Case]:
    def pd(id_, shape, right, bottom, dtype="fp32", strided=False):
        padding = (0, right) if len(shape) == 1 else (0, right, 0, bottom)
        return _case(id_, "pad", f"x {_shape(shape)}{' padded rows' if strided else ''}, padding {padding}", dtype,
                     [shape], lambda x: ptocpu.pad(x, padding, value=1.0),
                     lambda x: torch.nn.functional.pad(x, padding, value=1.0), strided=strided,
                     out_elems=_pad_widths(shape, right, bottom))
    return [
        pd("SW-PAD-right", (4096, 4000), 96, 0),
        pd("SW-PAD-both", (4000, 4000), 96, 96),
        pd("SW-PAD-bottom-fp16", (4000, 4096), 0, 96, "fp16"),
        pd("SW-PAD-4d-bf16", (16, 16, 250, 250), 6, 6, "bf16"),
        pd("SW-PAD-narrow", (N // 8, 7), 1, 0),
        pd("SW-PAD-1d", (N - 5,), 5, 0),
        pd("SW-PAD-strided", (4096, 4000), 96, 0, strided=True),
    ]


def fillpad_cases() -> list[Case]:
    def fp(id_, shape, valid, dtype="fp32"):
        def build(rng):
            return {"arrays": [_random(rng, shape, dtype)]}

        def tools(inp):
            x = inp["arrays"][0]
            view = ptocpu.view(ptocpu.asarray(x), list(shape), [0, 0], valid_shape=list(valid))  # made untimed
            t = {"ptocpu": Tool(lambda: ptocpu.fillpad(view, value=-1.0))}
            if torch is not None:  # the valid block padded out to the shape
                block = _torch(x)[:valid[0], :valid[1]]
                widths = (0, shape[1] - valid[1], 0, shape[0] - valid[0])
                t["torch"] = Tool(lambda: torch.nn.functional.pad(block, widths, value=-1.0))
            return t

        return Case(id_, "fillpad", f"x {_shape(shape)} valid {_shape(valid)}", dtype, build, tools,
                    lambda inp: (valid[0] * valid[1] + shape[0] * shape[1]) * inp["arrays"][0].itemsize)
    return [
        fp("SW-FP-2d", (4096, 4096), (4000, 4000)),
        fp("SW-FP-2d-fp16", (4096, 4096), (4096, 3000), "fp16"),
        fp("SW-FP-rows", (N // 64, 64), (N // 64 - 7, 50)),
    ]


def triangle_cases() -> list[Case]:
    # Values in [0, 1): the device's mask multiply and torch's zeros agree there (a masked
    # negative is -0.0 on the device, docs/ops/tril.md), so torch's own tril / triu is the peer.
    def tri(id_, op, shape, diagonal, dtype="fp32"):
        return _case(id_, op, f"x {_shape(shape)} in [0, 1), diagonal {diagonal}", dtype, [shape],
                     lambda x: getattr(ptocpu, op)(x, diagonal), lambda x: getattr(torch, op)(x, diagonal), lo=0.0)
    return [
        tri("SW-TRIL-2d", "tril", (4096, 4096), 0),
        tri("SW-TRIL-3d-fp16", "tril", (64, 512, 512), -1, "fp16"),
        tri("SW-TRIU-2d", "triu", (4096, 4096), 1),
        tri("SW-TRIU-3d-bf16", "triu", (256, 256, 256), 0, "bf16"),
        tri("SW-TRIU-wide", "triu", (512, 32768), 100),
    ]


def expand_clone_cases() -> list[Case]:
    def ex(id_, shape, target, dtype="fp32"):
        return _case(id_, "expand_clone", f"x {_shape(shape)} -> {_shape(target)}", dtype, [shape],
                     lambda x: ptocpu.expand_clone(x, list(target)), lambda x: _contiguous(x.expand(*target)),
                     out_elems=int(np.prod(target)))
    return [
        ex("SW-EX-rows", (1, 4096), (4096, 4096)),
        ex("SW-EX-cols", (4096, 1), (4096, 4096)),
        ex("SW-EX-4d-fp16", (8, 1, 2048, 128), (8, 16, 2048, 128), "fp16"),
        ex("SW-EX-cols-int8", (N // 64, 1), (N // 64, 64), "int8"),
    ]


def clone_cases() -> list[Case]:
    def cl(id_, shape, dtype="fp32", strided=False):
        return _case(id_, "clone", f"x {_shape(shape)}{' padded rows' if strided else ''}", dtype, [shape],
                     ptocpu.clone, lambda x: x.clone(memory_format=torch.contiguous_format), strided=strided)
    return [cl("SW-CL-contiguous", (4096, 4096)), cl("SW-CL-strided-fp16", (4096, 4096), "fp16", strided=True)]


def reshape_cases() -> list[Case]:
    def rs(id_, shape, dtype="fp32"):  # reshaping a transposed tensor copies
        rows, cols = shape
        return _case(id_, "reshape", f"x {_shape(shape)} transposed, to [{rows * cols}]", dtype, [shape],
                     lambda x: ptocpu.reshape(_transposed(x), [rows * cols]),
                     lambda x: x.t().reshape(rows * cols))
    return [rs("SW-RS-transposed", (4096, 4096)), rs("SW-RS-transposed-fp16", (2048, 8192), "fp16")]


def _transposed(x):
    """A zero-copy transposed view of a ptocpu tensor (numpy's .T over the same memory)."""
    return ptocpu.asarray(x.numpy().T)


def pack_cases() -> list[Case]:
    def pk(id_, shape, dtype):
        return _case(id_, "pack", f"x {_shape(shape)}", dtype, [shape], ptocpu.pack,
                     lambda x: x.reshape(-1).view(torch.uint8).clone())
    return [pk("SW-PACK-fp32", (4096, 4096), "fp32"), pk("SW-PACK-bf16-4d", (16, 16, 256, 256), "bf16")]


def unpack_cases() -> list[Case]:
    def build(rng):
        return {"arrays": [rng.integers(0, 256, size=4 * N, dtype=np.uint8)]}

    def tools(inp):
        x = inp["arrays"][0]
        view = ptocpu.asarray(x)
        t = {"ptocpu": Tool(lambda: ptocpu.unpack(view, ptocpu.DT_FP32))}
        if torch is not None:
            tx = torch.from_numpy(x)
            t["torch"] = Tool(lambda: tx.view(torch.float32).clone())
        return t

    return [Case("SW-UNPACK-fp32", "unpack", f"x [{4 * N}] uint8 to DT_FP32", "uint8", build, tools,
                 lambda inp: 2 * inp["arrays"][0].nbytes)]


def unsqueeze_cases() -> list[Case]:
    return [_case("SW-UNSQ-tiny", "unsqueeze", "x [64, 64], dim 1 (a view)", "fp32", [(64, 64)],
                  lambda x: ptocpu.unsqueeze(x, 1), lambda x: x.unsqueeze(1), out_elems=0, tiny=True)]


SWEEP: list[Callable[[], list[Case]]] = [] if torch is None else [
    transpose_cases, permute_cases, concat_cases, pad_cases, fillpad_cases, triangle_cases, expand_clone_cases,
    clone_cases, reshape_cases, pack_cases, unpack_cases, unsqueeze_cases,
]
