// The creation family (docs/ops/full.md, arange.md, one_hot.md, random.md): full, zeros, ones,
// arange, one_hot, uniform, normal. No tensor is read except one_hot's input: the checks are on
// shapes, scalars and dtypes, per platform, then the tile rules; the output is allocated only
// after every check has passed.
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "kernels/creation.h"
#include "ops/checks.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;

// An output shape given as a list: its rank within the platform's range, no negative dim, the
// extent and empty-tensor rules of an input (the chips take no empty tensors).
void check_size(const char* op, const char* param, const Shape& size, const OpLimits& limits) {
  checks::check_rank(op, param, static_cast<int>(size.size()), limits.min_rank, limits.max_rank);
  for (int64_t d : size)
    if (d < 0) fail<ArgumentError>(op, ": ", param, " ", shape_to_string(size), " has a negative dim");
  checks::check_extent(op, param, size, true);
}

// TileShape has at least the output's rank: the device's tiling loops (TiledFull, TiledRange) read
// one tile dim per output dim from the front and ignore the rest; UB: the output tile.
void check_output_tile(const char* op, const Shape& shape, DType dt) {
  const Shape& set = get_vec_tile_shapes();
  if (set.empty()) return;
  const Shape tile = tiling::leading_tile(op, set, static_cast<int>(shape.size()), "output");
  tiling::check_ub(op, tile, {{"output tile", shape, dtype_size(dt)}});
}

// ---- full / zeros / ones -------------------------------------------------------------------------

// The device writes a float fill value as an fp32 literal that the tile then converts: a value
// reaches a floating dtype narrower than fp64 through fp32 (int -> double -> fp32 -> dtype).
Scalar as_device_literal(const Scalar& value, DType dt) {
  if (!is_floating(dt) || dt == D::FP64) return value;
  const double v = value.kind == Scalar::Kind::Float ? value.f : static_cast<double>(value.i);
  return Scalar::of_float(static_cast<double>(static_cast<float>(v)));
}

// `size` filled with `value` (converted to dt); a valid_shape smaller than size leaves the rest 0.
Tensor full_impl(const char* op, const Shape& size, const Scalar& value, DType dt,
                 const std::optional<Shape>& valid_shape) {
  const OpLimits& limits = require_offered(*find_op(op));
  check_size(op, "size", size, limits);
  checks::check_dtype(op, "output", dt, limits.dtypes);
  alignas(8) unsigned char element[8] = {};
  encode_scalar(as_device_literal(value, dt), dt, element, op, "fill_value");
  if (valid_shape) {
    const Shape& v = *valid_shape;
    if (v.size() != size.size())
      fail<ArgumentError>(op, ": valid_shape ", shape_to_string(v), " has ", v.size(), " dims but size ",
                          shape_to_string(size), " has ", size.size());
    for (int64_t d : v)
      if (d < 0) fail<ArgumentError>(op, ": valid_shape ", shape_to_string(v), " has a negative dim");
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] > size[i])
        fail<TileError>(op, ": valid_shape ", shape_to_string(v), " exceeds size ", shape_to_string(size), " at dim ",
                        i, " (", v[i], " > ", size[i], ")");
  }
  check_output_tile(op, size, dt);
  if (!valid_shape || *valid_shape == size) {
    Tensor out = Tensor::empty(size, dt);
    kernels::creation::fill(out, element);
    return out;
  }
  // A partly valid tensor holds 0 past its valid part (docs/kernel_model.md).
  Tensor out = Tensor::zeros(size, dt);
  const Tensor one = Tensor::from_blob(element, {}, {}, dt, nullptr);
  const Shape& v = *valid_shape;
  copy_into(out.as_strided(v, out.strides(), 0), one.as_strided(v, Strides(v.size(), 0), 0), op);
  return out.with_valid_shape(v);
}

