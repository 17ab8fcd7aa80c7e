// The reduction family (docs/ops/reduction.md): sum, prod, amax, amin, argmax, argmin over one dim,
// var over several, cumsum and cumprod along one. Each op checks everything (dtype, rank, extent,
// dims, tile rules), then runs the engine of kernels/reduction.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/reduction.h"
#include "ops/checks.h"
#include "ops/elementwise.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;
namespace kr = kernels::reduction;

// What a reduced tensor looks like.
struct Plan {
  Tensor input;           // the valid part
  std::vector<int> dims;  // normalised, ascending
  Shape keep;             // input's shape with the reduced dims set to 1
  Shape shape;            // the result's: keep, or without the reduced dims (at least one dim)
  DType dtype;            // the result's
};

Shape keep_shape(const Shape& shape, const std::vector<int>& dims) {
  Shape keep = shape;
  for (int d : dims) keep[d] = 1;
  return keep;
}

// keepdim=False drops the reduced dims; a result without dims keeps one (upstream keeps [1]).
Shape result_shape(const Shape& shape, const std::vector<int>& dims, bool keepdim) {
  if (keepdim) return keep_shape(shape, dims);
  Shape out;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(shape[d]);
  if (out.empty()) out.push_back(1);
  return out;
}

// The checks every op of the family makes on its input.
Tensor checked_input(const OpDef& op, const Tensor& t) {
  const OpLimits& limits = require_offered(op);
  const char* name = op.name.c_str();
  checks::check_dtype(name, "input", t.dtype(), limits.dtypes);
  checks::check_rank(name, "input", t.ndim(), limits.min_rank, limits.max_rank);
  checks::check_extent(name, "input", t.shape(), true);
  return t.valid_part();
}

// The tile rule of the family: TileShape has the input's rank; on a platform with a UB its input
// tile holds at most 64 KB (`tile_kb`, 0: no such limit) and the tiles fit the UB; argmax / argmin
// also need a last tile dim of whole 32-byte blocks.
void check_tile(const OpDef& op, const Tensor& x, const Shape& out_shape, DType out_dtype, int64_t tile_kb,
                bool aligned_tail) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const char* name = op.name.c_str();
  tiling::check_rank(name, tile, x.ndim(), "input");
  const int64_t item = static_cast<int64_t>(x.itemsize());
  if (aligned_tail && tile.back() * item % 32 != 0)
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a last dim of ", tile.back(), " (",
                    tile.back() * item, " bytes of ", dtype_name(x.dtype()),
                    "); the last tile dim must be a multiple of 32 bytes");
  if (current_platform().ub_bytes == 0) return;
  const tiling::Buffer input{"input tile", x.shape(), x.itemsize()};
  const int64_t bytes = tiling::buffer_bytes(tile, input);
  if (tile_kb && bytes > tile_kb * 1024)
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " holds ", bytes, " bytes of the ",
                    dtype_name(x.dtype()), " input, above the ", tile_kb * 1024, " bytes (", tile_kb,
                    " KB) a reduction tile may hold; choose a smaller tile with set_vec_tile_shapes");
  tiling::check_ub(name, tile, {input, {"output tile", out_shape, dtype_size(out_dtype)}});
}

// ---- sum, prod, amax, amin, argmax, argmin -------------------------------------------------------

struct Rule {
  kr::Op op;
  bool needs_elements;  // no identity: an empty reduced axis is an error
  bool index_result;    // DT_INT32 indices
};

