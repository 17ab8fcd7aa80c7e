// The float32 <-> narrow-float conversions of include/ptocpu/dtype.h against the formats'
// definitions (docs/dtypes.md#conversions): every positive float32 through every encoder (a
// stride of them in Debug / sanitizer builds), the sign and NaN handling, the float64 path
// (double_to_float_round_odd, then the encoder) around every halfway point, every code decoded,
// and a table of boundary values written out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "ptocpu/dtype.h"

namespace {

#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
constexpr uint32_t kStride = 1;       // every positive float32
constexpr uint32_t kSparse = 97;      // negatives: every 97th
#else
constexpr uint32_t kStride = 4099;    // unoptimised builds: every 4099th bit pattern
constexpr uint32_t kSparse = 40009;
#endif

// IEEE: the top exponent holds inf (mantissa 0) and NaN; FN (E4M3FN): no inf, only S.1111.111 is
// NaN; E8M0: unsigned, code c is 2^(c-127), 0xFF is NaN.
enum class Kind { IEEE, FN, E8M0 };

struct Format {
  const char* name;
  int E, M;
  Kind kind;
  uint32_t (*encode)(float);
  float (*decode)(uint32_t);
  uint32_t nan_code;  // the NaN the encoder writes for a positive NaN (docs/dtypes.md); 0: any
                      // NaN of the input's sign (fp16 and bf16 keep the payload's top bits, made quiet)

  int bias() const { return (1 << (E - 1)) - 1; }
  uint32_t sign_bit() const { return kind == Kind::E8M0 ? 0 : 1u << (E + M); }
  uint32_t largest_finite() const {
    switch (kind) {
      case Kind::IEEE: return (((1u << E) - 1) << M) - 1;
      case Kind::FN: return (1u << (E + M)) - 2;
      case Kind::E8M0: return 254;
    }
    return 0;
  }
  uint32_t overflow_code() const {  // what a too-large magnitude becomes
    return kind == Kind::IEEE ? ((1u << E) - 1) << M : kind == Kind::FN ? (1u << (E + M)) - 1 : 0xFF;
  }
  // The magnitude a non-negative code stands for, special codes read as ordinary numbers.
  double raw_value(uint32_t code) const {
    if (kind == Kind::E8M0) return std::ldexp(1.0, static_cast<int>(code) - 127);
    const int e = static_cast<int>(code >> M) & ((1 << E) - 1);
    const double m = code & ((1u << M) - 1);
    return e == 0 ? std::ldexp(m, 1 - bias() - M) : std::ldexp(m + (1 << M), e - bias() - M);
  }
  // The value of any code: NaN, ±inf or a finite number (double holds them all exactly).
  double value(uint32_t code) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    if (kind == Kind::E8M0) return code == 0xFF ? nan : raw_value(code);
    const bool neg = code & sign_bit();
    const uint32_t mag = code & (sign_bit() - 1);
    double v;
    if (kind == Kind::IEEE && (mag >> M) == (1u << E) - 1)
      v = (mag & ((1u << M) - 1)) ? nan : std::numeric_limits<double>::infinity();
    else if (kind == Kind::FN && mag == (1u << (E + M)) - 1)
      v = nan;
    else
      v = raw_value(mag);
    return neg ? -v : v;
  }
};

void PrintTo(const Format& f, std::ostream* os) { *os << f.name; }

const Format kFormats[] = {
    {"fp16", 5, 10, Kind::IEEE, [](float f) -> uint32_t { return pto::float_to_fp16_bits(f); },
     [](uint32_t c) { return pto::fp16_bits_to_float(static_cast<uint16_t>(c)); }, 0},
    {"bf16", 8, 7, Kind::IEEE, [](float f) -> uint32_t { return pto::float_to_bf16_bits(f); },
     [](uint32_t c) { return pto::bf16_bits_to_float(static_cast<uint16_t>(c)); }, 0},
    {"fp8e4m3", 4, 3, Kind::FN, [](float f) -> uint32_t { return pto::float_to_fp8e4m3_bits(f); },
     [](uint32_t c) { return pto::fp8e4m3_bits_to_float(static_cast<uint8_t>(c)); }, 0x7F},
    {"fp8e5m2", 5, 2, Kind::IEEE, [](float f) -> uint32_t { return pto::float_to_fp8e5m2_bits(f); },
     [](uint32_t c) { return pto::fp8e5m2_bits_to_float(static_cast<uint8_t>(c)); }, 0x7E},
    {"fp8e8m0", 8, 0, Kind::E8M0, [](float f) -> uint32_t { return pto::float_to_fp8e8m0_bits(f); },
     [](uint32_t c) { return pto::fp8e8m0_bits_to_float(static_cast<uint8_t>(c)); }, 0xFF},
};

// Rounding by the definition: the non-negative values in increasing order, one more step above the
// largest (the value the format would have next; it stands for overflow), and the halfway points
// between neighbours. A magnitude goes to the nearest value; a tie to the even code (E8M0: up).
constexpr uint32_t kAnyNaN = 0xFFFFFFFFu;