Outputs run_full(const OpDef& op, const Args& a) {
  std::optional<Shape> valid;
  if (!a.is_none(3)) valid = a.ints(3);
  return {full_impl(op.name.c_str(), a.ints(0), a.scalar(1), a.dtype(2), valid)};
}

template <int Value>
Outputs run_constant(const OpDef& op, const Args& a) {
  const DType dt = a.is_none(1) ? D::FP32 : a.dtype(1);
  return {full_impl(op.name.c_str(), a.ints(0), Scalar::of_int(Value), dt, std::nullopt)};
}

// ---- arange ----------------------------------------------------------------------------------------

constexpr const char* kArange = "arange";
constexpr double kMinFloatStep = 1e-8;  // the page's bound on |step| for float ranges

struct RangePlan {
  bool floating = false;
  int64_t length = 0;
  double start = 0, step = 0;  // int32 values, or the Python floats (the kernel rounds them to fp32)
};

// A number as Python prints it (0.1, 4.0, inf, 7): the shortest repr that reads back the same.
std::string python_repr(const Scalar& s) {
  if (s.kind != Scalar::Kind::Float) return s.to_string();
  if (std::isnan(s.f)) return "nan";
  if (std::isinf(s.f)) return s.f > 0 ? "inf" : "-inf";
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), s.f).ptr;
  std::string out(text, end);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

void check_finite(const char* param, const Scalar& s) {
  if (s.kind == Scalar::Kind::Float && !std::isfinite(s.f))
    fail<ArgumentError>(kArange, ": ", param, " ", python_repr(s), " is not finite");
}

void check_int32(const char* param, const Scalar& s) {
  if (s.i < INT32_MIN || s.i > INT32_MAX)
    fail<ArgumentError>(kArange, ": ", param, " ", python_repr(s),
                        " is outside the int32 range [-2147483648, 2147483647]; integer ranges are DT_INT32 "
                        "(pass a float for a DT_FP32 range)");
}

double as_double(const Scalar& s) { return s.kind == Scalar::Kind::Float ? s.f : static_cast<double>(s.i); }

RangePlan plan_arange(const Scalar& start, const Scalar& end, const Scalar& step) {
  const OpLimits& limits = require_offered(op_def(kArange));
  RangePlan plan;
  plan.floating = start.kind == Scalar::Kind::Float || end.kind == Scalar::Kind::Float ||
                  step.kind == Scalar::Kind::Float;
  if (plan.floating) {
    check_finite("start", start);
    check_finite("end", end);
    check_finite("step", step);
    plan.start = as_double(start);
    plan.step = as_double(step);
    if (std::fabs(plan.step) <= kMinFloatStep)
      fail<ArgumentError>(kArange, ": step ", python_repr(step), " is too close to 0; a float step needs |step| > 1e-08");
    const double length = std::ceil((as_double(end) - plan.start) / plan.step);
    if (length <= 0)
      fail<ArgumentError>(kArange, ": step ", python_repr(step), " does not lead from start ", python_repr(start),
                          " towards end ", python_repr(end), "; (end - start) / step must be > 0");
    if (length > 0x1p62)
      fail<ArgumentError>(kArange, ": the range from ", python_repr(start), " to ", python_repr(end), " by ",
                          python_repr(step), " has ", length, " elements, more than any tensor holds");
    plan.length = static_cast<int64_t>(length);
  } else {
    check_int32("start", start);
    check_int32("end", end);
    check_int32("step", step);
    const int64_t s = static_cast<int64_t>(start.i), e = static_cast<int64_t>(end.i), d = static_cast<int64_t>(step.i);
    if (d == 0) fail<ArgumentError>(kArange, ": step must not be 0");
    plan.length = (e - s) / d + ((e - s) % d != 0 ? 1 : 0);
    if (plan.length <= 0)
      fail<ArgumentError>(kArange, ": step ", d, " does not lead from start ", s, " towards end ", e,
                          "; (end - start) / step must be > 0");
    plan.start = static_cast<double>(s);
    plan.step = static_cast<double>(d);
  }
  const DType dt = plan.floating ? D::FP32 : D::INT32;
  checks::check_dtype(kArange, "output", dt, limits.dtypes);
  checks::check_extent(kArange, "output", {plan.length}, false);
  check_output_tile(kArange, {plan.length}, dt);
  return plan;
}

