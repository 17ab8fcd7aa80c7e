"""The reduction family (docs/ops/reduction.md and the pages of sum / prod, amax / amin, argmax /
argmin, var, cumsum / cumprod): every dtype and rank of each platform row against references
written without ptocpu (the documented summation order in numpy float32 / float64 arithmetic, bit
for bit, and float64 within the documented bound; integer math; numpy's max / argmax with the
page's NaN and signed-zero rules), layouts and views, 1 and 2 threads, NaN / inf, the pages'
examples, upstream's shape rules and one test per error rule."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from helpers import assert_same_bits, np_dtype, op_table
from ptocpu.tools.verify import reduction as ref

PLATFORMS = ["cpu", "ascend950", "atlas_a3", "atlas_a2"]
SINGLE_DIM = ["sum", "prod", "amax", "amin", "argmax", "argmin"]
SCANS = ["cumsum", "cumprod"]
BF16 = np.dtype(ml_dtypes.bfloat16)


def values(rng, shape, dt: np.dtype, lo=-2.0, hi=2.0) -> np.ndarray:
    if ref.is_float(dt):
        return rng.uniform(lo, hi, size=shape).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dt)


def expected(op: str, x: np.ndarray, dim: int, keepdim: bool = False) -> np.ndarray:
    """op's result from the references (keepdim applied as the page says)."""
    if op in ("sum", "prod"):
        out = ref.ref_sum(x, dim, op == "prod")
    elif op in ("amax", "amin"):
        out = ref.ref_extreme(x, dim, op == "amax")
    elif op in ("argmax", "argmin"):
        out = ref.ref_arg(x, dim, op == "argmax")
    else:
        return ref.ref_scan(x, dim, op == "cumprod")
    return ref.squeeze(out, [dim], keepdim)


def call(op: str, x, dim: int, keepdim: bool = False):
    f = getattr(ptocpu, op)
    return f(x, dim) if op in SCANS else f(x, dim, keepdim)


def check(op: str, x: np.ndarray, dim: int, keepdim: bool = False):
    """ptocpu bit for bit against the reference, and the reference within the float64 bound."""
    data = ref.near_one(x) if op in ("prod", "cumprod") else x
    got = call(op, data, dim, keepdim)
    want = expected(op, data, dim, keepdim)
    assert_same_bits(got, want)
    if ref.is_float(x.dtype) and op in ("sum", "prod"):
        ok, detail = ref.within_sum_bound(want, data, dim, op == "prod")
        assert ok, detail
    if ref.is_float(x.dtype) and op in SCANS:
        ok, detail = ref.within_scan_bound(want, data, dim, op == "cumprod")
        assert ok, detail


# ---------------------------------------------------------------- the pages' examples

def test_page_examples():
    x = np.array([[1, 2, 3], [1, 2, 3]], np.float32)
    y = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    assert ptocpu.sum(x, -1, True).tolist() == [[6.0], [6.0]]
    assert ptocpu.sum(y, 0).tolist() == [5, 7, 9] and ptocpu.sum(y, -1).tolist() == [6, 15]
    assert ptocpu.prod(x, -1, True).tolist() == [[6.0], [6.0]]
    assert ptocpu.amax(x, -1, True).tolist() == [[3.0], [3.0]]
    assert ptocpu.amax(y, 0).tolist() == [4, 5, 6] and ptocpu.amax(y, -1).tolist() == [3, 6]
    assert ptocpu.amin(x, -1, True).tolist() == [[1.0], [1.0]]
    assert ptocpu.amin(y, 0).tolist() == [1, 2, 3] and ptocpu.amin(y, -1).tolist() == [1, 4]
    a = ptocpu.argmax(x, -1, True)
    assert a.tolist() == [[2], [2]] and a.dtype == ptocpu.DT_INT32
    assert ptocpu.argmax(np.array([[1, 3, 2], [4, 1, 5]], np.float32), dim=1).tolist() == [1, 2]
    assert ptocpu.argmax(y, 0).tolist() == [1, 1, 1] and ptocpu.argmax(y, -1).tolist() == [2, 2]
    assert ptocpu.argmin(x, -1, True).tolist() == [[0], [0]]
    assert ptocpu.argmin(np.array([[1, 3, 2], [4, 1, 5]], np.float32), dim=1).tolist() == [0, 1]
    assert ptocpu.argmin(y, 0).tolist() == [0, 0, 0] and ptocpu.argmin(y, -1).tolist() == [0, 0]
    assert ptocpu.var(y, 1, correction=1, keepdim=True).tolist() == [[1.0], [1.0]]
    assert ptocpu.var(y, [1], 0).numpy().tolist() == [np.float32(2 / 3)] * 2
    c = ptocpu.cumsum(np.array([[0, 1, 2], [3, 4, 5]], np.int32), 0)
    assert c.tolist() == [[0, 1, 2], [3, 5, 7]] and c.dtype == ptocpu.DT_INT64
    assert ptocpu.cumprod(np.array([[0, 1, 2], [3, 4, 5]], np.float32), 0).tolist() == [[0, 1, 2], [0, 4, 10]]


