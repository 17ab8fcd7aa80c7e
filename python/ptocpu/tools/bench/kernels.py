"""The KERNEL-* cases (docs/benchmarks.md): the kernels of examples/kernels/ run compiled
(docs/kernel_model.md#compiled-kernels) against the same kernel kept eager and torch doing the same math.

Each kernel writes its last argument; every tool gets its own output array. The compiled program is
traced during the warm-up call, so the timed calls run it.
"""
from __future__ import annotations

import importlib
import importlib.util
import pathlib
from types import ModuleType

import numpy as np

import ptocpu

from .cases import Case, Tool

try:  # torch is a peer, never a requirement
    import torch
except ImportError:  # pragma: no cover - depends on the environment
    torch = None


def load_example(name: str) -> ModuleType:
    """examples/kernels/<name>.py: installed as ptocpu.examples, or from the checkout."""
    try:
        return importlib.import_module(f"ptocpu.examples.{name}")
    except ModuleNotFoundError:
        path = pathlib.Path(ptocpu.__file__).resolve().parents[2] / "examples" / "kernels" / f"{name}.py"
        if not path.exists():
            raise
        spec = importlib.util.spec_from_file_location(f"ptocpu_kernel_example_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def _kernel_case(id_: str, module: str, kernel: str, call: str, dtype: str, tol: tuple | None,
                 platform: str = "cpu") -> Case:
    def build(rng):
        example = load_example(module)
        args = example.make_inputs(seed=int(rng.integers(1 << 30)))
        return {"example": example, "args": args}

    def tools(inp):
        example, args = inp["example"], inp["args"]
        compiled = getattr(example, kernel)
        eager = ptocpu.frontend.jit(debug_options={"eager": True})(compiled.kernel.func)

        def runner(jit):
            out = np.zeros_like(args[-1])
            inputs = args[:-1] + [out]

            def run():
                with ptocpu.platform(platform):
                    jit(*inputs)
                return out
            return Tool(run)

        t = {"ptocpu": runner(compiled), "ptocpu-eager": runner(eager)}
        if torch is not None:
            t["torch"] = Tool(lambda: example.golden(*args[:-1]))
        return t

    def nbytes(inp):
        return sum(int(a.nbytes) for a in inp["args"])

    return Case(id_, "kernel", call, dtype, build, tools, nbytes, tol=tol)


KERNEL_CASES = [
    _kernel_case("KERNEL-CHAIN", "elementwise_chain", "elementwise_chain_kernel",
                 "five elementwise ops per [8, 4096] row tile of x, y [4096, 4096]", "fp32", None),
    _kernel_case("KERNEL-SOFTMAX", "softmax_rows", "softmax_kernel",
                 "amax, sub, exp, sum, div per batch of [64, 1024, 1, 256]", "fp32", (1e-6, 1e-6)),
    _kernel_case("KERNEL-RMSNORM", "rms_norm_rows", "rms_norm_kernel",
                 "rms_norm per [16, 4096] row tile of [4096, 4096]", "fp32", (1e-5, 1e-5)),
    _kernel_case("KERNEL-ROPE", "rope", "rope_kernel",
                 "gathermask even / odd lanes, rotate, assemble halves per [1, 1, 64, 64] tile of [64, 1, 4096, 64]",
                 "fp32", None, platform="ascend950"),
    _kernel_case("KERNEL-ATTENTION", "attention", "attention_kernel",
                 "matmul(q, kT), scale, softmax, matmul(v) per batch of q, k, v [32, 16, 256, 128]", "bf16",
                 (0.05, 0.05)),
]
