// The functors of the binary family (docs/ops/elementwise.md and each op's page): integer and
// float division, remainders, powers, atan2, hypot, gcd, bitwise and logical ops, clip, axpy,
// prelu / lrelu and selection, run by the elementwise engine (kernels/elementwise.h).
//
// Every functor is a plain expression per element (selects, no calls; fp64, a cpu-only dtype, calls
// libm for pow, atan2, hypot and fmod), so the engine's loops vectorise; the few exact slow paths
// (fmod of huge quotients) run after a vectorised fast path over the same block (apply_block), as
// does gcd's lock-step Euclid. Integer arithmetic never overflows a signed type: it wraps in
// unsigned types or goes through double, where every value involved is exact. Device algorithms
// (atan2, hypot) are reproduced step by step in fp32, one rounding per step.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "copy/simd.h"
#include "kernels/arithmetic.h"
#include "kernels/elementwise.h"

namespace pto::kernels::binary {

namespace ew = kernels::ew;

using arith::kFloat;
using arith::kInteger;
using arith::kNumber;
using arith::max_or_nan;
using arith::min_or_nan;
using arith::pick;
using arith::Predicate;
using arith::SameType;
using arith::Wide;

template <class T>
inline constexpr bool kNarrowInteger = kInteger<T> && sizeof(T) <= 4;  // exact in double, quotient too

// An integer-valued double as T, for values in T's range or max + 1 (min / -1), which wraps to
// min as two's complement does. Conversions go through int32, which vectorises (64-bit ones do not).
template <class T>
T to_integer(double q) {
  static_assert(kNarrowInteger<T>);
  if constexpr (std::is_same_v<T, uint32_t>)
    return static_cast<uint32_t>(static_cast<int32_t>(pick(q >= 0x1p31, q - 0x1p32, q)));
  else if constexpr (std::is_signed_v<T>)
    return static_cast<T>(static_cast<int32_t>(
        pick(q > static_cast<double>(std::numeric_limits<T>::max()), static_cast<double>(std::numeric_limits<T>::lowest()), q)));
  else
    return static_cast<T>(static_cast<int32_t>(q));
}

// floor / ceil / trunc from nearbyint, which vectorises (GCC leaves floor, ceil and trunc scalar
// while they may not raise the inexact flag); the results have v's sign, as the C functions'.
template <class F>
F floor_of(F v) {
  const F r = std::nearbyint(v);
  return std::copysign(r - pick(r > v, F(1), F(0)), v);
}
template <class F>
F ceil_of(F v) {
  const F r = std::nearbyint(v);
  return std::copysign(r + pick(r < v, F(1), F(0)), v);
}
template <class F>
F trunc_of(F v) {
  const F a = std::fabs(v), r = std::nearbyint(a);
  return std::copysign(r - pick(r > a, F(1), F(0)), v);
}

// ---- integer division -------------------------------------------------------------------------

// What an integer division by zero gives (docs/ops/floor_div.md): the saturated quotient of
// +-inf (max for x > 0, min for x < 0, 0 for 0), or the sentinels of the Ascend 950's int32
// floor_div kernel (0x7FFF7F7F for x >= 0, 0x80008080 for x < 0).
enum class ByZero { Saturate, Sentinel };

template <class T, ByZero Z>
T quotient_by_zero(T x) {
  const T max = std::numeric_limits<T>::max(), min = std::numeric_limits<T>::lowest();
  if constexpr (Z == ByZero::Sentinel)
    return x >= 0 ? static_cast<T>(0x7FFF7F7F) : static_cast<T>(static_cast<int32_t>(0x80008080u));
  else if constexpr (std::is_signed_v<T>)
    return x > 0 ? max : (x < 0 ? min : T(0));
  else
    return x > 0 ? max : T(0);
}

enum class Rounding { Floor, Ceil };

// floor / ceil of x / y for y != 0, exactly. Up to 32 bits: in double (|x|, |y| < 2^32, so the
// rounded quotient never crosses an integer: |x/y - n| >= 1/|y| > |x/y| * 2^-53); 64 bits: in
// integers, min / -1 wrapping.
template <class T, Rounding R>
T integer_quotient(T x, T y) {
  if constexpr (kNarrowInteger<T>) {
    const double q = static_cast<double>(x) / static_cast<double>(y);
    return to_integer<T>(R == Rounding::Floor ? floor_of(q) : ceil_of(q));
  } else {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>)
      if (y == -1) return static_cast<T>(U(0) - static_cast<U>(x));
    const T q = static_cast<T>(x / y);
    const bool inexact = static_cast<T>(x % y) != 0;
    const bool negative = std::is_signed_v<T> && ((x < 0) != (y < 0));
    if constexpr (R == Rounding::Floor) return inexact && negative ? static_cast<T>(q - 1) : q;
    else return inexact && !negative ? static_cast<T>(q + 1) : q;
  }
}

