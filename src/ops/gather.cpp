// gather (docs/ops/gather.md): checks, tile rules, then the index values, then the kernel.
#include <algorithm>

#include "kernels/gather.h"
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

constexpr const char* kOp = "gather";

// Everything docs/ops/gather.md asks, touching no data; returns the normalised dim.
int validate_gather(const Tensor& input, int64_t dim, const Tensor& index) {
  const OpLimits& limits = require_offered(op_def(kOp));
  checks::check_dtype(kOp, "input", input.dtype(), limits.dtypes);
  checks::check_index_dtype(kOp, "index", index.dtype());
  const int r = input.ndim();
  checks::check_rank(kOp, "input", r, limits.min_rank, limits.max_rank);
  if (index.ndim() != r)
    fail<ArgumentError>(kOp, ": index rank ", index.ndim(), " (shape ", shape_to_string(index.shape()),
                        ") must equal input rank ", r, " (shape ", shape_to_string(input.shape()), ")");
  const int d = checks::normalize_dim(kOp, dim, r);
  for (int a = 0; a < r; ++a)
    if (a != d && index.shape(a) > input.shape(a))
      fail<ArgumentError>(kOp, ": index shape ", shape_to_string(index.shape()), " is larger than input shape ",
                          shape_to_string(input.shape()), " at axis ", a, " (", index.shape(a), " > ", input.shape(a),
                          "); index.shape[a] <= input.shape[a] is required for every axis a != dim ", d);
  checks::check_extent(kOp, "input", input.shape(), true);
  checks::check_extent(kOp, "index", index.shape(), true);

  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(kOp, tile, r, "index");
    Shape input_tile = tile;  // the dim axis of input is read whole
    input_tile[d] = input.shape(d);
    const size_t ielem = dtype_size(index.dtype());
    const int64_t per_block = 32 / static_cast<int64_t>(ielem);
    const int64_t last = std::min(tile[r - 1], index.shape(r - 1));
    const int64_t scratch = 2 * ((last + per_block - 1) / per_block * per_block);
    tiling::check_ub(kOp, tile,
                     {{"input tile", input.shape(), input.itemsize(), 1, input_tile},
                      {"index tile", index.shape(), ielem},
                      {"output tile", index.shape(), input.itemsize()},
                      {"index scratch row", {scratch}, ielem, 1, {scratch}}});
  }
  return d;
}

}  // namespace

Tensor gather(const Tensor& input_view, int64_t dim, const Tensor& index_view) {
  // Only the valid parts are read (docs/kernel_model.md).
  const Tensor input = input_view.valid_part(), index = index_view.valid_part();
  const int d = validate_gather(input, dim, index);
  const Tensor idx = index.contiguous();
  index_bounds::check_for_dim(kOp, idx, input, d);
  Tensor out = Tensor::empty(index.shape(), input.dtype());
  kernels::gather(input, d, idx, out);
  return out;
}

Shape output_shape::gather(const Tensor& input, int64_t dim, const Tensor& index) {
  const checks::EveryPlatformScope every_platform;
  validate_gather(input, dim, index);
  return index.shape();
}


void families::add_gather(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chips{D::FP32, D::FP16, D::BF16, D::INT32, D::UINT32, D::INT16, D::UINT16};
  table.push_back(OpDef{
      .name = kOp,
      .params = {{"input", ParamKind::Tensor}, {"dim", ParamKind::Dim}, {"index", ParamKind::Tensor}},
      .forms = kFunction | kMethod | kTorch,
      .doc_page = "docs/ops/gather.md",
      .tile_rule = "TileShape has the input's rank; UB: input, index and output tiles",
      .limits = platform_rows(DTypeSet::all(), chips, chips, chips, 1, 5, 1, 8),
      .run = SelectEntry<gather, output_shape::gather>::run,
      .infer = SelectEntry<gather, output_shape::gather>::infer,
      .bytes = SelectEntry<gather, output_shape::gather>::bytes,
  });
}

}  // namespace pto
