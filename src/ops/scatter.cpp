// scatter_ / scatter (docs/ops/scatter.md): checks, scalar conversion and tile rules, then the index
// values, then the kernel. Nothing is written before every check has passed.
#include <cmath>

#include "kernels/scatter.h"
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

const char* reduce_name(ScatterReduce r) {
  switch (r) {
    case ScatterReduce::Add: return "'add'";
    case ScatterReduce::Multiply: return "'multiply'";
    default: return "None";
  }
}

struct ScatterPlan {
  int dim = 0;
  alignas(8) unsigned char scalar[8] = {};  // the converted scalar src
};

// Everything docs/ops/scatter.md, docs/platforms.md, docs/kernel_model.md asks, touching no tensor data. src is a tensor or a scalar.
ScatterPlan validate_scatter(const char* op, const Tensor& input, int64_t dim, const Tensor& index, const Tensor* src,
                             const Scalar* scalar, ScatterReduce reduce, bool in_place) {
  const OpLimits& limits = require_offered(op_def("scatter_"));
  const Platform& platform = current_platform();
  const DType dt = input.dtype();
  checks::check_dtype(op, "input", dt, limits.dtypes);
  const DTypeSet reduce_none_only{DType::BOOL, DType::FP8E4M3, DType::FP8E5M2, DType::FP8E8M0};
  if (reduce != ScatterReduce::None && reduce_none_only.contains(dt))
    fail<DTypeError>(op, ": input dtype ", dtype_name(dt), " takes reduce None only, got reduce ", reduce_name(reduce),
                     "; reduce ", reduce_name(reduce), " allows ", limits.dtypes.without(reduce_none_only).to_string());
  checks::check_index_dtype(op, "index", index.dtype());
  if (src) checks::check_same_dtype(op, "src", src->dtype(), "input", dt);

  const int r = input.ndim();
  checks::check_rank(op, "input", r, limits.min_rank, limits.max_rank);
  if (index.ndim() != r)
    fail<ArgumentError>(op, ": index rank ", index.ndim(), " (shape ", shape_to_string(index.shape()),
                        ") must equal input rank ", r, " (shape ", shape_to_string(input.shape()), ")");
  if (src && src->ndim() != r)
    fail<ArgumentError>(op, ": src rank ", src->ndim(), " (shape ", shape_to_string(src->shape()),
                        ") must equal input rank ", r, " (shape ", shape_to_string(input.shape()), ")");
  ScatterPlan plan;
  plan.dim = checks::normalize_dim(op, dim, r);
  const int d = plan.dim;
  checks::check_extent(op, "input", input.shape(), true);
  checks::check_extent(op, "index", index.shape(), true);
  if (src) checks::check_extent(op, "src", src->shape(), true);
  for (int a = 0; a < r; ++a) {
    if (a != d && index.shape(a) > input.shape(a))
      fail<ArgumentError>(op, ": index shape ", shape_to_string(index.shape()), " is larger than input shape ",
                          shape_to_string(input.shape()), " at axis ", a, " (", index.shape(a), " > ", input.shape(a),
                          "); index.shape[a] <= input.shape[a] is required for every axis a != dim ", d);
    if (src && index.shape(a) > src->shape(a))
      fail<ArgumentError>(op, ": index shape ", shape_to_string(index.shape()), " is larger than src shape ",
                          shape_to_string(src->shape()), " at axis ", a, " (", index.shape(a), " > ", src->shape(a),
                          "); index.shape[a] <= src.shape[a] is required for every axis");
  }
  if (in_place) checks::check_writable_in_place(op, input, "use scatter");

  if (scalar) {
    encode_scalar(*scalar, dt, plan.scalar, op, "src");
    if (platform.scatter_scalar_must_be_finite && is_floating(dt) && !std::isfinite(element_to_double(dt, plan.scalar)))
      fail<ArgumentError>(op, ": src value ", scalar->to_string(), " is ",
                          std::isnan(element_to_double(dt, plan.scalar)) ? "NaN" : "infinite", " after conversion to ",
                          dtype_name(dt), "; platform ", platform.name, " requires a finite scalar src");
  }

  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(op, tile, r, "input");
    const int64_t need = std::max(input.shape(d), index.shape(d));
    if (tile[d] < need)
      fail<TileError>(op, ": tile shape ", shape_to_string(tile), " has tile[", d, "] = ", tile[d],
                      " below max(input.shape[", d, "], index.shape[", d, "]) = ", need,
                      "; the dim axis is not split, so its tile must cover it whole");
    const bool wide = reduce != ScatterReduce::None && (dt == DType::FP16 || dt == DType::BF16);
    const size_t elem = wide ? 4 : dtype_size(dt);
    const size_t ielem = dtype_size(index.dtype());
    if (src) {
      Shape row(r, 1);
      row[r - 1] = index.shape(r - 1);
      tiling::check_ub(op, tile,
                       {{"input tile", input.shape(), elem},
                        {"index tile", index.shape(), ielem},
                        {"src tile", index.shape(), elem},
                        {"index row", row, ielem}});
    } else {
      tiling::check_ub(op, tile, {{"input tile", input.shape(), elem}, {"index tile", index.shape(), ielem}});
    }
  }
  return plan;
}

