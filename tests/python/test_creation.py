"""The creation family (docs/ops/full.md, arange.md, one_hot.md, random.md) against numpy / torch and the
references written from the definitions (python/ptocpu/tools/verify/creation.py, numpy only, anchored
here to Random123's known answers and the pages' examples): every dtype of every platform row, the
fill value's conversion, valid shapes, the device's tiled fp32 range, the Philox stream, Box-Muller,
one test per error rule, tile rules, 1 vs 2 threads, streaming stores, pypto.function recording."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu
from helpers import assert_same_bits, np_dtype, op_table
from ptocpu.tools.verify import creation as ref

PLATFORMS = ["cpu", "ascend950", "atlas_a3", "atlas_a2"]


def dtypes_of(platform: str, op: str) -> list[str]:
    row = op_table(platform, op)
    return row["dtypes"].split(", ") if row["offered"] else []


@pytest.fixture
def streaming():
    """Every output goes through the non-temporal path."""
    ptocpu._core._set_kernel_tuning(0, None)
    yield
    ptocpu._core._set_kernel_tuning(-1, None)


def one_and_two_threads(make):
    """make() with 1 and with 2 threads: the results must be bit-identical."""
    threads = ptocpu.get_num_threads()
    try:
        ptocpu.set_num_threads(1)
        one = make().numpy()
        ptocpu.set_num_threads(2)
        two = make().numpy()
    finally:
        ptocpu.set_num_threads(threads)
    assert_same_bits(two, one)
    return one


# ---- full / zeros / ones ------------------------------------------------------------------------

def fill_for(name: str):
    dt = np_dtype(name)
    if dt == np.bool_:
        return True
    if dt.kind in "iu":
        return 5 if dt.kind == "u" else -5
    return 0.5 if name == "DT_FP8E8M0" else -1.25


@pytest.mark.parametrize("platform", PLATFORMS)
def test_full_every_dtype_and_rank(platform):
    lo, hi = op_table(platform, "full")["rank"]
    with ptocpu.platform(platform):
        for name in dtypes_of(platform, "full"):
            value = fill_for(name)
            for rank in range(lo, hi + 1):
                shape = [3, 1, 2, 5, 1, 2, 1, 3][:rank]
                assert_same_bits(ptocpu.full(shape, value, getattr(ptocpu, name)),
                                 np.full(shape, value, np_dtype(name)))


@pytest.mark.parametrize("op, value", [("zeros", 0), ("ones", 1)])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_zeros_and_ones_every_dtype(op, value, platform):
    function = getattr(ptocpu, op)
    with ptocpu.platform(platform):
        for name in dtypes_of(platform, op):
            dt = getattr(ptocpu, name)
            want = np.full((2, 3), value, np_dtype(name))
            for got in (function(2, 3, dtype=dt), function([2, 3], dtype=dt), function((2, 3), dtype=dt)):
                assert_same_bits(got, want)


def test_page_examples_of_full_zeros_ones():
    assert ptocpu.full([2, 2], 1.0, ptocpu.DT_FP32, valid_shape=[ptocpu.symbolic_scalar(2),
                                                                  ptocpu.symbolic_scalar(2)]).tolist() == [[1.0] * 2] * 2
    assert ptocpu.full([2, 2], 1, ptocpu.DT_INT32).tolist() == [[1, 1], [1, 1]]
    x1 = ptocpu.zeros(2, 3)
    assert x1.dtype == ptocpu.DT_FP32 and x1.tolist() == [[0.0] * 3] * 2
    assert ptocpu.zeros((2, 3), dtype=ptocpu.DT_INT32).tolist() == [[0] * 3] * 2
    assert ptocpu.ones(2, 3).tolist() == [[1.0] * 3] * 2
    assert ptocpu.ones([2, 3], dtype=ptocpu.DT_INT32).tolist() == [[1] * 3] * 2
    with ptocpu.vec_tile_shapes(2, 3):  # the pages' tile example
        assert ptocpu.zeros(2, 3).shape == (2, 3)


def test_fill_value_conversion_as_the_device():
    # a float truncates toward zero into an integer dtype (upstream's Element(dtype, value))
    assert ptocpu.full([2], 2.9, ptocpu.DT_INT32).tolist() == [2, 2]
    assert ptocpu.full([2], -2.9, ptocpu.DT_INT8).tolist() == [-2, -2]
    # fp16 / bf16 through an fp32 literal: 1 + 2^-11 + 2^-40 is a tie in fp32 (to even: 1.0)
    v = 1 + 2 ** -11 + 2 ** -40
    assert np.float16(v) == np.float16(1 + 2 ** -10)  # a direct rounding would go up
    assert ptocpu.full([1], v, ptocpu.DT_FP16).tolist() == [1.0]
    big = 2 ** 24 + 2 ** 16 + 1  # an int: to fp32 (2^24 + 2^16, a bf16 tie), then to bf16 (2^24)
    assert ptocpu.full([1], big, ptocpu.DT_BF16).numpy()[0] == ml_dtypes.bfloat16(2 ** 24)
    assert ptocpu.full([1], 1e6, ptocpu.DT_FP16).tolist() == [math.inf]
    assert math.isnan(ptocpu.full([1], math.nan, ptocpu.DT_FP32).tolist()[0])
    assert ptocpu.full([2], True, ptocpu.DT_FP32).tolist() == [1.0, 1.0]
    assert ptocpu.full([2], 1, ptocpu.DT_BOOL).tolist() == [True, True]
    assert ptocpu.full([1], 2 ** 64 - 1, ptocpu.DT_UINT64).numpy()[0] == np.uint64(2 ** 64 - 1)
    assert ptocpu.full([3], 0.1, ptocpu.DT_FP64).tolist() == [0.1] * 3  # fp64: no fp32 step


@pytest.mark.parametrize("value, dtype, needle", [
    (-1, "DT_UINT8", "out of range [0, 255]"), (300, "DT_INT8", "out of range [-128, 127]"),
    (math.nan, "DT_INT32", "cannot be stored"), (math.inf, "DT_INT16", "cannot be stored"),
    (2, "DT_BOOL", "allowed: 0, 1"), (-0.5 - 2 ** 32, "DT_UINT32", "out of range")])
def test_full_fill_value_errors(value, dtype, needle):
    with pytest.raises(ptocpu.ArgumentError, match="full: fill_value") as e:
        ptocpu.full([2], value, getattr(ptocpu, dtype))
    assert needle in str(e.value)


def test_fill_value_of_the_wrong_type():
    with pytest.raises(ptocpu.DTypeError, match="fill_value must be an int or a float"):
        ptocpu.full([2], "1", ptocpu.DT_FP32)
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.full([2], [1.0], ptocpu.DT_FP32)


def test_full_valid_shape():
    t = ptocpu.full([3, 4], 7, ptocpu.DT_INT32, valid_shape=[2, 3])
    assert t.valid_shape == (2, 3) and t.partially_valid
    want = np.zeros((3, 4), np.int32)
    want[:2, :3] = 7
    assert_same_bits(t, want)
    out = np.full((3, 4), -1, np.int32)
    ptocpu.assemble(t, [0, 0], out)  # only the valid part is written
    want = np.full((3, 4), -1, np.int32)
    want[:2, :3] = 7
    assert (out == want).all()
    assert not ptocpu.full([2, 2], 1.0, ptocpu.DT_FP32, valid_shape=[2, 2]).partially_valid
    assert ptocpu.full([2, 2], 1.0, ptocpu.DT_FP32, valid_shape=[0, 2]).valid_shape == (0, 2)
    with pytest.raises(ptocpu.ArgumentError, match="valid_shape \\[2\\] has 1 dims but size \\[2, 2\\] has 2"):
        ptocpu.full([2, 2], 1.0, ptocpu.DT_FP32, valid_shape=[2])
    with pytest.raises(ptocpu.ArgumentError, match="negative"):
        ptocpu.full([2, 2], 1.0, ptocpu.DT_FP32, valid_shape=[3, -1])  # the ArgumentError comes first
    with pytest.raises(ptocpu.TileError, match="valid_shape \\[3, 2\\] exceeds size \\[2, 2\\] at dim 0"):
        ptocpu.full([2, 2], 1.0, ptocpu.DT_FP32, valid_shape=[3, 2])


def test_size_rules_per_platform():
    with pytest.raises(ptocpu.ArgumentError, match="full: size rank 5 is out of range \\[1, 4\\] on platform ascend950"):
        with ptocpu.platform("ascend950"):
            ptocpu.full([1] * 5, 0, ptocpu.DT_FP32)
    with pytest.raises(ptocpu.ArgumentError, match="zeros: size rank 0"):
        with ptocpu.platform("atlas_a2"):
            ptocpu.zeros()
    with pytest.raises(ptocpu.ArgumentError, match="empty"):
        with ptocpu.platform("atlas_a3"):
            ptocpu.ones(0, 4)
    with pytest.raises(ptocpu.ArgumentError, match="rank 9"):
        ptocpu.zeros([1] * 9)
    with pytest.raises(ptocpu.ArgumentError, match="negative"):
        ptocpu.full([2, -1], 0, ptocpu.DT_FP32)
    # cpu: a 0-d tensor and empty dims
    assert ptocpu.zeros().shape == () and ptocpu.zeros().tolist() == 0.0
    assert ptocpu.full([0, 3], 1, ptocpu.DT_INT8).shape == (0, 3)
    assert ptocpu.ones(1, 1, 1, 1, 1, 1, 1, 2).shape == (1,) * 7 + (2,)


def test_dtype_rules_per_platform():
    with ptocpu.platform("atlas_a2"):
        assert ptocpu.full([2], 1, ptocpu.DT_INT8).tolist() == [1, 1]  # full's list has INT8
        with pytest.raises(ptocpu.DTypeError, match="zeros: output dtype DT_INT8 is not supported on platform atlas_a2"):
            ptocpu.zeros(2, dtype=ptocpu.DT_INT8)
        with pytest.raises(ptocpu.DTypeError, match="DT_FP64"):
            ptocpu.full([2], 1, ptocpu.DT_FP64)
    with pytest.raises(ptocpu.DTypeError, match="DT_FP8E8M0"):
        ptocpu.zeros(2, dtype=ptocpu.DT_FP8E8M0)
    assert ptocpu.zeros(2, dtype="bf16").dtype == ptocpu.DT_BF16


def test_size_forms_and_a_positional_dtype():
    assert ptocpu.zeros(4).shape == (4,) and ptocpu.zeros([4]).shape == (4,)
    assert ptocpu.ones(np.int64(2), 3).shape == (2, 3)
    with pytest.raises(ptocpu.DTypeError, match="zeros: size must be an integer, got .*DataType"):
        ptocpu.zeros(2, 3, ptocpu.DT_INT32)  # the page's warning: dtype must be a keyword
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.zeros([2, 3], 4)  # a list and an int: the list is not an integer
    with pytest.raises(TypeError, match="unexpected keyword argument 'size'"):
        ptocpu.zeros(size=[2])


def test_fill_tiles():
    with ptocpu.vec_tile_shapes(8, 16):
        assert ptocpu.full([16, 64], 2, ptocpu.DT_INT16).shape == (16, 64)
        # as the device's tiling loops, the leading tile dims tile the output (upstream's
        # st/test_gdr_bn_parallel_sched.py fills [16, 16] under a [128, 128, 128] tile)
        assert ptocpu.zeros(16).tolist() == [0.0] * 16
        with pytest.raises(ptocpu.TileError, match="tile shape \\[8, 16\\] has rank 2 but the output has rank 3"):
            ptocpu.zeros(2, 2, 2)
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(64, 64, 1 << 20):  # only [64, 64] is a tile
        assert ptocpu.full([64, 64], 1.0, ptocpu.DT_FP32).shape == (64, 64)
    with ptocpu.platform("ascend950"), ptocpu.vec_tile_shapes(1024, 1024):
        with pytest.raises(ptocpu.TileError, match="ones: tile shape \\[1024, 1024\\] needs 4194304 UB bytes"):
            ptocpu.ones(2048, 2048)


@pytest.mark.parametrize("dtype", ["DT_FP32", "DT_FP16", "DT_INT8", "DT_INT64", "DT_BOOL"])
def test_large_fills_streamed_and_threaded(streaming, dtype):
    n = (1 << 20) + 37  # ragged tail
    value = fill_for(dtype)
    got = one_and_two_threads(lambda: ptocpu.full([n], value, getattr(ptocpu, dtype)))
    assert_same_bits(got, np.full(n, value, np_dtype(dtype)))
    ptocpu._core._set_kernel_tuning(-1, None)
    assert_same_bits(one_and_two_threads(lambda: ptocpu.zeros(n, dtype=ptocpu.DT_FP16)), np.zeros(n, np.float16))


def test_against_torch():
    assert torch.equal(torch.from_numpy(ptocpu.full([5, 7], 2.5, ptocpu.DT_FP32).numpy()), torch.full((5, 7), 2.5))
    assert torch.equal(torch.from_numpy(ptocpu.ones(3, 4, dtype=ptocpu.DT_INT32).numpy()),
                       torch.ones(3, 4, dtype=torch.int32))


# ---- arange --------------------------------------------------------------------------------------

def test_arange_page_and_docstring_examples():
    y1 = ptocpu.arange(1.0, 4.0, 0.5)
    assert y1.dtype == ptocpu.DT_FP32 and y1.tolist() == [1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    assert ptocpu.arange(1.0, 4.0).tolist() == [1.0, 2.0, 3.0]
    y3 = ptocpu.arange(4)
    assert y3.dtype == ptocpu.DT_INT32 and y3.tolist() == [0, 1, 2, 3]
    assert ptocpu.arange(5.5).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert ptocpu.arange(-2, 2).tolist() == [-2, -1, 0, 1]
    assert ptocpu.arange(10, 0, -2).tolist() == [10, 8, 6, 4, 2]
    with ptocpu.vec_tile_shapes(16):
        assert ptocpu.arange(1.0, 4.0, 0.5).tolist() == [1.0, 1.5, 2.0, 2.5, 3.0, 3.5]


@pytest.mark.parametrize("args", [(7,), (0, 10, 3), (3, -9, -4), (-2147483648, 2147483647, 1 << 24), (5, 6),
                                  (True, 4), (np.int16(2), 9, 2)])
def test_int_ranges(args):
    got = ptocpu.arange(*args)
    assert got.dtype == ptocpu.DT_INT32
    assert_same_bits(got, np.arange(*[int(a) for a in args], dtype=np.int64).astype(np.int32))


@pytest.mark.parametrize("tile", [None, 8, 16, 64, 100, 1000])
@pytest.mark.parametrize("start, end, step", [(0.0, 3000.0, 0.1), (-3.25, 80.0, 0.37), (100.0, -5.0, -0.7),
                                              (1, 2.5, 0.001), (0.1, 0.2, 0.0007)])
def test_float_ranges_are_the_devices_tiled_additions(start, end, step, tile):
    if tile:
        ptocpu.set_vec_tile_shapes(tile)
    got = ptocpu.arange(start, end, step)
    assert got.shape == (math.ceil((end - start) / step),)
    assert_same_bits(got, ref.arange_reference(start, end, step, tile))


def test_float_range_rounding_accumulates_and_depends_on_the_tile():
    one_tile = ptocpu.arange(0.0, 3000.0, 0.1).numpy()
    assert one_tile.shape == (30000,) and one_tile[-1] == np.float32(2999.8909)
    assert torch.arange(0.0, 3000.0, 0.1)[-1].item() == np.float32(2999.9)  # start + i * step, one rounding
    with ptocpu.vec_tile_shapes(16):
        assert ptocpu.arange(0.0, 3000.0, 0.1).numpy()[-1] == np.float32(2999.9001)
    # exact ranges agree with numpy and torch whatever the tile
    for tile in (None, 24):
        if tile:
            ptocpu.set_vec_tile_shapes(tile)
        assert_same_bits(ptocpu.arange(-100.0, 20000.0, 0.25), np.arange(-100.0, 20000.0, 0.25, dtype=np.float32))
        assert torch.equal(torch.from_numpy(ptocpu.arange(0.0, 5000.0).numpy()), torch.arange(0.0, 5000.0))


def test_float_length_and_argument_rounding():
    assert ptocpu.arange(0, 1, 0.3).tolist() == pytest.approx([0, 0.3, 0.6, 0.9])  # ceil(3.33) = 4
    assert ptocpu.arange(0.0, 1.0 + 1e-9, 0.5).shape == (3,)  # length from the float64 arguments
    # start and step are fp32 in the kernel: 0.1 is fp32(0.1)
    assert ptocpu.arange(0.1, 0.35, 0.1).numpy()[0] == np.float32(0.1)
    assert ptocpu.arange(0, 4, 1.0).dtype == ptocpu.DT_FP32  # one float makes a float range


def test_large_ranges_threads_and_streaming(streaming):
    got = one_and_two_threads(lambda: ptocpu.arange(0.0, 2.0 ** 21, 0.3))  # one tile: threads replay rows
    assert_same_bits(got, ref.arange_reference(0.0, 2.0 ** 21, 0.3))
    with ptocpu.vec_tile_shapes(1000):
        got = one_and_two_threads(lambda: ptocpu.arange(-5.0, 1e6, 0.7))
        assert_same_bits(got, ref.arange_reference(-5.0, 1e6, 0.7, 1000))
    got = one_and_two_threads(lambda: ptocpu.arange(-7, 3 * (1 << 21), 3))
    assert_same_bits(got, np.arange(-7, 3 * (1 << 21), 3, dtype=np.int64).astype(np.int32))


@pytest.mark.parametrize("args, error, needle", [
    ((0, 4, 0), ptocpu.ArgumentError, "arange: step must not be 0"),
    ((0.0, 1.0, 1e-9), ptocpu.ArgumentError, "too close to 0; a float step needs |step| > 1e-08"),
    ((0.0, 1.0, 0.0), ptocpu.ArgumentError, "too close to 0"),
    ((0.0, 4.0, -1.0), ptocpu.ArgumentError, "does not lead from start 0.0 towards end 4.0"),
    ((5, 1), ptocpu.ArgumentError, "step 1 does not lead from start 5 towards end 1"),
    ((3, 3), ptocpu.ArgumentError, "must be > 0"),
    ((2 ** 31,), ptocpu.ArgumentError, "end 2147483648 is outside the int32 range"),
    ((-2 ** 31 - 1, 0), ptocpu.ArgumentError, "start -2147483649 is outside the int32 range"),
    ((0.0, math.inf), ptocpu.ArgumentError, "end inf is not finite"),
    ((math.nan, 1.0), ptocpu.ArgumentError, "start nan is not finite"),
    ((0.0, 1e300, 1e-7), ptocpu.ArgumentError, "more than any tensor holds"),
    (("1",), ptocpu.DTypeError, "end must be an int or a float"),
    ((None, 4), ptocpu.DTypeError, "start must be an int or a float"),
])
def test_arange_errors(args, error, needle):
    with pytest.raises(error) as e:
        ptocpu.arange(*args)
    assert needle in str(e.value)


def test_arange_argument_count_and_platform_extent():
    with pytest.raises(TypeError):
        ptocpu.arange()
    with pytest.raises(TypeError):
        ptocpu.arange(0, 1, 1, 1)
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match="limit of 2147483647"):
            ptocpu.arange(0.0, 3e9, 1.0)


def test_arange_tiles():
    with ptocpu.vec_tile_shapes(4, 4):  # the first dim tiles the output (TiledRange)
        assert ptocpu.arange(8).tolist() == list(range(8))
    with ptocpu.platform("atlas_a2"), ptocpu.vec_tile_shapes(1 << 20):
        with pytest.raises(ptocpu.TileError, match="UB bytes"):
            ptocpu.arange(0, 1 << 20)


def test_upstream_range_test_values():
    # test_vector_operation_range.py: arange(1.0, 32.1, 1.0) with tile 8 against torch.arange
    with ptocpu.vec_tile_shapes(8):
        got = ptocpu.arange(1.0, 32.1, 1.0).numpy()
    assert got.shape == (32,) and np.allclose(got, torch.arange(1.0, 32.1, 1.0).numpy(), rtol=1e-6, atol=1e-7)


# ---- one_hot ---------------------------------------------------------------------------------------

def test_one_hot_page_example():
    with ptocpu.vec_tile_shapes(4, 5):
        y = ptocpu.one_hot(ptocpu.asarray([0, 2, 4], ptocpu.DT_INT32), 5)
    assert y.dtype == ptocpu.DT_INT64
    assert y.tolist() == [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 1]]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_one_hot_every_dtype_and_rank(platform):
    lo, hi = op_table(platform, "one_hot")["rank"]
    rng = np.random.default_rng(7)
    with ptocpu.platform(platform):
        for name in dtypes_of(platform, "one_hot"):
            for rank in range(lo, hi + 1):
                shape = [3, 2, 4, 1, 2, 1, 2][:rank]
                for classes in (1, 3, 70):
                    x = rng.integers(0, classes, size=shape).astype(np_dtype(name))
                    assert_same_bits(ptocpu.one_hot(x, classes), np.eye(classes, dtype=np.int64)[x.astype(np.int64)])


def test_one_hot_views_and_torch():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 9, size=(6, 10)).astype(np.int64)
    view = x[::2, ::-3]
    assert_same_bits(ptocpu.one_hot(view, 9), np.eye(9, dtype=np.int64)[view])
    assert torch.equal(torch.from_numpy(ptocpu.one_hot(x, 9).numpy()), torch.nn.functional.one_hot(torch.from_numpy(x), 9))
    # only the valid part of a partly valid input is read
    block = ptocpu.view(ptocpu.asarray(x), [4, 4], [4, 8])
    assert block.valid_shape == (2, 2)
    assert_same_bits(ptocpu.one_hot(block, 9), np.eye(9, dtype=np.int64)[x[4:6, 8:10]])


def test_one_hot_large_threaded(streaming):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 37, size=(1000, 129)).astype(np.int32)
    got = one_and_two_threads(lambda: ptocpu.one_hot(x, 37))
    assert_same_bits(got, np.eye(37, dtype=np.int64)[x])
    x = rng.integers(0, 3000, size=(700,)).astype(np.int16)  # rows longer than a chunk
    assert_same_bits(one_and_two_threads(lambda: ptocpu.one_hot(x, 3000)), np.eye(3000, dtype=np.int64)[x])


@pytest.mark.parametrize("x, classes, error, needle", [
    (np.array([0, 5], np.int32), 5, ptocpu.IndexOutOfRange,
     "one_hot: input value 5 at index position (1,) is out of range [0, 5) for num_classes 5"),
    (np.array([[0, 1], [-1, 0]], np.int8), 3, ptocpu.IndexOutOfRange, "input value -1 at index position (1, 0)"),
    (np.array([2 ** 40], np.int64), 3, ptocpu.IndexOutOfRange, "input value 1099511627776"),
    (np.array([0], np.int32), 0, ptocpu.ArgumentError, "num_classes 0 must be a positive integer"),
    (np.array([0], np.int32), -1, ptocpu.ArgumentError, "num_classes must be specified"),
    (np.array([0.0], np.float32), 2, ptocpu.DTypeError, "input dtype DT_FP32 is not supported"),
    (np.array([True]), 2, ptocpu.DTypeError, "DT_BOOL"),
])
def test_one_hot_errors(x, classes, error, needle):
    with pytest.raises(error) as e:
        ptocpu.one_hot(x, classes)
    assert needle in str(e.value)


def test_one_hot_platform_rules():
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.DTypeError, match="DT_UINT8"):
            ptocpu.one_hot(np.array([0], np.uint8), 2)
        with pytest.raises(ptocpu.ArgumentError, match="input rank 4 is out of range \\[1, 3\\]"):
            ptocpu.one_hot(np.zeros((1, 1, 1, 1), np.int32), 2)
        with pytest.raises(ptocpu.ArgumentError, match="empty"):
            ptocpu.one_hot(np.zeros((0,), np.int32), 2)
    assert ptocpu.one_hot(np.array(2, np.uint16), 3).tolist() == [0, 0, 1]  # cpu: 0-d, unsigned
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.one_hot(np.array([0], np.int32), 2.0)


def test_one_hot_tiles():
    x = np.array([[0, 1], [2, 3]], np.int32)
    with ptocpu.vec_tile_shapes(2, 2, 4):
        assert ptocpu.one_hot(x, 4).shape == (2, 2, 4)
    with ptocpu.vec_tile_shapes(2, 2, 8):
        with pytest.raises(ptocpu.TileError, match="has a last dim of 8 but num_classes is 4; the class axis"):
            ptocpu.one_hot(x, 4)
    with ptocpu.vec_tile_shapes(2, 4):
        with pytest.raises(ptocpu.TileError, match="has rank 2 but the output has rank 3"):
            ptocpu.one_hot(x, 4)
    with ptocpu.platform("ascend950"), ptocpu.vec_tile_shapes(64, 64, 4096):
        with pytest.raises(ptocpu.TileError, match="UB bytes"):
            ptocpu.one_hot(np.zeros((64, 64), np.int32), 4096)


def test_one_hot_through_torch_ops():
    import ptocpu.torch  # noqa: F401 - registers torch.ops.ptocpu
    x = torch.tensor([[1, 0], [2, 2]])
    assert torch.equal(torch.ops.ptocpu.one_hot(x, 3), torch.nn.functional.one_hot(x, 3))
    compiled = torch.compile(lambda t: torch.ops.ptocpu.one_hot(t, 3) * 2, backend="eager", fullgraph=True)
    assert torch.equal(compiled(x), torch.nn.functional.one_hot(x, 3) * 2)


# ---- the Philox stream, uniform, normal ------------------------------------------------------------

def test_reference_philox_matches_random123_known_answers():
    # Random123's kat_vectors for philox4x32_10: (counter, key) -> output
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for counter, key, want in cases:
        assert tuple(int(w) for w in ref.philox4x32_10(np.array([counter], np.uint32), key)[0]) == want


PAGE_UNIFORM = ["0.1689806", "0.9725481", "0.90036285", "0.16582811", "0.1454581", "0.48029935", "0.02495587",
                "0.99239147", "0.02835405", "0.10649502", "0.45283175", "0.87260246", "0.6877538", "0.24809706",
                "0.95886254", "0.24039495"]
PAGE_NORMAL = [-0.32364845, 1.8577391, 0.39556974, 0.2311697, 0.24243996, -1.9485782, -0.12983137, 2.7137496,
               1.6558666, 2.0938187, -0.90338254, 0.8765667, 0.86518306, 0.01034508, 0.2893259, 0.01748212]


@pytest.mark.parametrize("platform", ["cpu", "ascend950"])
def test_uniform_page_example_exactly(platform):
    with ptocpu.platform(platform), ptocpu.vec_tile_shapes(4, 4):
        y = ptocpu.uniform([4, 4], [1234], [0, 1], [1], ptocpu.DT_FP32)
    assert y.shape == (4, 4) and y.dtype == ptocpu.DT_FP32
    printed = np.array2string(y.numpy().ravel(), max_line_width=1000)[1:-1].split()
    assert printed == PAGE_UNIFORM
    assert_same_bits(y, ref.uniform_reference([4, 4], [1234], [0, 1], "DT_FP32"))


@pytest.mark.parametrize("platform", ["cpu", "ascend950"])
def test_normal_page_example_within_the_devices_transcendentals(platform):
    with ptocpu.platform(platform), ptocpu.vec_tile_shapes(4, 4):
        y = ptocpu.normal([4, 4], [1234], [0, 1], [1], ptocpu.DT_FP32).numpy().ravel()
    page = np.array(PAGE_NORMAL, np.float32)
    assert np.max(np.abs(y.astype(np.float64) - page)) < 4.2e-7 + 1e-9
    assert np.count_nonzero(y == page) == 12  # the other four: 1, 7, 7 and 112 ulps (docs/ops/random.md)
    ulps = np.abs(y.view(np.int32).astype(np.int64) - page.view(np.int32))
    assert sorted(ulps[ulps > 0].tolist()) == [1, 7, 7, 112]


@pytest.mark.parametrize("dtype", ["DT_FP32", "DT_FP16", "DT_BF16"])
@pytest.mark.parametrize("shape", [[1], [5], [4, 4], [3, 5, 7], [2, 3, 1, 5], [1, 2, 1, 2, 1, 3, 1, 1]])
@pytest.mark.parametrize("key, counter", [([1234], [0, 1]), ([0], [77, 0]), ([2 ** 63 - 1], [0, 2 ** 40 + 9]),
                                          ([-1], [0, -3])])
def test_random_against_the_references(dtype, shape, key, counter):
    dt = getattr(ptocpu, dtype)
    assert_same_bits(ptocpu.uniform(shape, key, counter, [1], dt), ref.uniform_reference(shape, key, counter, dtype))
    assert_same_bits(ptocpu.normal(shape, key, counter, [3], dt), ref.normal_reference(shape, key, counter, dtype))


@pytest.mark.parametrize("isa", ["avx512", "avx2", "baseline"])
def test_long_draws_on_every_isa_and_one_and_two_threads(isa):
    """Whole groups of 16 Philox blocks (eight a register on AVX2, the compiler's loop at the
    baseline), several chunks of 1024 elements and a partial one, on one thread and on two (normal
    takes a second thread from 2048 elements on): the references' words and values."""
    try:
        ptocpu._core._set_kernel_tuning(isa=isa)
        for n in (64, 5000):
            for dtype in ("DT_FP32", "DT_BF16"):
                dt = getattr(ptocpu, dtype)
                got = one_and_two_threads(lambda: ptocpu.uniform([n], [77], [0, 2 ** 33 + 5], [1], dt))
                assert_same_bits(got, ref.uniform_reference([n], [77], [0, 2 ** 33 + 5], dtype))
                got = one_and_two_threads(lambda: ptocpu.normal([n], [77], [0, 2 ** 33 + 5], [1], dt))
                assert_same_bits(got, ref.normal_reference([n], [77], [0, 2 ** 33 + 5], dtype))
    finally:
        ptocpu._core._set_kernel_tuning(isa=None)


