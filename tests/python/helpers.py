"""Test helpers shared by several test files (imported as `helpers`: pytest puts this directory
on sys.path, as it does for conftest.py)."""
from __future__ import annotations

import importlib.util
import pathlib
import types

import ml_dtypes
import numpy as np
import torch

import ptocpu

# The platforms, host first: the `platform` fixture of conftest.py runs a test on each in turn.
PLATFORMS = ["cpu", "ascend950", "atlas_a3", "atlas_a2"]

# (ptocpu dtype, numpy / ml_dtypes type, torch dtype), docs/dtypes.md.
DTYPES = [
    (ptocpu.DT_INT8, np.int8, torch.int8), (ptocpu.DT_INT16, np.int16, torch.int16),
    (ptocpu.DT_INT32, np.int32, torch.int32), (ptocpu.DT_INT64, np.int64, torch.int64),
    (ptocpu.DT_UINT8, np.uint8, torch.uint8), (ptocpu.DT_UINT16, np.uint16, torch.uint16),
    (ptocpu.DT_UINT32, np.uint32, torch.uint32), (ptocpu.DT_UINT64, np.uint64, torch.uint64),
    (ptocpu.DT_BOOL, np.bool_, torch.bool), (ptocpu.DT_FP16, np.float16, torch.float16),
    (ptocpu.DT_BF16, ml_dtypes.bfloat16, torch.bfloat16), (ptocpu.DT_FP32, np.float32, torch.float32),
    (ptocpu.DT_FP64, np.float64, torch.float64),
    (ptocpu.DT_FP8E4M3, ml_dtypes.float8_e4m3fn, torch.float8_e4m3fn),
    (ptocpu.DT_FP8E5M2, ml_dtypes.float8_e5m2, torch.float8_e5m2),
    (ptocpu.DT_FP8E8M0, ml_dtypes.float8_e8m0fnu, torch.float8_e8m0fnu),
]


EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str) -> types.ModuleType:
    """examples/<name>.py as a fresh module (its kernels and run() helpers)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def op_table(platform: str, op: str) -> dict:
    """op's row of the platform table: offered, rank (lo, hi), dtypes ("DT_..., DT_...")."""
    return next(p for p in ptocpu.platform_table() if p["name"] == platform)["ops"][op]


def np_dtype(name: str) -> np.dtype:
    """The numpy / ml_dtypes dtype of a DT_* name."""
    return np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, name)))


def dtypes_of(platform: str, op: str) -> list[np.dtype]:
    """The numpy / ml_dtypes dtypes of op's row on the platform (none where it is not offered)."""
    return [np_dtype(name) for name in op_table(platform, op)["dtypes"].split(", ") if name]


def ranks_of(platform: str, op: str, cap: int = 5) -> range:
    """The ranks of op's row on the platform, at most cap."""
    lo, hi = op_table(platform, op)["rank"]
    return range(lo, min(hi, cap) + 1)


def ub_bytes(tile, extent, elem: int) -> int:
    """The UB bytes of one tile of a tensor of shape extent (docs/kernel_model.md): the tile clipped
    to the extent, its last axis padded to 32 bytes."""
    t = [min(a, b) for a, b in zip(tile, extent)]
    return int(np.prod(t[:-1])) * ((t[-1] * elem + 31) // 32 * 32)


def bits(a) -> np.ndarray:
    """The raw bits of an array or ptocpu.Tensor, as unsigned integers of the element's width."""
    a = np.ascontiguousarray(a.numpy() if isinstance(a, ptocpu.Tensor) else a)
    return a.view(f"u{a.dtype.itemsize}")


def assert_same_bits(got, want: np.ndarray):
    """Same shape, dtype and bits (NaN payloads included)."""
    got = got.numpy() if isinstance(got, ptocpu.Tensor) else np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    same = bits(got) == bits(want)
    assert same.all(), f"{(~same).sum()} elements differ"


def assert_fp32_sum(got, exact64, abs_sum64, k, out_dtype=ptocpu.DT_FP32):
    """got is an fp32 sum of the exact products in some order, then rounded to out_dtype (the
    cube's matmul and conv): |got - exact| <= k * 2^-24 * sum|products| (+ half an ulp of out_dtype)."""
    got64 = np.asarray(got.numpy(), dtype=np.float64)
    out_eps = {ptocpu.DT_FP32: 2.0 ** -24, ptocpu.DT_FP16: 2.0 ** -11, ptocpu.DT_BF16: 2.0 ** -8}[out_dtype]
    bound = k * 2.0 ** -24 * abs_sum64 + out_eps * np.abs(exact64) + 1e-30
    assert (np.abs(got64 - exact64) <= bound * 1.0001).all(), np.max(np.abs(got64 - exact64) - bound)


def random_bits(rng: np.random.Generator, shape, dt: np.dtype) -> np.ndarray:
    """Any bit pattern of dt (NaNs and odd bools included): for ops that only move data."""
    return rng.integers(0, 256, size=(*shape, dt.itemsize), dtype=np.uint8).view(dt).reshape(shape)


def gather_rows_program():
    """Records pypto.function GATHER_ROWS (each 4-row block of an 8x8 x gathers its rows by a
    4-element index into out); returns torch x, index, a zero out and the torch result."""
    x = ptocpu.tensor([8, 8], ptocpu.DT_FP32)
    index = ptocpu.tensor([4], ptocpu.DT_INT64)
    out = ptocpu.tensor([8, 8], ptocpu.DT_FP32)
    with ptocpu.function("GATHER_ROWS", x, index, out):
        ptocpu.set_vec_tile_shapes(4, 8)
        for i in ptocpu.loop(2, name="LOOP_ROWS", idx_name="i"):
            rows = ptocpu.index_select(ptocpu.view(x, [4, 8], [4 * i, 0]), 0, index)
            ptocpu.assemble(rows, [4 * i, 0], out)
    tx = torch.arange(64, dtype=torch.float32).reshape(8, 8)
    ti = torch.tensor([3, 0, 2, 1])
    return tx, ti, torch.zeros(8, 8), torch.cat([tx[0:4][ti], tx[4:8][ti]])