# ---------------------------------------------------------------- every platform row

@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("op", SINGLE_DIM + SCANS)
def test_every_platform_dtype_rank_and_dim(platform, op):
    row = op_table(platform, op)
    lo, hi = row["rank"]
    rng = np.random.default_rng(PLATFORMS.index(platform))
    with ptocpu.platform(platform):
        for name in row["dtypes"].split(", "):
            dt = np_dtype(name)
            for rank in range(lo, min(hi, 5) + 1):
                shape = tuple(int(rng.integers(1, 6)) for _ in range(rank - 1)) + (int(rng.integers(1, 40)),)
                x = values(rng, shape, dt)
                for dim in range(-rank, rank):
                    check(op, x, dim, keepdim=bool(dim % 2))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_var_every_platform_dtype_and_dims(platform):
    row = op_table(platform, "var")
    rng = np.random.default_rng(7)
    with ptocpu.platform(platform):
        for name in row["dtypes"].split(", "):
            x = values(rng, (3, 4, 5, 6), np_dtype(name))
            for dims in ([1], [-1], [0, 2], [3, 1, 0], [0, 1, 2, 3], None, []):
                for keepdim in (False, True):
                    got = ptocpu.var(x, dims, keepdim=keepdim)
                    want = ref.ref_var(x, dims)
                    assert_same_bits(got, ref.squeeze(want, dims or range(4), keepdim))
                    ok, detail = ref.var_bound(want, x, dims)
                    assert ok, detail


@pytest.mark.parametrize("dt", [np.float32, np.float16, BF16, np.float64])
@pytest.mark.parametrize("shape, dim", [((5000,), 0), ((3, 9000), 1), ((700, 5), 0), ((4, 300, 6), 1),
                                        ((2, 40, 33), -1), ((9000, 2), 0), ((3, 20, 700), 1), ((2, 200, 1100), 1),
                                        ((3, 20, 100), 1), ((3, 20, 200), 1), ((37, 300, 2), 1), ((11, 129, 3), 1),
                                        ((3, 5, 257, 7), 2), ((9, 64, 8), 1)])
def test_long_axes_in_both_orders(dt, shape, dim):
    """Several chunks (lanes) and several row blocks (columns), in the contiguous layout and in the
    transposed one, which reads the other way. Wide rows of a block are read in strips: in registers
    with a partial strip left over ([3, 20, 700]), in 2 KiB strips ([2, 200, 1100]); rows too narrow
    for strips ([3, 20, 100]) and just wide enough ([3, 20, 200]). Columns of 2-8 values side by side
    for several outer indices, in whole and partial groups, one and several row blocks, two outer dims
    ([37, 300, 2], [11, 129, 3], [3, 5, 257, 7], [9, 64, 8])."""
    rng = np.random.default_rng(len(shape) + dim)
    x = values(rng, shape, np.dtype(dt))
    t = np.ascontiguousarray(x.swapaxes(0, -1)).swapaxes(0, -1)
    for op in ("sum", "prod", "cumsum", "cumprod", "amax", "argmin"):
        check(op, x, dim)
        check(op, t, dim)
    for data in (x, t):
        assert_same_bits(ptocpu.var(data, dim), ref.squeeze(ref.ref_var(data, [dim]), [dim], False))


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int8])
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
def test_many_short_rows_in_whole_and_partial_groups(dt, n):
    """Rows that follow each other go through the lanes 64 at a time (a fixed-size transpose for
    lengths 2 to 8): a row count that leaves a partial group, ties, NaN and signed zeros."""
    rng = np.random.default_rng(n)
    x = values(rng, (1000, n), np.dtype(dt), -3, 3)
    if ref.is_float(x.dtype):
        x = np.round(x)  # ties and zeros
        x[7, 0], x[70, n - 1] = np.nan, -0.0
    for op in SINGLE_DIM:
        check(op, x, -1)


def extreme(v: np.ndarray, largest: bool, axis: int = 1) -> np.ndarray:
    """amax / amin by the page's rules: any NaN gives NaN; +0 is the larger zero."""
    with np.errstate(invalid="ignore"):
        m = v.max(axis) if largest else v.min(axis)
    zero_wins = (v == 0) & (np.signbit(v) != largest)  # +0 for amax, -0 for amin
    m = np.where((m == 0) & zero_wins.any(axis), v.dtype.type(0.0 if largest else -0.0), m)
    return np.where(np.isnan(v).any(axis), np.nan, m).astype(v.dtype)