def test_counter0_is_ignored_and_offset_and_seed_select_streams():
    a = ptocpu.uniform([64], [5], [0, 0], [1], ptocpu.DT_FP32).numpy()
    assert_same_bits(ptocpu.uniform([64], [5], [12345, 0], [3], ptocpu.DT_FP32), a)
    assert not np.array_equal(ptocpu.uniform([64], [5], [0, 1], [1], ptocpu.DT_FP32).numpy(), a)
    assert not np.array_equal(ptocpu.uniform([64], [6], [0, 0], [1], ptocpu.DT_FP32).numpy(), a)
    # the first elements of a longer draw are the shorter draw: element i depends on i alone
    assert_same_bits(ptocpu.uniform([8, 8, 2], [5], [0, 0], [1], ptocpu.DT_FP32).numpy().ravel()[:64], a)
    assert_same_bits(ptocpu.normal([7], [5], [0, 0], [1], ptocpu.DT_FP32),
                     ptocpu.normal([8], [5], [0, 0], [1], ptocpu.DT_FP32).numpy()[:7])


def test_uniform_value_grids():
    for dtype, bits in (("DT_FP32", 23), ("DT_FP16", 10), ("DT_BF16", 7)):
        v = ptocpu.uniform([1 << 16], [9], [0, 0], [1], getattr(ptocpu, dtype)).numpy().astype(np.float64)
        assert v.min() >= 0 and v.max() < 1
        assert np.all(v * 2 ** bits == np.round(v * 2 ** bits))  # multiples of 2^-bits


