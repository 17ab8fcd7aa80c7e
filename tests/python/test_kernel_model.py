"""docs/kernel_model.md, the PyPTO kernel model on the CPU: view, assemble, loop, frontend.jit, the examples,
and the same kernels passing on ascend950 and failing on atlas_a2 where docs/platforms.md says they must."""
from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys
import textwrap
import types

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import ptocpu
import ptocpu as pypto

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ASCEND = ["ascend950", "atlas_a2"]


def load_example(name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def arange(shape, dtype=np.float32):
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


# ---------------------------------------------------------------------------------------------
# The examples: run as scripts, and their kernels imported and checked against torch.

def _script_env():
    import os

    env = dict(os.environ)
    paths = [str(pathlib.Path(p).resolve()) for p in sys.path if p and pathlib.Path(p).exists()]
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(ptocpu.__file__).parents[1]), *paths])
    return env


@pytest.mark.parametrize("name", ["seed000_index_select_kernel", "interleave_kernel", "scatter_kernel"])
def test_example_runs_as_a_script(name):
    r = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True,
                       env=_script_env(), timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "match" in r.stdout and "DIFFER" not in r.stdout


@pytest.mark.parametrize("platform", ["cpu", "ascend950", "atlas_a2"])
def test_seed000_kernel_matches_torch(platform):
    ex = load_example("seed000_index_select_kernel")
    input0, input1, output0 = ex.run(platform)
    expected = torch.index_select(torch.from_numpy(input0), ex.CONFIG.axis, torch.from_numpy(input1))
    np.testing.assert_array_equal(output0, expected.numpy())
    assert pypto.get_platform() == "cpu" and pypto.get_vec_tile_shapes() == []


@pytest.mark.parametrize("axis", [0, 1])
def test_seed000_kernel_with_torch_arguments(axis):
    ex = load_example("seed000_index_select_kernel")
    x = torch.randn(12, 20)
    index = torch.tensor([3, 0, 11, 3, 7], dtype=torch.int32)
    out_shape = [12, 20]
    out_shape[axis] = 5
    out = torch.zeros(out_shape)
    config = ex.GatherOnboardConfig(axis=axis, tile_shape=tuple(out_shape), loop_ranges=(1, 1),
                                    execution_view_shape=tuple(out_shape), output_offset_map=(0, 1))
    with pypto.platform("ascend950"):
        ex.gather_onboard_2d_2input_2d_output_kernel(x, index, out, config)
    assert torch.equal(out, torch.index_select(x, axis, index))


def test_seed000_kernel_loops_with_negative_offset_map():
    """loop_ranges > 1 with output_offset_map < 0: every iteration assembles at offset 0."""
    ex = load_example("seed000_index_select_kernel")
    input0, input1 = ex.make_inputs(3)
    config = ex.GatherOnboardConfig(axis=1, tile_shape=(8, 8), loop_ranges=(2, 3), execution_view_shape=(16, 8),
                                    output_offset_map=(-1, -1))
    out = np.zeros((32, 16), np.float32)
    ex.gather_onboard_2d_2input_2d_output_kernel(input0, input1, out, config)
    np.testing.assert_array_equal(out, np.take(input0, input1, axis=1))


def test_kernels_demo_and_cli_run_the_seed_kernel(capsys):
    from ptocpu.tools import cli, kernels_demo

    x = torch.from_numpy(kernels_demo.SEED_X)
    index = torch.from_numpy(kernels_demo.SEED_INDEX)
    for axis in (0, 1):
        assert torch.equal(torch.from_numpy(kernels_demo.run_seed_kernel(axis)), torch.index_select(x, axis, index))
    assert cli.seed_index_select_kernel in cli.EXAMPLES
    assert cli.main(["examples"]) == 0
    assert "index_select jit kernel (seed 000" in capsys.readouterr().out


@pytest.mark.parametrize("platform", ["cpu", "ascend950"])
def test_interleave_kernel_matches_torch(platform):
    ex = load_example("interleave_kernel")
    a, b, out0, out1 = ex.run(platform)
    e0, e1 = ex.reference(a, b)
    np.testing.assert_array_equal(out0, e0)
    np.testing.assert_array_equal(out1, e1)


