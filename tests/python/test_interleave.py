"""interleave (docs/ops/interleave.md) and deinterleave (docs/ops/deinterleave.md) against numpy and the torch expressions of
docs/benchmarks.md, bit for bit, for every dtype, rank 1-8 and non-contiguous inputs; the seed examples;
round trips; one test per error rule (docs/errors.md, docs/platforms.md) and the tile rules (docs/kernel_model.md)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import ptocpu
from ptocpu.tools import reference as ref

NUMPY_DTYPES = {
    "DT_INT8": np.int8, "DT_INT16": np.int16, "DT_INT32": np.int32, "DT_INT64": np.int64,
    "DT_UINT8": np.uint8, "DT_UINT16": np.uint16, "DT_UINT32": np.uint32, "DT_UINT64": np.uint64,
    "DT_BOOL": np.bool_, "DT_FP16": np.float16, "DT_BF16": ml_dtypes.bfloat16, "DT_FP32": np.float32,
    "DT_FP64": np.float64, "DT_FP8E4M3": ml_dtypes.float8_e4m3fn, "DT_FP8E5M2": ml_dtypes.float8_e5m2,
    "DT_FP8E8M0": ml_dtypes.float8_e8m0fnu,
}
ALL = list(NUMPY_DTYPES)
# docs/platforms.md: interleave / deinterleave on ascend950.
ASCEND950 = ["DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16", "DT_INT32", "DT_UINT32", "DT_FP16", "DT_FP32",
             "DT_BF16"]
NOT_ON_950 = [d for d in ALL if d not in ASCEND950]
TORCH_DTYPES = {"DT_FP32": torch.float32, "DT_BF16": torch.bfloat16, "DT_FP16": torch.float16,
                "DT_INT8": torch.int8, "DT_INT64": torch.int64, "DT_BOOL": torch.bool, "DT_UINT8": torch.uint8}


# ---------------------------------------------------------------- data and references
def random_array(rng: np.random.Generator, shape, name: str) -> np.ndarray:
    """Random bit patterns of the dtype (NaNs with payloads and infinities included); bool 0 / 1."""
    dt = np.dtype(NUMPY_DTYPES[name])
    if dt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    raw = rng.integers(0, 256, size=tuple(shape) + (dt.itemsize,), dtype=np.uint8)
    return raw.view(dt).reshape(shape)


def bits(a) -> np.ndarray:
    """An array's bits as unsigned integers of its width (so NaNs compare by payload)."""
    arr = a.numpy() if isinstance(a, ptocpu.Tensor) else np.asarray(a)
    arr = arr.copy(order="C")
    return arr.view(f"u{arr.dtype.itemsize}")