@pytest.mark.parametrize("n", [8, 9, 16, 22, 24, 33, 40, 64, 100, 136, 255, 256])
@pytest.mark.parametrize("rows", [1003, 8, 5])
def test_packed_rows_fold_in_the_lane_order_on_every_isa(rows, n):
    """Packed rows of 8 to 256 values (sum / prod of fp32, bf16 and int32, amax / amin of int32 and
    fp32) are folded eight rows at a time in AVX2 registers (src/kernels/reduction.cpp
    fold_packed_rows; a row's last n % 8 values a masked step), the rows left over one by one, bf16
    rows from an fp32 copy or widened in registers: each row in docs/ops/reduction.md's lane
    order (element i to lane i mod 32 from the identity, so a row of -0.0 sums to +0.0; lanes j and
    j + 16, j + 8, j + 4, j + 2, j + 1), bit for bit on every ISA; fp32 (and fp16) amax / amin by the
    NaN and signed-zero rules (any NaN gives NaN; +0 is the larger zero)."""
    rng = np.random.default_rng(rows + n)
    x = (rng.standard_normal((rows, n)) * 1000.0 ** rng.integers(-1, 2, (rows, n))).astype(np.float32)
    x[min(3, rows - 1)] = -0.0
    i = rng.integers(-(2 ** 31), 2 ** 31, (rows, n)).astype(np.int32)
    special = x.copy()
    for r, row in enumerate(([np.nan, 1, 2, 3, 4, 5, 6, 7], [-0.0, 0.0, -0.0, -1, -2, -3, -4, -5],
                             [0.0, -0.0, 1, 2, 3, 4, 5, -np.inf], [-np.nan, -np.inf] + [-1.0] * 6,
                             [np.inf, -0.0, 0.0, 3, 4, 5, 6, 7], [-0.0] * 8)):
        special[(5 * r + 1) % rows] = np.roll(np.resize(row, n), 8 * r)

    def lane_tree(v, combine, identity):
        lanes = [np.full_like(v[:, 0], identity) for _ in range(32)]
        for k in range(v.shape[1]):
            lanes[k % 32] = combine(lanes[k % 32], v[:, k])
        for half in (16, 8, 4, 2, 1):
            lanes = [combine(lanes[j], lanes[j + half]) for j in range(half)]
        return lanes[0]

    with np.errstate(over="ignore", invalid="ignore"):  # inf * 0 in prod
        cases = [(ptocpu.sum, x, lane_tree(x, np.add, 0)), (ptocpu.prod, x, lane_tree(x, np.multiply, 1)),
                 (ptocpu.sum, i, lane_tree(i, np.add, 0)), (ptocpu.prod, i, lane_tree(i, np.multiply, 1)),
                 (ptocpu.amax, i, lane_tree(i, np.maximum, np.iinfo(np.int32).min)),
                 (ptocpu.amin, i, lane_tree(i, np.minimum, np.iinfo(np.int32).max)),
                 (ptocpu.amax, special, extreme(special, True)), (ptocpu.amin, special, extreme(special, False)),
                 (ptocpu.amax, special.astype(np.float16), extreme(special.astype(np.float16), True))]
        half = x.astype(ml_dtypes.bfloat16)  # summed in fp32 in the lane order, rounded once
        cases.append((ptocpu.sum, half, lane_tree(half.astype(np.float32), np.add, 0).astype(ml_dtypes.bfloat16)))
    try:
        for isa in ("avx512", "avx2", "baseline"):
            ptocpu._core._set_kernel_tuning(isa=isa)
            for op, data, want in cases:
                got = op(ptocpu.asarray(data), -1).numpy()
                bits = np.int16 if data.dtype.itemsize == 2 else np.int32
                np.testing.assert_array_equal(got.view(bits), want.view(bits), err_msg=f"{op.__name__} {isa}")
    finally:
        ptocpu._core._set_kernel_tuning(isa=None)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 8, 4396), (1, 32, 9000), (4, 2, 4200), (2, 17, 4225)])
def test_few_rows_of_wide_columns_compare_as_floats(dt, shape):
    """amax / amin over a middle dim of at most 32 rows, too wide for packed rows (a piece takes 16 KiB
    of accumulators): a piece's row segments in 256-byte strips compared as floats in registers, a
    NaN and the zeros' signs kept beside the values (reduction.cpp accumulate_strip_floats), a last
    piece's columns past its last whole strip one by one. Columns of +0, -0,
    mixed zeros, zeros under negatives, -inf, a NaN in the first, a middle or the last row."""
    rng = np.random.default_rng(shape[1])
    x = rng.standard_normal(shape).astype(dt)
    rows, w = shape[1], shape[2]
    special = [np.zeros(rows), np.full(rows, -0.0), np.where(np.arange(rows) % 2, 0.0, -0.0),
               np.where(np.arange(rows) % 3, -1.0, -0.0), np.where(np.arange(rows) == rows - 1, 0.0, -0.0),
               np.where(np.arange(rows) == rows - 1, -0.0, 1.0), np.full(rows, -np.inf), np.full(rows, np.inf)]
    for r in (0, rows // 2, rows - 1):
        column = np.arange(rows, dtype=float)
        column[r] = np.nan
        special.append(column)
    for k, column in enumerate(special):
        for c in (k, w // 2 + k, w - 1 - k):  # the first strip, a middle one, past the last
            x[k % shape[0], :, c] = column
    for largest in (True, False):
        got = (ptocpu.amax if largest else ptocpu.amin)(x, 1).numpy()
        assert_same_bits(got, extreme(x, largest))


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.float64])
@pytest.mark.parametrize("shape", [(37, 300, 2), (13, 130, 4), (5, 129, 8), (11, 70, 3), (6, 200, 5), (7, 90, 6),
                                   (9, 70, 7)])
