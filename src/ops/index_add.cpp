// index_add_ / index_add (docs/ops/index_add.md) and their UB forms index_add__ub / index_add_ub
// (docs/ops/index_add_ub.md): checks, alpha and tile rules, then the index values, then the
// kernel. Nothing is written before every check has passed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

#include "kernels/index_add.h"
#include "ops/checks.h"
#include "ops/entry_forms.h"
#include "ops/families.h"
#include "ops/index_bounds.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

struct IndexAddPlan {
  int dim = 0;
  alignas(8) unsigned char alpha[8] = {};  // alpha converted to input's dtype
  bool alpha_is_one = false;               // contributions are the source values themselves
};

// The largest finite value of a floating dtype index_add takes.
double largest_finite(DType dt) {
  switch (dt) {
    case DType::FP16: return 65504.0;
    case DType::BF16: return 0x1.FEp127;
    case DType::FP32: return std::numeric_limits<float>::max();
    default: return std::numeric_limits<double>::max();
  }
}

// The values an alpha may take for dtype dt, as doubles: +-the largest finite value of a
// floating dtype, [lowest, max] of an integer dtype.
std::pair<double, double> alpha_range(DType dt) {
  return visit_dtype(dt, [dt](auto tag) -> std::pair<double, double> {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>)
      return {static_cast<double>(std::numeric_limits<T>::min()), static_cast<double>(std::numeric_limits<T>::max())};
    return {-largest_finite(dt), largest_finite(dt)};
  });
}

// alpha must be a finite number that input's dtype represents (a float alpha for an integer
// dtype is then truncated toward zero); it is converted to that dtype once, here. A float alpha
// for fp16 / bf16 goes through fp32 first, as the device's alpha does (its op builder converts
// alpha to fp32 before storing it in the dtype, and the kernel receives it as an fp32 literal).
void encode_alpha(const char* op, const Scalar& alpha, DType dt, void* out) {
  if (alpha.kind == Scalar::Kind::Bool)
    fail<DTypeError>(op, ": alpha ", alpha.to_string(), " is a bool; alpha must be an int or a float");
  if (alpha.kind == Scalar::Kind::Float && !std::isfinite(alpha.f))
    fail<ArgumentError>(op, ": alpha ", alpha.to_string(), " is not finite");
  const auto [lo, hi] = alpha_range(dt);
  const bool outside = alpha.kind == Scalar::Kind::Float
                           ? alpha.f < lo || alpha.f > hi
                           : is_floating(dt) && (static_cast<double>(alpha.i) < lo || static_cast<double>(alpha.i) > hi);
  if (outside) {
    std::ostringstream range;
    range.precision(17);
    range << '[' << lo << ", " << hi << ']';
    fail<ArgumentError>(op, ": alpha ", alpha.to_string(), " cannot be converted to ", dtype_name(dt),
                        " without overflow; allowed: ", range.str());
  }
  const bool via_fp32 = alpha.kind == Scalar::Kind::Float && (dt == DType::FP16 || dt == DType::BF16);
  // an integer outside an integer dtype's range fails here
  encode_scalar(via_fp32 ? Scalar::of_float(static_cast<float>(alpha.f)) : alpha, dt, out, op, "alpha");
}

// The device's kernel skips the multiplication when |alpha - 1| <= 1e-6 in fp32: besides 1
// itself, fp32 alphas within 1e-6 of 1 count as 1. fp64 (no device dtype) needs exactly 1.
bool alpha_acts_as_one(DType dt, const void* alpha) {
  const double a = element_to_double(dt, alpha);
  if (dt == DType::FP64) return a == 1.0;
  return std::fabs(static_cast<float>(a) - 1.0f) <= 1e-6f;
}

// The two tile rules: index_add_ tiles the source; the UB form holds whole tiles of input, source,
// index and output at once, with the dim axis unsplit.
enum class IndexAddTiles { Source, WholeDim };

// Everything docs/ops/index_add.md (index_add_ub.md) asks, touching no tensor data.
IndexAddPlan validate_index_add(const char* op, const Tensor& input, int64_t dim, const Tensor& index,
                                const Tensor& source, const Scalar& alpha, bool in_place, IndexAddTiles tiles) {
  const OpLimits& limits = require_offered(op_def(op));
  const int r = input.ndim();
  checks::check_dtype(op, "input", input.dtype(), limits.dtypes);
  checks::check_same_dtype(op, "source", source.dtype(), "input", input.dtype());
  checks::check_index_dtype(op, "index", index.dtype());
  checks::check_rank(op, "input", r, limits.min_rank, limits.max_rank);
  IndexAddPlan plan;
  plan.dim = checks::normalize_dim(op, dim, r);
  const int d = plan.dim;
  if (index.ndim() != 1)
    fail<ArgumentError>(op, ": index rank ", index.ndim(), " (shape ", shape_to_string(index.shape()),
                        ") must be 1");
  checks::check_extent(op, "input", input.shape(), true);
  checks::check_extent(op, "index", index.shape(), true);
  checks::check_extent(op, "source", source.shape(), true);
  if (source.ndim() != r)
    fail<ArgumentError>(op, ": source rank ", source.ndim(), " (shape ", shape_to_string(source.shape()),
                        ") must equal input rank ", r, " (shape ", shape_to_string(input.shape()), ")");
  if (source.shape(d) != index.shape(0))
    fail<ArgumentError>(op, ": source shape ", shape_to_string(source.shape()), " has ", source.shape(d),
                        " entries along dim ", d, " but index has ", index.shape(0), "; they must be equal");
  for (int a = 0; a < r; ++a)
    if (a != d && source.shape(a) != input.shape(a))
      fail<ArgumentError>(op, ": source shape ", shape_to_string(source.shape()), " differs from input shape ",
                          shape_to_string(input.shape()), " at axis ", a, " (", source.shape(a), " != ",
                          input.shape(a), "); only dim ", d, " may differ");
  encode_alpha(op, alpha, input.dtype(), plan.alpha);
  plan.alpha_is_one = alpha_acts_as_one(input.dtype(), plan.alpha);
  if (in_place) checks::check_writable_in_place(op, input, "use index_add");

  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty() && tiles == IndexAddTiles::WholeDim) {
    tiling::check_rank(op, tile, r, "input");
    const int64_t along = std::max(input.shape(d), source.shape(d));
    if (tile[d] < along)
      fail<TileError>(op, ": tile shape ", shape_to_string(tile), " splits dim ", d, " (", tile[d], " < ", along,
                      ", the larger of input's and source's extents along it); the UB form keeps that axis whole");
    tiling::check_ub(op, tile,
                     {{"input tile", input.shape(), input.itemsize()},
                      {"source tile", source.shape(), source.itemsize()},
                      {"index", index.shape(), dtype_size(index.dtype()), 1, {index.shape(0)}},
                      {"output tile", input.shape(), input.itemsize()}});
  } else if (!tile.empty()) {
    tiling::check_rank(op, tile, r, "source");
    Shape row(r, 1);
    row[r - 1] = std::min(tile[r - 1], source.shape(r - 1));
    const int64_t per_block = 32 / static_cast<int64_t>(source.itemsize());
    row[r - 1] = (row[r - 1] + per_block - 1) / per_block * per_block;
    tiling::check_ub(op, tile,
                     {{"source tile", source.shape(), source.itemsize()},
                      {"index tile", index.shape(), dtype_size(index.dtype()), 1, {tile[d]}},
                      {"source row", row, source.itemsize(), 1, row}});
  }
  return plan;
}

