"""The `ptocpu` command.

  ptocpu            a short tour: the seed examples on built-in data, then `verify --quick`
  ptocpu examples   the seed examples only
  ptocpu verify     conformance of every operator x dtype x platform against independent references
  ptocpu bench      the published cases (docs/benchmarks.md) against torch and numpy (--sweep: the shape grid against torch)
  ptocpu info       version, build, SIMD targets, threads, platform tables
  ptocpu run SCRIPT.py [ARGS]    a PyPTO script, unchanged (`import pypto` is ptocpu)
  ptocpu test [--report PATH.json] [PYTEST ARGS]   PyPTO test files, unchanged (pytest with
                    ptocpu.tools.pytest_plugin; -n auto runs them on every core with pytest-xdist)
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

import ptocpu


def _show(title: str, **arrays) -> None:
    print(title)
    for name, value in arrays.items():
        text = np.array2string(np.asarray(value.numpy() if isinstance(value, ptocpu.Tensor) else value),
                               separator=", ", prefix="  " + name + ": ")
        print(f"  {name}: {text}")
    print()


def seed_index_select() -> None:
    """docs/ops/index_select.md's seed example."""
    x = ptocpu.asarray(np.array([[0.1427, 0.0231, -0.5414, -1.0009],
                                 [-0.4664, 0.2647, -0.1228, -1.1068],
                                 [-1.1734, -0.6571, 0.7230, -0.6004]], dtype=np.float32))
    index = ptocpu.asarray(np.array([0, 2], dtype=np.int32))
    out1 = ptocpu.index_select(x, 0, index)
    out2 = ptocpu.index_select(x, 1, index)
    _show("index_select (docs/ops/index_select.md): out1 = index_select(x, 0, index), out2 = index_select(x, 1, index)",
          x=x, index=index, out1=out1, out2=out2)


def seed_strided_slice() -> None:
    """docs/ops/strided_slice.md with seed 003's first call and each mask."""
    x = ptocpu.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    out1 = ptocpu.strided_slice(x, [0, 0, 0], [2, 3, 4], [1, 2, 2], 0, 0, 0, 0, 0)
    out2 = ptocpu.strided_slice(x, [0, 0], [0, 0], [-1, -1], begin_mask=3, end_mask=3, ellipsis_mask=0)
    out3 = ptocpu.strided_slice(x, [0, 0, 1], [0, 0, -1], [1, 1, 1], ellipsis_mask=2, new_axis_mask=1)
    out4 = ptocpu.strided_slice(x, [1, 0, -1], [2, 3, 0], [1, 2, -1], end_mask=4, shrink_axis_mask=1)
    _show("strided_slice (docs/ops/strided_slice.md): out1 = x[0:2:1, 0:3:2, 0:4:2]; out2 = begin_mask 3, end_mask 3, strides "
          "[-1, -1] (x[::-1, ::-1]);\n  out3 = ellipsis_mask 2, new_axis_mask 1 (x[None, ..., 1:-1]); "
          "out4 = shrink_axis_mask 1, end_mask 4 (x[1, 0:3:2, ::-1])",
          x=x, out1=out1, out2=out2, out3=out3, out4=out4)


