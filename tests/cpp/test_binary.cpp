// The binary family's functors (kernels/binary.h) on every pair of 8-bit values and on the edges of
// the wider types, against int64 / long double arithmetic: exact results and no undefined
// behaviour (these run under AddressSanitizer + UndefinedBehaviorSanitizer in CI); and a few
// calls through the op table (in-place writes, per-platform zero divisors).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "kernels/binary.h"
#include "ptocpu/ptocpu.h"

namespace {

namespace bk = pto::kernels::binary;

template <class T>
std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  std::vector<T> v;
  if constexpr (sizeof(T) == 1) {
    for (int i = L::lowest(); i <= L::max(); ++i) v.push_back(static_cast<T>(i));
  } else {
    for (int64_t d : {0, 1, 2, 3, 7, 100, 12345}) {
      v.push_back(static_cast<T>(L::max() - d));
      v.push_back(static_cast<T>(L::lowest() + d));
      v.push_back(static_cast<T>(d));
      if constexpr (std::is_signed_v<T>) v.push_back(static_cast<T>(-d));
    }
  }
  return v;
}

// Every pair of edge values, as two columns.
template <class T>
std::pair<std::vector<T>, std::vector<T>> pairs() {
  const std::vector<T> values = edge_values<T>();
  std::vector<T> xs, ys;
  for (T x : values)
    for (T y : values) xs.push_back(x), ys.push_back(y);
  return {xs, ys};
}

// A block form over columns, a block at a time as the engine calls it.
template <class F, class T>
std::vector<T> run_blocks(const std::vector<T>& xs, const std::vector<T>& ys) {
  std::vector<T> out(xs.size());
  for (size_t b = 0; b < xs.size(); b += pto::kernels::ew::kBlock) {
    const int64_t m = std::min<int64_t>(pto::kernels::ew::kBlock, static_cast<int64_t>(xs.size() - b));
    F::apply_block(out.data() + b, xs.data() + b, ys.data() + b, m);
  }
  return out;
}

// Two's complement wrap of an exact value into T.
template <class T>
T wrap(__int128 v) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v)));
}

template <class T>
__int128 saturated_by_zero(T x) {
  return x > 0 ? static_cast<__int128>(std::numeric_limits<T>::max())
               : (x < 0 ? static_cast<__int128>(std::numeric_limits<T>::lowest()) : 0);
}

