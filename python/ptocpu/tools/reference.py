"""Independent references (no ptocpu code) used by `ptocpu verify` and the tests."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np


def seed003_strided_slice(x, begin: list, end: list, strides: list, begin_mask: int = 0, end_mask: int = 0,
                          ellipsis_mask: int = 0, shrink_axis_mask: int = 0, new_axis_mask: int = 0):
    """The golden code of seed 003 (cann-bench strided_slice, section 5), as published: valid for
    positive strides and in-range values (docs/ops/strided_slice.md). Comments translated to English; the stored
    seed text lost its operator characters (`<`, `=`, `+=`, `&`, `<<`) in extraction, restored here
    the only way that makes the code run; `x.dim()` became `x.ndim` so that numpy arrays and
    torch tensors both work."""
    ndim = x.ndim
    shape = x.shape
    # Handle ellipsis_mask
    ellipsis_pos = None
    for i in range(32):
        if ellipsis_mask & (1 << i):
            ellipsis_pos = i
            break
    # Count new axes
    num_new_axis = 0
    for i in range(len(begin) if begin else 0):
        if new_axis_mask & (1 << i):
            num_new_axis += 1
    indices = []
    input_dim_idx = 0
    param_idx = 0
    if ellipsis_pos is not None:
        num_params = len(begin) if begin else 0
        num_ellipsis_dims = ndim - (num_params - num_new_axis - 1)
        if num_ellipsis_dims < 0:
            num_ellipsis_dims = 0
    while input_dim_idx < ndim or param_idx < (len(begin) if begin else 0):
        if param_idx < len(begin) and (new_axis_mask & (1 << param_idx)):
            indices.append(None)
            param_idx += 1
            continue
        if ellipsis_pos is not None and param_idx == ellipsis_pos:
            for _ in range(num_ellipsis_dims):
                indices.append(slice(None, None, None))
                input_dim_idx += 1
            param_idx += 1
            continue
        if input_dim_idx < ndim and param_idx < len(begin):
            dim_size = shape[input_dim_idx]
            b = begin[param_idx] if param_idx < len(begin) else 0
            e = end[param_idx] if param_idx < len(end) else dim_size
            s = strides[param_idx] if param_idx < len(strides) else 1
            if b < 0:
                b = b + dim_size
            if e < 0:
                e = e + dim_size
            if begin_mask & (1 << param_idx):
                b = 0 if s > 0 else dim_size - 1
            if end_mask & (1 << param_idx):
                e = dim_size if s > 0 else -1
            if shrink_axis_mask & (1 << param_idx):
                indices.append(b)
            else:
                indices.append(slice(b, e, s))
            input_dim_idx += 1
            param_idx += 1
        elif input_dim_idx < ndim:
            indices.append(slice(None, None, None))
            input_dim_idx += 1
        else:
            if param_idx < len(begin) and (new_axis_mask & (1 << param_idx)):
                indices.append(None)
            param_idx += 1
    return x[tuple(indices)]


def spec_strided_slice(x: np.ndarray, begin: list, end: list, strides: list, begin_mask: int = 0,
                       end_mask: int = 0, ellipsis_mask: int = 0, shrink_axis_mask: int = 0,
                       new_axis_mask: int = 0) -> np.ndarray:
    """docs/ops/strided_slice.md written directly in numpy, negative strides and clamping included."""
    bit = lambda mask, i: bool(mask >> i & 1)  # noqa: E731
    consuming = sum(1 for i in range(len(begin)) if not bit(new_axis_mask, i) and not bit(ellipsis_mask, i))
    indices, dim = [], 0
    for i, s in enumerate(strides):
        if bit(ellipsis_mask, i):
            for _ in range(max(0, x.ndim - consuming)):
                indices.append(slice(None))
                dim += 1
            continue
        if bit(new_axis_mask, i):
            indices.append(None)
            continue
        n = x.shape[dim]
        dim += 1
        if bit(shrink_axis_mask, i):
            b = 0 if bit(begin_mask, i) else begin[i] + (n if begin[i] < 0 else 0)
            if not 0 <= b < n:
                raise IndexError(f"shrink index {begin[i]} out of range for size {n}")
            indices.append(b)
            continue
        lo, hi = (0, n) if s > 0 else (-1, n - 1)
        clamp = lambda v: min(max(v, lo), hi)  # noqa: E731
        b = (0 if s > 0 else n - 1) if bit(begin_mask, i) else clamp(begin[i] + (n if begin[i] < 0 else 0))
        e = (n if s > 0 else -1) if bit(end_mask, i) else clamp(end[i] + (n if end[i] < 0 else 0))
        length = max(0, math.ceil((e - b) / s))
        if length == 0:
            indices.append(slice(0, 0))
        else:
            indices.append(slice(b, None if e < 0 else e, s))
    return np.array(x[tuple(indices)], dtype=x.dtype, copy=True)


def interleave(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """docs/ops/interleave.md in numpy: the 2n stream s[2k] = a[k], s[2k+1] = b[k], split in halves."""
    n = a.shape[-1]
    s = np.stack((a, b), -1).reshape(a.shape[:-1] + (2 * n,))
    return s[..., :n], s[..., n:]


def deinterleave(a: np.ndarray, b: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """docs/ops/deinterleave.md in numpy: even and odd elements of a (or of concat(a, b))."""
    c = a if b is None else np.concatenate((a, b), -1)
    return c[..., 0::2], c[..., 1::2]


def scatter_accumulator_dtype(dt: np.dtype) -> np.dtype:
    """docs/ops/scatter.md#arithmetic: fp32 for fp16 / bf16 / fp32, the dtype itself otherwise."""
    if dt in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)):
        return np.dtype(np.float32)
    return dt


