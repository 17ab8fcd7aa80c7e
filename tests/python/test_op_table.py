"""The op table behind every surface (docs/CONTRIBUTING.md#the-op-table): one entry per op, nothing
in Python lists op names, every surface iterates the table, and the dispatch point replaces the
attribute swapping that recording, tracing and the PyPTO Tensor methods did before."""
import ast
import threading
from pathlib import Path

import numpy as np
import ptocpu
from ptocpu import _core
from ptocpu.engine import trace
from ptocpu.engine.dispatch import Handler, handling
from ptocpu.tools import verify

PACKAGE = Path(ptocpu.__file__).resolve().parent
OPS = {row["name"] for row in ptocpu.op_table()}


def _dispatched_ops(fn, *args) -> list:
    """The ops fn(*args) reaches through the dispatch point."""
    seen = []

    class Spy(Handler):
        def __call__(self, call):
            seen.append(call.op)
            return call.proceed()

    with handling(Spy()):
        fn(*args)
    return seen


def test_names_are_unique_and_every_function_form_is_exported():
    names = [row["name"] for row in ptocpu.op_table()]
    assert len(names) == len(set(names))
    for row in ptocpu.op_table():
        if row["function"]:
            exported = getattr(ptocpu, row["name"])
            if exported is not getattr(_core, row["name"]):
                # The language layer may wrap an op's name to keep an older scalar form working
                # (pypto.ceil(a, b) of two integers); a tensor still reaches the op itself.
                assert exported.__module__.startswith("ptocpu.lang."), row["name"]
                assert _dispatched_ops(exported, ptocpu.asarray([1.5], "float32")) == [row["name"]], row["name"]
            assert row["name"] in ptocpu.__all__
        if row["method"]:
            assert callable(getattr(ptocpu.Tensor, row["name"])), row["name"]
        for dunder, _ in row["dunders"]:
            assert dunder in vars(_core.Tensor), dunder


def _string_collections(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            strings = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(strings) >= 3:
                yield node.lineno, strings
        if isinstance(node, ast.Dict):
            keys = [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if len(keys) >= 3:
                yield node.lineno, keys


def test_no_op_name_list_in_python():
    # A hand-kept list of op names is how surfaces fell out of step (Tensor.gather was not
    # recorded). Modules that describe each op's own cases (verify, bench, references) name one
    # op per registration; no module lists three or more op names in one literal.
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for line, strings in _string_collections(ast.parse(path.read_text())):
            named = [s for s in strings if s in OPS]
            if len(named) >= 3:
                offenders.append(f"{path.relative_to(PACKAGE)}:{line}: {named}")
    assert not offenders, offenders


def test_every_op_has_verify_cases():
    assert verify.uncovered() == []


def test_torch_schemas_are_written_from_the_parameters():
    # Written here by hand from each op's Python signature (docs/torch.md).
    schemas = {row["name"]: row["torch_schema"] for row in ptocpu.op_table()}
    assert schemas["index_add_"] == "index_add_(Tensor(a!) input, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> ()"
    assert schemas["deinterleave"] == "deinterleave(Tensor input, Tensor? other=None) -> (Tensor, Tensor)"
    assert schemas["topk"] == "topk(Tensor input, int k, int? dim=None, bool largest=True, int algo=0) -> (Tensor, Tensor)"
    assert schemas["quantize"] == "quantize(Tensor input, Tensor scale, ScalarType otype, int axis, Tensor? zero_points=None) -> Tensor"
    assert schemas["rms_norm"] == "rms_norm(Tensor input, Tensor? gamma=None, float epsilon=1e-6) -> Tensor"
    assert schemas["atomic_add"] == "atomic_add(Tensor src, int[] offsets, Tensor(a!) dst) -> ()"
    assert schemas["tanh"] == "tanh(Tensor a) -> Tensor"
    assert schemas["view"] == ""  # not registered: a view would alias its input


def test_signatures_come_from_the_table():
    for row in ptocpu.op_table():
        if not row["function"]:
            continue
        doc = getattr(ptocpu, row["name"]).__doc__
        assert doc.startswith(row["signature"].removeprefix("def ")), row["name"]


# ---- the defects of issue 20, each with the test that failed before -----------------------------

def test_tensor_gather_and_gathermask_methods_are_replayed_in_a_function():
    # Tensor.gather / Tensor.gathermask were methods missing from the recorder's list: they ran once
    # on the zero placeholders and were never replayed.
    x = ptocpu.tensor([2, 4], ptocpu.DT_FP32, "x")
    g = ptocpu.tensor([2, 1], ptocpu.DT_FP32, "g")
    m = ptocpu.tensor([2, 2], ptocpu.DT_FP32, "m")
    with ptocpu.function("MAIN", x, g, m):
        ptocpu.assemble(x.gather(1, np.array([[3], [0]])), [0, 0], g)
        ptocpu.assemble(x.gathermask(2), [0, 0], m)
    data = np.arange(8, dtype=np.float32).reshape(2, 4)
    gout, mout = np.zeros((2, 1), np.float32), np.zeros((2, 2), np.float32)
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(data), ptocpu.asarray(gout), ptocpu.asarray(mout))
    assert gout.tolist() == [[3.0], [4.0]]
    assert mout.tolist() == [[1.0, 3.0], [5.0, 7.0]]


def test_a_function_in_one_thread_and_a_trace_in_another_do_not_record_twice():
    # With attributes swapped process-wide, overlapping recordings left wrappers installed and
    # every later program applied each op twice (an index_add_ twice).
    started, release = threading.Event(), threading.Event()

    def traced():
        with trace.recording():
            started.set()
            release.wait(5)

    worker = threading.Thread(target=traced)
    worker.start()
    started.wait(5)
    x = ptocpu.tensor([3], ptocpu.DT_FP32, "x")
    with ptocpu.function("MAIN", x):
        ptocpu.index_add_(x, 0, np.array([0]), np.ones(1, np.float32))
    release.set()
    worker.join()
    for _ in range(2):
        data = np.zeros(3, np.float32)
        ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(data))
        assert data.tolist() == [1.0, 0.0, 0.0]
    assert ptocpu.index_add_ is _core.index_add_