def test_random_distributions():
    u = ptocpu.uniform([1 << 20], [2026], [0, 0], [1], ptocpu.DT_FP32).numpy().astype(np.float64)
    assert abs(u.mean() - 0.5) < 3e-3 and abs(u.var() - 1 / 12) < 1e-3
    z = ptocpu.normal([1 << 20], [2026], [0, 0], [1], ptocpu.DT_FP32).numpy().astype(np.float64)
    assert abs(z.mean()) < 5e-3 and abs(z.std() - 1) < 5e-3
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 3e-3
    assert np.isfinite(z).all() and np.abs(z).max() < 5.7


def test_box_muller_against_float64():
    # the fp32 recipe's own error: up to r * (half an ulp of the angle) ~ 5.7 * 2.4e-7
    shape = [1 << 18]
    got = ptocpu.normal(shape, [31], [0, 7], [1], ptocpu.DT_FP32).numpy().astype(np.float64)
    exact = ref.normal_reference(shape, [31], [0, 7], "DT_FP32", exact=True)
    assert np.max(np.abs(got - exact)) < 1.8e-6


def test_random_threads_streaming_and_tiles(streaming):
    for op in (ptocpu.uniform, ptocpu.normal):
        for dtype in ("DT_FP32", "DT_BF16"):
            n = (1 << 20) + 6
            got = one_and_two_threads(lambda: op([n], [77], [0, 3], [1], getattr(ptocpu, dtype)))
            want = (ref.uniform_reference if op is ptocpu.uniform else ref.normal_reference)([n], [77], [0, 3], dtype)
            assert_same_bits(got, want)
    with ptocpu.vec_tile_shapes(2, 6):  # any tile of 4k elements: the same values
        assert_same_bits(ptocpu.uniform([6, 6], [1], [0, 0], [1], ptocpu.DT_FP32),
                         ref.uniform_reference([6, 6], [1], [0, 0], "DT_FP32"))