Tensor index_add_impl(const char* op, bool in_place, const Tensor& input, int64_t dim, const Tensor& index_view,
                      const Tensor& source_view, const Scalar& alpha, IndexAddTiles tiles) {
  // index and source are read in their valid parts only (docs/kernel_model.md).
  const Tensor index = index_view.valid_part(), source = source_view.valid_part();
  const IndexAddPlan plan = validate_index_add(op, input, dim, index, source, alpha, in_place, tiles);
  // index and source are read as if completely before any write: what shares memory with the
  // written tensor is copied first.
  const Tensor idx = in_place ? checks::unaliased(index.contiguous(), input) : index.contiguous();
  index_bounds::check_for_dim(op, idx, input, plan.dim);
  // Every check has passed: from here on the call succeeds.
  const Tensor out = checks::written_tensor(input, in_place);
  // The device rounds an fp16 / bf16 product alpha * s to the dtype on its last-axis path only.
  kernels::index_add({out, plan.dim, idx, checks::unaliased(source, out), plan.alpha, plan.alpha_is_one,
                      plan.dim == input.ndim() - 1});
  return out;
}

}  // namespace

Tensor index_add_(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return index_add_impl("index_add_", true, input, dim, index, source, alpha, IndexAddTiles::Source);
}
Tensor index_add(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return index_add_impl("index_add", false, input, dim, index, source, alpha, IndexAddTiles::Source);
}


namespace {

// Both pairs: the UB form has index_add's sums (upstream's device kernel and golden are shared)
// and its own tile rule.
template <IndexAddTiles kTiles>
Outputs run_index_add(const OpDef& op, const Args& a) {
  return {index_add_impl(op.name.c_str(), op.in_place(), a.tensor(0), a.integer(1), a.tensor(2), a.tensor(3),
                         a.scalar(4), kTiles)};
}

// index + each step reading and writing a source-sized slice; out of place also copies input.
int64_t index_add_bytes(const OpDef& op, const Args& a, const Outputs& out) {
  return tensor_bytes(a.tensor(2)) + 2 * tensor_bytes(a.tensor(3)) + (op.in_place() ? 0 : 2 * tensor_bytes(out[0]));
}

}  // namespace

void families::add_index_add(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chips{D::FP32, D::FP16, D::BF16, D::INT32, D::INT16, D::INT8};
  const DTypeSet cpu = DTypeSet::all().without({D::BOOL, D::FP8E4M3, D::FP8E5M2, D::FP8E8M0});
  const OpDef shared{
      .name = "index_add",
      .params = {{"input", ParamKind::Tensor},
                 {"dim", ParamKind::Dim},
                 {"index", ParamKind::Tensor},
                 {"source", ParamKind::Tensor},
                 {"alpha", ParamKind::Scalar, "1", true, nullptr, "int | float"}},
      .forms = kFunction | kMethod | kTorch,
      .doc_page = "docs/ops/index_add.md",
      .tile_rule = "TileShape has the source's rank; UB: source tile, index tile, one source row",
      .limits = platform_rows(cpu, chips, chips, chips, 1, 5, 1, 8),
      .run = run_index_add<IndexAddTiles::Source>,
      .bytes = index_add_bytes,
  };
  add_in_place_pair(table, shared);
  OpDef ub = shared;
  ub.name = "index_add_ub";
  ub.forms = kFunction;
  ub.doc_page = "docs/ops/index_add_ub.md";
  ub.tile_rule = "TileShape has the input's rank and does not split dim; UB: input, source, output tiles and the whole index";
  const DTypeSet ub_chips{D::FP32, D::FP16, D::BF16, D::INT32, D::INT16};
  ub.limits = platform_rows(cpu, ub_chips, ub_chips, ub_chips, 1, 5, 1, 8);
  ub.run = run_index_add<IndexAddTiles::WholeDim>;
  add_in_place_pair(table, ub, "", "", "index_add__ub");
}

}  // namespace pto
