"""verify's cases of the indexing family and the seeds (docs/ops/index_select.md ... gathermask.md)."""
from __future__ import annotations

from typing import Iterator

import numpy as np

import ptocpu

from .. import reference as _reference
from ..reference import seed003_strided_slice, spec_strided_slice
from .common import (PLATFORMS, Case, cases_for, torch, _bits, _compare, _expect_error, _platform_dtypes, _random, _torch_reference)

@cases_for('index_select')
def _index_select_cases(rng, quick) -> Iterator[Case]:
    x_seed = np.array([[0.1427, 0.0231, -0.5414, -1.0009], [-0.4664, 0.2647, -0.1228, -1.1068],
                       [-1.1734, -0.6571, 0.7230, -0.6004]], np.float32)
    for platform in PLATFORMS:
        def seed(platform=platform):
            idx = np.array([0, 2], np.int32)
            return _compare([(ptocpu.index_select(x_seed, 0, idx), x_seed[[0, 2]]),
                             (ptocpu.index_select(x_seed, 1, idx), x_seed[:, [0, 2]])])
        yield Case("index_select", platform, "DT_FP32", "seed example (docs/ops/index_select.md)", seed)
        max_rank = 8 if platform == "cpu" else 4
        shapes = [(7,), (5, 6), (3, 4, 5), (2, 3, 2, 4)] + ([(2, 1, 3, 2, 2, 1, 2, 3)] if max_rank == 8 else [])
        if quick:
            shapes = shapes[1:3]
        for dtype in _platform_dtypes(platform, "index_select"):
            for shape in shapes:
                for dim in (0, -1):
                    for index_shape in ((4,), (2, 3)) if len(shape) < 8 else ((4,),):
                        def run(platform=platform, dtype=dtype, shape=shape, dim=dim, index_shape=index_shape):
                            x = _random(rng, shape, dtype)
                            idx = rng.integers(0, shape[dim], size=index_shape).astype(np.int64)
                            view = x[..., ::-1] if len(shape) > 1 else x  # non-contiguous input
                            out = ptocpu.index_select(view, dim, idx)
                            want = np.take(view, idx, axis=dim)
                            torch_out = _torch_reference(
                                lambda tx, ti: torch.index_select(tx, dim, ti.flatten()).reshape(want.shape),
                                view, view, idx)
                            return _compare([(out, want)] + [(out, t) for t in torch_out])
                        yield Case("index_select", platform, dtype, f"x{list(shape)} dim {dim} index{list(index_shape)}", run)
        yield Case("index_select", platform, "DT_FP32", "error: index value out of range",
                   lambda: _expect_error(lambda: ptocpu.index_select(x_seed, 0, np.array([0, 7])),
                                         ptocpu.IndexOutOfRange, "index value 7"))
        yield Case("index_select", platform, "DT_FP32", "error: dim out of range",
                   lambda: _expect_error(lambda: ptocpu.index_select(x_seed, 2, np.array([0])),
                                         ptocpu.IndexOutOfRange, "dim 2"))
        yield Case("index_select", platform, "DT_FP32", "error: float index",
                   lambda: _expect_error(lambda: ptocpu.index_select(x_seed, 0, np.array([0.0], np.float32)),
                                         ptocpu.DTypeError, "DT_FP32"))
        if platform == "cpu":
            yield Case("index_select", platform, "DT_FP32", "error: output rank 9",
                       lambda: _expect_error(lambda: ptocpu.index_select(np.zeros((1,) * 8, np.float32), 0, [[0]]),
                                             ptocpu.ArgumentError, "output rank 9"))
        else:
            yield Case("index_select", platform, "DT_FP32", "error: input rank 5",
                       lambda: _expect_error(lambda: ptocpu.index_select(np.zeros((1,) * 5, np.float32), 0, [0]),
                                             ptocpu.ArgumentError, "rank 5"))
            yield Case("index_select", platform, "DT_FP32", "error: empty input",
                       lambda: _expect_error(lambda: ptocpu.index_select(np.zeros((0, 3), np.float32), 1, [0]),
                                             ptocpu.ArgumentError, "[0, 3]"))