def scatter(x: np.ndarray, dim: int, index: np.ndarray, src, reduce) -> np.ndarray:
    """docs/ops/scatter.md in numpy, on a copy of x: row-major contributions, the last write wins
    with reduce None, add / multiply in the accumulator dtype rounded once. src: an array (only
    its index-shaped prefix is read) or a scalar, converted to x's dtype first."""
    out = x.copy()
    d = dim % x.ndim
    if index.size == 0:
        return out
    src = np.asarray(src)
    if src.ndim == 0:
        src = src.astype(x.dtype)
    pos = list(np.indices(index.shape))
    pos[d] = index.astype(np.int64)
    target = np.ravel_multi_index(tuple(pos), x.shape).ravel()  # row-major order of positions
    if src.ndim == 0:
        v = np.broadcast_to(src, index.shape).ravel()
    else:
        v = src[tuple(slice(0, m) for m in index.shape)].ravel()
    flat = out.reshape(-1)
    if reduce is None:
        last = len(target) - 1 - np.unique(target[::-1], return_index=True)[1]  # last write wins
        flat[target[last]] = v[last]
        return out
    acc = flat.astype(scatter_accumulator_dtype(x.dtype))
    ufunc = np.add if reduce == "add" else np.multiply
    with np.errstate(over="ignore", invalid="ignore"):  # NaN and inf round as they are
        ufunc.at(acc, target, v.astype(acc.dtype))
        flat[...] = acc.astype(x.dtype)
    return out


