"""PyPTO's options on ptocpu (python/ptocpu/engine/config.py, lang/options.py): the option
store's types, ranges and scopes, the set_*_options / get_*_options pairs, global and pass
configs, and the enums and stand-ins PyPTO's tests reach with them.

Each test names the upstream hicann/pypto file whose behaviour it checks; the values are our own.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import ptocpu as pypto
from ptocpu import experimental, pypto_impl
from ptocpu.error import FeError, PassError, PyptoError, PyptoGeneralError

TYPE_ERROR = r"CHECK FAILED: ErrCode: F00001! Enum: ExternalError::INVALID_TYPE\n"


@pytest.fixture(autouse=True)
def _fresh_options():
    pypto.reset_options()
    yield
    pypto.reset_options()


# --- types and ranges -------------------------------------------------------------------------

@pytest.mark.parametrize("setter, error, pattern", [
    # python/tests/ut/interface/test_config_options_type_error.py: the message each case matches
    (lambda: pypto.set_pass_options(sg_set_scope=1.5), pypto.DTypeError,
     r"Option 'pass.sg_set_scope' has invalid type. Expected int64 or tuple, but got float."),
    (lambda: pypto.set_pass_options(sg_set_scope=-3), pypto.ArgumentError,
     r"Option 'pass\.sg_set_scope' scope_id -3 is out of range\. Expected -1~2147483647\."),
    (lambda: pypto.set_pass_options(sg_set_scope=(7, True)), pypto.ArgumentError, r"Expected 3"),
    (lambda: pypto.set_pass_options(sg_set_scope=(7, 1, False)), pypto.DTypeError, r"Expected bool"),
    (lambda: pypto.set_pass_options(sg_set_ooo_scope=0), pypto.ArgumentError,
     r"Invalid sg_set_ooo_scope: '0'\. Expected -1 or an integer in \[1, 100000\]\."),
    (lambda: pypto.set_pass_options(vec_nbuffer_setting=(1, 2)), pypto.DTypeError,
     TYPE_ERROR + r"Option 'pass\.vec_nbuffer_setting' has invalid type\. Expected dict\[int64, int64\], "
                  r"but got list\[int64\]"),
    (lambda: pypto.set_host_options(compile_monitor_print_interval="5"), pypto.DTypeError,
     TYPE_ERROR + r"Option 'host\.compile_monitor_print_interval' has invalid type\. Expected int64, but got string"),
    (lambda: pypto.set_codegen_options(enable_pmu_trace=1), pypto.DTypeError,
     TYPE_ERROR + r"Option 'codegen\.enable_pmu_trace' has invalid type\. Expected bool, but got int64"),
    (lambda: pypto.set_verify_options(pass_verify_save_tensor_dir=["out"]), pypto.DTypeError,
     TYPE_ERROR + r"Option 'verify\.pass_verify_save_tensor_dir' has invalid type\. Expected string, "
                  r"but got list\[string\]"),
    (lambda: pypto.set_debug_options(dump_pass_graph=("A", 2, "B")), pypto.DTypeError,
     r"Option 'debug\.dump_pass_graph' has invalid list element type at index 1\. Expected str, but got int"),
    (lambda: pypto.set_options(runtime_options={"device_sched_mode": True}), pypto.DTypeError,
     TYPE_ERROR + r"Option 'runtime\.device_sched_mode' has invalid type\. Expected int64, but got bool"),
    (lambda: pypto.set_options(verify_options={"pass_verify_pass_filter": "ExpandFunction"}), pypto.DTypeError,
     TYPE_ERROR + r"Option 'verify\.pass_verify_pass_filter' has invalid type\. Expected list\[string\], "
                  r"but got string"),
    (lambda: pypto.set_options(host_options={"no_such_option": 1}), pypto.ArgumentError,
     r"key: host\.no_such_option does not exist\."),
    (lambda: pypto.set_pass_options(cube_nbuffer_setting={-1: 0}), pypto.ArgumentError,
     r"(?s)pass\.cube_nbuffer_setting.*doesn't within the value range"),
    (lambda: pypto.set_debug_options(runtime_debug_mode=5), pypto.ArgumentError,
     r"(?s)debug\.runtime_debug_mode.*doesn't within the value range\. Range: \[0, 4\]"),
])
def test_option_values_are_checked_as_pypto_checks_them(setter, error, pattern):
    with pytest.raises(error, match=pattern) as caught:
        setter()
    assert isinstance(caught.value, FeError)  # PyPTO's class too
    assert pypto.get_pass_options()["sg_set_scope"] == (-1, False, False)  # nothing was set


def test_a_failed_set_sets_nothing():
    # engine/config.py: all or none
    with pytest.raises(pypto.DTypeError):
        pypto.set_host_options(compile_timeout=100, compile_monitor_enable="on")
    assert pypto.get_host_options()["compile_timeout"] == 600


# --- pass options -----------------------------------------------------------------------------

def test_pass_options_have_one_entry_per_keyword_and_round_trip():
    # python/tests/ut/interface/test_pass_config.py (test_pass_option), test_config_options.py
    options = pypto.get_pass_options()
    assert set(options) == set(inspect.signature(pypto.set_pass_options).parameters)
    assert options["cube_nbuffer_setting"] == {-1: 1} and options["sg_set_scope"] == (-1, False, False)
    assert options["enable_slice"] is False and options["sg_set_ooo_scope"] == -1
    pypto.set_pass_options(sg_set_scope=12, vec_nbuffer_setting={0: 3, 2: 1}, sg_set_tunevf_mode=2,
                           cube_l1_reuse_setting={-1: 2, 5: (3, "right")}, ooo_sched_mode="HLF")
    options = pypto.get_pass_options()
    assert options["sg_set_scope"] == (12, False, False) and options["vec_nbuffer_setting"] == {0: 3, 2: 1}
    assert options["cube_l1_reuse_setting"] == {-1: 2, 5: (3, "right")} and options["sg_set_tunevf_mode"] == 2
    pypto.set_pass_options(sg_set_scope=(4, False, True))
    assert pypto.get_pass_options()["sg_set_scope"] == (4, False, True)
    with pytest.raises(pypto.ArgumentError, match="side must be one of"):
        pypto.set_pass_options(cube_l1_reuse_setting={1: (2, "up")})


def test_settings_keep_function_and_label_keys_apart_from_hash_orders():
    # test_pass_config.py (TestHashOrderConfig)
    pypto.set_pass_options(vec_nbuffer_setting={"func7_1": 2, "DEFAULT": 3, "attn": 1})
    assert pypto.get_pass_options()["vec_nbuffer_setting"] == {"func7_1": 2, "DEFAULT": 3, "attn": 1}
    pypto.set_pass_options(cube_nbuffer_setting={-1: 2, "mlp": 4, "func_x": 1})  # labels mix with ints
    with pytest.raises(FeError, match="cannot mix"):
        pypto.set_pass_options(cube_nbuffer_setting={0: 2, "DEFAULT": 4})
    with pytest.raises(FeError, match="conflicts with function-granularity hashOrder"):
        pypto.set_semantic_label("func31_2")
    pypto.set_semantic_label("func_31")


def test_global_config_defaults_stay_through_reset():
    # The root conftest.py of hicann/pypto: pypto_impl.SetGlobalConfig({"pass.enable_slice": True})
    # outlives reset_options (python/tests/ut/interface/test_config_options.py test_pass_option).
    try:
        pypto_impl.SetGlobalConfig({"pass.enable_slice": True})
        pypto.reset_options()
        assert pypto.get_pass_options()["enable_slice"] is True
        pypto.set_pass_options(enable_slice=False)
        assert pypto.get_pass_options()["enable_slice"] is False
        pypto.reset_options()
        assert pypto.get_pass_options()["enable_slice"] is True
    finally:
        pypto_impl.SetGlobalConfig({"pass.enable_slice": False})
    with pytest.raises(pypto.DTypeError, match="pass.enable_slice"):
        pypto_impl.SetGlobalConfig({"pass.enable_slice": "yes"})


def test_global_config():
    # test_config_options.py (test_global_option); python/tests/ut/kirin/conftest.py sets one at
    # import for the whole session: reset_options keeps them, as PyPTO's root scope does
    from ptocpu.engine import config
    assert pypto.get_global_config("platform.enable_cost_model") is False
    assert pypto.get_global_config("codegen.parallel_compile") == 128
    try:
        pypto.set_global_config("codegen.parallel_compile", 4)
        pypto.set_global_config("simulation.any_new_key", [1])
        pypto.reset_options()
        assert pypto.get_global_config("codegen.parallel_compile") == 4
        assert pypto.get_global_config("simulation.any_new_key") == [1]
    finally:
        config.forget_global("codegen.parallel_compile")
        config.forget_global("simulation.any_new_key")
    with pytest.raises(FeError, match="global.nothing.here"):
        pypto.get_global_config("nothing.here")


def test_pass_configs():
    # test_pass_config.py (test_pass_config)
    key = pypto.PassConfigKey.KEY_DUMP_GRAPH
    assert pypto.get_pass_default_config(key, True) is False  # the default wins over the fallback
    pypto.set_pass_config("PVC2_OOO", "InferShape", key, True)
    assert pypto.get_pass_config("PVC2_OOO", "InferShape", key, False) is True
    assert pypto.get_pass_config("PVC2_OOO", "Other", key, True) is False
    assert pypto.get_pass_configs("PVC2_OOO", "InferShape").dumpGraph is True
    assert pypto.get_pass_configs("PVC2_OOO", "InferShape").dumpPassTimeCost is True
    with pytest.raises(AttributeError):
        pypto.get_pass_configs("PVC2_OOO", "InferShape").dumpGraph = False
    with pytest.raises(PassError, match="Expected boolean type, but received int"):
        pypto.get_pass_default_config(key, 0)
    with pytest.raises(PassError, match="PassConfigKey"):
        pypto.set_pass_default_config("dumpGraph", True)


# --- the other sections -----------------------------------------------------------------------

def test_sections_return_every_option():
    # test_config_options.py (test_host_option, test_reset_option, test_operation_option)
    pypto.set_host_options(compile_stage=pypto.CompStage.TILE_GRAPH, compile_timeout_stage=7)
    host = pypto.get_host_options()
    assert host == {"compile_stage": 2, "compile_monitor_enable": 1, "compile_timeout": 600,
                    "compile_timeout_stage": 7, "compile_monitor_print_interval": 60}
    assert set(pypto.get_codegen_options()) == {"support_dynamic_aligned", "soc_version", "enable_pmu_trace",
                                                "vf_options"}
    # PyPTO's keys only: ptocpu's own switch "eager" (docs/kernel_model.md#compiled-kernels) is not stored
    assert pypto.get_debug_options() == {"compile_debug_mode": 0, "runtime_debug_mode": 0, "dump_pass_graph": []}
    assert experimental.get_operation_options() == {"combine_axis": True}
    experimental.set_operation_options(combine_axis=False)
    assert experimental.get_operation_options() == {"combine_axis": False}
    pypto.set_print_options(edgeitems=1, precision=2, threshold=3, linewidth=4)
    assert pypto.get_print_options() == {"edgeitems": 1, "precision": 2, "threshold": 3, "linewidth": 4}
    pypto.reset_options()
    assert pypto.get_host_options()["compile_stage"] == pypto.CompStage.ALL_COMPLETE.value


def test_verify_options_through_set_options_turn_golden_checks_on(capsys):
    # python/tests/st/interface/test_verify_frontend_jit.py (verify options from any setter)
    @pypto.frontend.jit
    def copy(x: pypto.Tensor(), out: pypto.Tensor()):
        out[:] = x

    x = np.arange(4, dtype=np.float32)
    pypto.set_options(verify_options={"enable_pass_verify": True})
    pypto.set_verify_golden_data(goldens=[None, x])
    copy(x, np.zeros_like(x))
    assert "golden check: kernel" in capsys.readouterr().out


# --- scopes -----------------------------------------------------------------------------------

def test_options_blocks_and_decorators_are_scopes():
    # test_config_options.py (test_vf_options): a setting made inside `with pypto.options()`
    # holds there and ends with the block; so do the block's own options
    pypto.set_codegen_options(vf_options="-O1")
    with pypto.options("outer", codegen_options={"soc_version": "Ascend950"}, vec_tile_shapes=[4, 8]):
        assert pypto.get_codegen_options()["soc_version"] == "Ascend950"
        assert pypto.get_vec_tile_shapes() == [4, 8]
        pypto.set_codegen_options(vf_options="-O3")
        assert pypto.get_codegen_options()["vf_options"] == "-O3"
    assert pypto.get_codegen_options() == {"support_dynamic_aligned": False, "soc_version": "",
                                           "enable_pmu_trace": False, "vf_options": "-O1"}
    assert pypto.get_vec_tile_shapes() == []

    @pypto.options(host_options={"compile_timeout": 5})
    def timeout():
        return pypto.get_host_options()["compile_timeout"]

    assert timeout() == 5 and pypto.get_host_options()["compile_timeout"] == 600
    with pytest.raises(pypto.DTypeError):
        pypto.options(host_options={"compile_timeout": "5"})  # checked when made


def test_jit_kernel_options_are_the_kernels_scope():
    # python/tests/ut/interface/test_multi_jit_scope.py and test_config_scope.py: a kernel sees
    # the global options and its own; its own end with the call
    seen = []

    @pypto.frontend.jit(pass_options={"vec_nbuffer_setting": {-1: 8}}, debug_options={"compile_debug_mode": 1})
    def with_options(x: pypto.Tensor()):
        seen.append((pypto.get_pass_options()["vec_nbuffer_setting"], pypto.get_debug_options()["compile_debug_mode"],
                     pypto.get_codegen_options()["support_dynamic_aligned"]))

    @pypto.frontend.jit
    def without(x: pypto.Tensor()):
        seen.append((pypto.get_pass_options()["vec_nbuffer_setting"], pypto.get_debug_options()["compile_debug_mode"],
                     pypto.get_codegen_options()["support_dynamic_aligned"]))

    pypto.set_codegen_options(support_dynamic_aligned=True)
    with_options(np.zeros(2))
    without(np.zeros(2))
    assert seen == [({-1: 8}, 1, True), ({}, 0, True)]

    @pypto.frontend.jit(host_options={"compile_timeout": -1})
    def bad(x: pypto.Tensor()):
        pass

    with pytest.raises(pypto.ArgumentError, match="host.compile_timeout"):
        bad(np.zeros(2))


def test_a_loop_body_is_a_scope():
    # test_multi_jit_scope.py: tile shapes set in one pypto.loop body do not reach the next loop
    seen = []
    pypto.set_vec_tile_shapes(8, 8)
    for _ in pypto.loop(2):
        pypto.set_vec_tile_shapes(2, 2)
        pypto.set_pass_options(sg_set_tunevf_mode=1)
    for _ in pypto.loop(1):
        seen.append((pypto.get_vec_tile_shapes(), pypto.get_pass_options()["sg_set_tunevf_mode"]))
    assert seen == [([8, 8], 0)]


# --- enums, Element, platform, pypto_impl, error codes -------------------------------------------

def test_enums_print_and_count_as_pypto_enums():
    # python/tests/ut/interface/test_enum.py
    assert str(pypto.AtomicRMWMode.MIN) == "AtomicRMWMode.MIN" and int(pypto.AtomicRMWMode.MAX) == 1
    assert str(pypto.CastMode.CAST_ODD) == "CastMode.CAST_ODD" and pypto.PrecisionType.HIGH_PRECISION.value == 1
    assert str(pypto.RunMode.SIM) == "RunMode.SIM" and int(pypto.RunMode.NPU) == 0
    assert pypto.ROUND_DOWN is pypto.DequantScaleRoundingMode.ROUND_DOWN
    errors = pypto_impl.ExternalError
    assert errors.UNKNOWN is errors.COMMON_EXTERNAL_ERROR and int(errors.UNKNOWN) == 0xFFFF
    assert (int(errors.OUT_OF_RANGE), int(errors.BAD_FD), int(errors.DYNAMIC_SHAPE_COMPUTE_UNSUPPORTED)) == (8, 9, 10)


def test_error_codes_follow_the_external_error_categories():
    # python/tests/ut/interface/test_error.py: 0xF00000 | category of the exception class
    assert "ErrCode: F00008" in str(PyptoGeneralError(IndexError("x")))
    assert "ErrCode: F00002" in str(PyptoGeneralError(pypto.ArgumentError("x")))  # a ValueError
    assert "ErrCode: F0FFFF" in str(PyptoGeneralError(LookupError("x")))
    assert str(PyptoError(0xF00001, "ErrCode: F00005, kept")).count("ErrCode") == 1


def test_element():
    # python/tests/ut/interface/test_element.py; docs/zh/api/element/
    assert (pypto.element(pypto.DT_FP32, 3).dtype, pypto.element(pypto.DT_FP32, 3).value) == (pypto.DT_FP32, 3.0)
    assert isinstance(pypto.Element(pypto.DT_FP16, 1).value, float)
    assert pypto.Element(pypto.DT_INT32, -2.7).value == -2 and pypto.Element(pypto.DT_BOOL, 5).value == 1
    assert float(pypto.Element(pypto.DT_BF16, 0.5)) == 0.5 and int(pypto.Element("int8", 4)) == 4
    with pytest.raises(pypto.DTypeError) as caught:
        pypto.Element(pypto.DT_FP32, "1.0")
    assert isinstance(caught.value, FeError)
    with pytest.raises(pypto.ArgumentError):
        pypto.Element(pypto.DT_INT8, float("nan"))


def test_npuarch_is_the_platforms_architecture():
    # python/tests/st/test_npuarch.py, python/tests/ut/interface/test_fp4_packed_shape.py
    pypto.set_platform("atlas_a2")
    assert pypto.platform.npuarch == "DAV_2201"
    pypto.platform.npuarch = "DAV_3510"
    assert pypto.get_platform() == "ascend950"
    pypto.platform.npuarch = "DAV_2201"
    assert pypto.get_platform() == "atlas_a3"  # the first platform of that architecture
    pypto.set_platform("atlas_a2")
    pypto.platform.npuarch = "DAV_2201"
    assert pypto.get_platform() == "atlas_a2"  # already one: kept
    with pytest.raises(pypto.ArgumentError, match="DAV_9999"):
        pypto.platform.npuarch = "DAV_9999"
    with pypto.platform("ascend950"):
        assert pypto.platform.npuarch == "DAV_3510"


def test_pypto_impl_offers_what_the_harness_calls():
    # The root conftest.py's teardown calls pypto_impl.Reset() after each ut test.
    x = pypto.tensor([2], pypto.DT_FP32, "x")
    with pypto.function("F", x):
        pass
    pypto.set_pass_options(sg_set_tunevf_mode=1)
    pypto_impl.Reset()
    assert pypto.get_pass_options()["sg_set_tunevf_mode"] == 0
    with pytest.raises(RuntimeError, match="no pypto.function has been recorded"):
        pypto.runtime._device_run_once_data_from_host(pypto.from_torch(torch.zeros(2)))
    assert not hasattr(pypto_impl, "CopyToHost")
    with pytest.raises(pypto.UnsupportedError, match=r"^pypto\.pypto_impl\.RecordFunc is not offered by ptocpu"):
        pypto_impl.RecordFunc
