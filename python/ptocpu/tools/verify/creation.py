"""verify's cases of the creation family (docs/ops/full.md, arange.md, one_hot.md, random.md), and the
family's references, written from the definitions with numpy alone (no ptocpu code):

- Philox4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11): the round and key schedule, vectorised over blocks;
  the tests anchor it to Random123's published known-answer vectors;
- uniform: element i is word i % 4 of the block with counter (i // 4, offset), mantissa bits minus one;
- normal: Box-Muller on the fp32 uniforms, each step an fp32 value rounded once from float64;
- arange: the device's tiled fp32 additions;
- full / zeros / ones: np.full with the device's fp32 literal; one_hot: rows of np.eye.
"""
from __future__ import annotations

import math
from typing import Iterator

import ml_dtypes
import numpy as np

import ptocpu

from .common import PLATFORMS, Case, _compare, _expect_error, _platform_dtypes, _same, cases_for

# ---------------------------------------------------------------- references

_MUL = (0xD2511F53, 0xCD9E8D57)
_WEYL = (0x9E3779B9, 0xBB67AE85)
_LOW32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(counters: np.ndarray, key: tuple[int, int], rounds: int = 10) -> np.ndarray:
    """Philox4x32 of every row of counters ([n, 4] words c0..c3) under key (k0, k1): [n, 4] uint32."""
    c = [counters[:, w].astype(np.uint64) for w in range(4)]
    k0, k1 = key
    for _ in range(rounds):
        p0 = np.uint64(_MUL[0]) * c[0]
        p1 = np.uint64(_MUL[1]) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & _LOW32,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & _LOW32]
        k0, k1 = (k0 + _WEYL[0]) & 0xFFFFFFFF, (k1 + _WEYL[1]) & 0xFFFFFFFF
    return np.stack(c, axis=1).astype(np.uint32)


