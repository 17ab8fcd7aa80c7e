// interleave and deinterleave (docs/ops/interleave.md, docs/ops/deinterleave.md): checks and shape inference, then the kernels.
#include "kernels/interleave.h"
#include "ops/checks.h"
#include "ops/families.h"
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
InterleavePlan validate_interleave(const char* name, const Tensor& input, const Tensor& other) {
  const OpDef& op = op_def(name);
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
  const char* name = "deinterleave";
  const OpLimits& limits = require_offered(op_def(name));
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

// Both ops' last step: the plan's two outputs, filled by the kernel.
std::pair<Tensor, Tensor> run_kernel(void (*kernel)(const Tensor&, const Tensor&, const Tensor&, const Tensor&),
                                     const InterleavePlan& plan, const Tensor& input, const Tensor& other) {
  Tensor out0 = Tensor::empty(plan.out_shape, input.dtype());
  Tensor out1 = Tensor::empty(plan.out_shape, input.dtype());
  kernel(input, other, out0, out1);
  return {out0, out1};
}

}  // namespace

std::pair<Tensor, Tensor> interleave(const Tensor& input_view, const Tensor& other_view) {
  // Only the valid parts are read (docs/kernel_model.md).
  const Tensor input = input_view.valid_part(), other = other_view.valid_part();
  return run_kernel(kernels::interleave, validate_interleave("interleave", input, other), input, other);
}

std::pair<Tensor, Tensor> deinterleave(const Tensor& input_view, const Tensor& other_view) {
  if (!other_view.defined()) return deinterleave(input_view);
  const Tensor input = input_view.valid_part(), other = other_view.valid_part();
  return run_kernel(kernels::deinterleave, validate_interleave("deinterleave", input, other), input, other);
}

std::pair<Tensor, Tensor> deinterleave(const Tensor& input_view) {
  const Tensor input = input_view.valid_part();
  return run_kernel(kernels::deinterleave, validate_deinterleave(input), input, Tensor());
}

Shape output_shape::interleave(const Tensor& input, const Tensor& other) {
  const checks::EveryPlatformScope every_platform;
  return validate_interleave("interleave", input, other).out_shape;
}

Shape output_shape::deinterleave(const Tensor& input, const Tensor& other) {
  const checks::EveryPlatformScope every_platform;
  return (other.defined() ? validate_interleave("deinterleave", input, other) : validate_deinterleave(input)).out_shape;
}


void families::add_interleave(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chip950{D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32, D::FP16, D::FP32, D::BF16};
  const PlatformRows rows = platform_rows(DTypeSet::all(), chip950, {}, {}, 1, 4, 1, 8);
  table.push_back(OpDef{
      .name = "interleave",
      .params = {{"input", ParamKind::Tensor}, {"other", ParamKind::Tensor}},
      .forms = kFunction | kTorch,
      .num_outputs = 2,
      .tile_rule = "TileShape has the input's rank, its last dim the whole last axis; UB: 2 input + 2 output tiles",
      .limits = rows,
      .run = [](const OpDef&, const Args& a) -> Outputs { return outputs_of(interleave(a.tensor(0), a.tensor(1))); },
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        const Shape s = output_shape::interleave(a.tensor(0), a.tensor(1));
        return {{s, a.tensor(0).dtype()}, {s, a.tensor(0).dtype()}};
      },
      .bytes = [](const OpDef&, const Args& a, const Outputs&) {
        return 2 * (tensor_bytes(a.tensor(0)) + tensor_bytes(a.tensor(1)));
      },
  });
  table.push_back(OpDef{
      .name = "deinterleave",
      .params = {{"input", ParamKind::Tensor}, {"other", ParamKind::Tensor, "None"}},
      .forms = kFunction | kTorch,
      .num_outputs = 2,
      .tile_rule = "TileShape has the input's rank, its last dim the whole last axis; UB: input and output tiles",
      .limits = rows,
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return outputs_of(a.is_none(1) ? deinterleave(a.tensor(0)) : deinterleave(a.tensor(0), a.tensor(1)));
      },
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        const Shape s = output_shape::deinterleave(a.tensor(0), a.is_none(1) ? Tensor() : a.tensor(1));
        return {{s, a.tensor(0).dtype()}, {s, a.tensor(0).dtype()}};
      },
      .bytes = [](const OpDef&, const Args& a, const Outputs&) {
        return 2 * (tensor_bytes(a.tensor(0)) + (a.is_none(1) ? 0 : tensor_bytes(a.tensor(1))));
      },
  });
}

}  // namespace pto