def test_narrow_columns_of_several_outers_on_every_isa(dt, shape):
    """A middle dim over rows of 2-8 values: the outer indices' rows side by side, padded to 2, 4 or 8
    (a transpose in registers for 4-byte rows on AVX-512, rows of 3, 5, 6, 7 spread by an expanding
    load; row by row otherwise), in whole and partial groups of outers, with rows left over, in one
    and several row blocks; ties, NaN and signed zeros for the first index and the NaN rule of
    argmax / argmin."""
    rng = np.random.default_rng(sum(shape))
    x = values(rng, shape, np.dtype(dt), -3, 3)
    if ref.is_float(x.dtype):
        x = np.round(x)  # ties and zeros
        x[1, 5, 0], x[-1, 60, -1], x[2, 0, 1] = np.nan, np.nan, -0.0
    try:
        for isa in ("avx512", "avx2", "baseline"):
            ptocpu._core._set_kernel_tuning(isa=isa)
            for op in SINGLE_DIM:
                check(op, x, 1)
    finally:
        ptocpu._core._set_kernel_tuning()


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.int8])
@pytest.mark.parametrize("shape, dim", [((1, 70000), 0), ((300, 1, 7), 1), ((3, 1, 5000), -2), ((2, 3, 1), 2),
                                        ((700, 1, 1, 33), 1)])
def test_a_reduced_dim_of_one_element(dt, shape, dim):
    """Each result is its one value from the identity (sum of -0 is +0, argmax 0, var 0), in long
    runs, in several outer dims, and read through a transposed layout."""
    rng = np.random.default_rng(len(shape))
    x = values(rng, shape, np.dtype(dt))
    if ref.is_float(x.dtype):
        flat = x.reshape(-1)
        flat[3], flat[5] = np.nan, -0.0
    t = np.ascontiguousarray(x.swapaxes(0, -1)).swapaxes(0, -1)
    for data in (x, t):
        for op in SINGLE_DIM:
            check(op, data, dim)
            check(op, data, dim, keepdim=True)
        if ref.is_float(x.dtype):
            for op in SCANS:
                check(op, data, dim)
            assert_same_bits(ptocpu.var(data, dim), ref.squeeze(ref.ref_var(data, [dim]), [dim], False))


# ---------------------------------------------------------------- layouts and views

def test_layouts_that_keep_the_order_give_the_same_bits():
    rng = np.random.default_rng(3)
    x = values(rng, (37, 300), np.dtype(np.float32))
    wide = np.zeros((37, 512), np.float32)
    wide[:, 100:400] = x
    padded = wide[:, 100:400]          # padded rows
    reversed_rows = x[::-1][::-1]      # negative then positive strides: a view
    for op in SINGLE_DIM + SCANS:
        for dim in (0, 1):
            want = call(op, x, dim).numpy()
            assert_same_bits(call(op, padded, dim), want)
            assert_same_bits(call(op, reversed_rows, dim), want)
            check(op, x[::-2], dim)     # negative stride along the rows
            check(op, x[:, ::-3], dim)  # negative stride along the reduced / kept axis


def test_broadcast_input():
    x = np.broadcast_to(np.arange(6, dtype=np.float32)[None, :], (5000, 6))  # stride 0 along dim 0
    assert ptocpu.sum(x, 0).tolist() == [0.0, 5000.0, 10000.0, 15000.0, 20000.0, 25000.0]
    assert ptocpu.cumsum(x, 0).numpy()[-1].tolist() == [0.0, 5000.0, 10000.0, 15000.0, 20000.0, 25000.0]
    check("sum", x, 1)
    check("argmax", x, 0)


def test_valid_shape_views_read_only_the_valid_part():
    data = np.arange(64, dtype=np.float32).reshape(8, 8)
    v = ptocpu.view(ptocpu.asarray(data), [4, 8], [4, 0], valid_shape=[3, 5])
    part = data[4:7, :5]
    for op in SINGLE_DIM + SCANS:
        for dim in (0, 1):
            assert_same_bits(call(op, v, dim), call(op, part, dim).numpy())
    assert_same_bits(ptocpu.var(v, [0, 1]), ptocpu.var(part, [0, 1]).numpy())
    assert v.sum(1).tolist() == part.sum(1).tolist()