Plan plan_single(const OpDef& op, const Args& a, const Rule& rule) {
  Plan p;
  p.input = checked_input(op, a.tensor(0));
  const Tensor& x = p.input;
  const int dim = checks::normalize_dim(op.name.c_str(), a.integer(1), x.ndim());
  p.dims = {dim};
  const int64_t n = x.shape(dim);
  if (rule.needs_elements && n == 0 && shape_numel(keep_shape(x.shape(), p.dims)) > 0)
    fail<ArgumentError>(op.name, ": input shape ", shape_to_string(x.shape()), " has no elements along dim ", dim,
                        "; ", op.name, " needs at least one");
  if (rule.index_result && n > std::numeric_limits<int32_t>::max())
    fail<ArgumentError>(op.name, ": input shape ", shape_to_string(x.shape()), " has ", n, " elements along dim ", dim,
                        "; DT_INT32 indices reach ", std::numeric_limits<int32_t>::max());
  p.keep = keep_shape(x.shape(), p.dims);
  p.shape = result_shape(x.shape(), p.dims, a.flag(2));
  p.dtype = rule.index_result ? D::INT32 : x.dtype();
  check_tile(op, x, p.keep, p.dtype, 64, rule.index_result);
  return p;
}

template <const Rule& R>
Outputs run_single(const OpDef& op, const Args& a) {
  const Plan p = plan_single(op, a, R);
  Tensor out = Tensor::empty(p.keep, p.dtype);
  kr::Reduce r;
  r.input = p.input, r.dim = p.dims[0], r.out = out, r.op = R.op;
  kr::reduce(r);
  return {out.as_strided(p.shape, contiguous_strides(p.shape), 0)};
}

template <const Rule& R>
std::vector<OutputMeta> infer_single(const OpDef& op, const Args& a) {
  const checks::EveryPlatformScope every_platform;
  const Plan p = plan_single(op, a, R);
  return {{p.shape, p.dtype}};
}

constexpr Rule kSum{kr::Op::Sum, false, false};
constexpr Rule kProd{kr::Op::Prod, false, false};
constexpr Rule kAmax{kr::Op::Max, true, false};
constexpr Rule kAmin{kr::Op::Min, true, false};
constexpr Rule kArgmax{kr::Op::ArgMax, true, true};
constexpr Rule kArgmin{kr::Op::ArgMin, true, true};

// ---- var -------------------------------------------------------------------------------------------

struct VarPlan {
  Plan p;
  double count = 0;    // N in the compute type
  double divisor = 0;  // max(0, N - correction) in the compute type
};

VarPlan plan_var(const OpDef& op, const Args& a) {
  VarPlan v;
  Plan& p = v.p;
  p.input = checked_input(op, a.tensor(0));
  const Tensor& x = p.input;
  const char* name = op.name.c_str();
  const int rank = x.ndim();
  if (!a.is_none(1)) {
    const std::vector<int64_t>& given = a.ints(1);
    if (static_cast<int>(given.size()) > rank)
      fail<ArgumentError>(name, ": dim has ", given.size(), " entries but input has rank ", rank);
    for (int64_t d : given) p.dims.push_back(checks::normalize_dim(name, d, rank));
    std::sort(p.dims.begin(), p.dims.end());
    if (std::adjacent_find(p.dims.begin(), p.dims.end()) != p.dims.end())
      fail<ArgumentError>(name, ": dim ", shape_to_string(given), " names dim ",
                          *std::adjacent_find(p.dims.begin(), p.dims.end()), " twice; each dim may appear once");
  }
  if (p.dims.empty())
    for (int d = 0; d < rank; ++d) p.dims.push_back(d);
  for (int d = 0; d < rank; ++d)
    if (x.shape(d) == 0)
      fail<ArgumentError>(name, ": input shape ", shape_to_string(x.shape()), " has an empty dim ", d,
                          "; var needs every dim > 0");
  const Scalar& correction = a.scalar(2);
  if (correction.kind == Scalar::Kind::Bool)
    fail<DTypeError>(name, ": correction ", correction.to_string(), " is a bool; give an int or a float");
  const double c = correction.kind == Scalar::Kind::Float ? correction.f : static_cast<double>(correction.i);
  int64_t n = 1;
  for (int d : p.dims) n *= x.shape(d);
  // The device computes N and N - correction in fp32 (fp64 for fp64 inputs here).
  if (x.dtype() == D::FP64) {
    v.count = static_cast<double>(n);
    v.divisor = std::max(0.0, v.count - c);
  } else {
    const float count = static_cast<float>(n);
    v.count = count;
    v.divisor = std::max(0.0f, count - static_cast<float>(c));
  }
  p.keep = keep_shape(x.shape(), p.dims);
  p.shape = result_shape(x.shape(), p.dims, a.flag(3));
  p.dtype = x.dtype();
  check_tile(op, x, p.keep, p.dtype, 0, false);
  return v;
}