@cases_for('interleave', 'deinterleave')
def _interleave_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        dtypes = _platform_dtypes(platform, "interleave")
        if not dtypes:
            yield Case("interleave", platform, "-", "error: not offered (UnsupportedError)",
                       lambda: _expect_error(lambda: ptocpu.interleave(np.zeros((2, 4), np.float32),
                                                                       np.zeros((2, 4), np.float32)),
                                             ptocpu.UnsupportedError, "ascend950"))
            yield Case("deinterleave", platform, "-", "error: not offered (UnsupportedError)",
                       lambda: _expect_error(lambda: ptocpu.deinterleave(np.zeros((2, 4), np.float32)),
                                             ptocpu.UnsupportedError, "ascend950"))
            continue

        def seeds():
            a = np.arange(8, dtype=np.float32).reshape(2, 4)
            b = a + 10
            o0, o1 = ptocpu.interleave(a, b)
            w0 = np.array([[0, 10, 1, 11], [4, 14, 5, 15]], np.float32)
            w1 = np.array([[2, 12, 3, 13], [6, 16, 7, 17]], np.float32)
            s = np.array([[0, 10, 1, 11, 2, 12, 3, 13], [4, 14, 5, 15, 6, 16, 7, 17]], np.float32)
            d0, d1 = ptocpu.deinterleave(s)
            return _compare([(o0, w0), (o1, w1), (d0, a), (d1, b)])
        yield Case("interleave", platform, "DT_FP32", "seed examples (docs/ops/interleave.md, docs/ops/deinterleave.md)", seeds)
        shapes = [(6,), (3, 8), (2, 3, 4)] + ([(2, 1, 2, 1, 2, 3, 1, 6)] if platform == "cpu" else [(2, 2, 2, 6)])
        if quick:
            shapes = shapes[1:3]
        for dtype in dtypes:
            for shape in shapes:
                def il(dtype=dtype, shape=shape):
                    a, b = _random(rng, shape, dtype), _random(rng, shape, dtype)
                    w0, w1 = _reference.interleave(a, b)
                    o0, o1 = ptocpu.interleave(a, b)
                    n = shape[-1]
                    torch_out = _torch_reference(
                        lambda ta, tb: torch.stack((ta, tb), -1).flatten(-2).split(n, -1), a, a, b)
                    return _compare([(o0, w0), (o1, w1)] + list(zip((o0, o1), torch_out)))
                yield Case("interleave", platform, dtype, f"a, b {list(shape)}", il)

                def di2(dtype=dtype, shape=shape):
                    a, b = _random(rng, shape, dtype), _random(rng, shape, dtype)
                    c = np.concatenate([a, b], axis=-1)
                    o0, o1 = ptocpu.deinterleave(a, b)
                    return _compare([(o0, c[..., 0::2]), (o1, c[..., 1::2])])
                yield Case("deinterleave", platform, dtype, f"a, b {list(shape)}", di2)

                def di1(dtype=dtype, shape=shape):
                    x = _random(rng, shape, dtype)
                    o0, o1 = ptocpu.deinterleave(x)
                    torch_out = _torch_reference(lambda tx: (tx[..., 0::2], tx[..., 1::2]), x, x)
                    return _compare([(o0, x[..., 0::2]), (o1, x[..., 1::2])] + list(zip((o0, o1), torch_out)))
                yield Case("deinterleave", platform, dtype, f"x {list(shape)}", di1)
        yield Case("interleave", platform, "DT_FP32", "error: odd last dim",
                   lambda: _expect_error(lambda: ptocpu.interleave(np.zeros((2, 3), np.float32),
                                                                   np.zeros((2, 3), np.float32)),
                                         ptocpu.ArgumentError, "3"))
        yield Case("interleave", platform, "DT_FP32", "error: dtypes differ",
                   lambda: _expect_error(lambda: ptocpu.interleave(np.zeros((2, 4), np.float32),
                                                                   np.zeros((2, 4), np.float16)),
                                         ptocpu.DTypeError, "DT_FP16"))


