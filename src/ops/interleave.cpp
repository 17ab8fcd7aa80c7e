// interleave and deinterleave (docs/ops/interleave.md, docs/ops/deinterleave.md): checks and shape inference, then the kernels.
#include "kernels/interleave.h"
#include "ops/checks.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

struct InterleavePlan {
  Shape out_shape;  // of out0 and of out1
};

void check_even_last_dim(const char* op, const Tensor& input) {
  const int64_t n = input.shape(input.ndim() - 1);
  if (n % 2 != 0)
    fail<ArgumentError>(op, ": input last dim ", n, " (shape ", shape_to_string(input.shape()),
                        ") must be even");
}

// interleave(input, other) and deinterleave(input, other): every rule of docs/ops/interleave.md, docs/ops/deinterleave.md, docs/platforms.md, docs/kernel_model.md;
// touches no data.
InterleavePlan validate_interleave(Op op, const Tensor& input, const Tensor& other) {
  const char* name = op_name(op);
  const OpLimits& limits = require_offered(op);
  checks::check_dtype(name, "input", input.dtype(), limits.dtypes);
  checks::check_same_dtype(name, "other", other.dtype(), "input", input.dtype());
  checks::check_rank(name, "input", input.ndim(), limits.min_rank, limits.max_rank);
  if (other.shape() != input.shape())
    fail<ArgumentError>(name, ": other shape ", shape_to_string(other.shape()), " must equal input shape ",
                        shape_to_string(input.shape()));
  checks::check_extent(name, "input", input.shape(), true);  // other has the same shape
  check_even_last_dim(name, input);

  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    const int64_t n = input.shape().back();
    tiling::check_rank(name, tile, input.ndim(), "input");
    if (tile.back() != n)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has last dim ", tile.back(),
                      " but the last axis is not split: tile[-1] must equal the input's last dim ", n);
    tiling::check_ub(name, tile,
                     {{"input tiles", input.shape(), input.itemsize(), 2},
                      {"output tiles", input.shape(), input.itemsize(), 2}});
  }
  return {input.shape()};
}

// deinterleave(input): docs/ops/deinterleave.md, docs/platforms.md, docs/kernel_model.md; touches no data.
InterleavePlan validate_deinterleave(const Tensor& input) {
  const char* name = op_name(Op::Deinterleave);
  const OpLimits& limits = require_offered(Op::Deinterleave);
  checks::check_dtype(name, "input", input.dtype(), limits.dtypes);
  checks::check_rank(name, "input", input.ndim(), limits.min_rank, limits.max_rank);
  checks::check_extent(name, "input", input.shape(), true);
  check_even_last_dim(name, input);
  InterleavePlan plan{input.shape()};
  plan.out_shape.back() /= 2;

  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(name, tile, input.ndim(), "input");
    if (tile.back() % 2 != 0)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has last dim ", tile.back(),
                      "; it must be even (each input tile splits into two output tiles of half its width)");
    // The output tiles are tile[:-1] + [tile[-1] / 2], clipped to the output: a buffer shape of
    // their own, so the sum is formed here in check_ub's terms.
    Shape out_tile = tile;
    out_tile.back() /= 2;
    const int64_t in_bytes = tiling::buffer_bytes(tile, {"input tile", input.shape(), input.itemsize()});
    const int64_t out_bytes = tiling::buffer_bytes(out_tile, {"output tiles", plan.out_shape, input.itemsize(), 2});
    const Platform& platform = current_platform();
    if (platform.ub_bytes != 0) {
      tiling::begin_ub_use(name, platform.ub_bytes);
      tiling::note_ub_buffer("input tile", in_bytes);
      tiling::note_ub_buffer("output tiles", out_bytes);
    }
    if (platform.ub_bytes != 0 && in_bytes + out_bytes > platform.ub_bytes)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " needs ", in_bytes + out_bytes,
                      " UB bytes (input tile ", in_bytes, " + output tiles ", out_bytes, ") but platform ",
                      platform.name, " has ", platform.ub_bytes,
                      " UB bytes; choose a smaller tile with set_vec_tile_shapes");
  }
  return plan;
}

}  // namespace

std::pair<Tensor, Tensor> interleave(const Tensor& input, const Tensor& other) {
  const InterleavePlan plan = validate_interleave(Op::Interleave, input, other);
  Tensor out0 = Tensor::empty(plan.out_shape, input.dtype());
  Tensor out1 = Tensor::empty(plan.out_shape, input.dtype());
  kernels::interleave(input, other, out0, out1);
  return {out0, out1};
}

std::pair<Tensor, Tensor> deinterleave(const Tensor& input, const Tensor& other) {
  if (!other.defined()) return deinterleave(input);
  const InterleavePlan plan = validate_interleave(Op::Deinterleave, input, other);
  Tensor out0 = Tensor::empty(plan.out_shape, input.dtype());
  Tensor out1 = Tensor::empty(plan.out_shape, input.dtype());
  kernels::deinterleave(input, other, out0, out1);
  return {out0, out1};
}

std::pair<Tensor, Tensor> deinterleave(const Tensor& input) {
  const InterleavePlan plan = validate_deinterleave(input);
  Tensor out0 = Tensor::empty(plan.out_shape, input.dtype());
  Tensor out1 = Tensor::empty(plan.out_shape, input.dtype());
  kernels::deinterleave(input, Tensor(), out0, out1);
  return {out0, out1};
}

Shape output_shape::interleave(const Tensor& input, const Tensor& other) {
  const checks::EveryPlatformScope every_platform;
  return validate_interleave(Op::Interleave, input, other).out_shape;
}

Shape output_shape::deinterleave(const Tensor& input, const Tensor& other) {
  const checks::EveryPlatformScope every_platform;
  return (other.defined() ? validate_interleave(Op::Deinterleave, input, other) : validate_deinterleave(input)).out_shape;
}

}  // namespace pto
