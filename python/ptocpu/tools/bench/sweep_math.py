"""`ptocpu bench --sweep` cases of the unary math family (src/ops/math.cpp) against torch eager:
the elementwise engine's shape classes (sweep_elementwise.py) for the transcendentals the device's
kernels lean on (exp, log, tanh, sigmoid, erf, sin), a rounding op and a predicate. The
transcendentals may differ from torch's in the last bit (both are within an ulp or so of the true
value): they are compared with a tolerance; floor and isnan bit for bit."""
from __future__ import annotations

import functools
from typing import Callable

from .cases import _MID, Case, torch
from .sweep_elementwise import _case, elementwise_sweep

# Where ptocpu's and torch's transcendentals may part: a few ulps of each dtype.
_TOL = {"fp32": (1e-5, 1e-6), "fp16": (2.0 ** -8, 1e-3), "bf16": (2.0 ** -5, 1e-2)}
_FLOATS = ("fp32", "fp16", "bf16")


def _more_functions() -> list[Case]:
    """The other functions once each over [1024, 1024] fp32 (the hyperbolic ones and log1p take their own
    paths, docs/ops/hyperbolic.md), and ceil / trunc of 16-bit floats (fused rows' lanes form)."""
    cases = []
    for op, lo, hi in (("sinh", -5.0, 5.0), ("cosh", -5.0, 5.0), ("log1p", -0.5, 10.0), ("expm1", -5.0, 5.0),
                       ("erfc", -3.0, 3.0), ("atan", -10.0, 10.0), ("log2", 0.01, 10.0), ("asinh", -10.0, 10.0)):
        cases.append(_case(f"SW-{op.upper()}-same-1M", op, getattr(torch, op), [_MID], "fp32", None, False, lo, hi,
                           str(list(_MID)), False, _TOL["fp32"]))
    for op, dt in (("ceil", "fp16"), ("trunc", "bf16")):
        cases.append(_case(f"SW-{op.upper()}-same-1M-{dt}", op, getattr(torch, op), [_MID], dt, None, False, -100.0,
                           100.0, str(list(_MID)), False))
    return cases


SWEEP: list[Callable[[], list[Case]]] = [] if torch is None else [
    functools.partial(elementwise_sweep, "exp", torch.exp, arity=1, dtypes=_FLOATS, tol=_TOL),
    functools.partial(elementwise_sweep, "log", torch.log, arity=1, dtypes=_FLOATS, lo=0.01, hi=10.0, tol=_TOL),
    functools.partial(elementwise_sweep, "tanh", torch.tanh, arity=1, dtypes=_FLOATS, lo=-4.0, hi=4.0, tol=_TOL),
    functools.partial(elementwise_sweep, "sigmoid", torch.sigmoid, arity=1, dtypes=_FLOATS, lo=-8.0, hi=8.0,
                      tol=_TOL),
    functools.partial(elementwise_sweep, "erf", torch.erf, arity=1, dtypes=_FLOATS, lo=-3.0, hi=3.0, tol=_TOL),
    functools.partial(elementwise_sweep, "sin", torch.sin, arity=1, dtypes=("fp32", "fp16"), lo=-10.0, hi=10.0,
                      tol=_TOL),
    functools.partial(elementwise_sweep, "floor", torch.floor, arity=1, dtypes=("fp32", "fp16", "bf16", "int32"),
                      lo=-100.0, hi=100.0),
    functools.partial(elementwise_sweep, "isnan", torch.isnan, arity=1, dtypes=_FLOATS, result_itemsize=1),
    _more_functions,
]