@pytest.mark.parametrize("platform", ["atlas_a2", "a2", "atlas_a3"])
def test_interleave_kernel_is_not_offered_on_atlas(platform):
    ex = load_example("interleave_kernel")
    a, b = ex.make_inputs()
    out0, out1 = np.zeros_like(a), np.zeros_like(a)
    with pypto.platform(platform), pytest.raises(pypto.UnsupportedError, match=r"^interleave: .*ascend950"):
        ex.interleave_kernel(a, b, out0, out1, ex.ROWS_PER_BLOCK)
    assert not out0.any() and not out1.any()
    assert pypto.get_vec_tile_shapes() == []


def test_interleave_kernel_tile_must_cover_the_last_axis():
    ex = load_example("interleave_kernel")

    @pypto.frontend.jit
    def k(a: pypto.Tensor(), b: pypto.Tensor(), out0: pypto.Tensor(), out1: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)  # tile[-1] != 64
        lo, hi = pypto.interleave(pypto.view(a, [8, 64], [0, 0]), pypto.view(b, [8, 64], [0, 0]))
        pypto.assemble([(lo, [0, 0]), (hi, [8, 0])], out0)

    a, b = ex.make_inputs()
    with pypto.platform("ascend950"), pytest.raises(pypto.TileError, match=r"^interleave: "):
        k(a, b, np.zeros_like(a), np.zeros_like(a))


@pytest.mark.parametrize("platform", ["cpu", "ascend950", "atlas_a2"])
def test_scatter_kernel_matches_torch(platform):
    ex = load_example("scatter_kernel")
    x, index, src, out = ex.run(platform)
    np.testing.assert_array_equal(out, ex.reference(x, index, src))
    # docs/precision.md's numpy reference as well
    ref = x.copy()
    np.add.at(ref, (index, np.arange(x.shape[1])[None, :]), src)
    np.testing.assert_array_equal(out, ref)


def test_scatter_kernel_with_torch_arguments_and_a_tile_too_short():
    ex = load_example("scatter_kernel")
    x, index, src = (torch.from_numpy(a) for a in ex.make_inputs(5))
    out = torch.zeros_like(x)
    ex.scatter_add_kernel(x, index, src, out, 7)
    assert torch.equal(out, x.clone().scatter_add_(0, index, src))

    @pypto.frontend.jit
    def short_tile(x: pypto.Tensor(), index: pypto.Tensor(), src: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 32)  # tile[0] < input.shape[0]: docs/kernel_model.md's scatter_ rule
        pypto.scatter_(x, 0, index, src, reduce="add")

    before = x.clone()
    with pypto.platform("ascend950"), pytest.raises(pypto.TileError, match=r"^scatter_: "):
        short_tile(x, index, src)
    assert torch.equal(x, before)


# ---------------------------------------------------------------------------------------------
# The same kernel on ascend950 and atlas_a2 (docs/platforms.md).

def _gather_kernel():
    ex = load_example("seed000_index_select_kernel")
    return ex, ex.gather_onboard_2d_2input_2d_output_kernel


def test_fp8_index_select_kernel_passes_on_ascend950_only():
    ex, kernel = _gather_kernel()
    rng = np.random.default_rng(1)
    input0 = rng.uniform(-4, 4, (16, 32)).astype(ml_dtypes.float8_e4m3fn)
    input1 = np.array([5, 0, 15, 5], np.int64)
    config = ex.GatherOnboardConfig(axis=0, tile_shape=(4, 32), loop_ranges=(1, 1), execution_view_shape=(4, 32),
                                    output_offset_map=(0, 1))
    out = np.zeros((4, 32), ml_dtypes.float8_e4m3fn)
    with pypto.platform("ascend950"):
        kernel(input0, input1, out, config)
    np.testing.assert_array_equal(out.view(np.uint8), input0.view(np.uint8)[input1])

    out2 = np.zeros_like(out)
    with pypto.platform("atlas_a2"), pytest.raises(pypto.DTypeError,
                                                   match=r"^index_select: input dtype DT_FP8E4M3 .*atlas_a2"):
        kernel(input0, input1, out2, config)
    assert not out2.view(np.uint8).any()