@cases_for('scatter_', 'scatter')
def _scatter_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        def seed():
            x = ptocpu.tensor([3, 5], ptocpu.DT_FP32)
            out = ptocpu.scatter_(x, 0, np.array([[1, 2], [0, 1]], np.int64), 2.0)
            want = np.array([[2, 0, 0, 0, 0], [2, 2, 0, 0, 0], [0, 2, 0, 0, 0]], np.float32)
            return _compare([(out, want), (x, want)])
        yield Case("scatter_", platform, "DT_FP32", "seed example (docs/ops/scatter.md)", seed)
        shapes = [(6,), (4, 5), (3, 4, 5)]
        if quick:
            shapes = shapes[1:2]
        for dtype in _platform_dtypes(platform, "scatter_"):
            reduces = [None] if dtype in ("DT_BOOL", "DT_FP8E4M3", "DT_FP8E5M2", "DT_FP8E8M0") else [None, "add", "multiply"]
            for shape in shapes:
                for reduce in reduces:
                    for tensor_src in (True, False):
                        def run(dtype=dtype, shape=shape, reduce=reduce, tensor_src=tensor_src):
                            x = _random(rng, shape, dtype)
                            dim = -1
                            index_shape = tuple(max(1, s - 1) for s in shape)
                            index = rng.integers(0, shape[dim], size=index_shape).astype(np.int64)
                            src = _random(rng, shape, dtype) if tensor_src else (1 if dtype == "DT_BOOL" else 2)
                            want = _reference.scatter(x, dim, index, src, reduce)
                            src64 = src.astype(np.float64) if tensor_src else src
                            want64 = _reference.scatter(x.astype(np.float64), dim, index, src64, reduce)
                            before = x.copy()
                            out = ptocpu.scatter(x, dim, index, src, reduce=reduce)
                            pairs = [(out, want, want64)]
                            unique = all(len(set(line)) == len(line) for line in index.reshape(-1, index.shape[-1]))
                            if reduce is None and tensor_src and unique:  # torch leaves duplicates unspecified
                                pairs += [(out, t) for t in _torch_reference(
                                    lambda tx, ti, ts: tx.clone().scatter_(dim, ti, ts), x, x, index, src)]
                            ok, detail, pairs = _compare(pairs)
                            if ok and not np.array_equal(_bits(x), _bits(before)):
                                return False, "scatter changed its input", pairs
                            return ok, detail, pairs
                        label = f"x{list(shape)} dim -1 {'tensor' if tensor_src else 'scalar'} src reduce={reduce}"
                        yield Case("scatter", platform, dtype, label, run)

        def bad_last_index():
            x = np.zeros((4, 4), np.float32)
            index = np.zeros((4, 4), np.int64)
            index[-1, -1] = 9
            ok, detail, _ = _expect_error(lambda: ptocpu.scatter_(x, 1, index, 1.0), ptocpu.IndexOutOfRange, "9")
            if ok and x.any():
                return False, "input was written before the error", []
            return ok, detail, []
        yield Case("scatter_", platform, "DT_FP32", "error: bad index at the end, input unchanged", bad_last_index)
        yield Case("scatter_", platform, "DT_FP32", "error: unknown reduce",
                   lambda: _expect_error(lambda: ptocpu.scatter_(np.zeros((2, 2), np.float32), 0,
                                                                 np.zeros((1, 1), np.int64), 1.0, reduce="max"),
                                         ptocpu.ArgumentError, "max"))


