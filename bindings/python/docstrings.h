// The Python signature and docstring of every public function of ptocpu._core, in one place so
// that help(), the generated _core.pyi stub and the docs/ pages say the same thing. Each text
// stands on its own: what the function does, what it accepts, its dtypes, its errors, an example.
#pragma once

namespace ptobind::docs {

struct Doc {
  const char* sig;   // nb::sig: the signature help() and the stub show
  const char* text;  // the docstring
};

// What every tensor parameter accepts: a ptocpu.Tensor, or anything ptocpu.asarray takes
// (ArrayLike is numpy.typing.ArrayLike, imported into the stub by stub_patterns.txt).
#define PTO_ARRAY "Tensor | ArrayLike"

inline constexpr Doc index_select{
    "def index_select(input: " PTO_ARRAY ", dim: int, index: " PTO_ARRAY ") -> Tensor",
    R"(Gather slices of input along dim (numpy.take / torch.index_select).

out.shape = input.shape[:dim] + index.shape + input.shape[dim+1:], dtype of input;
out[a.., i.., b..] = input[a.., index[i..], b..]. A new contiguous tensor.

input: any dtype on the cpu platform (see docs/ops/index_select.md for each chip).
index: int32 or int64, rank >= 1; every value in [0, input.shape[dim]) -- negative values are
errors, not wrapped. All values are checked before anything is written.

Raises IndexOutOfRange (dim or an index value out of range), DTypeError (index dtype, or an
input dtype the platform does not list), ArgumentError (ranks), TileError (tile rules when a
tile shape is set).

>>> x = ptocpu.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
>>> ptocpu.index_select(x, 0, [0, 2]).tolist()
[[1.0, 2.0], [5.0, 6.0]])"};

inline constexpr Doc interleave{
    "def interleave(input: " PTO_ARRAY ", other: " PTO_ARRAY ") -> tuple[Tensor, Tensor]",
    R"(Interleave two tensors along the last axis and split the result in two halves.

With n = input.shape[-1] (even), build s[2k] = input[..., k], s[2k+1] = other[..., k]; return
(s[..., :n], s[..., n:]), each of input's shape and dtype. other must have input's shape and
dtype. Offered on cpu and ascend950; on atlas_a2 / atlas_a3 it raises UnsupportedError.

Raises ArgumentError (odd last dim, shape mismatch, rank), DTypeError (dtype mismatch or a
dtype the platform does not list), TileError, UnsupportedError.

>>> a, b = ptocpu.interleave([[0, 1, 2, 3]], [[10, 11, 12, 13]])
>>> a.tolist(), b.tolist()
([[0, 10, 1, 11]], [[2, 12, 3, 13]]))"};

inline constexpr Doc deinterleave{
    "def deinterleave(input: " PTO_ARRAY ", other: " PTO_ARRAY " | None = None) -> tuple[Tensor, Tensor]",
    R"(Split even and odd elements of the last axis (the inverse of interleave).

Single input: returns (input[..., 0::2], input[..., 1::2]); the last dim must be even.
Two inputs: c = concat(input, other) on the last axis, returns (c[..., 0::2], c[..., 1::2]),
each of input's shape; deinterleave(*interleave(a, b)) == (a, b).

Raises ArgumentError (odd last dim, shape mismatch), DTypeError, TileError, UnsupportedError
(not offered on atlas_a2 / atlas_a3).

>>> even, odd = ptocpu.deinterleave([[0, 10, 1, 11]])
>>> even.tolist(), odd.tolist()
([[0, 1]], [[10, 11]]))"};

#define PTO_SCATTER_PARAMS "dim: int, index: " PTO_ARRAY ", src: " PTO_ARRAY " | float | int | bool, *, reduce: str | None = None"
#define PTO_SCATTER_TEXT \
  "For every position p of index (row-major), q = p with q[dim] = index[p]:\n" \
  "input[q] = v (reduce None), += v (\"add\") or *= v (\"multiply\"), where v = src[p] or the scalar src.\n" \
  "\n" \
  "index: int32 / int64 of input's rank, index.shape[a] <= input.shape[a] for a != dim, values in\n" \
  "[0, input.shape[dim]) (checked before any write). A tensor src has input's dtype and rank and\n" \
  "is at least index's shape (only that prefix is read). Duplicates apply in row-major order (the\n" \
  "last write wins; add / multiply apply every contribution). fp16 / bf16 accumulate in fp32 and\n" \
  "round once; integers wrap. BOOL and fp8 take reduce None only. A scalar src is converted to\n" \
  "input's dtype first (an integer out of range is an ArgumentError).\n" \
  "\n" \
  "Raises IndexOutOfRange, DTypeError, ArgumentError, TileError; a failed call writes nothing."

inline constexpr Doc scatter_inplace{
    "def scatter_(input: " PTO_ARRAY ", " PTO_SCATTER_PARAMS ") -> Tensor",
    PTO_SCATTER_TEXT R"(

In place: writes input (through views too) and returns it -- the same object for a
ptocpu.Tensor, a ptocpu.Tensor over the same memory for a numpy array or torch tensor.

>>> x = ptocpu.tensor([3, 5], ptocpu.DT_FP32)
>>> ptocpu.scatter_(x, 0, [[1, 2], [0, 1]], 2.0).tolist()[0]
[2.0, 0.0, 0.0, 0.0, 0.0])"};

inline constexpr Doc scatter{
    "def scatter(input: " PTO_ARRAY ", " PTO_SCATTER_PARAMS ") -> Tensor",
    PTO_SCATTER_TEXT R"(

Out of place: returns a new tensor; input is left untouched.

>>> ptocpu.scatter([[0, 0], [0, 0]], 1, [[1], [0]], 7).tolist()
[[0, 7], [7, 0]])"};

inline constexpr Doc tensor_scatter_inplace{
    "def scatter_(self, " PTO_SCATTER_PARAMS ") -> Tensor",
    "In-place scatter into this tensor; see ptocpu.scatter_.\n\n" PTO_SCATTER_TEXT};

inline constexpr Doc tensor_scatter{
    "def scatter(self, " PTO_SCATTER_PARAMS ") -> Tensor",
    "Scatter into a copy of this tensor; see ptocpu.scatter.\n\n" PTO_SCATTER_TEXT};

#define PTO_GATHER_TEXT \
  "Gather along dim (torch.gather) with checks: out has index's shape and input's dtype,\n" \
  "out[p] = input[p with p[dim] := index[p]].\n" \
  "\n" \
  "index: int32 or int64, input's rank, index.shape[a] <= input.shape[a] for every a != dim\n" \
  "(index.shape[dim] is free); every value in [0, input.shape[dim]), checked before any work.\n" \
  "input: any dtype on the cpu platform (see docs/ops/gather.md for each chip).\n" \
  "\n" \
  "Raises IndexOutOfRange (dim or an index value), DTypeError, ArgumentError (ranks, shapes),\n" \
  "TileError (tile rules when a tile shape is set)."

inline constexpr Doc gather{
    "def gather(input: " PTO_ARRAY ", dim: int, index: " PTO_ARRAY ") -> Tensor",
    PTO_GATHER_TEXT R"(

>>> x = ptocpu.asarray([[0, 1, 2], [3, 4, 5]])
>>> ptocpu.gather(x, 1, [[2, 0], [1, 1]]).tolist()
[[2, 0], [4, 4]])"};

inline constexpr Doc tensor_gather{"def gather(self, dim: int, index: " PTO_ARRAY ") -> Tensor",
                                   "Gather from this tensor along dim; see ptocpu.gather.\n\n" PTO_GATHER_TEXT};

#define PTO_SCATTER_UPDATE_TEXT \
  "Paged KV-cache write along dim -2, in place. index is [b, s] (int64 / int32 / int16).\n" \
  "2-D input [rows, d], src with >= b*s rows: input[index[i][j], :] = src[i*s + j, :].\n" \
  "4-D input [blocks, block_size, n, d], src [>= b, >= s, n, d]: with slot = index[i][j],\n" \
  "input[slot // block_size][slot % block_size] = src[i][j].\n" \
  "(i, j) run in row-major order: a negative slot skips its row (padding), a later write to a\n" \
  "slot replaces an earlier one. dim must be -2; src has input's dtype and row shape.\n" \
  "\n" \
  "Raises IndexOutOfRange (a slot >= the number of cache rows; checked before any write),\n" \
  "ArgumentError (dim, ranks, shapes, read-only input), DTypeError, TileError."

inline constexpr Doc scatter_update{
    "def scatter_update(input: " PTO_ARRAY ", dim: int, index: " PTO_ARRAY ", src: " PTO_ARRAY ") -> Tensor",
    PTO_SCATTER_UPDATE_TEXT R"(

Returns input: the same object for a ptocpu.Tensor, a ptocpu.Tensor over the same memory for a
numpy array or torch tensor.

>>> cache = ptocpu.tensor([4, 2], ptocpu.DT_INT64)
>>> ptocpu.scatter_update(cache, -2, [[3, -1]], [[1, 2], [5, 6]]).tolist()
[[0, 0], [0, 0], [0, 0], [1, 2]])"};

inline constexpr Doc tensor_scatter_update{
    "def scatter_update(self, dim: int, index: " PTO_ARRAY ", src: " PTO_ARRAY ") -> Tensor",
    "Paged KV-cache write into this tensor; see ptocpu.scatter_update.\n\n" PTO_SCATTER_UPDATE_TEXT};

#define PTO_INDEX_ADD_PARAMS "dim: int, index: " PTO_ARRAY ", source: " PTO_ARRAY ", *, alpha: int | float = 1"
#define PTO_INDEX_ADD_TEXT \
  "For i = 0 .. len(index)-1 in order: input[.., index[i], ..] += alpha * source[.., i, ..]\n" \
  "along dim. index: 1-D int32 / int64, values in [0, input.shape[dim]); source: input's dtype\n" \
  "and shape except source.shape[dim] == len(index).\n" \
  "Rounding, as the device does it: alpha is converted to input's dtype, then each step computes\n" \
  "v = round(alpha * s) and x = round(x + v) in fp32 (fp64 for fp64) -- one rounding each, no\n" \
  "wider accumulator. Integers wrap. With alpha 1 this is torch's index_add wherever torch adds\n" \
  "slice by slice. alpha must be finite and fit input's dtype; a bool alpha is a DTypeError.\n" \
  "No BOOL or fp8 inputs.\n" \
  "\n" \
  "Raises IndexOutOfRange, DTypeError, ArgumentError (shapes, alpha), TileError; a failed call\n" \
  "writes nothing."

inline constexpr Doc index_add_inplace{
    "def index_add_(input: " PTO_ARRAY ", " PTO_INDEX_ADD_PARAMS ") -> Tensor",
    PTO_INDEX_ADD_TEXT R"(

In place: writes input and returns it (the same object for a ptocpu.Tensor).

>>> x = ptocpu.tensor([2, 3], ptocpu.DT_INT64)
>>> ptocpu.index_add_(x, 0, [0, 1, 0], [[1, 1, 1], [1, 1, 1], [1, 1, 1]]).tolist()
[[2, 2, 2], [1, 1, 1]])"};

inline constexpr Doc index_add{
    "def index_add(input: " PTO_ARRAY ", " PTO_INDEX_ADD_PARAMS ") -> Tensor",
    PTO_INDEX_ADD_TEXT R"(

Out of place: returns a new tensor; input is left untouched.

>>> ptocpu.index_add([1.0, 2.0], 0, [1, 1], [0.5, 0.25], alpha=2).tolist()
[1.0, 3.5])"};

inline constexpr Doc tensor_index_add_inplace{"def index_add_(self, " PTO_INDEX_ADD_PARAMS ") -> Tensor",
                                              "index_add_ into this tensor; see ptocpu.index_add_.\n\n" PTO_INDEX_ADD_TEXT};

inline constexpr Doc tensor_index_add{"def index_add(self, " PTO_INDEX_ADD_PARAMS ") -> Tensor",
                                      "index_add on a copy of this tensor; see ptocpu.index_add.\n\n" PTO_INDEX_ADD_TEXT};

#define PTO_GATHERMASK_TEXT \
  "Lanes of the last axis by pattern_mode: 1 -> x[..., 0::2], 2 -> x[..., 1::2] (last dim even);\n" \
  "3, 4, 5, 6 -> x[..., k::4] with k = mode - 3 (last dim divisible by 4); 7 -> a copy. Other axes\n" \
  "unchanged, dtype of x; a new contiguous tensor.\n" \
  "\n" \
  "Raises ArgumentError (pattern_mode outside 1..7, last dim not divisible), DTypeError,\n" \
  "TileError (a tile's last dim must be divisible by 2 or 4 likewise)."

inline constexpr Doc gathermask{
    "def gathermask(x: " PTO_ARRAY ", pattern_mode: int) -> Tensor",
    PTO_GATHERMASK_TEXT R"(

>>> ptocpu.gathermask([[0, 1, 2, 3, 4, 5, 6, 7]], 2).tolist()
[[1, 3, 5, 7]])"};

inline constexpr Doc tensor_gathermask{"def gathermask(self, pattern_mode: int) -> Tensor",
                                       "Lanes of this tensor's last axis; see ptocpu.gathermask.\n\n" PTO_GATHERMASK_TEXT};

#define PTO_SLICE_PARAMS                                                                            \
  "x: " PTO_ARRAY ", begin: collections.abc.Sequence[int], end: collections.abc.Sequence[int], strides: collections.abc.Sequence[int], begin_mask: int = 0, " \
  "end_mask: int = 0, ellipsis_mask: int = 0, shrink_axis_mask: int = 0, new_axis_mask: int = 0"
#define PTO_SLICE_TEXT \
  "TensorFlow's strided_slice. Slot i of begin / end / strides is matched to input dims left to\n" \
  "right; mask bit i refers to slot i. begin_mask / end_mask: ignore begin[i] / end[i] (take from\n" \
  "the start / to the end); ellipsis_mask: slot i stands for all remaining dims; new_axis_mask:\n" \
  "insert a size-1 dim; shrink_axis_mask: take index begin[i] and drop the dim. Negative begin /\n" \
  "end count from the end, out-of-range values clamp, negative strides walk backwards, end = -1\n" \
  "excludes the last element. x has rank 0-8; len(begin) == len(end) == len(strides) <= 32.\n" \
  "\n" \
  "Raises ArgumentError (zero stride, lengths, mask bits), IndexOutOfRange (a shrink index out of\n" \
  "range), DTypeError (non-integers, or a dtype the platform does not list)."

inline constexpr Doc strided_slice{
    "def strided_slice(" PTO_SLICE_PARAMS ") -> Tensor",
    PTO_SLICE_TEXT R"(

Returns a new contiguous tensor of x's dtype.

>>> x = ptocpu.asarray([[0, 1, 2], [3, 4, 5]])
>>> ptocpu.strided_slice(x, [0, 0], [0, 0], [-1, -1], begin_mask=3, end_mask=3).tolist()
[[5, 4, 3], [2, 1, 0]])"};

inline constexpr Doc strided_slice_view{
    "def strided_slice_view(" PTO_SLICE_PARAMS ") -> Tensor",
    PTO_SLICE_TEXT R"(

Returns a zero-copy view of x: writes through it are seen in x (x must be memory that can be
shared, not a list).

>>> import numpy as np
>>> a = np.zeros((2, 4), np.float32)
>>> ptocpu.strided_slice_view(a, [0, 1], [2, 4], [1, 2])[...] = 1
>>> a[0].tolist()
[0.0, 1.0, 0.0, 1.0])"};

inline constexpr Doc view{
    "def view(input: " PTO_ARRAY ", shape: collections.abc.Sequence[int] | None = None, offsets: collections.abc.Sequence[int] | None = None, *, valid_shape: collections.abc.Sequence[int] | None = None, dtype: DType | None = None) -> Tensor",
    R"(PyPTO's view: the block of `shape` starting at `offsets` (one entry per dim of input).

valid_shape is the part of the block that holds data -- a loop's tail block declares its full
shape and a smaller valid_shape; without it, a block running past the end of input gets the
part inside input as its valid shape. valid_shape must lie inside shape and inside input
(TileError); lengths must match input's rank (ArgumentError). A fully valid block is a zero-copy
window (writes land in input); a partly valid one is a zero-filled tensor of `shape` holding the
valid part. Ops read only the valid part. dtype= views input's bytes as another dtype (the last
dim scales with the width). See docs/running_pypto_programs.md.

>>> import numpy as np
>>> a = np.arange(16, dtype=np.float32).reshape(4, 4)
>>> ptocpu.view(a, [2, 2], [2, 2]).tolist()
[[10.0, 11.0], [14.0, 15.0]]
>>> ptocpu.view(a, [2, 2], [3, 2]).tolist()
[[14.0, 15.0], [0.0, 0.0]])"};