def gather(x: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """docs/ops/gather.md in numpy: take_along_axis on x cropped to index's extent on every axis
    but dim (index.shape[dim] is free)."""
    d = dim % x.ndim
    crop = tuple(slice(None) if a == d else slice(0, m) for a, m in enumerate(index.shape))
    return np.take_along_axis(x[crop], index.astype(np.int64), axis=d)


def scatter_update(cache: np.ndarray, index: np.ndarray, src: np.ndarray) -> np.ndarray:
    """docs/ops/scatter_update.md in numpy, on a copy of cache, one (i, j) at a time in row-major
    order: a negative slot skips its row, a later write to a slot replaces an earlier one."""
    out = cache.copy()
    s = index.shape[1]
    for (i, j), slot in np.ndenumerate(index):
        if slot < 0:
            continue
        if cache.ndim == 2:
            out[slot] = src[i * s + j]
        else:
            out[slot // cache.shape[1], slot % cache.shape[1]] = src[i, j]
    return out


def index_add(x: np.ndarray, dim: int, index: np.ndarray, src: np.ndarray, alpha=1) -> np.ndarray:
    """docs/ops/index_add.md in numpy, on a copy of x, one index entry at a time. alpha is converted
    to x's dtype (integers: truncated toward zero; fp16 / bf16: through fp32) and counts as 1 within
    1e-6 of 1 (exactly 1 for fp64). fp16 / bf16: one fp32 accumulator per element, v = alpha * s in
    fp32 (rounded to the dtype on the last dim), acc += v in fp32, rounded once at the end; other
    floats: x = round(x + round(alpha * s)) per step in fp32 (fp64 for fp64); integers wrap."""
    out = x.copy()
    d = dim % x.ndim
    integer = x.dtype.kind in "iu"
    half = x.dtype.itemsize == 2 and not integer
    wide = x.dtype if integer else np.dtype(np.float64 if x.dtype == np.float64 else np.float32)
    a = np.array(int(alpha) if integer else np.float32(alpha) if half else alpha).astype(x.dtype)
    one = a == 1 if x.dtype == np.float64 else abs(float(np.float32(a)) - 1.0) <= np.float32(1e-6)
    a = a.astype(wide)
    acc = out.astype(wide)
    with np.errstate(over="ignore", invalid="ignore"):
        for i, t in enumerate(index):
            target = [slice(None)] * x.ndim
            target[d] = t
            v = np.take(src, i, axis=d).astype(wide)
            if not one:
                v = a * v
                if not half or d == x.ndim - 1:
                    v = v.astype(x.dtype).astype(wide)
            acc[tuple(target)] = acc[tuple(target)] + v
            if not half:
                acc[tuple(target)] = acc[tuple(target)].astype(x.dtype).astype(wide)
        touched = [slice(None)] * x.ndim
        touched[d] = np.unique(np.asarray(index, np.int64))
        out[tuple(touched)] = acc[tuple(touched)].astype(x.dtype)
    return out


def index_put(x: np.ndarray, indices, values: np.ndarray, accumulate: bool) -> np.ndarray:
    """docs/ops/index_put_.md in numpy, on a copy of x, one position at a time in index order:
    assignment, or an addition rounded to x's dtype (fp16 / bf16 through fp32; integers wrap)."""
    out = x.copy()
    wide = np.dtype(np.int64 if x.dtype.kind in "iu" else np.float64 if x.dtype == np.float64 else np.float32)
    with np.errstate(over="ignore"):
        for j in range(values.shape[0]):
            position = tuple(int(index[j]) for index in indices)
            update = values[j].astype(wide)
            out[position] = (out[position].astype(wide) + update if accumulate else update).astype(x.dtype)
    return out


GATHERMASK_LANES = {1: np.s_[..., 0::2], 2: np.s_[..., 1::2], 3: np.s_[..., 0::4], 4: np.s_[..., 1::4],
                    5: np.s_[..., 2::4], 6: np.s_[..., 3::4], 7: np.s_[...]}


def gathermask(x: np.ndarray, pattern_mode: int) -> np.ndarray:
    """docs/ops/gathermask.md in numpy: the lanes of the last axis the pattern picks."""
    return np.ascontiguousarray(x[GATHERMASK_LANES[pattern_mode]])


# ---------------------------------------------------------------- HiFloat8 (docs/dtypes.md#hifloat8)

def hifloat8_value(code: int) -> float:
    """A HiFloat8 code's value, read bit by bit: sign, the dot prefix code (11, 10, 01, 001, 0001,
    0000), the exponent in sign-magnitude with an implicit leading 1, the mantissa; 0x80 is NaN,
    S_11_0111_1 inf, dot 0000 with mantissa m the power 2^(m - 23)."""
    bits = format(code, "08b")
    sign = -1.0 if bits[0] == "1" else 1.0
    rest = bits[1:]
    if rest == "0000000":
        return math.nan if sign < 0 else 0.0
    for dot, width, mbits in (("11", 4, 1), ("10", 3, 2), ("01", 2, 3), ("001", 1, 3), ("0001", 0, 3)):
        if rest.startswith(dot):
            field, man = rest[len(dot):len(dot) + width], rest[len(dot) + width:]
            magnitude = int("1" + field[1:], 2) if width else 0
            exponent = -magnitude if width and field[0] == "1" else magnitude
            if dot == "11" and exponent == 15 and man == "1":
                return sign * math.inf
            return sign * (1 + int(man, 2) / 2 ** mbits) * 2.0 ** exponent
    return sign * 2.0 ** (int(rest[4:], 2) - 23)


HIFLOAT8_VALUES = np.array([hifloat8_value(c) for c in range(256)])


def to_hifloat8(x: np.ndarray, saturate: bool = False) -> np.ndarray:
    """float values (float64-exact) -> HiFloat8 codes: the nearest value, ties away from zero; from
    1.25 * 2^15 on inf (the largest value 2^15 with saturate), NaN 0x80, zero and -0 0x00."""
    finite = np.isfinite(HIFLOAT8_VALUES) & (HIFLOAT8_VALUES >= 0)
    codes = np.flatnonzero(finite)
    values = HIFLOAT8_VALUES[codes]
    order = np.argsort(values)
    codes, values = codes[order], values[order]
    ladder = np.append(values, 1.5 * values[-1])  # where inf stands
    a = np.abs(np.asarray(x, np.float64))
    hi = np.clip(np.searchsorted(ladder, a), 1, len(ladder) - 1)
    lo = hi - 1
    pick = np.where(a - ladder[lo] < ladder[hi] - a, lo, hi)  # a tie goes up: away from zero
    out = np.where(pick == len(ladder) - 1, 0x6E if saturate else 0x6F, codes[np.minimum(pick, len(codes) - 1)])
    out = np.where(np.isinf(a), 0x6E if saturate else 0x6F, out)
    out = np.where((out != 0) & np.signbit(x), out | 0x80, out)
    return np.where(np.isnan(a), 0x80, out).astype(np.uint8)


# ---------------------------------------------------------------- cast (docs/ops/cast.md)

def round_integral(x: np.ndarray, mode: int) -> np.ndarray:
    """float64 values rounded to integers by a CastMode (1 RINT .. 5 TRUNC)."""
    x = np.asarray(x, np.float64)
    if mode == 2:  # ties away from zero
        t = np.trunc(x)
        with np.errstate(invalid="ignore"):  # inf - inf is NaN: the comparison is false and t (inf) stays
            return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)
    return {1: np.rint, 3: np.floor, 4: np.ceil, 5: np.trunc}[mode](x)


def cast_to_integer(x: np.ndarray, dtype: np.dtype, mode: int, saturate: bool) -> np.ndarray:
    """Float or integer values -> an integer dtype: rounded by mode (floats), then clamped
    (saturate) or their low bits kept; NaN gives 0, +-inf the extremes of a 128-bit integer."""
    info = np.iinfo(dtype)
    if np.issubdtype(np.asarray(x).dtype, np.floating):
        r = [0 if math.isnan(v) else (2**127 - 1 if v > 0 else -2**127) if math.isinf(v) else int(v)
             for v in round_integral(x, mode).ravel()]
    else:
        r = [int(v) for v in np.asarray(x).ravel()]
    bits = 8 * np.dtype(dtype).itemsize
    if saturate:
        out = [min(max(v, info.min), info.max) for v in r]
    else:
        out = [(v % 2**bits) - (2**bits if info.min < 0 and v % 2**bits > info.max else 0) for v in r]
    return np.array(out, dtype=dtype).reshape(np.shape(x))