@cases_for('strided_slice', 'strided_slice_view')
def _strided_slice_cases(rng, quick) -> Iterator[Case]:
    specs = [  # (shape, begin, end, strides, masks)
        ((6, 8), [0, 0], [-1, -1], [1, 2], {}),
        ((6, 8), [1, 7], [5, 0], [2, -3], {}),
        ((4, 5, 6), [0, 1], [0, 4], [1, 1], {"ellipsis_mask": 1}),
        ((4, 5, 6), [1, 0, 2], [3, 0, 5], [1, 1, 1], {"shrink_axis_mask": 1, "new_axis_mask": 2}),
        ((5, 6), [0, 0], [0, 0], [-1, -1], {"begin_mask": 3, "end_mask": 3}),
        ((3, 4), [-10, 2], [10, 100], [1, 1], {}),
        ((), [], [], [], {}),
    ]
    if quick:
        specs = specs[:4]
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "strided_slice"):
            for shape, begin, end, strides, masks in specs:
                def run(dtype=dtype, shape=shape, begin=begin, end=end, strides=strides, masks=masks):
                    x = np.array(_random(rng, shape, dtype))  # a 0-d array, not a scalar, for shape ()
                    want = spec_strided_slice(x, begin, end, strides, **masks)
                    pairs = [(ptocpu.strided_slice(x, begin, end, strides, **masks), want),
                             (ptocpu.strided_slice_view(x, begin, end, strides, **masks), want)]
                    if all(s > 0 for s in strides) and all(-n <= b < n for b, n in zip(begin, shape)):
                        pairs.append((pairs[0][0], seed003_strided_slice(x, begin, end, strides, **masks)))
                        pairs += [(pairs[0][0], t) for t in _torch_reference(  # the seed's golden on torch
                            lambda tx: seed003_strided_slice(tx, begin, end, strides, **masks), x, x)]
                    return _compare(pairs)
                yield Case("strided_slice", platform, dtype, f"x{list(shape)} {begin}:{end}:{strides} {masks or ''}", run)
        yield Case("strided_slice", platform, "DT_FP32", "error: zero stride",
                   lambda: _expect_error(lambda: ptocpu.strided_slice(np.zeros((2, 2), np.float32), [0, 0], [2, 2], [1, 0]),
                                         ptocpu.ArgumentError, "0"))
        yield Case("strided_slice", platform, "DT_FP32", "error: shrink index out of range",
                   lambda: _expect_error(lambda: ptocpu.strided_slice(np.zeros((2, 2), np.float32), [5], [6], [1],
                                                                      shrink_axis_mask=1),
                                         ptocpu.IndexOutOfRange, "5"))


def _gather_doc() -> tuple[bool, str, list]:
    """docs/ops/gather.md's example (the same on every platform)."""
    x = np.arange(15, dtype=np.int32).reshape(3, 5)
    index = np.array([[0, 1, 2, 0], [1, 2, 0, 1], [2, 2, 1, 0]], np.int32)
    want = np.array([[0, 6, 12, 3], [5, 11, 2, 8], [10, 11, 7, 3]], np.int32)
    return _compare([(ptocpu.gather(x, 0, index), want)])