def stream_words(seed: int, offset: int, n: int) -> np.ndarray:
    """Words 0 .. n-1 of the stream: block b has counter (b, offset) as two 64-bit halves and key
    (seed's low, high 32 bits); seed and offset are taken modulo 2^64."""
    seed, offset = seed % 2**64, offset % 2**64
    blocks = np.arange((n + 3) // 4, dtype=np.uint64)
    counters = np.stack([blocks & _LOW32, blocks >> np.uint64(32),
                         np.full_like(blocks, offset & 0xFFFFFFFF), np.full_like(blocks, offset >> 32)], axis=1)
    return philox4x32_10(counters, (seed & 0xFFFFFFFF, seed >> 32)).ravel()[:n]


_RANDOM_DTYPES = {"DT_FP32": np.dtype(np.float32), "DT_FP16": np.dtype(np.float16),
                  "DT_BF16": np.dtype(ml_dtypes.bfloat16)}
_KEPT_BITS = {"DT_FP32": 23, "DT_FP16": 10, "DT_BF16": 7}


def uniform_reference(shape, key: list, counter: list, dtype: str) -> np.ndarray:
    """pypto.uniform: the word's low mantissa bits as 1.m, minus one (exact in every dtype)."""
    n = math.prod(shape)
    bits = _KEPT_BITS[dtype]
    words = stream_words(key[0], counter[1], n) & np.uint32((1 << bits) - 1)
    return (words.astype(np.float64) * 2.0 ** -bits).astype(_RANDOM_DTYPES[dtype]).reshape(shape)


def normal_reference(shape, key: list, counter: list, dtype: str, exact: bool = False) -> np.ndarray:
    """pypto.normal: Box-Muller as the device sequence of fp32 ops, each rounded once from float64
    (exact=True: the whole formula in float64, for the error against the true transform)."""
    n = math.prod(shape)
    u = uniform_reference([(n + 1) // 2 * 2], key, counter, "DT_FP32")
    u1 = np.maximum(u[0::2], np.float32(1e-7))
    if exact:
        radius = np.sqrt(-2.0 * np.log(u1.astype(np.float64)))
        angle = 2.0 * math.pi * u[1::2].astype(np.float64)
        out = np.empty(u.size, np.float64)
        out[0::2], out[1::2] = radius * np.sin(angle), radius * np.cos(angle)
        return out[:n].reshape(shape)
    angle = u[1::2] * np.float32(2.0 * math.pi)
    radius = np.sqrt(np.log(u1.astype(np.float64)).astype(np.float32) * np.float32(-2.0))
    a64 = angle.astype(np.float64)
    out = np.empty(u.size, np.float32)
    out[0::2] = np.sin(a64).astype(np.float32) * radius
    out[1::2] = np.cos(a64).astype(np.float32) * radius
    return out[:n].astype(_RANDOM_DTYPES[dtype]).reshape(shape)


def arange_reference(start, end, step, tile: int | None = None) -> np.ndarray:
    """pypto.arange: int32 start + i * step, or the device's fp32 range built tile by tile: in a tile
    of N elements at t0, base = start + step * t0; e[j] = base + step * j (j < 8),
    e[j - 8] + 8 step (j < 64), e[j - 64] + 64 step, every operation in fp32."""
    floating = any(isinstance(v, float) for v in (start, end, step))
    if not floating:
        length = -(-(end - start) // step)  # ceil
        return (start + step * np.arange(length, dtype=np.int64)).astype(np.int32)
    length = math.ceil((end - start) / step)
    f32 = np.float32
    s, d = f32(start), f32(step)
    tile = length if tile is None else min(tile, length)
    out = np.empty(length, np.float32)
    for t0 in range(0, length, tile):
        count = min(tile, length - t0)
        base = s + d * f32(t0)
        e = np.empty(count, np.float32)
        head = min(count, 8)
        e[:head] = base + d * np.arange(head, dtype=np.float32)
        for j in range(8, min(count, 64)):
            e[j] = e[j - 8] + d * f32(8)
        row = e[:64].copy()
        for r0 in range(64, count, 64):
            row = row + d * f32(64)
            m = min(64, count - r0)
            e[r0:r0 + m] = row[:m]
        out[t0:t0 + count] = e
    return out


def full_reference(shape, value, dtype: str) -> np.ndarray:
    """np.full with the fill value as the device writes it: an fp32 literal for fp16 / bf16, truncated
    toward zero for integer dtypes."""
    npdt = np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))
    if npdt.kind in "fV" and npdt.itemsize < 8:
        value = np.float32(value)
    elif npdt.kind in "iu":
        value = math.trunc(value)
    return np.full(shape, value, dtype=npdt)


def one_hot_reference(x: np.ndarray, num_classes: int) -> np.ndarray:
    return np.eye(num_classes, dtype=np.int64)[x.astype(np.int64)]


# ---------------------------------------------------------------- cases

_SHAPES = {"cpu": [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 2), (1, 2, 1, 2, 1, 3)], "chip": [(7,), (3, 5), (2, 3, 4), (2, 1, 3, 2)]}


def _shapes(platform: str, quick: bool) -> list:
    shapes = _SHAPES["cpu" if platform == "cpu" else "chip"]
    return shapes[1:3] if quick else shapes


def _fill_value(dtype: str) -> float | int | bool:
    npdt = np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))
    if npdt == np.bool_:
        return True
    if npdt.kind in "iu":
        return 7 if npdt.kind == "u" else -7
    return 0.1 if dtype != "DT_FP8E8M0" else 0.5