inline constexpr Doc assemble{
    "def assemble(*args, **kwargs) -> None",
    R"(Copy tiles into an output tensor: assemble(input, offsets, out), or
assemble([(tensor, offsets), ...], out, parallel=False) for several tiles.

Each tile's valid part is written into out at its offsets. Every tile is checked (same rank: ArgumentError;
same dtype: DTypeError; inside out: TileError; out writable) before anything is written.

>>> import numpy as np
>>> out = np.zeros((2, 4), np.float32)
>>> ptocpu.assemble(np.ones((2, 2), np.float32), [0, 2], out)
>>> out[0].tolist()
[0.0, 0.0, 1.0, 1.0])"};

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
(8, 64)
>>> ptocpu.reset_vec_tile_shapes())"};

inline constexpr Doc get_vec_tile_shapes{"def get_vec_tile_shapes() -> tuple[int, ...]",
                                         "This thread's tile shape; empty when none is set."};

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
    "def _set_kernel_tuning(stream_bytes: int = -1, isa: str | None = None) -> None",
    R"(For tests and benchmarks: write dense outputs of at least stream_bytes with streaming stores
and cap the hand-written kernels at isa ("baseline", "avx2", "avx512"). -1 / None restore the
defaults (half the last-level cache; the best ISA of this CPU). Not safe while kernels run.)"};

inline constexpr Doc take_ub_use{
    "def _take_ub_use() -> dict[str, typing.Any] | None",
    R"(For tracing (docs/tracing.md): the UB use that the last op call with a UB check recorded on
this thread, as {"op", "limit", "total", "buffers": [(what, bytes), ...]}, then cleared. None
when no op checked its UB since the last take.)"};

inline constexpr Doc tensor{
    "def tensor(shape: collections.abc.Sequence[int], dtype: DType | str | typing.Any) -> Tensor",
    R"(A new zero-filled tensor of shape and dtype.

dtype: a DT_* constant, a numpy / ml_dtypes / torch dtype, or a name ("float16", "bf16", ...).
Negative dims are an ArgumentError; an unknown dtype is a DTypeError.

>>> ptocpu.tensor([2, 3], ptocpu.DT_FP16).shape
(2, 3))"};

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
    "Per-dtype facts from the core's one table: dtype, itemsize, numpy name, and whether ml_dtypes provides it."};

inline constexpr Doc itemsize{"def itemsize(dtype: DType | str | typing.Any) -> int",
                              "Bytes per element of a dtype (any spelling ptocpu.dtype accepts)."};

}  // namespace ptobind::docs