@cases_for('gather')
def _gather_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        yield Case("gather", platform, "DT_INT32", "doc example", _gather_doc)

        def official():  # GatherElement_test_0 / 4 / 14 with their tiles
            pairs = []
            for shape, ishape, dim, tile in (((10, 10), (5, 9), 0, (3, 8)), ((16, 16, 16), (8, 8, 8), 0, (16, 8, 8)),
                                             ((32, 32), (32, 32), 1, (16, 32))):
                x = rng.uniform(-1, 1, size=shape).astype(np.float32)
                index = rng.integers(0, shape[dim], size=ishape)
                with ptocpu.vec_tile_shapes(*tile):
                    pairs.append((ptocpu.gather(x, dim, index), _reference.gather(x, dim, index)))
            return _compare(pairs)
        yield Case("gather", platform, "DT_FP32", "official rows GatherElement_test_0/4/14 with tiles", official)
        shapes = [(9,), (5, 6), (3, 4, 5)] if quick else [(9,), (5, 6), (3, 4, 5), (2, 3, 2, 4), (2, 2, 3, 2, 3)]
        for dtype in _platform_dtypes(platform, "gather"):
            for shape in shapes:
                def run(dtype=dtype, shape=shape):
                    x = _random(rng, shape, dtype)
                    dim = len(shape) - 1 if len(shape) % 2 else 0
                    ishape = [max(1, n - 1) for n in shape]
                    ishape[dim] = shape[dim] + 2
                    index = rng.integers(0, shape[dim], size=ishape)
                    out = ptocpu.gather(x, dim, index)
                    want = _reference.gather(x, dim, index)
                    torch_out = _torch_reference(lambda tx, ti: torch.gather(tx, dim, ti), x, x, index)
                    return _compare([(out, want)] + [(out, t) for t in torch_out])
                yield Case("gather", platform, dtype, f"x{list(shape)}", run)
        yield Case("gather", platform, "DT_FP32", "error: index value out of range",
                   lambda: _expect_error(lambda: ptocpu.gather(np.zeros((3, 4), np.float32), 0, np.array([[0, 3]])),
                                         ptocpu.IndexOutOfRange, "index value 3"))


def _scatter_update_doc() -> tuple[bool, str, list]:
    """docs/ops/scatter_update.md's examples (the same on every platform)."""
    x = np.zeros((8, 3), np.int32)
    out = ptocpu.scatter_update(x, -2, np.array([[1, 2], [4, 5]]), np.arange(1, 13, dtype=np.int32).reshape(4, 3))
    want = np.zeros((8, 3), np.int32)
    want[[1, 2, 4, 5]] = np.arange(1, 13).reshape(4, 3)
    x4 = np.zeros((2, 6, 1, 3), np.int32)
    ptocpu.scatter_update(x4, -2, np.array([[1, 8], [4, 10]]), np.arange(1, 13, dtype=np.int32).reshape(2, 2, 1, 3))
    want4 = np.zeros((2, 6, 1, 3), np.int32)
    want4[0, 1, 0], want4[1, 2, 0], want4[0, 4, 0], want4[1, 4, 0] = [1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]
    return _compare([(out, want), (x, want), (x4, want4)])


@cases_for('scatter_update')
def _scatter_update_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        yield Case("scatter_update", platform, "DT_INT32", "doc examples (2-D and 4-D)", _scatter_update_doc)
        for dtype in _platform_dtypes(platform, "scatter_update"):
            for four_d in (False, True):
                def run(dtype=dtype, four_d=four_d):
                    shape = (3, 4, 2, 5) if four_d else (12, 5)
                    slots = 12
                    cache = _random(rng, shape, dtype)
                    index = rng.permutation(slots)[:6].reshape(2, 3)
                    index[1, 2] = -1  # a padding slot: skipped
                    src = _random(rng, (2, 3, 2, 5) if four_d else (6, 5), dtype)
                    want = _reference.scatter_update(cache, index, src)
                    out = ptocpu.scatter_update(cache, -2, index, src)
                    return _compare([(out, want), (cache, want)])
                yield Case("scatter_update", platform, dtype, f"{'4-D' if four_d else '2-D'} cache, one padding slot", run)

        def official_su():  # ScatterUpdate_test_1 (4-D) and _test_2 (2-D) with their tiles
            pairs = []
            for cache_shape, src_shape, index_shape, tile in (((2, 1, 1, 64), (1, 1, 1, 64), (1, 1), (1, 1, 1, 64)),
                                                              ((15, 8), (10, 8), (5, 2), (2, 8))):
                slots = cache_shape[0] * (cache_shape[1] if len(cache_shape) == 4 else 1)
                cache = np.zeros(cache_shape, np.float32)
                src = rng.uniform(-10, 10, size=src_shape).astype(np.float32)
                index = rng.permutation(slots)[:int(np.prod(index_shape))].reshape(index_shape)
                want = _reference.scatter_update(cache, index, src)
                with ptocpu.vec_tile_shapes(*tile):
                    ptocpu.scatter_update(cache, -2, index, src)
                pairs.append((cache, want))
            return _compare(pairs)
        yield Case("scatter_update", platform, "DT_FP32", "official rows ScatterUpdate_test_1/2 with tiles", official_su)

        def bad_last_index():
            cache = np.zeros((6, 4), np.float32)
            index = np.array([[0, 1], [2, 6]])
            ok, detail, _ = _expect_error(lambda: ptocpu.scatter_update(cache, -2, index, np.ones((4, 4), np.float32)),
                                          ptocpu.IndexOutOfRange, "index value 6")
            if ok and cache.any():
                return False, "the cache was written before the error", []
            return ok, detail, []
        yield Case("scatter_update", platform, "DT_FP32", "error: slot too large at the end, cache unchanged",
                   bad_last_index)


