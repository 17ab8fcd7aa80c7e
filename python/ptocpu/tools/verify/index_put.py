"""verify's cases of index_put_ (docs/ops/index_put_.md): reference.index_put's numpy loop over the
positions in index order, every dtype of every platform, both modes, and the error rules."""
from __future__ import annotations

from typing import Iterator

import numpy as np

import ptocpu

from .. import reference as _reference
from .common import PLATFORMS, Case, cases_for, _compare, _expect_error, _platform_dtypes, _random

_ACCUMULATING_ON_CHIPS = {"DT_BF16", "DT_FP16", "DT_FP32", "DT_INT8", "DT_INT16", "DT_INT32"}


@cases_for('index_put_')
def _index_put_cases(rng, quick) -> Iterator[Case]:
    shapes = [(6,), (4, 5), (3, 4, 5)] if quick else [(6,), (4, 5), (3, 4, 5), (2, 3, 2, 4)]
    for platform in PLATFORMS:
        for dtype in _platform_dtypes(platform, "index_put_"):
            for shape in shapes:
                for accumulate in (False, True):
                    if accumulate and platform != "cpu" and dtype not in _ACCUMULATING_ON_CHIPS:
                        continue

                    def run(dtype=dtype, shape=shape, accumulate=accumulate):
                        k = len(shape) // 2 + 1
                        t = 2 * shape[0] + 1  # positions repeat
                        indices = [rng.integers(0, shape[i], size=t).astype(np.int32) for i in range(k)]
                        x = _random(rng, shape, dtype)
                        values = _random(rng, (t,) + tuple(shape[k:]), dtype)
                        want = _reference.index_put(x, indices, values, accumulate)
                        ptocpu.index_put_(x, tuple(indices), values, accumulate)
                        return _compare([(x, want)])
                    yield Case("index_put_", platform, dtype,
                               f"{len(shape)}-D, {'accumulate' if accumulate else 'assign'}, repeated positions", run)

        def out_of_range():
            x = np.zeros((3, 4), np.float32)
            ok, detail, _ = _expect_error(
                lambda: ptocpu.index_put_(x, (np.array([0, 3]),), np.ones((2, 4), np.float32)),
                ptocpu.IndexOutOfRange, "index value 3")
            return (False, "input was written before the error", []) if ok and x.any() else (ok, detail, [])
        yield Case("index_put_", platform, "DT_FP32", "error: index value past the dim, input unchanged", out_of_range)