Outputs run_arange(const OpDef&, const Args& a) {
  // arange(end) is overload 1; start 0 and step 1 are int32 then, as upstream makes them.
  const bool end_only = a.overload == 1;
  const Scalar start = end_only ? Scalar::of_int(0) : a.scalar(0);
  const Scalar end = end_only ? a.scalar(0) : a.scalar(1);
  const Scalar step = end_only ? Scalar::of_int(1) : a.scalar(2);
  const RangePlan plan = plan_arange(start, end, step);
  if (!plan.floating) {
    Tensor out = Tensor::empty({plan.length}, D::INT32);
    kernels::creation::arange_i32(out, static_cast<int64_t>(plan.start), static_cast<int64_t>(plan.step));
    return {out};
  }
  Tensor out = Tensor::empty({plan.length}, D::FP32);
  const Shape& tile = get_vec_tile_shapes();
  kernels::creation::arange_f32(out, static_cast<float>(plan.start), static_cast<float>(plan.step),
                                tile.empty() ? plan.length : tile[0]);
  return {out};
}

// ---- one_hot ---------------------------------------------------------------------------------------

constexpr const char* kOneHot = "one_hot";

Shape one_hot_shape(const Tensor& input, int64_t num_classes) {
  const OpLimits& limits = require_offered(op_def(kOneHot));
  checks::check_dtype(kOneHot, "input", input.dtype(), limits.dtypes);
  checks::check_rank(kOneHot, "input", input.ndim(), limits.min_rank, limits.max_rank);
  checks::check_extent(kOneHot, "input", input.shape(), true);
  if (num_classes == -1)
    fail<ArgumentError>(kOneHot, ": num_classes must be specified; -1 (infer it from the values) is not supported");
  if (num_classes <= 0) fail<ArgumentError>(kOneHot, ": num_classes ", num_classes, " must be a positive integer");
  Shape out = input.shape();
  out.push_back(num_classes);
  checks::check_extent(kOneHot, "output", out, false);
  return out;
}

void check_one_hot_tile(const Tensor& input, const Shape& out_shape) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const int r = static_cast<int>(out_shape.size());
  tiling::check_rank(kOneHot, tile, r, "output");
  if (tile.back() != out_shape.back())
    fail<TileError>(kOneHot, ": tile shape ", shape_to_string(tile), " has a last dim of ", tile.back(),
                    " but num_classes is ", out_shape.back(), "; the class axis is one whole tile");
  const Shape input_tile(tile.begin(), tile.end() - 1);
  tiling::check_ub(kOneHot, tile, {{"input tile", input.shape(), input.itemsize(), 1, input_tile},
                                   {"output tile", out_shape, dtype_size(D::INT64)}});
}