def assert_bits_equal(got, want) -> None:
    g, w = bits(got), bits(want)
    assert g.shape == w.shape, (g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


def torch_of_bits(a: np.ndarray) -> torch.Tensor:
    """The array's bits as a torch signed-integer tensor (torch ops on any width, bit-exact)."""
    return torch.from_numpy(a.copy(order="C").view(f"i{a.dtype.itemsize}"))


def torch_interleave(a, b):
    """docs/benchmarks.md's peer: torch.stack((a, b), -1).flatten(-2) split in two contiguous halves."""
    ta, tb = torch_of_bits(a), torch_of_bits(b)
    n = a.shape[-1]
    s = torch.stack((ta, tb), -1).flatten(-2)
    return s[..., :n].contiguous().numpy(), s[..., n:].contiguous().numpy()


def torch_deinterleave(a, b=None):
    """docs/benchmarks.md's peer: x[..., 0::2].contiguous(), x[..., 1::2].contiguous() (torch.cat first)."""
    x = torch_of_bits(a) if b is None else torch.cat((torch_of_bits(a), torch_of_bits(b)), -1)
    return x[..., 0::2].contiguous().numpy(), x[..., 1::2].contiguous().numpy()


def check_all_forms(a: np.ndarray, b: np.ndarray, pa=None, pb=None) -> None:
    """interleave(a, b), deinterleave(a, b) and deinterleave(a) against numpy and torch.
    pa / pb: what to pass to ptocpu (default the numpy arrays themselves)."""
    pa = a if pa is None else pa
    pb = b if pb is None else pb
    out = ptocpu.interleave(pa, pb)
    assert isinstance(out, tuple) and len(out) == 2
    assert all(isinstance(t, ptocpu.Tensor) for t in out)
    for got, want, peer in zip(out, ref.interleave(a, b), torch_interleave(a, b)):
        assert got.shape == a.shape
        assert_bits_equal(got, want)
        assert_bits_equal(got, peer)
    for got, want, peer in zip(ptocpu.deinterleave(pa, pb), ref.deinterleave(a, b), torch_deinterleave(a, b)):
        assert got.shape == a.shape
        assert_bits_equal(got, want)
        assert_bits_equal(got, peer)
    for got, want, peer in zip(ptocpu.deinterleave(pa), ref.deinterleave(a), torch_deinterleave(a)):
        assert got.shape == a.shape[:-1] + (a.shape[-1] // 2,)
        assert_bits_equal(got, want)
        assert_bits_equal(got, peer)


# ---------------------------------------------------------------- the seed examples
SEED_INPUT = [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]
SEED_OTHER = [[10.0, 11.0, 12.0, 13.0], [14.0, 15.0, 16.0, 17.0]]
SEED_STREAM = [[0, 10, 1, 11, 2, 12, 3, 13], [4, 14, 5, 15, 6, 16, 7, 17]]


def test_seed_example_interleave():
    x = ptocpu.asarray(np.array(SEED_INPUT, np.float32))
    y = ptocpu.asarray(np.array(SEED_OTHER, np.float32))
    out0, out1 = ptocpu.interleave(x, y)
    assert out0.dtype == ptocpu.DT_FP32 and out0.shape == (2, 4) and out1.shape == (2, 4)
    assert out0.tolist() == [[0.0, 10.0, 1.0, 11.0], [4.0, 14.0, 5.0, 15.0]]
    assert out1.tolist() == [[2.0, 12.0, 3.0, 13.0], [6.0, 16.0, 7.0, 17.0]]


def test_seed_example_deinterleave_single_input():
    out0, out1 = ptocpu.deinterleave(np.array(SEED_STREAM, np.float32))
    assert out0.shape == (2, 4) and out1.shape == (2, 4)
    assert out0.tolist() == SEED_INPUT
    assert out1.tolist() == SEED_OTHER


def test_seed_example_deinterleave_two_inputs_inverts_interleave():
    # docs/ops/deinterleave.md: deinterleave(*interleave(a, b)) == (a, b), on the seed data
    out0, out1 = ptocpu.deinterleave(*ptocpu.interleave(SEED_INPUT, SEED_OTHER))
    assert out0.tolist() == SEED_INPUT
    assert out1.tolist() == SEED_OTHER
    # and explicitly passing other=None is the single-input form
    a, b = ptocpu.deinterleave(np.array(SEED_STREAM, np.float32), None)
    assert a.tolist() == SEED_INPUT and b.tolist() == SEED_OTHER


def test_cli_prints_the_seed_examples(capsys):
    from ptocpu.tools import cli
    for example in (cli.seed_interleave, cli.seed_deinterleave):
        assert example in cli.EXAMPLES
        example()
    text = capsys.readouterr().out
    assert "interleave (docs/ops/interleave.md)" in text and "deinterleave (docs/ops/deinterleave.md)" in text
    assert "[ 2., 12.,  3., 13.]" in text


# ---------------------------------------------------------------- every dtype x rank
def shape_of_rank(rank: int, last: int) -> tuple:
    return (3, 1, 2, 1, 2, 1, 2)[: rank - 1] + (last,)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("rank", range(1, 9))
def test_every_dtype_and_rank_cpu(name, rank):
    rng = np.random.default_rng(rank * 100 + ALL.index(name))
    for last in (2, 6, 34):
        shape = shape_of_rank(rank, last)
        check_all_forms(random_array(rng, shape, name), random_array(rng, shape, name))


@pytest.mark.parametrize("name", ASCEND950)
@pytest.mark.parametrize("rank", range(1, 5))
def test_every_dtype_and_rank_ascend950(name, rank):
    rng = np.random.default_rng(rank)
    shape = shape_of_rank(rank, 10)
    a, b = random_array(rng, shape, name), random_array(rng, shape, name)
    with ptocpu.platform("ascend950"):
        check_all_forms(a, b)


@pytest.mark.parametrize("name", list(TORCH_DTYPES))
def test_torch_and_ptocpu_tensor_inputs(name):
    rng = np.random.default_rng(7)
    a, b = random_array(rng, (5, 12), name), random_array(rng, (5, 12), name)
    ta, tb = torch_of_bits(a).view(TORCH_DTYPES[name]), torch_of_bits(b).view(TORCH_DTYPES[name])
    assert ptocpu.asarray(ta).dtype == getattr(ptocpu, name)
    check_all_forms(a, b, ta, tb)
    # a transposed torch view (non-contiguous import)
    check_all_forms(np.ascontiguousarray(a.reshape(6, 10).T), np.ascontiguousarray(b.reshape(6, 10).T),
                    ta.reshape(6, 10).T, tb.reshape(6, 10).T)
    check_all_forms(a, b, ptocpu.asarray(a), ptocpu.asarray(b))


def test_lists_are_inputs_too():
    out0, out1 = ptocpu.interleave([[1, 2]], [[3, 4]])
    assert out0.dtype == ptocpu.DT_INT64
    assert out0.tolist() == [[1, 3]] and out1.tolist() == [[2, 4]]


# ---------------------------------------------------------------- layouts (hypothesis)
LAYOUTS = ["contiguous", "transposed", "sliced_rows", "sliced_last", "reversed", "broadcast", "every_other"]


def make_layout(rng, shape, name, layout):
    """A numpy view of `shape` with the given memory layout (data random)."""
    if layout == "contiguous":
        return random_array(rng, shape, name)
    if layout == "transposed":  # last axis strided
        return random_array(rng, shape[::-1], name).transpose()
    if layout == "sliced_rows":  # outer dims sliced: rows of one stride or several
        big = random_array(rng, tuple(2 * d + 1 for d in shape[:-1]) + shape[-1:], name)
        return big[tuple(slice(1, None, 2) for _ in shape[:-1])]
    if layout == "sliced_last":  # a window of a longer last axis: rows of stride > n
        big = random_array(rng, shape[:-1] + (shape[-1] + 3,), name)
        return big[..., 1:1 + shape[-1]]
    if layout == "reversed":
        return random_array(rng, shape, name)[tuple(slice(None, None, -1) for _ in shape)]
    if layout == "broadcast":  # stride-0 outer dims
        row = random_array(rng, (1,) * (len(shape) - 1) + shape[-1:], name)
        return np.broadcast_to(row, shape)
    if layout == "every_other":  # last axis of stride 2
        return random_array(rng, shape[:-1] + (2 * shape[-1],), name)[..., ::2]
    raise AssertionError(layout)


@st.composite
def cases(draw, dtypes=ALL, max_rank=8):
    name = draw(st.sampled_from(dtypes))
    rank = draw(st.integers(1, max_rank))
    outer, rows = [], 1
    for _ in range(rank - 1):  # at most ~64 rows, so that examples stay small
        d = draw(st.integers(0, 4)) if rows <= 16 else 1
        outer.append(d)
        rows *= max(d, 1)
    last = 2 * draw(st.one_of(st.integers(0, 9), st.integers(10, 300)))
    shape = tuple(outer) + (last,)
    return name, shape, draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 2**32))


