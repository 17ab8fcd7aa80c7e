// index_select (docs/ops/index_select.md): checks and shape inference, then the gather kernel.
#include "kernels/index_select.h"
#include "ops/checks.h"
#include "ops/families.h"
#include "ops/select_entry.h"
#include "ops/index_bounds.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

constexpr const char* kOp = "index_select";

struct IndexSelectPlan {
  int dim;
  Shape out_shape;
};

// Everything docs/ops/index_select.md, docs/platforms.md, docs/kernel_model.md asks, in the order the device checks it; touches no data.
IndexSelectPlan validate_index_select(const Tensor& input, int64_t dim, const Tensor& index) {
  const OpLimits& limits = require_offered(op_def(kOp));
  checks::check_dtype(kOp, "input", input.dtype(), limits.dtypes);
  checks::check_index_dtype(kOp, "index", index.dtype());
  checks::check_rank(kOp, "input", input.ndim(), limits.min_rank, limits.max_rank);
  checks::check_rank(kOp, "index", index.ndim(), 1, limits.index_max_rank);
  const int d = checks::normalize_dim(kOp, dim, input.ndim());
  checks::check_extent(kOp, "input", input.shape(), true);
  checks::check_extent(kOp, "index", index.shape(), true);

  IndexSelectPlan plan{d, {}};
  plan.out_shape.assign(input.shape().begin(), input.shape().begin() + d);
  plan.out_shape.insert(plan.out_shape.end(), index.shape().begin(), index.shape().end());
  plan.out_shape.insert(plan.out_shape.end(), input.shape().begin() + d + 1, input.shape().end());
  checks::check_rank(kOp, "output", static_cast<int>(plan.out_shape.size()), 1, limits.output_max_rank);
  checks::check_extent(kOp, "output", plan.out_shape, false);

  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(kOp, tile, static_cast<int>(plan.out_shape.size()), "output");
    tiling::check_ub(kOp, tile, {{"output tile", plan.out_shape, input.itemsize()}});
  }
  return plan;
}

}  // namespace

Tensor index_select(const Tensor& input_view, int64_t dim, const Tensor& index_view) {
  // Only the valid parts are read (docs/kernel_model.md).
  const Tensor input = input_view.valid_part(), index = index_view.valid_part();
  const IndexSelectPlan plan = validate_index_select(input, dim, index);
  const Tensor contiguous_index = index.is_contiguous() ? Tensor() : index.contiguous();
  const Tensor& idx = contiguous_index.defined() ? contiguous_index : index;
  index_bounds::check(kOp, idx, input.shape(plan.dim), [&] {
    return "for dim " + std::to_string(plan.dim) + " of input shape " + shape_to_string(input.shape());
  });
  Tensor out = Tensor::empty(plan.out_shape, input.dtype());
  kernels::index_select(input, plan.dim, idx, out);
  return out;
}

Shape output_shape::index_select(const Tensor& input, int64_t dim, const Tensor& index) {
  const checks::EveryPlatformScope every_platform;
  return validate_index_select(input, dim, index).out_shape;
}


void families::add_index_select(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chip950{D::INT8, D::INT16, D::INT32, D::UINT8, D::UINT16, D::UINT32, D::FP16,
                         D::FP32, D::BF16, D::BOOL, D::FP8E4M3, D::FP8E5M2, D::FP8E8M0};
  const DTypeSet chip_a2{D::INT8, D::INT16, D::INT32, D::UINT8, D::UINT16, D::UINT32, D::FP16, D::FP32, D::BF16};
  OpDef op{
      .name = kOp,
      .params = {{"input", ParamKind::Tensor}, {"dim", ParamKind::Dim}, {"index", ParamKind::Tensor}},
      .forms = kFunction | kTorch,
      .doc_page = "docs/ops/index_select.md",
      .tile_rule = "TileShape has the output's rank; UB: one output tile",
      .limits = platform_rows(DTypeSet::all(), chip950, chip_a2, chip_a2, 1, 4, 1, 8),
      .run = SelectEntry<index_select, output_shape::index_select>::run,
      .infer = SelectEntry<index_select, output_shape::index_select>::infer,
      .bytes = SelectEntry<index_select, output_shape::index_select>::bytes,
  };
  for (int p = 1; p < kNumPlatforms; ++p) op.limits[p].index_max_rank = 2;
  table.push_back(std::move(op));
}

}  // namespace pto