def test_ub_between_atlas_a2_and_ascend950_limits():
    """Output tile 56 x 1024 fp32 = 229376 bytes: within 253952 (ascend950), above 196608 (a2)."""
    ex, kernel = _gather_kernel()
    input0 = arange((64, 1024))
    input1 = np.arange(56, dtype=np.int32)[::-1].copy()
    config = ex.GatherOnboardConfig(axis=0, tile_shape=(56, 1024), loop_ranges=(1, 1),
                                    execution_view_shape=(56, 1024), output_offset_map=(0, 1))
    out = np.zeros((56, 1024), np.float32)
    with pypto.platform("ascend950"):
        kernel(input0, input1, out, config)
    np.testing.assert_array_equal(out, input0[input1])

    out2 = np.zeros_like(out)
    with pypto.platform("atlas_a2"), pytest.raises(pypto.TileError) as e:
        kernel(input0, input1, out2, config)
    msg = str(e.value)
    assert msg.startswith("index_select: ") and "229376" in msg and "196608" in msg and "atlas_a2" in msg
    assert "[56, 1024]" in msg
    assert not out2.any()
    assert pypto.get_vec_tile_shapes() == [] and pypto.get_platform() == "cpu"


@pytest.mark.parametrize("platform", ASCEND)
def test_tile_errors_inside_a_kernel(platform):
    ex, kernel = _gather_kernel()
    input0, input1 = ex.make_inputs()
    out = np.zeros((16, 64), np.float32)
    bad_rank = ex.GatherOnboardConfig(axis=0, tile_shape=(8, 8, 8), loop_ranges=(1, 1),
                                      execution_view_shape=(16, 64), output_offset_map=(0, 1))
    with pypto.platform(platform), pytest.raises(pypto.TileError, match=r"^index_select: tile shape \[8, 8, 8\]"):
        kernel(input0, input1, out, bad_rank)
    zero = ex.GatherOnboardConfig(axis=0, tile_shape=(8, 0), loop_ranges=(1, 1), execution_view_shape=(16, 64),
                                  output_offset_map=(0, 1))
    with pypto.platform(platform), pytest.raises(pypto.TileError, match=r"^set_vec_tile_shapes: dim 1 is 0"):
        kernel(input0, input1, out, zero)
    # assemble at an offset that leaves the output: TileError, nothing written
    shifted = ex.GatherOnboardConfig(axis=0, tile_shape=(8, 64), loop_ranges=(2, 1), execution_view_shape=(16, 64),
                                     output_offset_map=(0, 1))
    with pypto.platform(platform), pytest.raises(pypto.TileError, match=r"^assemble: offsets \[16, 0\]"):
        kernel(input0, input1, out, shifted)
    assert pypto.get_platform() == "cpu"


# ---------------------------------------------------------------------------------------------
# view

@pytest.mark.parametrize("platform", ["cpu", *ASCEND])
def test_view_is_zero_copy_and_takes_valid_shape(platform):
    x = arange((4, 8))
    with pypto.platform(platform):
        v = pypto.view(x, [4, 4], [0, 4])
        assert v.shape == (4, 4)
        np.testing.assert_array_equal(v.numpy(), x[:, 4:])
        v[:] = -1.0
        # PyPTO's doc example (docs/zh/api/operation/pypto-view.md): the view keeps its shape,
        # rows past the valid shape read 0
        tail = pypto.view(x, [4, 4], [2, 4], valid_shape=[2, 4])
        assert tail.shape == (4, 4) and tail.shape == [4, 4] and tail.valid_shape == [2, 4]
        np.testing.assert_array_equal(tail.numpy()[:2], x[2:, 4:])
        np.testing.assert_array_equal(tail.numpy()[2:], np.zeros((2, 4), np.float32))
    assert (x[:, 4:] == -1).all() and (x[:, :4] != -1).all()


def test_view_of_views_and_strided_inputs():
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    t = base.t()  # non-contiguous
    v = pypto.view(t, [4, 3], [5, 2])
    assert torch.equal(torch.from_dlpack(v), t[5:9, 2:5])
    vv = pypto.view(v, [2, 2], [1, 1], valid_shape=[2, 1])
    assert vv.valid_shape == (2, 1)
    assert torch.equal(torch.from_dlpack(vv)[:, :1], t[6:8, 3:4]) and (torch.from_dlpack(vv)[:, 1] == 0).all()
    z = pypto.view(pypto.tensor([], pypto.DT_INT8), [], [])
    assert z.shape == ()


