// The narrow float formats' encoders from float32 bits, written once for the scalar conversions
// (core/dtype.cpp) and the vectorised cast kernels (kernels/cast.cpp): branch-free, so a loop
// over them vectorises, with the rounding and the saturation as template parameters.
#pragma once
#include <cstdint>

#include "ptocpu/dtype.h"

namespace pto::minifloat {

// What a format does with values it cannot hold.
enum class Specials : uint8_t {
  Ieee,  // inf at the top exponent (mantissa 0), NaN above it
  Fn,    // E4M3FN: no inf, S.1111.111 is NaN
  None,  // the 4-bit floats: no inf, no NaN; everything saturates, NaN gives nan_code (no sign)
};

// A sign / exponent / mantissa format: code (s, e, m) is (-1)^s * m * 2^(1-bias-M) for e = 0 and
// (-1)^s * (2^M + m) * 2^(e-bias-M) otherwise.
struct Format {
  int E, M, bias;
  uint32_t max_finite;  // the largest finite magnitude's code
  uint32_t inf_code;    // Ieee
  uint32_t nan_code;    // the NaN written (sign bit added unless Specials::None)
  Specials specials;
  // fp16, bf16: a NaN keeps the float32 NaN's sign and top payload bits, quieted (as the CPU's
  // conversion instructions do); the others write nan_code.
  bool nan_keeps_payload = false;
};

inline constexpr Format kFp16{5, 10, 15, 0x7BFF, 0x7C00, 0x7E00, Specials::Ieee, true};
inline constexpr Format kBf16{8, 7, 127, 0x7F7F, 0x7F80, 0x7FC0, Specials::Ieee, true};
inline constexpr Format kFp8E4M3{4, 3, 7, 0x7E, 0x7F, 0x7F, Specials::Fn};
inline constexpr Format kFp8E5M2{5, 2, 15, 0x7B, 0x7C, 0x7E, Specials::Ieee};
inline constexpr Format kFp4E2M1{2, 1, 1, 0x7, 0x7, 0x7, Specials::None};
inline constexpr Format kFp4E1M2{1, 2, 1, 0x7, 0x7, 0x7, Specials::None};  // also HiFloat4

// Always inlined: a vectorised caller (one clone per ISA) must see the whole body.
#define PTO_MINIFLOAT_INLINE [[gnu::always_inline]] inline

// v >> sh rounded by R (sh >= 1); neg is the value's sign, for the directed roundings.
template <Round R>
PTO_MINIFLOAT_INLINE uint32_t shift_round(uint32_t v, uint32_t sh, uint32_t neg) {
  const uint32_t s = sh > 31 ? 31 : sh;  // v < 2^24: beyond 31 only the rest changes, and it stays v
  const uint32_t kept = v >> s, rest = v & ((1u << s) - 1), half = 1u << (s - 1);
  if constexpr (R == Round::NearestEven) return kept + (rest > half || (rest == half && (kept & 1)));
  else if constexpr (R == Round::NearestAway) return kept + (rest >= half);
  else if constexpr (R == Round::TowardZero) return kept;
  else if constexpr (R == Round::Down) return kept + (neg & (rest != 0));
  else if constexpr (R == Round::Up) return kept + ((neg ^ 1) & (rest != 0));
  else return kept | (rest != 0);  // ToOdd
}

// float32 bits -> the code of F, rounded by R; Sat: overflow and inf give the largest finite value.
template <const Format& F, Round R, bool Sat>
PTO_MINIFLOAT_INLINE uint32_t encode(uint32_t bits) {
  constexpr uint32_t first_normal = 128 - F.bias;  // float32 biased exponent of F's smallest normal
  const uint32_t neg = bits >> 31, abs = bits & 0x7FFFFFFFu, e = abs >> 23;
  const bool normal = e >= first_normal;
  // Normal in F: rebias, then round away the extra mantissa bits (a carry into the exponent is
  // right). Subnormal in F: the significand shifted to F's quantum 2^(1-bias-M).
  uint32_t code;
  if constexpr (R == Round::NearestEven) {
    // The same rounding without a shift per lane: a normal adds half a quantum less one, plus the
    // kept lowest bit. A subnormal of bf16 (first_normal 1: fp32's own subnormals) rounds the same
    // way; one of a narrower F is added to 2^(first_normal + 23 - M - 127), whose fp32 quantum is F's
    // subnormal quantum, so the CPU's addition (round to nearest even) rounds it and the sum's low
    // bits are the code. Only float32 subnormals may meet flush-to-zero there, and they round to
    // zero in such an F anyway.
    constexpr uint32_t sh = 23 - F.M, magic = (first_normal + sh) << 23;
    const uint32_t rebiased = abs - (static_cast<uint32_t>(127 - F.bias) << 23);
    const uint32_t normal_code = (rebiased + ((1u << (sh - 1)) - 1) + ((abs >> sh) & 1)) >> sh;
    if constexpr (first_normal == 1) {
      code = normal_code;
    } else {
      const uint32_t subnormal_code =
          __builtin_bit_cast(uint32_t, __builtin_bit_cast(float, abs) + __builtin_bit_cast(float, magic)) - magic;
      code = normal ? normal_code : subnormal_code;
    }
  } else {
    const uint32_t v = normal ? abs - (static_cast<uint32_t>(127 - F.bias) << 23) : (abs & 0x7FFFFFu) | (e ? 0x800000u : 0);
    const uint32_t sh = normal ? 23 - F.M : 23 - F.M + first_normal - (e ? e : 1);
    code = shift_round<R>(v, sh, neg);
  }
  const bool inf = abs == 0x7F800000u, nan = abs > 0x7F800000u;
  // A finite overflow rounded toward zero stops at the largest value, as IEEE 754 says.
  constexpr bool zero_ward_pos = R == Round::TowardZero || R == Round::ToOdd || R == Round::Down;
  constexpr bool zero_ward_neg = R == Round::TowardZero || R == Round::ToOdd || R == Round::Up;
  const bool toward_zero = !inf && (neg ? zero_ward_neg : zero_ward_pos);
  const uint32_t beyond = Sat || F.specials == Specials::None || toward_zero ? F.max_finite
                          : F.specials == Specials::Ieee                  ? F.inf_code
                                                                          : F.nan_code;
  code = code > F.max_finite ? beyond : code;
  const uint32_t sign = neg << (F.E + F.M);
  if constexpr (F.specials == Specials::None) return nan ? F.nan_code : sign | code;
  else if constexpr (F.nan_keeps_payload)
    return sign | (nan ? F.inf_code | 1u << (F.M - 1) | (abs & 0x7FFFFFu) >> (23 - F.M) : code);
  else return sign | (nan ? F.nan_code : code);
}

// HiFloat8 (docs/dtypes.md#hifloat8): sign, a prefix-coded dot field giving the exponent's width,
// the exponent in sign-magnitude with an implicit leading 1, and 3 / 2 / 1 mantissa bits for
// |exponent| <= 3 / <= 7 / <= 15; below 2^-15 the powers of two 2^-16 .. 2^-22 (dot 0000).
// Rounding to nearest, ties away from zero (its one rounding); 0x00 is zero (no -0), 0x80 NaN,
// S_11_0111_1 inf, 2^15 the largest finite value.
inline constexpr uint32_t kHf8Inf = 0x6F, kHf8MaxFinite = 0x6E, kHf8Nan = 0x80;

template <bool Sat>
PTO_MINIFLOAT_INLINE uint32_t encode_hf8(uint32_t bits) {
  const uint32_t neg = bits >> 31, abs = bits & 0x7FFFFFFFu;
  const int u = static_cast<int>(abs >> 23) - 127;  // unbiased exponent before rounding
  const int a = u < 0 ? -u : u;
  const int mbits = a <= 3 ? 3 : a <= 7 ? 2 : a <= 15 ? 1 : 0;  // 0: the powers of two below 2^-15
  const uint32_t r = (abs + (1u << (22 - mbits))) & ~((1u << (23 - mbits)) - 1);  // ties away
  const int ru = static_cast<int>(r >> 23) - 127;
  const uint32_t m3 = (r >> 20) & 7, s = ru < 0;
  const int ra = ru < 0 ? -ru : ru;
  uint32_t code = ra == 0   ? 0x08u | m3
                  : ra == 1 ? 0x10u | s << 3 | m3
                  : ra <= 3 ? 0x20u | s << 4 | static_cast<uint32_t>(ra - 2) << 3 | m3
                  : ra <= 7 ? 0x40u | s << 4 | static_cast<uint32_t>(ra - 4) << 2 | m3 >> 1
                            : 0x60u | s << 4 | static_cast<uint32_t>(ra - 8) << 1 | m3 >> 2;
  // 2^-22 .. 2^-16: dot 0000 and the exponent + 23; all of [2^-23, 2^-22) is nearer 2^-22 or tied.
  code = ru < -15 ? static_cast<uint32_t>(ru < -22 ? 1 : ru + 23) : code;
  const bool overflow = ru > 15 || (ru == 15 && m3 >= 4);
  code = overflow ? (Sat ? kHf8MaxFinite : kHf8Inf) : code;
  code = u < -23 ? 0u : code;  // below 2^-23 (and zero, float32 subnormals): zero
  code = code ? neg << 7 | code : 0u;
  return abs > 0x7F800000u ? kHf8Nan : code;
}

}  // namespace pto::minifloat