__int128 floor_quotient(__int128 x, __int128 y) {
  const __int128 q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

template <class T>
void check_integer_division() {
  const auto [xs, ys] = pairs<T>();
  const std::vector<T> rem = run_blocks<bk::Remainder>(xs, ys);
  for (size_t i = 0; i < xs.size(); ++i) {
    const __int128 x = xs[i], y = ys[i];
    const T floor_div = bk::FloorDiv<>::apply(xs[i], ys[i]);
    const T ceil_div = bk::IntegerDivide<bk::Rounding::Ceil>::apply(xs[i], ys[i]);
    if (y == 0) {
      ASSERT_EQ(floor_div, wrap<T>(saturated_by_zero(xs[i]))) << +xs[i];
      ASSERT_EQ(ceil_div, wrap<T>(saturated_by_zero(xs[i]))) << +xs[i];
      ASSERT_EQ(rem[i], T(0));
      continue;
    }
    ASSERT_EQ(floor_div, wrap<T>(floor_quotient(x, y))) << +xs[i] << " // " << +ys[i];
    ASSERT_EQ(ceil_div, wrap<T>(-floor_quotient(-x, y))) << +xs[i] << " ceil_div " << +ys[i];
    ASSERT_EQ(rem[i], wrap<T>(x - floor_quotient(x, y) * y)) << +xs[i] << " % " << +ys[i];
  }
}

TEST(Binary, IntegerDivisionIsExactAndWraps) {
  check_integer_division<int8_t>();
  check_integer_division<uint8_t>();
  check_integer_division<int16_t>();
  check_integer_division<uint16_t>();
  check_integer_division<int32_t>();
  check_integer_division<uint32_t>();
  check_integer_division<int64_t>();
  check_integer_division<uint64_t>();
}

TEST(Binary, Int32FloorDivSentinels) {
  using F = bk::FloorDiv<bk::ByZero::Sentinel>;
  EXPECT_EQ(F::apply(int32_t{5}, int32_t{0}), 0x7FFF7F7F);
  EXPECT_EQ(F::apply(int32_t{0}, int32_t{0}), 0x7FFF7F7F);
  EXPECT_EQ(F::apply(int32_t{-5}, int32_t{0}), static_cast<int32_t>(0x80008080u));
  EXPECT_EQ(F::apply(int32_t{-7}, int32_t{2}), -4);
}

template <class T>
void check_gcd_and_shifts() {
  const auto [xs, ys] = pairs<T>();
  const std::vector<T> gcd = run_blocks<bk::Gcd>(xs, ys);
  constexpr int kWidth = 8 * sizeof(T);
  for (size_t i = 0; i < xs.size(); ++i) {
    const __int128 x = xs[i], y = ys[i];
    const auto magnitude = [](__int128 v) { return static_cast<unsigned long long>(v < 0 ? -v : v); };
    ASSERT_EQ(gcd[i], wrap<T>(std::gcd(magnitude(x), magnitude(y)))) << +xs[i] << " gcd " << +ys[i];
    const int count = (y < 0 || y > kWidth) ? kWidth : static_cast<int>(y);
    const __int128 left = count == kWidth ? 0 : x * (static_cast<__int128>(1) << count);
    const __int128 right = count == kWidth ? (x < 0 ? -1 : 0) : (x >> count);  // arithmetic for negatives
    ASSERT_EQ(bk::ShiftLeft::apply(xs[i], ys[i]), wrap<T>(left)) << +xs[i] << " << " << +ys[i];
    ASSERT_EQ(bk::ShiftRight::apply(xs[i], ys[i]), wrap<T>(right)) << +xs[i] << " >> " << +ys[i];
  }
}

TEST(Binary, GcdAndShiftsCoverEveryEdge) {
  check_gcd_and_shifts<int8_t>();
  check_gcd_and_shifts<uint8_t>();
  check_gcd_and_shifts<int16_t>();
  check_gcd_and_shifts<uint16_t>();
  check_gcd_and_shifts<int32_t>();
  check_gcd_and_shifts<uint32_t>();
  check_gcd_and_shifts<int64_t>();
}

TEST(Binary, IntegerPowersWrap) {
  for (int x = -128; x <= 127; ++x) {
    for (int e = -3; e <= 40; ++e) {
      __int128 want = 1;
      if (e < 0) want = x == 1 ? 1 : (x == -1 ? (e % 2 ? -1 : 1) : 0);
      else
        for (int k = 0; k < e; ++k) want = static_cast<__int128>(wrap<int8_t>(want * x));
      ASSERT_EQ(bk::PowInteger::apply(static_cast<int8_t>(x), static_cast<int8_t>(e)), wrap<int8_t>(want)) << x << "^" << e;
    }
  }
  EXPECT_EQ(bk::PowInteger::apply(int64_t{3}, int64_t{40}), static_cast<int64_t>(12157665459056928801ull));  // 3^40 mod 2^64
  EXPECT_EQ(bk::PowInteger::apply(uint32_t{2}, uint32_t{32}), 0u);
}

TEST(Binary, FloatRemaindersAreExact) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x{7.0f, -7.0f, 1e30f, -3e38f, 5.0f, -0.0f, inf, 1.0f, -1.0f, 6.0f};
  const std::vector<float> y{3.0f, 3.0f, 3.0f, 7.0f, 0.0f, 3.0f, 2.0f, inf, inf, -3.0f};
  std::vector<float> fmod(x.size()), rem(x.size());
  bk::FMod::apply_block(fmod.data(), x.data(), y.data(), static_cast<int64_t>(x.size()));
  bk::Remainder::apply_block(rem.data(), x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const long double f = std::fmod(static_cast<long double>(x[i]), static_cast<long double>(y[i]));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(fmod[i]) && std::isnan(rem[i])) << i;
      continue;
    }
    EXPECT_EQ(fmod[i], static_cast<float>(f)) << i;
    EXPECT_EQ(std::signbit(fmod[i]), std::signbit(x[i])) << i;
    const long double r = (f != 0 && ((f < 0) != (y[i] < 0))) ? f + y[i] : f;
    EXPECT_EQ(rem[i], static_cast<float>(r)) << i;
    EXPECT_FALSE(rem[i] == 0 && std::signbit(rem[i])) << i;  // a zero remainder is +0
  }
}

