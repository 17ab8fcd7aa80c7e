"""verify's cases of cast (docs/ops/cast.md): on every platform, every pair of dtypes it converts,
with the default mode and a directed one, saturation on and off. References (no ptocpu code):
numpy / ml_dtypes conversions to nearest even for float targets, HiFloat8's definition
(tools/reference.py), numpy's rounding functions with clamping or the low bits for integer targets,
and the 4-bit tables for the packed pairs. tests/python/test_cast.py checks every mode on every pair.
"""
from __future__ import annotations

from typing import Iterator

import ml_dtypes
import numpy as np

import ptocpu

from .. import reference
from .common import PLATFORMS, Case, _compare, _expect_error, _platform_dtypes, cases_for

_FLOAT_TARGETS = {"DT_FP32": np.float32, "DT_FP16": np.float16, "DT_BF16": ml_dtypes.bfloat16, "DT_FP64": np.float64,
                  "DT_FP8E4M3": ml_dtypes.float8_e4m3fn, "DT_FP8E5M2": ml_dtypes.float8_e5m2}
_INT_TARGETS = {"DT_INT8": np.int8, "DT_INT16": np.int16, "DT_INT32": np.int32, "DT_INT64": np.int64,
                "DT_UINT8": np.uint8, "DT_UINT16": np.uint16, "DT_UINT32": np.uint32, "DT_UINT64": np.uint64}
_SOURCES = {**_FLOAT_TARGETS, **_INT_TARGETS, "DT_INT4": ml_dtypes.int4}
_E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])
_E1M2 = np.array([0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, -0.0, -0.25, -0.5, -0.75, -1, -1.25, -1.5, -1.75])
# Where Atlas A2 / A3 honour satmode; their other integer targets saturate.
_A2A3_SATMODE = {("DT_FP16", "DT_UINT8"), ("DT_FP16", "DT_INT8"), ("DT_FP32", "DT_INT16"), ("DT_FP16", "DT_INT16"),
                 ("DT_INT64", "DT_INT32"), ("DT_INT32", "DT_INT16")}


