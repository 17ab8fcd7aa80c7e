"""`ptocpu bench --sweep` cases of cast (docs/ops/cast.md): every width pair of the chips' tables at
16M elements with the default mode, against torch's `.to(dtype)` (bit for bit: the values stay in the
target's range, where both truncate float -> integer and round float -> float to nearest even), plus
fp32 -> fp16 at 4K to 64M elements, 4-D and from a strided input, and the formats torch lacks
(HiFloat8, the fp4 pairs) with ptocpu alone.
"""
from __future__ import annotations

import functools
from typing import Callable

import ml_dtypes
import numpy as np

import ptocpu

from .cases import BF16, Case, Tool, _torch, compare, padded, torch

_N = {"4K": 1 << 12, "256K": 1 << 18, "16M": 1 << 24, "64M": 1 << 26}
_NP = {"fp32": np.float32, "fp16": np.float16, "bf16": BF16, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
       "int32": np.int32, "int64": np.int64, "fp8e4m3": np.dtype(ml_dtypes.float8_e4m3fn)}
_PTO = {"fp32": "DT_FP32", "fp16": "DT_FP16", "bf16": "DT_BF16", "int8": "DT_INT8", "uint8": "DT_UINT8",
        "int16": "DT_INT16", "int32": "DT_INT32", "int64": "DT_INT64", "fp8e4m3": "DT_FP8E4M3", "hf8": "DT_HF8",
        "fp4x2": "DT_FP4_E2M1X2"}
_TORCH = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "int8": "int8", "uint8": "uint8", "int16": "int16",
          "int32": "int32", "int64": "int64", "fp8e4m3": "float8_e4m3fn"}


def _values(rng: np.random.Generator, shape, src: str, dst: str) -> np.ndarray:
    """Values of src that land inside dst's range (so that torch's result is defined and equal)."""
    bound = {"int8": 100, "uint8": 200, "int16": 30000, "fp8e4m3": 400, "hf8": 30000, "fp4x2": 6}.get(dst, 60000)
    bound = min(bound, 400) if src == "fp8e4m3" else bound
    lo = 0 if dst == "uint8" or src == "uint8" else -bound
    a = rng.uniform(lo, bound, shape)
    if src.startswith("int") or src == "uint8":
        return np.rint(a).astype(_NP[src])
    return a.astype(np.float32).astype(_NP[src])


def _case(id_: str, src: str, dst: str, shape: tuple, strided: bool = False, tiny: bool = False) -> Case:
    def build(rng):
        a = _values(rng, shape, src, dst)
        return {"a": padded(a) if strided else a}

    def tools(inp):
        x = ptocpu.asarray(inp["a"])
        t = {"ptocpu": Tool(functools.partial(ptocpu.cast, x, getattr(ptocpu, _PTO[dst])))}
        if torch is not None and dst in _TORCH:
            ta = _torch(inp["a"]) if src != "fp8e4m3" else torch.from_numpy(inp["a"].view(np.uint8)).view(
                torch.float8_e4m3fn)
            to = functools.partial(ta.to, getattr(torch, _TORCH[dst]))
            # numpy has no fp8: torch's result is compared as its bytes
            t["torch"] = Tool((lambda: to().view(torch.uint8)) if dst == "fp8e4m3" else to)
        return t

    def nbytes(inp):
        n = int(np.prod(shape))
        out = {"hf8": 1, "fp4x2": 0.5}.get(dst) or np.dtype(_NP[dst]).itemsize
        return int(inp["a"].nbytes + n * out)

    call = f"cast({list(shape)} {src}{' padded rows' if strided else ''}, {_PTO[dst]})"
    check = (lambda ours, theirs: compare(ours.view(np.uint8), theirs, None)) if dst == "fp8e4m3" else None
    return Case(id_, "cast", call, src, build, tools, nbytes, tiny=tiny, check=check)


# (src, dst) width pairs of the chips' tables, the default mode.
_PAIRS = [("fp32", "fp16"), ("fp16", "fp32"), ("fp32", "bf16"), ("bf16", "fp32"), ("fp32", "int32"), ("int32", "fp32"),
          ("fp32", "int16"), ("fp32", "int64"), ("int64", "fp32"), ("fp16", "int8"), ("fp16", "uint8"),
          ("fp16", "int16"), ("fp16", "int32"), ("int8", "fp16"), ("uint8", "fp16"), ("int16", "fp16"),
          ("int16", "fp32"), ("bf16", "fp16"), ("bf16", "int32"), ("int32", "int64"), ("int64", "int32"),
          ("int32", "int16"), ("int8", "int32"), ("fp32", "fp8e4m3"), ("fp8e4m3", "fp32"), ("fp32", "hf8"),
          ("bf16", "fp4x2")]


def width_pairs() -> list[Case]:
    n = _N["16M"]
    return [_case(f"SW-CAST-{src}-{dst}-16M", src, dst, (n // 4096, 4096)) for src, dst in _PAIRS]


def sizes_and_layouts() -> list[Case]:
    out = [_case(f"SW-CAST-fp32-fp16-1d-{size}", "fp32", "fp16", (n,), tiny=n <= 4096) for size, n in _N.items()]
    out.append(_case("SW-CAST-fp32-fp16-4d-16M", "fp32", "fp16", (16, 16, 256, 256)))
    out.append(_case("SW-CAST-fp32-fp16-strided-16M", "fp32", "fp16", (4096, 4096), strided=True))
    out.append(_case("SW-CAST-fp32-int32-strided-16M", "fp32", "int32", (4096, 4096), strided=True))
    return out


SWEEP: list[Callable[[], list[Case]]] = [width_pairs, sizes_and_layouts]
