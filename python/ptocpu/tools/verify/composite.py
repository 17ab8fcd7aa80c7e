"""verify's cases of the composite family (docs/ops/softmax.md ... quant_mx.md): every dtype of every
platform row against the references of ptocpu.tools.reference_composite (the device's formulas step
by step in fp32) -- bit for bit where no exp is involved, within the page's ulps where it is -- with
a float64 reference beside for MERE / MARE; the pages' examples; the error rules.
"""
from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np

import ptocpu

from .. import reference_composite as ref
from .common import PLATFORMS, Case, _compare, _expect_error, _platform_dtypes, _random, cases_for
from .elementwise import _ulps


def _np(dtype: str) -> np.dtype:
    return np.dtype(ptocpu.numpy_dtype(getattr(ptocpu, dtype)))


def _within(got, want: np.ndarray, ulps: int, want64=None) -> tuple[bool, str, list]:
    """got within `ulps` of want (same shape and dtype), with want64 for MERE / MARE."""
    g = np.asarray(got.numpy() if isinstance(got, ptocpu.Tensor) else got)
    if g.shape != want.shape or g.dtype != want.dtype:
        return False, f"shape / dtype {g.shape} {g.dtype} != reference {want.shape} {want.dtype}", []
    worst = _ulps(g, want)
    pairs = [(got, want) + ((want64,) if want64 is not None else ())]
    if worst > ulps:
        return False, f"{worst:.0f} ulp from the reference (allowed {ulps})", pairs
    return True, "", pairs


def _shapes(platform: str, quick: bool) -> list[tuple]:
    shapes = [(7,), (5, 33), (3, 4, 70), (2, 3, 2, 40)]
    return shapes[1:3] if quick else shapes


def _grid(platform: str, op: str, quick: bool, variants: tuple) -> Iterator[tuple]:
    """(dtype, shape, variant) for every dtype of op's row on platform, every shape and every variant."""
    return itertools.product(_platform_dtypes(platform, op), _shapes(platform, quick), variants)


@cases_for("softmax")
def _softmax_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        def page():
            x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
            got = np.floor(ptocpu.softmax(x, -1).numpy().astype(np.float64) * 1e4) / 1e4
            want = np.array([[0.0900, 0.2447, 0.6652]] * 2)
            return (np.allclose(got, want, rtol=0, atol=1e-9), f"{got.tolist()}", [])
        yield Case("softmax", platform, "DT_FP32", "page example", page)
        for dtype, shape, dim in _grid(platform, "softmax", quick, (-1, 0)):
            def run(dtype=dtype, shape=shape, dim=dim):
                x = _random(rng, shape, dtype)
                x64 = x.astype(np.float64)
                e64 = np.exp(x64 - np.max(x64, dim, keepdims=True))
                want64 = e64 / np.sum(e64, dim, keepdims=True)
                # exp is the elementwise exp's SLEEF kernel (within 1 ulp): 4 ulp in fp32
                # (docs/ops/softmax.md), 1 in fp16 / bf16
                return _within(ptocpu.softmax(x, dim), ref.softmax(x, dim), 4 if dtype == "DT_FP32" else 1, want64)
            yield Case("softmax", platform, dtype, f"x{list(shape)} dim {dim}", run)
        yield Case("softmax", platform, "DT_FP32", "error: dim out of range",
                   lambda: _expect_error(lambda: ptocpu.softmax(np.zeros((2, 3), np.float32), 2),
                                         ptocpu.IndexOutOfRange, "dim 2"))
        yield Case("softmax", platform, "DT_FP64", "error: dtype",
                   lambda: _expect_error(lambda: ptocpu.softmax(np.zeros((2, 3)), -1), ptocpu.DTypeError, "DT_FP64"))