// Sums over the dims in ascending order, the first one of transform(x): one reduction per dim, as
// the device composes var. The last writes `last_dtype`, the others the compute type.
Tensor sum_over(const Tensor& x, const std::vector<int>& dims, kr::Transform transform, double divisor,
                const Tensor& center, DType compute, DType last_dtype) {
  Tensor t = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    Tensor out = Tensor::empty(keep_shape(t.shape(), {dims[i]}), i + 1 == dims.size() ? last_dtype : compute);
    kr::reduce({.input = t,
                .dim = dims[i],
                .out = out,
                .op = kr::Op::Sum,
                .transform = i == 0 ? transform : kr::Transform::None,
                .divisor = divisor,
                .center = i == 0 ? center : Tensor()});
    t = out;
  }
  return t;
}

Outputs run_var(const OpDef& op, const Args& a) {
  const VarPlan v = plan_var(op, a);
  const Plan& p = v.p;
  const DType compute = p.input.dtype() == D::FP64 ? D::FP64 : D::FP32;
  const Tensor mean = sum_over(p.input, p.dims, kr::Transform::Scaled, v.count, Tensor(), compute, compute);
  const Tensor center = elementwise::broadcast_to(mean, keep_shape(p.input.shape(), {p.dims[0]}));
  const Tensor out =
      sum_over(p.input, p.dims, kr::Transform::SquaredDeviation, v.divisor, center, compute, p.dtype);
  return {out.as_strided(p.shape, contiguous_strides(p.shape), 0)};
}

// ---- cumsum, cumprod ---------------------------------------------------------------------------------

struct ScanPlan {
  Tensor input;
  int dim = 0;
  DType dtype;
};

ScanPlan plan_scan(const OpDef& op, const Args& a) {
  ScanPlan s;
  s.input = checked_input(op, a.tensor(0));
  s.dim = checks::normalize_dim(op.name.c_str(), a.integer(1), s.input.ndim());
  s.dtype = is_floating(s.input.dtype()) ? s.input.dtype() : D::INT64;
  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(op.name.c_str(), tile, s.input.ndim(), "input");
    tiling::check_ub(op.name.c_str(), tile, {{"input tile", s.input.shape(), s.input.itemsize()},
                                             {"output tile", s.input.shape(), dtype_size(s.dtype)}});
  }
  return s;
}

Outputs run_scan(const OpDef& op, const Args& a) {
  const ScanPlan s = plan_scan(op, a);
  Tensor out = Tensor::empty(s.input.shape(), s.dtype);
  kr::scan({.input = s.input, .dim = s.dim, .out = out, .product = op.name == "cumprod"});
  return {out};
}

std::vector<OutputMeta> infer_scan(const OpDef& op, const Args& a) {
  const checks::EveryPlatformScope every_platform;
  const ScanPlan s = plan_scan(op, a);
  return {{s.input.shape(), s.dtype}};
}

// ---- the entries -------------------------------------------------------------------------------------

std::vector<Param> dim_params(const char* dim_default) {
  return {{"input", ParamKind::Tensor}, {"dim", ParamKind::Dim, dim_default}, {"keepdim", ParamKind::Bool, "False"}};
}

constexpr const char* kReduceTile =
    "TileShape has the input's rank; UB: the input tile (at most 64 KB) and the output tile";

}  // namespace

