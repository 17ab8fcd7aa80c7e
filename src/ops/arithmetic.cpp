// The arithmetic family's entries (docs/ops/elementwise.md): add, sub, mul, div, maximum,
// minimum, neg, abs, reciprocal, sqrt and the comparisons. Each is a functor of
// kernels/arithmetic.h run by the elementwise engine; the rules that differ are data here.
#include "kernels/arithmetic.h"
#include "ops/elementwise.h"
#include "ops/families.h"

namespace pto {
namespace {

using D = DType;
using namespace elementwise;
namespace a = kernels::arith;

// The cpu platform's dtypes: every dtype the math makes sense for (E8M0 is a scale format
// without zero or sign, BOOL has no arithmetic).
constexpr DTypeSet kNumbers = DTypeSet::all().without({D::BOOL, D::FP8E8M0});
constexpr DTypeSet kSigned = kNumbers.without({D::UINT8, D::UINT16, D::UINT32, D::UINT64});
constexpr DTypeSet kFloats{D::FP16, D::BF16, D::FP32, D::FP64, D::FP8E4M3, D::FP8E5M2};
constexpr DTypeSet kComparable = DTypeSet::all().without({D::FP8E8M0});

// AutoCast ops (add, sub, mul): fp16 / bf16 run in fp32, a scalar is an fp32 literal, and in a
// compiled kernel their chains stay in fp32 on every chip (docs/kernel_model.md#compiled-kernels).
constexpr DTypeSet kHalves{D::FP16, D::BF16};
constexpr BinaryRules kAutoCast{};
// Native fp16 instructions take the scalar as fp16 (div, maximum / minimum, comparisons).
constexpr BinaryRules kDivide{.scalar_rounds_on = {D::FP16}, .result = Result::Fp32ForIntegers};
constexpr BinaryRules kExtremum{.scalar_rounds_on = {D::FP16}, .floats_on_integers = true, .scalar_first = true};
constexpr BinaryRules kCompare{.scalar_rounds_on = {D::FP16}, .integer_scalars = false, .result = Result::Bool};

std::vector<Param> binary_params(std::vector<Param> extra = {}) {
  std::vector<Param> params{{"input", ParamKind::Tensor}, {"other", ParamKind::TensorOrScalar}};
  params.insert(params.end(), extra.begin(), extra.end());
  return params;
}
const Param kPrecision{"precision_type", ParamKind::Int, "1", false, nullptr, "PrecisionType | int"};

}  // namespace

void families::add_arithmetic(std::vector<OpDef>& table) {
  const DTypeSet add_950{D::INT32, D::FP32, D::INT16, D::FP16, D::BF16, D::UINT8, D::INT8};
  const DTypeSet add_a2{D::INT32, D::INT16, D::FP16, D::FP32, D::BF16};
  const DTypeSet div_chips{D::FP16, D::FP32, D::BF16, D::INT16, D::INT32};
  const DTypeSet ext_950{D::INT32, D::UINT32, D::FP32, D::INT16, D::UINT16, D::FP16, D::BF16, D::UINT8, D::INT8};
  const DTypeSet cmp_950{D::FP16, D::FP32, D::INT16}, cmp_a2{D::FP16, D::FP32};
  const DTypeSet halves{D::FP16, D::BF16, D::FP32};

  table.push_back(OpDef{
      .name = "add",
      .params = binary_params(),
      .forms = kFunction | kMethod | kTorch,
      .dunders = {{"__add__"}, {"__radd__", "add(self, other)"}, {"__iadd__", "add(self, other)"}},
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input and one output tile",
      .limits = with_autocast(platform_rows(kNumbers, add_950, add_a2, add_a2), kHalves),
      .run = binary<a::Add, kAutoCast>,
      .infer = binary_infer<kAutoCast>,
  });
  table.push_back(OpDef{
      .name = "sub",
      .params = binary_params(),
      .forms = kFunction | kMethod | kTorch,
      .dunders = {{"__sub__"}, {"__rsub__", "neg(sub(self, other))"}, {"__isub__", "sub(self, other)"}},
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input and one output tile",
      .limits = with_autocast(platform_rows(kNumbers, add_950, add_a2, add_a2), kHalves),
      .run = binary<a::Sub, kAutoCast>,
      .infer = binary_infer<kAutoCast>,
  });
  table.push_back(OpDef{
      .name = "mul",
      .params = binary_params(),
      .forms = kFunction | kMethod | kTorch,
      .dunders = {{"__mul__"}, {"__rmul__", "mul(self, other)"}, {"__imul__", "mul(self, other)"}},
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input and one output tile",
      .limits = with_autocast(platform_rows(kNumbers, add_a2, add_a2, add_a2), kHalves),
      .run = binary<a::Mul, kAutoCast>,
      .infer = binary_infer<kAutoCast>,
  });
  table.push_back(OpDef{
      .name = "div",
      .params = binary_params({kPrecision}),
      .forms = kFunction | kMethod | kTorch,
      .dunders = {{"__truediv__", "div(self, other)"}, {"__itruediv__", "div(self, other)"},
                  {"__rtruediv__", "mul(reciprocal(self), other)"}},
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input and one output tile",
      .limits = platform_rows(kNumbers, div_chips, div_chips, div_chips),
      .run = binary<a::Div, kDivide>,
      .infer = binary_infer<kDivide>,
  });
  for (const auto& [name, max] : {std::pair{"maximum", true}, std::pair{"minimum", false}}) {
    table.push_back(OpDef{
        .name = name,
        .params = {{"input", ParamKind::TensorOrScalar}, {"other", ParamKind::TensorOrScalar}},
        .forms = kFunction | kTorch,
        .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input and one output tile",
        .limits = platform_rows(kNumbers, ext_950, add_a2, add_a2),
        .run = max ? binary<a::Maximum, kExtremum> : binary<a::Minimum, kExtremum>,
        .infer = binary_infer<kExtremum>,
    });
  }
  struct Comparison {
    const char* name;
    const char* dunder;
    RunFn run;
    const char* symbol;
  };
  for (const Comparison& c : {Comparison{"eq", "__eq__", binary<a::Eq, kCompare>, "=="},
                              Comparison{"ne", "__ne__", binary<a::Ne, kCompare>, "!="},
                              Comparison{"lt", "__lt__", binary<a::Lt, kCompare>, "<"},
                              Comparison{"le", "__le__", binary<a::Le, kCompare>, "<="},
                              Comparison{"gt", "__gt__", binary<a::Gt, kCompare>, ">"},
                              Comparison{"ge", "__ge__", binary<a::Ge, kCompare>, ">="},
                              // upstream's other name for gt (pypto.greater, Tensor.greater)
                              Comparison{"greater", nullptr, binary<a::Gt, kCompare>, ">"}}) {
    table.push_back(OpDef{
        .name = c.name,
        .params = binary_params(),
        .forms = kFunction | kMethod,
        .dunders = c.dunder ? decltype(OpDef::dunders){{c.dunder}} : decltype(OpDef::dunders){},
        .doc_page = "docs/ops/comparison.md",
        .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); UB: one tile per tensor input and one DT_BOOL output tile",
        .limits = platform_rows(kComparable, cmp_950, cmp_a2, cmp_a2),
        .run = c.run,
        .infer = binary_infer<kCompare>,
    });
  }
  table.push_back(OpDef{
      .name = "neg",
      .params = {{"input", ParamKind::Tensor}},
      .forms = kFunction | kTorch,
      .dunders = {{"__neg__"}, {"__pos__", "self"}},
      .tile_rule = "TileShape has the input's rank; UB: input and output tiles",
      .limits = platform_rows(kSigned, {D::FP32, D::FP16, D::BF16, D::INT32, D::INT16},
                              {D::FP32, D::FP16, D::BF16, D::INT32, D::INT16}, {D::FP32, D::FP16, D::BF16, D::INT32, D::INT16}),
      .run = unary<a::Neg>,
      .infer = unary_infer<>,
  });
  table.push_back(OpDef{
      .name = "abs",
      .params = {{"input", ParamKind::Tensor}},
      .forms = kFunction | kTorch,
      .dunders = {{"__abs__"}},
      .tile_rule = "TileShape has the input's rank; UB: input and output tiles",
      .limits = platform_rows(kSigned, {D::FP16, D::BF16, D::FP32, D::INT8, D::INT16, D::INT32}, halves, halves),
      .run = unary<a::Abs>,
      .infer = unary_infer<>,
  });
  table.push_back(OpDef{
      .name = "reciprocal",
      .params = {{"input", ParamKind::Tensor}, kPrecision},
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = "TileShape has the input's rank; UB: input and output tiles",
      .limits = platform_rows(kFloats, halves, halves, halves),
      .run = unary<a::Reciprocal>,
      .infer = unary_infer<>,
  });
  table.push_back(OpDef{
      .name = "sqrt",
      .params = {{"input", ParamKind::Tensor}, {"precision_type", ParamKind::Int, "0", false, nullptr, "PrecisionType | int"}},
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = "TileShape has the input's rank; UB: input and output tiles",
      .limits = platform_rows(kFloats, halves, halves, halves),
      .run = unary<a::Sqrt>,
      .infer = unary_infer<>,
  });
}

// add's run, which atomic_add (ops/binary.cpp) shares rather than compiling it again.
template void elementwise::run<a::Add, 2>(const Tensor&, const std::array<const Tensor*, 2>&, DType);

}  // namespace pto
