"""verify's cases of the layout family (docs/ops/layout.md): every op on every dtype of each
platform's row against numpy (and torch where it has the op), bit for bit -- data movement is
exact, and tril / triu against x times numpy's 0 / 1 mask, the device's arithmetic -- plus a
valid-shape case and the errors each page lists."""
from __future__ import annotations

import functools
from typing import Callable, Iterator

import numpy as np

import ptocpu

from .common import PLATFORMS, Case, cases_for, torch, _compare, _expect_error, _platform_dtypes, _random, _torch_reference

# Shapes per rank, small enough for the whole grid and with odd extents (edges of every block).
_SHAPES = {0: (), 1: (37,), 2: (19, 70), 3: (3, 17, 40), 4: (2, 3, 9, 33), 5: (2, 1, 3, 5, 18)}


def _ranks(platform: str, op: str, quick: bool) -> list[int]:
    row = {p["name"]: p for p in ptocpu.platform_table()}[platform]["ops"][op]
    lo, hi = row["rank"]
    ranks = list(range(lo, min(hi, 5) + 1))
    return ranks[-2:] if quick else ranks


def _error_cases(op: str, what: str, call: Callable, error: type, needle: str) -> Iterator[Case]:
    """The case "error: <what>" on every platform: call() (on an fp32 input) raises error with needle
    in its message."""
    for platform in PLATFORMS:
        yield Case(op, platform, "DT_FP32", f"error: {what}", lambda: _expect_error(call, error, needle))


def _data_cases(op: str, rng, quick: bool, make: Callable, label: str = "") -> Iterator[Case]:
    """make(rng, dtype name, rank) -> the (ptocpu result, reference) pairs of one case, per
    platform x dtype x rank of op's row."""
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, op):
            for rank in _ranks(platform, op, quick):
                def run(dtype=dtype, rank=rank):
                    return _compare(make(rng, dtype, rank))
                yield Case(op, platform, dtype, f"{label}rank {rank} {list(_SHAPES[rank])}", run)


def _partly_valid(a: np.ndarray, valid) -> ptocpu.Tensor:
    return ptocpu.view(ptocpu.asarray(a), list(a.shape), [0] * a.ndim, valid_shape=list(valid))


def _zero_past(a: np.ndarray, valid) -> np.ndarray:
    out = np.zeros_like(a)
    box = tuple(slice(0, v) for v in valid)
    out[box] = a[box]
    return out


@cases_for("reshape")
def _reshape_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        pairs = [(ptocpu.reshape(x, [-1]), x.reshape(-1)), (ptocpu.reshape(x, [1, -1]), x.reshape(1, -1))]
        if rank >= 2:
            t = np.swapaxes(x, 0, 1)  # a layout no view can flatten: the copy
            pairs.append((ptocpu.reshape(t, [t.shape[0], -1]), t.reshape(t.shape[0], -1)))
        return pairs
    yield from _data_cases("reshape", rng, quick, make)
    for platform in PLATFORMS:
        yield Case("reshape", platform, "DT_FP32", "error: element counts differ",
                   lambda: _expect_error(lambda: ptocpu.reshape(np.zeros((2, 3), np.float32), [4, 2]),
                                         ptocpu.ArgumentError, "does not hold the 6 elements"))
        yield Case("reshape", platform, "DT_FP32", "error: inplace=True on a layout that needs a copy",
                   lambda: _expect_error(lambda: ptocpu.reshape(np.zeros((2, 3), np.float32).T, [6], inplace=True),
                                         ptocpu.ArgumentError, "inplace=True shares"))


@cases_for("unsqueeze")
def _unsqueeze_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        return [(ptocpu.unsqueeze(x, d), np.expand_dims(x, d)) for d in range(-rank - 1, rank + 1)]
    yield from _data_cases("unsqueeze", rng, quick, make)
    yield from _error_cases("unsqueeze", "dim out of range", lambda: ptocpu.unsqueeze(np.zeros((2, 2), np.float32), 3),
                            ptocpu.IndexOutOfRange, "dim 3")


def _pairs(rank: int, platform: str) -> list[tuple[int, int]]:
    if platform != "cpu" and rank == 4:
        return [(0, 2), (1, 2), (1, 3), (2, 3)]
    if platform != "cpu" and rank == 5:
        return [(3, 4)]
    return [(a, b) for a in range(rank) for b in range(a + 1, rank)]


