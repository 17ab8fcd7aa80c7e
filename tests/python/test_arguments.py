"""Tensor arguments that an op writes: read-only memory is refused, a copy never stands in for
the caller's memory, and conversion errors name the op and the parameter (docs/tensors.md, docs/errors.md)."""
import numpy as np
import pytest

import ptocpu
from ptocpu import frontend


def read_only(a):
    a.flags.writeable = False
    return a


def test_scatter_into_a_read_only_array_is_refused_and_writes_nothing():
    x = read_only(np.zeros((3, 5), np.float32))
    with pytest.raises(ptocpu.ArgumentError, match=r"scatter_: input .*read-only"):
        ptocpu.scatter_(x, 0, np.array([[1, 2]]), 2.0)
    assert not x.any()
    out = ptocpu.scatter(x, 0, np.array([[1, 2]]), 2.0)  # out of place reads it only
    assert out.numpy()[1, 0] == 2.0 and not x.any()


def test_read_only_tensors_refuse_assignment_and_assemble():
    x = read_only(np.arange(6, dtype=np.int32).reshape(2, 3))
    t = ptocpu.asarray(x)
    with pytest.raises(ptocpu.ArgumentError, match=r"Tensor assignment: .*read-only"):
        t[0, 0] = 7
    with pytest.raises(ptocpu.ArgumentError, match=r"assemble: out .*read-only"):
        ptocpu.assemble(np.ones((1, 3), np.int32), [0, 0], x)
    np.testing.assert_array_equal(x, np.arange(6).reshape(2, 3))
    assert not t.numpy().flags.writeable
    assert ptocpu.index_select(t, 0, [1]).numpy().tolist() == [[3, 4, 5]]  # reading is fine


def test_read_only_dlpack_capsules_stay_read_only():
    x = read_only(np.zeros(4, np.float32))
    t = ptocpu.from_dlpack(x)  # numpy 2 marks the capsule read-only
    with pytest.raises(ptocpu.ArgumentError, match="read-only"):
        t[0] = 1.0
    assert not x.any()


def test_in_place_targets_must_be_the_callers_memory():
    swapped = np.zeros((2, 3), dtype=">f4")  # byte-swapped: only a copy could be used
    with pytest.raises(ptocpu.ArgumentError, match=r"scatter_: input: .*copy"):
        ptocpu.scatter_(swapped, 1, np.array([[0]]), 1.0)
    assert not swapped.any()
    with pytest.raises(ptocpu.ArgumentError, match=r"scatter_: input: .*list"):
        ptocpu.scatter_([[0.0, 0.0]], 1, np.array([[0]]), 1.0)
    with pytest.raises(ptocpu.ArgumentError, match=r"assemble: out: .*copy"):
        ptocpu.assemble(np.ones((1, 3), np.float32), [0, 0], swapped)
    # Read-only uses take a copy of the same array without complaint.
    assert ptocpu.index_select(swapped, 1, [0]).numpy().dtype == np.float32


def test_jit_array_arguments_are_never_silent_copies():
    @frontend.jit
    def fill(out: ptocpu.Tensor()):
        out[:] = 1.0

    with pytest.raises(ptocpu.ArgumentError, match="copy"):
        fill(np.zeros(4, dtype=">f4"))
    out = np.zeros(4, np.float32)
    fill(out)
    assert (out == 1.0).all()


@pytest.mark.parametrize("call, needle", [
    (lambda: ptocpu.index_select("abc", 0, [0]), "index_select: input must be a tensor, got str 'abc'"),
    (lambda: ptocpu.index_select(np.zeros(3, np.float32), 0, None), "index_select: index must be a tensor, got NoneType"),
    (lambda: ptocpu.interleave(np.zeros((1, 2), np.float32), "x"), "interleave: other must be a tensor, got str"),
    (lambda: ptocpu.deinterleave(None), "deinterleave: input must be a tensor, got NoneType"),
    (lambda: ptocpu.strided_slice(b"ab", [0], [1], [1]), "strided_slice: x must be a tensor, got bytes"),
])
def test_non_tensor_arguments_name_the_op_and_parameter(call, needle):
    with pytest.raises(ptocpu.DTypeError) as e:
        call()
    assert str(e.value).startswith(needle)


def test_conversion_errors_are_led_by_the_op():
    with pytest.raises(ptocpu.DTypeError, match=r"^index_select: input: .*complex"):
        ptocpu.index_select(np.zeros(3, np.complex64), 0, [0])
