"""Compiled kernels (docs/kernel_model.md#compiled-kernels): a jit kernel or pypto.function body is
traced on its first call per signature and later calls run the program in C++. References are
numpy / ml_dtypes; compiled results are also checked bit for bit against the same kernel eager."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import ptocpu as pypto
from ptocpu.engine import compile as kernel_compile, trace

ROWS, COLS, TILE = 64, 256, 8


def programs(kernel) -> list:
    return list(kernel.kernel.compiled.programs.values())


@pypto.frontend.jit
def chain_kernel(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
    """Five elementwise ops per row tile, the result assembled into out."""
    pypto.set_vec_tile_shapes(TILE, COLS)
    for i in pypto.loop(ROWS // TILE):
        x = pypto.view(a, [TILE, COLS], [i * TILE, 0])
        y = pypto.view(b, [TILE, COLS], [i * TILE, 0])
        r = pypto.add(x, y)
        r = pypto.mul(r, 0.5)
        r = pypto.sub(r, y)
        r = pypto.maximum(r, x)
        r = pypto.div(r, pypto.add(pypto.sqrt(y), 1.0))
        pypto.assemble(r, [i * TILE, 0], out)


def chain_reference(a, b):
    r = np.maximum((a + b) * np.float32(0.5) - b, a)
    return r / (np.sqrt(b) + np.float32(1.0))


def inputs(seed: int):
    rng = np.random.default_rng(seed)
    return rng.random((ROWS, COLS), dtype=np.float32), rng.random((ROWS, COLS), dtype=np.float32)


def test_second_call_runs_the_fused_parallel_program():
    a, b = inputs(0)
    out = np.zeros_like(a)
    chain_kernel(a, b, out)  # traced
    np.testing.assert_array_equal(out, chain_reference(a, b))
    (program,) = programs(chain_kernel)
    text = program.describe()
    assert text.startswith(f"loop {ROWS // TILE} parallel"), text
    assert "fused add+mul+sub+maximum+sqrt+add+div" in text, text
    assert "assemble" not in text  # the chain stores straight into out
    for seed in (1, 2):
        a, b = inputs(seed)
        out = np.zeros_like(a)
        chain_kernel(a, b, out)
        np.testing.assert_array_equal(out, chain_reference(a, b))
    assert len(programs(chain_kernel)) == 1


@pytest.mark.parametrize("threads", [1, 2])
def test_compiled_equals_eager_bit_for_bit(threads, monkeypatch):
    a, b = inputs(3)
    eager = np.zeros_like(a)
    monkeypatch.setenv("PTOCPU_EAGER", "1")
    chain_kernel(a, b, eager)
    monkeypatch.delenv("PTOCPU_EAGER")
    previous = pypto.get_num_threads()
    pypto.set_num_threads(threads)
    try:
        for _ in range(2):
            out = np.full_like(a, np.nan)
            chain_kernel(a, b, out)
            assert out.tobytes() == eager.tobytes()
    finally:
        pypto.set_num_threads(previous)


@pypto.frontend.jit
def block_assignment_kernel(a: pypto.Tensor(), out: pypto.Tensor()):
    """upstream's softmax example writes each result with out[i:, ...] = value: an assemble of one tile."""
    pypto.set_vec_tile_shapes(TILE, COLS)
    for i in pypto.loop(ROWS // TILE):
        x = a[i * TILE:(i + 1) * TILE, :]
        out[i * TILE:, ...] = pypto.exp(x - pypto.amax(x, dim=-1, keepdim=True))


def test_a_block_assignment_compiles_to_an_assemble_in_a_parallel_loop(monkeypatch):
    a, _ = inputs(4)
    eager = np.zeros_like(a)
    monkeypatch.setenv("PTOCPU_EAGER", "1")
    block_assignment_kernel(a, eager)
    monkeypatch.delenv("PTOCPU_EAGER")
    want = np.exp(a - a.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(eager, want, rtol=1e-6)
    for _ in range(2):
        out = np.full_like(a, np.nan)
        block_assignment_kernel(a, out)
        assert out.tobytes() == eager.tobytes()
    (program,) = programs(block_assignment_kernel)
    text = program.describe()
    assert text.startswith(f"loop {ROWS // TILE} parallel"), text
    assert "setitem" not in text and "assemble" not in text, text  # the chain writes into out


def test_a_new_signature_traces_again():
    @pypto.frontend.jit
    def double(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.assemble(pypto.add(x, x), [0] * x.dim, out)

    for shape in ([4, 8], [4, 8], [2, 3], [4, 8]):
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        out = np.zeros_like(x)
        double(x, out)
        np.testing.assert_array_equal(out, x + x)
    assert len(programs(double)) == 2


# ---- AutoCast (docs/kernel_model.md#rounding-compiled-and-eager) -------------------------------------


@pypto.frontend.jit
def bf16_adds(a: pypto.Tensor(), b: pypto.Tensor(), c: pypto.Tensor(), d: pypto.Tensor(), out: pypto.Tensor()):
    r = pypto.add(pypto.add(pypto.add(a, b), c), d)
    pypto.assemble(r, [0, 0], out)


def test_bf16_chain_of_three_adds_rounds_once_compiled_and_per_op_eager(monkeypatch):
    bf16 = ml_dtypes.bfloat16
    rng = np.random.default_rng(7)
    # Values of different magnitudes: rounding after each add loses what one final rounding keeps.
    a, b, c, d = (rng.normal(0, s, (16, 64)).astype(bf16) for s in (1.0, 0.01, 100.0, 0.001))
    f32 = [x.astype(np.float32) for x in (a, b, c, d)]
    once = (((f32[0] + f32[1]) + f32[2]) + f32[3]).astype(bf16)
    per_op = (((a.astype(np.float32) + f32[1]).astype(bf16).astype(np.float32) + f32[2]).astype(bf16)
              .astype(np.float32) + f32[3]).astype(bf16)
    assert not np.array_equal(once.view(np.uint16), per_op.view(np.uint16))  # the case tells them apart

    monkeypatch.setenv("PTOCPU_EAGER", "1")
    eager = np.zeros_like(a)
    bf16_adds(a, b, c, d, eager)
    assert np.array_equal(eager.view(np.uint16), per_op.view(np.uint16))
    monkeypatch.delenv("PTOCPU_EAGER")

    for _ in range(2):  # traced, then run again as the program from the saved inputs; then the program
        out = np.zeros_like(a)
        bf16_adds(a, b, c, d, out)
        assert np.array_equal(out.view(np.uint16), once.view(np.uint16))


def test_first_call_of_an_in_place_autocast_chain_starts_from_the_saved_inputs():
    @pypto.frontend.jit
    def accumulate(acc: pypto.Tensor(), x: pypto.Tensor()):  # acc = (acc + x) * x, in place
        pypto.assemble(pypto.mul(pypto.add(acc, x), x), [0, 0], acc)

    rng = np.random.default_rng(9)
    start = rng.normal(0, 1, (8, 64)).astype(np.float16)
    x = rng.normal(0, 3, (8, 64)).astype(np.float16)
    f32 = start.astype(np.float32), x.astype(np.float32)
    once = ((f32[0] + f32[1]) * f32[1]).astype(np.float16)
    assert not np.array_equal(once, ((f32[0] + f32[1]).astype(np.float16).astype(np.float32) * f32[1])
                              .astype(np.float16))
    for _ in range(2):
        acc = start.copy()
        accumulate(acc, x)  # once, not twice: the program ran from acc's saved bytes
        assert np.array_equal(acc.view(np.uint16), once.view(np.uint16))


def test_a_body_that_moves_its_output_keeps_the_eager_first_call():
    @pypto.frontend.jit
    def moved(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        out.move(pypto.mul(pypto.add(a, b), b))

    rng = np.random.default_rng(10)
    a, b = (rng.normal(0, s, (8, 64)).astype(ml_dtypes.bfloat16) for s in (1.0, 0.01))
    f32 = a.astype(np.float32), b.astype(np.float32)
    per_op = ((f32[0] + f32[1]).astype(ml_dtypes.bfloat16).astype(np.float32) * f32[1]).astype(ml_dtypes.bfloat16)
    out = np.zeros_like(a)
    moved(a, b, out)
    assert np.array_equal(out.view(np.uint16), per_op.view(np.uint16))


def test_chains_over_tail_tiles_fuse_over_their_valid_part():
    """upstream's st/interface/test_verify_frontend_jit.py: 64 x 64 views over a [72, 144] fp16
    tensor; the tail tiles' chains fuse over their valid parts and round once, as the full ones."""
    @pypto.frontend.jit
    def chain(x: pypto.Tensor(), y: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(32, 32)
        for i in pypto.loop(2):
            for j in pypto.loop(3):
                a = pypto.view(x, [64, 64], [i * 64, j * 64])
                b = pypto.view(y, [64, 64], [i * 64, j * 64])
                pypto.assemble(((a * (a + b)) - b) * b, [i * 64, j * 64], out)

    rng = np.random.default_rng(11)
    x, y = (rng.uniform(0, 1, (72, 144)).astype(np.float16) for _ in range(2))
    fx, fy = x.astype(np.float32), y.astype(np.float32)
    once = (((fx * (fx + fy)) - fy) * fy).astype(np.float16)
    for _ in range(2):
        out = np.zeros_like(x)
        chain(x, y, out)
        assert np.array_equal(out.view(np.uint16), once.view(np.uint16))
    (program,) = programs(chain)
    lines = [line.strip() for line in program.describe().splitlines()]
    assert not [line for line in lines if line.startswith(("add(", "mul(", "sub("))]  # every op in a chain
    fused = {line.split(" over ")[1].split(" (")[0] for line in lines if line.startswith("fused add+mul+sub+mul")}
    assert {"[64, 16]", "[8, 16]"} <= fused


def test_a_body_making_more_than_the_trace_budget_stays_eager(capsys):
    @pypto.frontend.jit
    def many_tiles(a: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(64, 256)
        for i in pypto.loop(16):
            tile = pypto.view(a, [64, 256], [i * 64, 0])
            pypto.assemble(pypto.exp(pypto.mul(tile, 0.5)), [i * 64, 0], out)

    a = np.random.default_rng(12).normal(0, 1, (1024, 256)).astype(np.float32)
    previous = pypto._core._set_trace_budget(1 << 20)  # 16 tiles x 2 intermediates x 64 KiB = 2 MiB
    try:
        for _ in range(2):
            out = np.zeros_like(a)
            many_tiles(a, out)
            np.testing.assert_allclose(out, np.exp(a * 0.5), rtol=1e-6)
    finally:
        pypto._core._set_trace_budget(previous)
    assert not programs(many_tiles)
    assert "runs eagerly: the trace would keep more than 1 MiB of the tensors the body makes alive" in \
        capsys.readouterr().err


def test_a_native_op_ends_the_fp32_chain():
    """fp16 div runs natively (not AutoCast): the add's value is rounded to fp16 before it."""
    @pypto.frontend.jit
    def add_div(a: pypto.Tensor(), b: pypto.Tensor(), out: pypto.Tensor()):
        pypto.assemble(pypto.div(pypto.add(a, b), b), [0, 0], out)

    rng = np.random.default_rng(8)
    a = rng.normal(0, 100, (8, 64)).astype(np.float16)
    b = rng.uniform(0.5, 2, (8, 64)).astype(np.float16)
    want = ((a.astype(np.float32) + b.astype(np.float32)).astype(np.float16).astype(np.float32)
            / b.astype(np.float32)).astype(np.float16)
    for _ in range(2):
        out = np.zeros_like(a)
        add_div(a, b, out)
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))


# ---- loops ---------------------------------------------------------------------------------------


def test_iterations_writing_the_same_tile_stay_serial():
    @pypto.frontend.jit
    def last_wins(a: pypto.Tensor(), out: pypto.Tensor()):
        for i in pypto.loop(4):
            x = pypto.view(a, [8, 16], [i * 8, 0])
            pypto.assemble(pypto.mul(x, 2.0), [0, 0], out)

    a = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    for _ in range(2):
        out = np.zeros((8, 16), np.float32)
        last_wins(a, out)
        np.testing.assert_array_equal(out, a[24:] * 2)
    (program,) = programs(last_wins)
    assert "parallel" not in program.describe()


def test_a_loop_carried_value_unrolls_and_stays_right():
    @pypto.frontend.jit
    def running_sum(a: pypto.Tensor(), out: pypto.Tensor()):
        acc = pypto.view(a, [4, 16], [0, 0])
        for i in pypto.loop(1, 4):
            acc = pypto.add(acc, pypto.view(a, [4, 16], [i * 4, 0]))
        pypto.assemble(acc, [0, 0], out)

    for seed in range(2):
        a = np.random.default_rng(seed).random((16, 16), dtype=np.float32)
        out = np.zeros((4, 16), np.float32)
        running_sum(a, out)
        np.testing.assert_array_equal(out, ((a[0:4] + a[4:8]) + a[8:12]) + a[12:16])


# ---- fallbacks -------------------------------------------------------------------------------------


def test_a_body_reading_values_into_python_stays_eager(capsys):
    @pypto.frontend.jit
    def branchy(a: pypto.Tensor(), out: pypto.Tensor()):
        scale = 2.0 if float(a.numpy()[0, 0]) > 0 else -1.0
        pypto.assemble(pypto.mul(a, scale), [0, 0], out)

    for first in (1.0, -1.0, 1.0):
        a = np.full((4, 4), first, np.float32)
        out = np.zeros_like(a)
        branchy(a, out)
        np.testing.assert_array_equal(out, a * (2.0 if first > 0 else -1.0))
    err = capsys.readouterr().err
    assert err.count("runs eagerly") == 1 and "branchy" in err
    assert programs(branchy) == []


def test_a_loop_bound_read_from_an_int32_tensor_stays_eager(capsys):
    # PyPTO's paged kernels read lengths and block ids as scalars (GetTensorData): t[i] on a DT_INT32
    # tensor is a SymbolicScalar, so the value reaches Python and the kernel must not be compiled.
    @pypto.frontend.jit
    def by_length(lens: pypto.Tensor(), a: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(1, 8)
        n = lens[0]
        assert isinstance(n, pypto.SymbolicScalar)
        for i in pypto.loop(n):
            pypto.assemble(pypto.add(pypto.view(a, [1, 8], [i, 0]), 1.0), [i, 0], out)

    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    for n in (1, 3, 2):
        out = np.zeros_like(a)
        by_length(np.array([n], np.int32), a, out)
        want = np.zeros_like(a)
        want[:n] = a[:n] + 1
        np.testing.assert_array_equal(out, want)
    assert capsys.readouterr().err.count("runs eagerly") == 1
    assert programs(by_length) == []


def test_a_body_handing_tensors_to_torch_stays_eager(capsys):
    torch = pytest.importorskip("torch")

    @pypto.frontend.jit
    def via_torch(a: pypto.Tensor(), out: pypto.Tensor()):
        if torch.from_dlpack(a).sum() > 0:
            pypto.assemble(pypto.add(a, a), [0, 0], out)

    for value in (1.0, -1.0):
        a = np.full((4, 4), value, np.float32)
        out = np.zeros_like(a)
        via_torch(a, out)
        np.testing.assert_array_equal(out, a + a if value > 0 else 0)
    assert "runs eagerly" in capsys.readouterr().err


@pytest.mark.parametrize("how", ["env", "debug_options"])
def test_eager_can_be_forced(how, monkeypatch):
    options = {"debug_options": {"eager": True}} if how == "debug_options" else {}
    if how == "env":
        monkeypatch.setenv("PTOCPU_EAGER", "1")

    @pypto.frontend.jit(**options)
    def double(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.assemble(pypto.add(x, x), [0, 0], out)

    x = np.ones((2, 2), np.float32)
    for _ in range(2):
        out = np.zeros_like(x)
        double(x, out)
        np.testing.assert_array_equal(out, x + x)
    assert programs(double) == []


def test_a_kernel_called_while_another_is_traced_is_part_of_its_trace():
    @pypto.frontend.jit
    def inner(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.assemble(pypto.mul(x, 3.0), [0, 0], out)

    @pypto.frontend.jit
    def outer(x: pypto.Tensor(), out: pypto.Tensor()):
        inner(x, out)

    for seed in range(3):
        x = np.random.default_rng(seed).random((4, 4), dtype=np.float32)
        out = np.zeros_like(x)
        outer(x, out)
        np.testing.assert_array_equal(out, x * np.float32(3.0))


# ---- errors, tracing, pypto.function ---------------------------------------------------------------


def test_errors_on_the_compiled_path_name_the_kernel_op_and_iteration():
    @pypto.frontend.jit
    def gather_rows(x: pypto.Tensor(), index: pypto.Tensor(), out: pypto.Tensor()):
        for i in pypto.loop(2):
            rows = pypto.view(index, [2], [i * 2])
            pypto.assemble(pypto.index_select(x, 0, rows), [i * 2, 0], out)

    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = np.zeros((4, 4), np.float32)
    gather_rows(x, np.array([0, 1, 2, 3], np.int32), out)
    np.testing.assert_array_equal(out, x[:4])
    with pytest.raises(IndexError, match=r"kernel .*gather_rows.*index_select.*iteration 1"):
        gather_rows(x, np.array([0, 1, 2, 99], np.int32), out)


def test_a_trace_recording_sees_the_compiled_ops(tmp_path):
    a, b = inputs(4)
    out = np.zeros_like(a)
    chain_kernel(a, b, out)  # make sure the program exists
    path = tmp_path / "t.json"
    with trace.recording(str(path)):
        chain_kernel(a, b, out)
    assert "add+mul+sub+maximum+sqrt+add+div" in path.read_text()


def test_pypto_function_runs_its_program():
    x = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "x")
    y = pypto.tensor([ROWS, COLS], pypto.DT_FP32, "y")
    with pypto.function("MAIN", x, y) as program:
        pypto.set_vec_tile_shapes(TILE, COLS)
        for i in pypto.loop(ROWS // TILE):
            v = pypto.view(x, [TILE, COLS], [i * TILE, 0])
            pypto.assemble(pypto.add(pypto.sqrt(v), v), [i * TILE, 0], y)
    assert program.compiled is not None and "fused sqrt+add" in program.compiled.describe()
    for seed in range(2):
        a, _ = inputs(seed)
        out = np.zeros_like(a)
        pypto.runtime._device_run_once_data_from_host(pypto.from_numpy(a), pypto.from_numpy(out))
        np.testing.assert_array_equal(out, np.sqrt(a) + a)


def test_eager_switch_reads_the_environment(monkeypatch):
    monkeypatch.setenv("PTOCPU_EAGER", "0")
    assert not kernel_compile.eager_forced()
    monkeypatch.setenv("PTOCPU_EAGER", "1")
    assert kernel_compile.eager_forced()
