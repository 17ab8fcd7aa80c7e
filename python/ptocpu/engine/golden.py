"""Golden checks with PyPTO's switches (see docs/tracing.md#golden-checks).

    pypto.set_verify_golden_data(goldens=[None, None, expected])   # one entry per tensor argument
    kernel_with_verify(a, b, out)    # @jit(verify_options={"enable_pass_verify": True})

After the kernel returns, each tensor argument (in the kernel's parameter order, then the tensors
it returns) is compared with the golden at its position; None skips a position. A table of PASS /
FAIL / NO_COMPARE with max abs / rel error and cann-bench's MERE / MARE is printed, and a FAIL is
a GoldenMismatchError naming the output and its worst element.

Pass rule per output: with `pass_verify_error_tol=[rtol, atol]` given, every element within
atol + rtol * |golden|; otherwise the cann-bench rule of docs/precision.md for floating dtypes
(MERE < T and MARE < 10 T; fp64 uses fp32's T) and equality for integers and bool (exact, 64-bit
values included). A NaN tolerance and a complex golden are refused.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from .. import _core
from . import config
from .dispatch import on_reset

asarray, to_dtype = _core.asarray, _core.dtype

__all__ = ["set_verify_golden_data", "GoldenMismatchError",
           "Comparison", "compare", "check", "THRESHOLDS"]

# cann-bench's T per dtype (docs/precision.md#cann-benchs-measure); fp64 has none there and uses fp32's.
THRESHOLDS = {"DT_FP16": 2**-10, "DT_BF16": 2**-7, "DT_FP32": 2**-13, "DT_FP64": 2**-13,
              "DT_FP8E4M3": 2**-3, "DT_FP8E5M2": 2**-2}
_EPS = 1e-7  # cann-bench's guard in |a - g| / (|g| + eps)


class GoldenMismatchError(AssertionError):
    """An output differs from its golden beyond the tolerance (the message names the worst element)."""


_pending: Optional[Tuple[Optional[list], list]] = None  # (in_out_tensors, goldens) for the next check


def _set_options() -> dict:
    """The verify options set_verify_options / set_options / pypto.options set (engine/config.py)."""
    return config.explicit("verify")


def check_tolerance(tol: Any, where: str) -> None:
    """NaN compares false with everything: as a tolerance it would pass every element."""
    if tol is not None and (len(tol) != 2 or not all(float(v) >= 0 for v in tol)):
        raise ValueError(f"{where}: pass_verify_error_tol must be [rtol, atol] with both >= 0 (not nan), got {tol!r}")


def set_verify_golden_data(in_out_tensors: Optional[Sequence] = None, goldens: Optional[Sequence] = None) -> None:
    """`pypto.set_verify_golden_data(goldens=[...])`: goldens for the next verifying run, one per
    tensor argument of the kernel (None skips it). `in_out_tensors` is PyPTO's list of the run's
    actual tensors, needed only outside jit."""
    global _pending
    _pending = (None if in_out_tensors is None else list(in_out_tensors), list(goldens or []))


@on_reset
def _forget() -> None:
    global _pending
    _pending = None


def take_goldens() -> Optional[Tuple[Optional[list], list]]:
    """The goldens set for the next run (cleared: each set is checked once)."""
    global _pending
    pending, _pending = _pending, None
    return pending


def enabled(options: Optional[dict]) -> bool:
    """Whether a kernel with these verify_options checks goldens."""
    merged = dict(_set_options(), **(options or {}))
    return bool(merged.get("enable_pass_verify"))


def wanted(options: Optional[dict]) -> bool:
    """Whether a run with these verify_options checks goldens now: some are set and the run verifies."""
    return _pending is not None and enabled(options)


def is_array(obj) -> bool:
    """Values that are tensors: ptocpu tensors, numpy arrays, torch tensors and anything else with
    __dlpack__ (numpy scalars stay scalars)."""
    if isinstance(obj, (_core.Tensor, np.ndarray)):
        return True
    return hasattr(obj, "__dlpack__") and not isinstance(obj, np.generic)


def _numpy(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    t = value if isinstance(value, _core.Tensor) else asarray(value.detach() if hasattr(value, "detach") else value,
                                                              copy=False if hasattr(value, "__dlpack__") else None)
    return np.asarray(t.numpy())


@dataclass
class Comparison:
    name: str
    dtype: str
    shape: tuple
    result: str                      # PASS, FAIL or NO_COMPARE
    max_abs: float = 0.0
    max_rel: float = 0.0
    mere: float = 0.0
    mare: float = 0.0
    rule: str = ""
    worst: Optional[tuple] = None    # index of the worst element
    got: Any = None
    want: Any = None
    reason: str = ""


def _integer_distance(a: np.ndarray, g: np.ndarray) -> np.ndarray:
    """|a - g| of two integer (or bool) arrays, exact: 64-bit values are not rounded through
    float64 (2^53 and 2^53 + 1 differ). As float64, in which a nonzero distance stays nonzero."""
    signed = "i" in (a.dtype.kind, g.dtype.kind)
    if signed and np.dtype(np.uint64) in (a.dtype, g.dtype):  # their distance fits neither 64-bit type
        return np.abs(a.astype(object) - g.astype(object)).astype(np.float64)
    wide = np.int64 if signed else np.uint64
    a_wide, g_wide = a.astype(wide), g.astype(wide)
    # In uint64 arithmetic, which wraps, the larger minus the smaller is the exact distance.
    a_bits, g_bits = a_wide.view(np.uint64), g_wide.view(np.uint64)
    return np.where(a_wide >= g_wide, a_bits - g_bits, g_bits - a_bits).astype(np.float64)


def compare(name: str, got: Any, golden: Any, tol: Optional[Sequence[float]] = None) -> Comparison:
    """One output against its golden (see the module docstring for the pass rule)."""
    a = _numpy(got)
    dtype = to_dtype(a.dtype).name
    if not is_array(golden):
        golden = np.asarray(golden)
    if getattr(golden.dtype, "is_complex", False) is True or getattr(golden.dtype, "kind", "") == "c":
        # No output is complex, and dropping the imaginary part would hide a difference.
        raise _core.DTypeError(f"golden of output {name!r} is {golden.dtype} but the output is {dtype}; ptocpu has "
                               f"no complex dtype: give a real golden (golden.real when its imaginary part is 0)")
    g = _numpy(golden)
    if a.shape != g.shape:
        return Comparison(name, dtype, a.shape, "FAIL", rule="same shape",
                          reason=f"shape {list(a.shape)} but the golden has {list(g.shape)}")
    a64, g64 = a.astype(np.float64), g.astype(np.float64)
    if a.dtype.kind in "iub" and g.dtype.kind in "iub":
        diff = _integer_distance(a, g)
        same = diff == 0
    else:
        same = (a64 == g64) | (np.isnan(a64) & np.isnan(g64))
        diff = np.where(same, 0.0, np.abs(a64 - g64))
        diff = np.where(np.isnan(diff), np.inf, diff)  # NaN against a number: as far apart as can be
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_guarded = np.where(diff == 0, 0.0, diff / (np.abs(g64) + _EPS))
        rel = np.where(diff == 0, 0.0, diff / np.abs(g64))
    rel_guarded = np.where(np.isnan(rel_guarded), np.inf, rel_guarded)  # an infinite golden
    rel = np.where(np.isnan(rel), np.inf, rel)
    out = Comparison(name, dtype, a.shape, "PASS")
    if a.size:
        out.max_abs, out.max_rel = float(diff.max()), float(rel.max())
        out.mere, out.mare = float(rel_guarded.mean()), float(rel_guarded.max())
    if tol is not None:
        rtol, atol = float(tol[0]), float(tol[1])
        bad = diff > atol + rtol * np.abs(g64)
        ok, out.rule = not bad.any(), f"|a-g| <= {atol:g} + {rtol:g}|g|"
        score = np.where(bad, diff, -1.0)
    elif dtype in THRESHOLDS:
        t = THRESHOLDS[dtype]
        ok, out.rule = out.mere < t and out.mare < 10 * t, f"MERE < 2^{int(np.log2(t))}, MARE < 10x"
        score = rel_guarded
    else:
        ok, out.rule = bool(same.all()), "equal"
        score = diff
    if a.size and (not ok or score.max() > 0):
        out.worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(score)), a.shape))
        out.got, out.want = a[out.worst].item(), g[out.worst].item()
    if not ok:
        out.result = "FAIL"
    return out


def table(title: str, rows: List[Comparison]) -> str:
    lines = [title, f"{'output':<16}{'dtype':<12}{'shape':<16}{'max abs':>11}{'max rel':>11}{'MERE':>11}"
                    f"{'MARE':>11}  {'rule':<26}result"]
    for r in rows:
        if r.result == "NO_COMPARE":
            lines.append(f"{r.name:<16}{r.dtype:<12}{str(list(r.shape)):<16}{'':>44}  {'no golden':<26}NO_COMPARE")
            continue
        lines.append(f"{r.name:<16}{r.dtype:<12}{str(list(r.shape)):<16}{r.max_abs:>11.3g}{r.max_rel:>11.3g}"
                     f"{r.mere:>11.3g}{r.mare:>11.3g}  {r.rule:<26}{r.result}")
    return "\n".join(lines)


def check(title: str, outputs: Sequence[Tuple[str, Any]], goldens: Sequence[Any],
          options: Optional[dict] = None, file=None) -> List[Comparison]:
    """Compares each named output with the golden at its position, prints the table and raises
    GoldenMismatchError on the first FAIL."""
    if len(goldens) != len(outputs):
        raise _core.ArgumentError(f"{title}: set_verify_golden_data gave {len(goldens)} goldens but the run has "
                                  f"{len(outputs)} tensors ({', '.join(n for n, _ in outputs)}); give one per "
                                  f"tensor, None to skip one")
    tol = dict(_set_options(), **(options or {})).get("pass_verify_error_tol")
    check_tolerance(tol, title)
    rows = []
    for (name, value), golden in zip(outputs, goldens):
        if golden is None:
            a = _numpy(value)
            rows.append(Comparison(name, to_dtype(a.dtype).name, a.shape, "NO_COMPARE"))
        else:
            rows.append(compare(name, value, golden, tol))
    print(table(f"golden check: {title}", rows), file=file or sys.stdout)
    for r in rows:
        if r.result == "FAIL":
            where = (f"worst element {list(r.worst)}: got {r.got!r}, golden {r.want!r}" if r.worst is not None
                     else r.reason)
            raise GoldenMismatchError(f"{title}: output {r.name!r} differs from its golden ({r.rule}): {where}; "
                                      f"max abs {r.max_abs:.3g}, max rel {r.max_rel:.3g}, MERE {r.mere:.3g}, "
                                      f"MARE {r.mare:.3g}")
    return rows