// Integer floor_div / ceil_div; zero divisors as Z says.
template <Rounding R, ByZero Z = ByZero::Saturate>
struct IntegerDivide : SameType {
  template <class T> static constexpr bool takes = kInteger<T>;
  template <class T> static constexpr bool compute_bound = true;  // a division an element (ew::Rows::kStreams)
  template <class T> static T apply(T x, T y) {
    const bool zero = y == 0;
    const T q = integer_quotient<T, R>(x, pick(zero, T(1), y));
    return pick(zero, quotient_by_zero<T, Z>(x), q);
  }
};

// floor_div: floats as the device does it, floor of the correctly rounded quotient (x/0 is +-inf,
// 0/0 NaN); integers exactly (Python's //), zero divisors as Z says.
template <ByZero Z = ByZero::Saturate>
struct FloorDiv : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static constexpr bool compute_bound = kInteger<T>;
  template <class T> static T apply(T x, T y) {
    if constexpr (kFloat<T>) return floor_of(x / y);
    else return IntegerDivide<Rounding::Floor, Z>::apply(x, y);
  }
};

// ---- remainders -------------------------------------------------------------------------------

// fmod of floats, exactly. Fast path: x - trunc(x / y) * y in double, exact while |x / y| < 2^29
// (the quotient rounded in double cannot cross an integer, and q * y has at most 53 bits); the
// rest (huge quotients, y infinite, NaN) goes to std::fmod. The sign is x's, as C's fmod.
inline bool fmod_fast(float x, float y) {
  const double q = static_cast<double>(x) / static_cast<double>(y);
  return (std::fabs(q) < 0x1p29) & (std::fabs(y) < std::numeric_limits<float>::infinity());
}
inline float fmod_fast_value(float x, float y) {
  const double xd = x, yd = y;
  const double r = xd - trunc_of(xd / yd) * yd;
  return std::copysign(static_cast<float>(r), x);
}

// Python's remainder from C's fmod: the divisor's sign (r + y when the signs differ), and +0
// for a zero remainder, as the device's x - floor(x / y) * y gives.
template <class T>
T remainder_from_fmod(T r, T y) {
  const T adjusted = pick((r != 0) & ((r < 0) != (y < 0)), r + y, r);
  return pick(adjusted == 0, T(0), adjusted);
}

template <class T>
T integer_remainder(T x, T y) {
  if constexpr (kNarrowInteger<T>) {
    // r = x - floor(x / y) * y, every term an exact integer in double (|q * y| < 2^33)
    const double xd = static_cast<double>(x), yd = static_cast<double>(y);
    return to_integer<T>(xd - floor_of(xd / yd) * yd);
  } else {
    if constexpr (std::is_signed_v<T>)
      if (y == -1) return T(0);
    const T r = static_cast<T>(x % y);
    return (std::is_signed_v<T> && r != 0 && ((r < 0) != (y < 0))) ? static_cast<T>(r + y) : r;
  }
}

