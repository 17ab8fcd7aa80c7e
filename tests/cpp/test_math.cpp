// The unary math family in C++ (src/ops/math.cpp, src/kernels/math.h): its table entries, a call
// through the table, and the vector math kernel on every instruction set this CPU runs: the same
// bits from each (any length, in place, NaN canonical), within 1 ulp of the correctly rounded fp32
// value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "helpers.h"
#include "kernels/math.h"
#include "ptocpu/build.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

using pto::DType;
using pto::PlatformId;
using pto::Tensor;
namespace m = pto::kernels::math;

constexpr const char* kIsas[] = {"baseline", "avx2", "avx512"};
constexpr m::Fn kLast = m::Fn::Erfc;

// Restores the CPU's best instruction set when a test ends.
struct IsaScope {
  explicit IsaScope(const char* isa) { pto::set_kernel_tuning(-1, isa); }
  ~IsaScope() { pto::set_kernel_tuning(-1, nullptr); }
};

template <class T>
std::vector<T> evaluated(m::Fn fn, const std::vector<T>& in, const char* isa) {
  IsaScope scope(isa);
  std::vector<T> out(in.size());
  m::evaluate(fn, out.data(), in.data(), static_cast<int64_t>(in.size()));
  return out;
}

// Finite random bit patterns, the specials and a length that leaves a tail in every register width.
std::vector<float> inputs_f32() {
  std::vector<float> x = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0.5f, 100.0f, 1e-40f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> small(-4.0f, 4.0f);
  while (x.size() < 1013) {
    const uint32_t b = rng();
    float f;
    std::memcpy(&f, &b, 4);
    if (std::isfinite(f)) x.push_back(x.size() % 2 ? f : small(rng));
  }
  return x;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

int64_t ulps(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  const auto line = [](int32_t v) { return v < 0 ? int64_t(INT32_MIN) - v : int64_t(v); };
  return std::llabs(line(ia) - line(ib));
}

TEST(Math, TableEntries) {
  const pto::OpDef& exp = pto::op_def("exp");
  ASSERT_EQ(exp.params.size(), 2u);
  EXPECT_STREQ(exp.params[0].name, "input");
  EXPECT_STREQ(exp.params[1].name, "precision_type");
  EXPECT_STREQ(exp.params[1].default_value, "0");  // PrecisionType.INTRINSIC
  EXPECT_EQ(exp.forms, pto::kFunction | pto::kMethod | pto::kTorch);
  EXPECT_STREQ(exp.doc_page, "docs/ops/exp.md");
  EXPECT_STREQ(exp.torch_schema, "exp(Tensor input, int precision_type=0) -> Tensor");
  const pto::OpDef& tan = pto::op_def("tan");
  EXPECT_EQ(tan.forms, pto::kFunction | pto::kTorch);  // no Tensor.tan upstream
  EXPECT_STREQ(tan.params[0].name, "x");
  const pto::OpDef& sin = pto::op_def("sin");
  EXPECT_FALSE(sin.limits_on(PlatformId::AtlasA2).dtypes.contains(DType::BF16));
  EXPECT_TRUE(sin.limits_on(PlatformId::Cpu).dtypes.contains(DType::BF16));
  EXPECT_TRUE(sin.limits_on(PlatformId::Cpu).dtypes.contains(DType::FP64));
  EXPECT_EQ(sin.limits_on(PlatformId::Ascend950).max_rank, 4);
  const pto::OpDef& round = pto::op_def("round");
  EXPECT_STREQ(round.params[1].name, "decimals");
  EXPECT_STREQ(round.params[1].default_value, "0");
  EXPECT_TRUE(pto::op_def("exp2").limits_on(PlatformId::AtlasA3).dtypes.contains(DType::UINT8));
  EXPECT_TRUE(pto::op_def("bitwise_not").limits_on(PlatformId::AtlasA3).dtypes.contains(DType::BOOL));
  EXPECT_FALSE(pto::op_def("bitwise_not").limits_on(PlatformId::Cpu).dtypes.contains(DType::FP32));
}

TEST(Math, CallsThroughTheTable) {
  Tensor x = Tensor::empty({3}, DType::FP32);
  const float values[3] = {0.0f, 1.25f, -2.5f};
  std::memcpy(x.data(), values, sizeof values);
  const pto::Outputs e = pto::call_op(pto::op_def("exp"), pto::Args({x, int64_t(0)}));
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(values_f32(e[0])[0], 1.0f);
  EXPECT_EQ(values_f32(pto::call_op(pto::op_def("round"), pto::Args({x, int64_t(1)}))[0]),
            (std::vector<float>{0.0f, 1.2f, -2.5f}));
  EXPECT_EQ(pto::call_op(pto::op_def("isnan"), pto::Args({x}))[0].dtype(), DType::BOOL);
  Tensor ints = arange_i32({4});
  const pto::Outputs p = pto::call_op(pto::op_def("exp2"), pto::Args({ints}));
  EXPECT_EQ(p[0].dtype(), DType::FP32);
  EXPECT_EQ(values_f32(p[0]), (std::vector<float>{1.0f, 2.0f, 4.0f, 8.0f}));
  expect_error<pto::DTypeError>([&] { pto::call_op(pto::op_def("exp"), pto::Args({ints, int64_t(0)})); },
                                "exp: input dtype DT_INT32 is not supported on platform cpu");
}

TEST(Math, EveryInstructionSetGivesTheSameBits) {
  const std::vector<float> x = inputs_f32();
  std::vector<double> x64(x.begin(), x.end());
  for (int f = 0; f <= static_cast<int>(kLast); ++f) {
    const auto fn = static_cast<m::Fn>(f);
    const std::vector<float> base = evaluated(fn, x, "baseline");
    const std::vector<double> base64 = evaluated(fn, x64, "baseline");
    for (const char* isa : kIsas) {
      EXPECT_TRUE(same_bits(evaluated(fn, x, isa), base)) << "fn " << f << " fp32 on " << isa;
      EXPECT_TRUE(same_bits(evaluated(fn, x64, isa), base64)) << "fn " << f << " fp64 on " << isa;
    }
  }
}

TEST(Math, RoundingToIntegralValuesOnEveryInstructionSet) {
  const std::vector<float> x = inputs_f32();
  for (const m::Rounding r : {m::Rounding::Floor, m::Rounding::Ceil, m::Rounding::Trunc}) {
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      want[i] = r == m::Rounding::Floor ? std::floor(x[i]) : r == m::Rounding::Ceil ? std::ceil(x[i]) : std::trunc(x[i]);
    for (const char* isa : kIsas) {
      IsaScope scope(isa);
      std::vector<float> got(x.size());
      m::integral(r, got.data(), x.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_TRUE(std::isnan(want[i]) ? std::isnan(got[i]) : std::memcmp(&got[i], &want[i], 4) == 0)
            << isa << " x " << x[i];
    }
  }
}

TEST(Math, AnyLengthInPlaceAndCanonicalNaN) {
  const std::vector<float> x = inputs_f32();
  for (const char* isa : kIsas) {
    const std::vector<float> whole = evaluated(m::Fn::Log, x, isa);
    IsaScope scope(isa);
    for (int64_t n = 0; n <= 40; ++n) {  // every tail of every register width
      std::vector<float> part(x.begin() + 3, x.begin() + 3 + n);
      m::evaluate(m::Fn::Log, part.data(), part.data(), n);
      if (n > 0)  // an empty vector's data() may be null, which memcmp must not get
        EXPECT_EQ(std::memcmp(part.data(), whole.data() + 3, n * sizeof(float)), 0) << isa << " n " << n;
    }
    float nan_out[2];
    const float negative[2] = {-1.0f, -3.0f};
    m::evaluate(m::Fn::Log, nan_out, negative, 2);
    uint32_t bits;
    std::memcpy(&bits, &nan_out[1], 4);
    EXPECT_EQ(bits, 0x7FC00000u) << isa;
  }
}

TEST(Math, WithinOneUlpOfTheCorrectlyRoundedValue) {
  struct Case {
    m::Fn fn;
    double (*exact)(double);
    float lo, hi;
  };
  std::mt19937 rng(3);
  for (const Case& c : {Case{m::Fn::Exp, std::exp, -87.0f, 88.0f}, Case{m::Fn::Log, std::log, 1e-30f, 1e30f},
                        Case{m::Fn::Sin, std::sin, -1e4f, 1e4f}, Case{m::Fn::Tanh, std::tanh, -10.0f, 10.0f},
                        Case{m::Fn::Erf, std::erf, -4.0f, 4.0f}, Case{m::Fn::Sinh, std::sinh, -89.0f, 89.0f}}) {
    std::uniform_real_distribution<float> u(c.lo, c.hi);
    std::vector<float> x(4096);
    for (float& v : x) v = u(rng);
    for (const char* isa : kIsas) {
      const std::vector<float> got = evaluated(c.fn, x, isa);
      int64_t worst = 0;
      for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, ulps(got[i], static_cast<float>(c.exact(x[i]))));
      EXPECT_LE(worst, 1) << "fn " << static_cast<int>(c.fn) << " on " << isa;
    }
  }
  // pow, as cbrt takes it: |x| ** fp32(1/3)
  std::vector<float> base = {8.0f, 27.0f, 1000.0f, 2.0f}, out(4);
  m::power(out.data(), base.data(), 1.0f / 3.0f, 4);
  for (size_t i = 0; i < base.size(); ++i)
    EXPECT_LE(ulps(out[i], static_cast<float>(std::pow(double(base[i]), double(1.0f / 3.0f)))), 1);
}

}  // namespace