@pytest.mark.parametrize("platform", ["cpu", *ASCEND])
@pytest.mark.parametrize("args, kwargs, error, pattern", [
    (([4], [0, 0]), {}, pypto.ArgumentError, r"^view: shape \[4\] has 1 entries but input has rank 2"),
    (([4, 4], [0]), {}, pypto.ArgumentError, r"^view: offsets \[0\] has 1 entries but input has rank 2"),
    (([4, 4], [0, 0]), {"valid_shape": [4]}, pypto.ArgumentError, r"^view: valid_shape \[4\] has 1 entries"),
    (([4, -4], [0, 0]), {}, pypto.ArgumentError, r"^view: shape \[4, -4\] has the negative value -4"),
    (([4, 4], [2, 4]), {"valid_shape": [3, 4]}, pypto.TileError,
     r"^view: offsets \[2, 4\] \+ valid_shape \[3, 4\] = \[5, 8\] is outside input shape \[4, 8\]"),
    (([4, 4], [4, 0]), {}, pypto.TileError, r"^view: offsets \[4, 0\] has the offset 4 at dim 0, outside \[0, 4\)"),
    (([4, 4], [5, 0]), {}, pypto.TileError, r"^view: offsets \[5, 0\] has the offset 5 at dim 0"),
    (([4, 4], [-1, 0]), {}, pypto.TileError, r"^view: offsets \[-1, 0\] has the offset -1 at dim 0, outside \[0, 4\)"),
    (([2, 4], [0, 0]), {"valid_shape": [5, 4]}, pypto.TileError,
     r"^view: valid_shape \[5, 4\] exceeds input shape \[4, 8\] at dim 0 \(5 > 4\)"),
    (([2, 4], [3, 0]), {"valid_shape": [4, 4]}, pypto.TileError,
     r"^view: offsets \[3, 0\] \+ valid_shape \(clipped to shape\) \[2, 4\] = \[5, 4\] is outside input shape"),
    (([4, 4.0], [0, 0]), {}, pypto.DTypeError, r"^view: shape must be an integer, got float"),
    (([4, 4], [0, "1"]), {}, pypto.DTypeError, r"^view: offsets must be an integer, got str"),
])
def test_view_errors(platform, args, kwargs, error, pattern):
    x = arange((4, 8))
    with pypto.platform(platform), pytest.raises(error, match=pattern):
        pypto.view(x, *args, **kwargs)


def test_view_valid_shape_positional_and_empty_inputs_follow_the_platform():
    # upstream's pypto-view.md example passes valid_shape by position (it failed with TypeError before)
    x = arange((4, 8))
    v = pypto.view(x, [4, 4], [0, 0], [2, 2])
    assert v.shape == [4, 4] and v.valid_shape == [2, 2]
    np.testing.assert_array_equal(v.numpy()[:2, :2], x[:2, :2])
    empty = np.zeros((0, 4), np.float32)
    assert pypto.view(empty, [0, 4], [0, 0]).shape == (0, 4)
    with pypto.platform("ascend950"), pytest.raises(pypto.ArgumentError, match=r"^view: input shape \[0, 4\] is empty"):
        pypto.view(empty, [0, 4], [0, 0])


# ---------------------------------------------------------------------------------------------
# assemble

def test_assemble_pypto_doc_example():
    x = np.ones((2, 2), np.float32)
    out = pypto.tensor([4, 4], pypto.DT_FP32)
    pypto.assemble(x, [0, 0], out)
    np.testing.assert_array_equal(out.numpy(), np.pad(np.ones((2, 2)), ((0, 2), (0, 2))))
    pypto.assemble([(x, [0, 0]), (np.ones((2, 2), np.float32), [2, 2])], out)
    np.testing.assert_array_equal(out.numpy(), np.kron(np.eye(2), np.ones((2, 2))))


def test_assemble_writes_into_numpy_and_torch_and_views():
    out_np = np.zeros((3, 5), np.int32)
    pypto.assemble(np.array([[1, 2]], np.int32), [2, 3], out_np)
    assert out_np[2, 3] == 1 and out_np[2, 4] == 2 and out_np.sum() == 3
    out_t = torch.zeros(3, 5, dtype=torch.int32)
    pypto.assemble(torch.tensor([[7], [8]], dtype=torch.int32), [1, 0], out_t)
    assert out_t[1, 0] == 7 and out_t[2, 0] == 8 and int(out_t.sum()) == 15
    base = np.zeros((6, 6), np.float32)
    pypto.assemble(np.full((2, 2), 3, np.float32), [1, 1], base[::2, ::2])  # a strided output
    assert base[2, 2] == 3 and base[4, 4] == 3 and base.sum() == 12