def test_an_op_bound_to_another_name_is_recorded():
    from ptocpu import view as bound_before  # as `from pypto import view` at the top of a test file
    x = ptocpu.tensor([4], ptocpu.DT_FP32, "x")
    y = ptocpu.tensor([2], ptocpu.DT_FP32, "y")
    with ptocpu.function("MAIN", x, y):
        ptocpu.assemble(bound_before(x, [2], [2]), [0], y)
    out = np.zeros(2, np.float32)
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(np.arange(4, dtype=np.float32)), ptocpu.asarray(out))
    assert out.tolist() == [2.0, 3.0]


def test_a_call_inside_a_call_is_recorded_once():
    # t[a:b] = v dispatches setitem, which copies through the core: one recorded step.
    x = ptocpu.tensor([4], ptocpu.DT_FP32, "x")
    with ptocpu.function("MAIN", x) as program:
        x[1:3] = ptocpu.asarray(np.ones(2, np.float32))
    assert [type(step).__name__ for step in program.steps] == ["_Call"]


def test_platform_and_tile_set_in_a_function_body_end_with_it():
    before = (ptocpu.get_platform(), ptocpu.get_vec_tile_shapes())
    x = ptocpu.tensor([4], ptocpu.DT_FP32, "x")
    with ptocpu.function("MAIN", x):
        ptocpu.set_platform("atlas_a2")
        ptocpu.set_vec_tile_shapes(2)
    assert (ptocpu.get_platform(), ptocpu.get_vec_tile_shapes()) == before


def test_every_program_of_a_thread_can_run():
    a = ptocpu.tensor([2], ptocpu.DT_FP32, "a")
    with ptocpu.function("FIRST", a) as first:
        a[:] = 1.0
    with ptocpu.function("SECOND", a):
        a[:] = 2.0
    data = np.zeros(2, np.float32)
    first.run([ptocpu.asarray(data)])
    assert data.tolist() == [1.0, 1.0]
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(data))  # the last one
    assert data.tolist() == [2.0, 2.0]


def test_entering_the_same_function_object_twice_records_a_new_program():
    x = ptocpu.tensor([3], ptocpu.DT_FP32, "x")
    fn = ptocpu.function("MAIN", x)
    for _ in range(2):
        with fn:
            ptocpu.index_add_(x, 0, np.array([0]), np.ones(1, np.float32))
    data = np.zeros(3, np.float32)
    ptocpu.runtime._device_run_once_data_from_host(ptocpu.asarray(data))
    assert data.tolist() == [1.0, 0.0, 0.0]


def test_reset_state_forgets_options_goldens_and_debug_switches():
    from ptocpu.engine.dispatch import reset_state
    ptocpu.set_pass_options(vec_nbuffer_setting={-1: 2})
    ptocpu.set_debug_options(runtime_debug_mode=1)
    ptocpu.set_verify_golden_data(goldens=[None])
    reset_state()
    assert ptocpu.get_pass_options()["vec_nbuffer_setting"] == {}
    assert ptocpu.get_debug_options()["runtime_debug_mode"] == 0
    assert ptocpu.golden.take_goldens() is None


def test_no_ptocpu_module_is_imported_from_cpp():
    # The binding imports no ptocpu module by name (only numpy / ml_dtypes / torch as libraries).
    for path in (PACKAGE.parents[1] / "bindings" / "python").glob("*.cpp"):
        assert 'import_("ptocpu' not in path.read_text(), path.name


def test_the_stub_describes_the_pypto_tensor_surface():
    text = (Path(_core.__file__).parent / "_core.pyi").read_text()  # shipped beside the extension
    for name in ("def move(", "def to_tensor(", "def partially_valid(", "def __add__(", "def gather("):
        assert name in text, name