@pytest.mark.parametrize("op", ["uniform", "normal"])
def test_random_errors(op):
    f = getattr(ptocpu, op)
    fp32 = ptocpu.DT_FP32
    cases = [
        (lambda: f([4], [1, 2], [0, 0], [1], fp32), ptocpu.ArgumentError, "key [1, 2] has 2 values; it must hold one"),
        (lambda: f([4], [], [0, 0], [1], fp32), ptocpu.ArgumentError, "key [] has 0 values"),
        (lambda: f([4], [1], [0], [1], fp32), ptocpu.ArgumentError, "counter [0] has 1 values; it must hold two"),
        (lambda: f([4], [1], [0, 0], [2], fp32), ptocpu.ArgumentError, "alg [2] is not supported"),
        (lambda: f([4], [1], [0, 0], [1, 3], fp32), ptocpu.ArgumentError, "alg [1, 3] is not supported"),
        (lambda: f([4], [1], [0, 0], [1], ptocpu.DT_INT32), ptocpu.DTypeError, "output dtype DT_INT32 is not supported"),
        (lambda: f([4], [1], [0, 0], [1], ptocpu.DT_FP64), ptocpu.DTypeError, "DT_FP64"),
        (lambda: f([4, -1], [1], [0, 0], [1], fp32), ptocpu.ArgumentError, "negative"),
        (lambda: f([1] * 9, [1], [0, 0], [1], fp32), ptocpu.ArgumentError, "shape rank 9"),
        (lambda: f([4], [2 ** 64], [0, 0], [1], fp32), ptocpu.ArgumentError, "does not fit int64"),
        (lambda: f([4], 1.5, [0, 0], [1], fp32), ptocpu.DTypeError, "key must be"),
    ]
    for call, error, needle in cases:
        with pytest.raises(error) as e:
            call()
        assert needle in str(e.value), str(e.value)
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match="shape rank 5 is out of range \\[1, 4\\]"):
            f([1] * 5, [1], [0, 0], [1], fp32)
        with pytest.raises(ptocpu.ArgumentError, match="empty"):
            f([0], [1], [0, 0], [1], fp32)
    for chip in ("atlas_a2", "atlas_a3"):
        with ptocpu.platform(chip), pytest.raises(ptocpu.UnsupportedError, match=f"{op}: not offered on platform {chip}"):
            f([4], [1], [0, 0], [1], fp32)