// fmod (float only) and remainder (floats and integers; an integer divisor 0 gives 0).
template <bool kPython>
struct Modulo : SameType {
  template <class T> static constexpr bool takes = kPython ? kNumber<T> : kFloat<T>;

  template <class T>
  static T finish(T r, T y) {
    if constexpr (kPython) return remainder_from_fmod(r, y);
    else return r;
  }

  template <class T>
  PTO_SIMD_CLONES static void apply_block(T* __restrict out, const T* __restrict x, const T* __restrict y, int64_t m) {
    if constexpr (std::is_same_v<T, float>) {
      int64_t slow = 0;
      for (int64_t i = 0; i < m; ++i) {
        const bool fast = fmod_fast(x[i], y[i]);
        slow += !fast;
        out[i] = finish(fmod_fast_value(x[i], y[i]), y[i]);
      }
      if (slow)
        for (int64_t i = 0; i < m; ++i)
          if (!fmod_fast(x[i], y[i])) out[i] = finish(std::fmod(x[i], y[i]), y[i]);
    } else if constexpr (std::is_same_v<T, double>) {
      for (int64_t i = 0; i < m; ++i) out[i] = finish(std::fmod(x[i], y[i]), y[i]);
    } else {
      for (int64_t i = 0; i < m; ++i) {
        const bool zero = y[i] == 0;
        const T r = integer_remainder(x[i], pick(zero, T(1), y[i]));
        out[i] = pick(zero, T(0), r);
      }
    }
  }
};
using Remainder = Modulo<true>;
using FMod = Modulo<false>;

// ---- powers -------------------------------------------------------------------------------------

// |x|^y for finite nonzero float x, in double: log2|x| = e + log2(z) with z in [0.7, 1.4) from
// the bits of |x| as a double (fp32 subnormals are normal there), log(z) = 2 atanh(s),
// s = (z - 1) / (z + 1) (|s| < 0.18: six terms, 2^-34), then 2^t = 2^n * 2^f, f in [-1/2, 1/2]
// (degree 8, 2^-31). The double result is within ~2^-28 of the exact power at the extremes of
// fp32's range (far closer for moderate results), so its one rounding to fp32 is never more than
// 1 ulp off, and the correctly rounded result except near a tie. Integer parts go through the bits
// of doubles (no int64 <-> double conversions, which AVX2 lacks).
inline double pow_magnitude(float x, float y) {
  constexpr double kShifter = 0x1.8p52;  // x + kShifter holds round(x) in its low bits
  const uint64_t bits = std::bit_cast<uint64_t>(static_cast<double>(std::fabs(x)));
  const uint64_t offset = bits - 0x3FE6666666666666u;  // 0.7
  const double zd = std::bit_cast<double>(bits - (offset & 0xFFF0000000000000u));
  // e = offset >> 52 as a signed value (flip the sign bit, shift, subtract 2048), as a double
  const uint64_t e_biased = (offset ^ 0x8000000000000000u) >> 52;
  const double ed = std::bit_cast<double>(e_biased + std::bit_cast<uint64_t>(kShifter) - 2048) - kShifter;
  const double s = (zd - 1.0) / (zd + 1.0);
  const double s2 = s * s;
  double p = 1.0 / 11;
  p = p * s2 + 1.0 / 9;
  p = p * s2 + 1.0 / 7;
  p = p * s2 + 1.0 / 5;
  p = p * s2 + 1.0 / 3;
  p = p * s2 + 1.0;
  constexpr double kTwoOverLn2 = 2.885390081777926814719849362;  // 2 / ln 2
  const double log2x = ed + s * p * kTwoOverLn2;
  // t clamped to [-256, 256] (past fp32's range either way; NaN stays NaN), selected on the bits:
  // a compare-and-branch would let the compiler split the loop and stop vectorising it
  const double product = static_cast<double>(y) * log2x;
  const uint64_t too_big = 0 - static_cast<uint64_t>(std::fabs(product) > 256.0);
  const double t = std::bit_cast<double>((std::bit_cast<uint64_t>(product) & ~too_big) |
                                         (std::bit_cast<uint64_t>(std::copysign(256.0, product)) & too_big));
  // n = round(t), from the bits of t + kShifter
  const double shifted = t + kShifter;
  const double n = shifted - kShifter;
  const double f = t - n;
  const int64_t ni = std::bit_cast<int64_t>(shifted) - std::bit_cast<int64_t>(kShifter);
  const double scale = std::bit_cast<double>(static_cast<uint64_t>(ni + 1023) << 52);
  // 2^f = sum (f ln 2)^k / k!, k = 0..8
  constexpr double c[9] = {1.0,
                            0.6931471805599453094172321,
                            0.2402265069591007123335512,
                            0.0555041086648215799531422,
                            0.0096181291076284771619790,
                            0.0013333558146428443423412,
                            0.0001540353039338160995942,
                            0.0000152527338040598402800,
                            0.0000013215486790144309488};
  double q = c[8];
  for (int k = 7; k >= 0; --k) q = q * f + c[k];
  return q * scale;
}

