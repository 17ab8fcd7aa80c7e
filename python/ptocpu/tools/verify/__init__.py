"""`ptocpu verify`: a conformance run over built-in cases for every operator x dtype x platform.

Each case runs ptocpu and an independent reference (numpy; torch when installed; upstream's
formulas; the seed 003 reference code for strided_slice) and compares the results bit for bit
(docs/precision.md), or within the op's documented error where the device itself is not exact.
Error rules are cases too: the call must raise the docs/errors.md exception and name the offending
value. For floating outputs cann-bench's MERE / MARE against a float64 reference are reported
beside. The cases live in this package's modules, one per op family (`@cases_for("op")`); every
op of the op table is covered (`uncovered()` lists the ones that are not).
"""
from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import time
from dataclasses import asdict

import numpy as np

import ptocpu

from .common import GENERATORS, PLATFORMS, THRESHOLDS, Case, Result, _SMALL_FLOATS, _relative_errors

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "common":
        importlib.import_module(f"{__name__}.{_module.name}")

def _operators() -> list[str]:
    """The operators of the op table: the entries with a page under docs/ops/ (indexing sugar,
    conversions and the kernel model's views have their own test files)."""
    return [row["name"] for row in ptocpu.op_table() if row["doc_page"].startswith("docs/ops/")]


def uncovered() -> list[str]:
    """Operators of the op table without verify cases."""
    return [op for op in _operators() if op not in GENERATORS]


def ops() -> list[str]:
    return [row["name"] for row in ptocpu.op_table() if row["name"] in GENERATORS]


def collect(ops: list[str], platforms: list[str], quick: bool) -> list[Case]:
    rng = np.random.default_rng(2026)
    cases, seen = [], set()
    for op in ops:
        generator = GENERATORS[op]
        if generator in seen:
            continue
        seen.add(generator)
        cases.extend(c for c in generator(rng, quick) if c.platform in platforms and c.op in ops)
    return cases


def run_case(case: Case) -> Result:
    ptocpu.reset_vec_tile_shapes()
    try:
        with ptocpu.platform(case.platform):
            ok, detail, pairs = case.run()
    except Exception as e:  # noqa: BLE001 - an unexpected error is a failed case, not a crash
        return Result(case.op, case.platform, case.dtype, case.name, False, f"{type(e).__name__}: {e}")
    result = Result(case.op, case.platform, case.dtype, case.name, ok, detail)
    if ok and pairs:
        want = pairs[0][1]
        if want.dtype.kind == "f" or want.dtype in _SMALL_FLOATS:
            reference64 = pairs[0][2] if len(pairs[0]) > 2 else want.astype(np.float64)
            result.mere, result.mare = _relative_errors(pairs, reference64)
    return result


def _progress(done: int, total: int, failed: int, start: float) -> None:
    """A progress bar on stderr: redrawn in place on a terminal, a line per tenth otherwise."""
    width = 30
    if not sys.stderr.isatty():
        if done == total or done * 10 // total != (done - 1) * 10 // total:
            sys.stderr.write(f"verify: {done}/{total} cases, {failed} failed, {time.perf_counter() - start:.1f}s\n")
        return
    filled = width * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} cases, {failed} failed, "
                     f"{time.perf_counter() - start:.1f}s")
    sys.stderr.flush()


def summarize(results: list[Result]) -> list[dict]:
    rows = {}
    for r in results:
        row = rows.setdefault(r.op, {"op": r.op, "cases": 0, "passed": 0, "failed": 0, "mere": 0.0, "mare": 0.0})
        row["cases"] += 1
        row["passed" if r.passed else "failed"] += 1
        if r.mere is not None:
            row["mere"] = max(row["mere"], r.mere)
            row["mare"] = max(row["mare"], r.mare)
    return list(rows.values())


def format_table(rows: list[dict]) -> str:
    lines = [f"{'op':<15}{'cases':>7}{'passed':>8}{'failed':>8}{'worst MERE':>12}{'worst MARE':>12}"]
    for r in rows:
        lines.append(f"{r['op']:<15}{r['cases']:>7}{r['passed']:>8}{r['failed']:>8}{r['mere']:>12.3g}{r['mare']:>12.3g}")
    total = sum(r["cases"] for r in rows), sum(r["passed"] for r in rows), sum(r["failed"] for r in rows)
    lines.append(f"{'total':<15}{total[0]:>7}{total[1]:>8}{total[2]:>8}")
    return "\n".join(lines)


def run(args) -> int:
    known = ops()
    chosen = args.op or known
    unknown = [o for o in chosen if o not in known]
    platforms = args.platform or PLATFORMS
    if unknown or any(p not in PLATFORMS for p in platforms):
        print(f"verify: --op takes {', '.join(known)}; --platform takes {', '.join(PLATFORMS)}", file=sys.stderr)
        return 2
    cases = collect(chosen, platforms, args.quick)
    results, failed, start = [], 0, time.perf_counter()
    for i, case in enumerate(cases):
        result = run_case(case)
        results.append(result)
        failed += not result.passed
        _progress(i + 1, len(cases), failed, start)
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    for r in results:
        if not r.passed:
            print(f"FAIL {r.op} [{r.platform}, {r.dtype}] {r.case}: {r.detail}")
    rows = summarize(results)
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": rows, "results": [asdict(r) for r in results],
                       "thresholds": THRESHOLDS, "ptocpu": ptocpu.__version__}, f, indent=1)
    print(f"{sum(r.passed for r in results)} passed, {failed} failed")
    return 1 if failed else 0