# ---------------------------------------------------------------- threads

# Shapes where 1 and 2 threads take different paths (one-pass / three-pass scans, parallel chunks and
# row blocks) and must still agree bit for bit.
THREAD_CASES = [((1 << 18,), 0), ((24, 9000), 1), ((9000, 3000), 0), ((3, 2, 20000), -1), ((20000, 24), 0),
                ((2049, 40), 1), ((6, 5000, 7), 1), ((4, 20, 3000), 1)]


@pytest.mark.parametrize("shape, dim", THREAD_CASES)
def test_one_and_two_threads_give_the_same_bits(shape, dim):
    rng = np.random.default_rng(11)
    x = values(rng, shape, np.dtype(np.float32))
    h = x.astype(BF16)
    results = []
    for threads in (1, 2, 3):
        ptocpu.set_num_threads(threads)
        results.append([call(op, d, dim).numpy() for op in SINGLE_DIM + SCANS for d in (x, h)]
                       + [ptocpu.var(x, dim).numpy(), ptocpu.var(h, None).numpy()])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert_same_bits(b, a)


@pytest.mark.parametrize("dt", [np.float16, BF16])
def test_half_rows_widened_in_registers_on_every_instruction_set(dt):
    """fp16 / bf16 rows along a contiguous axis are widened to fp32 a register at a time inside the
    lanes (docs/ops/reduction.md#speed; fp16 with AVX-512 or F16C, bf16 in every build), elsewhere
    through an fp32 buffer: the reference's order and bits on each instruction set, for a line of
    several chunks with a tail, packed rows of one chunk, rows that are no multiple of the lanes, an
    offset view, ties, NaN and signed zeros."""
    rng = np.random.default_rng(45)
    line = values(rng, (3 * 4096 + 77,), np.dtype(dt))
    rows = values(rng, (40, 4096), np.dtype(dt))
    odd = np.round(values(rng, (33, 1000), np.dtype(dt), -3, 3))  # ties and zeros
    odd[3, 500], odd[5, 0], odd[6, 999] = np.nan, -0.0, np.nan
    odd[7] = -0.0
    odd[8, 900] = 0.0
    previous = ptocpu.get_num_threads()
    try:
        for isa in ("avx512", "avx2", "baseline"):
            ptocpu._core._set_kernel_tuning(-1, isa=isa)
            for threads in (1, 2):
                ptocpu.set_num_threads(threads)
                for x in (line, rows, odd, odd[:, 3:]):
                    for op in ("sum", "prod", "amax", "amin", "argmax", "argmin"):
                        if not (op == "prod" and x.shape[-1] < 4096):  # 1000 factors of 0.98 underflow fp16
                            check(op, x, -1)
    finally:
        ptocpu._core._set_kernel_tuning()
        ptocpu.set_num_threads(previous)


# ---------------------------------------------------------------- numerics

def test_nan_inf_and_signed_zeros():
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    x = np.array([[1, nan, 3, nan], [-0.0, 0.0, -0.0, -1], [inf, -inf, 2, 2], [-0.0, -0.0, -5, -5]], np.float32)
    assert_same_bits(ptocpu.amax(x, 1), np.array([nan, 0.0, inf, -0.0], np.float32))
    assert_same_bits(ptocpu.amin(x, 1), np.array([nan, -1, -inf, -5], np.float32))
    assert_same_bits(ptocpu.amin(np.array([[0.0, -0.0, 1]], np.float32), 1), np.array([-0.0], np.float32))
    assert ptocpu.argmax(x, 1).tolist() == [1, 0, 0, 0]     # first NaN; -0 ties +0 (first); ties: first
    assert ptocpu.argmin(x, 1).tolist() == [1, 3, 1, 2]
    assert ptocpu.argmax(np.array([-0.0, 0.0], np.float32), 0).tolist() == [0]
    s = ptocpu.sum(x, 1).numpy()
    assert np.isnan(s[0]) and s[1] == -1 and np.isnan(s[2]) and s[3] == -10
    assert_same_bits(ptocpu.sum(np.array([-0.0, -0.0], np.float32), 0), np.array([0.0], np.float32))
    assert_same_bits(ptocpu.cumsum(np.array([-0.0, 1], np.float32), 0), np.array([0.0, 1], np.float32))
    assert np.isnan(ptocpu.prod(np.array([0, inf], np.float32), 0).numpy()).all()
    c = ptocpu.cumsum(np.array([1, nan, 2], np.float32), 0).numpy()
    assert c[0] == 1 and np.isnan(c[1:]).all()
    for dt in (np.float16, BF16):
        h = x.astype(dt)
        got = ptocpu.amax(h, 1).numpy()
        assert np.isnan(got[0].astype(np.float32)) and got.dtype == np.dtype(dt)
        assert ptocpu.argmax(h, 1).tolist() == [1, 0, 0, 0]