// Is y an integer, and an odd one? (inf counts as an even integer, NaN as no integer)
inline bool is_integer_valued(float y) { return std::nearbyint(y) == y; }
inline bool is_odd_integer(float y) { return is_integer_valued(y) & !is_integer_valued(y * 0.5f); }

// pow of floats (docs/ops/pow.md): |x|^y accurately, with the device's rules for signs and
// special values: x < 0 with an odd integer y negates, x < 0 finite with a non-integer y is NaN,
// y == 0 or x == 1 gives 1, x == -1 with |y| infinite gives 1. fp64 (cpu only) is libm's pow.
struct PowFloat : SameType {
  template <class T> static constexpr bool compute_bound = true;  // no streamed output (ew::Rows::kStreams)
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x, T y) {
    if constexpr (std::is_same_v<T, double>) {
      return std::pow(x, y);
    } else {
      constexpr float inf = std::numeric_limits<float>::infinity();
      const float nan = std::numeric_limits<float>::quiet_NaN();
      const float ax = std::fabs(x);
      const bool integral = is_integer_valued(y);
      const bool negate = (x < 0) & integral & !is_integer_valued(y * 0.5f);  // an odd power of x < 0
      // where a rule decides: 1, NaN, or a zero / infinite base (0 or inf by y's sign, signed)
      const bool one = (y == 0) | (x == 1) | ((x == -1) & (std::fabs(y) == inf));
      const bool invalid = (x != x) | (y != y) | ((x < 0) & (ax < inf) & !integral);
      const bool edge_base = (ax == 0) | (ax == inf);
      const float edge = (y > 0) == (ax == 0) ? 0.0f : inf;
      const float ruled = one ? 1.0f : (invalid ? nan : (negate ? -edge : edge));
      const float magnitude = static_cast<float>(pow_magnitude(x, y));
      const float signed_power = std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) ^
                                                      (static_cast<uint32_t>(negate) << 31));
      return pick(one | invalid | edge_base, ruled, signed_power);
    }
  }
};

