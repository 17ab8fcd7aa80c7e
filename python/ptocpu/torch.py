"""ptocpu's operators as torch operators: `import ptocpu.torch` registers torch.ops.ptocpu.*
(see docs/torch.md).

Each op is defined with torch.library.Library: a schema that says what it mutates, a CPU kernel
that hands the torch tensors to the core (which wraps their memory zero-copy) and takes the core's result back through
DLPack (zero-copy), and a fake kernel that asks the core for the output shape from
shapes and dtypes alone (`_core._<op>_shape`), so torch.compile traces the ops into its graph.
(torch.library.custom_op would do the same, but runs its autograd and aliasing wrappers on every
call: some 20 microseconds more per call than a Library kernel on the development machine.)

The fake shape follows the rules every platform shares; platform and tile rules are checked
when the op runs, so a compiled graph behaves like eager under whatever set_platform /
set_vec_tile_shapes is current. Arguments that break a rule of every platform make the fake
return an empty placeholder instead of raising: the compiled call then raises the core's error
when it runs (the kernel checks its arguments again), keeping its ptocpu class — torch.compile
would wrap an error raised while tracing in its own TorchRuntimeError.
"""
import torch

from . import _core

_lib = torch.library.Library("ptocpu", "DEF")

def _write_target(op: str, t: torch.Tensor, instead: str) -> torch.Tensor:
    """The input an in-place op writes: a tensor that requires grad is refused, as torch refuses
    in-place writes to it (these ops have no autograd formula)."""
    if t.requires_grad:
        raise _core.ArgumentError(f"{op}: input requires grad and cannot be written in place; "
                                  f"use {instead}")
    return t


def _torch_tensor(t) -> torch.Tensor:
    """A torch tensor over the core's result (zero-copy). torch.from_dlpack spends several
    microseconds in Python around the C import it ends in; call that import when torch has it."""
    return _from_capsule(t.__dlpack__()) if _from_capsule else torch.from_dlpack(t)


_from_capsule = getattr(torch._C, "_from_dlpack", None)


def _fake(like: torch.Tensor, shape_of, *args, outputs: int = 1):
    """New contiguous tensors of the shape the core plans (placeholders when it refuses the
    arguments: the kernel raises the error when the graph runs)."""
    try:
        shape = shape_of(*args)
    except _core.Error:
        shape = (0,)
    made = tuple(like.new_empty(shape) for _ in range(outputs))
    return made if outputs > 1 else made[0]


def _define(schema: str, fake):
    """ptocpu::<schema> with the decorated function as its CPU kernel and `fake` as its fake kernel."""
    name = schema.split("(")[0]

    def register(kernel):
        _lib.define(schema, tags=(torch.Tag.pt2_compliant_tag,))
        _lib.impl(name, kernel, "CPU")
        torch.library.register_fake(f"ptocpu::{name}", fake, lib=_lib)
        return kernel

    return register


# index_select (docs/ops/index_select.md)
@_define("index_select(Tensor input, int dim, Tensor index) -> Tensor",
         lambda input, dim, index: _fake(input, _core._index_select_shape, input, dim, index))
def _index_select(input, dim, index):
    return _torch_tensor(_core.index_select(input, dim, index))


# interleave / deinterleave (docs/ops/interleave.md, docs/ops/deinterleave.md): two outputs
@_define("interleave(Tensor input, Tensor other) -> (Tensor, Tensor)",
         lambda input, other: _fake(input, _core._interleave_shape, input, other, outputs=2))
def _interleave(input, other):
    out0, out1 = _core.interleave(input, other)
    return _torch_tensor(out0), _torch_tensor(out1)


@_define("deinterleave(Tensor input, Tensor? other=None) -> (Tensor, Tensor)",
         lambda input, other=None: _fake(input, _core._deinterleave_shape, input, other, outputs=2))
def _deinterleave(input, other=None):
    out0, out1 = _core.deinterleave(input, other)
    return _torch_tensor(out0), _torch_tensor(out1)


# scatter_ / scatter (docs/ops/scatter.md), overloads .src (a tensor) and .value (a scalar) as
# aten names them. scatter_ writes input in place and returns nothing (torch.compile
# functionalizes only mutating ops that return no alias); scatter returns a new tensor.
def _input_shaped_fake(input, *args, **kwargs):
    return input.new_empty(input.shape)  # contiguous, input's shape and dtype