@cases_for("rms_norm")
def _rms_norm_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        def page():
            x = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
            got = np.floor(ptocpu.rms_norm(x, np.ones(4, np.float32)).numpy().astype(np.float64) * 1e4) / 1e4
            want = np.array([[0.3651, 0.7302, 1.0954, 1.4605], [0.7580, 0.9097, 1.0613, 1.2129]])
            return (np.allclose(got, want, rtol=0, atol=1e-9), f"{got.tolist()}", [])
        yield Case("rms_norm", platform, "DT_FP32", "page example (four decimals cut off)", page)
        for dtype, shape, with_gamma in _grid(platform, "rms_norm", quick, (False, True)):
            def run(dtype=dtype, shape=shape, with_gamma=with_gamma):
                x = _random(rng, shape, dtype)
                gamma = _random(rng, shape[-1:], dtype) if with_gamma else None
                x64 = x.astype(np.float64)
                want64 = x64 / np.sqrt(np.mean(x64 * x64, -1, keepdims=True) + 1e-6)
                if with_gamma:
                    want64 = want64 * gamma.astype(np.float64)
                return _compare([(ptocpu.rms_norm(x, gamma), ref.rms_norm(x, gamma), want64)])
            yield Case("rms_norm", platform, dtype, f"x{list(shape)}{' gamma' if with_gamma else ''}", run)
        yield Case("rms_norm", platform, "DT_FP32", "error: gamma shape",
                   lambda: _expect_error(lambda: ptocpu.rms_norm(np.ones((2, 4), np.float32), np.ones(3, np.float32)),
                                         ptocpu.ArgumentError, "gamma shape [3]"))


def _online_platforms() -> list[str]:
    return [p for p in PLATFORMS if _platform_dtypes(p, "online_softmax")]


@cases_for("online_softmax")
def _online_softmax_cases(rng, quick) -> Iterator[Case]:
    shapes = [((128, 128), 128 ** -0.5), ((7, 33), 2.0), ((300, 64), -0.1)]
    for platform in PLATFORMS:
        if platform not in _online_platforms():
            yield Case("online_softmax", platform, "-", "error: not offered (UnsupportedError)",
                       lambda: _expect_error(lambda: ptocpu.online_softmax(np.zeros((2, 2), np.float32), 1.0),
                                             ptocpu.UnsupportedError, "ascend950"))
            continue
        for shape, scale in shapes[:2] if quick else shapes:
            def run(shape=shape, scale=scale):
                s = _random(rng, shape, "DT_FP32")
                e, m, total = ptocpu.experimental.online_softmax(s, scale)
                we, wm, wt = ref.online_softmax(s, scale)
                for got, want, ulps in ((m, wm, 0), (e, we, 1), (total, wt, 4)):
                    ok, detail, _ = _within(got, want, ulps)
                    if not ok:
                        return False, detail, []
                return True, "", [(e, we)]
            yield Case("online_softmax", platform, "DT_FP32", f"scores{list(shape)} scale {scale:.3g}", run)
        yield Case("online_softmax", platform, "DT_FP32", "error: tile splits axis 0",
                   lambda: _tiled_error(lambda: ptocpu.online_softmax(np.zeros((4, 8), np.float32), 1.0), (2, 8),
                                        "splits axis 0"))


def _tiled_error(call, tile, needle) -> tuple[bool, str, list]:
    with ptocpu.vec_tile_shapes(*tile):
        return _expect_error(call, ptocpu.TileError, needle)


@cases_for("online_softmax_update")
def _online_update_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        if platform not in _online_platforms():
            yield Case("online_softmax_update", platform, "-", "error: not offered (UnsupportedError)",
                       lambda: _expect_error(lambda: ptocpu.online_softmax_update(*[np.zeros((1, 2), np.float32)] * 6),
                                             ptocpu.UnsupportedError, "ascend950"))
            continue
        for h, q in ((128, 128), (5, 70)):
            def run(h=h, q=q):
                stats = [_random(rng, (1, q), "DT_FP32") for _ in range(4)]
                mp, sp, mc, sc = stats[0], np.abs(stats[1]), stats[2], np.abs(stats[3])
                op, oc = _random(rng, (h, q), "DT_FP32"), _random(rng, (h, q), "DT_FP32")
                got = ptocpu.experimental.online_softmax_update(mp, sp, op, mc, sc, oc)
                want = ref.online_softmax_update(mp, sp, op, mc, sc, oc)
                for g, w, ulps in zip(got[:2], want[:2], (0, 4)):
                    ok, detail, _ = _within(g, w, ulps)
                    if not ok:
                        return False, detail, []
                error = np.abs(got[2].numpy().astype(np.float64) - want[2])
                allowed = 4 * np.spacing(ref.online_softmax_update_terms(mp, op, mc, oc))
                if not np.all(error <= allowed):
                    return False, f"output: {int((error > allowed).sum())} elements beyond 4 ulp of |Op a| + |Oc b|", []
                return True, "", [(got[2], want[2])]
            yield Case("online_softmax_update", platform, "DT_FP32", f"output [{h}, {q}]", run)
        yield Case("online_softmax_update", platform, "DT_FP32", "error: statistic shape",
                   lambda: _expect_error(lambda: ptocpu.online_softmax_update(
                       *[np.zeros((1, 8), np.float32)] * 2, np.zeros((4, 8), np.float32),
                       *[np.zeros((1, 7), np.float32)] * 2, np.zeros((4, 8), np.float32)),
                       ptocpu.ArgumentError, "current_max shape [1, 7]"))