def test_random_tiles():
    with ptocpu.vec_tile_shapes(2, 3):
        with pytest.raises(ptocpu.TileError, match="uniform: tile shape \\[2, 3\\] holds 6 elements, not a multiple of 4"):
            ptocpu.uniform([4, 6], [1], [0, 0], [1], ptocpu.DT_FP32)
    with ptocpu.vec_tile_shapes(2, 2):  # the page's "last tile dim" wording would refuse it; the code takes 4 elements
        assert ptocpu.uniform([4, 6], [1], [0, 0], [1], ptocpu.DT_FP32).shape == (4, 6)
    with ptocpu.vec_tile_shapes(4):
        with pytest.raises(ptocpu.TileError, match="has rank 1 but the output has rank 2"):
            ptocpu.uniform([4, 4], [1], [0, 0], [1], ptocpu.DT_FP32)
    with ptocpu.vec_tile_shapes(2, 4):
        with pytest.raises(ptocpu.TileError, match="normal: tile shape \\[2, 4\\] differs from shape \\[4, 4\\]"):
            ptocpu.normal([4, 4], [1], [0, 0], [1], ptocpu.DT_FP32)
    with ptocpu.vec_tile_shapes(3, 5):
        with pytest.raises(ptocpu.TileError, match="holds 15 elements"):
            ptocpu.normal([3, 5], [1], [0, 0], [1], ptocpu.DT_FP32)
    with ptocpu.platform("ascend950"), ptocpu.vec_tile_shapes(1 << 16):
        with pytest.raises(ptocpu.TileError, match="random words 262144 \\+ output tile 262144"):
            ptocpu.uniform([1 << 16], [1], [0, 0], [1], ptocpu.DT_FP32)
        with pytest.raises(ptocpu.TileError, match="random words 524288 \\+ output tile 131072"):
            ptocpu.uniform([1 << 16], [1], [0, 0], [1], ptocpu.DT_FP16)


