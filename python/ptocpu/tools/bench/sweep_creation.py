"""`ptocpu bench --sweep` cases of the creation family (docs/ops/full.md, arange.md, one_hot.md,
random.md) against torch making the same tensor: torch.full / zeros / ones / arange,
torch.nn.functional.one_hot, torch.rand / torch.randn, from 4K to 64M elements, every dtype width,
1-D to 4-D. Fills, ranges and one-hot rows are compared bit for bit; random draws cannot be equal
to torch's, so their check is the distribution (range, mean, variance).
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

import ptocpu

from .cases import Case, Tool, _index, _torch, to_numpy, torch

_N = {"4K": 1 << 12, "256K": 1 << 18, "16M": 1 << 24, "64M": 1 << 26}
_DTYPES = {"fp32": ("DT_FP32", "float32"), "fp16": ("DT_FP16", "float16"), "bf16": ("DT_BF16", "bfloat16"),
           "int8": ("DT_INT8", "int8"), "int32": ("DT_INT32", "int32"), "int64": ("DT_INT64", "int64")}


def _shape_of(n: int, rank: int) -> tuple:
    """n elements as a rank-`rank` shape with a 4096-wide (or narrower) last dim."""
    if rank == 1:
        return (n,)
    last = min(n, 4096)
    rest = n // last
    dims = [rest] + [1] * (rank - 2)
    while rank > 2 and dims[0] % 16 == 0 and dims.count(1):
        dims[0] //= 16
        dims[dims.index(1)] = 16
    return tuple(dims) + (last,)


def _label(shape: tuple) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _creation_case(id_: str, op: str, call: str, dtype: str, ours: Callable, theirs: Callable | None, out_bytes: int,
                   tiny: bool, check=None, build=None) -> Case:
    def tools(inp):
        t = {"ptocpu": Tool(functools.partial(ours, inp) if build else ours)}
        if torch is not None and theirs is not None:
            t["torch"] = Tool(functools.partial(theirs, inp) if build else theirs)
        return t
    return Case(id_, op, call, dtype, build or (lambda rng: {}), tools, lambda inp: out_bytes, tiny=tiny, check=check)


def _sizes(op: str, tag: str, make: Callable[[str, tuple, str, bool], Case]) -> list[Case]:
    """The op's cases: fp32 1-D at every size, 2-D / 4-D at 16M, the other dtype widths at 16M."""
    out = [make(f"SW-{tag}-1d-{size}", (n,), "fp32", n <= 4096) for size, n in _N.items()]
    out.append(make(f"SW-{tag}-2d-16M", _shape_of(_N["16M"], 2), "fp32", False))
    out.append(make(f"SW-{tag}-4d-16M", _shape_of(_N["16M"], 4), "fp32", False))
    return out


# ---- full / zeros / ones -----------------------------------------------------------------------

def _fill_sweep(op: str, widths: tuple) -> list[Case]:
    tag = op.upper()

    def make(id_, shape, dt, tiny):
        name, torch_name = _DTYPES[dt]
        dtype = getattr(ptocpu, name)
        itemsize = ptocpu.itemsize(dtype)
        if op == "full":
            value = 3 if dt.startswith("int") else 1.5
            ours = functools.partial(ptocpu.full, list(shape), value, dtype)
            theirs = torch and functools.partial(torch.full, shape, value, dtype=getattr(torch, torch_name))
            call = f"full({_label(shape)}, {value}, {name})"
        else:
            ours = functools.partial(getattr(ptocpu, op), *shape, dtype=dtype)
            theirs = torch and functools.partial(getattr(torch, op), shape, dtype=getattr(torch, torch_name))
            call = f"{op}({_label(shape)}, dtype={name})"
        n = int(np.prod(shape))
        return _creation_case(id_, op, call, dt, ours, theirs, n * itemsize, tiny)

    out = _sizes(op, tag, make)
    out += [make(f"SW-{tag}-16M-{dt}", (_N["16M"],), dt, False) for dt in widths]
    return out


def full_sweep() -> list[Case]:
    return _fill_sweep("full", ("fp16", "bf16", "int8", "int32"))


def zeros_sweep() -> list[Case]:
    return _fill_sweep("zeros", ("fp16", "int32"))


def ones_sweep() -> list[Case]:
    return _fill_sweep("ones", ("bf16", "int32"))


# ---- arange --------------------------------------------------------------------------------------