def _index_add_doc(out_of_place) -> tuple[bool, str, list]:
    """docs/ops/index_add.md's example (the same on every platform), through index_add or index_add_ub."""
    x = np.zeros((2, 3), np.int32)
    out = out_of_place(x, 0, np.array([0, 1, 0], np.int32), np.ones((3, 3), np.int32))
    return _compare([(out, np.array([[2, 2, 2], [1, 1, 1]], np.int32)), (x, np.zeros((2, 3), np.int32))])


def _index_add_family(rng, quick, in_place: str, out_of_place: str) -> Iterator[Case]:
    """The sums of index_add_ (or its UB form) for every dtype of every platform, against the reference."""
    add_ = getattr(ptocpu, in_place)
    for platform in PLATFORMS:
        yield Case(out_of_place, platform, "DT_INT32", f"doc example ({out_of_place} leaves input untouched)",
                   lambda: _index_add_doc(getattr(ptocpu, out_of_place)))
        shapes = [(6,), (4, 5), (3, 4, 5)] if quick else [(6,), (4, 5), (3, 4, 5), (2, 3, 2, 4), (2, 2, 3, 2, 3)]
        for dtype in _platform_dtypes(platform, in_place):
            for shape in shapes:
                for alpha in (1, 3) if dtype.startswith("DT_UINT") else (1, -1.5):
                    def run(dtype=dtype, shape=shape, alpha=alpha):
                        x = _random(rng, shape, dtype)
                        dim = len(shape) // 2
                        sshape = list(shape)
                        sshape[dim] = 2 * shape[dim] + 1
                        src = _random(rng, sshape, dtype)
                        index = rng.integers(0, shape[dim], size=sshape[dim]).astype(np.int32)
                        want = _reference.index_add(x, dim, index, src, alpha)
                        x0 = x.copy()
                        add_(x, dim, index, src, alpha=alpha)
                        pairs = [(x, want)]
                        # torch adds slice by slice with an int32 index: the same as ours for alpha 1, except
                        # fp16 / bf16, which it rounds per slice where the device accumulates in fp32
                        if alpha == 1 and dtype not in ("DT_FP16", "DT_BF16"):
                            pairs += [(x, t) for t in _torch_reference(
                                lambda tx, ti, ts: tx.index_add(dim, ti, ts), want, x0, index, src)]
                        return _compare(pairs)
                    yield Case(in_place, platform, dtype, f"x{list(shape)} alpha {alpha}", run)
        yield Case(in_place, platform, "DT_FP16", "error: alpha not representable",
                   lambda: _expect_error(lambda: add_(np.zeros((2, 2), np.float16), 0, np.array([0]),
                                                      np.ones((1, 2), np.float16), alpha=65505.0),
                                         ptocpu.ArgumentError, "65505"))