def test_assemble_method_targets_the_tensor_it_is_called_on():
    # upstream's st/test_assemble.py: out.assemble(add_tensor, [0, offset])
    out = pypto.tensor([2, 4], pypto.DT_FP32)
    assert out.assemble(np.full((2, 2), 5, np.float32), [0, 2]) is None
    np.testing.assert_array_equal(out.numpy(), [[0, 0, 5, 5], [0, 0, 5, 5]])
    with pytest.raises(pypto.TileError, match="outside out shape"):
        out.assemble(np.ones((2, 2), np.float32), [0, 3])


def test_assemble_keyword_forms_and_parallel():
    out = np.zeros((2, 4), np.float32)
    pypto.assemble(input=np.ones((1, 2), np.float32), offsets=[1, 2], out=out)
    pypto.assemble(np.ones((1, 1), np.float32), [0, 0], out=out)
    pypto.assemble([(np.full((1, 1), 2, np.float32), [0, 3])], out, parallel=True)
    pypto.assemble(inputs=[(np.full((1, 1), 3, np.float32), [0, 1])], out=out)
    pypto.assemble([(np.full((1, 1), 4, np.float32), [1, 0])], out, True)
    np.testing.assert_array_equal(out, [[1, 3, 0, 2], [4, 0, 1, 1]])
    for bad in (lambda: pypto.assemble(out), lambda: pypto.assemble(out, [0, 0], out, out),
                lambda: pypto.assemble(out, [0, 0], out, where=1)):
        with pytest.raises(TypeError):
            bad()


def test_assemble_reads_an_overlapping_source_first():
    out = arange((4, 4))
    expected = out.copy()
    expected[1:4, 1:4] = out[0:3, 0:3]
    pypto.assemble(pypto.view(out, [3, 3], [0, 0]), [1, 1], out)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("platform", ["cpu", *ASCEND])
@pytest.mark.parametrize("src, offsets, error, pattern", [
    (np.ones((2, 2), np.float16), [0, 0], pypto.DTypeError,
     r"^assemble: src dtype DT_FP16 must match out dtype DT_FP32"),
    (np.ones((2,), np.float32), [0], pypto.ArgumentError, r"^assemble: src rank 1 \(shape \[2\]\) must match out rank 2"),
    (np.ones((2, 2), np.float32), [0], pypto.ArgumentError, r"^assemble: offsets \[0\] has 1 entries but out has rank 2"),
    (np.ones((2, 2), np.float32), [3, 0], pypto.TileError,
     r"^assemble: offsets \[3, 0\] \+ src shape \[2, 2\] = \[5, 2\] is outside out shape \[4, 4\] at dim 0"),
    (np.ones((2, 5), np.float32), [0, 0], pypto.TileError, r"^assemble: .* is outside out shape \[4, 4\] at dim 1"),
    (np.ones((1, 1), np.float32), [0, -1], pypto.TileError, r"^assemble: offsets \[0, -1\] .*negative offset"),
    (np.ones((1, 1), np.float32), [0, 1.5], pypto.DTypeError, r"^assemble: offsets must be an integer"),
])
def test_assemble_errors_write_nothing(platform, src, offsets, error, pattern):
    out = np.zeros((4, 4), np.float32)
    with pypto.platform(platform), pytest.raises(error, match=pattern):
        pypto.assemble(src, offsets, out)
    assert not out.any()


@pytest.mark.parametrize("platform", ["cpu", *ASCEND])
def test_assemble_list_form_checks_every_part_first(platform):
    out = np.zeros((4, 4), np.float32)
    good = (np.ones((2, 2), np.float32), [0, 0])
    with pypto.platform(platform):
        with pytest.raises(pypto.TileError, match=r"^assemble: inputs\[1\]: offsets \[3, 3\]"):
            pypto.assemble([good, (np.ones((2, 2), np.float32), [3, 3])], out)
        with pytest.raises(pypto.DTypeError, match=r"^assemble: inputs\[2\]: src dtype DT_INT32"):
            pypto.assemble([good, good, (np.ones((2, 2), np.int32), [0, 0])], out)
        with pytest.raises(pypto.ArgumentError, match=r"^assemble: inputs\[0\] must be a \(tensor, offsets\) pair"):
            pypto.assemble([(good[0],)], out)
        with pytest.raises(pypto.DTypeError, match=r"^assemble: inputs must be a list"):
            pypto.assemble(5, out)
    assert not out.any()


