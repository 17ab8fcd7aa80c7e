"""The kernels of examples/kernels (ptocpu.examples) on small inputs: the compiled program gives the
bits the same kernel gives eagerly (docs/kernel_model.md#compiled-kernels), on 1 and 2 threads, and
both are close to the example's torch golden."""
import numpy as np
import pytest

import ptocpu
from ptocpu.tools.bench.kernels import load_example

torch = pytest.importorskip("torch")

# (module, kernel, small input shape, platform, tolerance against torch)
EXAMPLES = [
    ("elementwise_chain", "elementwise_chain_kernel", (24, 4096), "cpu", 1e-6),
    ("softmax_rows", "softmax_kernel", (3, 16, 1, 256), "cpu", 1e-6),
    ("rms_norm_rows", "rms_norm_kernel", (48, 512), "cpu", 1e-5),
    ("rope", "rope_kernel", (2, 1, 128, 64), "ascend950", 1e-6),
    ("attention", "attention_kernel", (2, 2, 64, 64), "cpu", 0.05),
]


def _run(kernel, args, platform):
    out = np.zeros_like(args[-1])
    with ptocpu.platform(platform):
        kernel(*args[:-1], out)
    return out


@pytest.mark.parametrize("module, kernel_name, shape, platform, tol", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example_compiled_equals_eager_on_one_and_two_threads(module, kernel_name, shape, platform, tol):
    example = load_example(module)
    args = example.make_inputs(shape=shape, seed=7)
    compiled = getattr(example, kernel_name)
    eager = ptocpu.frontend.jit(debug_options={"eager": True})(compiled.kernel.func)
    before = ptocpu.get_num_threads()
    try:
        ptocpu.set_num_threads(1)
        want = _run(eager, args, platform)
        for threads in (1, 2):
            ptocpu.set_num_threads(threads)
            for call in range(2):  # the first call traces, the second runs the program
                got = _run(compiled, args, platform)
                assert got.tobytes() == want.tobytes(), f"{threads} threads, call {call}"
    finally:
        ptocpu.set_num_threads(before)
    golden = np.asarray(example.golden(*args[:-1]).float().numpy(), dtype=np.float64)
    np.testing.assert_allclose(want.astype(np.float64), golden.reshape(want.shape), atol=tol, rtol=tol)