struct Ladder {
  const Format& f;
  std::vector<double> values, mids;
  std::vector<uint32_t> codes;

  explicit Ladder(const Format& fmt) : f(fmt) {
    for (uint32_t c = 0; c <= f.largest_finite() + 1; ++c) {
      values.push_back(f.raw_value(c));
      codes.push_back(c);
    }
    for (size_t i = 0; i + 1 < values.size(); ++i) mids.push_back((values[i] + values[i + 1]) / 2);
  }
  // Nearest for a magnitude a in (mids[j-1], mids[j]], j = the first halfway point >= a.
  uint32_t pick(double a, size_t j) const {
    size_t i = j;
    if (j < mids.size() && a == mids[j]) i = f.kind == Kind::E8M0 || (codes[j] & 1) ? j + 1 : j;
    return i + 1 == values.size() ? f.overflow_code() : codes[i];
  }
  // The code for any input; kAnyNaN: any NaN code of x's sign.
  uint32_t expected(double x) const {
    const uint32_t sign = std::signbit(x) ? f.sign_bit() : 0;
    if (std::isnan(x)) return f.kind == Kind::E8M0 ? 0xFF : f.nan_code ? sign | f.nan_code : kAnyNaN;
    if (f.kind == Kind::E8M0 && (x <= 0 || std::isinf(x))) return 0xFF;  // no zero, sign or inf
    const double a = std::fabs(x);
    if (std::isinf(a)) return sign | f.overflow_code();
    return sign | pick(a, std::lower_bound(mids.begin(), mids.end(), a) - mids.begin());
  }
};

bool same(const Format& f, uint32_t got, uint32_t want, double x) {
  if (want != kAnyNaN) return got == want;
  const double v = f.value(got);
  return std::isnan(v) && std::signbit(v) == std::signbit(x);
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class Conversions : public ::testing::TestWithParam<Format> {};

TEST_P(Conversions, EveryPositiveFloat32RoundsToTheNearestValue) {
  const Format& f = GetParam();
  const Ladder ladder(f);
  size_t j = 0, bad = 0;
  std::string first;
  // 0 .. inf; the halfway point index advances with the (increasing) magnitude.
  for (uint64_t b = 0; b <= 0x7F800000u; b += (b < 0x7F800000u - kStride ? kStride : 1)) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(b));
    const double a = x;
    while (j < ladder.mids.size() && ladder.mids[j] < a) ++j;
    const uint32_t want = (b == 0 || b == 0x7F800000u) ? ladder.expected(a) : ladder.pick(a, j);
    const uint32_t got = f.encode(x);
    if (got != want && bad++ < 8) first += " " + hex(b) + "->" + hex(got) + " (want " + hex(want) + ")";
  }
  EXPECT_EQ(bad, 0u) << f.name << ":" << first;
}

TEST_P(Conversions, NegativesAndNaNs) {
  const Format& f = GetParam();
  const Ladder ladder(f);
  size_t bad = 0;
  std::string first;
  auto check = [&](uint32_t b) {
    const float x = std::bit_cast<float>(b);
    const uint32_t want = ladder.expected(x), got = f.encode(x);
    if (!same(f, got, want, x) && bad++ < 8) first += " " + hex(b) + "->" + hex(got) + " (want " + hex(want) + ")";
  };
  for (uint64_t b = 0x80000000u; b <= 0xFFFFFFFFu; b += kSparse) check(static_cast<uint32_t>(b));
  for (uint64_t b = 0x7F800001u; b <= 0x7FFFFFFFu; b += 89) check(static_cast<uint32_t>(b));
  for (uint32_t b : {0x80000000u, 0xFF800000u, 0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu, 0xFFC00000u, 0xFF800001u})
    check(b);
  EXPECT_EQ(bad, 0u) << f.name << ":" << first;
}

TEST_P(Conversions, Float64RoundsOnceAroundEveryHalfwayPoint) {
  const Format& f = GetParam();
  const Ladder ladder(f);
  std::vector<double> xs = {0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300,
                            std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                            static_cast<double>(std::numeric_limits<float>::max()) * (1 + 0x1p-30),
                            0x1p128 - 0x1p103, 0x1p128 - 0x1p103 - 0x1p80, 0x1p-150, 0x1p-149 * 1.5};
  std::vector<double> points = ladder.mids;
  points.insert(points.end(), ladder.values.begin(), ladder.values.end());
  const size_t step = points.size() > 4000 ? points.size() / 2000 : 1;  // bf16, fp16: a spread of them
  for (size_t i = 0; i < points.size(); i += step) {
    const double m = points[i];
    for (double x : {m, std::nextafter(m, 0.0), std::nextafter(m, INFINITY), m * (1 + 0x1p-40),
                     m * (1 - 0x1p-40), m * (1 + 0x1p-26), m * (1 - 0x1p-26)})
      for (double s : {x, -x}) xs.push_back(s);
  }
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> exponent(-160, 140);
  for (int i = 0; i < 20000; ++i) xs.push_back(std::ldexp(normal(rng), exponent(rng)));
  size_t bad = 0;
  std::string first;
  for (double x : xs) {
    const uint32_t want = ladder.expected(x), got = f.encode(pto::double_to_float_round_odd(x));
    if (!same(f, got, want, x) && bad++ < 8) first += " " + std::to_string(x) + "->" + hex(got) + " (want " + hex(want) + ")";
  }
  EXPECT_EQ(bad, 0u) << f.name << ":" << first;
}