// "(1, 2)" for flat position 5 of shape [2, 3]; "(4,)" in 1-D, as numpy prints a tuple.
std::string position_of(int64_t flat, const Shape& shape) {
  std::vector<int64_t> coords(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coords[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string out = "(";
  for (size_t d = 0; d < coords.size(); ++d) out += (d ? ", " : "") + std::to_string(coords[d]);
  return out + (coords.size() == 1 ? ",)" : ")");
}

Tensor one_hot(const Tensor& input_view, int64_t num_classes) {
  const Tensor input = input_view.valid_part().contiguous();  // only the valid part is read
  const Shape out_shape = one_hot_shape(input, num_classes);
  check_one_hot_tile(input, out_shape);
  const int64_t bad = kernels::creation::first_outside(input, num_classes);
  if (bad >= 0) {
    alignas(8) unsigned char element[8];
    std::memcpy(element, static_cast<const std::byte*>(input.data()) + bad * input.itemsize(), input.itemsize());
    const double value = element_to_double(input.dtype(), element);
    fail<IndexError>(kOneHot, ": input value ", static_cast<int64_t>(value), " at index position ",
                     position_of(bad, input.shape()), " is out of range [0, ", num_classes, ") for num_classes ",
                     num_classes);
  }
  Tensor out = Tensor::empty(out_shape, D::INT64);
  kernels::creation::one_hot(input, out);
  return out;
}

// ---- uniform / normal ------------------------------------------------------------------------------

constexpr int64_t kTileMultiple = 4;  // the device draws four words per Philox block

kernels::creation::Stream plan_random(const char* op, const Shape& shape, const std::vector<int64_t>& key,
                                      const std::vector<int64_t>& counter, const std::vector<int64_t>& alg,
                                      DType dt, bool tile_is_shape) {
  const OpLimits& limits = require_offered(*find_op(op));
  check_size(op, "shape", shape, limits);
  if (key.size() != 1)
    fail<ArgumentError>(op, ": key ", shape_to_string(key), " has ", key.size(), " values; it must hold one (the seed)");
  if (counter.size() != 2)
    fail<ArgumentError>(op, ": counter ", shape_to_string(counter), " has ", counter.size(),
                        " values; it must hold two (counter[0] is ignored, counter[1] is the offset)");
  if (alg.size() != 1 || (alg[0] != 1 && alg[0] != 3))
    fail<ArgumentError>(op, ": alg ", shape_to_string(alg), " is not supported; allowed: [1] (Philox), [3] (auto: Philox)");
  checks::check_dtype(op, "output", dt, limits.dtypes);
  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(op, tile, static_cast<int>(shape.size()), "output");
    if (tile_is_shape && tile != shape)
      fail<TileError>(op, ": tile shape ", shape_to_string(tile), " differs from shape ", shape_to_string(shape),
                      "; the whole output is one tile");
    int64_t per_tile = 1;
    for (int64_t d : tile) per_tile *= d;
    if (per_tile % kTileMultiple != 0)
      fail<TileError>(op, ": tile shape ", shape_to_string(tile), " holds ", per_tile,
                      " elements, not a multiple of 4; the random words come in blocks of 4");
    // The op runs flattened: one 1-D tile of per_tile elements over the fp32 words it draws.
    const int64_t n = shape_numel(shape), drawn = tile_is_shape ? (n + 1) / 2 * 2 : n;
    const int64_t word_copies = dt == D::FP32 || tile_is_shape ? 1 : 2;
    tiling::check_ub(op, {per_tile}, {{"random words", {drawn}, 4, word_copies},
                                      {"output tile", {n}, dtype_size(dt)}});
  }
  return {static_cast<uint64_t>(key[0]), static_cast<uint64_t>(counter[1])};
}

template <bool Normal>
Outputs run_random(const OpDef& op, const Args& a) {
  const Shape& shape = a.ints(0);
  const auto stream = plan_random(op.name.c_str(), shape, a.ints(1), a.ints(2), a.ints(3), a.dtype(4), Normal);
  Tensor out = Tensor::empty(shape, a.dtype(4));
  if constexpr (Normal) kernels::creation::normal(out, stream);
  else kernels::creation::uniform(out, stream);
  return {out};
}

}  // namespace