def _in_place_fake(*args, **kwargs):
    return None


@_define("scatter_.src(Tensor(a!) input, int dim, Tensor index, Tensor src, *, str? reduce=None) -> ()",
         _in_place_fake)
def _scatter__src(input, dim, index, src, *, reduce=None):
    _core.scatter_(_write_target("scatter_", input, "scatter, or detach it"), dim, index, src, reduce=reduce)


@_define("scatter_.value(Tensor(a!) input, int dim, Tensor index, Scalar value, *, str? reduce=None) -> ()",
         _in_place_fake)
def _scatter__value(input, dim, index, value, *, reduce=None):
    _core.scatter_(_write_target("scatter_", input, "scatter, or detach it"), dim, index, value, reduce=reduce)


@_define("scatter.src(Tensor input, int dim, Tensor index, Tensor src, *, str? reduce=None) -> Tensor",
         _input_shaped_fake)
def _scatter_src(input, dim, index, src, *, reduce=None):
    return _torch_tensor(_core.scatter(input, dim, index, src, reduce=reduce))


@_define("scatter.value(Tensor input, int dim, Tensor index, Scalar value, *, str? reduce=None) -> Tensor",
         _input_shaped_fake)
def _scatter_value(input, dim, index, value, *, reduce=None):
    return _torch_tensor(_core.scatter(input, dim, index, value, reduce=reduce))


# strided_slice (docs/ops/strided_slice.md): a new contiguous tensor. strided_slice_view is not
# registered: a torch operator may not return a view of its input (torch's slicing gives views).
def _strided_slice_fake(x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, shrink_axis_mask=0,
                        new_axis_mask=0):
    return _fake(x, _core._strided_slice_shape, x, begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                 shrink_axis_mask, new_axis_mask)


@_define("strided_slice(Tensor x, int[] begin, int[] end, int[] strides, int begin_mask=0, int end_mask=0, "
         "int ellipsis_mask=0, int shrink_axis_mask=0, int new_axis_mask=0) -> Tensor", _strided_slice_fake)
def _strided_slice(x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, shrink_axis_mask=0,
                   new_axis_mask=0):
    return _torch_tensor(_core.strided_slice(x, begin, end, strides, begin_mask, end_mask,
                                             ellipsis_mask, shrink_axis_mask, new_axis_mask))


# gather (docs/ops/gather.md): index's shape.
@_define("gather(Tensor input, int dim, Tensor index) -> Tensor",
         lambda input, dim, index: _fake(input, _core._gather_shape, input, dim, index))
def _gather(input, dim, index):
    return _torch_tensor(_core.gather(input, dim, index))


# scatter_update (docs/ops/scatter_update.md): writes input in place and returns nothing, as scatter_.
@_define("scatter_update(Tensor(a!) input, int dim, Tensor index, Tensor src) -> ()", _in_place_fake)
def _scatter_update(input, dim, index, src):
    _core.scatter_update(_write_target("scatter_update", input, "a detached tensor"), dim, index, src)


# index_add_ / index_add (docs/ops/index_add.md): index_add_ writes input in place and returns
# nothing; index_add returns a new tensor of input's shape.
@_define("index_add_(Tensor(a!) input, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> ()",
         _in_place_fake)
def _index_add_(input, dim, index, source, *, alpha=1):
    _core.index_add_(_write_target("index_add_", input, "index_add, or detach it"), dim, index, source, alpha=alpha)


@_define("index_add(Tensor input, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
         _input_shaped_fake)
def _index_add(input, dim, index, source, *, alpha=1):
    return _torch_tensor(_core.index_add(input, dim, index, source, alpha=alpha))


# gathermask (docs/ops/gathermask.md): the lanes of the last axis pattern_mode picks.
@_define("gathermask(Tensor x, int pattern_mode) -> Tensor",
         lambda x, pattern_mode: _fake(x, _core._gathermask_shape, x, pattern_mode))
def _gathermask(x, pattern_mode):
    return _torch_tensor(_core.gathermask(x, pattern_mode))