def inputs_of(case):
    """A case's two inputs: random data of its dtype and shape, in its two layouts."""
    name, shape, layout_a, layout_b, seed = case
    rng = np.random.default_rng(seed)
    return make_layout(rng, shape, name, layout_a), make_layout(rng, shape, name, layout_b)


@settings(max_examples=max(80, settings.default.max_examples))
@given(cases())
def test_any_dtype_shape_and_layout_matches_numpy_and_torch(case):
    a, b = inputs_of(case)
    check_all_forms(a, b)


@settings(max_examples=max(40, settings.default.max_examples))
@given(cases())
def test_round_trips(case):
    a, b = inputs_of(case)
    back = ptocpu.deinterleave(*ptocpu.interleave(a, b))
    assert_bits_equal(back[0], a)
    assert_bits_equal(back[1], b)
    again = ptocpu.interleave(*ptocpu.deinterleave(a, b))
    assert_bits_equal(again[0], a)
    assert_bits_equal(again[1], b)
    # single input: the even and odd elements of each row ...
    even, odd = ptocpu.deinterleave(a)
    assert_bits_equal(np.stack((bits(even), bits(odd)), -1).reshape(a.shape), a)
    if a.shape[-1] % 4 == 0:  # ... and interleaving them gives each row's stream, split in halves
        s0, s1 = ptocpu.interleave(even, odd)
        assert_bits_equal(np.concatenate((bits(s0), bits(s1)), -1), a)