def test_assemble_empty_tensors_follow_the_platform():
    out = np.zeros((2, 2), np.float32)
    pypto.assemble(np.zeros((0, 2), np.float32), [2, 0], out)
    with pypto.platform("atlas_a2"), pytest.raises(pypto.ArgumentError, match=r"^assemble: src shape \[0, 2\] is empty"):
        pypto.assemble(np.zeros((0, 2), np.float32), [0, 0], out)


@given(rows=st.integers(1, 40), cols=st.integers(1, 40), br=st.integers(1, 16), bc=st.integers(1, 16),
       dtype=st.sampled_from([np.float32, np.int8, np.float16, np.int64]))
def test_blocked_view_assemble_round_trip(rows, cols, br, bc, dtype):
    """A loop over blocks with tail valid_shapes copies a tensor exactly (and touches no more)."""
    src = arange((rows, cols), dtype)
    out = np.zeros((rows + 1, cols + 1), dtype)
    for i in pypto.loop(0, rows, br):
        for j in pypto.loop(0, cols, bc):
            valid = [min(br, rows - i), min(bc, cols - j)]
            pypto.assemble(pypto.view(src, [br, bc], [i, j], valid_shape=valid), [i, j], out)
    np.testing.assert_array_equal(out[:rows, :cols], src)
    assert not out[rows:].any() and not out[:, cols:].any()


# ---------------------------------------------------------------------------------------------
# loop

def test_loop_yields_ints():
    assert list(pypto.loop(4)) == [0, 1, 2, 3]
    assert list(pypto.loop(2, 9, 3)) == [2, 5, 8]
    assert list(pypto.loop(5, 0, -2)) == [5, 3, 1]
    assert list(pypto.loop(3, 3)) == [] and list(pypto.loop(0)) == []
    assert list(pypto.loop(1, 4, step=2)) == [1, 3]
    assert list(pypto.loop(np.int64(3))) == [0, 1, 2]
    assert all(isinstance(i, int) for i in pypto.loop(np.int32(1), 3))
    assert list(pypto.loop(0, 10, 1, name="LOOP_L0", idx_name="b_idx", unroll_list=[4, 1],
                           submit_before_loop=True)) == list(range(10))
    assert list(pypto.loop_unroll(0, 4, 2)) == [(0, 1), (2, 1)]  # (idx, unroll factor) as PyPTO yields