@cases_for('index_add_', 'index_add')
def _index_add_cases(rng, quick) -> Iterator[Case]:
    yield from _index_add_family(rng, quick, "index_add_", "index_add")
    for platform in PLATFORMS:
        def official_ia():  # IndexAddInplace_test_7 (fp32, alpha 1.2) and _test_18 (int8, alpha 127): the CI rows
            pairs = []
            for shape, sshape, dtype, dim, alpha, bound, tile in (((10, 10), (13, 10), np.float32, 0, 1.2, 10, (3, 8)),
                                                                  ((10, 10), (10, 5), np.int8, 1, 127, 100, (10, 32))):
                x = rng.uniform(-bound, bound, size=shape).astype(dtype)
                src = rng.uniform(-bound, bound, size=sshape).astype(dtype)
                index = rng.integers(0, 10, size=sshape[dim]).astype(np.int32)
                want = _reference.index_add(x, dim, index, src, alpha)
                with ptocpu.vec_tile_shapes(*tile):
                    ptocpu.index_add_(x, dim, index, src, alpha=alpha)
                pairs.append((x, want))
            return _compare(pairs)
        yield Case("index_add_", platform, "DT_FP32", "official rows IndexAddInplace_test_7/18 with tiles", official_ia)


@cases_for('index_add__ub', 'index_add_ub')
def _index_add_ub_cases(rng, quick) -> Iterator[Case]:
    yield from _index_add_family(rng, quick, "index_add__ub", "index_add_ub")
    for platform in PLATFORMS:
        def page_tile():  # the page's tile example: input [m, n, p], dim 1, source [m, t, p], tile [4, 16, 32]
            x = rng.uniform(-1, 1, size=(8, 16, 64)).astype(np.float32)
            src = rng.uniform(-1, 1, size=(8, 12, 64)).astype(np.float32)
            index = rng.integers(0, 16, size=12).astype(np.int32)
            want = _reference.index_add(x, 1, index, src, 1)
            with ptocpu.vec_tile_shapes(4, 16, 32):
                ptocpu.index_add__ub(x, 1, index, src)
            return _compare([(x, want)])
        yield Case("index_add__ub", platform, "DT_FP32", "tile [4, 16, 32] holding dim 1 whole", page_tile)

        def split_dim():
            x = np.zeros((4, 16, 32), np.float32)
            with ptocpu.vec_tile_shapes(4, 8, 32):
                ok, detail, _ = _expect_error(lambda: ptocpu.index_add__ub(x, 1, np.arange(10, dtype=np.int32),
                                                                           np.ones((4, 10, 32), np.float32)),
                                              ptocpu.TileError, "splits dim 1")
            if ok and x.any():
                return False, "input was written before the error", []
            return ok, detail, []
        yield Case("index_add__ub", platform, "DT_FP32", "error: a tile that splits dim", split_dim)


def _gathermask_doc() -> tuple[bool, str, list]:
    """docs/ops/gathermask.md's example (the same on every platform)."""
    x = np.arange(18, dtype=np.int32).reshape(3, 6)
    return _compare([(ptocpu.gathermask(x, 1), np.array([[0, 2, 4], [6, 8, 10], [12, 14, 16]], np.int32))])


@cases_for('gathermask')
def _gathermask_cases(rng, quick) -> Iterator[Case]:
    for platform in PLATFORMS:
        yield Case("gathermask", platform, "DT_INT32", "doc example", _gathermask_doc)
        shapes = [(8,), (3, 12)] if quick else [(8,), (3, 12), (2, 3, 16), (2, 2, 3, 8)]
        for dtype in _platform_dtypes(platform, "gathermask"):
            for shape in shapes:
                def run(dtype=dtype, shape=shape):
                    x = _random(rng, shape, dtype)
                    return _compare([(ptocpu.gathermask(x, m), _reference.gathermask(x, m)) for m in range(1, 8)])
                yield Case("gathermask", platform, dtype, f"x{list(shape)} modes 1-7", run)
        def official_gm():  # GatherMask_test_18 / 19, the CI rows, with their tiles
            x18 = rng.uniform(50, 100, size=(8, 3, 112)).astype(np.uint32)
            x19 = rng.integers(-1, 1, size=(4, 8, 8, 780)).astype(np.uint32)
            pairs = []
            for x, mode, tile in ((x18, 2, (1, 1, 8)), (x19, 3, (2, 3, 5, 136))):
                with ptocpu.vec_tile_shapes(*tile):
                    pairs.append((ptocpu.gathermask(x, mode), _reference.gathermask(x, mode)))
            return _compare(pairs)
        yield Case("gathermask", platform, "DT_UINT32", "official rows GatherMask_test_18/19 with tiles", official_gm)
        yield Case("gathermask", platform, "DT_FP32", "error: pattern_mode 8",
                   lambda: _expect_error(lambda: ptocpu.gathermask(np.zeros((2, 8), np.float32), 8),
                                         ptocpu.ArgumentError, "pattern_mode 8"))