def arange_sweep() -> list[Case]:
    """Exact ranges (every value representable), so torch's start + i * step and the device's
    additions agree bit for bit: fp32 by 0.5 and 1.0, int32 by 3."""
    out = []
    for size, n in _N.items():
        for kind, (ours, theirs, call) in {
            "fp32": (functools.partial(ptocpu.arange, 0.0, n / 2, 0.5),
                     torch and functools.partial(torch.arange, 0.0, n / 2, 0.5, dtype=torch.float32),
                     f"arange(0.0, {n / 2:g}, 0.5)"),
            "int32": (functools.partial(ptocpu.arange, 0, 3 * n, 3),
                      torch and functools.partial(torch.arange, 0, 3 * n, 3, dtype=torch.int32),
                      f"arange(0, {3 * n}, 3)"),
        }.items():
            out.append(_creation_case(f"SW-ARANGE-{kind}-{size}", "arange", call, kind, ours, theirs, 4 * n,
                                      n <= 4096))
    ours = functools.partial(ptocpu.arange, 1.0, _N["16M"] + 1.0)
    theirs = torch and functools.partial(torch.arange, 1.0, _N["16M"] + 1.0, dtype=torch.float32)
    out.append(_creation_case("SW-ARANGE-fp32-16M-step1", "arange", f"arange(1.0, {_N['16M'] + 1}.0)", "fp32",
                              ours, theirs, 4 * _N["16M"], False))
    return out


# ---- one_hot ------------------------------------------------------------------------------------

def one_hot_sweep() -> list[Case]:
    """int64 indices (torch's one_hot takes no other), 2 to 1024 classes, 1-D to 3-D inputs."""
    out = []
    for id_, shape, classes in (("SW-ONEHOT-4K-c16", (256,), 16), ("SW-ONEHOT-256K-c64", (4096,), 64),
                                ("SW-ONEHOT-16M-c2", (1 << 23,), 2), ("SW-ONEHOT-16M-c16", (1024, 1024), 16),
                                ("SW-ONEHOT-16M-c1024", (16, 1024), 1024), ("SW-ONEHOT-64M-c32", (64, 256, 128), 32)):
        def build(rng, shape=shape, classes=classes):
            return {"x": _index(rng, shape, classes), "classes": classes}

        def ours(inp):
            return ptocpu.one_hot(inp["px"], inp["classes"])

        def theirs(inp):
            return torch.nn.functional.one_hot(inp["tx"], inp["classes"])

        def prepared(rng, build=build):
            inp = build(rng)
            inp["px"] = ptocpu.asarray(inp["x"])
            if torch is not None:
                inp["tx"] = _torch(inp["x"])
            return inp
        n = int(np.prod(shape)) * classes
        out.append(_creation_case(id_, "one_hot", f"one_hot(int64 {_label(shape)}, {classes})", "int64", ours,
                                  theirs, 8 * n + 8 * int(np.prod(shape)), n <= 4096, build=prepared))
    return out


# ---- uniform / normal -------------------------------------------------------------------------------

def _distribution(low: float | None, high: float | None, mean: float, std: float):
    """A check of two random draws of the same shape and width: values inside [low, high), mean and
    standard deviation near the distribution's (a few standard errors)."""
    def check(ours, theirs) -> str | None:
        a, b = to_numpy(ours), to_numpy(theirs)
        if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
            return f"shape / width {a.shape} {a.dtype} vs {b.dtype}"
        for name, v in (("ptocpu", a), ("torch", b)):
            v = v.astype(np.float64)
            if low is not None and (v.min() < low or v.max() >= high):
                return f"{name} values outside [{low}, {high})"
            tol = 6 * std / np.sqrt(v.size) + 4e-3  # + fp16 / bf16 quantisation
            if abs(v.mean() - mean) > tol or abs(v.std() - std) > tol + 2e-3:
                return f"{name} mean {v.mean():.4f} / std {v.std():.4f}, expected {mean} / {std:.4f}"
        return None
    return check


def _random_sweep(op: str, torch_name: str, check) -> list[Case]:
    tag = op.upper()

    def make(id_, shape, dt, tiny):
        name, tname = _DTYPES[dt]
        dtype = getattr(ptocpu, name)
        ours = functools.partial(getattr(ptocpu, op), list(shape), [1234], [0, 1], [1], dtype)
        theirs = torch and functools.partial(getattr(torch, torch_name), shape, dtype=getattr(torch, tname))
        n = int(np.prod(shape))
        return _creation_case(id_, op, f"{op}({_label(shape)}, [1234], [0, 1], [1], {name})", dt, ours, theirs,
                              n * ptocpu.itemsize(dtype), tiny, check=check)

    out = _sizes(op, tag, make)
    out += [make(f"SW-{tag}-16M-{dt}", (_N["16M"],), dt, False) for dt in ("fp16", "bf16")]
    return out


def uniform_sweep() -> list[Case]:
    return _random_sweep("uniform", "rand", _distribution(0.0, 1.0, 0.5, float(np.sqrt(1 / 12))))


def normal_sweep() -> list[Case]:
    return _random_sweep("normal", "randn", _distribution(None, None, 0.0, 1.0))


SWEEP: list[Callable[[], list[Case]]] = [full_sweep, zeros_sweep, ones_sweep, arange_sweep, one_hot_sweep,
                                          uniform_sweep, normal_sweep]
