// The binary family's entries (docs/ops/elementwise.md and each op's page): floor_div, ceil_div,
// remainder, fmod, pow, atan2, hypot, gcd, the bitwise and shift ops, logical_and, clip, axpy_,
// prelu, lrelu, where and atomic_add. Each runs a functor of kernels/binary.h on the elementwise
// engine; what differs between the ops (scalar rules, result dtypes, the device's working buffers
// in the tile rule, per-platform facts) is data here. Every check runs before anything is
// allocated or written.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "kernels/binary.h"
#include "ops/checks.h"
#include "ops/elementwise.h"
#include "ops/families.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"

namespace pto {
// add's run, compiled in ops/arithmetic.cpp.
extern template void elementwise::run<kernels::arith::Add, 2>(const Tensor&, const std::array<const Tensor*, 2>&, DType);

namespace {

using D = DType;
using namespace elementwise;
namespace bk = kernels::binary;
namespace ak = kernels::arith;

// The cpu platform's dtypes: every dtype the math makes sense for.
constexpr DTypeSet kIntegers{D::INT8, D::INT16, D::INT32, D::INT64, D::UINT8, D::UINT16, D::UINT32, D::UINT64};
constexpr DTypeSet kFloats{D::FP16, D::BF16, D::FP32, D::FP64, D::FP8E4M3, D::FP8E5M2};
constexpr DTypeSet kNumbers = DTypeSet::all().without({D::BOOL, D::FP8E8M0});
constexpr DTypeSet kWideFloats{D::FP16, D::BF16, D::FP32, D::FP64};  // ops with an fp32 / fp64 algorithm
constexpr DTypeSet kHalves{D::FP16, D::BF16, D::FP32};             // the chips' float list

// A fact per platform, in PlatformId order: cpu, ascend950, atlas_a3, atlas_a2.
template <class T>
using PerPlatform = std::array<T, kNumPlatforms>;
template <class T>
const T& on_current_platform(const PerPlatform<T>& facts) {
  return facts[static_cast<int>(current_platform().id)];
}

// Which tensor dtypes take a scalar rounded to their own dtype (the tile instruction runs natively
// there; elsewhere AutoCast or the op's own upcast runs it in fp32 with an fp32 scalar). The cpu
// platform follows the Ascend 950.
constexpr PerPlatform<DTypeSet> kFloorDivScalarRounding{
    DTypeSet{D::FP16, D::BF16}, DTypeSet{D::FP16, D::BF16}, DTypeSet{D::FP16}, DTypeSet{D::FP16}};
constexpr PerPlatform<DTypeSet> kFmodScalarRounding{DTypeSet{D::FP16}, DTypeSet{D::FP16}, DTypeSet{}, DTypeSet{}};
// The Ascend 950's int32 floor_div returns sentinels for a zero divisor (kernels/binary.h).
constexpr PerPlatform<bool> kInt32FloorDivSentinels{false, true, false, false};
// pow's working buffer is wider for fp32 results on the A2 / A3 (docs/ops/pow.md).
constexpr PerPlatform<bool> kPowWideTemporary{false, false, true, true};
// The dtypes the device's AutoCast pass runs in fp32 and keeps in fp32 between such ops in a kernel
// (its BF16 lists: FLOORDIV and MAXS / MINS on the A2 / A3 only, REM and MOD everywhere).
constexpr PerPlatform<DTypeSet> kAutoCastOnA2A3{DTypeSet{}, DTypeSet{}, DTypeSet{D::BF16}, DTypeSet{D::BF16}};
constexpr PerPlatform<DTypeSet> kAutoCastEverywhere{DTypeSet{D::BF16}, DTypeSet{D::BF16}, DTypeSet{D::BF16},
                                                    DTypeSet{D::BF16}};

PlatformRows with_autocast_per_platform(PlatformRows rows, const PerPlatform<DTypeSet>& autocast) {
  for (int k = 0; k < kNumPlatforms; ++k) rows[k].autocast = autocast[k];
  return rows;
}

BinaryRules rules_here(BinaryRules rules, const PerPlatform<DTypeSet>& scalar_rounding) {
  rules.scalar_rounds_on = on_current_platform(scalar_rounding);
  return rules;
}

// plan_binary's checks without its tile rule (the op checks the tile with its own buffers next).
Plan plan_untiled(const OpDef& op, const Args& a, const BinaryRules& rules) {
  const TileShapeScope untiled{{}};
  return plan_binary(op, a, rules);
}

// The tile shape's leading dims (one per output dim) clipped to the output's extent, the dims the
// device's buffers are cut from.
Shape tile_within(const Shape& out_shape) {
  const Shape& set = get_vec_tile_shapes();
  Shape t(set.begin(), set.begin() + std::min(set.size(), out_shape.size()));
  for (size_t d = 0; d < t.size(); ++d) t[d] = std::min(t[d], out_shape[d]);
  return t;
}

// A buffer of `bytes` bytes whatever the tile (the device's fixed workspaces).
tiling::Buffer fixed_buffer(const char* what, int64_t bytes) { return {what, {bytes}, 1, 1, {bytes}}; }

// A buffer of `rows` x the tile's last dim (clipped) of `elem_bytes` elements.
tiling::Buffer rows_buffer(const char* what, const Shape& out_shape, int64_t rows, size_t elem_bytes) {
  const int64_t last = tile_within(out_shape).back();
  return {what, {rows, last}, elem_bytes, 1, {rows, last}};
}

bool tiled(const Shape& out_shape) { return !get_vec_tile_shapes().empty() && !out_shape.empty(); }

// infer from an op's plan (the checks every platform shares, no tile rule)
template <Plan (*P)(const OpDef&, const Args&)>
std::vector<OutputMeta> infer_from(const OpDef& op, const Args& a) {
  const Plan p = P(op, a);
  return {{p.shape, p.dtype}};
}

// An op given as Op::plan (every check, the tile rule included; a Plan, or a record carrying one
// as .plan) and Op::with_functor(plan, act), which calls act.template operator()<F, N>(plan) with
// the functor the plan needs. fused_run is its table entry's run; it registers fused_kernel, with
// which the compiled programs fuse the op into elementwise chains (docs/kernel_model.md).
const Plan& plan_of(const Plan& p) { return p; }
template <class Record>
const Plan& plan_of(const Record& r) {
  return r.plan;
}

template <class Op>
bool fused_kernel(const OpDef& op, const Args& a, Kernel& k) {
  return Op::with_functor(Op::plan(op, a), [&]<class F, size_t N>(const Plan& p) { return fill_kernel<F, N>(p, k); });
}

template <class Op>
Outputs fused_run(const OpDef& op, const Args& a) {
  static const bool registered = (register_kernel(&fused_run<Op>, &fused_kernel<Op>), true);
  (void)registered;
  return Op::with_functor(Op::plan(op, a), []<class F, size_t N>(const Plan& p) { return run_plan<F, N>(p); });
}

template <class Op>
std::vector<OutputMeta> fused_infer(const OpDef& op, const Args& a) {
  const auto record = Op::plan(op, a);
  const Plan& p = plan_of(record);
  return {{p.shape, p.dtype}};
}

// A fused op's table entry: `entry` with Op's run and infer.
template <class Op>
OpDef fused(OpDef entry) {
  entry.run = fused_run<Op>;
  entry.infer = fused_infer<Op>;
  return entry;
}

// The with_functor of an op with one functor whatever the plan.
template <class F, size_t N>
struct OneFunctor {
  template <class Act>
  static auto with_functor(const Plan& p, Act&& act) {
    return act.template operator()<F, N>(p);
  }
};

const Param kPrecision{"precision_type", ParamKind::Int, "1", false, nullptr, "PrecisionType | int"};
const char* const kTileRule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input and one output tile";
// The tile rule of an op whose device kernel also needs `workspace` in the UB.
std::string tile_rule_with(const char* workspace) {
  return std::string("TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input, one output tile and ") + workspace;
}

// ---- floor_div / ceil_div / remainder / fmod ------------------------------------------------------

constexpr BinaryRules kDivision{};

struct FloorDivOp {
  static Plan plan(const OpDef& op, const Args& a) {
    const Plan p = plan_untiled(op, a, rules_here(kDivision, kFloorDivScalarRounding));
    std::vector<tiling::Buffer> temporaries;
    if (tiled(p.shape)) {
      // a workspace of 6 fp32 rows of the tile (the last dim aligned to 32 bytes of the result)
      const int64_t copies = 24 / static_cast<int64_t>(dtype_size(p.dtype));
      temporaries.push_back({"workspace", p.shape, dtype_size(p.dtype), copies});
    }
    check_tile(op, p.shape, p.dtype, p.inputs, temporaries);
    return p;
  }
  template <class Act>
  static auto with_functor(const Plan& p, Act&& act) {
    if (p.dtype == D::INT32 && on_current_platform(kInt32FloorDivSentinels))
      return act.template operator()<bk::FloorDiv<bk::ByZero::Sentinel>, 2>(p);
    return act.template operator()<bk::FloorDiv<>, 2>(p);
  }
};

struct CeilDivOp : OneFunctor<bk::IntegerDivide<bk::Rounding::Ceil>, 2> {
  static Plan plan(const OpDef& op, const Args& a) { return plan_binary(op, a, kDivision); }
};

constexpr BinaryRules kRemainder{.scalar_first = true};

struct RemainderOp : OneFunctor<bk::Remainder, 2> {
  static Plan plan(const OpDef& op, const Args& a) {
    const Plan p = plan_untiled(op, a, kRemainder);
    std::vector<tiling::Buffer> temporaries;
    if (tiled(p.shape)) {
      const bool scalar_first = !a.is_tensor(0), tensor_tensor = a.is_tensor(0) && a.is_tensor(1);
      if (tensor_tensor) temporaries.push_back(rows_buffer("temporary", p.shape, 2, dtype_size(p.dtype)));
      if (scalar_first) {
        // the rows of the tile's second-last dim plus two (three for a 1-D tile)
        const Shape t = tile_within(p.shape);
        const int64_t rows = t.size() >= 2 ? t[t.size() - 2] + 2 : 3;
        temporaries.push_back(rows_buffer("temporary", p.shape, rows, dtype_size(p.dtype)));
      }
    }
    check_tile(op, p.shape, p.dtype, p.inputs, temporaries);
    return p;
  }
};

struct FmodOp : OneFunctor<bk::FMod, 2> {
  static Plan plan(const OpDef& op, const Args& a) {
    require_offered(op);
    if (!a.is_tensor(1) && a.scalar(1).kind == Scalar::Kind::Float && !std::isfinite(a.scalar(1).f))
      fail<ArgumentError>(op.name, ": other ", a.scalar(1).to_string(), " must be finite (not NaN or inf)");
    return plan_binary(op, a, rules_here(kDivision, kFmodScalarRounding));
  }
};

// ---- pow --------------------------------------------------------------------------------------------

// pow's result dtype for two tensors that are not both integers (the page's table; mixes it does
// not list give fp32, fp64 on the cpu platform wins over everything).
DType pow_result(DType x, DType y) {
  if (x == y) return x;
  if (x == D::FP64 || y == D::FP64) return D::FP64;
  if (x == D::INT32) return y;
  if (y == D::INT32) return x;
  return D::FP32;
}

// An integer exponent for an integer tensor, held in the tensor's dtype: exponents past an n-bit
// dtype's range are replaced by equivalent ones (x^e mod 2^n depends on e only through e mod
// 2^(n-2) once e >= n), negative ones by -1 or -2 (only x == +-1 survives them).
Scalar integer_exponent(int64_t e, DType dt) {
  const int bits = static_cast<int>(8 * dtype_size(dt));
  if (e < 0) return Scalar::of_int(e % 2 ? -1 : -2);
  if (bits >= 32) return Scalar::of_int(e);  // an int32 exponent fits
  const int64_t max = (int64_t(1) << (is_signed_integer(dt) ? bits - 1 : bits)) - 1;
  if (e <= max) return Scalar::of_int(e);
  return Scalar::of_int(bits + (e - bits) % (int64_t(1) << (bits - 2)));
}

struct PowPlan {
  Plan plan;
  enum class Kind { Integer, NegativeUnsigned, Float, One, Sqrt, InverseSqrt, Cube, Square, InverseSquare, Inverse } kind;
};

PowPlan plan_pow_operands(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const Tensor x = operand(op, limits, a.tensor(0), "input", limits.dtypes);
  PowPlan pp;
  Plan& p = pp.plan;
  if (a.is_tensor(1)) {
    const Tensor y = operand(op, limits, a.tensor(1), "other", limits.dtypes);
    if (x.ndim() != y.ndim())
      fail<ArgumentError>(op.name, ": input rank ", x.ndim(), " (shape ", shape_to_string(x.shape()), ") and other rank ",
                          y.ndim(), " (shape ", shape_to_string(y.shape()),
                          ") differ; pow broadcasts tensors of the same rank only");
    const bool integers = !is_floating(x.dtype()) && !is_floating(y.dtype());
    if (integers) same_dtype(op, "other", y.dtype(), "input", x.dtype());
    p.inputs = {x, y};
    p.shape = broadcast_shape(op, {{"input", x.shape()}, {"other", y.shape()}});
    p.dtype = integers ? x.dtype() : pow_result(x.dtype(), y.dtype());
    p.compute = integers ? x.dtype() : (p.dtype == D::FP64 ? D::FP64 : D::FP32);
    pp.kind = integers ? PowPlan::Kind::Integer : PowPlan::Kind::Float;
    return pp;
  }
  const Scalar& s = a.scalar(1);
  p.shape = x.shape();
  const bool float_exponent = s.kind == Scalar::Kind::Float;
  if (!is_floating(x.dtype()) && !(float_exponent && x.dtype() == D::INT32)) {
    if (float_exponent)
      fail<DTypeError>(op.name, ": other ", s.to_string(), " is a float but input is ", dtype_name(x.dtype()),
                       "; a float exponent needs a float or DT_INT32 input");
    if (s.i < INT32_MIN || s.i > INT32_MAX)
      fail<ArgumentError>(op.name, ": other ", s.to_string(), " is out of range [-2147483648, 2147483647] of the exponent (DT_INT32)");
    const int64_t e = static_cast<int64_t>(s.i);
    p.dtype = p.compute = x.dtype();
    if (e < 0 && !is_signed_integer(x.dtype())) {
      p.inputs = {x};
      pp.kind = PowPlan::Kind::NegativeUnsigned;
      return pp;
    }
    p.inputs = {x, scalar_operand(op, integer_exponent(e, x.dtype()), x.dtype(), ScalarAs::TensorDtype, false)};
    pp.kind = PowPlan::Kind::Integer;
    return pp;
  }
  if (s.kind != Scalar::Kind::Float && (s.i < INT32_MIN || s.i > INT32_MAX))
    fail<ArgumentError>(op.name, ": other ", s.to_string(), " is out of range [-2147483648, 2147483647] of the exponent (DT_INT32)");
  const double e = float_exponent ? s.f : static_cast<double>(s.i);
  p.inputs = {x};
  if (std::fabs(e) < 1e-9) {  // ones, in the input's own dtype (an INT32 input stays INT32)
    p.dtype = p.compute = x.dtype();
    pp.kind = PowPlan::Kind::One;
    return pp;
  }
  p.dtype = is_floating(x.dtype()) ? x.dtype() : D::FP32;  // INT32 ** float: fp32
  p.compute = p.dtype == D::FP64 ? D::FP64 : D::FP32;
  static constexpr std::pair<double, PowPlan::Kind> kSpecial[] = {
      {0.5, PowPlan::Kind::Sqrt}, {-0.5, PowPlan::Kind::InverseSqrt}, {3.0, PowPlan::Kind::Cube},
      {2.0, PowPlan::Kind::Square}, {-2.0, PowPlan::Kind::InverseSquare}, {-1.0, PowPlan::Kind::Inverse}};
  for (const auto& [value, kind] : kSpecial) {
    if (std::fabs(e - value) < 1e-9) {
      pp.kind = kind;
      return pp;
    }
  }
  // any other exponent: a tensor of it in the compute dtype (fp32 on the chips) and POW
  p.inputs.push_back(scalar_operand(op, Scalar::of_float(e), p.compute, ScalarAs::TensorDtype, false));
  pp.kind = PowPlan::Kind::Float;
  return pp;
}

struct PowOp {
  static PowPlan plan(const OpDef& op, const Args& a) {
    const PowPlan pp = plan_pow_operands(op, a);
    const Plan& p = pp.plan;
    using K = PowPlan::Kind;
    std::vector<tiling::Buffer> temporaries;
    const bool general = pp.kind == K::Integer || pp.kind == K::Float;
    if (general && tiled(p.shape)) {
      if (p.inputs[1].ndim() == 0) temporaries.push_back({"exponent tile", p.shape, dtype_size(p.compute)});
      const bool wide = pp.kind == K::Float && p.compute == D::FP32 && on_current_platform(kPowWideTemporary);
      Shape t = tile_within(p.shape);
      if (wide) t.back() = 2 * t.back() + (3 * t.back() + 7) / 8;  // two fp32 rows and three bit masks
      temporaries.push_back({"temporary", t, 4, 1, t});
    }
    check_tile(op, p.shape, p.dtype, p.inputs, temporaries);
    return pp;
  }
  template <class Act>
  static auto with_functor(const PowPlan& pp, Act&& act) {
    const Plan& p = pp.plan;
    switch (pp.kind) {
      case PowPlan::Kind::Integer: return act.template operator()<bk::PowInteger, 2>(p);
      case PowPlan::Kind::NegativeUnsigned: return act.template operator()<bk::PowNegativeUnsigned, 1>(p);
      case PowPlan::Kind::One: return act.template operator()<bk::PowOne, 1>(p);
      case PowPlan::Kind::Sqrt: return act.template operator()<ak::Sqrt, 1>(p);
      case PowPlan::Kind::InverseSqrt: return act.template operator()<bk::PowInverseSqrt, 1>(p);
      case PowPlan::Kind::Cube: return act.template operator()<bk::PowCube, 1>(p);
      case PowPlan::Kind::Square: return act.template operator()<bk::PowSquare, 1>(p);
      case PowPlan::Kind::InverseSquare: return act.template operator()<bk::PowInverseSquare, 1>(p);
      case PowPlan::Kind::Inverse: return act.template operator()<bk::PowInverse, 1>(p);
      default: return act.template operator()<bk::PowFloat, 2>(p);
    }
  }
};

// ---- atan2 / hypot / gcd ---------------------------------------------------------------------------

constexpr BinaryRules kPlain{};

struct Atan2Op : OneFunctor<bk::Atan2, 2> {
  static Plan plan(const OpDef& op, const Args& a) {
    const Plan p = plan_untiled(op, a, kPlain);
    // the device computes in fp32 with four fp32 working tiles: 7 fp32 tiles in all (the page's rule)
    check_tile(op, p.shape, D::FP32, {}, {{"input tiles (fp32)", p.shape, 4, 2}, {"workspace", p.shape, 4, 4}});
    return p;
  }
};

struct HypotOp {
  static Plan plan(const OpDef& op, const Args& a) {
    const Plan p = plan_untiled(op, a, kPlain);
    std::vector<tiling::Buffer> temporaries;
    if (tiled(p.shape)) temporaries.push_back(rows_buffer("workspace", p.shape, 2, 4));
    check_tile(op, p.shape, p.dtype, p.inputs, temporaries);
    return p;
  }
  template <class Act>
  static auto with_functor(const Plan& p, Act&& act) {
    if (p.dtype == D::FP16 || p.dtype == D::BF16) return act.template operator()<bk::HypotWidened, 2>(p);
    return act.template operator()<bk::HypotScaled, 2>(p);
  }
};

constexpr BinaryRules kTruncatingScalar{.floats_on_integers = true};

struct GcdOp : OneFunctor<bk::Gcd, 2> {
  static Plan plan(const OpDef& op, const Args& a) {
    const Plan p = plan_binary(op, a, kTruncatingScalar);
    const Shape& tile = get_vec_tile_shapes();
    const int64_t row_bytes = tile.empty() ? 0 : tile.back() * static_cast<int64_t>(dtype_size(p.dtype));
    if (row_bytes % 32 != 0)
      fail<TileError>(op.name, ": the last tile dim ", tile.back(), " holds ", row_bytes, " bytes of ",
                      dtype_name(p.dtype), "; gcd needs a multiple of 32 bytes");
    return p;
  }
};

// ---- bitwise and logical ----------------------------------------------------------------------------

constexpr BinaryRules kShift{.floats_on_integers = true, .scalar_first = true};

template <bool kLeft>
struct ShiftOp {
  static Plan plan(const OpDef& op, const Args& a) {
    const Plan p = plan_untiled(op, a, kShift);
    std::vector<tiling::Buffer> temporaries;
    // the tensor-count and scalar-first forms keep one more tile of the result
    if (a.is_tensor(1)) temporaries.push_back({"temporary", p.shape, dtype_size(p.dtype)});
    check_tile(op, p.shape, p.dtype, p.inputs, temporaries);
    return p;
  }
  template <class Act>
  static auto with_functor(const Plan& p, Act&& act) {
    if constexpr (kLeft) return act.template operator()<bk::ShiftLeft, 2>(p);
    else return act.template operator()<bk::ShiftRight, 2>(p);
  }
};

// logical_and: the operands' dtypes may differ; both are read as numbers of one compute type that
// keeps every nonzero value nonzero (fp64 next to an fp64 operand, else fp32).
Plan plan_logical_and(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const Tensor x = operand(op, limits, a.tensor(0), "input", limits.dtypes);
  const Tensor y = operand(op, limits, a.tensor(1), "other", limits.dtypes);
  Plan p;
  p.inputs = {x, y};
  p.shape = broadcast_shape(op, {{"input", x.shape()}, {"other", y.shape()}});
  checks::check_extent(op.name.c_str(), "output", p.shape, false);
  p.dtype = D::BOOL;
  const bool wide = x.dtype() == D::FP64 || y.dtype() == D::FP64;
  p.compute = x.dtype() == y.dtype() ? compute_dtype(x.dtype()) : (wide ? D::FP64 : D::FP32);
  return p;
}

Outputs run_logical_and(const OpDef& op, const Args& a) {
  const Plan p = plan_logical_and(op, a);
  std::vector<tiling::Buffer> temporaries;
  if (tiled(p.shape)) temporaries.push_back(fixed_buffer("workspace", 1216));  // 1.1875 KB
  check_tile(op, p.shape, p.dtype, p.inputs, temporaries);
  return run_plan<bk::LogicalAnd, 2>(p);
}


// ---- clip ---------------------------------------------------------------------------------------------

struct ClipPlan {
  Plan plan;
  bool has_min = false, has_max = false;
};

ClipPlan plan_clip(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const Tensor x = operand(op, limits, a.tensor(0), "input", limits.dtypes);
  ClipPlan cp;
  cp.has_min = !a.is_none(1);
  cp.has_max = !a.is_none(2);
  if (cp.has_min && cp.has_max && a.is_tensor(1) != a.is_tensor(2))
    fail<DTypeError>(op.name, ": min is a ", a.is_tensor(1) ? "tensor" : "scalar", " and max a ",
                     a.is_tensor(2) ? "tensor" : "scalar", "; give two tensors or two scalars");
  Plan& p = cp.plan;
  p.inputs = {x};
  p.shape = x.shape();
  p.dtype = x.dtype();
  p.compute = x.dtype();
  for (int k = 1; k <= 2; ++k) {
    if (a.is_none(k)) continue;
    const char* name = op.params[k].name;
    if (!a.is_tensor(k)) {
      p.inputs.push_back(scalar_operand(op, a.scalar(k), x.dtype(), ScalarAs::TensorDtype, true, name));
      continue;
    }
    const Tensor bound = operand(op, limits, a.tensor(k), name, limits.dtypes);
    same_dtype(op, name, bound.dtype(), "input", x.dtype());
    if (broadcast_shape(op, {{"input", x.shape()}, {name, bound.shape()}}) != x.shape())
      fail<ArgumentError>(op.name, ": ", name, " shape ", shape_to_string(bound.shape()),
                          " does not broadcast to input shape ", shape_to_string(x.shape()));
    int axes = 0;
    for (int d = 0; d < x.ndim(); ++d) {
      const int bd = d - (x.ndim() - bound.ndim());
      axes += (bd < 0 ? 1 : bound.shape(bd)) != x.shape(d);
    }
    if (axes > 1)
      fail<ArgumentError>(op.name, ": ", name, " shape ", shape_to_string(bound.shape()), " broadcasts along ", axes,
                          " axes of input shape ", shape_to_string(x.shape()), "; at most one is allowed");
    p.inputs.push_back(bound);
  }
  return cp;
}

struct ClipOp {
  static ClipPlan plan(const OpDef& op, const Args& a) {
    const ClipPlan cp = plan_clip(op, a);
    check_tile(op, cp.plan.shape, cp.plan.dtype, cp.plan.inputs);
    return cp;
  }
  template <class Act>
  static auto with_functor(const ClipPlan& cp, Act&& act) {
    if (cp.has_min && cp.has_max) return act.template operator()<bk::Clip, 3>(cp.plan);
    if (cp.has_min) return act.template operator()<bk::ClipBelow, 2>(cp.plan);
    if (cp.has_max) return act.template operator()<bk::ClipAbove, 2>(cp.plan);
    return act.template operator()<bk::Copy, 1>(cp.plan);  // no bound: a copy of input
  }
};

// ---- axpy_ ----------------------------------------------------------------------------------------

// The x dtypes axpy_ adds into an fp32 / fp64 y of another dtype (fp64 only exists on cpu).
constexpr PerPlatform<DTypeSet> kAxpyIntoFp32{DTypeSet{D::FP16, D::BF16}, DTypeSet{D::FP16}, DTypeSet{D::FP16},
                                              DTypeSet{D::FP16}};
constexpr DTypeSet kAxpyIntoFp64{D::FP16, D::BF16, D::FP32};

Outputs run_axpy(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const char* name = op.name.c_str();
  const Tensor y = operand(op, limits, a.tensor(0), "y", limits.dtypes);
  const Tensor x = operand(op, limits, a.tensor(1), "x", limits.dtypes);
  if (x.dtype() != y.dtype()) {
    const DTypeSet into = y.dtype() == D::FP32 ? on_current_platform(kAxpyIntoFp32)
                          : y.dtype() == D::FP64 ? kAxpyIntoFp64 : DTypeSet{};
    if (!into.contains(x.dtype()))
      fail<DTypeError>(name, ": x dtype ", dtype_name(x.dtype()), " cannot be added into y dtype ", dtype_name(y.dtype()),
                       " on platform ", current_platform().name, "; x must have y's dtype",
                       into.empty() ? std::string() : " or be one of " + into.to_string());
  }
  if (x.ndim() != y.ndim())
    fail<ArgumentError>(name, ": x rank ", x.ndim(), " (shape ", shape_to_string(x.shape()), ") must equal y rank ",
                        y.ndim(), " (shape ", shape_to_string(y.shape()), ")");
  for (int d = 0; d < y.ndim(); ++d) {
    if (x.shape(d) == y.shape(d) || x.shape(d) == 1) continue;
    fail<ArgumentError>(name, ": x shape ", shape_to_string(x.shape()), " does not broadcast to y shape ",
                        shape_to_string(y.shape()), " at dim ", d,
                        y.shape(d) == 1 ? " (y is written in place and cannot broadcast)" : "");
  }
  const Tensor alpha = scalar_operand(op, a.scalar(2), y.dtype(), ScalarAs::Compute, true, "alpha");
  checks::check_writable_in_place(name, a.tensor(0), "use add(y, mul(x, alpha))");
  check_tile(op, y.shape(), y.dtype(), {y, x});
  // Every check has passed: y's valid part is updated in place.
  const Tensor xs = checks::unaliased(x, y);
  run<bk::Axpy, 3>(y, {&y, &xs, &alpha}, compute_dtype(y.dtype()));
  return {a.tensor(0)};
}

// ---- prelu / lrelu --------------------------------------------------------------------------------

Plan plan_prelu(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const Tensor x = operand(op, limits, a.tensor(0), "input", limits.dtypes);
  const Tensor w = operand(op, limits, a.tensor(1), "weight", limits.dtypes);
  same_dtype(op, "weight", w.dtype(), "input", x.dtype());
  const int64_t channels = x.ndim() >= 2 ? x.shape(1) : 1;
  if (w.ndim() != 1 || w.shape(0) != channels)
    fail<ArgumentError>(op.name, ": weight shape ", shape_to_string(w.shape()), " must be [", channels, "] (",
                        x.ndim() >= 2 ? "one weight per channel, input.shape[1]" : "one weight for a 1-D input",
                        "; input shape ", shape_to_string(x.shape()), ")");
  // the weight along input's axis 1
  Shape shape(x.ndim(), 1);
  Strides strides(x.ndim(), 0);
  if (x.ndim() >= 2) {
    shape[1] = channels;
    strides[1] = w.stride(0);
  }
  Plan p;
  p.inputs = {x, w.as_strided(shape, strides, 0)};
  p.shape = x.shape();
  p.dtype = x.dtype();
  p.compute = x.dtype();
  return p;
}

Outputs run_prelu(const OpDef& op, const Args& a) {
  const Plan p = plan_prelu(op, a);
  if (p.shape.size() == 2 && tiled(p.shape)) {
    // the page's rule for 2-D inputs: one [a, b] tile, a b / 8 byte mask and an 8 KB workspace
    const int64_t last = tile_within(p.shape).back();
    check_tile(op, p.shape, p.dtype, {}, {fixed_buffer("mask", (last + 7) / 8), fixed_buffer("workspace", 8192)});
  } else {
    check_tile(op, p.shape, p.dtype, p.inputs);
  }
  return run_plan<bk::LeakyRelu, 2>(p);
}

Plan plan_lrelu(const OpDef& op, const Args& a) {
  const Tensor x = offered_input(op, a);
  const Scalar& s = a.scalar(1);
  const double slope = s.kind == Scalar::Kind::Float ? s.f : static_cast<double>(s.i);
  if (std::isnan(slope) || std::isinf(slope) || slope < 0)
    fail<ArgumentError>(op.name, ": negative_slope ", s.to_string(), " must be a finite number >= 0");
  Plan p;
  // the slope is an fp32 element (fp64 for an fp64 input): fp16 / bf16 inputs compute in fp32
  p.inputs = {x, scalar_operand(op, s, x.dtype(), ScalarAs::Compute, true, "negative_slope")};
  p.shape = x.shape();
  p.dtype = x.dtype();
  p.compute = x.dtype();
  return p;
}

struct LreluOp : OneFunctor<bk::LeakyRelu, 2> {
  static Plan plan(const OpDef& op, const Args& a) {
    const Plan p = plan_lrelu(op, a);
    check_tile(op, p.shape, p.dtype, p.inputs);
    return p;
  }
};


// ---- where --------------------------------------------------------------------------------------------

// The unsigned dtype of a width: where selects bits.
DType bits_of_width(size_t bytes) {
  switch (bytes) {
    case 1: return D::UINT8;
    case 2: return D::UINT16;
    case 4: return D::UINT32;
    default: return D::UINT64;
  }
}

// A number meant for an unsigned dtype (an Element of one, or a Python number beside an unsigned
// tensor) is range-checked before any other check, as PyPTO's entry does (docs/ops/where.md#errors).
void check_scalars_for_unsigned(const OpDef& op, const Args& a) {
  for (int k = 1; k <= 2; ++k) {
    if (a.is_tensor(k)) continue;
    const Scalar& s = a.scalar(k);
    const int other = 3 - k;
    const std::optional<DType> target =
        s.dtype ? s.dtype : a.is_tensor(other) ? std::optional<DType>(a.tensor(other).dtype()) : std::nullopt;
    if (target && is_integer(*target) && !is_signed_integer(*target)) {
      std::byte element[8];
      encode_scalar(s, *target, element, op.name.c_str(), op.params[k].name);
    }
  }
}

Plan plan_where(const OpDef& op, const Args& a) {
  check_scalars_for_unsigned(op, a);
  const OpLimits& limits = require_offered(op);
  const Tensor condition = operand(op, limits, a.tensor(0), "condition", DTypeSet{D::BOOL});
  // the values' dtype: their tensors' (which agree), or DT_FP32 (the device's element for Python numbers)
  const char* first = nullptr;
  DType dt = D::FP32;
  Tensor values[2];
  for (int k = 1; k <= 2; ++k) {
    if (!a.is_tensor(k)) continue;
    const char* name = op.params[k].name;
    values[k - 1] = operand(op, limits, a.tensor(k), name, limits.dtypes);
    if (first) same_dtype(op, name, values[k - 1].dtype(), first, dt);
    else first = name, dt = values[k - 1].dtype();
    if (values[k - 1].ndim() != condition.ndim())
      fail<ArgumentError>(op.name, ": ", name, " rank ", values[k - 1].ndim(), " (shape ",
                          shape_to_string(values[k - 1].shape()), ") differs from condition rank ", condition.ndim(),
                          " (shape ", shape_to_string(condition.shape()),
                          "); where broadcasts tensors of the same rank only");
  }
  // Without tensors, the first Element's dtype (an Element of another dtype is refused below).
  for (int k = 1; k <= 2 && !first; ++k)
    if (!a.is_tensor(k) && a.scalar(k).dtype) first = op.params[k].name, dt = *a.scalar(k).dtype;
  for (int k = 1; k <= 2; ++k) {
    if (a.is_tensor(k)) continue;
    const char* name = op.params[k].name;
    const Scalar& s = a.scalar(k);
    if (s.kind == Scalar::Kind::Float && !s.dtype && dt != D::FP32)
      fail<DTypeError>(op.name, ": ", name, " ", s.to_string(), " is a float, a DT_FP32 value, but ", first, " is ",
                       dtype_name(dt), " (data type inconsistent); give an Element of that dtype, a tensor or an int");
    values[k - 1] = scalar_operand(op, s, dt, ScalarAs::TensorDtype, false, name);
  }
  Plan p;
  p.inputs = {condition, values[0], values[1]};
  p.shape = broadcast_shape(op, {{"condition", condition.shape()}, {"input", values[0].shape()}, {"other", values[1].shape()}});
  checks::check_extent(op.name.c_str(), "output", p.shape, false);
  p.dtype = dt;
  p.compute = bits_of_width(dtype_size(dt));
  return p;
}

Outputs run_where(const OpDef& op, const Args& a) {
  const Plan p = plan_where(op, a);
  std::vector<tiling::Buffer> temporaries;
  if (tiled(p.shape)) {
    const int64_t select_bytes = p.dtype == D::FP32 || p.dtype == D::BF16 ? 4 : 2;
    temporaries.push_back(fixed_buffer("workspace", (1024 + 1024) * 2 + 128 + 32 + 2 * 1024 * select_bytes));
  }
  check_tile(op, p.shape, p.dtype, p.inputs, temporaries);
  Tensor out = Tensor::empty(p.shape, p.dtype);
  const Tensor when = p.inputs[1].reinterpret(p.compute), otherwise = p.inputs[2].reinterpret(p.compute);
  run<bk::Select, 3>(out.reinterpret(p.compute), {&p.inputs[0], &when, &otherwise}, p.compute);
  return {out};
}


// ---- atomic_add ---------------------------------------------------------------------------------------

Outputs run_atomic_add(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const char* name = op.name.c_str();
  const Tensor src = operand(op, limits, a.tensor(0), "src", limits.dtypes);
  const Tensor& dst = a.tensor(2);
  same_dtype(op, "dst", dst.dtype(), "src", src.dtype());
  const std::vector<int64_t>& offsets = a.ints(1);
  if (dst.ndim() != src.ndim() || static_cast<int>(offsets.size()) != src.ndim())
    fail<ArgumentError>(name, ": src rank ", src.ndim(), " (shape ", shape_to_string(src.shape()), "), dst rank ",
                        dst.ndim(), " (shape ", shape_to_string(dst.shape()), ") and the ", offsets.size(),
                        " offsets must agree");
  int64_t element_offset = 0;
  for (int d = 0; d < src.ndim(); ++d) {
    const int64_t o = offsets[d];
    if (o < 0 || o > dst.shape(d) || src.shape(d) > dst.shape(d) - o)
      fail<TileError>(name, ": offsets ", shape_to_string(offsets), " + src shape ", shape_to_string(src.shape()),
                      " is outside dst shape ", shape_to_string(dst.shape()), " at dim ", d,
                      "; the block must lie inside dst");
    element_offset += o * dst.stride(d);
  }
  checks::check_writable_in_place(name, dst, "use add on a copy of dst");
  // Every check has passed: the window of dst is updated in place.
  const Tensor window = dst.as_strided(src.shape(), dst.strides(), element_offset);
  const Tensor addend = checks::unaliased(src, window);
  run<ak::Add, 2>(window, {&window, &addend}, compute_dtype(dst.dtype()));
  return {};
}

// src once, the window of dst read and written.
int64_t atomic_add_bytes(const OpDef&, const Args& a, const Outputs&) {
  return 3 * tensor_bytes(a.tensor(0).valid_part());
}

}  // namespace

void families::add_binary(std::vector<OpDef>& table) {
  const DTypeSet floor_div_chips{D::FP16, D::BF16, D::FP32, D::INT32, D::INT8, D::UINT8};
  const DTypeSet remainder_chips{D::FP32, D::FP16, D::BF16, D::INT32, D::INT16};
  const DTypeSet pow_chips{D::FP16, D::BF16, D::FP32, D::INT32, D::INT8, D::UINT8, D::INT16};
  const DTypeSet gcd_chips{D::INT8, D::INT16, D::INT32, D::UINT8};
  const DTypeSet bitwise_cpu{D::BOOL, D::INT8, D::INT16, D::INT32, D::INT64, D::UINT8, D::UINT16, D::UINT32, D::UINT64};
  const DTypeSet bitwise_chips{D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32};
  const DTypeSet shift_a2{D::INT16, D::UINT16};
  const DTypeSet logical_chips{D::FP32, D::FP16, D::BF16, D::INT8, D::UINT8, D::BOOL, D::INT16, D::INT32};
  const DTypeSet clip_chips{D::FP32, D::FP16, D::BF16, D::INT32, D::INT16};
  const DTypeSet where_950{D::INT32, D::FP32, D::INT16, D::FP16, D::BF16, D::UINT8, D::INT8};
  const DTypeSet where_a2{D::INT32, D::INT16, D::FP16, D::FP32, D::BF16};
  const DTypeSet add_950{D::INT32, D::FP32, D::INT16, D::FP16, D::BF16, D::UINT8, D::INT8};
  const DTypeSet add_a2{D::INT32, D::INT16, D::FP16, D::FP32, D::BF16};
  const auto tensor_and_number = [](const char* first, const char* second) {
    return std::vector<Param>{{first, ParamKind::Tensor}, {second, ParamKind::TensorOrScalar}};
  };
  const auto two_tensors = [](const char* first, const char* second) {
    return std::vector<Param>{{first, ParamKind::Tensor}, {second, ParamKind::Tensor}};
  };

  table.push_back(fused<FloorDivOp>({
      .name = "floor_div",
      .params = tensor_and_number("input", "other"),
      // upstream's t // x is floor(div(t, x)), not floor_div: the floor of the quotient div rounds
      // to the dtype (fp32 for integers)
      .forms = kFunction | kTorch,
      .dunders = {{"__floordiv__", "floor(div(self, other))"}},
      .tile_rule = tile_rule_with("a workspace of 6 fp32 rows per tile row"),
      .limits = with_autocast_per_platform(platform_rows(kNumbers, floor_div_chips, floor_div_chips, floor_div_chips),
                                           kAutoCastOnA2A3),
  }));
  table.push_back(fused<CeilDivOp>({
      .name = "ceil_div",
      .params = tensor_and_number("self", "other"),
      .forms = kFunction | kTorch,
      .tile_rule = kTileRule,
      .limits = platform_rows(kIntegers, {D::INT32}, {D::INT32}, {D::INT32}),
  }));
  table.push_back(fused<RemainderOp>({
      .name = "remainder",
      .params = {{"input", ParamKind::TensorOrScalar}, {"other", ParamKind::TensorOrScalar}, kPrecision},
      .forms = kFunction | kMethod | kTorch,
      .dunders = {{"__mod__"}},
      .tile_rule = tile_rule_with("the device's temporary rows (2 for two tensors, the tile's rows + 2 for a scalar first operand)"),
      .limits = with_autocast_per_platform(platform_rows(kNumbers, remainder_chips, remainder_chips, remainder_chips),
                                           kAutoCastEverywhere),
  }));
  table.push_back(fused<FmodOp>({
      .name = "fmod",
      .params = {{"input", ParamKind::Tensor}, {"other", ParamKind::TensorOrScalar}, kPrecision},
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = kTileRule,
      .limits = with_autocast_per_platform(platform_rows(kFloats, kHalves, kHalves, kHalves), kAutoCastEverywhere),
  }));
  table.push_back(fused<PowOp>({
      .name = "pow",
      .params = {{"input", ParamKind::Tensor}, {"other", ParamKind::TensorOrScalar}, kPrecision},
      .forms = kFunction | kTorch,
      .dunders = {{"__pow__"}},
      .tile_rule = tile_rule_with("POW's temporary tile (fp32; 2 d + 3 d / 8 wide on atlas_a2 / atlas_a3 for float results)"),
      .limits = platform_rows(kNumbers, pow_chips, pow_chips, pow_chips),
  }));
  table.push_back(fused<Atan2Op>({
      .name = "atan2",
      .params = two_tensors("y", "x"),
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: 7 fp32 tiles (inputs, output and 4 working tiles)",
      .limits = platform_rows(kWideFloats, kHalves, kHalves, kHalves),
  }));
  table.push_back(fused<HypotOp>({
      .name = "hypot",
      .params = two_tensors("input", "other"),
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = tile_rule_with("two fp32 rows"),
      .limits = platform_rows(kWideFloats, kHalves, kHalves, kHalves),
  }));
  table.push_back(fused<GcdOp>({
      .name = "gcd",
      .params = tensor_and_number("input", "other"),
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it), its last dim a multiple of 32 bytes; UB: one tile per tensor "
                   "input and one output tile",
      .limits = platform_rows(kIntegers, gcd_chips, gcd_chips, gcd_chips),
  }));
  struct Bitwise {
    const char* name;
    RunFn run;
  };
  for (const Bitwise& b : {
           Bitwise{"bitwise_and", binary<bk::BitwiseAnd, kPlain>},
           Bitwise{"bitwise_or", binary<bk::BitwiseOr, kPlain>},
           Bitwise{"bitwise_xor", binary<bk::BitwiseXor, kPlain>}}) {
    table.push_back(OpDef{
        .name = b.name,
        .params = tensor_and_number("input", "other"),
        .forms = kFunction | kTorch,
        .doc_page = "docs/ops/bitwise.md",
        .tile_rule = kTileRule,
        .limits = platform_rows(bitwise_cpu, bitwise_chips, bitwise_chips, bitwise_chips),
        .run = b.run,
        .infer = binary_infer<kPlain>,
    });
  }
  for (const bool left : {true, false}) {
    table.push_back(OpDef{
        .name = left ? "bitwise_left_shift" : "bitwise_right_shift",
        .params = {{"input", ParamKind::TensorOrScalar}, {"other", ParamKind::TensorOrScalar}},
        .forms = kFunction | kTorch,
        .doc_page = "docs/ops/bitwise.md",
        .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input, one output tile and, for a "
                     "tensor of counts, one more tile of the result",
        .limits = platform_rows(kIntegers, {D::INT16, D::UINT16, D::INT32, D::UINT32, D::INT8, D::UINT8}, shift_a2, shift_a2),
        .run = left ? fused_run<ShiftOp<true>> : fused_run<ShiftOp<false>>,
        .infer = left ? fused_infer<ShiftOp<true>> : fused_infer<ShiftOp<false>>,
    });
  }
  table.push_back(OpDef{
      .name = "logical_and",
      .params = two_tensors("input", "other"),
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input, one DT_BOOL output tile and "
                   "1.1875 KB",
      .limits = platform_rows(DTypeSet::all().without({D::FP8E8M0}), logical_chips, logical_chips, logical_chips),
      .run = run_logical_and,
      .infer = infer_from<plan_logical_and>,
  });
  table.push_back(fused<ClipOp>({
      .name = "clip",
      .params = {{"input", ParamKind::Tensor},
                 {"min", ParamKind::TensorOrScalar, "None"},
                 {"max", ParamKind::TensorOrScalar, "None"}},
      .forms = kFunction | kTorch,
      .tile_rule = kTileRule,
      .limits = with_autocast_per_platform(platform_rows(kNumbers, clip_chips, clip_chips, clip_chips), kAutoCastOnA2A3),
  }));
  table.push_back(OpDef{
      .name = "axpy_",
      .params = {{"y", ParamKind::Memory}, {"x", ParamKind::Tensor},
                 {"alpha", ParamKind::Scalar, "1.0", false, nullptr, "int | float"}},
      .forms = kFunction | kMethod | kTorch,
      .written = "y",
      .tile_rule = kTileRule,
      .limits = platform_rows(kWideFloats, {D::FP32, D::FP16}, {D::FP32, D::FP16}, {D::FP32, D::FP16}),
      .run = run_axpy,
  });
  table.push_back(OpDef{
      .name = "atomic_add",
      .params = {{"src", ParamKind::Tensor}, {"offsets", ParamKind::IntList}, {"dst", ParamKind::Memory}},
      .forms = kFunction | kTorch,
      .num_outputs = 0,
      .written = "dst",
      .tile_rule = "none (a store to memory)",
      .limits = platform_rows(kNumbers, add_950, add_a2, add_a2, 1, 8),
      .run = run_atomic_add,
      .bytes = atomic_add_bytes,
  });
  table.push_back(OpDef{
      .name = "prelu",
      .params = two_tensors("input", "weight"),
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = "TileShape has the input's rank; UB (2-D): one tile, a tile row / 8 byte mask and 8 KB; other "
                   "ranks: input, weight and output tiles",
      .limits = platform_rows(kWideFloats, kHalves, kHalves, kHalves, 1, 4, 1, 8),
      .run = run_prelu,
      .infer = infer_from<plan_prelu>,
  });
  table.push_back(fused<LreluOp>({
      .name = "lrelu",
      .params = {{"input", ParamKind::Tensor},
                 {"negative_slope", ParamKind::Scalar, "0.01", false, nullptr, "float"}},
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has the input's rank; UB: input and output tiles",
      .limits = platform_rows(kWideFloats, kHalves, kHalves, kHalves),
  }));
  table.push_back(OpDef{
      .name = "where",
      .params = {{"condition", ParamKind::Tensor},
                 {"input", ParamKind::TensorOrScalar},
                 {"other", ParamKind::TensorOrScalar}},
      .forms = kFunction | kTorch,
      .principal = 1,
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor argument, one output tile and a "
                   "workspace of 8352 bytes (6304 for 1- and 2-byte values other than bf16)",
      .limits = platform_rows(DTypeSet::all(), where_950, where_a2, where_a2),
      .run = run_where,
      .infer = infer_from<plan_where>,
  });
}

}  // namespace pto