// Integer powers with wrapping products (two's complement); negative exponents give 1 for x == 1,
// +-1 for x == -1 and 0 otherwise (the integer part of 1 / x^|y|).
struct PowInteger : SameType {
  template <class T> static constexpr bool takes = kInteger<T>;
  template <class T> static T apply(T x, T y) {
    if constexpr (std::is_signed_v<T>)
      if (y < 0) return x == 1 ? T(1) : (x == -1 ? ((y & 1) ? T(-1) : T(1)) : T(0));
    using W = Wide<T>;
    W result = 1, base = static_cast<W>(x);
    for (std::make_unsigned_t<T> e = static_cast<std::make_unsigned_t<T>>(y); e; e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    return static_cast<T>(result);
  }
};

// An unsigned tensor to a negative integer power: 1 for x == 1, else 0.
struct PowNegativeUnsigned : SameType {
  template <class T> static constexpr bool takes = std::is_unsigned_v<T> && !std::is_same_v<T, bool>;
  template <class T> static T apply(T x) { return x == 1 ? T(1) : T(0); }
};

// pow with the scalar exponents the device rewrites (docs/ops/pow.md), one rounding per step.
struct PowOne : SameType {  // |exponent| < 1e-9: ones
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T) { return T(1); }
};
struct PowSquare : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x) { return x * x; }
};
struct PowCube : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x) { return (x * x) * x; }
};
struct PowInverse : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x) { return T(1) / x; }
};
struct PowInverseSquare : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x) { return T(1) / (x * x); }
};
struct PowInverseSqrt : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x) { return T(1) / std::sqrt(x); }
};

// ---- atan2 and hypot ----------------------------------------------------------------------------

// The device's fp32 atan2 (docs/ops/atan2.md), step for step: q = y / x (1 where y == x, -1
// where -y == x), atan(q) by a degree-15 odd polynomial on min(|q|, 1/|q|), the quadrant from x's
// sign and y's sign bit, x == 0 giving +-pi/2 or 0, NaN in either giving NaN. fp64: libm's atan2.
struct Atan2 : SameType {
  template <class T> static constexpr bool compute_bound = true;  // no streamed output (ew::Rows::kStreams)
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T y, T x) {
    if constexpr (std::is_same_v<T, double>) {
      return std::atan2(y, x);
    } else {
      constexpr float kPi = 3.14159265358979323f, kHalfPi = 1.570796326794896619f;
      constexpr float c[8] = {-0.333329409f, 0.199887753f, -0.141718030f, 0.105184801f,
                              -0.0725297481f, 0.0398497507f, -0.0143969795f, 0.00245002890f};
      float q = y / x;
      q = pick(y == x, 1.0f, q);
      q = pick(-y == x, -1.0f, q);
      const float a = std::fabs(q);
      const bool outside = a > 1.0f;
      const float r = pick(outside, 1.0f / a, a);
      const float s = r * r;
      float p = s * c[7];
      p = p + c[6];
      for (int i = 5; i >= 0; --i) {
        p = p * s;
        p = p + c[i];
      }
      float t = p * s;
      t = t * r;
      t = t + r;
      t = pick(outside, -t + kHalfPi, t);
      t = pick(q >= 0, t, -t);
      const float shifted = pick(!std::signbit(y), t + kPi, t - kPi);
      float out = pick(x < 0, shifted, t);
      const float on_axis = y != 0 ? (y > 0 ? kHalfPi : -kHalfPi) : 0.0f;
      out = pick(x != 0, out, on_axis);
      return pick((y != y) | (x != x), std::numeric_limits<float>::quiet_NaN(), out);
    }
  }
};

// The device's fp32 hypot: M = max(|x|, |y|) + 1e-9, r = min / M, M * sqrt(r * r + 1), one fp32
// rounding per step (so hypot(0, 0) = 1e-9 and hypot(inf, inf) = NaN, as on the device). fp64:
// libm's hypot.
struct HypotScaled : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x, T y) {
    if constexpr (std::is_same_v<T, double>) {
      return std::hypot(x, y);
    } else {
      const float a = std::fabs(x), b = std::fabs(y);
      const float big = max_or_nan(a, b) + 1e-9f;
      float r = min_or_nan(a, b) / big;
      r = r * r;
      r = r + 1.0f;
      r = std::sqrt(r);
      return big * r;
    }
  }
};

// fp16 / bf16 hypot on the device: sqrt(x * x + y * y) in fp32 (no scaling), rounded once more to
// the tensor's dtype by the store.
struct HypotWidened : SameType {
  template <class T> static constexpr bool takes = std::is_same_v<T, float>;
  static float apply(float x, float y) { return std::sqrt(x * x + y * y); }
};

