// The unary math family's entries (docs/ops/elementwise.md and each op's page): exponentials and
// logarithms, roots, trigonometric and hyperbolic functions, erf, activations, sign, rounding and
// the predicates. Each is a functor of kernels/math.h run by the elementwise engine; the rules that
// differ (dtypes, result dtype, signature) are data here.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/math.h"
#include "ops/checks.h"
#include "ops/elementwise.h"
#include "ops/families.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"

namespace pto {
namespace {

using D = DType;
using namespace elementwise;
namespace m = kernels::math;

// The cpu platform's dtypes: every dtype the math makes sense for.
constexpr DTypeSet kFloats{D::FP16, D::BF16, D::FP32, D::FP64, D::FP8E4M3, D::FP8E5M2};
constexpr DTypeSet kNumbers = DTypeSet::all().without({D::BOOL, D::FP8E8M0});
constexpr DTypeSet kBitwise = DTypeSet::all().without(kFloats).without({D::FP8E8M0});  // BOOL and the integers

// The chips' lists (one per op on every chip, as the pages give them).
constexpr DTypeSet kHalves{D::FP16, D::BF16, D::FP32};
constexpr DTypeSet kHalvesAndInt{D::FP16, D::BF16, D::FP32, D::INT16, D::INT32};
constexpr DTypeSet kSigned{D::FP16, D::BF16, D::FP32, D::INT8, D::INT16, D::INT32};

const Param kIntrinsic{"precision_type", ParamKind::Int, "0", false, nullptr, "PrecisionType | int"};
constexpr const char* kTileRule = "TileShape has the input's rank; UB: input and output tiles";

// One op of the family. `param` is the input's name in upstream's Python (input, self, a, x).
struct Entry {
  const char* name;
  const char* param;
  unsigned forms;
  std::vector<Param> extra;  // after the input
  DTypeSet cpu, chips;
  RunFn run;
  InferFn infer;
  const char* page;
  const char* tile_rule = kTileRule;
};

void add(std::vector<OpDef>& table, const Entry& e) {
  std::vector<Param> params{{e.param, ParamKind::Tensor}};
  params.insert(params.end(), e.extra.begin(), e.extra.end());
  table.push_back(OpDef{
      .name = e.name,
      .params = std::move(params),
      .forms = e.forms | kTorch,
      .doc_page = e.page,
      .tile_rule = e.tile_rule,
      .limits = platform_rows(e.cpu, e.chips, e.chips, e.chips),
      .run = e.run,
      .infer = e.infer,
      .defined_in = __builtin_FILE(),
  });
}

// isfinite / isnan on the chips: each row of the DT_BOOL output tile is 32-byte aligned, so the
// tile's last axis is a multiple of 32.
template <class F>
Outputs predicate_in_bool_rows(const OpDef& op, const Args& a) {
  const Plan p = plan_unary(op, a, Result::Bool);
  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty() && checks::on_chip() && tile.back() % 32 != 0)
    fail<TileError>(op.name, ": the tile's last axis is ", tile.back(), "; on ", current_platform().name,
                    " it must be a multiple of 32 (a row of the DT_BOOL output tile is 32-byte aligned)");
  return run_plan<F, 1>(p);
}

// round(input, decimals): the scale 10^decimals as the device's host computes it (fp32 powf, +inf
// past 38), and its reciprocal, ride along as two scalar operands.
template <class S>
Tensor scalar_tensor(S value) {
  Tensor t = Tensor::empty({}, dtype_of<S>());
  *t.data_as<S>() = value;
  return t;
}

template <class F>
Outputs round_by(Plan p, Tensor scale, Tensor reciprocal) {
  p.inputs.push_back(std::move(scale));
  p.inputs.push_back(std::move(reciprocal));
  return run_plan<F, 3>(p);
}

Outputs round_op(const OpDef& op, const Args& a) {
  Plan p = plan_unary(op, a, Result::Same);
  const int64_t decimals = a.integer(1);
  const float scale32 = decimals > 38 ? std::numeric_limits<float>::infinity()
                                      : std::pow(10.0f, static_cast<float>(decimals));
  const double scale64 = std::pow(10.0, static_cast<double>(decimals));
  if (is_floating(p.dtype)) {
    // decimals 0: x * 1 and the division by 1 (or the product with it) are exact, so the device's
    // composition is rint itself, the rounding instruction alone (fp32 [65536], one thread: the
    // division had made it 2x torch's time)
    if (decimals == 0) return run_plan<m::Integral<m::Rounding::NearestEven>, 1>(p);
    if (p.dtype == D::FP64)
      return round_by<m::RoundDividing>(p, scalar_tensor(scale64), scalar_tensor(1.0 / scale64));
    if (p.dtype == D::FP32)
      return round_by<m::RoundDividing>(p, scalar_tensor(scale32), scalar_tensor(1.0f / scale32));
    return round_by<m::RoundByReciprocal>(p, scalar_tensor(scale32), scalar_tensor(1.0f / scale32));
  }
  if (decimals >= 0) return run_plan<m::Integral<m::Rounding::Trunc>, 1>(p);  // integers are unchanged
  Outputs out;
  visit_dtype(p.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (kernels::arith::kInteger<S>) {
      using C = typename m::RoundIntegers<S>::Compute;
      p.compute = dtype_of<C>();
      out = round_by<m::RoundIntegers<S>>(p, scalar_tensor(static_cast<C>(sizeof(C) == 4 ? scale32 : scale64)),
                                          scalar_tensor(sizeof(C) == 4 ? C(1.0f / scale32) : C(1.0 / scale64)));
    }
  });
  return out;
}

