"""What verify's case modules share: the Case and Result records, random data per dtype, bit-exact
comparison with numpy / torch references, MERE / MARE, error cases, and the registry that maps each
op of the op table to its case generators (docs/precision.md)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

import ml_dtypes
import numpy as np

import ptocpu

from ptocpu import numpy_dtype

try:  # a second, independent reference where installed
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

PLATFORMS = [p["name"] for p in ptocpu.platform_table()]
# cann-bench thresholds T per dtype (docs/precision.md); a case passes cann-bench when MERE < T, MARE < 10 T.
THRESHOLDS = {"DT_FP16": 2**-10, "DT_BF16": 2**-7, "DT_FP32": 2**-13, "DT_FP8E4M3": 2**-3, "DT_FP8E5M2": 2**-2}


@dataclass
class Result:
    op: str
    platform: str
    dtype: str
    case: str
    passed: bool
    detail: str = ""
    mere: float | None = None
    mare: float | None = None


@dataclass
class Case:
    op: str
    platform: str
    dtype: str
    name: str
    run: Callable[[], tuple[bool, str, list[tuple[np.ndarray, np.ndarray]]]] = field(repr=False)


# ---------------------------------------------------------------- data and comparison helpers

def _platform_dtypes(platform: str, op: str) -> list[str]:
    table = {p["name"]: p for p in ptocpu.platform_table()}[platform]
    entry = table["ops"][op]
    return [d.strip() for d in entry["dtypes"].split(",") if d.strip()] if entry["offered"] else []


def _random(rng: np.random.Generator, shape, dtype_name: str) -> np.ndarray:
    npdt = numpy_dtype(getattr(ptocpu, dtype_name))
    if npdt == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if np.issubdtype(npdt, np.integer):
        info = np.iinfo(npdt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(npdt)
    values = rng.standard_normal(size=shape) * 4
    if npdt == np.dtype(ml_dtypes.float8_e8m0fnu):
        values = np.abs(values) + 0.25  # unsigned powers of two: no zero, no negatives
    return values.astype(npdt)


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def _same(got, want: np.ndarray) -> tuple[bool, str]:
    got = np.asarray(got.numpy() if isinstance(got, ptocpu.Tensor) else got)
    if got.shape != want.shape:
        return False, f"shape {got.shape} != reference {want.shape}"
    if got.dtype != want.dtype:
        return False, f"dtype {got.dtype} != reference {want.dtype}"
    diff = np.flatnonzero(_bits(got).ravel() != _bits(want).ravel())
    if diff.size:
        i = np.unravel_index(diff[0], want.shape)
        return False, f"{diff.size} elements differ, first at {tuple(int(v) for v in i)}: {got[i]!r} != {want[i]!r}"
    return True, ""


def _compare(pairs: list[tuple]) -> tuple[bool, str, list]:
    """pairs of (ptocpu result, bit-exact reference[, float64 reference for MERE / MARE])."""
    for got, want, *_ in pairs:
        ok, detail = _same(got, want)
        if not ok:
            return False, detail, pairs
    return True, "", pairs


_SMALL_FLOATS = tuple(np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
                                               ml_dtypes.float8_e8m0fnu))


def _relative_errors(pairs, reference64) -> tuple[float, float]:
    """cann-bench's MERE / MARE of the first output against a float64 reference (finite values)."""
    got = pairs[0][0]
    got = np.asarray(got.numpy() if isinstance(got, ptocpu.Tensor) else got)
    a = got.astype(np.float64).ravel()
    g = np.asarray(reference64, dtype=np.float64).ravel()
    finite = np.isfinite(g) & np.isfinite(a)
    if not finite.any():
        return 0.0, 0.0
    rel = np.abs(a[finite] - g[finite]) / (np.abs(g[finite]) + 1e-7)
    return float(rel.mean()), float(rel.max())


_TORCH_VIEWS = {"bfloat16": ("int16", "bfloat16"), "float8_e4m3fn": ("uint8", "float8_e4m3fn"),
                "float8_e5m2": ("uint8", "float8_e5m2"), "float8_e8m0fnu": ("uint8", "float8_e8m0fnu")}


def _to_torch(a: np.ndarray):
    a = np.require(a, requirements="C")  # keeps 0-d arrays 0-d
    if a.dtype.name in _TORCH_VIEWS:
        carrier, name = _TORCH_VIEWS[a.dtype.name]
        return torch.from_numpy(a.view(carrier)).view(getattr(torch, name))
    return torch.from_numpy(a)


def _from_torch(t, like: np.ndarray) -> np.ndarray:
    t = t.contiguous()
    if like.dtype.name in _TORCH_VIEWS:
        carrier = _TORCH_VIEWS[like.dtype.name][0]
        return t.view(getattr(torch, carrier)).numpy().view(like.dtype)
    return t.numpy()


def _torch_reference(compute: Callable[..., object], like: np.ndarray, *arrays: np.ndarray) -> list[np.ndarray]:
    """torch's results for `compute(*torch tensors)`, or [] where torch is absent or lacks the dtype."""
    if torch is None:
        return []
    try:
        out = compute(*(_to_torch(a) for a in arrays))
    except (RuntimeError, TypeError, NotImplementedError):
        return []
    outs = out if isinstance(out, (tuple, list)) else [out]
    return [_from_torch(o, like) for o in outs]


def _libm(math_fn: Callable[..., float], numpy_fn: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """A float64 reference through the C library's double function (Python's math module: within
    1 ulp, whatever numpy's version -- numpy 1.24's AVX-512 float64 sin or arctan2 is up to 4 ulps
    off); numpy's value where math refuses the argument (inf, outside the domain, overflow)."""
    def reference(*arrays):
        arrays = np.broadcast_arrays(*(np.asarray(a, np.float64) for a in arrays))
        with np.errstate(all="ignore"):
            out = np.array(numpy_fn(*arrays), np.float64)
        flat = out.reshape(-1)
        for i, args in enumerate(zip(*(a.reshape(-1) for a in arrays))):
            try:
                flat[i] = math_fn(*(float(v) for v in args))
            except (ValueError, OverflowError):
                pass
        return out
    return reference


def _expect_error(call: Callable[[], object], error: type, needle: str) -> tuple[bool, str, list]:
    try:
        call()
    except error as e:  # noqa: PERF203
        message = str(e)
        if needle not in message:
            return False, f"{error.__name__} raised but message lacks {needle!r}: {message}", []
        return True, "", []
    except Exception as e:  # noqa: BLE001
        return False, f"expected {error.__name__}, got {type(e).__name__}: {e}", []
    return False, f"expected {error.__name__}, nothing was raised", []




# ---------------------------------------------------------------- the registry

Generator = Callable[[np.random.Generator, bool], Iterator[Case]]
GENERATORS: dict[str, Generator] = {}


def cases_for(*ops: str) -> Callable[[Generator], Generator]:
    """Decorator: the function yields the cases of these ops (one generator may serve several)."""
    def register(generator: Generator) -> Generator:
        for op in ops:
            GENERATORS[op] = generator
        return generator
    return register