TEST_P(Conversions, EveryCodeDecodesToItsValue) {
  const Format& f = GetParam();
  const uint32_t codes = f.kind == Kind::E8M0 ? 256 : 2u << (f.E + f.M);
  for (uint32_t c = 0; c < codes; ++c) {
    const double want = f.value(c);
    const float got = f.decode(c);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << f.name << " " << hex(c);
    } else {
      EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(static_cast<float>(want)))
          << f.name << " " << hex(c);
      EXPECT_EQ(static_cast<double>(got), want) << f.name << " " << hex(c);  // float32-exact
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DType, Conversions, ::testing::ValuesIn(kFormats),
                         [](const auto& info) { return std::string(info.param.name); });

// Boundary values worked out by hand from the definitions (docs/dtypes.md#conversions).
TEST(DTypeConversions, BoundaryTable) {
  const float sub = 0x1p-149f;  // the smallest float32 subnormal
  // E8M0: 2^-127 is code 0, 2^-126 code 1; halfway is 1.5 * 2^-127 (float32 bits 0x00600000).
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::bit_cast<float>(0x00541FC3u)), 0x00);  // 1.31 * 2^-127
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::bit_cast<float>(0x00400000u)), 0x00);  // 2^-127
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::bit_cast<float>(0x00400001u)), 0x00);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::bit_cast<float>(0x005FFFFFu)), 0x00);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::bit_cast<float>(0x00600000u)), 0x01);  // the tie goes up
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::bit_cast<float>(0x007FFFFFu)), 0x01);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(sub), 0x00);                   // below 2^-127: 2^-127
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(0x1p-126f), 0x01);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(1.0f), 0x7F);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::nextafter(1.5f, 0.0f)), 0x7F);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(1.5f), 0x80);   // tie: up
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(0.75f), 0x7F);  // tie: up (not to the even code 0x7E)
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(3.0f), 0x81);   // tie: up (not to the even code 0x80)
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(0x1p127f), 0xFE);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(std::bit_cast<float>(0x7F3FFFFFu)), 0xFE);
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(0x1.8p127f), 0xFF);  // rounds to 2^128: NaN
  for (float x : {0.0f, -0.0f, -1.0f, -sub, INFINITY, -INFINITY, NAN})
    EXPECT_EQ(pto::float_to_fp8e8m0_bits(x), 0xFF) << x;
  // E4M3FN: subnormals m * 2^-9, largest 448, no inf.
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(0x1p-10f), 0x00);      // tie between 0 and 2^-9: even
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(0x1.000002p-10f), 0x01);
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(0x3p-10f), 0x02);      // tie between codes 1 and 2
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(0xFp-10f), 0x08);      // tie between 7 * 2^-9 and 2^-6
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(-sub), 0x80);
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(1.0625f), 0x38);       // tie between 1 and 1.125
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(1.1875f), 0x3A);       // tie between 1.125 and 1.25
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(464.0f), 0x7E);        // tie between 448 and (480): even
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(std::nextafter(464.0f, 1e9f)), 0x7F);  // NaN
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(-INFINITY), 0xFF);
  // E5M2: subnormals m * 2^-16, largest 57344, inf.
  EXPECT_EQ(pto::float_to_fp8e5m2_bits(0x1p-17f), 0x00);
  EXPECT_EQ(pto::float_to_fp8e5m2_bits(0x7p-17f), 0x04);      // tie between 3 * 2^-16 and 2^-14
  EXPECT_EQ(pto::float_to_fp8e5m2_bits(1.375f), 0x3E);        // tie between 1.25 and 1.5
  EXPECT_EQ(pto::float_to_fp8e5m2_bits(std::nextafter(61440.0f, 0.0f)), 0x7B);
  EXPECT_EQ(pto::float_to_fp8e5m2_bits(61440.0f), 0x7C);      // tie between 57344 and (65536): inf
  EXPECT_EQ(pto::float_to_fp8e5m2_bits(-NAN), 0xFE);
  // fp16 and bf16.
  EXPECT_EQ(pto::float_to_fp16_bits(0x1p-25f), 0x0000);
  EXPECT_EQ(pto::float_to_fp16_bits(0x3p-25f), 0x0002);
  EXPECT_EQ(pto::float_to_fp16_bits(65520.0f), 0x7C00);
  EXPECT_EQ(pto::float_to_bf16_bits(std::bit_cast<float>(0x00018000u)), 0x0002);  // subnormal tie
  EXPECT_EQ(pto::float_to_bf16_bits(std::bit_cast<float>(0x7F7F8000u)), 0x7F80);  // tie: inf
  EXPECT_EQ(pto::float_to_bf16_bits(std::bit_cast<float>(0x7F800001u)), 0x7FC0);  // quiet NaN
}

}  // namespace