def test_half_precision_accumulates_in_fp32_and_rounds_once():
    ones = np.ones(16, np.float32)
    bf = np.concatenate([[256.0], ones]).astype(BF16)           # bf16 steps would stay at 256
    assert ptocpu.sum(bf, 0).numpy().astype(np.float32).tolist() == [272.0]
    assert ptocpu.cumsum(bf, 0).numpy().astype(np.float32)[-1] == 272.0
    fp = np.array([2048, 1, 1], np.float16)                    # fp16 steps would stay at 2048
    assert ptocpu.cumsum(fp, 0).tolist() == [2048.0, 2048.0, 2050.0]  # 2049 rounds to even, 2050 exact
    assert ptocpu.var(np.array([1024, 1025, 1026], np.float16), 0).tolist() == [1.0]
    v = ptocpu.var(np.array([1, 2, 3, 4], BF16), 0, correction=0)
    assert v.dtype == ptocpu.DT_BF16 and v.numpy().astype(np.float32).tolist() == [1.25]


@pytest.mark.parametrize("dt", [np.float32, np.float16, BF16])
def test_cumprod_through_the_subnormal_range(dt):
    # Offsets that fall to tiny and subnormal values (the fp64 product, rounded once) and outputs that
    # cross below the normal range, in every layout: one long line (three passes), several lines, and
    # down the columns. Bit for bit against the reference order.
    rng = np.random.default_rng(7)
    n = 6 * 4096 + 123
    line = rng.uniform(0.994, 0.996, n)
    lines = np.stack([line, line[::-1], -line, np.where(np.arange(n) == 5000, np.nan, line)])
    for x, dim in [(line, 0), (lines, 1), (np.ascontiguousarray(lines.T), 0), (lines[:1, :9000].T.copy(), 0)]:
        x = x.astype(dt)
        want = ref.ref_scan(x, dim, True)
        got = ptocpu.cumprod(x, dim).numpy()
        assert_same_bits(got, want)
    f32 = ptocpu.cumprod(line.astype(np.float32), 0).numpy()
    tiny = np.finfo(np.float32).tiny
    assert np.count_nonzero((f32 != 0) & (np.abs(f32) < tiny)) > 1000  # the data does cross the range


def test_integers_wrap_as_the_device():
    assert ptocpu.sum(np.full(300, 200, np.int16), 0).tolist() == [np.int16(60000 - 65536)]
    assert ptocpu.sum(np.full(3, 2 ** 30, np.int32), 0).tolist() == [-(2 ** 30)]
    assert ptocpu.prod(np.full(3, 2 ** 11, np.int32), 0).tolist() == [0]
    big = np.array([2 ** 31 - 1, 1, 1], np.int32)
    c = ptocpu.cumsum(big, 0)
    assert c.dtype == ptocpu.DT_INT64 and c.tolist() == [2 ** 31 - 1, -(2 ** 31), -(2 ** 31) + 1]
    assert ptocpu.cumsum(np.array([30000, 30000], np.int16), 0).tolist() == [30000, 60000]
    assert ptocpu.cumsum(np.array([2 ** 40, 2 ** 40], np.int64), 0).tolist() == [2 ** 40, 2 ** 41]
    assert ptocpu.amax(np.array([[-128, 127]], np.int8), 1).tolist() == [127]
    assert ptocpu.argmin(np.array([5, 2, 2, 9], np.uint16), 0).tolist() == [1]
    assert ptocpu.argmax(np.array([1, 2 ** 64 - 1, 2 ** 63], np.uint64), 0).tolist() == [1]
    assert ptocpu.argmax(np.array([1.5, 2 ** 60, -np.inf]), 0).tolist() == [1]


def test_error_bound_of_long_fp32_sums():
    """The documented order stays within its bound; measured against float64 it is far inside."""
    rng = np.random.default_rng(5)
    for shape, dim in (((1 << 20,), 0), ((1 << 16, 16), 0), ((16, 1 << 16), 1)):
        x = rng.standard_normal(shape).astype(np.float32)
        got = ptocpu.sum(x, dim, True).numpy()
        ok, detail = ref.within_sum_bound(got, x, dim)
        assert ok, detail
        exact = x.astype(np.float64).sum(dim, keepdims=True)
        scale = np.abs(x.astype(np.float64)).sum(dim, keepdims=True)
        assert (np.abs(got - exact) / scale).max() < 2 ** -24 * 16


# ---------------------------------------------------------------- shapes, signatures, empty tensors

