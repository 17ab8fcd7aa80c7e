// The unary math family's entries (docs/ops/elementwise.md and each op's page): exponentials and
// logarithms, roots, trigonometric and hyperbolic functions, erf, activations, sign, rounding and
// the predicates. Each is a functor of kernels/math.h run by the elementwise engine; the rules that
// differ (dtypes, result dtype, signature) are data here.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/math.h"
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
  const char* schema;
  const char* doc;
  const char* tile_rule = kTileRule;
};

void add(std::vector<OpDef>& table, const Entry& e) {
  std::vector<Param> params{{e.param, ParamKind::Tensor}};
  params.insert(params.end(), e.extra.begin(), e.extra.end());
  table.push_back(OpDef{
      .name = e.name,
      .params = std::move(params),
      .forms = e.forms,
      .doc = e.doc,
      .doc_page = e.page,
      .tile_rule = e.tile_rule,
      .torch_schema = e.schema,
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
  const Platform& platform = current_platform();
  if (!tile.empty() && platform.id != PlatformId::Cpu && tile.back() % 32 != 0)
    fail<TileError>(op.name, ": the tile's last axis is ", tile.back(), "; on ", platform.name,
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
              "docs/ops/exp.md", "exp(Tensor input, int precision_type=0) -> Tensor",
              R"(Elementwise e ** input, within 1 ulp of the correctly rounded fp32 result (fp16 / bf16 rounded once from it).

precision_type is accepted (PrecisionType.INTRINSIC by default); the CPU result is the same for both.

>>> ptocpu.exp(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[1.0, 2.7182817459106445])"});
  add(table, {"exp2", "input", both, {}, kNumbers, {D::FP32, D::FP16, D::BF16, D::INT32, D::INT16, D::INT8, D::UINT8},
              unary<Library<m::Fn::Exp2>, Result::Fp32ForIntegers>, unary_infer<Result::Fp32ForIntegers>,
              "docs/ops/exp.md", "exp2(Tensor input) -> Tensor",
              R"(Elementwise 2 ** input; integer inputs give a DT_FP32 result.

>>> ptocpu.exp2(ptocpu.asarray([0, 1, 10], 'int32')).tolist()
[1.0, 2.0, 1024.0])"});
  add(table, {"expm1", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Expm1, Result::Fp32ForIntegers>,
              unary_infer<Result::Fp32ForIntegers>, "docs/ops/exp.md", "expm1(Tensor input) -> Tensor",
              R"(Elementwise e ** input - 1, computed as the device does: exp(input) - 1 (no small-input correction); integer inputs give DT_FP32.

>>> ptocpu.expm1(ptocpu.asarray([0.0, 2.0], 'float32')).tolist()
[0.0, 6.389056205749512])"});
  add(table, {"log", "input", both, precision, kFloats, kHalves, unary<Library<m::Fn::Log>>, unary_infer<>,
              "docs/ops/log.md", "log(Tensor input, int precision_type=0) -> Tensor",
              R"(Elementwise natural logarithm, within 1 ulp of the correctly rounded fp32 result.

Negative inputs give NaN, 0 gives -inf. precision_type is accepted.

>>> ptocpu.log(ptocpu.asarray([1.0, 4.0], 'float32')).tolist()
[0.0, 1.3862943649291992])"});
  add(table, {"log2", "input", both, precision, kFloats, kHalves, unary<m::LogBase<2>>, unary_infer<>,
              "docs/ops/log.md", "log2(Tensor input, int precision_type=0) -> Tensor",
              R"(Elementwise base-2 logarithm, computed as the device does: ln(input) / fp32(ln 2).

>>> ptocpu.log2(ptocpu.asarray([1.0, 2.0, 4.0], 'float32')).tolist()
[0.0, 1.0, 2.0])"});
  add(table, {"log10", "input", both, precision, kFloats, kHalves, unary<m::LogBase<10>>, unary_infer<>,
              "docs/ops/log.md", "log10(Tensor input, int precision_type=0) -> Tensor",
              R"(Elementwise base-10 logarithm, computed as the device does: ln(input) / fp32(ln 10).

>>> ptocpu.log10(ptocpu.asarray([1.0, 10.0], 'float32')).tolist()
[0.0, 1.0])"});
  add(table, {"log1p", "input", both, {}, kFloats, kHalves, unary<m::Log1p>, unary_infer<>, "docs/ops/log.md",
              "log1p(Tensor input) -> Tensor",
              R"(Elementwise ln(1 + input), computed as the device does: ln(u) * input / (u - 1) with u = 1 + input.

>>> ptocpu.log1p(ptocpu.asarray([0.0, 1e-10], 'float32')).tolist()
[0.0, 1.000000013351432e-10])"});
  // ---- roots (docs/ops/roots.md)
  add(table, {"rsqrt", "input", both, precision, kFloats, kHalves, unary<m::Rsqrt>, unary_infer<>,
              "docs/ops/roots.md", "rsqrt(Tensor input, int precision_type=0) -> Tensor",
              R"(Elementwise 1 / sqrt(input), computed as the device does: the rounded square root, then its rounded reciprocal.

>>> ptocpu.rsqrt(ptocpu.asarray([4.0, 16.0], 'float32')).tolist()
[0.5, 0.25])"});
  add(table, {"cbrt", "self", kFunction, {}, kFloats, kHalves, unary<m::Cbrt>, unary_infer<>, "docs/ops/roots.md",
              "cbrt(Tensor self) -> Tensor",
              R"(Elementwise cube root, as upstream composes it: copysign(pow(|input|, fp32(1/3)), input).

>>> ptocpu.cbrt(ptocpu.asarray([8.0, -8.0], 'float32')).tolist()
[2.0, -2.0])"});
  // ---- trigonometric and hyperbolic functions (docs/ops/trig.md, inverse_trig.md, hyperbolic.md)
  struct Transcendental {
    const char* name;
    const char* param;
    unsigned forms;
    DTypeSet chips;
    RunFn run;
    const char* page;
    const char* schema;
    const char* doc;
  };
  const DTypeSet fp16_fp32{D::FP32, D::FP16};
  for (const Transcendental& t : {
           Transcendental{"sin", "self", both, fp16_fp32, unary<Library<m::Fn::Sin>>, "docs/ops/trig.md",
                          "sin(Tensor self) -> Tensor", R"(Elementwise sine (radians), within 1 ulp of the correctly rounded fp32 result.

>>> ptocpu.sin(ptocpu.asarray([0.0, 0.5], 'float32')).tolist()
[0.0, 0.4794255495071411])"},
           Transcendental{"cos", "self", both, fp16_fp32, unary<Library<m::Fn::Cos>>, "docs/ops/trig.md",
                          "cos(Tensor self) -> Tensor", R"(Elementwise cosine (radians), within 1 ulp of the correctly rounded fp32 result.

>>> ptocpu.cos(ptocpu.asarray([0.0, 0.5], 'float32')).tolist()
[1.0, 0.8775825500488281])"},
           Transcendental{"tan", "x", kFunction, kHalves, unary<Library<m::Fn::Tan>>, "docs/ops/trig.md",
                          "tan(Tensor x) -> Tensor", R"(Elementwise tangent (radians), within 1 ulp of the correctly rounded fp32 result.

>>> ptocpu.tan(ptocpu.asarray([0.0, 0.5], 'float32')).tolist()
[0.0, 0.5463024973869324])"},
           Transcendental{"asin", "self", kFunction, kHalves, unary<Library<m::Fn::Asin>>, "docs/ops/inverse_trig.md",
                          "asin(Tensor self) -> Tensor", R"(Elementwise arcsine in [-pi/2, pi/2]; |input| > 1 gives NaN.

>>> ptocpu.asin(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[0.0, 1.5707963705062866])"},
           Transcendental{"acos", "self", kFunction, kHalves, unary<Library<m::Fn::Acos>>, "docs/ops/inverse_trig.md",
                          "acos(Tensor self) -> Tensor", R"(Elementwise arccosine in [0, pi]; |input| > 1 gives NaN.

>>> ptocpu.acos(ptocpu.asarray([1.0, 0.0], 'float32')).tolist()
[0.0, 1.5707963705062866])"},
           Transcendental{"atan", "self", kFunction, kHalves, unary<Library<m::Fn::Atan>>, "docs/ops/inverse_trig.md",
                          "atan(Tensor self) -> Tensor", R"(Elementwise arctangent in (-pi/2, pi/2).

>>> ptocpu.atan(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[0.0, 0.7853981256484985])"},
           Transcendental{"sinh", "input", both, kHalves, unary<Library<m::Fn::Sinh>>, "docs/ops/hyperbolic.md",
                          "sinh(Tensor input) -> Tensor", R"(Elementwise hyperbolic sine, within 1 ulp of the correctly rounded fp32 result.

>>> ptocpu.sinh(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[0.0, 1.175201177597046])"},
           Transcendental{"cosh", "input", both, kHalves, unary<Library<m::Fn::Cosh>>, "docs/ops/hyperbolic.md",
                          "cosh(Tensor input) -> Tensor", R"(Elementwise hyperbolic cosine, within 1 ulp of the correctly rounded fp32 result.

>>> ptocpu.cosh(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[1.0, 1.5430806875228882])"},
           Transcendental{"tanh", "a", both, kHalves, unary<Library<m::Fn::Tanh>>, "docs/ops/hyperbolic.md",
                          "tanh(Tensor a) -> Tensor", R"(Elementwise hyperbolic tangent, within 1 ulp of the correctly rounded fp32 result.

>>> ptocpu.tanh(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[0.0, 0.7615941762924194])"},
           Transcendental{"asinh", "input", both, kHalves, unary<Library<m::Fn::Asinh>>, "docs/ops/hyperbolic.md",
                          "asinh(Tensor input) -> Tensor", R"(Elementwise inverse hyperbolic sine.

>>> ptocpu.asinh(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[0.0, 0.8813735842704773])"},
           Transcendental{"acosh", "input", both, kHalves, unary<Library<m::Fn::Acosh>>, "docs/ops/hyperbolic.md",
                          "acosh(Tensor input) -> Tensor", R"(Elementwise inverse hyperbolic cosine; input < 1 gives NaN.

>>> ptocpu.acosh(ptocpu.asarray([1.0, 2.0], 'float32')).tolist()
[0.0, 1.316957950592041])"},
           Transcendental{"atanh", "input", kFunction, kHalves, unary<Library<m::Fn::Atanh>>, "docs/ops/hyperbolic.md",
                          "atanh(Tensor input) -> Tensor", R"(Elementwise inverse hyperbolic tangent; +-1 gives +-inf, |input| > 1 NaN.

>>> ptocpu.atanh(ptocpu.asarray([0.0, 0.5], 'float32')).tolist()
[0.0, 0.5493061542510986])"},
           Transcendental{"erf", "self", kFunction, kHalves, unary<Library<m::Fn::Erf>>, "docs/ops/erf.md",
                          "erf(Tensor self) -> Tensor", R"(Elementwise error function, within 1 ulp of the correctly rounded fp32 result.

>>> ptocpu.erf(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[0.0, 0.8427007794380188])"},
           Transcendental{"erfc", "input", both, kHalves, unary<Library<m::Fn::Erfc>>, "docs/ops/erf.md",
                          "erfc(Tensor input) -> Tensor", R"(Elementwise complementary error function 1 - erf(input), without its cancellation.

>>> ptocpu.erfc(ptocpu.asarray([0.0, 1.0], 'float32')).tolist()
[1.0, 0.15729920566082])"},
       })
    add(table, {t.name, t.param, t.forms, {}, kFloats, t.chips, t.run, unary_infer<>, t.page, t.schema, t.doc});
  // ---- activations (docs/ops/sigmoid.md, docs/ops/relu.md)
  // The page lists DT_FP32; upstream's sigmoid widens fp16 / bf16 and rounds back, and its tests run fp16.
  add(table, {"sigmoid", "input", both, {}, kFloats, kHalves, unary<m::Sigmoid>, unary_infer<>, "docs/ops/sigmoid.md",
              "sigmoid(Tensor input) -> Tensor",
              R"(Elementwise logistic function, as upstream composes it: 1 / (1 + exp(-input)), each step rounded to fp32.

>>> ptocpu.sigmoid(ptocpu.asarray([0.0, 2.0], 'float32')).tolist()
[0.5, 0.8807970285415649])"});
  add(table, {"relu", "a", both, {}, kNumbers, kHalvesAndInt, unary<m::Relu>, unary_infer<>, "docs/ops/relu.md",
              "relu(Tensor a) -> Tensor",
              R"(Elementwise max(input, 0): NaN stays NaN, -0.0 gives 0.0.

>>> ptocpu.relu(ptocpu.asarray([-2.0, 0.0, 3.0], 'float32')).tolist()
[0.0, 0.0, 3.0])"});
  // ---- sign (docs/ops/sign.md)
  add(table, {"sign", "a", both, {}, kNumbers, kSigned, unary<m::Sign>, unary_infer<>, "docs/ops/sign.md",
              "sign(Tensor a) -> Tensor",
              R"(Elementwise -1, 0 or 1 as input is negative, zero or positive; NaN gives 0, as on the device.

>>> ptocpu.sign(ptocpu.asarray([-5.0, 0.0, 5.0], 'float32')).tolist()
[-1.0, 0.0, 1.0])"});
  add(table, {"signbit", "a", both, {}, kNumbers, kSigned, unary<m::Signbit, Result::Bool>, unary_infer<Result::Bool>,
              "docs/ops/sign.md", "signbit(Tensor a) -> Tensor",
              R"(Elementwise test of the sign bit: a DT_BOOL tensor, True for negatives, -0.0 and a NaN with its sign bit set.

>>> ptocpu.signbit(ptocpu.asarray([-5.0, -0.0, 5.0], 'float32')).tolist()
[True, True, False])"});
  // ---- rounding (docs/ops/rounding.md)
  add(table, {"floor", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Integral<m::Rounding::Floor>>,
              unary_infer<>, "docs/ops/rounding.md", "floor(Tensor input) -> Tensor",
              R"(Elementwise largest integral value not above input; integer tensors are returned unchanged.

>>> ptocpu.floor(ptocpu.asarray([1.5, -1.5], 'float32')).tolist()
[1.0, -2.0])"});
  add(table, {"ceil", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Integral<m::Rounding::Ceil>>,
              unary_infer<>, "docs/ops/rounding.md", "ceil(Tensor input) -> Tensor",
              R"(Elementwise smallest integral value not below input; integer tensors are returned unchanged.

>>> ptocpu.ceil(ptocpu.asarray([1.5, -1.5], 'float32')).tolist()
[2.0, -1.0])"});
  add(table, {"round", "input", both, {{"decimals", ParamKind::Int, "0"}}, kNumbers, kHalvesAndInt, round_op,
              unary_infer<>, "docs/ops/rounding.md", "round(Tensor input, int decimals=0) -> Tensor",
              R"(Elementwise rounding to `decimals` decimal places, ties to even, as the device computes it.

fp32: rint(input * s) / s with s = fp32(10 ** decimals); fp16 / bf16: rint(input * s) * (1 / s) in
fp32, rounded once. Integers are unchanged for decimals >= 0 and rounded to tens, hundreds, ...
below.

>>> ptocpu.round(ptocpu.asarray([1.25, 2.35], 'float32'), 1).tolist()
[1.2000000476837158, 2.4000000953674316])"});
  add(table, {"trunc", "input", both, {}, kNumbers, kHalvesAndInt, unary<m::Integral<m::Rounding::Trunc>>,
              unary_infer<>, "docs/ops/rounding.md", "trunc(Tensor input) -> Tensor",
              R"(Elementwise integral part of input (rounded toward zero); integer tensors are returned unchanged.

>>> ptocpu.trunc(ptocpu.asarray([1.5, -1.5], 'float32')).tolist()
[1.0, -1.0])"});
  // ---- predicates and logical / bitwise not (docs/ops/classification.md, logical_not.md, bitwise_not.md)
  const char* bool_rows = "TileShape has the input's rank, its last axis a multiple of 32 on the chips; UB: input and output tiles";
  add(table, {"isfinite", "self", kFunction, {}, DTypeSet::all(),
              {D::FP16, D::BF16, D::FP32, D::UINT8, D::INT8, D::UINT16, D::INT16, D::UINT32, D::INT32, D::UINT64, D::INT64},
              predicate_in_bool_rows<m::Isfinite>, unary_infer<Result::Bool>, "docs/ops/classification.md",
              "isfinite(Tensor self) -> Tensor",
              R"(Elementwise test for a finite value: a DT_BOOL tensor, False for inf, -inf and NaN (always True for integers).

>>> ptocpu.isfinite(ptocpu.asarray([1.0, float('inf'), float('nan')], 'float32')).tolist()
[True, False, False])",
              bool_rows});
  add(table, {"isnan", "self", kFunction, {}, DTypeSet::all(), kHalves, predicate_in_bool_rows<m::Isnan>,
              unary_infer<Result::Bool>, "docs/ops/classification.md", "isnan(Tensor self) -> Tensor",
              R"(Elementwise test for NaN: a DT_BOOL tensor.

>>> ptocpu.isnan(ptocpu.asarray([1.0, float('inf'), float('nan')], 'float32')).tolist()
[False, False, True])",
              bool_rows});
  add(table, {"logical_not", "input", both, {}, DTypeSet::all(),
              {D::FP32, D::FP16, D::BF16, D::BOOL, D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32},
              unary<m::LogicalNot, Result::Bool>, unary_infer<Result::Bool>, "docs/ops/logical_not.md",
              "logical_not(Tensor input) -> Tensor",
              R"(Elementwise input == 0: a DT_BOOL tensor (-0.0 counts as zero, NaN does not).

>>> ptocpu.logical_not(ptocpu.asarray([0, 1, 2], 'int32')).tolist()
[True, False, False])"});
  add(table, {"bitwise_not", "self", kFunction, {}, kBitwise,
              {D::BOOL, D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32}, unary<m::BitwiseNot>,
              unary_infer<>, "docs/ops/bitwise_not.md", "bitwise_not(Tensor self) -> Tensor",
              R"(Elementwise ~input for integers (-x - 1 for signed ones); logical not for DT_BOOL.

>>> ptocpu.bitwise_not(ptocpu.asarray([2, 5], 'int32')).tolist()
[-3, -6])"});
}

}  // namespace pto
