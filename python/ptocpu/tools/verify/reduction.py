"""verify's cases of the reduction family (docs/ops/reduction.md) and its independent references:

- the documented order of the float sums, products and scans written again in numpy (float32 /
  float64 arithmetic, one operation at a time): ptocpu must match it bit for bit;
- float64 results and the error bound of that order (docs/ops/reduction.md#error-bounds): the
  order itself must stay within it;
- integer math (wrap-around in the dtype, int32 for cumsum) and numpy's max / argmax with the
  page's NaN and signed-zero rules: bit for bit.
"""
from __future__ import annotations

import math
from typing import Callable, Iterator

import ml_dtypes
import numpy as np

import ptocpu

from .common import PLATFORMS, Case, _compare, _expect_error, _platform_dtypes, _random, cases_for

LANES, CHUNK, ROW_BLOCK, SCAN_BLOCK = 32, 4096, 128, 4096


def _np(dtype: str) -> np.dtype:
    return np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))


def is_float(dt: np.dtype) -> bool:
    return np.dtype(dt).kind in "fV"


def compute_dtype(dt: np.dtype) -> np.dtype:
    """float64 for float64, float32 for the other floats, the dtype itself for integers."""
    dt = np.dtype(dt)
    if not is_float(dt):
        return dt
    return np.dtype(np.float64) if dt == np.float64 else np.dtype(np.float32)


# ---------------------------------------------------------------- layout and order

def contiguous_axis_reduced(shape, strides, dim: int) -> bool:
    """Whether ptocpu reads the reduced axis as rows (it is the innermost in memory, ties included)
    rather than as columns: the rule of docs/ops/reduction.md#order, from element strides."""
    dim %= len(shape)
    if shape[dim] <= 1:
        return True
    kept = [abs(s) for d, (n, s) in enumerate(zip(shape, strides)) if d != dim and n > 1]
    return not kept or abs(strides[dim]) <= min(kept)