def test_shapes_of_the_results():
    x = np.ones((2, 3, 4), np.float32)
    assert ptocpu.sum(np.ones(5, np.float32), 0).shape == (1,)   # 1-D keeps [1], as upstream
    assert ptocpu.argmax(np.ones(5, np.float32)).shape == (1,)
    assert ptocpu.amax(x, 1).shape == (2, 4) and ptocpu.amax(x, 1, True).shape == (2, 1, 4)
    assert ptocpu.var(x).shape == (1,) and ptocpu.var(x, keepdim=True).shape == (1, 1, 1)
    assert ptocpu.var(x, (0, 2)).shape == (3,) and ptocpu.var(x, [], keepdim=True).shape == (1, 1, 1)
    assert ptocpu.cumsum(x, 1).shape == (2, 3, 4) and ptocpu.cumsum(x.astype(np.int16), 1).dtype == ptocpu.DT_INT64
    assert ptocpu.cumsum(x.astype(np.float16), 1).dtype == ptocpu.DT_FP16


def test_tensor_methods_where_upstream_has_them():
    t = ptocpu.asarray(np.array([[1, 5, 2], [7, 0, 3]], np.float32))
    assert t.sum(1).tolist() == [8, 10] and t.amax(0).tolist() == [7, 5, 3] and t.amin(1, True).tolist() == [[1], [0]]
    assert t.argmax(1).tolist() == [1, 0] and t.argmin(0).tolist() == [0, 1, 0]
    assert t.cumsum(1).tolist() == [[1, 6, 8], [7, 7, 10]] and t.cumprod(0).tolist() == [[1, 5, 2], [7, 0, 6]]
    assert t.var(1, correction=0, keepdim=True).shape == (2, 1)
    assert not hasattr(ptocpu.Tensor, "prod")  # upstream's Tensor has no prod


def test_empty_tensors_on_cpu():
    assert ptocpu.sum(np.ones((3, 0), np.float32), 1).tolist() == [0.0, 0.0, 0.0]
    assert ptocpu.prod(np.ones((3, 0), np.int32), 1).tolist() == [1, 1, 1]
    assert ptocpu.amax(np.ones((0, 3), np.float32), 1).shape == (0,)
    assert ptocpu.cumsum(np.ones((0, 3), np.int32), 1).shape == (0, 3)
    assert ptocpu.argmax(np.ones((3, 0), np.float32), 0).shape == (0,)  # nothing to pick: an empty result


# ---------------------------------------------------------------- errors, one rule each

def test_error_dtype_rank_and_empty_on_the_chips():
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.DTypeError, match=r"sum: input dtype DT_FP16 is not supported on platform "
                                                    r"ascend950; allowed: .*DT_BF16"):
            ptocpu.sum(np.ones(4, np.float16), 0)
        with pytest.raises(ptocpu.DTypeError, match=r"argmax: input dtype DT_INT32 is not supported"):
            ptocpu.argmax(np.ones(4, np.int32), 0)
        assert ptocpu.amax(np.ones(4, np.int8), 0).tolist() == [1]   # 950 lists int8
        with pytest.raises(ptocpu.ArgumentError, match=r"cumsum: input rank 5 is out of range \[1, 4\]"):
            ptocpu.cumsum(np.ones((1,) * 5, np.float32), 0)
        with pytest.raises(ptocpu.ArgumentError, match=r"prod: input shape \[2, 0\] is empty"):
            ptocpu.prod(np.ones((2, 0), np.float32), 0)
    with ptocpu.platform("atlas_a2"):
        with pytest.raises(ptocpu.DTypeError, match=r"amin: input dtype DT_INT8 is not supported on platform atlas_a2"):
            ptocpu.amin(np.ones(4, np.int8), 0)
    with pytest.raises(ptocpu.ArgumentError, match=r"sum: input rank 0 is out of range \[1, 8\]"):
        ptocpu.sum(np.float32(1), 0)
    with pytest.raises(ptocpu.DTypeError, match=r"var: input dtype DT_INT32 is not supported on platform cpu"):
        ptocpu.var(np.ones(3, np.int32))


@pytest.mark.parametrize("op", SINGLE_DIM + SCANS)
def test_error_dim_out_of_range_and_bad_types(op):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ptocpu.IndexOutOfRange, match=rf"{op}: dim -3 is out of range \[-2, 2\) for a tensor of rank 2"):
        call(op, x, -3)
    with pytest.raises(ptocpu.DTypeError):
        call(op, x, 1.0)
    with pytest.raises(ptocpu.DTypeError, match=r"must be a tensor"):
        call(op, None, 0)
    if op not in SCANS:
        with pytest.raises(ptocpu.DTypeError, match=r"keepdim must be a bool"):
            getattr(ptocpu, op)(x, 0, 1)


@pytest.mark.parametrize("op", ["amax", "amin", "argmax", "argmin"])
def test_error_no_elements_to_pick_from(op):
    with pytest.raises(ptocpu.ArgumentError, match=rf"{op}: input shape \[2, 0\] has no elements along dim 1; "
                                                   rf"{op} needs at least one"):
        getattr(ptocpu, op)(np.ones((2, 0), np.float32), 1)