@pytest.mark.parametrize("args, kwargs, error, pattern", [
    ((2.0,), {}, pypto.DTypeError, r"^loop: stop must be an integer, got float"),
    ((0, "3"), {}, pypto.DTypeError, r"^loop: stop must be an integer, got str"),
    ((None, 3), {}, pypto.DTypeError, r"^loop: start must be an integer, got NoneType"),
    ((0, 3, 0.5), {}, pypto.DTypeError, r"^loop: step must be an integer"),
    ((0, 3, 0), {}, pypto.ArgumentError, r"^loop: step must not be 0"),
    ((0, 3), {"step": 0}, pypto.ArgumentError, r"^loop: step must not be 0"),
    ((), {}, TypeError, r"loop\(\) takes"),
    ((1, 2, 3, 4), {}, TypeError, r"loop\(\) takes"),
])
def test_loop_errors(args, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        pypto.loop(*args, **kwargs)


def test_loop_ignores_keywords_pypto_does_not_read_with_a_warning():
    # upstream's st/operator/test_page_attention.py passes unroll_List= (PyPTO's loop ignores it)
    with pytest.warns(UserWarning, match=r"loop: keyword 'unroll_List' is not one PyPTO's loop reads"):
        assert list(pypto.loop(0, 3, 1, name="L", unroll_List={4})) == [0, 1, 2]


# ---------------------------------------------------------------------------------------------
# frontend.jit

def test_jit_forms_and_options():
    def body(x: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = x

    x = np.arange(4, dtype=np.float32)
    decorated = [
        pypto.frontend.jit(body),
        pypto.frontend.jit()(body),
        pypto.frontend.jit(debug_options={"runtime_debug_mode": 0, "compile_debug_mode": 0})(body),
        pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM}, pass_options={"enable_slice": True},
                           host_options=None, codegen_options={}, verify_options={}, new_ir=False,
                           create_new_logical_tensor=False)(body),
    ]
    for k in decorated:
        out = np.zeros(4, np.float32)
        assert k(x, out) is None
        np.testing.assert_array_equal(out, x)
        assert k.__name__ == "body" and k.__wrapped__ is body
    assert decorated[2].options == {"debug_options": {"runtime_debug_mode": 0, "compile_debug_mode": 0}}
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'optimize'"):
        pypto.frontend.jit(optimize=True)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'debug'"):
        pypto.frontend.jit(body, debug=1)
    with pytest.raises(TypeError, match=r"debug_options must be a dict"):
        pypto.frontend.jit(debug_options=[1])
    with pytest.raises(TypeError, match=r"jit can only decorate functions"):
        pypto.frontend.jit(42)
    # a function is wrapped (its annotated arguments are checked at each call) and runs as itself
    for helper in (pypto.frontend.function(body), pypto.frontend.function()(body)):
        assert helper is not body and helper.__wrapped__ is body and helper.__name__ == "body"
        out = np.zeros(4, np.float32)
        assert helper(x, out) is None
        np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("make", [
    lambda a: a,                                   # numpy
    lambda a: torch.from_numpy(a),                 # torch CPU tensor
    lambda a: pypto.asarray(a),                    # ptocpu tensor over the same memory
])
def test_jit_writes_land_in_the_callers_arrays(make):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 6], pypto.DT_FP32), out_a: pypto.Tensor([2, 6], pypto.DT_FP32),
          out_b: pypto.Tensor([2, 3], pypto.DT_FP32), scale, ratio, label, flag=False):
        assert isinstance(x, pypto.Tensor) and isinstance(out_a, pypto.Tensor)
        assert scale == 2 and (ratio, label) == (1.5, "s") and flag is True
        pypto.assemble(pypto.view(x, [2, 3], [0, 3]), [0, 0], out_a)
        out_b[:] = pypto.view(x, [2, 3], [0, 0])
        out_a[1, 5] = 9.0

    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    a, b = np.zeros((2, 6), np.float32), np.zeros((2, 3), np.float32)
    ta, tb = make(a), make(b)
    k(make(x.copy()), ta, tb, 2, 1.5, "s", flag=True)
    np.testing.assert_array_equal(a[:, :3], x[:, 3:])  # ta / tb share a's / b's memory
    np.testing.assert_array_equal(b, x[:, :3])
    assert a[1, 5] == 9 and np.count_nonzero(a[:, 3:]) == 1


def test_jit_torch_tensors_that_require_grad_are_read_not_written():
    # issue 27 F16 (docs/tensors.md): a tensor that requires grad is an input; writing it would
    # bypass autograd, so it is an ArgumentError (and a FeError), not a silent write.
    @pypto.frontend.jit()
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = x

    x = torch.randn(3, 4, requires_grad=True)
    out = torch.zeros(3, 4)
    k(x, out)
    assert torch.equal(out, x.detach())
    grad_out = torch.zeros(3, 4, requires_grad=True)
    with pytest.raises(pypto.ArgumentError, match="read-only") as caught:
        k(x, grad_out)
    assert isinstance(caught.value, pypto.error.FeError)
    assert not grad_out.detach().any()


@pytest.mark.parametrize("annotation_shape, annotation_dtype, arg, error, pattern", [
    ([2, 3], pypto.DT_FP32, np.zeros((3, 2), np.float32), pypto.ArgumentError,
     r"^jit: kernel .*k parameter 'x' \(the 1st input tensor\): shape \[3, 2\] does not match the shape of its "
     r"definition \[2, 3\]"),
    ([2, 3], pypto.DT_FP32, np.zeros((2, 3), np.float16), pypto.DTypeError,
     r"^jit: kernel .*k parameter 'x' \(the 1st input tensor\): dtype DT_FP16 does not match the dtype of its "
     r"definition DT_FP32"),
    ([2, 3], pypto.DT_BF16, torch.zeros(2, 3), pypto.DTypeError, r"parameter 'x' .*: dtype DT_FP32 does not match .* DT_BF16"),
    ([2, 3], pypto.DT_FP32, 1.0, pypto.DTypeError,
     r"^jit: kernel .*k parameter 'x' is annotated as a pypto.Tensor but got float"),
    ([2, 3], pypto.DT_FP32, None, pypto.DTypeError, r"parameter 'x' is annotated as a pypto.Tensor but got NoneType"),
])
def test_jit_annotation_checks(annotation_shape, annotation_dtype, arg, error, pattern):
    calls = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor(annotation_shape, annotation_dtype), out: pypto.Tensor()):
        calls.append(1)

    with pytest.raises(error, match=pattern):
        k(arg, np.zeros(1))
    assert not calls