@cases_for("full")
def _full_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "full"):
            for shape in _shapes(platform, quick):
                value = _fill_value(dtype)
                yield Case("full", platform, dtype, f"size {list(shape)} fill {value!r}",
                           lambda s=shape, v=value, d=dtype: _compare(
                               [(ptocpu.full(list(s), v, getattr(ptocpu, d)), full_reference(s, v, d))]))
        yield Case("full", platform, "DT_FP32", "page example (valid_shape [2, 2])",
                   lambda: _compare([(ptocpu.full([2, 2], 1.0, ptocpu.DT_FP32, valid_shape=[2, 2]),
                                      np.ones((2, 2), np.float32))]))
        yield Case("full", platform, "DT_INT32", "float fill truncated toward zero",
                   lambda: _compare([(ptocpu.full([3], -2.7, ptocpu.DT_INT32), np.full(3, -2, np.int32))]))
        if "DT_UINT8" in _platform_dtypes(platform, "full"):
            yield Case("full", platform, "DT_UINT8", "error: negative fill for an unsigned dtype",
                       lambda: _expect_error(lambda: ptocpu.full([2], -1, ptocpu.DT_UINT8), ptocpu.ArgumentError,
                                             "out of range"))
        if platform != "cpu":
            yield Case("full", platform, "DT_FP32", "error: rank 5",
                       lambda: _expect_error(lambda: ptocpu.full([1] * 5, 0, ptocpu.DT_FP32), ptocpu.ArgumentError,
                                             "rank 5"))
            yield Case("full", platform, "DT_FP64", "error: dtype",
                       lambda: _expect_error(lambda: ptocpu.full([2], 0, ptocpu.DT_FP64), ptocpu.DTypeError, "DT_FP64"))


def _constant_cases(op: str, value: int) -> Iterator[Case]:
    function = getattr(ptocpu, op)
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, op):
            for shape in _SHAPES["cpu" if platform == "cpu" else "chip"][:3]:
                yield Case(op, platform, dtype, f"{list(shape)}",
                           lambda s=shape, d=dtype: _compare([(function(*s, dtype=getattr(ptocpu, d)),
                                                               full_reference(s, value, d))]))
        yield Case(op, platform, "DT_FP32", "page examples (default dtype, a tuple / list size)",
                   lambda: _compare([(function(2, 3), np.full((2, 3), value, np.float32)),
                                     (function((2, 3), dtype=ptocpu.DT_INT32), np.full((2, 3), value, np.int32))]))
        if platform != "cpu":
            yield Case(op, platform, "DT_INT8", "error: dtype outside the page's list",
                       lambda: _expect_error(lambda: function(2, dtype=ptocpu.DT_INT8), ptocpu.DTypeError, "DT_INT8"))
            yield Case(op, platform, "DT_FP32", "error: empty size",
                       lambda: _expect_error(lambda: function(0, 3), ptocpu.ArgumentError, "empty"))


@cases_for("zeros")
def _zeros_cases(rng, quick) -> Iterator[Case]:
    yield from _constant_cases("zeros", 0)


@cases_for("ones")
def _ones_cases(rng, quick) -> Iterator[Case]:
    yield from _constant_cases("ones", 1)


_FLOAT_RANGES = [(1.0, 4.0, 0.5), (0.0, 30.0, 0.1), (-3.25, 80.0, 0.37), (100.0, -5.0, -0.7), (0.5, 3000.5, 1.0)]
_INT_RANGES = [(4,), (-2, 2), (10, 0, -2), (0, 1000, 7), (-2147483648, 2147483647, 1 << 26)]


