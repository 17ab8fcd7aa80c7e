"""Where Python meets the core: read-only memory through every export, numpy's copy protocol,
thread limits, torch tensors that require grad, complex scalars, strict dtype arguments,
validated DLPack imports, and a clean exit while daemon threads are inside ops (docs/tensors.md,
docs/errors.md)."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import ptocpu


def read_only_tensor():
    """A tensor over an immutable bytes object (numpy marks the array read-only)."""
    data = bytes(16)
    return ptocpu.asarray(np.frombuffer(data, np.float32)), data


def run_python(code: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env=env)


# ----------------------------------------------------------------- read-only memory stays read-only
def capsule_flags(capsule) -> int:
    """The flags field of a DLManagedTensorVersioned capsule (version, manager_ctx, deleter, flags)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    address = get(capsule, b"dltensor_versioned")
    return ctypes.c_uint64.from_address(address + 8 + 8 + 8).value


def test_versioned_capsule_of_a_read_only_tensor_is_flagged_read_only():
    t, _ = read_only_tensor()
    assert capsule_flags(t.__dlpack__(max_version=(1, 0))) & 1
    writable = ptocpu.tensor([4], ptocpu.DT_FP32)
    assert capsule_flags(writable.__dlpack__(max_version=(1, 0))) & 1 == 0


def test_numpy_from_dlpack_of_a_read_only_tensor_is_read_only():
    t, data = read_only_tensor()
    a = np.from_dlpack(t)
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a[0] = 99
    assert data == bytes(16)


def test_torch_from_dlpack_cannot_write_read_only_memory():
    """torch ignores DLPack's read-only flag, so a read-only tensor is exported as a copy."""
    t, data = read_only_tensor()
    alias = torch.from_dlpack(t)
    alias[0] = 99
    assert data == bytes(16) and t.numpy()[0] == 0
    frozen = np.zeros(4, np.float32)
    frozen.flags.writeable = False
    torch.from_dlpack(ptocpu.asarray(frozen))[1] = 5
    assert not frozen.any()


def test_legacy_dlpack_refuses_a_read_only_tensor():
    t, _ = read_only_tensor()
    with pytest.raises(ptocpu.ArgumentError, match=r"Tensor.__dlpack__: .*read-only.*legacy"):
        t.__dlpack__()
    with pytest.raises(ptocpu.ArgumentError, match=r"Tensor.__dlpack__: .*read-only.*copy"):
        t.__dlpack__(max_version=(1, 0), copy=False)
    copy = torch.utils.dlpack.from_dlpack(t.__dlpack__(copy=True))  # an explicit copy may leave
    copy[0] = 1
    assert t.numpy()[0] == 0


def test_numpy_views_of_read_only_tensors_are_read_only():
    t, _ = read_only_tensor()
    assert not t.numpy().flags.writeable and not np.asarray(t).flags.writeable


def test_writable_tensors_are_still_exported_zero_copy():
    t = ptocpu.tensor([4], ptocpu.DT_FP32)
    np.from_dlpack(t)[0] = 3
    torch.from_dlpack(t)[1] = 4
    assert t.numpy().tolist() == [3, 4, 0, 0]


# ------------------------------------------------------------------------ numpy's copy protocol
def test_np_array_and_np_copy_copy():
    t = ptocpu.asarray(np.arange(4, dtype=np.float32))
    for a in (np.array(t, copy=True), np.copy(t), np.array(t)):
        assert not np.shares_memory(a, t.numpy())
        a[0] = 7
    assert t.numpy()[0] == 0


def test_np_asarray_and_copy_false_share_memory():
    t = ptocpu.asarray(np.arange(4, dtype=np.float32))
    for a in (np.asarray(t), np.array(t, copy=False), np.asarray(t, dtype=np.float32)):
        assert np.shares_memory(a, t.numpy())


