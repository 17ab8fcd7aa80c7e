// The operators of docs/README.md#operators. Each validates everything first (docs/errors.md: a call that fails
// changes nothing), then runs its kernel.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ptocpu/scalar.h"
#include "ptocpu/scatter_reduce.h"
#include "ptocpu/tensor.h"

namespace pto {

// docs/ops/index_select.md: out = input.shape[:d] + index.shape + input.shape[d+1:], gathered along dim.
Tensor index_select(const Tensor& input, int64_t dim, const Tensor& index);

// docs/ops/strided_slice.md: TensorFlow strided_slice. Mask bit i refers to slot i of begin / end / strides.
// strided_slice returns a new contiguous tensor, strided_slice_view a zero-copy view of x.
Tensor strided_slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                     const std::vector<int64_t>& strides, int64_t begin_mask = 0, int64_t end_mask = 0,
                     int64_t ellipsis_mask = 0, int64_t shrink_axis_mask = 0, int64_t new_axis_mask = 0);
Tensor strided_slice_view(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                          const std::vector<int64_t>& strides, int64_t begin_mask = 0, int64_t end_mask = 0,
                          int64_t ellipsis_mask = 0, int64_t shrink_axis_mask = 0, int64_t new_axis_mask = 0);

// docs/ops/scatter.md: scatter along dim. For every index position p (row-major), q = p with
// q[d] = index[p]: out[q] = v (None), += v (Add), *= v (Multiply), v = src[p] or the scalar.
// scatter_ writes input in place (through views) and returns it; scatter returns a new tensor.
Tensor scatter_(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
                ScatterReduce reduce = ScatterReduce::None);
Tensor scatter_(const Tensor& input, int64_t dim, const Tensor& index, const Scalar& src,
                ScatterReduce reduce = ScatterReduce::None);
Tensor scatter(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src,
               ScatterReduce reduce = ScatterReduce::None);
Tensor scatter(const Tensor& input, int64_t dim, const Tensor& index, const Scalar& src,
               ScatterReduce reduce = ScatterReduce::None);

// The indexing family next to the seeds (docs/ops/gather.md, scatter_update.md, index_add.md,
// gathermask.md). Like the ops above, each checks everything (index values included) before it
// writes anything, and reads index / src as if completely before any write.

// gather (torch.gather): out has index's shape, out[p] = input[p with p[dim] := index[p]].
Tensor gather(const Tensor& input, int64_t dim, const Tensor& index);
// scatter_update: paged KV-cache write in place along dim -2 (input rank 2 or 4, index [b, s]).
// 2-D: input[index[i][j], :] = src[i*s + j, :]; 4-D: input[slot / bs][slot % bs] = src[i][j]
// with bs = input.shape[1]. A negative slot skips its row; duplicates: the last write wins.
Tensor scatter_update(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src);
// index_add_: for i in order, input[.., index[i], ..] += alpha * source[.., i, ..], one rounding
// of the product and one of the sum per step (docs/ops/index_add.md). index_add_ writes input
// in place and returns it; index_add returns a new tensor.
Tensor index_add_(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source,
                  const Scalar& alpha = Scalar::of_int(1));
Tensor index_add(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha = Scalar::of_int(1));
// gathermask: lanes of the last axis by pattern_mode: 1 -> 0::2, 2 -> 1::2, 3..6 -> (mode-3)::4,
// 7 -> all.
Tensor gathermask(const Tensor& x, int64_t pattern_mode);
// Paged KV-cache reads (pypto.experimental; docs/ops/paged_gather.md): token id t of indices [1, k]
// is row block_table[0, t / block_size] * block_size + t % block_size of the cache. gather_in_ub:
// those rows of param [tokens, hidden] (axis must be -2); gather_in_l1: their first `size`
// columns of src (is_b_matrix / is_trans say how the device lays the tile out in L1).
Tensor gather_in_ub(const Tensor& param, const Tensor& indices, const Tensor& block_table, int64_t block_size,
                    int64_t axis);