void families::add_creation(std::vector<OpDef>& table) {
  const DTypeSet full_chips{D::FP32, D::FP16, D::BF16, D::INT8, D::INT16, D::INT32,
                            D::UINT8, D::UINT16, D::UINT32, D::BOOL};
  const DTypeSet constant_chips{D::FP32, D::INT32, D::INT16, D::FP16, D::BF16};
  const DTypeSet ranges{D::INT32, D::FP32};
  const DTypeSet indices{D::INT8, D::INT16, D::INT32, D::INT64};
  const DTypeSet integers{D::INT8, D::INT16, D::INT32, D::INT64, D::UINT8, D::UINT16, D::UINT32, D::UINT64};
  const DTypeSet randoms{D::FP32, D::FP16, D::BF16};
  const Param size{.name = "size", .kind = ParamKind::IntList, .variadic = true};
  const Param optional_dtype{"dtype", ParamKind::DType, "None", true};
  const char* constant_tile = "TileShape has at least the output's rank (its leading dims tile it); UB: the output tile";

  table.push_back(OpDef{
      .name = "full",
      .params = {{"size", ParamKind::IntList},
                 {"fill_value", ParamKind::Scalar, nullptr, false, nullptr, "int | float | bool"},
                 {"dtype", ParamKind::DType},
                 {"valid_shape", ParamKind::IntList, "None", true}},
      .tile_rule = constant_tile,
      .limits = platform_rows(DTypeSet::all(), full_chips, full_chips, full_chips),
      .run = run_full,
  });
  // zeros and ones: the same entry with another value (and no DT_FP8E8M0 zero, which it cannot hold)
  const auto constant = [&](const char* name, DTypeSet cpu, RunFn run) {
    table.push_back(OpDef{
        .name = name,
        .params = {size, optional_dtype},
        .doc_page = "docs/ops/full.md",
        .tile_rule = constant_tile,
        .limits = platform_rows(cpu, constant_chips, constant_chips, constant_chips),
        .run = run,
    });
  };
  constant("zeros", DTypeSet::all().without({D::FP8E8M0}), run_constant<0>);
  constant("ones", DTypeSet::all(), run_constant<1>);
  table.push_back(OpDef{
      .name = kArange,
      .params = {{"start", ParamKind::Scalar, nullptr, false, nullptr, "int | float"},
                 {"end", ParamKind::Scalar, nullptr, false, nullptr, "int | float"},
                 {"step", ParamKind::Scalar, "1", false, nullptr, "int | float"}},
      .overloads = {{{"end", ParamKind::Scalar, nullptr, false, nullptr, "int | float"}}},
      .doc_page = "docs/ops/arange.md",
      .tile_rule = "TileShape's first dim tiles the output (further dims are ignored); UB: the output tile. The tile also sets where the fp32 additions restart",
      .limits = platform_rows(ranges, ranges, ranges, ranges, 1, 1, 1, 1),
      .run = run_arange,
  });
  table.push_back(OpDef{
      .name = kOneHot,
      .params = {{"input", ParamKind::Tensor}, {"num_classes", ParamKind::Int}},
      .forms = kFunction | kTorch,
      .doc_page = "docs/ops/one_hot.md",
      .tile_rule = "TileShape has the output's rank, its last dim equal to num_classes; UB: input and output tiles",
      .limits = platform_rows(integers, indices, indices, indices, 1, 3, 0, 7),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {one_hot(a.tensor(0), a.integer(1))}; },
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        const checks::EveryPlatformScope every_platform;
        return {{one_hot_shape(a.tensor(0), a.integer(1)), D::INT64}};
      },
  });
  const std::vector<Param> random_params{{"shape", ParamKind::IntList},
                                         {"key", ParamKind::IntList},
                                         {"counter", ParamKind::IntList},
                                         {"alg", ParamKind::IntList},
                                         {"dtype", ParamKind::DType}};
  const PlatformRows random_rows = platform_rows(randoms, randoms, {}, {});
  for (const bool normal : {false, true}) {
    table.push_back(OpDef{
        .name = normal ? "normal" : "uniform",
        .params = random_params,
        .doc_page = "docs/ops/random.md",
        .tile_rule = normal ? "TileShape equals the output shape, its element count a multiple of 4; UB: random "
                              "words and the output tile"
                            : "TileShape has the output's rank, its element count a multiple of 4; UB: random "
                              "words and the output tile",
        .limits = random_rows,
        .run = normal ? run_random<true> : run_random<false>,
    });
  }
}

}  // namespace pto