def element_strides(a) -> tuple:
    a = a.numpy() if isinstance(a, ptocpu.Tensor) else np.asarray(a)
    return tuple(s // a.itemsize for s in a.strides)


def _tree(parts: list, op):
    """The pairwise tree: the first power-of-two block of parts, then the rest."""
    if len(parts) == 1:
        return parts[0]
    half = 1 << ((len(parts) - 1).bit_length() - 1)
    return op(_tree(parts[:half], op), _tree(parts[half:], op))


def _ops(dt: np.dtype, product: bool):
    return (np.multiply if product else np.add), dt.type(1 if product else 0)


def ordered_reduce(x: np.ndarray, dim: int, rows: bool, product: bool = False) -> np.ndarray:
    """x summed (multiplied) over dim in ptocpu's order, in x's dtype (the compute type), keepdims.
    rows: lanes of 32 over chunks of 4096 then a tree of chunks; else sequential blocks of 128
    then a tree of blocks. Integer dtypes wrap."""
    op, ident = _ops(x.dtype, product)
    xm = np.moveaxis(x, dim, -1)
    lead = xm.shape[:-1]
    n = xm.shape[-1]
    X = xm.reshape(-1, n)
    m_rows = X.shape[0]
    with np.errstate(all="ignore"):
        if n == 0:
            result = np.full(m_rows, ident, x.dtype)
        elif rows:
            chunks = []
            for c0 in range(0, n, CHUNK):
                part = X[:, c0:c0 + CHUNK]
                pad = (-part.shape[1]) % LANES
                part = np.concatenate([part, np.full((m_rows, pad), ident, x.dtype)], axis=1)
                groups = part.reshape(m_rows, -1, LANES)
                acc = np.full((m_rows, LANES), ident, x.dtype)
                for i in range(groups.shape[1]):
                    acc = op(acc, groups[:, i, :])
                s = LANES // 2
                while s:
                    acc[:, :s] = op(acc[:, :s], acc[:, s:2 * s])
                    s //= 2
                chunks.append(acc[:, 0].copy())
            result = _tree(chunks, op)
        else:
            blocks = []
            for r0 in range(0, n, ROW_BLOCK):
                acc = np.full(m_rows, ident, x.dtype)
                for r in range(r0, min(n, r0 + ROW_BLOCK)):
                    acc = op(acc, X[:, r])
                blocks.append(acc)
            result = _tree(blocks, op)
    return np.expand_dims(np.asarray(result, x.dtype).reshape(lead), dim % x.ndim)


def ordered_scan(x: np.ndarray, dim: int, product: bool = False) -> np.ndarray:
    """x scanned along dim in ptocpu's order, in x's dtype: blocks of 4096, each from the
    identity; block k's outputs are offset_k (+) local value."""
    op, ident = _ops(x.dtype, product)
    xm = np.moveaxis(x, dim, -1)
    n = xm.shape[-1]
    X = xm.reshape(-1, n)
    out = np.empty_like(X)
    offset = np.full(X.shape[0], ident, x.dtype)
    with np.errstate(all="ignore"):
        for b0 in range(0, n, SCAN_BLOCK):
            block = X[:, b0:b0 + SCAN_BLOCK]
            local = op.accumulate(np.concatenate([np.full((X.shape[0], 1), ident, x.dtype), block], axis=1),
                                  axis=1, dtype=x.dtype)[:, 1:]
            out[:, b0:b0 + block.shape[1]] = op(offset[:, None], local)
            offset = op(offset, local[:, -1])
    return np.moveaxis(out.reshape(xm.shape), -1, dim % x.ndim)


def sum_terms(n: int) -> int:
    """The most roundings one element of an n-element sum passes through in ptocpu's order."""
    if n <= 1:
        return 0
    # rows: 127 in a lane of 128, 5 lane folds, the chunk tree; columns: 127 in a block of 128 and
    # the block tree (never more than the rows' count).
    return min(n - 1, 132 + math.ceil(math.log2(math.ceil(n / ROW_BLOCK))))


def scan_terms(n: int) -> int:
    """The same for one output of an n-element scan (local chain, offset chain, final step)."""
    return min(n, SCAN_BLOCK) + math.ceil(n / SCAN_BLOCK) - 1 if n else 0


def gamma(k: int, u: float) -> float:
    return k * u / (1 - k * u)


def unit_roundoff(dt: np.dtype) -> float:
    return float(np.finfo(compute_dtype(dt)).eps) / 2


def output_roundoff(dt: np.dtype) -> float:
    """Half an ulp, relative, of the output dtype (0 when the output is the compute type)."""
    if compute_dtype(dt) == dt:
        return 0.0
    return float(ml_finfo(dt).eps) / 2


def ml_finfo(dt: np.dtype):
    return ml_dtypes.finfo(np.dtype(dt))


def within_sum_bound(got: np.ndarray, x: np.ndarray, dim: int, product: bool = False) -> tuple[bool, str]:
    """|got - exact| <= gamma_k * sum|x| (+ the output rounding) for sums; the relative form
    gamma_k * |exact| for products (no under- / overflow in the data)."""
    x64 = x.astype(np.float64)
    n = x.shape[dim]
    u = unit_roundoff(x.dtype)
    k = (n - 1 if product else sum_terms(n))
    exact = np.prod(x64, axis=dim, keepdims=True) if product else np.sum(x64, axis=dim, keepdims=True)
    scale = np.abs(exact) if product else np.sum(np.abs(x64), axis=dim, keepdims=True)
    # float64 data: the float64 reference rounds as often as ptocpu does, so the bound counts twice.
    bound = (2 if x.dtype == np.float64 else 1) * gamma(k, u) * scale
    bound += output_roundoff(x.dtype) * np.abs(exact) * (1 + gamma(k, u))
    return _within(got, exact, bound, x.dtype)


def _within(got: np.ndarray, exact: np.ndarray, bound: np.ndarray, dt: np.dtype) -> tuple[bool, str]:
    """err <= bound wherever the exact result is inside the output dtype's range (beyond it the
    output overflows, as it must)."""
    err = np.abs(got.astype(np.float64).reshape(exact.shape) - exact)
    bad = ~(err <= bound) & (np.abs(exact) <= float(ml_finfo(dt).max))
    if bad.any():
        i = np.argwhere(bad)[0]
        return False, f"error {err[tuple(i)]:.3g} above the bound {bound[tuple(i)]:.3g} at {tuple(i)}"
    return True, ""


def within_scan_bound(got: np.ndarray, x: np.ndarray, dim: int, product: bool = False) -> tuple[bool, str]:
    x64 = x.astype(np.float64)
    n = x.shape[dim]
    k = scan_terms(n)
    u = unit_roundoff(x.dtype)
    exact = np.cumprod(x64, axis=dim) if product else np.cumsum(x64, axis=dim)
    scale = np.abs(exact) if product else np.cumsum(np.abs(x64), axis=dim)
    bound = (2 if x.dtype == np.float64 else 1) * gamma(k, u) * scale
    bound += output_roundoff(x.dtype) * np.abs(exact) * (1 + gamma(k, u))
    return _within(got, exact, bound, x.dtype)


# ---------------------------------------------------------------- references per op

def ref_sum(x: np.ndarray, dim: int, product: bool = False) -> np.ndarray:
    """sum / prod as ptocpu computes them (keepdims), for x as laid out in memory."""
    c = compute_dtype(x.dtype)
    rows = contiguous_axis_reduced(x.shape, element_strides(x), dim)
    return ordered_reduce(x.astype(c), dim, rows, product).astype(x.dtype)


def ref_scan(x: np.ndarray, dim: int, product: bool = False) -> np.ndarray:
    if is_float(x.dtype):
        return ordered_scan(x.astype(compute_dtype(x.dtype)), dim, product).astype(x.dtype)
    acc = np.int64 if x.dtype.itemsize == 8 else np.int32
    return ordered_scan(x.astype(acc), dim).astype(np.int64)


def ref_extreme(x: np.ndarray, dim: int, maximum: bool) -> np.ndarray:
    """numpy's max / min (keepdims) with the page's rules: a NaN gives the default NaN, +0.0 is
    above -0.0."""
    if x.shape[dim] == 0:
        raise ValueError("no elements")
    f = np.max if maximum else np.min
    if not is_float(x.dtype):
        return f(x, axis=dim, keepdims=True)
    c = x.astype(compute_dtype(x.dtype))
    with np.errstate(invalid="ignore"):
        out = f(c, axis=dim, keepdims=True)
        zero_wins = np.any((c == 0) & (np.signbit(c) != maximum), axis=dim, keepdims=True)
    out = np.where(out == 0, np.where(zero_wins, c.dtype.type(0.0 if maximum else -0.0),
                                      c.dtype.type(-0.0 if maximum else 0.0)), out)
    out = np.where(np.isnan(out), c.dtype.type(np.nan), out)
    return out.astype(x.dtype)


def ref_arg(x: np.ndarray, dim: int, maximum: bool) -> np.ndarray:
    """numpy's argmax / argmin (first index; the first NaN wins) as int32, keepdims."""
    c = x.astype(compute_dtype(x.dtype)) if is_float(x.dtype) else x
    f = np.argmax if maximum else np.argmin
    return np.expand_dims(f(c, axis=dim), dim % x.ndim).astype(np.int32)


def ref_var(x: np.ndarray, dims, correction: float = 1.0) -> np.ndarray:
    """var as the device composes it (docs/ops/var.md), keepdims: mean = sum(x / N) over the dims in
    ascending order, then sum((x - mean)^2 / max(0, N - correction)), in ptocpu's summation order;
    the first sum reads x as laid out, the later ones ptocpu's contiguous intermediates."""
    c = compute_dtype(x.dtype)
    dims = sorted(d % x.ndim for d in dims) if dims else list(range(x.ndim))
    n = int(np.prod([x.shape[d] for d in dims]))
    count = c.type(n)
    divisor = max(c.type(0), c.type(count - c.type(correction)))
    x32 = x.astype(c)
    strides = element_strides(x)

    def sums(t, first_strides):
        for i, d in enumerate(dims):
            st = first_strides if i == 0 else tuple(np.ascontiguousarray(t).strides[k] // t.itemsize
                                                  for k in range(t.ndim))
            t = ordered_reduce(np.ascontiguousarray(t), d, contiguous_axis_reduced(t.shape, st, d))
        return t

    with np.errstate(all="ignore"):
        mean = sums(x32 / count, strides)
        dev = x32 - mean
        out = sums((dev * dev) / divisor, strides)
    return out.astype(x.dtype)


def var_bound(got: np.ndarray, x: np.ndarray, dims, correction: float = 1.0) -> tuple[bool, str]:
    """|got - var| within a few multiples of the summation bound of the squares and the mean
    (well-conditioned data), plus the output rounding."""
    dims = tuple(sorted(d % x.ndim for d in dims)) if dims else tuple(range(x.ndim))
    x64 = x.astype(np.float64)
    n = int(np.prod([x.shape[d] for d in dims]))
    exact = np.var(x64, axis=dims, keepdims=True) * n / max(0.0, n - correction)
    u = unit_roundoff(x.dtype)
    k = sum(sum_terms(x.shape[d]) for d in dims) + 4
    mean_sq = np.mean(x64 * x64, axis=dims, keepdims=True) * n / max(1.0, n - correction)
    bound = 3 * gamma(k, u) * mean_sq + output_roundoff(x.dtype) * np.abs(exact) * 1.01
    return _within(got, exact, bound, x.dtype)


def squeeze(ref: np.ndarray, dims, keepdim: bool) -> np.ndarray:
    """keepdim=False as the page has it: the reduced dims go, a result without dims keeps [1]."""
    if keepdim:
        return ref
    dims = sorted(d % ref.ndim for d in dims)
    shape = [n for d, n in enumerate(ref.shape) if d not in dims] or [1]
    return ref.reshape(shape)


# ---------------------------------------------------------------- cases

SHAPES = [(7,), (45,), (5000,), (3, 5), (4, 70), (300, 3), (2, 3, 4, 5)]
CPU_SHAPES = [(2, 1, 3, 1, 2, 3)]


def _values(rng, shape, dtype: str) -> np.ndarray:
    """Floats in [0.5, 2) (sums without cancellation, so that MERE / MARE mean something; the
    tests cover mixed signs), integers over their range (sums and products wrap)."""
    dt = _np(dtype)
    if is_float(dt):
        return rng.uniform(0.5, 2.0, size=shape).astype(dt)
    return _random(rng, shape, dtype)


def _shapes(platform: str, quick: bool):
    shapes = SHAPES + (CPU_SHAPES if platform == "cpu" else [])
    return shapes[2:5] if quick else shapes


def _dims(shape) -> list[int]:
    return sorted({0, len(shape) - 1, len(shape) // 2}) if len(shape) > 1 else [0, -1]


def _layouts(x: np.ndarray, dim: int):
    """x itself and, for 2-D and up, a transposed layout of the same values (the other order)."""
    yield "contiguous", x
    if x.ndim > 1:
        yield "transposed layout", np.ascontiguousarray(x.swapaxes(0, -1)).swapaxes(0, -1)


def _reduction_cases(op: str, check: Callable, errors: Callable[[str], Iterator[Case]], *, float_only=False):
    def generate(rng, quick) -> Iterator[Case]:
        for platform in PLATFORMS:
            for dtype in _platform_dtypes(platform, op):
                if float_only and not is_float(_np(dtype)):
                    continue
                for shape in _shapes(platform, quick):
                    for dim in _dims(shape):
                        keepdim = bool(dim % 2)

                        def run(dtype=dtype, shape=shape, dim=dim, keepdim=keepdim):
                            x0 = _values(rng, shape, dtype)
                            for _, x in _layouts(x0, dim):
                                ok, detail, pairs = check(x, dim, keepdim)
                                if not ok:
                                    return ok, detail, pairs
                            return ok, detail, pairs

                        yield Case(op, platform, dtype, f"{list(shape)} dim {dim} keepdim {keepdim}", run)
            yield from errors(platform)
    return generate


def _check_sum(product: bool) -> Callable:
    op = "prod" if product else "sum"

    def check(x, dim, keepdim):
        x = near_one(x) if product else x
        got = getattr(ptocpu, op)(x, dim, keepdim).numpy()
        want = squeeze(ref_sum(x, dim, product), [dim], keepdim)
        if is_float(x.dtype):
            ok, detail = within_sum_bound(want, x, dim, product)
            if not ok:
                return False, "the documented order breaks its bound: " + detail, []
            exact = (np.prod if product else np.sum)(x.astype(np.float64), axis=dim, keepdims=True)
            return _compare([(got, want, squeeze(exact, [dim], keepdim))])
        return _compare([(got, want)])
    return check


def near_one(x: np.ndarray) -> np.ndarray:
    """Float factors of either sign within 2% of 1 (long products neither under- nor overflow);
    integers as they are (their products wrap)."""
    if not is_float(x.dtype):
        return x
    x64 = x.astype(np.float64)
    spread = np.modf(np.abs(x64) * 997)[0]  # ~uniform in [0, 1)
    return (np.where(x64 < 0, -1, 1) * (0.98 + 0.04 * spread)).astype(x.dtype)


def _check_extreme(maximum: bool) -> Callable:
    def check(x, dim, keepdim):
        got = getattr(ptocpu, "amax" if maximum else "amin")(x, dim, keepdim)
        return _compare([(got, squeeze(ref_extreme(x, dim, maximum), [dim], keepdim))])
    return check


def _check_arg(maximum: bool) -> Callable:
    def check(x, dim, keepdim):
        got = getattr(ptocpu, "argmax" if maximum else "argmin")(x, dim, keepdim)
        return _compare([(got, squeeze(ref_arg(x, dim, maximum), [dim], keepdim))])
    return check


def _check_scan(product: bool) -> Callable:
    op = "cumprod" if product else "cumsum"

    def check(x, dim, keepdim):
        x = near_one(x) if product else x
        got = getattr(ptocpu, op)(x, dim).numpy()
        want = ref_scan(x, dim, product)
        if is_float(x.dtype):
            ok, detail = within_scan_bound(want, x, dim, product)
            if not ok:
                return False, "the documented order breaks its bound: " + detail, []
            exact = (np.cumprod if product else np.cumsum)(x.astype(np.float64), axis=dim)
            return _compare([(got, want, exact)])
        return _compare([(got, want)])
    return check


def _check_var(x, dim, keepdim):
    dims = [dim] if x.ndim < 3 else [0, dim] if dim else [dim, x.ndim - 1]
    got = ptocpu.var(x, dims, keepdim=keepdim).numpy()
    want = ref_var(x, dims)
    ok, detail = var_bound(want, x, dims)
    if not ok:
        return False, "the documented composition breaks its bound: " + detail, []
    exact = np.var(x.astype(np.float64), axis=tuple(sorted({d % x.ndim for d in dims})), keepdims=True, ddof=1)
    return _compare([(got, squeeze(want, dims, keepdim), squeeze(exact, dims, keepdim))])


def _common_errors(op: str, platform: str, call: Callable[[np.ndarray, int], object], tile_limit: bool) -> Iterator[Case]:
    x = np.ones((2, 3), np.float32)
    yield Case(op, platform, "DT_FP32", "error: dim out of range",
               lambda: _expect_error(lambda: call(x, 2), ptocpu.IndexOutOfRange, "dim 2"))
    if platform != "cpu":
        yield Case(op, platform, "DT_FP64", "error: a dtype the chip does not list",
                   lambda: _expect_error(lambda: call(np.ones((2, 3)), 0), ptocpu.DTypeError, "DT_FP64"))
        yield Case(op, platform, "DT_FP32", "error: rank 5",
                   lambda: _expect_error(lambda: call(np.ones((1,) * 5, np.float32), 0), ptocpu.ArgumentError,
                                         "rank 5"))
        yield Case(op, platform, "DT_FP32", "error: empty input",
                   lambda: _expect_error(lambda: call(np.ones((0, 3), np.float32), 1), ptocpu.ArgumentError,
                                         "empty"))

        def big_tile():
            with ptocpu.vec_tile_shapes(64, 512):
                return call(np.ones((64, 512), np.float32), 1)
        if tile_limit:
            yield Case(op, platform, "DT_FP32", "error: a tile above 64 KB",
                       lambda: _expect_error(big_tile, ptocpu.TileError, "64 KB"))


def _errors_for(op: str, extra: Callable[[str], Iterator[Case]] | None = None, tile_limit: bool = True):
    """The op's error cases; tile_limit: the op has the 64 KB input-tile rule."""
    def errors(platform: str) -> Iterator[Case]:
        yield from _common_errors(op, platform, lambda x, d: getattr(ptocpu, op)(x, d), tile_limit)
        if extra:
            yield from extra(platform)
    return errors


def _empty_axis_error(op: str):
    def extra(platform):
        if platform == "cpu":
            yield Case(op, platform, "DT_FP32", "error: no elements along dim",
                       lambda: _expect_error(lambda: getattr(ptocpu, op)(np.ones((2, 0), np.float32), 1),
                                             ptocpu.ArgumentError, "no elements along dim 1"))
    return extra


def _arg_errors(op: str):
    def extra(platform):
        yield from _empty_axis_error(op)(platform)

        def misaligned():
            with ptocpu.vec_tile_shapes(2, 6):
                return getattr(ptocpu, op)(np.ones((2, 6), np.float32), 1)
        yield Case(op, platform, "DT_FP32", "error: a tile's last dim not whole 32-byte blocks",
                   lambda: _expect_error(misaligned, ptocpu.TileError, "multiple of 32 bytes"))
    return extra


def _var_errors(platform):
    x = np.ones((2, 3), np.float32)
    yield Case("var", platform, "DT_FP32", "error: a dim twice",
               lambda: _expect_error(lambda: ptocpu.var(x, [1, -1]), ptocpu.ArgumentError, "twice"))
    yield Case("var", platform, "DT_FP32", "error: more dims than the rank",
               lambda: _expect_error(lambda: ptocpu.var(x, [0, 1, 1]), ptocpu.ArgumentError, "rank 2"))
    yield Case("var", platform, "DT_FP32", "error: a bool correction",
               lambda: _expect_error(lambda: ptocpu.var(x, 1, True), ptocpu.DTypeError, "bool"))


cases_for("sum")(_reduction_cases("sum", _check_sum(False), _errors_for("sum")))
cases_for("prod")(_reduction_cases("prod", _check_sum(True), _errors_for("prod")))
cases_for("amax")(_reduction_cases("amax", _check_extreme(True), _errors_for("amax", _empty_axis_error("amax"))))
cases_for("amin")(_reduction_cases("amin", _check_extreme(False), _errors_for("amin", _empty_axis_error("amin"))))
cases_for("argmax")(_reduction_cases("argmax", _check_arg(True), _errors_for("argmax", _arg_errors("argmax"))))
cases_for("argmin")(_reduction_cases("argmin", _check_arg(False), _errors_for("argmin", _arg_errors("argmin"))))
cases_for("var")(_reduction_cases("var", _check_var, _errors_for("var", _var_errors, tile_limit=False), float_only=True))
cases_for("cumsum")(_reduction_cases("cumsum", _check_scan(False), _errors_for("cumsum", tile_limit=False)))
cases_for("cumprod")(_reduction_cases("cumprod", _check_scan(True), _errors_for("cumprod", tile_limit=False)))
