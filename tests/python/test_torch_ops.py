"""torch.ops.ptocpu.* (docs/torch.md): values against torch / numpy references, torch.library.opcheck
over a sample set, torch.compile(fullgraph=True) against eager bit for bit, platform and tile
settings around compiled calls, and ptocpu's error classes through torch."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import ptocpu
import ptocpu.torch  # noqa: F401  (registers torch.ops.ptocpu)

P = torch.ops.ptocpu
GEN = torch.Generator().manual_seed(15)


def data(shape, dtype):
    """Small integer values (exact in every dtype, so sums and products are order-independent)."""
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=GEN).bool()
    low = 0 if dtype in (torch.uint8, torch.uint16) else -4
    return torch.randint(low, 5, shape, generator=GEN).to(dtype)


def index(shape, bound, dtype=torch.int64):
    return torch.randint(0, bound, shape, generator=GEN, dtype=dtype)


def distinct_index(shape, dim, bound):
    """Index values distinct along dim (no duplicate targets for reduce None)."""
    keys = torch.rand(*shape[:dim], bound, *shape[dim + 1:], generator=GEN)
    return keys.argsort(dim).narrow(dim, 0, shape[dim])


def bits(t):
    return t.contiguous().view(torch.uint8)


# References: torch / numpy ops, not ptocpu.
def ref_index_select(x, dim, idx):
    dim %= x.ndim
    flat = torch.index_select(x, dim, idx.reshape(-1))
    return (flat.reshape(x.shape[:dim] + idx.shape + x.shape[dim + 1:]),)


def ref_interleave(a, b):
    n = a.shape[-1]
    s = torch.stack([a, b], -1).reshape(*a.shape[:-1], 2 * n)
    return s[..., :n], s[..., n:]


def ref_deinterleave(a, b=None):
    c = a if b is None else torch.cat([a, b], -1)
    return c[..., 0::2], c[..., 1::2]


def ref_scatter(x, dim, idx, src, *, reduce=None):
    if not isinstance(src, torch.Tensor):
        src = torch.full(idx.shape, src, dtype=x.dtype)
    src = src[tuple(slice(0, n) for n in idx.shape)]
    if reduce is None:
        return (torch.scatter(x, dim, idx, src),)
    return (torch.scatter_reduce(x, dim, idx, src, {"add": "sum", "multiply": "prod"}[reduce]),)


def ref_strided_slice(key):
    def ref(x, *args, **kwargs):
        return (torch.from_numpy(np.ascontiguousarray(x.view(torch.int8 if x.itemsize == 1 else torch.int16
                                                             if x.itemsize == 2 else torch.int32).numpy()[key]))
                .view(x.dtype),)
    return ref


def ref_gather(x, dim, idx):
    return (torch.gather(x, dim, idx.long()),)


def ref_index_add(x, dim, idx, source, *, alpha=1):
    return (torch.index_add(x, dim, idx, source, alpha=alpha),)


def ref_gathermask(x, mode):
    first, step = (mode - 1, 2) if mode <= 2 else (mode - 3, 4) if mode <= 6 else (0, 1)
    return (x[..., first::step].contiguous(),)


def ref_scatter_update(cache, dim, idx, src):
    """index_copy_ of the rows the non-negative slots name (slots distinct), on a copy."""
    out = cache.clone()
    rows = out.view(-1, *cache.shape[2:]) if cache.ndim == 4 else out
    b, s = idx.shape
    src_rows = src[:b, :s].reshape(b * s, *src.shape[2:]) if cache.ndim == 4 else src[:b * s]
    slots = idx.reshape(-1).long()
    rows.index_copy_(0, slots[slots >= 0], src_rows[slots >= 0])
    return out


def distinct_slots(b, s, bound, skipped=0):
    """[b, s] distinct slots below bound, the last `skipped` of them -1."""
    slots = torch.randperm(bound, generator=GEN)[:b * s]
    slots[b * s - skipped:] = -1
    return slots.reshape(b, s)


x346 = data((3, 4, 6), torch.bfloat16)
# (op overload, args, kwargs, reference); every sample is valid.
SAMPLES = [
    (P.index_select.default, (data((5, 7), torch.float32), 0, index((3,), 5)), {}, ref_index_select),
    (P.index_select.default, (x346, 1, index((2, 2), 4, torch.int32)), {}, ref_index_select),
    (P.index_select.default, (data((4, 1, 3), torch.int8), -1, index((2, 1, 3), 3)), {}, ref_index_select),
    (P.index_select.default, (data((6,), torch.bool), 0, index((4,), 6)), {}, ref_index_select),
    (P.index_select.default, (data((7, 5), torch.float16).t(), 1, index((3,), 7)), {}, ref_index_select),
    (P.index_select.default, (data((4, 0), torch.float32), 1, index((2,), 1)[:0]), {}, ref_index_select),
    (P.interleave.default, (data((2, 8), torch.float32), data((2, 8), torch.float32)), {}, ref_interleave),
    (P.interleave.default, (x346, data((3, 4, 6), torch.bfloat16)), {}, ref_interleave),
    (P.interleave.default, (data((6,), torch.int16), data((6,), torch.int16)), {}, ref_interleave),
    (P.deinterleave.default, (x346,), {}, ref_deinterleave),
    (P.deinterleave.default, (data((2, 4), torch.float16), data((2, 4), torch.float16)), {}, ref_deinterleave),
    (P.deinterleave.default, (data((2, 2, 8), torch.int32)[:, :, :6],), {}, ref_deinterleave),
    (P.deinterleave.default, (data((3, 8), torch.uint16),), {}, ref_deinterleave),
    (P.scatter.src, (data((3, 5), torch.float32), 0, distinct_index((2, 4), 0, 3), data((2, 5), torch.float32)),
     {}, ref_scatter),
    (P.scatter.src, (x346, 2, index((3, 4, 5), 6), data((3, 4, 5), torch.bfloat16)), {"reduce": "add"}, ref_scatter),
    (P.scatter.src, (data((4, 3), torch.int32), 1, index((4, 2), 3), data((4, 2), torch.int32)),
     {"reduce": "multiply"}, ref_scatter),
    (P.scatter.value, (data((4, 3), torch.int8), 0, index((3, 3), 4), 3), {"reduce": "multiply"}, ref_scatter),
    (P.scatter.value, (data((5,), torch.bool), 0, index((3,), 5), True), {}, ref_scatter),
    (P.scatter.value, (data((2, 6), torch.float16), 1, index((2, 4), 6), 2.5), {}, ref_scatter),
    (P.strided_slice.default, (x346, [0, 1], [3, -1], [2, 1]), {}, ref_strided_slice(np.s_[0:3:2, 1:-1])),
    (P.strided_slice.default, (data((5, 6), torch.float32), [2, 1], [0, 4], [1, 2]),
     {"begin_mask": 2, "shrink_axis_mask": 1}, ref_strided_slice(np.s_[2, :4:2])),
    (P.strided_slice.default, (data((3, 4, 6), torch.int8), [0, 0, 5], [0, 0, 0], [1, 1, -2]),
     {"new_axis_mask": 1, "ellipsis_mask": 2, "end_mask": 4}, ref_strided_slice(np.s_[None, ..., 5::-2])),
    (P.strided_slice.default, (data((4, 4), torch.float16), [3], [1], [1]), {}, ref_strided_slice(np.s_[3:1])),
    (P.gather.default, (data((3, 5), torch.float32), 1, index((3, 4), 5)), {}, ref_gather),
    (P.gather.default, (x346, 0, index((2, 4, 5), 3, torch.int32)), {}, ref_gather),
    (P.gather.default, (data((6, 4), torch.int8).t(), -1, index((2, 9), 6)), {}, ref_gather),
    (P.index_add.default, (data((5, 3), torch.float32), 0, index((7,), 5), data((7, 3), torch.float32)), {},
     ref_index_add),
    (P.index_add.default, (data((2, 6, 3), torch.int32), 1, index((4,), 6, torch.int32), data((2, 4, 3), torch.int32)),
     {"alpha": 3}, ref_index_add),
    (P.index_add.default, (data((4, 6), torch.float32), -1, index((3,), 6), data((4, 3), torch.float32)),
     {"alpha": 1}, ref_index_add),
    (P.gathermask.default, (data((3, 8), torch.float32), 1), {}, ref_gathermask),
    (P.gathermask.default, (x346, 2), {}, ref_gathermask),
    (P.gathermask.default, (data((2, 2, 8), torch.int16), 5), {}, ref_gathermask),
    (P.gathermask.default, (data((4, 16), torch.float16)[:, 4:12], 6), {}, ref_gathermask),
    (P.gathermask.default, (data((5,), torch.int8), 7), {}, ref_gathermask),
]
IN_PLACE = {P.scatter.src: P.scatter_.src, P.scatter.value: P.scatter_.value, P.index_add.default: P.index_add_.default}


def sample_id(sample):
    op, args, kwargs, _ = sample
    return f"{op._schema.name.split('::')[1]}.{op._overloadname}-{args[0].dtype}-{list(args[0].shape)}"


@pytest.mark.parametrize("sample", SAMPLES, ids=sample_id)
def test_values_match_references(sample):
    op, args, kwargs, ref = sample
    got = op(*args, **kwargs)
    got = got if isinstance(got, tuple) else (got,)
    for g, want in zip(got, ref(*args, **kwargs), strict=True):
        assert g.dtype == want.dtype and g.shape == want.shape
        assert torch.equal(bits(g), bits(want))


@pytest.mark.parametrize("sample", SAMPLES, ids=sample_id)
def test_opcheck(sample):
    op, args, kwargs, _ = sample
    torch.library.opcheck(op, args, kwargs)
    if op in IN_PLACE:
        torch.library.opcheck(IN_PLACE[op], (args[0].clone(),) + args[1:], kwargs)


@pytest.mark.parametrize("sample", [s for s in SAMPLES if s[0] in IN_PLACE], ids=sample_id)
def test_in_place_writes_the_callers_memory(sample):
    op, args, kwargs, ref = sample
    x = args[0]
    base = data((*x.shape[:-1], 2 * x.shape[-1]), x.dtype)
    target = base[..., 0::2]  # a strided view of base: the writes must reach base, zero-copy
    target.copy_(x)
    others = base[..., 1::2].clone()
    assert IN_PLACE[op](target, *args[1:], **kwargs) is None
    assert torch.equal(bits(base[..., 0::2]), bits(ref(*args, **kwargs)[0]))
    assert torch.equal(bits(base[..., 1::2]), bits(others))


# scatter_update (in place, no functional form): (cache, dim, index, src).
SCATTER_UPDATE_SAMPLES = [
    (data((9, 5), torch.float32), -2, distinct_slots(2, 3, 9), data((6, 5), torch.float32)),
    (data((8, 4), torch.bfloat16), -2, distinct_slots(3, 2, 8, skipped=2).int(), data((7, 4), torch.bfloat16)),
    (data((3, 4, 2, 3), torch.float16), -2, distinct_slots(2, 3, 12, skipped=1), data((2, 4, 2, 3), torch.float16)),
    (data((4, 2, 1, 6), torch.int8), -2, distinct_slots(1, 5, 8).to(torch.int16), data((1, 5, 1, 6), torch.int8)),
]


def update_id(sample):
    return f"{sample[0].dtype}-{list(sample[0].shape)}"


@pytest.mark.parametrize("sample", SCATTER_UPDATE_SAMPLES, ids=update_id)
def test_scatter_update_matches_index_copy(sample):
    cache, dim, idx, src = sample
    want = ref_scatter_update(*sample)
    base = data((*cache.shape[:-1], 2 * cache.shape[-1]), cache.dtype)
    target = base[..., 1::2]  # a strided view of base: the writes must reach base, zero-copy
    target.copy_(cache)
    others = base[..., 0::2].clone()
    assert P.scatter_update(target, dim, idx, src) is None
    assert torch.equal(bits(base[..., 1::2]), bits(want))
    assert torch.equal(bits(base[..., 0::2]), bits(others))
    torch.library.opcheck(P.scatter_update.default, (cache.clone(), dim, idx, src))


def test_fp8_eager_and_compiled():
    # opcheck cannot take fp8 (torch has no fp8 arithmetic for its own checks); the values can.
    x, i = data((4, 6), torch.float8_e4m3fn), torch.tensor([5, 0, 5])
    want = x.view(torch.uint8)[:, i]
    compiled = torch.compile(lambda x, i: P.index_select(x, 1, i), fullgraph=True, backend="aot_eager")
    for got in (P.index_select(x, 1, i), compiled(x, i)):
        assert got.dtype == torch.float8_e4m3fn and torch.equal(got.view(torch.uint8), want)


def test_schemas_say_what_is_mutated():
    for overload in (P.scatter_.src, P.scatter_.value, P.scatter_update.default, P.index_add_.default):
        mutated = [a.name for a in overload._schema.arguments if a.alias_info and a.alias_info.is_write]
        assert mutated == ["input"] and not overload._schema.returns
    for packet in (P.index_select, P.interleave, P.deinterleave, P.scatter, P.strided_slice, P.gather, P.index_add,
                   P.gathermask):
        for name in packet.overloads():
            assert all(not (a.alias_info and a.alias_info.is_write) for a in getattr(packet, name)._schema.arguments)


def mixed(x, y, i, idx2, idx3):
    """torch ops around every ptocpu op (all exact in every dtype: compiled must equal eager)."""
    a = P.index_select(x * 2, 1, i)
    b0, b1 = P.interleave(x, y.flip(-1))
    c0, c1 = P.deinterleave(b0.neg())
    d0, d1 = P.deinterleave(b0, b1)
    e = x.clone()
    P.scatter_(e, 2, idx3, y, reduce="add")
    P.scatter_(y, 1, idx2, 3.0)  # the argument itself: eager and compiled both update it
    f = P.scatter(e, 2, idx3, x, reduce="multiply")
    g = P.scatter(x.transpose(0, 1).contiguous(), 0, idx2, -1.0)
    s = P.strided_slice(torch.cat([x, y], 0), [0, 1, 5], [0, -1, 0], [1, 1, -2],
                        ellipsis_mask=1, end_mask=4, new_axis_mask=0)
    return a, c0, c1, d0 + d1, e, f, g, s, y * 1


def mixed_args(dtype):
    x, y = data((3, 4, 6), dtype), data((3, 4, 6), dtype)
    return x, y, index((2, 3), 4), distinct_index((3, 2, 6), 1, 4), index((3, 4, 5), 6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_compiled_fullgraph_matches_eager_bit_for_bit(dtype):
    torch._dynamo.reset()
    args = mixed_args(dtype)
    eager_args = tuple(a.clone() for a in args)
    eager = mixed(*eager_args)
    compiled = torch.compile(mixed, fullgraph=True, backend="aot_eager")(*args)
    for g, want in zip(compiled, eager, strict=True):
        assert g.dtype == want.dtype and g.shape == want.shape
        assert torch.equal(bits(g), bits(want))
    assert torch.equal(bits(args[1]), bits(eager_args[1]))  # y, scattered in place


def newer(x, i, slots, rows):
    """torch ops around gather, scatter_update, index_add_ / index_add and gathermask."""
    g = P.gather(x * 2, 1, i)
    cache = x.clone()
    P.scatter_update(cache, -2, slots, rows.neg())
    P.index_add_(cache, 0, torch.tensor([2, 0, 2]), x[:3])
    a = P.index_add(cache.flip(0), 1, i[0], x[:, :4], alpha=1)
    m = P.gathermask(a + 1, 4)
    return g, cache, a, m, P.gathermask(cache, 1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_compiled_newer_ops_match_eager_bit_for_bit(dtype):
    torch._dynamo.reset()
    args = (data((5, 8), dtype), index((5, 4), 8), distinct_slots(2, 2, 5, skipped=1), data((4, 8), dtype))
    eager = newer(*args)
    explained = torch._dynamo.explain(newer)(*args)
    assert explained.graph_count == 1 and explained.graph_break_count == 0
    compiled = torch.compile(newer, fullgraph=True, backend="aot_eager")(*args)
    for g, want in zip(compiled, eager, strict=True):
        assert g.dtype == want.dtype and g.shape == want.shape
        assert torch.equal(bits(g), bits(want))
    x, i, slots, rows = args
    cache = ref_scatter_update(x, -2, slots, rows.neg())
    cache = torch.index_add(cache, 0, torch.tensor([2, 0, 2]), x[:3])
    assert torch.equal(bits(eager[0]), bits(torch.gather(x * 2, 1, i)))
    assert torch.equal(bits(eager[1]), bits(cache))


def test_one_graph_holds_every_op():
    torch._dynamo.reset()
    explained = torch._dynamo.explain(mixed)(*mixed_args(torch.float32))
    assert explained.graph_count == 1 and explained.graph_break_count == 0
    targets = {str(node.target) for graph in explained.graphs for node in graph.graph.nodes}
    for name in ("index_select", "interleave", "deinterleave", "scatter_", "scatter", "strided_slice"):
        assert f"ptocpu.{name}" in targets


def test_inductor_compiles_and_matches_eager():
    def f(x, i, idx):
        y = x * 2
        P.scatter_(y, 1, idx, 1.5, reduce="add")
        return P.index_select(y, 0, i) + 1

    torch._dynamo.reset()
    args = (data((5, 8), torch.float32), index((3,), 5), index((5, 4), 8))
    got = torch.compile(f, fullgraph=True, backend="inductor")(*args)
    assert torch.equal(bits(got), bits(f(*args)))


def test_platform_and_tile_shape_apply_to_compiled_calls():
    def f(a, b):
        return P.interleave(a + 1, b)

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    a, b = data((4, 8), torch.float32), data((4, 8), torch.float32)
    want = ref_interleave(a + 1, b)
    for run in (f, compiled):
        assert all(torch.equal(g, w) for g, w in zip(run(a, b), want))
        with ptocpu.platform("atlas_a2"), pytest.raises(ptocpu.UnsupportedError, match="interleave"):
            run(a, b)
        with ptocpu.platform("ascend950"):
            assert all(torch.equal(g, w) for g, w in zip(run(a, b), want))
            with pytest.raises(ptocpu.DTypeError, match="DT_FP64"):
                run(a.double(), b.double())
        with ptocpu.vec_tile_shapes(2, 4), pytest.raises(ptocpu.TileError, match="tile"):
            run(a, b)
        with ptocpu.vec_tile_shapes(2, 8):
            assert all(torch.equal(g, w) for g, w in zip(run(a, b), want))


def test_compiling_under_a_restrictive_platform_keeps_the_shape():
    # The fake shape follows the rules every platform shares: traced under atlas_a2 (rank 1-4
    # for index_select), the compiled graph runs on cpu with the right shape.
    def f(x, i):
        return P.index_select(x, 4, i) * 2

    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    x, i = data((2, 1, 2, 1, 3), torch.float32), index((2,), 3)
    with ptocpu.platform("atlas_a2"), pytest.raises(ptocpu.ArgumentError, match="rank 5"):
        compiled(x, i)
    assert torch.equal(compiled(x, i), ref_index_select(x, 4, i)[0] * 2)


ERRORS = [
    (ptocpu.DTypeError, "index dtype DT_FP32", lambda: P.index_select(torch.ones(3, 4), 0, torch.zeros(2))),
    (ptocpu.IndexOutOfRange, "dim 2 is out of range", lambda: P.index_select(torch.ones(3, 4), 2, torch.tensor([0, 1]))),
    (ptocpu.IndexOutOfRange, "index value 7", lambda: P.index_select(torch.ones(3, 4), 0, torch.tensor([0, 7]))),
    (ptocpu.ArgumentError, "must be even", lambda: P.interleave(torch.ones(2, 5), torch.ones(2, 5))),
    (ptocpu.DTypeError, "other dtype", lambda: P.deinterleave(torch.ones(2, 4), torch.ones(2, 4).half())),
    (ptocpu.ArgumentError, "reduce 'max'", lambda: P.scatter(torch.ones(3), 0, torch.tensor([0, 1]), 1.0, reduce="max")),
    (ptocpu.IndexOutOfRange, "shrink_axis_mask",
     lambda: P.strided_slice(torch.ones(3, 4), [5], [6], [1], shrink_axis_mask=1)),
    (ptocpu.ArgumentError, "index rank 1", lambda: P.gather(torch.ones(3, 4), 0, torch.tensor([0, 1]))),
    (ptocpu.ArgumentError, "pattern_mode 8", lambda: P.gathermask(torch.ones(2, 4), 8)),
]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("error", ERRORS, ids=[e[1] for e in ERRORS])
def test_errors_keep_their_ptocpu_class(error, compiled):
    # Compiled, the fake kernel raises what the kernel would (F3: never an empty placeholder);
    # torch.compile reports it wrapped in its TorchRuntimeError, naming the ptocpu error.
    cls, text, call = error
    torch._dynamo.reset()
    if not compiled:
        with pytest.raises(cls, match=text):
            call()
        return
    # Errors the shapes and dtypes show come from the fake while tracing; those only the values
    # show (an index value) from the kernel when the graph runs, as the ptocpu class itself.
    with pytest.raises(Exception) as e:
        torch.compile(call, fullgraph=True, backend="aot_eager")()
    if isinstance(e.value, cls):
        assert re.search(text, str(e.value))
        return
    assert isinstance(e.value, torch._dynamo.exc.TorchRuntimeError), repr(e.value)
    context = f"{e.value} {e.value.__context__}"
    assert f"{cls.__name__}(" in context and re.search(text, context), context


def test_failed_scatter_in_place_writes_nothing():
    x = torch.zeros(3, 4)

    def f(x):
        P.scatter_(x, 0, torch.tensor([[0, 5]]), 1.0)
        return x

    for run in (f, torch.compile(f, fullgraph=True, backend="aot_eager")):
        with pytest.raises(ptocpu.IndexOutOfRange, match="index value 5"):
            run(x)
        assert torch.equal(x, torch.zeros(3, 4))


def test_in_place_ops_refuse_a_tensor_that_requires_grad():
    x = torch.zeros(4, 2, requires_grad=True)
    with pytest.raises(ptocpu.ArgumentError, match="scatter_update: input: .*requires grad"):
        P.scatter_update(x, -2, torch.tensor([[1]]), torch.ones(1, 2))
    with pytest.raises(ptocpu.ArgumentError, match="index_add_: input: .*requires grad"):
        P.index_add_(x, 0, torch.tensor([1]), torch.ones(1, 2))
    assert torch.equal(x.detach(), torch.zeros(4, 2))


def test_scatter_in_place_refuses_a_tensor_that_requires_grad():
    x = torch.zeros(3, requires_grad=True)
    with pytest.raises(ptocpu.ArgumentError, match="scatter_: input: .*requires grad"):
        P.scatter_(x, 0, torch.tensor([1]), 1.0)
    assert torch.equal(x.detach(), torch.zeros(3))
    y = P.scatter(x, 0, torch.tensor([1]), 1.0)  # read only: fine
    assert torch.equal(y, torch.tensor([0.0, 1.0, 0.0]))


def test_importing_ptocpu_does_not_import_torch():
    code = "import sys, ptocpu; assert 'torch' not in sys.modules, 'torch imported'"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_output_shapes_need_only_shape_and_dtype():
    # numpy arrays, meta tensors and ptocpu tensors all describe a tensor; nothing is read.
    x, index = np.empty((3, 4), np.float16), torch.empty(2, 5, dtype=torch.int32, device="meta")
    def shapes(op, *args):
        return [shape for shape, _ in ptocpu._core._infer(op, args, {})]
    assert shapes("index_select", x, 1, index) == [(3, 2, 5)]
    assert shapes("deinterleave", ptocpu.tensor([2, 6], "bf16"), None) == [(2, 3), (2, 3)]
    assert shapes("gather", x, 1, index) == [(2, 5)]
    assert shapes("gathermask", x, 3) == [(3, 1)]
    with pytest.raises(ptocpu.DTypeError, match="index_select: input must be a tensor"):
        shapes("index_select", [[1.0]], 0, index)