def test_error_var_dims_and_correction():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match=r"var: dim \[1, -1\] names dim 1 twice"):
        ptocpu.var(x, [1, -1])
    with pytest.raises(ptocpu.ArgumentError, match=r"var: dim has 3 entries but input has rank 2"):
        ptocpu.var(x, [0, 1, 0])
    with pytest.raises(ptocpu.IndexOutOfRange, match=r"var: dim 2 is out of range"):
        ptocpu.var(x, (0, 2))
    with pytest.raises(ptocpu.DTypeError, match=r"var: correction True is a bool"):
        ptocpu.var(x, 1, True)
    with pytest.raises(ptocpu.DTypeError, match=r"var: dim must be a sequence of integers"):
        ptocpu.var(x, "1")
    with pytest.raises(ptocpu.ArgumentError, match=r"var: input shape \[2, 0\] has an empty dim 1"):
        ptocpu.var(np.ones((2, 0), np.float32), 0)
    # A divisor max(0, N - correction) of 0 divides by zero, as on the device.
    assert np.isinf(ptocpu.var(np.array([1, 3], np.float32), 0, correction=2).numpy()).all()
    assert ptocpu.var(np.array([1, 3], np.float32), 0, 0.5).tolist() == [np.float32(2 / 1.5)]


def test_tile_rules():
    x = np.ones((8, 64), np.float32)
    with ptocpu.vec_tile_shapes(8):
        with pytest.raises(ptocpu.TileError, match=r"sum: tile shape \[8\] has rank 1 but the input has rank 2"):
            ptocpu.sum(x, 1)
        with pytest.raises(ptocpu.TileError, match=r"cumsum: tile shape \[8\] has rank 1"):
            ptocpu.cumsum(x, 1)
        with pytest.raises(ptocpu.TileError, match=r"var: tile shape \[8\] has rank 1"):
            ptocpu.var(x, 1)
    with ptocpu.vec_tile_shapes(4, 6):
        with pytest.raises(ptocpu.TileError, match=r"argmax: tile shape \[4, 6\] has a last dim of 6 \(24 bytes of "
                                                   r"DT_FP32\); the last tile dim must be a multiple of 32 bytes"):
            ptocpu.argmax(x, 1)
        assert ptocpu.amax(x, 1).shape == (8,)
    big = np.ones((128, 256), np.float32)
    for platform in ("ascend950", "atlas_a2"):
        with ptocpu.platform(platform), ptocpu.vec_tile_shapes(128, 256):  # 131072 bytes
            with pytest.raises(ptocpu.TileError, match=r"amin: tile shape \[128, 256\] holds 131072 bytes of the "
                                                       r"DT_FP32 input, above the 65536 bytes \(64 KB\)"):
                ptocpu.amin(big, 0)
        with ptocpu.platform(platform), ptocpu.vec_tile_shapes(64, 256):  # 65536 bytes: the limit itself
            assert ptocpu.amin(big, 0).shape == (256,)
            assert ptocpu.sum(big[:8], 0).shape == (256,)  # the tile clipped to the input
    with ptocpu.vec_tile_shapes(128, 256):
        assert ptocpu.amin(big, 0).shape == (256,)  # cpu: no UB, no 64 KB limit
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(128, 256):  # 128 KB in + 128 KB out > 192 KB
        with pytest.raises(ptocpu.TileError, match=r"cumsum: tile shape \[128, 256\] needs 262144 UB bytes \(input "
                                                   r"tile 131072 \+ output tile 131072\)"):
            ptocpu.cumsum(big, 0)
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(64, 256):
        assert ptocpu.cumsum(big, 0).shape == (128, 256)


# ---------------------------------------------------------------- torch

def test_torch_operators():
    import ptocpu.torch  # noqa: F401
    from torch.library import opcheck
    P = torch.ops.ptocpu
    x = torch.randn(5, 7)
    samples = [(P.sum.default, (x, 1)), (P.prod.default, (x, 0, True)), (P.amax.default, (x, -1)),
               (P.amin.default, (x.to(torch.bfloat16), 0)), (P.argmax.default, (x,)), (P.argmin.default, (x, 0, True)),
               (P.var.default, (x, [0, 1], 0.0, True)), (P.var.default, (x,)), (P.cumsum.default, (x.to(torch.int16), 1)),
               (P.cumprod.default, (x, 0))]
    for op, args in samples:
        opcheck(op, args)
    assert torch.equal(P.argmax(x, 1), torch.argmax(x, 1).to(torch.int32))
    compiled = torch.compile(lambda t: P.sum(t, 0) + P.amax(t, 0), fullgraph=True)
    assert torch.equal(compiled(x), P.sum(x, 0) + P.amax(x, 0))