# ---------------------------------------------------------------- large and odd sizes
@pytest.mark.parametrize("name", ["DT_UINT8", "DT_BF16", "DT_FP32", "DT_FP64"])
@pytest.mark.parametrize("shape", [(2, 2 * 700001), (1031, 2 * 1031), (3, 5, 4098), (1 << 19, 2)])
def test_large_outputs_threads_and_streaming(name, shape):
    # sizes above the streaming and threading thresholds, rows that start unaligned
    rng = np.random.default_rng(11)
    a, b = random_array(rng, shape, name), random_array(rng, shape, name)
    out0, out1 = ptocpu.interleave(a, b)
    want0, want1 = ref.interleave(a, b)
    assert_bits_equal(out0, want0)
    assert_bits_equal(out1, want1)
    for got, want in zip(ptocpu.deinterleave(a, b), ref.deinterleave(a, b)):
        assert_bits_equal(got, want)
    for got, want in zip(ptocpu.deinterleave(a), ref.deinterleave(a)):
        assert_bits_equal(got, want)
    # a strided (sliced) large input goes through the general path
    for got, want in zip(ptocpu.deinterleave(a[::2], b[::2]), ref.deinterleave(a[::2], b[::2])):
        assert_bits_equal(got, want)


def test_results_do_not_depend_on_thread_count():
    rng = np.random.default_rng(5)
    a, b = random_array(rng, (64, 8192), "DT_INT16"), random_array(rng, (64, 8192), "DT_INT16")
    threads = ptocpu.get_num_threads()
    try:
        ptocpu.set_num_threads(1)
        one = [bits(t) for t in ptocpu.interleave(a, b) + ptocpu.deinterleave(a, b) + ptocpu.deinterleave(a)]
        ptocpu.set_num_threads(3)
        three = [bits(t) for t in ptocpu.interleave(a, b) + ptocpu.deinterleave(a, b) + ptocpu.deinterleave(a)]
    finally:
        ptocpu.set_num_threads(threads)
    for x, y in zip(one, three):
        np.testing.assert_array_equal(x, y)


def test_inputs_are_not_modified_and_outputs_are_new():
    a = np.arange(16, dtype=np.int32).reshape(2, 8)
    keep = a.copy()
    out0, out1 = ptocpu.interleave(a, a)
    np.testing.assert_array_equal(a, keep)
    out0[...] = 0
    np.testing.assert_array_equal(a, keep)
    assert out1.is_contiguous()