void families::add_reduction(std::vector<OpDef>& table) {
  const DTypeSet numbers = DTypeSet::all().without({D::BOOL, D::FP8E8M0});
  const DTypeSet floats{D::FP16, D::BF16, D::FP32, D::FP64};
  const DTypeSet halves{D::FP16, D::BF16, D::FP32};
  const DTypeSet sum_chips{D::FP32, D::BF16, D::INT32, D::INT16};
  const DTypeSet prod_chips{D::FP32, D::INT32, D::INT16};
  const DTypeSet extreme_950{D::FP16, D::BF16, D::FP32, D::INT32, D::INT16, D::UINT8, D::INT8};
  const DTypeSet extreme_a2{D::FP16, D::BF16, D::FP32, D::INT32, D::INT16};
  const DTypeSet cumsum_cpu{D::FP16, D::BF16, D::FP32, D::FP64, D::INT8, D::INT16, D::INT32, D::INT64, D::UINT8, D::UINT16};
  const DTypeSet cumsum_chips{D::FP16, D::BF16, D::INT16, D::INT32, D::FP32};
  const auto rows = [](DTypeSet cpu, DTypeSet a950, DTypeSet a3, DTypeSet a2) {
    return platform_rows(cpu, a950, a3, a2, 1, 4, 1, 8);
  };

  table.push_back(OpDef{
      .name = "sum",
      .params = dim_params(nullptr),
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = kReduceTile,
      .limits = rows(numbers, sum_chips, sum_chips, sum_chips),
      .run = run_single<kSum>,
      .infer = infer_single<kSum>,
  });
  table.push_back(OpDef{
      .name = "prod",
      .params = dim_params(nullptr),
      .forms = kFunction | kTorch,
      .doc_page = "docs/ops/sum.md",
      .tile_rule = kReduceTile,
      .limits = rows(numbers, prod_chips, prod_chips, prod_chips),
      .run = run_single<kProd>,
      .infer = infer_single<kProd>,
  });
  for (const bool max : {true, false}) {
    table.push_back(OpDef{
        .name = max ? "amax" : "amin",
        .params = dim_params(nullptr),
        .forms = kFunction | kMethod | kTorch,
        .doc_page = "docs/ops/amax.md",
        .tile_rule = kReduceTile,
        .limits = rows(numbers, extreme_950, extreme_a2, extreme_a2),
        .run = max ? run_single<kAmax> : run_single<kAmin>,
        .infer = max ? infer_single<kAmax> : infer_single<kAmin>,
    });
  }
  for (const bool max : {true, false}) {
    table.push_back(OpDef{
        .name = max ? "argmax" : "argmin",
        .params = dim_params("-1"),
        .forms = kFunction | kMethod | kTorch,
        .doc_page = "docs/ops/argmax.md",
        .tile_rule = "TileShape has the input's rank, its last dim whole 32-byte blocks; UB: the input tile "
                     "(at most 64 KB) and the output tile",
        .limits = rows(numbers, halves, halves, halves),
        .run = max ? run_single<kArgmax> : run_single<kArgmin>,
        .infer = max ? infer_single<kArgmax> : infer_single<kArgmin>,
    });
  }
  table.push_back(OpDef{
      .name = "var",
      .params = {{"input", ParamKind::Tensor},
                 {"dim", ParamKind::IntList, "None", false, nullptr, "int | collections.abc.Sequence[int]"},
                 {"correction", ParamKind::Scalar, "1", false, nullptr, "int | float"},
                 {"keepdim", ParamKind::Bool, "False"}},
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = "TileShape has the input's rank; UB: the input tile and the output tile",
      .limits = rows(floats, halves, halves, halves),
      .run = run_var,
      .infer = [](const OpDef& op, const Args& a) -> std::vector<OutputMeta> {
        const checks::EveryPlatformScope every_platform;
        const VarPlan v = plan_var(op, a);
        return {{v.p.shape, v.p.dtype}};
      },
  });
  for (const bool product : {false, true}) {
    table.push_back(OpDef{
        .name = product ? "cumprod" : "cumsum",
        .params = {{"input", ParamKind::Tensor}, {"dim", ParamKind::Dim}},
        .forms = kFunction | kMethod | kTorch,
        .doc_page = "docs/ops/cumsum.md",
        .tile_rule = "TileShape has the input's rank; UB: the input tile and the output tile",
        .limits = product ? rows(floats, halves, halves, halves) : rows(cumsum_cpu, cumsum_chips, cumsum_chips, cumsum_chips),
        .run = run_scan,
        .infer = infer_scan,
    });
  }
}

}  // namespace pto
