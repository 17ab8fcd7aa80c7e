// PyPTO's mode enums (ptocpu/modes.h) as Python IntEnums: op parameters take their members or ints.
#include "bind.h"
#include "ptocpu/modes.h"

namespace ptobind {
namespace {

template <class E>
void bind_enum(nb::module_& m, const char* name, const char* doc, std::initializer_list<std::pair<const char*, E>> members) {
  nb::enum_<E> e(m, name, nb::is_arithmetic(), doc);
  for (const auto& [member, value] : members) e.value(member, value);
}

}  // namespace

void bind_enums(nb::module_& m) {
  using namespace pto;
  bind_enum<PrecisionType>(m, "PrecisionType", "The instruction sequence of exp / sqrt / div ... (the CPU result is the same)",
                           {{"INTRINSIC", PrecisionType::INTRINSIC}, {"HIGH_PRECISION", PrecisionType::HIGH_PRECISION}});
  bind_enum<CastMode>(m, "CastMode", "cast's rounding (docs/ops/cast.md)",
                      {{"CAST_NONE", CastMode::CAST_NONE}, {"CAST_RINT", CastMode::CAST_RINT},
                       {"CAST_ROUND", CastMode::CAST_ROUND}, {"CAST_FLOOR", CastMode::CAST_FLOOR},
                       {"CAST_CEIL", CastMode::CAST_CEIL}, {"CAST_TRUNC", CastMode::CAST_TRUNC},
                       {"CAST_ODD", CastMode::CAST_ODD}});
  bind_enum<SaturationMode>(m, "SaturationMode", "cast's out-of-range rule: clamp (ON) or keep the low bits (OFF)",
                            {{"ON", SaturationMode::ON}, {"OFF", SaturationMode::OFF}});
  bind_enum<ReLuType>(m, "ReLuType", "matmul's activation on write-out", {{"NO_RELU", ReLuType::NO_RELU}, {"RELU", ReLuType::RELU}});
  bind_enum<ConvReLuType>(m, "ConvReLuType", "conv's activation on write-out",
                          {{"NO_RELU", ConvReLuType::NO_RELU}, {"RELU", ConvReLuType::RELU}});
  bind_enum<TransMode>(m, "TransMode", "matmul's TF32 rounding of fp32 operands",
                       {{"CAST_NONE", TransMode::CAST_NONE}, {"CAST_RINT", TransMode::CAST_RINT},
                        {"CAST_ROUND", TransMode::CAST_ROUND}});
  bind_enum<TopKAlgo>(m, "TopKAlgo", "topk's algorithm (the result is the same)",
                      {{"MERGE_SORT", TopKAlgo::MERGE_SORT}, {"RADIX_SELECT", TopKAlgo::RADIX_SELECT}});
  bind_enum<LogBaseType>(m, "LogBaseType", "a logarithm's base",
                         {{"LOG_E", LogBaseType::LOG_E}, {"LOG_2", LogBaseType::LOG_2}, {"LOG_10", LogBaseType::LOG_10}});
  bind_enum<OpType>(m, "OpType", "a comparison's kind",
                    {{"EQ", OpType::EQ}, {"NE", OpType::NE}, {"LT", OpType::LT}, {"LE", OpType::LE}, {"GT", OpType::GT},
                     {"GE", OpType::GE}});
  bind_enum<OutType>(m, "OutType", "a comparison's result: a bool per element or packed bits",
                     {{"BOOL", OutType::BOOL}, {"BIT", OutType::BIT}});
  bind_enum<ReduceMode>(m, "ReduceMode", "a reduction across cores", {{"ATOMIC_ADD", ReduceMode::ATOMIC_ADD}});
  bind_enum<ScatterMode>(m, "ScatterMode", "scatter's reduce",
                         {{"NONE", ScatterMode::NONE}, {"ADD", ScatterMode::ADD}, {"MULTIPLY", ScatterMode::MULTIPLY}});
  bind_enum<CachePolicy>(m, "CachePolicy", "a tensor's cache hint (no effect on the CPU)",
                         {{"PREFETCH", CachePolicy::PREFETCH}, {"NONE_CACHEABLE", CachePolicy::NONE_CACHEABLE}});
  bind_enum<DequantScaleRoundingMode>(m, "DequantScaleRoundingMode", "quant_mx's scale rounding",
                                      {{"ROUND_UP", DequantScaleRoundingMode::ROUND_UP},
                                       {"ROUND_DOWN", DequantScaleRoundingMode::ROUND_DOWN}});
}

}  // namespace ptobind
