"""ptocpu: PyPTO's tensor/tile operators on ordinary CPUs.

`import ptocpu as pypto` runs PyPTO-style code: the same names, semantics and checks as the
documented Ascend hardware (select a profile with set_platform), backed by a C++ core.

Layers (docs/CONTRIBUTING.md#layout): the core (`_core`, C++: tensors, the op table and every
op's function / method / operator); `engine` (the dispatch handlers: pypto.function record /
replay, tracing, golden checks); the language surface (this module, `frontend`, `runtime`,
`error`, `lang`); `tools` (the command, verify, bench, the runner). None imports a layer above it.
"""
import contextlib as _contextlib
from collections.abc import Iterator as _Iterator
from pkgutil import extend_path as _extend_path

# Developer builds put ptocpu/_core next to the build tree (PYTHONPATH=python:build).
__path__ = _extend_path(__path__, __name__)

# The core's errors derive from error.CoreError (PyPTO's PyptoError), which it finds imported.
from . import error  # noqa: E402,F401
from . import _core  # noqa: E402
# The core's public names: tensors and dtypes (docs/tensors.md, docs/dtypes.md), errors
# (docs/errors.md), platforms, tiles and threads, and every operator of the op table (docs/ops/).
from ._core import *  # noqa: E402,F401,F403
from ._core import Tensor, get_vec_tile_shapes, set_vec_tile_shapes, reset_vec_tile_shapes  # noqa: E402,F401  (used below)

# What the core asks of Python: storage-less tensors (annotations, declarations with dynamic
# dims), the symbolic entries of a valid shape, and PyPTO's Element (a typed scalar argument).
from .lang import element as _element, symbolic as _symbolic, tensor_spec as _tensor_spec  # noqa: E402
_core._register_tensor_hooks(_tensor_spec, _symbolic.KnownDim, _element.Element)

_INTERNAL = ("OpCall", "dtype_from_name", "dtype_table")  # in the core for the engine and the tools
for _name in _INTERNAL:
    del globals()[_name]

from . import experimental, frontend, runtime  # noqa: E402,F401
from .engine import golden, trace  # noqa: E402,F401
from .engine.golden import set_verify_golden_data  # noqa: E402,F401
from .engine.record import function  # noqa: E402,F401
from .frontend import RunMode  # noqa: E402,F401
from .lang.convert import from_torch  # noqa: E402,F401
from .lang.element import Element  # noqa: E402,F401
from .lang.enums import (  # noqa: E402,F401
    DataType, DT_DOUBLE, DT_FP8, CompStage, StatusType, DYN, DYNAMIC, STATIC, AtomicRMWMode, ROUND_UP, ROUND_DOWN,
)
from .lang.loops import loop, loop_unroll  # noqa: E402,F401
from .lang.operators import install as _install_operators  # noqa: E402
from .lang.options import *  # noqa: E402,F401,F403  (docs/running_pypto_programs.md#options)
from .lang import options as _options_module  # noqa: E402
from .lang.platform import platform  # noqa: E402,F401
from .lang.symbolic import (  # noqa: E402,F401
    SymbolicScalar, SatStatus, SymInt, symbolic_scalar, min, max, ceildiv, ceil, cond, is_loop_begin, is_loop_end,
    bytes_of,
)
from .lang.unsupported import module_getattr as _module_getattr, upstream_names as _upstream_names  # noqa: E402
from . import _controller, experimental, pypto_impl  # noqa: E402,F401

_install_operators()  # Tensor.__matmul__ (docs/ops/matmul.md)

__version__ = "0.1.0"

tensor = Tensor  # PyPTO: pypto.tensor is the class, so isinstance(t, pypto.tensor) holds
element = Element
jit = frontend.jit


@_contextlib.contextmanager
def vec_tile_shapes(*dims: int) -> _Iterator[None]:
    """`with ptocpu.vec_tile_shapes(4, 16):` -- the tile shape for this block (this thread); the
    previous one (or none) is restored afterwards. Rules as for set_vec_tile_shapes."""
    previous = get_vec_tile_shapes()
    set_vec_tile_shapes(*dims)
    try:
        yield
    finally:
        if previous:
            set_vec_tile_shapes(*previous)
        else:
            reset_vec_tile_shapes()


# pypto.<name> for a name PyPTO has and ptocpu does not: UnsupportedError (also an AttributeError).
__getattr__ = _module_getattr(__name__, _upstream_names)

__all__ = [
    *[name for name in _core.__all__ if name not in _INTERNAL],
    "tensor", "element", "Element", "platform", "vec_tile_shapes", "loop_unroll", "frontend", "RunMode",
    # PyPTO's program surface (docs/running_pypto_programs.md)
    "function", "from_torch", "runtime", "error", "jit", "experimental", "pypto_impl", *_options_module.__all__,
    "SymbolicScalar", "SatStatus", "SymInt", "symbolic_scalar", "min", "max", "cond", "is_loop_begin", "is_loop_end",
    "bytes_of", "ceildiv", "ceil", "DataType", "CompStage", "StatusType", "DYN", "DYNAMIC", "STATIC", "DT_DOUBLE", "DT_FP8",
    "AtomicRMWMode", "ROUND_UP", "ROUND_DOWN", "trace", "golden", "set_verify_golden_data",
]
del _name