Tensor gather_in_l1(const Tensor& src, const Tensor& indices, const Tensor& block_table, int64_t block_size,
                    int64_t size, bool is_b_matrix, bool is_trans);

// The kernel model (docs/kernel_model.md). view: the block of `shape` at offsets; one entry per
// input dim (ArgumentError); each offset inside input, offsets + valid_shape inside input
// (TileError). Without valid_shape the valid shape is the part of the block inside input. A fully
// valid block is a zero-copy view; a partly valid one is a zero-filled tensor of `shape` holding
// the valid part.
Tensor view(const Tensor& input, const Shape& shape, const Shape& offsets,
            const std::optional<Shape>& valid_shape = std::nullopt);
// view's rules, except that with offsets_inside false a block may start at or past the end of
// input (it then holds no valid element): PyPTO's t[i:j] blocks inside a kernel.
Tensor view_block(const Tensor& input, const Shape& shape, const Shape& offsets,
                  const std::optional<Shape>& valid_shape, bool offsets_inside);
// view(input, dtype=...): the same bytes as `dtype`; the last dim scales by the width ratio
// (it must be contiguous and its byte size a multiple of the new width).
Tensor bitcast_view(const Tensor& input, DType dtype);
// assemble: copies src's valid part into out at offsets; same dtype (DTypeError), same rank (ArgumentError),
// inside out (TileError). The list form checks every part before it writes any.
struct AssemblePart {
  Tensor src;
  Shape offsets;
};
void assemble(const Tensor& src, const Shape& offsets, const Tensor& out);
void assemble(const std::vector<AssemblePart>& parts, const Tensor& out);
// Indexing (docs/tensors.md#indexing): t[key] and t[key] = value. numpy's basic indexing, plus
// PyPTO's forms: t[dim:index] is gather / scatter_ along dim; inside a kernel (KernelScope) a
// block t[i:j, k:l] that runs past the end is view(t, sizes, offsets) with its valid shape
// clipped, and t[block] = b with b of the block's rank that does not broadcast to it assembles b.
struct IndexKey;
Tensor get_item(const Tensor& t, const IndexKey& key);
// value: a tensor of t's dtype (broadcast like numpy) or a scalar.
void set_item(const Tensor& t, const IndexKey& key, const Tensor& value);
void set_item(const Tensor& t, const IndexKey& key, const Scalar& value);
// What t[key] = value assembles inside a kernel (value's valid part, with the key's int dims as
// dims of size 1, and the block's start), or nothing when the assignment copies by broadcasting.
std::optional<AssemblePart> block_assignment(const Tensor& t, const IndexKey& key, const Tensor& value);

// While a jit kernel or a pypto.function body runs on this thread (nested scopes count).
bool in_kernel();
void enter_kernel();
void exit_kernel();
class KernelScope {
 public:
  KernelScope() { enter_kernel(); }
  ~KernelScope() { exit_kernel(); }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;
};

// loop(start, stop, step): the number of iterations; ArgumentError for step 0.
int64_t loop_trip_count(int64_t start, int64_t stop, int64_t step);

// docs/ops/interleave.md: along the last axis the 2n stream s[2k] = input[k], s[2k+1] = other[k];
// out0 = s[0:n], out1 = s[n:2n] (both of input's shape). other: input's dtype and shape, n even.
std::pair<Tensor, Tensor> interleave(const Tensor& input, const Tensor& other);
// docs/ops/deinterleave.md, two inputs (same rules as interleave): c = concat(input, other) on the last axis,
// out0 = c[..., 0::2], out1 = c[..., 1::2]. An undefined other means the single-input form.
std::pair<Tensor, Tensor> deinterleave(const Tensor& input, const Tensor& other);
// docs/ops/deinterleave.md, single input (last dim 2m): out0 = input[..., 0::2], out1 = input[..., 1::2].
std::pair<Tensor, Tensor> deinterleave(const Tensor& input);