def test_jit_annotation_forms():
    seen = []

    @pypto.frontend.jit
    def k(a: pypto.tensor([2], pypto.DT_INT32), b: pypto.Tensor, c: pypto.Tensor(), d, e: int = 3):
        seen.append((type(a), type(b), type(c), type(d), e))

    k(np.zeros(2, np.int32), [1.0, 2.0], torch.zeros(5, dtype=torch.int8), np.zeros(3))
    assert seen == [(pypto.Tensor, pypto.Tensor, pypto.Tensor, pypto.Tensor, 3)]
    with pytest.raises(pypto.ArgumentError, match=r"parameter 'a' \(the 1st input tensor\): shape \[3\] does not"):
        k(np.zeros(3, np.int32), 1, 2, 3)
    with pytest.raises(pypto.DTypeError, match=r"parameter 'b' is annotated as a pypto.Tensor but got int"):
        k(np.zeros(2, np.int32), 1, np.zeros(1), 3)
    # missing arguments: PyPTO's FeError (python/tests/st/frontend/test_annotation_check.py)
    with pytest.raises(pypto.ArgumentError, match="missing a required argument: 'b'") as caught:
        k(np.zeros(2, np.int32))
    assert isinstance(caught.value, pypto.error.FeError)


def test_jit_string_annotations(tmp_path):
    """Kernels in modules with `from __future__ import annotations` are checked the same way."""
    source = textwrap.dedent("""
        from __future__ import annotations
        import ptocpu as pypto

        @pypto.frontend.jit
        def k(x: pypto.Tensor([2, 2], pypto.DT_FP32), out: pypto.Tensor([2, 2], pypto.DT_FP32)):
            out[:] = x
    """)
    path = tmp_path / "string_annotations_kernel.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("string_annotations_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = np.zeros((2, 2), np.float32)
    module.k(np.ones((2, 2), np.float32), out)
    assert out.sum() == 4
    with pytest.raises(pypto.DTypeError, match=r"parameter 'x' \(the 1st input tensor\): dtype DT_FP64 does not match"):
        module.k(np.ones((2, 2)), out)


def test_jit_scopes_tile_shape_and_platform():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), fail: bool):
        pypto.set_platform("atlas_a2")
        pypto.set_vec_tile_shapes(4, 4)
        assert pypto.get_vec_tile_shapes() == [4, 4]
        if fail:
            raise RuntimeError("kernel failed")

    x = np.zeros((4, 4), np.float32)
    k(x, False)
    assert pypto.get_platform() == "cpu" and pypto.get_vec_tile_shapes() == []
    with pytest.raises(RuntimeError, match="kernel failed"):
        k(x, True)
    assert pypto.get_platform() == "cpu" and pypto.get_vec_tile_shapes() == []
    with pypto.platform("ascend950"), pypto.vec_tile_shapes(8, 16):
        k(x, False)
        assert pypto.get_platform() == "ascend950" and pypto.get_vec_tile_shapes() == [8, 16]
        with pytest.raises(RuntimeError):
            k(x, True)
        assert pypto.get_platform() == "ascend950" and pypto.get_vec_tile_shapes() == [8, 16]
    # a ptocpu error raised inside the kernel restores them too
    ex, kernel = _gather_kernel()
    input0, input1 = ex.make_inputs()
    with pytest.raises(pypto.IndexOutOfRange):
        kernel(input0, np.array([99], np.int64), np.zeros((1, 64), np.float32), ex.CONFIG)
    assert pypto.get_vec_tile_shapes() == []


def test_jit_kernels_nest_and_keep_their_own_scope():
    @pypto.frontend.jit
    def inner(x: pypto.Tensor()):
        pypto.set_vec_tile_shapes(2)
        pypto.set_platform("ascend950")

    seen = []

    @pypto.frontend.jit
    def outer(x: pypto.Tensor()):
        pypto.set_vec_tile_shapes(4, 4)
        inner(x)
        seen.append((pypto.get_vec_tile_shapes(), pypto.get_platform()))

    outer(np.zeros(2))
    assert seen == [([4, 4], "cpu")]
    assert pypto.get_vec_tile_shapes() == []