@cases_for("expand_exp_dif")
def _expand_exp_dif_cases(rng, quick) -> Iterator[Case]:
    pairs = [((5, 6), (5, 6)), ((5, 6), (1, 6)), ((5, 6), (5, 1)), ((3, 4, 6), (4, 1)), ((7,), (1,))]
    for platform in PLATFORMS:
        def page():
            x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
            got = ptocpu.expand_exp_dif(x, np.array([[1], [2]], np.float32)).numpy()
            want = np.array([[1.0, 2.718282, 7.3890557], [7.3890557, 20.085537, 54.59815]])
            return np.allclose(got, want, rtol=1e-7), f"{got.tolist()}", []
        yield Case("expand_exp_dif", platform, "DT_FP32", "page example", page)
        for dtype in _platform_dtypes(platform, "expand_exp_dif"):
            for xs, os in pairs[1:4] if quick else pairs:
                def run(dtype=dtype, xs=xs, os=os):
                    x, o = _random(rng, xs, dtype) / 2, _random(rng, os, dtype) / 2
                    want64 = np.exp(x.astype(np.float64) - o.astype(np.float64))
                    return _within(ptocpu.expand_exp_dif(x, o), ref.expand_exp_dif(x, o), 1, want64)
                yield Case("expand_exp_dif", platform, dtype, f"{list(xs)} with {list(os)}", run)
        yield Case("expand_exp_dif", platform, "DT_FP32", "error: dtypes differ",
                   lambda: _expect_error(lambda: ptocpu.expand_exp_dif(np.zeros(3, np.float32), np.zeros(3, np.float16)),
                                         ptocpu.DTypeError, "DT_FP16"))


def _sortable(rng, shape, dtype) -> np.ndarray:
    """Few distinct values (ties), +-0 and NaN for floats."""
    dt = _np(dtype)
    if dt.kind in "iu":
        return _random(rng, shape, dtype) % 5
    pool = np.array([0.0, -0.0, 1.5, -2.25, 3.0, -np.inf, np.nan, 1e-3], np.float32)
    return pool[rng.integers(0, len(pool), shape)].astype(dt)


