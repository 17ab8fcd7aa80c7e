"""ptocpu: PyPTO's tensor/tile operators on ordinary CPUs.

`import ptocpu as pypto` runs PyPTO-style code: the same names, semantics and checks as the
documented Ascend hardware (select a profile with set_platform), backed by a C++ core.
"""
import contextlib as _contextlib
from collections.abc import Iterator
from pkgutil import extend_path as _extend_path

# Developer builds put ptocpu/_core next to the build tree (PYTHONPATH=python:build).
__path__ = _extend_path(__path__, __name__)

from . import _core  # noqa: E402
from ._core import (  # noqa: E402,F401
    # dtypes (docs/dtypes.md), tensors (docs/tensors.md), errors (docs/errors.md)
    DType, Tensor, Error, DTypeError, ArgumentError, IndexOutOfRange, TileError, UnsupportedError,
    DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_UINT8, DT_UINT16, DT_UINT32, DT_UINT64, DT_BOOL,
    DT_FP16, DT_BF16, DT_FP32, DT_FP64, DT_FP8E4M3, DT_FP8E5M2, DT_FP8E8M0,
    from_dlpack, itemsize,
    # operators (docs/ops/; scatter_ / scatter and the indexing family are also Tensor methods)
    index_select, interleave, deinterleave, scatter_, scatter, strided_slice, strided_slice_view,
    gather, scatter_update, index_add_, index_add, gathermask,
    # platforms (docs/platforms.md), tiles and the kernel model (docs/kernel_model.md), threads, build
    set_platform, get_platform, platform_table,
    set_vec_tile_shapes, get_vec_tile_shapes, reset_vec_tile_shapes,
    view, assemble, loop,
    set_num_threads, get_num_threads, build_info,
)
from ._convert import asarray, from_numpy, to_dtype as dtype, numpy_dtype  # noqa: E402,F401
from . import frontend  # noqa: E402,F401  (frontend.jit)
from .frontend import RunMode  # noqa: E402,F401
from . import error  # noqa: E402,F401  (pypto.error.FeError)
from ._pypto_compat import (  # noqa: E402,F401  PyPTO's surface names (docs/running_pypto_programs.md)
    SymbolicScalar, symbolic_scalar, min, max, DataType, TileOpFormat, StatusType, DYN, DYNAMIC, STATIC, DT_DOUBLE,
    options, loop, loop_unroll, bytes_of, ceildiv, ceil, reset_options, set_semantic_label, cond, is_loop_begin,
    is_loop_end, set_cube_tile_shapes, get_cube_tile_shapes, CompStage,
)
from ._graph import function, from_torch, recorded as _recorded  # noqa: E402,F401
from . import runtime  # noqa: E402,F401

__version__ = "0.1.0"

for _kind in _pypto_compat._OPTION_KINDS:  # noqa: F821  set_pass_options / get_pass_options / ...
    globals()[f"set_{_kind}_options"] = _pypto_compat._option_setter(_kind)  # noqa: F821
    globals()[f"get_{_kind}_options"] = _pypto_compat._option_getter(_kind)  # noqa: F821
del _kind
tensor = Tensor  # PyPTO: pypto.tensor is the class, so isinstance(t, pypto.tensor) holds
jit = frontend.jit

_pypto_compat.install_tensor_methods(_recorded)  # noqa: F821  (the submodule is bound by the import above)


@_contextlib.contextmanager
def platform(name: str) -> Iterator[None]:
    """`with ptocpu.platform("ascend950"):` -- the platform for this block (this thread); the
    previous one is restored afterwards, also when the block raises. Names as for set_platform."""
    previous = get_platform()
    set_platform(name)
    try:
        yield
    finally:
        set_platform(previous)


@_contextlib.contextmanager
def vec_tile_shapes(*dims: int) -> Iterator[None]:
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


# Tracing and golden checks (docs/tracing.md): PyPTO's debug / verify switches.
from . import trace, golden  # noqa: E402,F401
from .debug import set_debug_options, get_debug_options  # noqa: E402,F401
from .golden import set_verify_options, get_verify_options, set_verify_golden_data  # noqa: E402,F401

__all__ = [
    "DType", "Tensor", "Error", "DTypeError", "ArgumentError", "IndexOutOfRange", "TileError", "UnsupportedError",
    "DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64", "DT_BOOL",
    "DT_FP16", "DT_BF16", "DT_FP32", "DT_FP64", "DT_FP8E4M3", "DT_FP8E5M2", "DT_FP8E8M0",
    "tensor", "from_dlpack", "from_numpy", "asarray", "dtype", "numpy_dtype", "itemsize",
    "index_select", "interleave", "deinterleave", "scatter_", "scatter", "strided_slice", "strided_slice_view",
    "gather", "scatter_update", "index_add_", "index_add", "gathermask",
    "set_platform", "get_platform", "platform", "platform_table",
    "set_vec_tile_shapes", "get_vec_tile_shapes", "reset_vec_tile_shapes", "vec_tile_shapes",
    "view", "assemble", "loop", "loop_unroll", "frontend", "RunMode",
    "set_num_threads", "get_num_threads", "build_info",
    # PyPTO's program surface (docs/running_pypto_programs.md)
    "function", "from_torch", "runtime", "error", "jit", "options", "set_cube_tile_shapes", "get_cube_tile_shapes", "reset_options", "set_semantic_label",
    *[f"{verb}_{kind}_options" for kind in _pypto_compat._OPTION_KINDS for verb in ("set", "get")],  # noqa: F821
    "SymbolicScalar", "symbolic_scalar", "min", "max", "cond", "is_loop_begin", "is_loop_end", "bytes_of", "ceildiv", "ceil",
    "DataType", "TileOpFormat", "CompStage", "StatusType", "DYN", "DYNAMIC", "STATIC", "DT_DOUBLE",
    "trace", "golden", "set_debug_options", "get_debug_options", "set_verify_options", "get_verify_options",
    "set_verify_golden_data",
]
del Iterator
