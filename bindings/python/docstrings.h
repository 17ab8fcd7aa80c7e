// The Python signature and docstring of the public functions of ptocpu._core that are not ops (the
// ops' come from the op table, ptocpu/op_table.h), in one place so that help(), the generated
// _core.pyi stub and the docs/ pages say the same thing. Each text
// stands on its own: what the function does, what it accepts, its dtypes, its errors, an example.
#pragma once

namespace ptobind::docs {

struct Doc {
  const char* sig;   // nb::sig: the signature help() and the stub show
  const char* text;  // the docstring
};


inline constexpr Doc loop{
    "def loop(*args, **kwargs) -> range",
    R"(The core of PyPTO's loop: loop(stop) or loop(start, stop, step=1) yields the iteration values as ints
(ptocpu.loop yields them as SymbolicScalars).

PyPTO's keywords (name, idx_name, unroll_list, submit_before_loop) are accepted and only
matter on the device. step must be nonzero (ArgumentError); bounds must be integers (DTypeError).

>>> list(ptocpu.loop(0, 10, 4))
[0, 4, 8])"};

inline constexpr Doc set_platform{
    "def set_platform(name: str) -> None",
    R"(Select the platform whose limits this thread's calls follow.

Names: cpu (the default: no device limits), ascend950 (also 950, DAV_3510), atlas_a3 (a3),
atlas_a2 (a2). The Ascend profiles reproduce the documented chips' dtype lists, ranks, UB size
and offered ops, so code checked here fails as it would there. Unknown names are an
ArgumentError listing the names. See also `with ptocpu.platform(name):`.

>>> ptocpu.set_platform("ascend950"); ptocpu.get_platform()
'ascend950'
>>> ptocpu.set_platform("cpu"))"};

inline constexpr Doc get_platform{"def get_platform() -> str",
                                  "The name of this thread's platform (\"cpu\" unless set_platform changed it)."};

inline constexpr Doc platform_table{
    "def platform_table() -> list[dict[str, typing.Any]]",
    R"(The platform tables as data: for each platform its name, arch, aliases, UB bytes, extent
limit, whether empty inputs are allowed, and per op whether it is offered, its dtypes and its
rank range. docs/platforms.md is generated from it.)"};

inline constexpr Doc set_vec_tile_shapes{
    "def set_vec_tile_shapes(*dims: int) -> None",
    R"(Set this thread's vector tile shape (PyPTO's TileShape). With a tile shape set, every op
checks its tile rules and that its UB buffers fit the platform's UB bytes (TileError
otherwise). At least one dim, every dim > 0 (TileError); non-integers are a DTypeError.

>>> ptocpu.set_vec_tile_shapes(8, 64); ptocpu.get_vec_tile_shapes()
[8, 64]
>>> ptocpu.reset_vec_tile_shapes())"};

inline constexpr Doc get_vec_tile_shapes{"def get_vec_tile_shapes() -> list[int]",
                                         "This thread's tile shape as a list (as PyPTO's); empty when none is set."};

inline constexpr Doc reset_vec_tile_shapes{"def reset_vec_tile_shapes() -> None",
                                           "Clear this thread's tile shape: ops pick their own tiling and no tile rule applies."};

inline constexpr Doc set_num_threads{
    "def set_num_threads(n: int) -> None",
    R"(The number of threads every kernel runs on, 1 to 1024 (ArgumentError otherwise; the
PTOCPU_NUM_THREADS environment variable sets it at start; default: the number of cores). Kernels
release the GIL.

>>> ptocpu.set_num_threads(2); ptocpu.get_num_threads()
2)"};

inline constexpr Doc get_num_threads{"def get_num_threads() -> int", "The number of threads kernels run on."};

inline constexpr Doc build_info{
    "def build_info() -> dict[str, str]",
    "How this build was made: SIMD targets compiled and the one dispatched on this CPU, build type, compiler."};