@cases_for("transpose")
def _transpose_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "transpose"):
            for rank in _ranks(platform, "transpose", quick):
                def run(platform=platform, dtype=dtype, rank=rank):
                    x = np.asarray(_random(rng, _SHAPES[rank], dtype))
                    pairs = []
                    for a, b in _pairs(rank, platform):
                        want = np.swapaxes(x, a, b).copy()
                        pairs.append((ptocpu.transpose(x, a, b), want))
                        pairs += [(ptocpu.transpose(x, a, b), t) for t in
                                  _torch_reference(lambda tx: tx.transpose(a, b).contiguous(), x, x)]
                    return _compare(pairs)
                yield Case("transpose", platform, dtype, f"rank {rank} {list(_SHAPES[rank])}, every pair", run)
        if platform != "cpu":
            yield Case("transpose", platform, "DT_FP32", "error: 4-D dims (0, 3)",
                       lambda: _expect_error(lambda: ptocpu.transpose(np.zeros((2, 3, 4, 5), np.float32), 0, 3),
                                             ptocpu.ArgumentError, "supported pairs"))


@cases_for("permute")
def _permute_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        pairs = []
        for _ in range(3):
            dims = [int(v) for v in rng.permutation(rank)]
            pairs.append((ptocpu.permute(x, dims), np.transpose(x, dims).copy()))
        return pairs
    yield from _data_cases("permute", rng, quick, make)
    yield from _error_cases("permute", "an axis twice", lambda: ptocpu.permute(np.zeros((2, 3), np.float32), [1, 1]),
                            ptocpu.ArgumentError, "twice")


@cases_for("concat")
def _concat_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        shape = _SHAPES[rank]
        pairs = []
        for dim in range(rank):
            parts = [_random(rng, shape[:dim] + (k,) + shape[dim + 1:], dtype) for k in (1, 4, 2)]
            want = np.concatenate(parts, dim)
            pairs.append((ptocpu.concat(parts, dim), want))
            pairs += [(ptocpu.concat(parts, dim), t) for t in
                      _torch_reference(lambda *ts: torch.cat(ts, dim), want, *parts)]
        return pairs
    yield from _data_cases("concat", rng, quick, make, "every dim, ")
    yield from _error_cases("concat", "shapes differ off dim",
                            lambda: ptocpu.concat([np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32)], 0),
                            ptocpu.ArgumentError, "only dim 0 may differ")


@cases_for("expand_clone")
def _expand_clone_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        target = _SHAPES[rank]
        shape = tuple(1 if i % 2 == 0 else s for i, s in enumerate(target))
        x = _random(rng, shape, dtype)
        want = np.broadcast_to(x, target).copy()
        return [(ptocpu.expand_clone(x, list(target)), want)]
    yield from _data_cases("expand_clone", rng, quick, make)
    yield from _error_cases("expand_clone", "a non-1 axis expands",
                            lambda: ptocpu.expand_clone(np.zeros((2, 3), np.float32), [4, 3]),
                            ptocpu.ArgumentError, "only size-1 axes expand")


@cases_for("clone")
def _clone_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        pairs = [(ptocpu.clone(x), x)]
        if rank >= 1:
            valid = tuple(max(1, s - 1) for s in x.shape)
            pairs.append((ptocpu.clone(_partly_valid(x, valid)), _zero_past(x, valid)))
        return pairs
    yield from _data_cases("clone", rng, quick, make, "whole and partly valid, ")


def _padding(rank: int, right: int, bottom: int):
    if rank == 1:
        return (0, right), [(0, right)]
    return (0, right, 0, bottom), [(0, 0)] * (rank - 2) + [(0, bottom), (0, right)]


def _fill_value(dtype: str):
    return 5 if dtype.startswith(("DT_INT", "DT_UINT")) else (True if dtype == "DT_BOOL" else -1.5)


@cases_for("pad")
def _pad_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        value = _fill_value(dtype)
        pairs = []
        for right, bottom in ((3, 2), (0, 5), (7, 0)):
            padding, widths = _padding(rank, right, bottom)
            want = np.pad(x, widths, constant_values=np.array(value).astype(x.dtype))
            pairs.append((ptocpu.pad(x, padding, "constant", value), want))
            pairs += [(ptocpu.pad(x, padding, "constant", value), t) for t in _torch_reference(
                lambda tx: torch.nn.functional.pad(tx, padding, value=value), want, x)]
        return pairs
    yield from _data_cases("pad", rng, quick, make)
    for platform in PLATFORMS:
        yield Case("pad", platform, "DT_FP32", "error: left padding",
                   lambda: _expect_error(lambda: ptocpu.pad(np.zeros((2, 2), np.float32), [1, 0, 0, 0]),
                                         ptocpu.ArgumentError, "only right and bottom"))
        yield Case("pad", platform, "DT_INT32", "error: a float value for an integer x",
                   lambda: _expect_error(lambda: ptocpu.pad(np.zeros((2, 2), np.int32), [0, 1, 0, 0], value=float("-inf")),
                                         ptocpu.ArgumentError, "is not floating"))


