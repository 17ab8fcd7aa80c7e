"""Golden checks with PyPTO's switches (docs/tracing.md#golden-checks): verify_options /
set_verify_options with set_verify_golden_data. Goldens come from torch; errors are worked out by
hand."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
import torch

import ptocpu as pypto
from helpers import gather_rows_program, load_example
from ptocpu import golden
from ptocpu.error import PyptoError


@pytest.fixture(autouse=True)
def _no_leftover_goldens():
    yield
    golden.take_goldens()
    pypto.reset_options()


def load_seed000():
    return load_example("seed000_index_select_kernel")


def seed_golden(seed):
    input0, input1 = seed.make_inputs()
    return torch.index_select(torch.from_numpy(input0), 0, torch.from_numpy(input1))


def test_seed000_right_golden_passes(capsys):
    seed = load_seed000()
    pypto.set_verify_options(enable_pass_verify=True)
    pypto.set_verify_golden_data(goldens=[None, None, seed_golden(seed)])
    seed.run("ascend950")
    out = capsys.readouterr().out
    assert "golden check: kernel gather_onboard_2d_2input_2d_output_kernel" in out
    lines = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert lines["input0"].endswith("NO_COMPARE") and lines["input1"].endswith("NO_COMPARE")
    assert lines["output0"].endswith("PASS") and "[16, 64]" in lines["output0"]
    assert golden.take_goldens() is None  # a set of goldens is checked once


def test_seed000_perturbed_golden_fails():
    seed = load_seed000()
    want = seed_golden(seed).clone()
    want[5, 7] += 0.5
    pypto.set_verify_options(enable_pass_verify=True)
    pypto.set_verify_golden_data(goldens=[None, None, want])
    with pytest.raises(golden.GoldenMismatchError, match=r"output 'output0'.*worst element \[5, 7\]") as info:
        seed.run("ascend950")
    got = seed_golden(seed)[5, 7].item()
    assert f"got {got!r}" in str(info.value) and "max abs 0.5" in str(info.value)


def test_kernel_verify_options_and_fp16_tolerance(capsys):
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True, "pass_verify_save_tensor": True})
    def copy(a: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = a

    a = np.linspace(1, 2, 64, dtype=np.float16)
    out = np.zeros_like(a)
    # one element off by one fp16 ulp at 1.0 (2^-10): MERE = 2^-10 / 64 < T, MARE ~ 2^-10 < 10 T: PASS
    near = a.copy()
    near[0] = np.float16(1.0) + np.float16(2.0 ** -10)
    pypto.set_verify_golden_data(goldens=[None, near])
    copy(a, out)
    assert capsys.readouterr().out.splitlines()[-1].endswith("PASS")
    # every element 1 % off: MERE ~ 0.01 > T = 2^-10: FAIL
    pypto.set_verify_golden_data(goldens=[None, (a.astype(np.float32) * 1.01).astype(np.float16)])
    with pytest.raises(golden.GoldenMismatchError, match="output 'out'"):
        copy(a, out)


def test_error_tol_option_and_integers():
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True, "pass_verify_error_tol": [0.0, 0.25]})
    def copy(a: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = a

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.zeros_like(a)
    pypto.set_verify_golden_data(goldens=[a + 0.2, a - 0.2])  # within atol 0.25
    copy(a, out)
    pypto.set_verify_golden_data(goldens=[None, np.where(a == 4, 4.5, a)])
    with pytest.raises(golden.GoldenMismatchError, match=r"worst element \[1, 1\]: got 4.0, golden 4.5"):
        copy(a, out)

    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def copy_int(a: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = a

    i = np.arange(4, dtype=np.int32)
    out_i = np.zeros_like(i)
    pypto.set_verify_golden_data(goldens=[None, np.array([0, 1, 2, 4], np.int32)])
    with pytest.raises(golden.GoldenMismatchError, match=r"\(equal\): worst element \[3\]: got 3, golden 4"):
        copy_int(i, out_i)


def test_bf16_nan_and_shape_mismatch():
    a = np.array([1.0, np.nan, 3.0], dtype=ml_dtypes.bfloat16)
    assert golden.compare("x", a, a.copy()).result == "PASS"  # NaN where the golden has NaN
    rows = golden.compare("x", a, np.array([1.0, 2.0, 3.0], dtype=ml_dtypes.bfloat16))
    assert rows.result == "FAIL" and rows.worst == (1,) and rows.dtype == "DT_BF16"
    assert golden.compare("x", a, a[:2]).reason == "shape [3] but the golden has [2]"


def test_goldens_must_match_the_tensors():
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def copy(a: pypto.Tensor(), out: pypto.Tensor(), scale: float):
        out[:] = a

    a = np.ones(3, np.float32)
    pypto.set_verify_golden_data(goldens=[None, a, a])
    with pytest.raises(pypto.ArgumentError, match="3 goldens but the run has 2 tensors \\(a, out\\)"):
        copy(a, np.zeros_like(a), 2.0)


def test_no_check_without_the_switch(capsys):
    @pypto.frontend.jit
    def copy(a: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = a

    a = np.ones(3, np.float32)
    pypto.set_verify_golden_data(goldens=[None, a + 1])  # wrong, but nothing asks for a check
    copy(a, np.zeros_like(a))
    assert capsys.readouterr().out == ""
    with pytest.raises(TypeError, match="unexpected keyword argument 'enable'"):
        pypto.set_verify_options(enable=True)


def test_function_program_golden():
    with pypto.platform("ascend950"):
        tx, ti, to, want = gather_rows_program()
        pypto.set_verify_options(enable_pass_verify=True)
        bad = want.clone()
        bad[6, 2] = -1
        pypto.set_verify_golden_data(goldens=[None, None, bad])
        with pytest.raises(golden.GoldenMismatchError, match=r"function GATHER_ROWS: output 'out'.*worst element \[6, 2\]"):
            pypto.runtime._device_run_once_data_from_host(pypto.from_torch(tx), pypto.from_torch(ti),
                                                          pypto.from_torch(to, "out"))
    assert torch.equal(to, want)  # the run wrote its result before the check


def _by_address(t: torch.Tensor, dtype=pypto.DT_FP32, shape=None):
    return pypto.pypto_impl.DeviceTensorData(dtype, t.data_ptr(), list(t.shape) if shape is None else shape)


def test_goldens_handed_over_by_address_are_checked():
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def double(a: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = a + a

    a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = torch.zeros(2, 3)
    right, wrong = a * 2, a * 2 + 1
    pypto.pypto_impl.SetVerifyData([_by_address(a)], [_by_address(out)],
                                   [pypto.pypto_impl.DeviceTensorData(pypto.DT_FP32, 0, [2, 3]), _by_address(right)])
    right.add_(100)  # the golden was copied when it was handed over
    double(a, out)
    pypto.pypto_impl.SetVerifyData([_by_address(a)], [_by_address(out)], [_by_address(a), _by_address(wrong)])
    with pytest.raises(golden.GoldenMismatchError, match="output 'out'"):
        double(a, out)


def test_goldens_by_address_must_match_their_tensors():
    t = torch.zeros(2, 3)
    impl = pypto.pypto_impl
    with pytest.raises(PyptoError, match="ErrCode: FB4003.*dtype mismatch at index 1, output dtype: DT_FP32, golden "
                                               "dtype: DT_FP16"):
        impl.SetVerifyData([_by_address(t)], [_by_address(t)], [_by_address(t), _by_address(t, pypto.DT_FP16)])
    with pytest.raises(PyptoError, match=r"ErrCode: FB4002.*dim 1, output shape: \[2, 4\], golden shape: \[2, 3\]"):
        impl.SetVerifyData([_by_address(t)], [_by_address(t, shape=[2, 4])], [_by_address(t), _by_address(t)])
    with pytest.raises(PyptoError, match="ErrCode: FB4002.*output rank: 1, golden rank: 2"):
        impl.SetVerifyData([], [_by_address(t, shape=[6])], [_by_address(t)])
    assert golden.take_goldens() is None  # nothing was set by a refused call