inline constexpr Doc set_kernel_tuning{
    "def _set_kernel_tuning(stream_bytes: int = -1, isa: str | None = None, prefetch_streams: bool | None = None) -> None",
    R"(For tests and benchmarks: write dense outputs of at least stream_bytes with streaming stores,
cap the hand-written kernels at isa ("baseline", "avx2", "avx512") and turn the software
prefetches of data read in order on or off. -1 / None restore the defaults (half the last-level
cache; the best ISA of this CPU; prefetches on Intel CPUs only). Not safe while kernels run.)"};

inline constexpr Doc take_ub_use{
    "def _take_ub_use() -> dict[str, typing.Any] | None",
    R"(For tracing (docs/tracing.md): the UB use that the last op call with a UB check recorded on
this thread, as {"op", "limit", "total", "buffers": [(what, bytes), ...]}, then cleared. None
when no op checked its UB since the last take.)"};

inline constexpr Doc asarray{
    "def asarray(obj: typing.Any, dtype: DType | str | typing.Any | None = None, *, copy: bool | None = None) -> Tensor",
    R"(A tensor from a ptocpu.Tensor, a numpy array (ml_dtypes dtypes included), a torch CPU tensor,
anything else with __dlpack__, the buffer protocol, numpy scalars or nested lists (dtypes
inferred as numpy does).

Zero-copy where the layout allows: writes through either side are seen by both. copy=False
raises ArgumentError where a copy would be needed (byte-swapped data, strides that are not
whole elements, a list, a dtype change); copy=True always copies. dtype= converts (a copy).
A read-only array gives a read-only tensor; a torch tensor that requires grad is read-only.

>>> ptocpu.asarray([[1, 2], [3, 4]]).dtype
DataType.DT_INT64)"};

inline constexpr Doc from_numpy{
    "def from_numpy(a: typing.Any, *, copy: bool | None = None) -> Tensor",
    R"(A tensor over a numpy array's memory (see asarray); copy=False refuses arrays that need a copy.)"};

inline constexpr Doc to_dtype{
    "def dtype(obj: typing.Any) -> DType",
    R"(The DType of a DT_* constant, a numpy / ml_dtypes / torch dtype, or a name ("float16", "bf16",
"float8_e4m3fn", ...). An unknown name is an ArgumentError listing the names; any other object
(an int, None, a numpy dtype without a ptocpu counterpart) is a DTypeError.

>>> ptocpu.dtype("half")
DataType.DT_FP16)"};

inline constexpr Doc numpy_dtype{
    "def numpy_dtype(dtype: DType | str | typing.Any) -> typing.Any",
    R"(The numpy dtype of a ptocpu dtype (any spelling ptocpu.dtype accepts); bf16 and the fp8 types
give ml_dtypes' dtypes.

>>> ptocpu.numpy_dtype(ptocpu.DT_BF16)
dtype(bfloat16))"};

inline constexpr Doc from_dlpack{
    "def from_dlpack(x: typing.Any) -> Tensor",
    R"(A zero-copy tensor over anything with __dlpack__ (torch CPU tensors, numpy arrays, ...).
Read-only memory (and a torch tensor that requires grad) gives a read-only tensor. Objects without
__dlpack__ are a DTypeError; dtypes without a ptocpu dtype are a DTypeError; non-CPU devices,
malformed capsules and producers that refuse to export an ArgumentError.)"};

inline constexpr Doc dtype_from_name{
    "def dtype_from_name(name: str) -> DType",
    R"(The DType of a name: DT_* names and numpy / torch spellings ("float16", "half", "bf16",
"float8_e4m3fn", ...). Unknown names are an ArgumentError listing the accepted ones.)"};

inline constexpr Doc dtype_table{
    "def dtype_table() -> list[dict[str, typing.Any]]",
    "Per-dtype facts from the core's one table: dtype, itemsize, numpy name, whether ml_dtypes provides it, and whether it is a narrow storage format."};

inline constexpr Doc itemsize{"def itemsize(dtype: DType | str | typing.Any) -> int",
                              "Bytes per element of a dtype (any spelling ptocpu.dtype accepts)."};

}  // namespace ptobind::docs