def test_empty_inputs_on_cpu():
    for shape in [(0, 4), (3, 0), (2, 0, 6)]:
        a = np.zeros(shape, np.float32)
        out0, out1 = ptocpu.interleave(a, a)
        assert out0.shape == shape and out1.shape == shape
        out0, out1 = ptocpu.deinterleave(a, a)
        assert out0.shape == shape
        out0, out1 = ptocpu.deinterleave(a)
        assert out0.shape == shape[:-1] + (shape[-1] // 2,) and out1.numel == 0


# ---------------------------------------------------------------- errors (docs/errors.md, docs/README.md#operators, docs/platforms.md)
OPS = {
    "interleave": lambda a, b: ptocpu.interleave(a, b),
    "deinterleave": lambda a, b: ptocpu.deinterleave(a, b),
}


@pytest.mark.parametrize("op", list(OPS))
def test_odd_last_dim_is_an_argument_error(op):
    a = np.zeros((2, 5), np.float32)
    with pytest.raises(ptocpu.ArgumentError, match=rf"^{op}: input last dim 5 .*must be even") as e:
        OPS[op](a, a)
    assert isinstance(e.value, ValueError)


def test_odd_last_dim_single_input():
    with pytest.raises(ptocpu.ArgumentError, match=r"^deinterleave: input last dim 7 \(shape \[3, 7\]\)"):
        ptocpu.deinterleave(np.zeros((3, 7), np.int8))


@pytest.mark.parametrize("op", list(OPS))
def test_dtype_mismatch_is_a_dtype_error(op):
    with pytest.raises(ptocpu.DTypeError, match=rf"^{op}: other dtype DT_INT32 must match input dtype DT_FP32") as e:
        OPS[op](np.zeros(4, np.float32), np.zeros(4, np.int32))
    assert isinstance(e.value, TypeError)


@pytest.mark.parametrize("op", list(OPS))
def test_shape_mismatch_is_an_argument_error(op):
    with pytest.raises(ptocpu.ArgumentError, match=rf"^{op}: other shape \[4, 2\] must equal input shape \[2, 4\]"):
        OPS[op](np.zeros((2, 4), np.float32), np.zeros((4, 2), np.float32))
    with pytest.raises(ptocpu.ArgumentError, match=r"other shape \[1, 2, 4\]"):
        OPS[op](np.zeros((2, 4), np.float32), np.zeros((1, 2, 4), np.float32))  # no broadcasting


@pytest.mark.parametrize("op", ["interleave", "deinterleave", "deinterleave1"])
def test_rank_limits_on_cpu(op):
    call = (lambda a: ptocpu.deinterleave(a)) if op == "deinterleave1" else (lambda a: OPS[op](a, a))
    name = op.rstrip("1")
    with pytest.raises(ptocpu.ArgumentError, match=rf"^{name}: input rank 0 is out of range \[1, 8\]"):
        call(np.zeros((), np.float32))
    with pytest.raises(ptocpu.ArgumentError, match=rf"^{name}: input rank 9 is out of range \[1, 8\]"):
        call(np.zeros((1,) * 8 + (2,), np.float32))
    call(np.zeros((1,) * 7 + (2,), np.float32))


@pytest.mark.parametrize("op", ["interleave", "deinterleave", "deinterleave1"])
def test_ascend950_limits(op):
    call = (lambda a: ptocpu.deinterleave(a)) if op == "deinterleave1" else (lambda a: OPS[op](a, a))
    name = op.rstrip("1")
    with ptocpu.platform("ascend950"):
        with pytest.raises(ptocpu.ArgumentError, match=rf"^{name}: input rank 5 is out of range \[1, 4\]"):
            call(np.zeros((1, 1, 1, 1, 2), np.float32))
        for dt in NOT_ON_950:
            with pytest.raises(ptocpu.DTypeError, match=rf"^{name}: input dtype {dt} is not supported on platform "
                                                        r"ascend950; allowed: .*DT_BF16"):
                call(np.zeros(4, NUMPY_DTYPES[dt]))
        with pytest.raises(ptocpu.ArgumentError, match=rf"^{name}: input shape \[0, 4\] is empty"):
            call(np.zeros((0, 4), np.float32))
        # extents beyond int32 (stride-0 views: nothing is allocated or read)
        with pytest.raises(ptocpu.ArgumentError, match=r"has a dim of 2147483648 above"):
            call(np.broadcast_to(np.zeros(2, np.int8), (2**31, 2)))
        with pytest.raises(ptocpu.ArgumentError, match=r"has 4294967296 elements"):
            call(np.broadcast_to(np.zeros(2, np.int8), (2**16, 2**15, 2)))


@pytest.mark.parametrize("platform", ["atlas_a2", "atlas_a3", "a2", "a3"])
def test_not_offered_on_atlas(platform):
    with ptocpu.platform(platform):
        calls = [lambda: ptocpu.interleave(np.zeros(4), np.zeros(4)), lambda: ptocpu.deinterleave(np.zeros(4)),
                 lambda: ptocpu.deinterleave(np.zeros(4), np.zeros(4)),
                 # raised before any argument is looked at, even ones that are no tensors
                 lambda: ptocpu.interleave(None, "not a tensor"), lambda: ptocpu.deinterleave(object())]
        for call in calls:
            with pytest.raises(ptocpu.UnsupportedError, match=r"interleave: not offered on platform atlas_a[23] "
                                                              r"\(DAV_2201\).*ascend950 \(DAV_3510\)") as e:
                call()
            assert isinstance(e.value, NotImplementedError)


def test_non_tensor_arguments_are_dtype_errors():
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.interleave(None, np.zeros(2))
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.deinterleave("ab")
    with pytest.raises(TypeError):
        ptocpu.deinterleave(np.zeros(2), np.zeros(2), np.zeros(2))


def test_failed_calls_raise_before_touching_data():
    # the broadcast view above is never read; here: an error leaves no partial output behind
    a = np.zeros((2, 6), np.float32)
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.interleave(a, a.astype(np.float64))
    np.testing.assert_array_equal(a, 0)


# ---------------------------------------------------------------- tile rules (docs/kernel_model.md)
@pytest.mark.parametrize("op", list(OPS))
def test_tile_rules_two_inputs(op):
    a = np.zeros((64, 1024), np.float32)
    with ptocpu.platform("ascend950"):
        with ptocpu.vec_tile_shapes(15, 1024):  # 4 tiles x 15 x 4096 = 245760 <= 253952
            OPS[op](a, a)
        with ptocpu.vec_tile_shapes(16, 1024):  # 262144 > 253952
            with pytest.raises(ptocpu.TileError, match=rf"^{op}: tile shape \[16, 1024\] needs 262144 UB bytes"
                                                       r".*253952") as e:
                OPS[op](a, a)
            assert isinstance(e.value, ValueError)
        with ptocpu.vec_tile_shapes(4, 512):  # tile[-1] must equal the last dim
            with pytest.raises(ptocpu.TileError, match=rf"^{op}: tile shape \[4, 512\] has last dim 512.* 1024"):
                OPS[op](a, a)
        with ptocpu.vec_tile_shapes(4, 2048):  # larger is not equal either
            with pytest.raises(ptocpu.TileError, match=r"last dim 2048"):
                OPS[op](a, a)
        with ptocpu.vec_tile_shapes(1024):  # rank
            with pytest.raises(ptocpu.TileError, match=rf"^{op}: tile shape \[1024\] has rank 1 but the input has rank 2"):
                OPS[op](a, a)
        with ptocpu.vec_tile_shapes(4, 16):  # the seed's TileShape example: [m1, n] with n = 16
            OPS[op](np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32))
        with ptocpu.vec_tile_shapes(1000, 16):  # clipped to the tensor: 8 rows
            OPS[op](np.zeros((8, 16), np.float32), np.zeros((8, 16), np.float32))
        with ptocpu.vec_tile_shapes(2, 64):  # bf16: 4 x 2 x 128 bytes
            OPS[op](np.zeros((8, 64), ml_dtypes.bfloat16), np.zeros((8, 64), ml_dtypes.bfloat16))