def test_copy_false_where_a_copy_is_needed_is_a_value_error():
    t = ptocpu.asarray(np.arange(4, dtype=np.float32))
    with pytest.raises(ptocpu.ArgumentError, match=r"Tensor.__array__: .*needs a copy"):
        np.array(t, dtype=np.float64, copy=False)
    with pytest.raises(ValueError):  # numpy's protocol: ArgumentError is a ValueError
        np.asarray(t, dtype=np.int32, copy=False)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


# ---------------------------------------------------------------------------------- threads
@pytest.mark.parametrize("n", [1025, 2 ** 31 - 1, 2 ** 40])
def test_set_num_threads_above_1024_is_refused(n):
    with pytest.raises(ptocpu.ArgumentError, match=r"set_num_threads: num_threads must be in \[1, 1024\]"):
        ptocpu.set_num_threads(n)


def test_1024_threads_run_scatter():
    """The upper limit itself: scratch sized by the thread count fits, results are right."""
    result = run_python("""
        import numpy as np, ptocpu
        ptocpu.set_num_threads(1024)
        x = np.zeros((64, 64), np.float32)
        index = np.random.default_rng(0).integers(0, 64, (64, 64))
        ptocpu.scatter_(x, 0, index, 1.0, reduce="add")
        expect = np.zeros((64, 64), np.float32)
        np.add.at(expect, (index, np.arange(64)[None, :].repeat(64, 0)), 1.0)
        assert (x == expect).all()
        print(ptocpu.get_num_threads())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1024"


def without_alternate_signal_stacks() -> dict:
    """This environment, with AddressSanitizer (preloaded in the sanitizer run, tests/run_all.sh) told not
    to map an alternate signal stack for each new thread: under an address-space cap that mapping fails
    before pthread_create can, and ASan aborts the process. Without ASan the option is unused."""
    asan = os.environ.get("ASAN_OPTIONS", "")
    return dict(os.environ, ASAN_OPTIONS=f"{asan}:use_sigaltstack=0" if asan else "use_sigaltstack=0")


def test_threads_that_cannot_start_are_not_an_error():
    """Under an address-space cap most of the 1023 pool threads an astype of 1024 chunks asks
    for cannot get a stack: the calling thread runs their chunks, and the result is right."""
    result = run_python("""
        import resource, numpy as np, ptocpu
        x = np.random.default_rng(1).standard_normal(4096 * 1024).astype(np.float32)
        t = ptocpu.asarray(x)
        ptocpu.set_num_threads(1024)
        used = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + (256 << 20), resource.RLIM_INFINITY))
        out = t.astype(ptocpu.DT_FP64)
        threads = int([l for l in open("/proc/self/status") if l.startswith("Threads:")][0].split()[1])
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        assert (out.numpy() == x.astype(np.float64)).all()
        assert threads < 1000, threads  # the cap did stop threads from starting
    """, env=without_alternate_signal_stacks())
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("value, expected", [("1024", 1024), ("1025", None), ("-1", None)])
def test_PTOCPU_NUM_THREADS_limits(value, expected):
    env = dict(os.environ, PTOCPU_NUM_THREADS=value)
    result = run_python("import ptocpu; print(ptocpu.get_num_threads())", env=env)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == (expected or len(os.sched_getaffinity(0)))


# ---------------------------------------------------------- torch tensors that require grad
def test_requires_grad_tensors_are_read_like_any_input():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).requires_grad_()
    idx = torch.tensor([2, 0])
    np.testing.assert_array_equal(ptocpu.index_select(x, 0, idx).numpy(), torch.index_select(x, 0, idx).detach().numpy())
    np.testing.assert_array_equal(ptocpu.strided_slice(x, [0, 1], [3, 4], [2, 2]).numpy(), x.detach()[0:3:2, 1:4:2].numpy())
    out = ptocpu.scatter(x, 0, [[1, 2]], 5.0)
    expect = x.detach().clone()
    expect[1, 0] = expect[2, 1] = 5.0  # index [[1, 2]] on dim 0: (1, 0) and (2, 1)
    np.testing.assert_array_equal(out.numpy(), expect.numpy())
    imported = ptocpu.asarray(x)
    assert not imported.numpy().flags.writeable  # a write would bypass autograd


def test_requires_grad_tensors_as_write_targets_are_argument_errors():
    x = torch.zeros(3, 4, requires_grad=True)
    with pytest.raises(ptocpu.ArgumentError, match=r"scatter_: input: .*requires grad"):
        ptocpu.scatter_(x, 0, [[1]], 5.0)
    with pytest.raises(ptocpu.ArgumentError, match=r"assemble: out: .*requires grad"):
        ptocpu.assemble(np.ones((1, 4), np.float32), [0, 0], x)
    with pytest.raises(ptocpu.ArgumentError):
        ptocpu.asarray(x)[0, 0] = 1.0
    assert not x.detach().any()


# ------------------------------------------------------------------------------ complex scalars
@pytest.mark.parametrize("value", [np.complex128(3 + 4j), np.complex64(3), 3 + 4j, complex(2, 0)])
def test_complex_scalars_are_dtype_errors(value):
    """No ptocpu dtype is complex: a complex value where a real scalar is needed is a dtype that
    is not allowed (DTypeError), however small its imaginary part; nothing is written."""
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(ptocpu.DTypeError, match=r"^scatter_: src: .*complex"):
        ptocpu.scatter_(x, 0, [[1]], value)
    with pytest.raises(ptocpu.DTypeError, match=r"^scatter: src: .*complex"):
        ptocpu.scatter(x, 0, [[1]], value)
    t = ptocpu.asarray(x)
    with pytest.raises(ptocpu.DTypeError, match=r"^setitem: value: .*complex"):
        t[...] = value
    assert not x.any()


def test_numpy_strings_are_not_scalars():
    x = np.zeros((2, 2), np.float32)
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.scatter_(x, 0, [[1]], np.str_("1.5"))
    assert not x.any()


def test_real_numpy_scalars_still_work():
    import ml_dtypes
    x = np.zeros(3, np.float32)
    for value in (np.float16(1.5), np.float64(2.5), ml_dtypes.bfloat16(3.5), np.int8(4), np.bool_(True)):
        ptocpu.scatter_(x, 0, [1], value)
        assert x[1] == np.float32(value)


# ------------------------------------------------------------------------------- dtype arguments
@pytest.mark.parametrize("bad", [7, 0, True, False, np.int64(3), np.float32(1.0), 2.5, np.bool_(True)])
def test_numbers_are_not_dtypes(bad):
    with pytest.raises(ptocpu.DTypeError, match="not a dtype"):
        ptocpu.tensor([2], bad)
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.tensor([2], ptocpu.DT_FP32).astype(bad)
    with pytest.raises(ptocpu.DTypeError):
        ptocpu.itemsize(bad)


@pytest.mark.parametrize("good, expected", [
    (ptocpu.DT_UINT64, ptocpu.DT_UINT64), (ptocpu.DType.DT_INT16, ptocpu.DT_INT16), (np.float32, ptocpu.DT_FP32),
    (np.dtype("int8"), ptocpu.DT_INT8), (torch.bfloat16, ptocpu.DT_BF16), ("float16", ptocpu.DT_FP16),
    ("DT_FP8E4M3", ptocpu.DT_FP8E4M3),
])
def test_dtype_spellings(good, expected):
    assert ptocpu.tensor([2], good).dtype == expected


# --------------------------------------------------------------------------------- foreign errors
@pytest.mark.parametrize("call, error", [
    # (shape=None is upstream PyPTO's annotation placeholder, not an error; None inside a shape is)
    (lambda: ptocpu.tensor([2, None], ptocpu.DT_FP32), ptocpu.DTypeError),
    (lambda: ptocpu.Tensor([2, None], ptocpu.DT_FP32), ptocpu.DTypeError),
    (lambda: ptocpu.from_dlpack(None), ptocpu.DTypeError),
    (lambda: ptocpu.strided_slice(None, [0], [1], [1]), ptocpu.DTypeError),
    (lambda: ptocpu.strided_slice(np.zeros(3), None, [1], [1]), ptocpu.DTypeError),
    (lambda: ptocpu.strided_slice(np.zeros(3), [0], [1], [1], None), ptocpu.DTypeError),
    (lambda: ptocpu.strided_slice_view(np.zeros(3), [0], [1], [1], 0, None), ptocpu.DTypeError),
    (lambda: ptocpu.view(None, [1], [0]), ptocpu.DTypeError),
    (lambda: ptocpu.view(np.zeros(3), None, [0]), ptocpu.ArgumentError),  # None: shape not given
    (lambda: ptocpu.set_platform(None), ptocpu.DTypeError),
    (lambda: ptocpu.set_platform(3), ptocpu.DTypeError),
    (lambda: ptocpu.set_num_threads(None), ptocpu.DTypeError),
    (lambda: ptocpu.tensor([4], ptocpu.DT_FP32)[::0], ptocpu.ArgumentError),
    (lambda: ptocpu.tensor([4], ptocpu.DT_FP32)["a":], ptocpu.DTypeError),
    (lambda: ptocpu.asarray([[1, 2], [3]]), ptocpu.ArgumentError),
    (lambda: ptocpu.tensor([4], ptocpu.DT_FP32).__dlpack__(max_version=("a", 0)), ptocpu.DTypeError),
    (lambda: ptocpu.tensor([4], ptocpu.DT_FP32).__dlpack__(max_version=1), ptocpu.DTypeError),
    (lambda: ptocpu.tensor([4], ptocpu.DT_FP32).__dlpack__(copy="yes"), ptocpu.DTypeError),
    (lambda: ptocpu.tensor([4], ptocpu.DT_FP32).__dlpack__(dl_device=(2, 0)), ptocpu.ArgumentError),
    (lambda: ptocpu.tensor([4], ptocpu.DT_FP32).__dlpack__(dl_device="cpu"), ptocpu.DTypeError),
])
def test_bad_arguments_raise_ptocpu_errors(call, error):
    with pytest.raises(error):
        call()


def test_cpu_dl_device_is_accepted():
    t = ptocpu.tensor([4], ptocpu.DT_FP32)
    assert torch.utils.dlpack.from_dlpack(t.__dlpack__(dl_device=(1, 0))).shape == (4,)


@pytest.mark.parametrize("dim", [2 ** 63, -2 ** 63 - 1, 2 ** 100])
def test_dims_beyond_int64_are_out_of_range(dim):
    x = np.zeros((2, 3), np.float32)
    for call in (lambda: ptocpu.index_select(x, dim, [0]), lambda: ptocpu.scatter(x, dim, [[0]], 1.0),
                 lambda: ptocpu.scatter_(x, dim, [[0]], 1.0)):
        with pytest.raises(ptocpu.IndexOutOfRange, match="dim"):
            call()


def test_huge_empty_shapes_have_a_summary_repr_and_a_clear_numpy_error():
    t = ptocpu.tensor([0, 2 ** 62], ptocpu.DT_FP32)
    assert repr(t) == f"Tensor([], shape=[0, {2 ** 62}], dtype=DT_FP32)"
    with pytest.raises(ptocpu.ArgumentError, match=r"Tensor.numpy: shape .* too large"):
        t.numpy()
    assert repr(ptocpu.tensor([0, 3], ptocpu.DT_FP32)).startswith("Tensor([]")


# ---------------------------------------------------------------------- DLPack import validation
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


class HandMadeProducer:
    """An object whose __dlpack__ returns a capsule built here field by field (no deleter)."""

    def __init__(self, data: np.ndarray, *, shape=None, major=1, null_data=False, ndim=None, name=b"dltensor_versioned"):
        self.data = data
        self.shape = (ctypes.c_int64 * max(data.ndim, 1))(*(shape or data.shape))
        self.managed = DLManagedTensorVersioned(major=major, minor=0)
        dl = self.managed.dl_tensor
        dl.data = None if null_data else data.ctypes.data
        dl.device = DLDevice(1, 0)
        dl.ndim = data.ndim if ndim is None else ndim
        dl.dtype = DLDataType(2, 32, 1)  # float32
        dl.shape = ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64))
        self.name = name

    def __dlpack__(self, **kwargs):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), self.name, None)

    def __dlpack_device__(self):
        return (1, 0)


def test_a_hand_made_capsule_imports():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    producer = HandMadeProducer(data)
    np.testing.assert_array_equal(ptocpu.from_dlpack(producer).numpy(), data)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(major=2), "version 2"),
    (dict(major=0), "version 0"),
    (dict(shape=(2, -3)), "negative"),
    (dict(null_data=True), "null data pointer"),
    (dict(ndim=-1), "ndim -1"),
    (dict(shape=(2 ** 62, 2 ** 62)), "int64"),
    (dict(name=b"not_dlpack"), "not a DLPack capsule"),
])
def test_malformed_capsules_are_refused(kwargs, needle):
    producer = HandMadeProducer(np.zeros((2, 3), np.float32), **kwargs)
    with pytest.raises(ptocpu.ArgumentError, match=needle):
        ptocpu.from_dlpack(producer)


def test_a_null_pointer_is_fine_for_an_empty_tensor():
    producer = HandMadeProducer(np.zeros((2, 0), np.float32), null_data=True)
    assert ptocpu.from_dlpack(producer).shape == (2, 0)


def test_producer_refusals_are_ptocpu_errors():
    class Refuses:
        def __dlpack__(self, **kwargs):
            raise BufferError("no export today")

    class NotACapsule:
        def __dlpack__(self, **kwargs):
            return 42

    with pytest.raises(ptocpu.ArgumentError, match="from_dlpack: .*BufferError: no export today"):
        ptocpu.from_dlpack(Refuses())
    with pytest.raises(ptocpu.ArgumentError, match="not a DLPack capsule"):
        ptocpu.from_dlpack(NotACapsule())


# ------------------------------------------------------------------------------------ clean exit
def test_exit_while_daemon_threads_are_inside_ops_is_clean():
    """Daemon threads loop over ops that release the GIL while the main thread exits: no abort
    ("terminate called without an active exception"), nothing on stderr."""
    code = """
        import threading, time, numpy as np, ptocpu
        rng = np.random.default_rng(0)
        x = ptocpu.asarray(rng.integers(0, 255, (1024, 2048), dtype=np.uint8))
        idx = ptocpu.asarray(np.arange(2047, -1, -1))
        f = ptocpu.asarray(rng.standard_normal((512, 1024)).astype(np.float32))
        rows = ptocpu.asarray(rng.integers(0, 512, (512, 1024)))
        ops = [lambda: ptocpu.index_select(x, 1, idx),
               lambda: ptocpu.scatter_(ptocpu.tensor([512, 1024], ptocpu.DT_FP32), 0, rows, f, reduce="add"),
               lambda: ptocpu.interleave(f, f), lambda: ptocpu.deinterleave(f),
               lambda: ptocpu.strided_slice(x, [0, 0], [1024, 2048], [1, 3]),
               lambda: x[:, ::2].contiguous(), lambda: f.astype("bf16")]
        def loop(op):
            while True:
                op()
        for op in ops:
            threading.Thread(target=loop, args=(op,), daemon=True).start()
        time.sleep(0.3)
    """
    for _ in range(3):
        result = run_python(code)
        assert result.returncode == 0, result.stderr
        assert result.stderr == ""