TEST(Binary, PowSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(bk::PowFloat::apply(-2.0f, 0.5f)));
  EXPECT_EQ(bk::PowFloat::apply(-2.0f, 3.0f), -8.0f);
  EXPECT_EQ(bk::PowFloat::apply(-0.0f, -1.0f), inf);  // -0 counts as +0, as the device tests x < 0
  EXPECT_EQ(bk::PowFloat::apply(1.0f, nan), 1.0f);
  EXPECT_EQ(bk::PowFloat::apply(nan, 0.0f), 1.0f);
  EXPECT_EQ(bk::PowFloat::apply(-1.0f, inf), 1.0f);
  EXPECT_EQ(bk::PowFloat::apply(-inf, 3.0f), -inf);
  EXPECT_EQ(bk::PowFloat::apply(2.0f, 200.0f), inf);
  EXPECT_EQ(bk::PowFloat::apply(2.0f, -149.0f), std::ldexp(1.0f, -149));
  EXPECT_EQ(bk::PowFloat::apply(std::ldexp(1.0f, -140), 0.5f), std::ldexp(1.0f, -70));  // subnormal base
  EXPECT_EQ(bk::PowFloat::apply(3.0f, 2.0f), 9.0f);
}

TEST(Binary, AtanAndHypotFollowTheDevice) {
  const float half_pi = 1.570796326794896619f;
  EXPECT_EQ(bk::Atan2::apply(1.0f, -0.0f), half_pi);
  EXPECT_EQ(bk::Atan2::apply(-0.0f, -0.0f), 0.0f);
  EXPECT_NEAR(bk::Atan2::apply(1.0f, -1.0f), 2.35619449f, 3e-7f);
  EXPECT_EQ(bk::HypotScaled::apply(0.0f, 0.0f), 1e-9f);
  EXPECT_TRUE(std::isnan(bk::HypotScaled::apply(std::numeric_limits<float>::infinity(),
                                                std::numeric_limits<float>::infinity())));
  EXPECT_EQ(bk::HypotScaled::apply(3.0f, -4.0f), 5.0f);
}

TEST(Binary, OpsThroughTheTable) {
  pto::Tensor x = pto::Tensor::empty({3}, pto::DType::INT32);
  pto::Tensor zero = pto::Tensor::zeros({3}, pto::DType::INT32);
  x.data_as<int32_t>()[0] = 5, x.data_as<int32_t>()[1] = -5, x.data_as<int32_t>()[2] = 0;
  const pto::OpDef& floor_div = pto::op_def("floor_div");
  {
    pto::PlatformScope on("ascend950");
    pto::Tensor q = pto::call_op(floor_div, pto::Args({x, zero})).at(0);
    EXPECT_EQ(q.data_as<int32_t>()[0], 0x7FFF7F7F);
    EXPECT_EQ(q.data_as<int32_t>()[1], static_cast<int32_t>(0x80008080u));
  }
  pto::Tensor q = pto::call_op(floor_div, pto::Args({x, zero})).at(0);
  EXPECT_EQ(q.data_as<int32_t>()[0], std::numeric_limits<int32_t>::max());
  EXPECT_EQ(q.data_as<int32_t>()[1], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(q.data_as<int32_t>()[2], 0);

  pto::Tensor y = pto::Tensor::zeros({2, 4}, pto::DType::FP32);
  pto::Tensor src = pto::Tensor::empty({1, 2}, pto::DType::FP32);
  src.data_as<float>()[0] = 1.5f, src.data_as<float>()[1] = 2.5f;
  const std::vector<int64_t> offsets{1, 2};
  EXPECT_TRUE(pto::call_op(pto::op_def("atomic_add"), pto::Args({src, offsets, y})).empty());
  EXPECT_EQ(y.data_as<float>()[6], 1.5f);
  EXPECT_EQ(y.data_as<float>()[7], 2.5f);
  pto::call_op(pto::op_def("axpy_"), pto::Args({y, y, pto::Scalar::of_float(2.0)}));
  EXPECT_EQ(y.data_as<float>()[7], 7.5f);  // y + 2 y, x aliasing y read as it was
  EXPECT_EQ(y.data_as<float>()[0], 0.0f);
}

}  // namespace