// ---- gcd, bitwise and logical ops ---------------------------------------------------------------

// gcd of the magnitudes, as T: gcd(x, 0) = |x|, gcd(0, 0) = 0; |min| wraps to min. Up to 32 bits:
// Euclid's steps in double (every value an exact integer below 2^32, each quotient exact) run over
// the whole block in lock step, a vectorised pass per step, until every pair is done. 64 bits:
// binary gcd per element.
struct Gcd : SameType {
  template <class T> static constexpr bool takes = kInteger<T>;

  template <class T>
  static auto magnitude(T v) {
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return v < 0 ? U(0) - static_cast<U>(v) : static_cast<U>(v);
  }

  template <class T>
  static T binary_gcd(T x, T y) {
    auto a = magnitude(x), b = magnitude(y);
    if (a == 0 || b == 0) return static_cast<T>(a | b);
    const int shift = std::countr_zero(a | b);
    a >>= std::countr_zero(a);
    do {
      b >>= std::countr_zero(b);
      if (a > b) std::swap(a, b);
      b -= a;
    } while (b != 0);
    return static_cast<T>(a << shift);
  }

  template <class T>
  PTO_SIMD_CLONES static void apply_block(T* __restrict out, const T* __restrict x, const T* __restrict y, int64_t m) {
    if constexpr (kNarrowInteger<T>) {
      alignas(64) double a[ew::kBlock], b[ew::kBlock];
      for (int64_t i = 0; i < m; ++i) {
        a[i] = static_cast<double>(magnitude(x[i]));
        b[i] = static_cast<double>(magnitude(y[i]));
      }
      for (int64_t live = m; live > 0;) {  // (a, b) = (b, a mod b) while b != 0
        live = 0;
        for (int64_t i = 0; i < m; ++i) {
          const bool step = b[i] != 0;
          const double d = pick(step, b[i], 1.0);
          const double r = a[i] - trunc_of(a[i] / d) * d;
          a[i] = pick(step, b[i], a[i]);
          b[i] = pick(step, r, 0.0);
          live += step;
        }
      }
      for (int64_t i = 0; i < m; ++i) out[i] = to_integer<T>(a[i]);
    } else {
      for (int64_t i = 0; i < m; ++i) out[i] = binary_gcd(x[i], y[i]);
    }
  }
};

template <class T>
inline constexpr bool kBits = kInteger<T> || std::is_same_v<T, bool>;

struct BitwiseAnd : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = kBits<T>;
  template <class T> static T apply(T a, T b) { return static_cast<T>(a & b); }
};
struct BitwiseOr : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = kBits<T>;
  template <class T> static T apply(T a, T b) { return static_cast<T>(a | b); }
};
struct BitwiseXor : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = kBits<T>;
  template <class T> static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};

// Shift counts below 0 or above the bit width W are W (the device's rule); a shift by W gives 0
// to the left and the sign fill to the right (arithmetic for signed types, as torch).
template <class T>
inline constexpr T kWidth = static_cast<T>(8 * sizeof(T));
template <class T>
T shift_count(T c) {
  if constexpr (std::is_signed_v<T>) return (c < 0 || c > kWidth<T>) ? kWidth<T> : c;
  else return c > kWidth<T> ? kWidth<T> : c;
}

// Bytes have no per-lane shift instruction (x86 shifts lanes of 16 bits and wider), and widening
// them to the 32-bit lanes that have one costs 4x: a byte's shift by n in [0, 8] is composed of
// shifts by 4, 2 and 1 picked by n's bits (16-bit shifts masked to bytes), n = 8 giving 0.
template <bool kLeft, int S>
uint8_t shift_by(uint8_t v) { return kLeft ? static_cast<uint8_t>(v << S) : static_cast<uint8_t>(v >> S); }
template <bool kLeft>
uint8_t barrel_shift(uint8_t v, uint8_t n) {
  v = pick((n & 4) != 0, shift_by<kLeft, 4>(v), v);
  v = pick((n & 2) != 0, shift_by<kLeft, 2>(v), v);
  v = pick((n & 1) != 0, shift_by<kLeft, 1>(v), v);
  return pick((n & 8) != 0, uint8_t(0), v);
}