@cases_for("arange")
def _arange_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        yield Case("arange", platform, "DT_FP32", "page examples",
                   lambda: _compare([(ptocpu.arange(1.0, 4.0, 0.5), np.arange(1.0, 4.0, 0.5, dtype=np.float32)),
                                     (ptocpu.arange(1.0, 4.0), np.arange(1.0, 4.0, dtype=np.float32)),
                                     (ptocpu.arange(4), np.arange(4, dtype=np.int32))]))
        for args in _INT_RANGES:
            yield Case("arange", platform, "DT_INT32", f"arange{args}",
                       lambda a=args: _compare([(ptocpu.arange(*a), np.arange(*a, dtype=np.int64).astype(np.int32))]))
        for tile in (None, 16, 100):
            for start, end, step in _FLOAT_RANGES[:2] if quick else _FLOAT_RANGES:
                def run(start=start, end=end, step=step, tile=tile):
                    if tile:
                        ptocpu.set_vec_tile_shapes(tile)
                    got = ptocpu.arange(start, end, step)
                    exact = start + step * np.arange(got.shape[0], dtype=np.float64)
                    return _compare([(got, arange_reference(start, end, step, tile), exact)])
                yield Case("arange", platform, "DT_FP32", f"arange({start}, {end}, {step}) tile {tile}", run)
        yield Case("arange", platform, "DT_INT32", "error: step 0",
                   lambda: _expect_error(lambda: ptocpu.arange(0, 4, 0), ptocpu.ArgumentError, "step must not be 0"))
        yield Case("arange", platform, "DT_FP32", "error: step against the direction",
                   lambda: _expect_error(lambda: ptocpu.arange(0.0, 4.0, -1.0), ptocpu.ArgumentError, "towards end"))
        yield Case("arange", platform, "DT_INT32", "error: beyond int32",
                   lambda: _expect_error(lambda: ptocpu.arange(2**31), ptocpu.ArgumentError, "int32 range"))


@cases_for("one_hot")
def _one_hot_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        yield Case("one_hot", platform, "DT_INT32", "page example",
                   lambda: _compare([(ptocpu.one_hot(np.array([0, 2, 4], np.int32), 5),
                                      np.array([[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 1]], np.int64))]))
        max_rank = 7 if platform == "cpu" else 3
        shapes = [(6,), (3, 4), (2, 3, 2)] + ([(2, 1, 2, 1, 2, 1, 2)] if max_rank == 7 else [])
        for dtype in _platform_dtypes(platform, "one_hot"):
            npdt = np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))
            for shape in shapes[:2] if quick else shapes:
                for classes in (1, 7, 130):
                    def run(shape=shape, classes=classes, npdt=npdt):
                        x = rng.integers(0, min(classes, np.iinfo(npdt).max + 1), size=shape).astype(npdt)
                        view = x[..., ::-1]  # non-contiguous
                        return _compare([(ptocpu.one_hot(view, classes), one_hot_reference(view, classes))])
                    yield Case("one_hot", platform, dtype, f"input {list(shape)} num_classes {classes}", run)
        yield Case("one_hot", platform, "DT_INT32", "error: value out of range",
                   lambda: _expect_error(lambda: ptocpu.one_hot(np.array([0, 5], np.int32), 5), ptocpu.IndexOutOfRange,
                                         "input value 5 at index position (1,)"))
        yield Case("one_hot", platform, "DT_INT32", "error: num_classes 0",
                   lambda: _expect_error(lambda: ptocpu.one_hot(np.array([0], np.int32), 0), ptocpu.ArgumentError,
                                         "positive"))
        yield Case("one_hot", platform, "DT_FP32", "error: float input",
                   lambda: _expect_error(lambda: ptocpu.one_hot(np.array([0.0], np.float32), 2), ptocpu.DTypeError,
                                         "DT_FP32"))


_SEEDS = [(1234, 1), (0, 0), (2**63 - 1, 12345678901), (-5, -1)]


def _ulps(got: np.ndarray, want: np.ndarray) -> int:
    """The largest distance in units in the last place (same dtype, finite values)."""
    width = {2: np.int16, 4: np.int32}[want.dtype.itemsize]
    g = np.ascontiguousarray(got).view(width).astype(np.int64)
    w = np.ascontiguousarray(want).view(width).astype(np.int64)
    sign = np.int64(1) << (8 * want.dtype.itemsize - 1)
    g = np.where(g < 0, -(g & (sign - 1)), g)
    w = np.where(w < 0, -(w & (sign - 1)), w)
    return int(np.max(np.abs(g - w))) if g.size else 0