def test_tile_rules_single_input():
    x = np.zeros((64, 1024), np.float32)
    with ptocpu.platform("ascend950"):
        # 1 input tile + 2 output tiles of half width: 30 x 4096 + 2 x 30 x 2048 = 245760
        with ptocpu.vec_tile_shapes(30, 1024):
            ptocpu.deinterleave(x)
        with ptocpu.vec_tile_shapes(32, 1024):  # 131072 + 131072 = 262144
            with pytest.raises(ptocpu.TileError, match=r"^deinterleave: tile shape \[32, 1024\] needs 262144 UB bytes"
                                                       r" \(input tile 131072 \+ output tiles 131072\).*253952"):
                ptocpu.deinterleave(x)
        with ptocpu.vec_tile_shapes(8, 256):  # the last axis may be split for the single-input form
            ptocpu.deinterleave(x)
        with ptocpu.vec_tile_shapes(8, 255):
            with pytest.raises(ptocpu.TileError, match=r"^deinterleave: tile shape \[8, 255\] has last dim 255.*even"):
                ptocpu.deinterleave(x)
        with ptocpu.vec_tile_shapes(8, 2, 256):
            with pytest.raises(ptocpu.TileError, match=r"has rank 3 but the input has rank 2"):
                ptocpu.deinterleave(x)
        # output tiles are clipped to the output's width (m = 4), input tiles to the input's
        with ptocpu.vec_tile_shapes(64, 200000):
            ptocpu.deinterleave(np.zeros((64, 8), np.float32))
        # each buffer's last dim rounds up to 32 bytes: [64, 8] int8 -> 64 x 32 + 2 x 64 x 32
        with ptocpu.vec_tile_shapes(4096, 8):
            ptocpu.deinterleave(np.zeros((1360, 8), np.int8))  # 1360 x 96 = 130560
            with pytest.raises(ptocpu.TileError, match=r"needs 264192 UB bytes"):
                ptocpu.deinterleave(np.zeros((2752, 8), np.int8))  # 2752 x 96


def test_tile_rules_on_cpu_have_no_ub_limit_but_keep_the_axis_rules():
    a = np.zeros((4096, 64), np.float32)
    with ptocpu.vec_tile_shapes(4096, 64):
        ptocpu.interleave(a, a)
        ptocpu.deinterleave(a)
    with ptocpu.vec_tile_shapes(8, 32):
        with pytest.raises(ptocpu.TileError, match=r"^interleave: tile shape \[8, 32\] has last dim 32"):
            ptocpu.interleave(a, a)
        ptocpu.deinterleave(a)
    with ptocpu.vec_tile_shapes(8, 31):
        with pytest.raises(ptocpu.TileError):
            ptocpu.deinterleave(a)