# ---- inside pypto.function ---------------------------------------------------------------------------

def test_creation_ops_are_recorded_and_replayed_in_a_function():
    out = ptocpu.tensor([4, 4], ptocpu.DT_FP32, "out")
    idx = ptocpu.tensor([4], ptocpu.DT_INT32, "idx")
    hot = ptocpu.tensor([4, 3], ptocpu.DT_INT64, "hot")
    with ptocpu.function("CREATE", out, idx, hot) as program:
        for i in ptocpu.loop(2):
            ptocpu.set_vec_tile_shapes(4)
            steps = ptocpu.arange(4.0)
            ptocpu.set_vec_tile_shapes(2, 4)
            tile = ptocpu.tensor()
            tile.move(ptocpu.full([2, 4], 2.0, ptocpu.DT_FP32))
            ptocpu.assemble(ptocpu.add(tile, steps), [2 * i, 0], out)
        ptocpu.set_vec_tile_shapes(4, 3)
        ptocpu.assemble(ptocpu.one_hot(idx, 3), [0, 0], hot)
        scratch = ptocpu.tensor([2], ptocpu.DT_FP32, "scratch")  # not an op: recorded as a creation
    kinds = [type(step).__name__ for step in program.steps]
    created = [step for step in program.steps if type(step).__name__ == "_Create"]
    assert len(created) == 1 and created[0].tensor is scratch  # Tensor() placeholders are not tensors yet
    assert kinds.count("_Move") == 2
    assert [step.op for step in program.steps if type(step).__name__ == "_Call"].count("full") == 2
    data = np.zeros((4, 4), np.float32)
    index = np.array([2, 0, 1, 2], np.int32)
    onehot = np.zeros((4, 3), np.int64)
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(data), ptocpu.asarray(index), ptocpu.asarray(onehot))
    assert (data == np.array([2.0, 3.0, 4.0, 5.0], np.float32)).all()
    assert (onehot == np.eye(3, dtype=np.int64)[index]).all()


def test_upstream_uniform_test_flow():
    # test_uniform.py: uniform in a function, assembled into the bound output, against its numpy golden
    output = ptocpu.tensor([32], ptocpu.DT_FP16)
    with ptocpu.function("UNIFORM_CONTENT_FP16", output):
        for idx in ptocpu.loop(1, name="loop0", idx_name="idx"):
            ptocpu.set_vec_tile_shapes(32)
            ptocpu.assemble(ptocpu.uniform([32], [1234], [0, 1], [1], ptocpu.DT_FP16), [idx * 32], output)
    out = np.zeros(32, np.float16)
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(out))
    assert_same_bits(out, ref.uniform_reference([32], [1234], [0, 1], "DT_FP16"))