template <m::Fn F>
using Library = m::Library<F>;

}  // namespace

void families::add_math(std::vector<OpDef>& table) {
  const std::vector<Param> precision{kIntrinsic};
  const unsigned both = kFunction | kMethod;
  // ---- exponentials and logarithms (docs/ops/exp.md, docs/ops/log.md)
  add(table, {"exp", "input", both, precision, kFloats, kHalves, unary<Library<m::Fn::Exp>>, unary_infer<>,
              "docs/ops/exp.md"});
  add(table, {"exp2", "input", both, {}, kNumbers, {D::FP32, D::FP16, D::BF16, D::INT32, D::INT16, D::INT8, D::UINT8},
              unary<Library<m::Fn::Exp2>, Result::Fp32ForIntegers>, unary_infer<Result::Fp32ForIntegers>,
              "docs/ops/exp.md"});
  add(table, {"expm1", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Expm1, Result::Fp32ForIntegers>,
              unary_infer<Result::Fp32ForIntegers>, "docs/ops/exp.md"});
  add(table, {"log", "input", both, precision, kFloats, kHalves, unary<Library<m::Fn::Log>>, unary_infer<>,
              "docs/ops/log.md"});
  add(table, {"log2", "input", both, precision, kFloats, kHalves, unary<m::LogBase<2>>, unary_infer<>,
              "docs/ops/log.md"});
  add(table, {"log10", "input", both, precision, kFloats, kHalves, unary<m::LogBase<10>>, unary_infer<>,
              "docs/ops/log.md"});
  add(table, {"log1p", "input", both, {}, kFloats, kHalves, unary<m::Log1p>, unary_infer<>, "docs/ops/log.md"});
  // ---- roots (docs/ops/roots.md)
  add(table, {"rsqrt", "input", both, precision, kFloats, kHalves, unary<m::Rsqrt>, unary_infer<>,
              "docs/ops/roots.md"});
  add(table, {"cbrt", "self", kFunction, {}, kFloats, kHalves, unary<m::Cbrt>, unary_infer<>, "docs/ops/roots.md"});
  // ---- trigonometric and hyperbolic functions (docs/ops/trig.md, inverse_trig.md, hyperbolic.md)
  struct Transcendental {
    const char* name;
    const char* param;
    unsigned forms;
    DTypeSet chips;
    RunFn run;
    const char* page;
  };
  const DTypeSet fp16_fp32{D::FP32, D::FP16};
  for (const Transcendental& t : {
           Transcendental{"sin", "self", both, fp16_fp32, unary<Library<m::Fn::Sin>>, "docs/ops/trig.md"},
           Transcendental{"cos", "self", both, fp16_fp32, unary<Library<m::Fn::Cos>>, "docs/ops/trig.md"},
           Transcendental{"tan", "x", kFunction, kHalves, unary<Library<m::Fn::Tan>>, "docs/ops/trig.md"},
           Transcendental{"asin", "self", kFunction, kHalves, unary<Library<m::Fn::Asin>>, "docs/ops/inverse_trig.md"},
           Transcendental{"acos", "self", kFunction, kHalves, unary<Library<m::Fn::Acos>>, "docs/ops/inverse_trig.md"},
           Transcendental{"atan", "self", kFunction, kHalves, unary<Library<m::Fn::Atan>>, "docs/ops/inverse_trig.md"},
           Transcendental{"sinh", "input", both, kHalves, unary<Library<m::Fn::Sinh>>, "docs/ops/hyperbolic.md"},
           Transcendental{"cosh", "input", both, kHalves, unary<Library<m::Fn::Cosh>>, "docs/ops/hyperbolic.md"},
           Transcendental{"tanh", "a", both, kHalves, unary<Library<m::Fn::Tanh>>, "docs/ops/hyperbolic.md"},
           Transcendental{"asinh", "input", both, kHalves, unary<Library<m::Fn::Asinh>>, "docs/ops/hyperbolic.md"},
           Transcendental{"acosh", "input", both, kHalves, unary<Library<m::Fn::Acosh>>, "docs/ops/hyperbolic.md"},
           Transcendental{"atanh", "input", kFunction, kHalves, unary<Library<m::Fn::Atanh>>, "docs/ops/hyperbolic.md"},
           Transcendental{"erf", "self", kFunction, kHalves, unary<Library<m::Fn::Erf>>, "docs/ops/erf.md"},
           Transcendental{"erfc", "input", both, kHalves, unary<Library<m::Fn::Erfc>>, "docs/ops/erf.md"},
       })
    add(table, {t.name, t.param, t.forms, {}, kFloats, t.chips, t.run, unary_infer<>, t.page});
  // ---- activations (docs/ops/sigmoid.md, docs/ops/relu.md)
  // The page lists DT_FP32; upstream's sigmoid widens fp16 / bf16 and rounds back, and its tests run fp16.
  add(table, {"sigmoid", "input", both, {}, kFloats, kHalves, unary<m::Sigmoid>, unary_infer<>, "docs/ops/sigmoid.md"});
  add(table, {"relu", "a", both, {}, kNumbers, kHalvesAndInt, unary<m::Relu>, unary_infer<>, "docs/ops/relu.md"});
  // ---- sign (docs/ops/sign.md)
  add(table, {"sign", "a", both, {}, kNumbers, kSigned, unary<m::Sign>, unary_infer<>, "docs/ops/sign.md"});
  add(table, {"signbit", "a", both, {}, kNumbers, kSigned, unary<m::Signbit, Result::Bool>, unary_infer<Result::Bool>,
              "docs/ops/sign.md"});
  // ---- rounding (docs/ops/rounding.md)
  add(table, {"floor", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Integral<m::Rounding::Floor>>,
              unary_infer<>, "docs/ops/rounding.md"});
  add(table, {"ceil", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Integral<m::Rounding::Ceil>>,
              unary_infer<>, "docs/ops/rounding.md"});
  add(table, {"round", "input", both, {{"decimals", ParamKind::Int, "0"}}, kNumbers, kHalvesAndInt, round_op,
              unary_infer<>, "docs/ops/rounding.md"});
  add(table, {"trunc", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Integral<m::Rounding::Trunc>>,
              unary_infer<>, "docs/ops/rounding.md"});
  // ---- predicates and logical / bitwise not (docs/ops/classification.md, logical_not.md, bitwise_not.md)
  const char* bool_rows = "TileShape has the input's rank, its last axis a multiple of 32 on the chips; UB: input and output tiles";
  add(table, {"isfinite", "self", kFunction, {}, DTypeSet::all(),
              {D::FP16, D::BF16, D::FP32, D::UINT8, D::INT8, D::UINT16, D::INT16, D::UINT32, D::INT32, D::UINT64, D::INT64},
              predicate_in_bool_rows<m::Isfinite>, unary_infer<Result::Bool>, "docs/ops/classification.md",
              bool_rows});
  add(table, {"isnan", "self", kFunction, {}, DTypeSet::all(), kHalves, predicate_in_bool_rows<m::Isnan>,
              unary_infer<Result::Bool>, "docs/ops/classification.md",
              bool_rows});
  add(table, {"logical_not", "input", both, {}, DTypeSet::all(),
              {D::FP32, D::FP16, D::BF16, D::BOOL, D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32},
              unary<m::LogicalNot, Result::Bool>, unary_infer<Result::Bool>, "docs/ops/logical_not.md"});
  add(table, {"bitwise_not", "self", kFunction, {}, kBitwise,
              {D::BOOL, D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32}, unary<m::BitwiseNot>,
              unary_infer<>, "docs/ops/bitwise_not.md"});
}

}  // namespace pto