// Output shapes from the arguments' shapes and dtypes alone, for callers that trace a graph
// once and run it under any platform and tile shape (torch.compile, see docs/torch.md): the
// checks every platform makes (the cpu platform's, no tile shape), never the index values, no
// data read, so the tensors may have no storage. The op checks the platform and tile rules
// when it runs. Each throws the error the op would throw for the same arguments.
namespace output_shape {
Shape index_select(const Tensor& input, int64_t dim, const Tensor& index);
Shape interleave(const Tensor& input, const Tensor& other);  // of each of the two outputs
// Of each of the two outputs; an undefined other means the single-input form.
Shape deinterleave(const Tensor& input, const Tensor& other);
Shape strided_slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                    const std::vector<int64_t>& strides, int64_t begin_mask = 0, int64_t end_mask = 0,
                    int64_t ellipsis_mask = 0, int64_t shrink_axis_mask = 0, int64_t new_axis_mask = 0);
Shape gather(const Tensor& input, int64_t dim, const Tensor& index);
Shape gathermask(const Tensor& x, int64_t pattern_mode);
}  // namespace output_shape

// The cube unit (docs/ops/matmul.md). extend_params: a bias_tensor [.., 1, N] starts the
// accumulator; relu_type (ReLuType), then the fixpipe's 19-bit scale (per tensor) or scale_tensor
// (per channel, int64 / uint64 holding the fp32 bits) on write-out; trans_mode (TransMode) rounds
// fp32 operands to TF32.
struct MatmulExtendParams {
  Tensor bias_tensor;   // undefined: none
  double scale = 0;     // 0: none
  Tensor scale_tensor;  // undefined: none
  int64_t relu_type = 0;
  int64_t trans_mode = 0;
};
struct MatmulOptions {
  bool a_trans = false, b_trans = false, c_matrix_nz = false;
  MatmulExtendParams extend;
};
struct ScaledMmOptions {
  bool a_trans = false, b_trans = false, scale_a_trans = false, scale_b_trans = false, c_matrix_nz = false;
  MatmulExtendParams extend;
};
// out[.., m, n] = sum_k input[.., m, k] * mat2[.., k, n], fp32 (int32) accumulation, one rounding.
Tensor matmul(const Tensor& input, const Tensor& mat2, DType out_dtype, const MatmulOptions& options = {});
// MX matmul of fp8 operands with DT_FP8E8M0 scales, one per 32 elements along K.
Tensor scaled_mm(const Tensor& mat_a, const Tensor& mat_b, DType out_dtype, const Tensor& scale_a,
                 const Tensor& scale_b, const ScaledMmOptions& options = {});
// out[m, b, :] = tensor_a[m, b, :] @ tensor_b[b] (pypto.experimental).
Tensor transposed_batchmatmul(const Tensor& tensor_a, const Tensor& tensor_b, DType out_dtype);

// pypto.conv (docs/ops/conv.md): 1-D / 2-D / 3-D convolution of input_conv [N, Cin, spatial..] by
// weight [Cout, Cin / groups, kernel..]; paddings before and after per spatial dim. extend_params:
// a bias_tensor [Cout] starts each channel's accumulator, relu_type (ConvReLuType) follows; scale
// and scale_tensor must stay unset (no quantisation).
struct ConvExtendParams {
  Tensor bias_tensor;   // undefined: none
  double scale = 0;     // must be 0
  Tensor scale_tensor;  // must be undefined
  int64_t relu_type = 0;
};
struct ConvOptions {
  int64_t groups = 1;
  bool transposed = false;               // true: UnsupportedError
  std::vector<int64_t> output_paddings;  // transposed convolution's; unused
  ConvExtendParams extend;
};
Tensor conv(const Tensor& input_conv, const Tensor& weight, DType out_dtype, const std::vector<int64_t>& strides,
            const std::vector<int64_t>& paddings, const std::vector<int64_t>& dilations,
            const ConvOptions& options = {});

}  // namespace pto