def seed_scatter() -> None:
    """docs/ops/scatter.md's seed example, then reduce 'add' with a tensor src on the result."""
    x = ptocpu.tensor([3, 5], ptocpu.DT_FP32)
    index = ptocpu.asarray(np.array([[1, 2], [0, 1]], dtype=np.int64))
    out = ptocpu.scatter_(x, 0, index, 2.0)
    src = ptocpu.asarray(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
    out2 = ptocpu.scatter(out, 1, index, src, reduce="add")
    _show("scatter_ (docs/ops/scatter.md): out = scatter_(x, 0, index, 2.0) (x zeros [3, 5] fp32; out is x); "
          "out2 = scatter(out, 1, index, src, reduce='add')",
          index=index, out=out, src=src, out2=out2)


def seed_index_select_kernel() -> None:
    """Seed 000's jit kernel (docs/kernel_model.md) on docs/ops/index_select.md's data, on the ascend950 profile."""
    from . import kernels_demo
    kernels_demo.show(_show)


def seed_interleave() -> None:
    """docs/ops/interleave.md's seed example (seed 001)."""
    x = ptocpu.asarray(np.array([[0, 1, 2, 3], [4, 5, 6, 7]], dtype=np.float32))
    other = ptocpu.asarray(np.array([[10, 11, 12, 13], [14, 15, 16, 17]], dtype=np.float32))
    out0, out1 = ptocpu.interleave(x, other)
    _show("interleave (docs/ops/interleave.md): out0, out1 = interleave(input, other) (stream [0, 10, 1, 11, 2, 12, 3, 13] per row, "
          "split in halves)", input=x, other=other, out0=out0, out1=out1)


def seed_deinterleave() -> None:
    """docs/ops/deinterleave.md's example (single input) and the two-input form inverting interleave."""
    x = ptocpu.asarray(np.array([[0, 10, 1, 11, 2, 12, 3, 13], [4, 14, 5, 15, 6, 16, 7, 17]], dtype=np.float32))
    out0, out1 = ptocpu.deinterleave(x)
    a, b = ptocpu.interleave(out0, out1)
    back0, back1 = ptocpu.deinterleave(a, b)
    _show("deinterleave (docs/ops/deinterleave.md): out0, out1 = deinterleave(x) (even / odd elements of each row); "
          "two inputs: a, b = interleave(out0, out1), back0, back1 = deinterleave(a, b) == (out0, out1)",
          x=x, out0=out0, out1=out1, a=a, b=b, back0=back0, back1=back1)


EXAMPLES = [seed_index_select, seed_interleave, seed_deinterleave, seed_scatter, seed_strided_slice,
            seed_index_select_kernel]


def cmd_examples(_args) -> int:
    for example in EXAMPLES:
        example()
    return 0


def cmd_info(_args) -> int:
    build = ptocpu.build_info()
    print(f"ptocpu {ptocpu.__version__}")
    print(f"build: {build['build_type']}, {build['compiler']}")
    print(f"SIMD targets compiled: {build['simd_targets_compiled']}; dispatched here: {build['simd_target_dispatched']}")
    print(f"threads: {ptocpu.get_num_threads()} (set_num_threads / PTOCPU_NUM_THREADS)")
    print(f"platform: {ptocpu.get_platform()}\n")
    for p in ptocpu.platform_table():
        ub = p["ub_bytes"] or "no limit"
        extent = p["max_extent"] if p["max_extent"] < 2**62 else "int64"
        print(f"{p['name']} ({p['arch']}; aliases {', '.join(p['aliases'])}): UB bytes {ub}, "
              f"max extent {extent}, empty inputs {'allowed' if p['empty_inputs_allowed'] else 'rejected'}")
        for op, limits in p["ops"].items():  # the op table's rows for this platform
            if limits["offered"]:
                print(f"  {op:<14} rank {limits['rank'][0]}-{limits['rank'][1]}  dtypes {limits['dtypes']}")
            else:
                print(f"  {op:<14} not offered")
    return 0


def cmd_verify(args) -> int:
    from . import verify
    return verify.run(args)


def cmd_tour(args) -> int:
    cmd_examples(args)
    print("Conformance (ptocpu verify --quick):")
    return verify_quick()


def verify_quick() -> int:
    from . import verify
    return verify.run(argparse.Namespace(op=None, platform=None, quick=True, json=None))


def add_trace_options(sub) -> None:
    sub.add_argument("--trace", metavar="PATH", help="write a Chrome trace of the kernels run (docs/tracing.md)")
    sub.add_argument("--plot", metavar="PNG", help="with --trace: also save the UB use plot")


def traced(args):
    """A trace recording over the command when --trace is given (docs/tracing.md)."""
    import contextlib
    if not args.trace:
        return contextlib.nullcontext()
    from ..engine import trace
    return trace.recording(args.trace, summary=True, plot=args.plot)


def _restart_with_short_omp_spin() -> None:
    """libgomp reads GOMP_SPINCOUNT once, when it loads, and it loaded with ptocpu (oneDNN links it) before
    this runs: `ptocpu bench` restarts itself with the variable set, unless the environment sets it
    (docs/benchmarks.md#timing)."""
    if "GOMP_SPINCOUNT" in os.environ:
        return
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "ptocpu.tools.cli", *sys.argv[1:]],
              dict(os.environ, GOMP_SPINCOUNT="3000"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ptocpu", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("examples", help="run the seed examples on built-in data")
    sub.add_parser("info", help="version, build flags, SIMD targets, threads, platform tables")
    verify = sub.add_parser("verify", help="conformance run against independent references")
    verify.add_argument("--op", action="append", help="only this op (repeatable)")
    verify.add_argument("--platform", action="append", help="only this platform (repeatable)")
    verify.add_argument("--quick", action="store_true", help="fewer shapes per dtype")
    verify.add_argument("--json", metavar="PATH", help="also write every case's result as JSON")
    bench = sub.add_parser("bench", help="the published cases (docs/benchmarks.md) against torch and numpy")
    bench.add_argument("--case", action="append", help="run only these case ids (repeatable; with --sweep, "
                       "sweep ids or a prefix ending in '*')")
    bench.add_argument("--sweep", action="store_true", help="the shape grid (every op, shape class, dtype width) "
                       "against torch, with median / worst / count below 1.0x")
    bench.add_argument("--threads", type=int, help="thread count for every peer")
    bench.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    bench.add_argument("--repeats", type=int, default=7, help="timed runs per case (median is reported)")
    bench.add_argument("--plot", metavar="PATH.png", help="also plot the roofline fraction per case (matplotlib)")
    bench.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    run = sub.add_parser("run", help="run a PyPTO script unchanged: import pypto gives ptocpu, NPU maps to CPU")
    run.add_argument("--platform", help="platform (default ascend950)")
    add_trace_options(run)
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    test = sub.add_parser("test", help="run PyPTO test files unchanged with pytest (ptocpu.tools.pytest_plugin); "
                          "other arguments go to pytest (-n auto: every core, with pytest-xdist)", add_help=False)
    test.add_argument("--platform", help="platform (default ascend950)")
    test.add_argument("--report", metavar="PATH.json", help="write each test's outcome and, for failures, the first "
                      "PyPTO name ptocpu lacks")
    add_trace_options(test)
    args, extra = parser.parse_known_args(argv)
    if args.command == "test":
        from . import runner
        with traced(args):
            return runner.run_tests(extra, args.platform, args.report)
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "run":
        from . import runner
        with traced(args):
            return runner.run_script(args.script, args.args, args.platform)
    if args.command == "bench":
        if argv is None:  # the command, not a call from Python
            _restart_with_short_omp_spin()
        from . import bench as bench_module
        return bench_module.run(args)
    commands = {"examples": cmd_examples, "info": cmd_info, "verify": cmd_verify, None: cmd_tour}
    return commands[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