def _paged_rows(ids: np.ndarray, pages: np.ndarray, block_size: int) -> np.ndarray:
    """The cache row of each logical token id (docs/ops/paged_gather.md#semantics), one by one."""
    return np.array([int(pages[0, t // block_size]) * block_size + int(t) % block_size for t in ids[0]], np.int64)


def _paged_gather_doc() -> tuple[bool, str, list]:
    """docs/ops/paged_gather.md's example (upstream's page: ids [0, 4, 3], pages [0, 2, 1], block 2)."""
    cache = np.arange(24, dtype=np.float32).reshape(6, 4)
    ids, pages = np.array([[0, 4, 3]], np.int32), np.array([[0, 2, 1]], np.int32)
    want = cache[[0, 2, 5]]
    from .matmul import _Tile
    with _Tile():
        l1 = ptocpu.experimental.gather_in_l1(cache, ids, pages, 2, 2, False, False)
    return _compare([(ptocpu.experimental.gather_in_ub(cache, ids, pages, 2, -2), want), (l1, want[:, :2])])


@cases_for('gather_in_ub', 'gather_in_l1')
def _paged_gather_cases(rng, quick) -> Iterator[Case]:
    from .matmul import _Tile
    for platform in PLATFORMS:
        for op in ("gather_in_ub", "gather_in_l1"):
            yield Case(op, platform, "DT_FP32", "doc example", _paged_gather_doc)
            for dtype in _platform_dtypes(platform, op):
                # (cache rows, hidden, pages in the table, block size, picked ids)
                for rows, hidden, n_pages, block, k in ((32, 4, 3, 4, 8), (96, 30, 7, 10, 33), (90, 64, 5, 16, 80)):
                    def run(op=op, dtype=dtype, rows=rows, hidden=hidden, n_pages=n_pages, block=block, k=k):
                        cache = _random(rng, (rows, hidden), dtype)
                        pages = rng.permutation(rows // block)[:n_pages].reshape(1, -1).astype(np.int32)
                        ids = rng.integers(0, n_pages * block, size=(1, k)).astype(np.int32)
                        want = cache[_paged_rows(ids, pages, block)]
                        if op == "gather_in_ub":
                            return _compare([(ptocpu.experimental.gather_in_ub(cache, ids, pages, block, -2), want)])
                        size = max(1, hidden - 3)
                        with _Tile():
                            got = ptocpu.experimental.gather_in_l1(cache, ids, pages, block, size, True, True)
                        return _compare([(got, np.ascontiguousarray(want[:, :size]))])
                    yield Case(op, platform, dtype, f"cache [{rows}, {hidden}], {n_pages} pages of {block}, {k} ids", run)
            def outside(op=op):
                with _Tile():
                    return _expect_error(
                        lambda: getattr(ptocpu.experimental, op)(
                            np.zeros((8, 4), np.float32), np.array([[0, 6]], np.int32), np.array([[0, 1, 0]], np.int32),
                            2, *((-2,) if op == "gather_in_ub" else (4, False, False))),
                        ptocpu.IndexOutOfRange, "indices[0, 1] = 6 is outside the page table")
            yield Case(op, platform, "DT_FP32", "error: id outside the page table", outside)