Tensor scatter_impl(const char* op, bool in_place, const Tensor& input, int64_t dim, const Tensor& index_view,
                    const Tensor* src_view, const Scalar* scalar, ScatterReduce reduce) {
  // index and src are read in their valid parts only (docs/kernel_model.md); input is written whole.
  const Tensor index = index_view.valid_part();
  const Tensor src_valid = src_view ? src_view->valid_part() : Tensor();
  const Tensor* src = src_view ? &src_valid : nullptr;
  const ScatterPlan plan = validate_scatter(op, input, dim, index, src, scalar, reduce, in_place);
  // docs/ops/scatter.md: index and src are read as if completely before any write, so whatever shares
  // memory with the written tensor is copied first.
  Tensor idx = index.contiguous();
  if (in_place && idx.may_overlap(input)) {
    Tensor copy = Tensor::empty(idx.shape(), idx.dtype());
    copy_into(copy, idx);
    idx = copy;
  }
  const int64_t bound = input.shape(plan.dim);
  // A large index with a small bound is also narrowed to uint8 / uint16 by the same pass: the
  // kernel then reads 1 or 2 bytes a value instead of 4 or 8 (and a copy that small often stays
  // in cache).
  Tensor narrow;
  if (bound <= 65536 && idx.numel() >= (1 << 20))
    narrow = Tensor::empty(idx.shape(), bound <= 256 ? DType::UINT8 : DType::UINT16);
  index_bounds::check(op, idx, bound, [&] {
    return "for dim " + std::to_string(plan.dim) + " of input shape " + shape_to_string(input.shape());
  }, narrow.defined() ? &narrow : nullptr);
  // Every check has passed: from here on the call succeeds.
  Tensor out = input;
  if (!in_place) {
    out = Tensor::empty(input.shape(), input.dtype());
    copy_into(out, input);
  }
  kernels::ScatterArgs args;
  args.out = out;
  args.dim = plan.dim;
  args.index = narrow.defined() ? narrow : idx;
  args.reduce = reduce;
  if (src) {
    args.src = src->as_strided(index.shape(), src->strides(), 0);  // the index-shaped prefix
    if (args.src.may_overlap(out)) {
      Tensor copy = Tensor::empty(args.src.shape(), args.src.dtype());
      copy_into(copy, args.src);
      args.src = copy;
    }
  } else {
    args.scalar = plan.scalar;
  }
  kernels::scatter(args);
  return out;
}

}  // namespace

ScatterReduce scatter_reduce_from_name(std::string_view name, const char* op) {
  if (name == "add") return ScatterReduce::Add;
  if (name == "multiply") return ScatterReduce::Multiply;
  fail<ArgumentError>(op, ": reduce '", name, "' is not supported; allowed: None, 'add', 'multiply'");
}

Tensor scatter_(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce) {
  return scatter_impl("scatter_", true, input, dim, index, &src, nullptr, reduce);
}
Tensor scatter_(const Tensor& input, int64_t dim, const Tensor& index, const Scalar& src, ScatterReduce reduce) {
  return scatter_impl("scatter_", true, input, dim, index, nullptr, &src, reduce);
}
Tensor scatter(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce reduce) {
  return scatter_impl("scatter", false, input, dim, index, &src, nullptr, reduce);
}
Tensor scatter(const Tensor& input, int64_t dim, const Tensor& index, const Scalar& src, ScatterReduce reduce) {
  return scatter_impl("scatter", false, input, dim, index, nullptr, &src, reduce);
}


namespace {

Outputs run_scatter(const OpDef& op, const Args& a) {
  const bool in_place = op.in_place();
  const ScatterReduce reduce =
      a.is_none(4) ? ScatterReduce::None : scatter_reduce_from_name(a.str(4), op.name.c_str());
  const Tensor* src = a.is_tensor(3) ? &a.tensor(3) : nullptr;
  const Scalar* scalar = src ? nullptr : &a.scalar(3);
  return {scatter_impl(op.name.c_str(), in_place, a.tensor(0), a.integer(1), a.tensor(2), src, scalar, reduce)};
}

// index + the src elements read + each written element read and written (add / multiply) or
// written (None); out of place also copies input.
int64_t scatter_bytes(const OpDef& op, const Args& a, const Outputs&) {
  const Tensor& input = a.tensor(0);
  const Tensor& index = a.tensor(2);
  const int64_t written = index.numel() * static_cast<int64_t>(input.itemsize());
  const int64_t moved = tensor_bytes(index) + (a.is_tensor(3) ? written : 0) + (a.is_none(4) ? 1 : 2) * written;
  return moved + (op.in_place() ? 0 : 2 * tensor_bytes(input));
}

}  // namespace

void families::add_scatter(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chips{D::FP32, D::FP16, D::BF16, D::INT8, D::UINT8, D::INT16, D::INT32};
  const OpDef shared{
      .name = "scatter",
      .params = {{"input", ParamKind::Tensor},
                 {"dim", ParamKind::Dim},
                 {"index", ParamKind::Tensor},
                 {"src", ParamKind::TensorOrScalar},
                 {"reduce", ParamKind::Str, "None", true, "None, 'add', 'multiply'"}},
      .forms = kFunction | kMethod,
      .doc_page = "docs/ops/scatter.md",
      .tile_rule = "TileShape has the input's rank; UB: input, index (and src) tiles",
      .limits = platform_rows(DTypeSet::all(), chips, chips, chips, 1, 4, 1, 8),
      .run = run_scatter,
      .bytes = scatter_bytes,
  };
  add_in_place_pair(table, shared,
                    "scatter_.src(Tensor(a!) input, int dim, Tensor index, Tensor src, *, str? reduce=None) -> (); "
                    "scatter_.value(Tensor(a!) input, int dim, Tensor index, Scalar value, *, str? reduce=None) -> ()",
                    "scatter.src(Tensor input, int dim, Tensor index, Tensor src, *, str? reduce=None) -> Tensor; "
                    "scatter.value(Tensor input, int dim, Tensor index, Scalar value, *, str? reduce=None) -> Tensor");
}

}  // namespace pto