struct ShiftLeft : SameType {
  template <class T> static constexpr bool takes = kInteger<T>;
  template <class T> static T apply(T a, T c) {
    const T n = shift_count(c);
    if constexpr (sizeof(T) == 1) {
      return static_cast<T>(barrel_shift<true>(static_cast<uint8_t>(a), static_cast<uint8_t>(n)));
    } else {
      const T low = n == kWidth<T> ? T(0) : n;  // a shift by W is computed as 0, then replaced
      const T shifted = static_cast<T>(static_cast<Wide<T>>(a) << low);
      return n == kWidth<T> ? T(0) : shifted;
    }
  }
};
struct ShiftRight : SameType {
  template <class T> static constexpr bool takes = kInteger<T>;
  template <class T> static T apply(T a, T c) {
    const T n = shift_count(c);
    if constexpr (sizeof(T) == 1) {
      // arithmetic shifts as logical ones of the value with its sign folded away (below)
      const uint8_t sign = std::is_signed_v<T> && a < 0 ? 0xFF : 0;
      const uint8_t folded = static_cast<uint8_t>(static_cast<uint8_t>(a) ^ sign);
      return static_cast<T>(barrel_shift<false>(folded, static_cast<uint8_t>(n)) ^ sign);
    } else if constexpr (std::is_signed_v<T>) {
      // arithmetic shift as a logical one of the value with its sign folded away (vectorises for
      // every width); a shift by W is one by W - 1, which leaves the sign fill
      const T k = static_cast<T>(n - (n == kWidth<T>));
      const Wide<T> sign = a < 0 ? ~Wide<T>(0) : Wide<T>(0);
      return static_cast<T>(((static_cast<Wide<T>>(a) ^ sign) >> k) ^ sign);
    } else {
      const T low = n == kWidth<T> ? T(0) : n;
      const T shifted = static_cast<T>(a >> low);
      return n == kWidth<T> ? T(0) : shifted;
    }
  }
};

// Nonzero is true; NaN is nonzero (true), -0.0 is zero.
struct LogicalAnd : Predicate {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a, T b) { return (a != T(0)) & (b != T(0)); }
};

// ---- clip, axpy, prelu, where -------------------------------------------------------------------

// max(x, lo), min(x, hi) and min(max(x, lo), hi) with NaN propagating (maximum's and minimum's
// rules): lo > hi gives hi.
struct ClipBelow : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T x, T lo) { return max_or_nan(x, lo); }
};
struct ClipAbove : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T x, T hi) { return min_or_nan(x, hi); }
};
struct Clip : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T x, T lo, T hi) { return min_or_nan(max_or_nan(x, lo), hi); }
};

// y + alpha * x, two roundings in the compute type (no fused multiply-add).
struct Axpy : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T y, T x, T alpha) {
    const T scaled = alpha * x;
    return y + scaled;
  }
};

// x itself (clip without bounds: a copy).
struct Copy : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = true;
  template <class T> static T apply(T x) { return x; }
};

// x where x >= 0, else slope * x (prelu's per-channel weight, lrelu's negative_slope).
struct LeakyRelu : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x, T slope) { return pick(x >= 0, x, slope * x); }
};

// condition ? a : b on the values' bits (unsigned types of their width): exact for every dtype.
struct Select : SameType {
  template <class T> static constexpr bool takes = std::is_unsigned_v<T> && !std::is_same_v<T, bool>;
  template <class T> static T apply(T condition, T a, T b) { return condition != 0 ? a : b; }
};

}  // namespace pto::kernels::binary