@cases_for("topk")
def _topk_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        def page():
            v, i = ptocpu.topk(np.array([[1.0, 2.0, 3.0]] * 2, np.float32), 2, -1, True, ptocpu.TopKAlgo.MERGE_SORT)
            ok = v.tolist() == [[3.0, 2.0]] * 2 and i.tolist() == [[2, 1]] * 2
            return ok, f"{v.tolist()} {i.tolist()}", []
        yield Case("topk", platform, "DT_FP32", "page example", page)
        radix = platform == "cpu" or platform == "ascend950"
        for dtype, shape, largest in _grid(platform, "topk", quick, (True, False)):
            algo = ptocpu.TopKAlgo.MERGE_SORT if dtype == "DT_FP32" or not radix else ptocpu.TopKAlgo.RADIX_SELECT
            def run(dtype=dtype, shape=shape, largest=largest, algo=algo):
                x = _sortable(rng, shape, dtype)
                k = max(1, shape[-1] // 3)
                v, i = ptocpu.topk(x, k, -1, largest, algo)
                wv, wi = ref.topk(x, k, largest)
                return _compare([(i, wi), (v, wv)])
            yield Case("topk", platform, dtype, f"x{list(shape)} largest={largest} {algo.name}", run)
        yield Case("topk", platform, "DT_FP32", "error: k out of range",
                   lambda: _expect_error(lambda: ptocpu.topk(np.zeros((2, 4), np.float32), 5), ptocpu.ArgumentError,
                                         "k 5"))


@cases_for("argsort")
def _argsort_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        def page():
            got = ptocpu.argsort(np.array([[1.0, 2.0, 3.0]] * 2, np.float32), -1, True).tolist()
            return got == [[2, 1, 0]] * 2, f"{got}", []
        yield Case("argsort", platform, "DT_FP32", "page example", page)
        for dtype, shape, descending in _grid(platform, "argsort", quick, (True, False)):
            def run(dtype=dtype, shape=shape, descending=descending):
                x = _sortable(rng, shape, dtype)
                first = 1 if len(shape) == 4 else 0  # a 4-D input is not sorted along axis 0
                return _compare([(ptocpu.argsort(x, first, descending), ref.sort_order(x, first, descending)),
                                 (ptocpu.argsort(x, -1, descending), ref.sort_order(x, -1, descending))])
            yield Case("argsort", platform, dtype, f"x{list(shape)} descending={descending}", run)
        yield Case("argsort", platform, "DT_FP32", "error: 4-D along axis 0",
                   lambda: _expect_error(lambda: ptocpu.argsort(np.zeros((2, 2, 2, 2), np.float32), 0),
                                         ptocpu.ArgumentError, "4-D"))


def _per_line_shape(shape, axis):
    s = list(shape)
    del s[axis]
    return tuple(s)


def _quant_grid(platform: str, op: str, quick: bool) -> Iterator[tuple]:
    """(dtype, shape, axis, asym) for every dtype of op's row on platform, every shape, axis -1 (and -2
    where the shape has it), without and with zero points."""
    for dtype in _platform_dtypes(platform, op):
        for shape in _shapes(platform, quick):
            for axis in ((-1, -2) if len(shape) > 1 else (-1,)):
                for asym in (False, True):
                    yield dtype, shape, axis, asym


@cases_for("quantize")
def _quantize_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        def page():
            x = np.array([[1.1, -2.2, 3.3, -4.4]] * 3, np.float32)
            got = ptocpu.quantize(x, np.ones(3, np.float32), ptocpu.DT_INT8, -1).tolist()
            return got == [[1, -2, 3, -4]] * 3, f"{got}", []
        yield Case("quantize", platform, "DT_FP32", "page example (symmetric)", page)
        for dtype, shape, axis, asym in _quant_grid(platform, "quantize", quick):
            def run(dtype=dtype, shape=shape, axis=axis, asym=asym):
                x = (_random(rng, shape, "DT_FP32") * 20).astype(_np(dtype))
                s = rng.uniform(0.1, 3, _per_line_shape(shape, axis)).astype(np.float32)
                zp = rng.uniform(0, 130, s.shape).astype(np.float32) if asym else None
                otype = ptocpu.DT_UINT8 if asym else ptocpu.DT_INT8
                return _compare([(ptocpu.quantize(x, s, otype, axis, zp), ref.quantize(x, s, axis, zp))])
            yield Case("quantize", platform, dtype, f"x{list(shape)} axis {axis}{' zero points' if asym else ''}", run)
        yield Case("quantize", platform, "DT_FP32", "error: otype with zero points",
                   lambda: _expect_error(lambda: ptocpu.quantize(np.zeros((2, 4), np.float32), np.ones(2, np.float32),
                                                                 ptocpu.DT_INT8, -1, np.zeros(2, np.float32)),
                                         ptocpu.DTypeError, "DT_UINT8"))


@cases_for("dequantize")
def _dequantize_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        def page():
            x = np.array([[1, 2, 3, 4]] * 3, np.int8)
            got = ptocpu.dequantize(x, np.ones((3, 1), np.float32), ptocpu.DT_FP32, -1).tolist()
            return got == [[1.0, 2.0, 3.0, 4.0]] * 3, f"{got}", []
        yield Case("dequantize", platform, "DT_INT8", "page example (symmetric)", page)
        for dtype, shape, axis, asym in _quant_grid(platform, "dequantize", quick):
            def run(dtype=dtype, shape=shape, axis=axis, asym=asym):
                x = _random(rng, shape, dtype)
                s = rng.standard_normal(_per_line_shape(shape, axis)).astype(np.float32)
                zp = rng.uniform(-20, 20, s.shape).astype(np.float32) if asym else None
                got = ptocpu.dequantize(x, s, ptocpu.DT_FP32, axis, zp)
                return _compare([(got, ref.dequantize(x, s, axis, zp))])
            yield Case("dequantize", platform, dtype, f"x{list(shape)} axis {axis}{' zero points' if asym else ''}",
                       run)
        yield Case("dequantize", platform, "DT_INT8", "error: otype",
                   lambda: _expect_error(lambda: ptocpu.dequantize(np.zeros((2, 4), np.int8), np.ones(2, np.float32),
                                                                   ptocpu.DT_FP16, -1),
                                         ptocpu.DTypeError, "DT_FP32"))


@cases_for("quant_mx")
def _quant_mx_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        dtypes = _platform_dtypes(platform, "quant_mx")
        if not dtypes:
            yield Case("quant_mx", platform, "-", "error: not offered (UnsupportedError)",
                       lambda: _expect_error(lambda: ptocpu.quant_mx(np.zeros((1, 64), np.float32)),
                                             ptocpu.UnsupportedError, "ascend950"))
            continue

        def page():
            q, s = ptocpu.quant_mx(np.ones((8, 64), np.float32))
            ok = q.shape == [8, 64] and s.shape == [8, 1, 2] and q.dtype == ptocpu.DT_FP8E4M3
            return ok, f"{q.shape} {s.shape}", []
        yield Case("quant_mx", platform, "DT_FP32", "page example shapes", page)
        for dtype in dtypes:
            for shape, axis in (((3, 256), -1), ((2, 128), -1), ((2, 64, 24), -2), ((128, 96), -2)):
                for round_up in (False, True):
                    def run(dtype=dtype, shape=shape, axis=axis, round_up=round_up):
                        x = (rng.standard_normal(shape) * np.exp2(rng.integers(-10, 10, shape))).astype(_np(dtype))
                        mode = ptocpu.ROUND_UP if round_up else ptocpu.ROUND_DOWN
                        q, s = ptocpu.quant_mx(x, ptocpu.DT_FP8E4M3, mode, axis, False)
                        wq, ws = ref.quant_mx(x, round_up, axis)
                        return _compare([(q, wq), (s.numpy().view(np.uint8), ws)])
                    yield Case("quant_mx", platform, dtype, f"x{list(shape)} axis {axis} {'NV' if round_up else 'OCP'}",
                               run)
        for dtype in [d for d in dtypes if d in ("DT_FP16", "DT_BF16")]:  # fp4 pairs take half inputs
            for shape, axis in (((3, 256), -1), ((2, 128, 64), -2)):
                for round_up in (False, True):
                    def run_fp4(dtype=dtype, shape=shape, axis=axis, round_up=round_up):
                        x = (rng.standard_normal(shape) * np.exp2(rng.integers(-10, 10, shape))).astype(_np(dtype))
                        mode = ptocpu.ROUND_UP if round_up else ptocpu.ROUND_DOWN
                        q, s = ptocpu.quant_mx(x, ptocpu.DT_FP4_E2M1X2, mode, axis, False)
                        wq, ws = ref.quant_mx(x, round_up, axis, "fp4")
                        return _compare([(q.numpy().view(np.uint8), wq), (s.numpy().view(np.uint8), ws)])
                    yield Case("quant_mx", platform, dtype,
                               f"x{list(shape)} axis {axis} {'NV' if round_up else 'OCP'} -> DT_FP4_E2M1X2", run_fp4)
        yield Case("quant_mx", platform, "DT_FP32", "error: axis -2 not a multiple of 64",
                   lambda: _expect_error(lambda: ptocpu.quant_mx(np.zeros((32, 64), np.float32), axis=-2),
                                         ptocpu.ArgumentError, "multiple of 64"))