def _source(rng: np.random.Generator, name: str, n: int) -> np.ndarray:
    """Values of dtype `name` in the target ranges and beyond them, with halfway points; every code
    of the byte formats numpy lacks."""
    if name == "DT_BOOL":
        return np.arange(256, dtype=np.uint8) & 1
    if name not in _SOURCES and name not in ("DT_FP4_E2M1X2", "DT_FP4_E1M2X2"):
        return np.arange(256, dtype=np.uint8)
    if name in ("DT_FP4_E2M1X2", "DT_FP4_E1M2X2"):
        return np.arange(256, dtype=np.uint8).reshape(16, 16)
    if name == "DT_INT4":
        return np.arange(-8, 8).astype(ml_dtypes.int4)
    dt = np.dtype(_SOURCES[name])
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -(1 << 40)), min(info.max, 1 << 40), n, endpoint=True).astype(dt)
    values = np.concatenate([rng.normal(0, 3, n // 2), rng.normal(0, 3e4, n // 4), np.arange(n // 4) / 2 - n // 16])
    with np.errstate(over="ignore"):
        return values.astype(dt)


def _pairs(platform: str) -> list[tuple[str, str]]:
    """The pairs the platform converts: every source of its row to every dtype cast accepts there."""
    with ptocpu.platform(platform):
        return [(src, dst) for src in _platform_dtypes(platform, "cast") for dst in ptocpu.DType.__members__
                if dst != src and _converts(src, dst)]


def _tensor(name: str, a: np.ndarray):
    """a as a ptocpu tensor of dtype `name` (byte codes viewed as the format)."""
    if name in _SOURCES:
        return ptocpu.asarray(a)
    return ptocpu.view(ptocpu.asarray(a), dtype=getattr(ptocpu, name))


def _converts(src: str, dst: str) -> bool:
    try:
        ptocpu.cast(_tensor(src, np.zeros((1, 2), _SOURCES.get(src, np.uint8))), getattr(ptocpu, dst))
    except ptocpu.DTypeError:
        return False
    return True


def _reference(platform: str, src: str, dst: str, a: np.ndarray, mode: int, satmode: int) -> np.ndarray | None:
    """The bits cast gives, or None where this module has no independent reference."""
    sat = satmode == 0
    if src not in _SOURCES and src not in ("DT_HF8", "DT_FP4_E2M1X2", "DT_FP4_E1M2X2"):
        return None  # the other byte formats: test_cast.py
    if dst in _INT_TARGETS:
        if platform in ("atlas_a2", "atlas_a3") and (src, dst) not in _A2A3_SATMODE:
            sat = True
        values = (reference.HIFLOAT8_VALUES[a] if src == "DT_HF8" else a.astype(np.float64)
                  if src not in _INT_TARGETS and src != "DT_INT4" else a.astype(np.int64))
        return reference.cast_to_integer(values, _INT_TARGETS[dst], mode if mode else 5, sat)
    if src in ("DT_FP4_E2M1X2", "DT_FP4_E1M2X2"):
        table = _E2M1 if src == "DT_FP4_E2M1X2" else _E1M2
        values = np.stack([table[a & 15], table[a >> 4]], -1).reshape(a.shape[0], -1)
        return values.astype(_FLOAT_TARGETS[dst]) if dst in _FLOAT_TARGETS else None
    if dst == "DT_HF8":
        return reference.to_hifloat8(a.astype(np.float64), sat)
    if dst in _FLOAT_TARGETS and mode in (0, 1) and not sat:  # to nearest even, overflowing
        values = reference.HIFLOAT8_VALUES[a] if src == "DT_HF8" else a
        with np.errstate(over="ignore", invalid="ignore"):
            return values.astype(_FLOAT_TARGETS[dst])
    return None


def _case(platform: str, src: str, dst: str, mode: int, satmode: int, rng: np.random.Generator) -> Case:
    def run():
        a = _source(rng, src, 512)
        t = _tensor(src, a)
        want = _reference(platform, src, dst, a, mode, satmode)
        with ptocpu.platform(platform):
            got = ptocpu.cast(t, getattr(ptocpu, dst), mode, satmode)
        if want is None:
            return True, "no independent reference here (tests/python/test_cast.py covers it)", []
        if dst == "DT_HF8":
            got = got.numpy().view(np.uint8)
        return _compare([(got, want)])
    return Case("cast", platform, src, f"{src} -> {dst} mode {mode} satmode {satmode}", run)


@cases_for("cast")
def cast_cases(rng: np.random.Generator, quick: bool) -> Iterator[Case]:
    for platform in PLATFORMS:
        pairs = _pairs(platform)
        if quick:
            pairs = pairs[::7]
        for src, dst in pairs:
            for mode, satmode in ((0, 1), (0, 0), (3, 1), (2, 0)):
                yield _case(platform, src, dst, mode, satmode, rng)
        yield Case("cast", platform, "DT_FP32", "an unsupported pair is a DTypeError",
                   lambda p=platform: _with(p, lambda: _expect_error(
                       lambda: ptocpu.cast(ptocpu.asarray(np.ones(3, np.float32)),
                                           ptocpu.DT_FP8E8M0 if p != "cpu" else ptocpu.DT_FP4_E2M1X2),
                       ptocpu.DTypeError if p != "cpu" else ptocpu.ArgumentError, "DT_")))
        yield Case("cast", platform, "DT_FP32", "mode 9 is an ArgumentError",
                   lambda p=platform: _with(p, lambda: _expect_error(
                       lambda: ptocpu.cast(ptocpu.asarray(np.ones(3, np.float32)), ptocpu.DT_FP16, 9),
                       ptocpu.ArgumentError, "CastMode")))


def _with(platform: str, call):
    with ptocpu.platform(platform):
        return call()