def _random_cases(op: str) -> Iterator[Case]:
    function = getattr(ptocpu, op)
    for platform in PLATFORMS:
        dtypes = _platform_dtypes(platform, op)
        if not dtypes:
            yield Case(op, platform, "-", "error: not offered (UnsupportedError)",
                       lambda: _expect_error(lambda: function([4], [1], [0, 0], [1], ptocpu.DT_FP32),
                                             ptocpu.UnsupportedError, "ascend950"))
            continue
        for dtype in dtypes:
            for shape in ([5], [4, 4], [3, 5, 7], [2, 3, 4, 5]):
                for key, offset in _SEEDS:
                    def run(shape=shape, key=key, offset=offset, dtype=dtype):
                        got = function(shape, [key], [99, offset], [1], getattr(ptocpu, dtype))
                        if op == "uniform":
                            return _compare([(got, uniform_reference(shape, [key], [0, offset], dtype))])
                        want = normal_reference(shape, [key], [0, offset], dtype)
                        exact = normal_reference(shape, [key], [0, offset], dtype, exact=True)
                        ok, detail = _same(got, want)
                        if not ok:  # float64 libm and ours may round a rare value the other way
                            distance = _ulps(np.asarray(got.numpy()), want)
                            ok, detail = distance <= 1, f"{distance} ulps from the per-step reference"
                        return ok, detail, [(got, want, exact)]
                    yield Case(op, platform, dtype, f"shape {shape} key {key} offset {offset}", run)
        yield Case(op, platform, "DT_FP32", "error: key of two values",
                   lambda: _expect_error(lambda: function([4], [1, 2], [0, 0], [1], ptocpu.DT_FP32),
                                         ptocpu.ArgumentError, "key"))
        yield Case(op, platform, "DT_FP32", "error: alg 2",
                   lambda: _expect_error(lambda: function([4], [1], [0, 0], [2], ptocpu.DT_FP32),
                                         ptocpu.ArgumentError, "alg [2]"))
        yield Case(op, platform, "DT_INT32", "error: dtype",
                   lambda: _expect_error(lambda: function([4], [1], [0, 0], [1], ptocpu.DT_INT32),
                                         ptocpu.DTypeError, "DT_INT32"))


@cases_for("uniform")
def _uniform_cases(rng, quick) -> Iterator[Case]:
    page = np.array([[0.1689806, 0.9725481, 0.90036285, 0.16582811], [0.1454581, 0.48029935, 0.02495587, 0.99239147],
                     [0.02835405, 0.10649502, 0.45283175, 0.87260246], [0.6877538, 0.24809706, 0.95886254, 0.24039495]])
    for platform in ("cpu", "ascend950"):
        def example():
            got = ptocpu.uniform([4, 4], [1234], [0, 1], [1], ptocpu.DT_FP32).numpy()
            printed = np.array([[float(np.format_float_positional(v, precision=8)) for v in row] for row in got])
            same = bool(np.array_equal(printed, page))
            return same, "" if same else f"printed {printed.tolist()}", [(got, got)]
        yield Case("uniform", platform, "DT_FP32", "page example, as numpy prints it", example)
    yield from _random_cases("uniform")


@cases_for("normal")
def _normal_cases(rng, quick) -> Iterator[Case]:
    page = np.array([[-0.32364845, 1.8577391, 0.39556974, 0.2311697], [0.24243996, -1.9485782, -0.12983137, 2.7137496],
                     [1.6558666, 2.0938187, -0.90338254, 0.8765667], [0.86518306, 0.01034508, 0.2893259, 0.01748212]],
                    np.float32)
    for platform in ("cpu", "ascend950"):
        def example():
            got = ptocpu.normal([4, 4], [1234], [0, 1], [1], ptocpu.DT_FP32).numpy()
            worst = float(np.max(np.abs(got.astype(np.float64) - page)))
            return worst <= 4.5e-7, f"largest difference from the page {worst:.3g}", [(got, page)]
        yield Case("normal", platform, "DT_FP32", "page example within 4.5e-7", example)
    yield from _random_cases("normal")