@cases_for("fillpad")
def _fillpad_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        value = _fill_value(dtype)
        valid = tuple(s // 2 for s in x.shape)
        want = np.full(x.shape, np.array(value).astype(x.dtype))
        box = tuple(slice(0, v) for v in valid)
        want[box] = x[box]
        return [(ptocpu.fillpad(_partly_valid(x, valid), "constant", value), want), (ptocpu.fillpad(x, value=value), x)]
    yield from _data_cases("fillpad", rng, quick, make, "valid half, ")
    yield from _error_cases("fillpad", "mode 'reflect'",
                            lambda: ptocpu.fillpad(np.zeros((2, 2), np.float32), "reflect"), ptocpu.ArgumentError,
                            "allowed: 'constant'")


def _masked(x: np.ndarray, diagonal: int, upper: bool) -> np.ndarray:
    """The device's tril / triu: x times a 0 / 1 mask in x's dtype (numpy / ml_dtypes arithmetic)."""
    ones = np.ones(x.shape[-2:])
    mask = (np.triu(ones, diagonal) if upper else np.tril(ones, diagonal)).astype(x.dtype)
    with np.errstate(invalid="ignore"):
        return (x * mask).astype(x.dtype)


def _triangle_cases(op: str, upper: bool, in_place: bool, rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        if x.dtype.kind == "f" or x.dtype.kind == "V":
            x.reshape(-1)[:3] = np.array([np.nan, np.inf, -2.0]).astype(x.dtype)  # masked: NaN, NaN, -0.0
        pairs = []
        for diagonal in (0, 2, -1):
            want = _masked(x, diagonal, upper)
            if in_place:
                t = ptocpu.asarray(x.copy())
                getattr(t, op)(diagonal)
                pairs.append((t, want))
            else:
                pairs.append((getattr(ptocpu, op)(x, diagonal), want))
        return pairs
    base = op.rstrip("_")
    for case in _data_cases(base, rng, quick, make, "diagonals 0, 2, -1, "):
        yield Case(op, case.platform, case.dtype, case.name, case.run)
    call = (lambda: getattr(ptocpu.asarray(np.zeros(3, np.float32)), op)()) if in_place else \
        (lambda: getattr(ptocpu, op)(np.zeros(3, np.float32)))
    yield from _error_cases(op, "rank 1", call, ptocpu.ArgumentError, "rank 1")


# tril / triu and their in-place forms tril_ / triu_: one registration each, the same cases.
for _base, _upper in (("tril", False), ("triu", True)):
    for _op, _in_place in ((_base, False), (_base + "_", True)):
        cases_for(_op)(functools.partial(_triangle_cases, _op, _upper, _in_place))


@cases_for("pack")
def _pack_cases(rng, quick) -> Iterator[Case]:
    def make(rng, dtype, rank):
        x = np.asarray(_random(rng, _SHAPES[rank], dtype))
        return [(ptocpu.pack(x), np.ascontiguousarray(x).reshape(-1).view(np.uint8))]
    yield from _data_cases("pack", rng, quick, make)
    for platform in PLATFORMS:
        yield Case("pack", platform, "DT_INT32", "upstream's example",
                   lambda: _compare([(ptocpu.pack(np.array([[0x03040506, 0x01050608]], np.int32)),
                                      np.array([6, 5, 4, 3, 8, 6, 5, 1], np.uint8))]))


@cases_for("unpack")
def _unpack_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        targets = _platform_dtypes(platform, "pack") if platform != "cpu" else _platform_dtypes(platform, "reshape")
        for target in targets:
            def run(target=target):
                npdt = np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, target)))
                raw = rng.integers(0, 256, size=24 * npdt.itemsize, dtype=np.uint8)
                if npdt == np.bool_:
                    raw &= 1
                return _compare([(ptocpu.unpack(raw, getattr(ptocpu, target)), raw.view(npdt))])
            yield Case("unpack", platform, "DT_UINT8", f"to {target}", run)
        yield Case("unpack", platform, "DT_UINT8", "error: length not a multiple of the width",
                   lambda: _expect_error(lambda: ptocpu.unpack(np.zeros(6, np.uint8), ptocpu.DT_FP32),
                                         ptocpu.ArgumentError, "not a multiple of 4"))
