// cast / astype kernels (kernels/cast.h): rows of the elementwise engine's loop, worked in blocks
// that fit L1. A block is converted by a fast function when the pair has one (a float-valued source
// widened to fp32, then encoded; or an integer loop), else element by element on the exact path.
// Large outputs are written with streaming stores.
#include "kernels/cast.h"

// The float -> integer loops select between converted and clamped values; GCC if-converts (and so
// vectorises) them only when floating-point exceptions may be ignored. ptocpu never reads the
// exception flags, and results do not change.
#pragma GCC optimize("no-trapping-math")

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "copy/simd.h"
#include "copy/stream.h"
#include "core/half.h"
#include "core/minifloat.h"
#include "core/unaligned.h"
#include "kernels/elementwise.h"
#include "ptocpu/parallel.h"

#if PTO_X86
#include <immintrin.h>
#endif

namespace pto::kernels::cast {
namespace {

constexpr int64_t kBlock = 512;

bool integer_valued(DType dt) { return is_integer(dt) || dt == DType::BOOL; }

// ---- the exact path ------------------------------------------------------------------------------

// A float-valued element as double (exact).
double float_value(DType dt, const std::byte* p) {
  switch (dt) {
    case DType::FP64: return load_unaligned<double>(p);
    case DType::FP32: return load_unaligned<float>(p);
    case DType::FP16: case DType::BF16: return code_to_float(dt, load_unaligned<uint16_t>(p));
    default: return byte_code_values(dt)[load_unaligned<uint8_t>(p)];
  }
}

// A NaN element as the float32 NaN the conversion instructions make of it: its sign and top
// payload bits, quieted (fp32 itself unchanged unless `quiet`; bf16 widens bit for bit).
bool is_nan(DType dt, const std::byte* p) { return std::isnan(float_value(dt, p)); }
float nan_of(DType dt, const std::byte* p, bool quiet) {
  switch (dt) {
    case DType::FP32: return std::bit_cast<float>(load_unaligned<uint32_t>(p) | (quiet ? 0x400000u : 0u));
    case DType::FP64: {
      const uint64_t b = load_unaligned<uint64_t>(p);
      return std::bit_cast<float>(static_cast<uint32_t>(b >> 32 & 0x80000000u) | 0x7FC00000u |
                                  static_cast<uint32_t>(b >> 29 & 0x3FFFFFu));
    }
    case DType::FP16: {
      const uint32_t h = load_unaligned<uint16_t>(p);
      return std::bit_cast<float>((h & 0x8000u) << 16 | 0x7FC00000u | (h & 0x3FFu) << 13);
    }
    case DType::BF16: return std::bit_cast<float>(static_cast<uint32_t>(load_unaligned<uint16_t>(p)) << 16 | (quiet ? 0x400000u : 0u));
    default: return byte_code_values(dt)[load_unaligned<uint8_t>(p)];
  }
}

// An integer-valued element (bool, INT4 included).
__int128 int_value(DType dt, const std::byte* p) {
  return visit_dtype(dt, [&](auto tag) -> __int128 {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<S>) return load_unaligned<S>(p);
    else return static_cast<__int128>(byte_code_values(dt)[load_unaligned<uint8_t>(p)]);  // INT4
  });
}

double round_integral(double d, Round r) {
  switch (r) {
    case Round::NearestEven: return std::nearbyint(d);
    case Round::NearestAway: return std::round(d);
    case Round::Down: return std::floor(d);
    case Round::Up: return std::ceil(d);
    case Round::TowardZero: return std::trunc(d);
    case Round::ToOdd: {
      const double t = std::trunc(d);
      return t != d && std::fmod(t, 2.0) == 0 ? t + std::copysign(1.0, d) : t;
    }
  }
  __builtin_unreachable();
}

// double -> float32 rounded by r (NaN is handled before).
float round_to_float(double d, Round r) {
  const double a = std::fabs(d);
  // The float32 magnitudes around |d|: below (rounded toward zero) and above.
  float below = static_cast<float>(a);
  if (static_cast<double>(below) > a) below = std::nextafter(below, 0.0f);
  const bool exact = static_cast<double>(below) == a;
  const float above = exact ? below : std::nextafter(below, std::numeric_limits<float>::infinity());
  const bool neg = std::signbit(d);
  float m = below;
  switch (r) {
    case Round::NearestEven: m = static_cast<float>(a); break;
    case Round::NearestAway: {
      const double next = std::isinf(above) ? 0x1p128 : above;  // inf stands where 2^128 would be
      m = exact || a - below < next - a ? below : above;
      break;
    }
    case Round::Down: m = neg ? above : below; break;
    case Round::Up: m = neg ? below : above; break;
    case Round::TowardZero: m = below; break;
    case Round::ToOdd: m = exact || (std::bit_cast<uint32_t>(below) & 1) ? below : above; break;
  }
  if (std::isinf(a)) m = std::numeric_limits<float>::infinity();
  return neg ? -m : m;
}

// The code of a float dtype (FP64 and FP32 too) for the value v.
void encode_float(double v, DType to, const Rule& rule, std::byte* dst) {
  switch (to) {
    case DType::FP64: return store_unaligned(dst, v);
    case DType::FP32: return store_unaligned(dst, round_to_float(v, rule.round));  // saturation is for narrower floats
    default: break;
  }
  // A float32 that rounds to odd keeps enough of v for one correct rounding to the narrow format.
  const uint32_t code = float_to_code(to, double_to_float_round_odd(v), rule.round, rule.saturate);
  if (dtype_size(to) == 2) store_unaligned(dst, static_cast<uint16_t>(code));
  else store_unaligned(dst, static_cast<uint8_t>(code));
}

// An integer value into an integer dtype: clamped, or its low bits.
void encode_int(__int128 v, DType to, const Rule& rule, std::byte* dst) {
  visit_dtype(to, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_same_v<T, bool>) {
        store_unaligned(dst, static_cast<uint8_t>(v != 0));
      } else {
        if (rule.saturate) v = std::clamp<__int128>(v, std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
        store_unaligned(dst, static_cast<T>(v));
      }
    } else if constexpr (std::is_same_v<T, int4_t>) {
      if (rule.saturate) v = std::clamp<__int128>(v, -8, 7);
      store_unaligned(dst, static_cast<uint8_t>(static_cast<uint64_t>(v) & 0xF));
    }
  });
}

}  // namespace

void convert_element(DType from, const std::byte* src, DType to, std::byte* dst, Rule rule) {
  if (integer_valued(from)) {
    const __int128 v = int_value(from, src);
    if (integer_valued(to)) return encode_int(v, to, rule, dst);
    if (to == DType::FP64) return store_unaligned(dst, static_cast<double>(v));
    return encode_float(int_to_double_round_odd(v), to, rule, dst);
  }
  if (is_nan(from, src)) {
    const float nan = nan_of(from, src, rule.to_integral || (from != to && from != DType::BF16));
    if (to == DType::BOOL) return store_unaligned(dst, uint8_t{1});
    if (integer_valued(to)) return encode_int(0, to, rule, dst);
    if (to == DType::FP64) return store_unaligned(dst, static_cast<double>(nan));
    if (to == DType::FP32) return store_unaligned(dst, nan);
    const uint32_t code = float_to_code(to, nan, rule.round, rule.saturate);
    if (dtype_size(to) == 2) return store_unaligned(dst, static_cast<uint16_t>(code));
    return store_unaligned(dst, static_cast<uint8_t>(code));
  }
  const double d = float_value(from, src);
  if (!integer_valued(to)) {
    if (rule.to_integral && std::isfinite(d)) return encode_float(round_integral(d, rule.round), to, rule, dst);
    return encode_float(d, to, rule, dst);
  }
  if (to == DType::BOOL) return store_unaligned(dst, static_cast<uint8_t>(d != 0));
  // +-inf and values beyond +-2^127 hold the wide integer's extremes: clamped, or their low bits.
  const double r = round_integral(d, rule.round);
  constexpr double kWide = 0x1p127;
  const __int128 wide = r >= kWide ? std::numeric_limits<__int128>::max()
                        : r < -kWide ? std::numeric_limits<__int128>::min()
                                     : static_cast<__int128>(r);
  encode_int(wide, to, rule, dst);
}

namespace {

// ---- the vectorised blocks -----------------------------------------------------------------------

// A float-valued source block -> fp32 (exact).
using WidenFn = void (*)(const std::byte* src, float* dst, int64_t n);
// fp32 -> a target block with the rule's rounding.
using NarrowFn = void (*)(const float* src, std::byte* dst, int64_t n);
// A whole pair in one step (integers).
using DirectFn = void (*)(const std::byte* src, std::byte* dst, int64_t n);

void widen_fp16(const std::byte* src, float* dst, int64_t n) { half::widen(reinterpret_cast<const fp16_t*>(src), dst, n); }

// __builtin_bit_cast, not std::bit_cast: GCC inlines no function of another target into a clone,
// and std::bit_cast<float> also has an out-of-line copy here (convert_element), so the clones
// called it per element (cast of 16M bf16 to fp16: 14 ms; a copy's speed with the builtin).
PTO_SIMD_CLONES void widen_bf16(const std::byte* __restrict src, float* __restrict dst, int64_t n) {
  const auto* s = reinterpret_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = __builtin_bit_cast(float, static_cast<uint32_t>(s[i]) << 16);
}

// The byte formats read through their table of 256 values.
template <DType D>
PTO_SIMD_CLONES void widen_bytes(const std::byte* __restrict src, float* __restrict dst, int64_t n) {
  static const float* const table = byte_code_values(D);
  const auto* s = reinterpret_cast<const uint8_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = table[s[i]];
}

// Integers of at most 16 bits hold fp32 values exactly.
template <class S>
PTO_SIMD_CLONES void widen_int(const std::byte* __restrict src, float* __restrict dst, int64_t n) {
  const auto* s = reinterpret_cast<const S*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
}

#if PTO_X86
// fp8 codes -> fp32 through fp16, whose conversion instruction takes subnormals in stride: the
// code's sign and magnitude bits moved to fp16's are the value times 2^(bias - 15), and one exact
// multiplication scales it back. NaN codes give the table's NaN (a quiet NaN with the code's sign).
template <const minifloat::Format& F>
PTO_TARGET_F16C void widen_fp8_via_half(const std::byte* __restrict src, float* __restrict dst, int64_t n) {
  static_assert(F.E + F.M == 7 && F.E <= 5);
  const auto* s = reinterpret_cast<const uint8_t*>(src);
  const __m256 scale = _mm256_set1_ps(std::ldexp(1.0f, 15 - F.bias));
  const __m256i last_value = _mm256_set1_epi16(F.specials == minifloat::Specials::Ieee ? F.inf_code : F.max_finite);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i code = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
    const __m256i magnitude = _mm256_and_si256(code, _mm256_set1_epi16(0x7F));
    const __m256i sign = _mm256_slli_epi16(_mm256_and_si256(code, _mm256_set1_epi16(0x80)), 8);
    const __m256i half_bits = _mm256_or_si256(sign, _mm256_slli_epi16(magnitude, 10 - F.M));
    __m256 lo = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_castsi256_si128(half_bits)), scale);
    __m256 hi = _mm256_mul_ps(_mm256_cvtph_ps(_mm256_extracti128_si256(half_bits, 1)), scale);
    const __m256i nan = _mm256_cmpgt_epi16(magnitude, last_value);
    if (!_mm256_testz_si256(nan, nan)) {  // rare: a branch, not a blend per register
      const __m256i nan_bits = _mm256_or_si256(sign, _mm256_set1_epi16(0x7FC0));
      const __m256 nan_lo = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(nan_bits)), 16));
      const __m256 nan_hi = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(nan_bits, 1)), 16));
      lo = _mm256_blendv_ps(lo, nan_lo, _mm256_castsi256_ps(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(nan))));
      hi = _mm256_blendv_ps(hi, nan_hi, _mm256_castsi256_ps(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(nan, 1))));
    }
    _mm256_storeu_ps(dst + i, lo);
    _mm256_storeu_ps(dst + i + 8, hi);
  }
  const float* table = byte_code_values(F.E == 4 ? DType::FP8E4M3 : DType::FP8E5M2);
  for (; i < n; ++i) dst[i] = table[s[i]];
}
#endif

// The fp8 formats: through fp16 where the CPU converts fp16 (F16C), else their table.
template <DType D>
WidenFn widen_fp8() {
#if PTO_X86
  const Isa isa = kernel_tuning().isa;
  if (isa == Isa::Avx512 || (isa == Isa::Avx2 && __builtin_cpu_supports("f16c")))
    return D == DType::FP8E4M3 ? widen_fp8_via_half<minifloat::kFp8E4M3> : widen_fp8_via_half<minifloat::kFp8E5M2>;
#endif
  return widen_bytes<D>;
}

WidenFn widen_fn(DType from) {
  switch (from) {
    case DType::FP16: return widen_fp16;
    case DType::BF16: return widen_bf16;
    case DType::FP8E4M3: return widen_fp8<DType::FP8E4M3>();
    case DType::FP8E5M2: return widen_fp8<DType::FP8E5M2>();
    case DType::FP8E8M0: return widen_bytes<DType::FP8E8M0>;
    case DType::HF8: return widen_bytes<DType::HF8>;
    case DType::HF4: return widen_bytes<DType::HF4>;
    case DType::FP4_E2M1: return widen_bytes<DType::FP4_E2M1>;
    case DType::FP4_E1M2: return widen_bytes<DType::FP4_E1M2>;
    case DType::INT4: return widen_bytes<DType::INT4>;
    case DType::INT8: return widen_int<int8_t>;
    case DType::UINT8: case DType::BOOL: return widen_int<uint8_t>;
    case DType::INT16: return widen_int<int16_t>;
    case DType::UINT16: return widen_int<uint16_t>;
    default: return nullptr;  // FP32 is used in place; wider integers and FP64 take the exact path
  }
}

template <const minifloat::Format& F, Round R, bool Sat, class Code>
PTO_SIMD_CLONES void narrow_float(const float* __restrict src, std::byte* __restrict dst, int64_t n) {
  auto* d = reinterpret_cast<Code*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<Code>(minifloat::encode<F, R, Sat>(__builtin_bit_cast(uint32_t, src[i])));
}

template <bool Sat>
PTO_SIMD_CLONES void narrow_hf8(const float* __restrict src, std::byte* __restrict dst, int64_t n) {
  auto* d = reinterpret_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(minifloat::encode_hf8<Sat>(__builtin_bit_cast(uint32_t, src[i])));
}

void narrow_fp16_nearest(const float* src, std::byte* dst, int64_t n) { half::narrow(src, reinterpret_cast<fp16_t*>(dst), n); }

template <Round R>
[[gnu::always_inline]] inline float rounded(float x) {
  if constexpr (R == Round::NearestEven) return std::nearbyint(x);
  else if constexpr (R == Round::Down) return std::floor(x);
  else if constexpr (R == Round::Up) return std::ceil(x);
  else if constexpr (R == Round::TowardZero) return std::trunc(x);
  else if constexpr (R == Round::NearestAway) {
    const float t = std::trunc(x);
    return std::fabs(x - t) >= 0.5f ? t + std::copysign(1.0f, x) : t;
  } else {  // ToOdd
    const float t = std::trunc(x);
    return t != x && t * 0.5f == std::trunc(t * 0.5f) ? t + std::copysign(1.0f, x) : t;
  }
}

// fp32 -> the same dtype rounded to an integral value (inf stays; a NaN comes out quiet with its
// payload, as the exact path gives it: libm and inlined bit tricks differ on signalling NaNs,
// so the quieting is explicit).
template <Round R>
PTO_SIMD_CLONES void integral_fp32(const float* __restrict src, std::byte* __restrict dst, int64_t n) {
  auto* d = reinterpret_cast<float*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    const float x = src[i];
    d[i] = x != x ? x + x : rounded<R>(x);
  }
}

// Whether a rounded value converts through int32 to T's value: inside int32's range (and, saturating
// to an unsigned T, not negative). NaN is not.
template <class T, bool Sat>
[[gnu::always_inline]] inline bool through_int32(float r) {
  return Sat && std::is_unsigned_v<T> ? r >= 0.0f && r < 0x1p31f : std::fabs(r) < 0x1p31f;
}

// The lanes of int32 range converted through int32 (exact there), the others left for a second
// pass; returns whether there are any. GCC vectorises fp32 -> int32 on every target, fp32 -> int64
// only with AVX-512 (fp32 -> int64 of 16M on AVX2: 22 ms, a scalar loop). Whether any lane was
// outside is an OR of the lanes' flags: a count would widen every flag to 64 bits (fp32 -> int16 of
// 16M, 2 threads: 5.3 -> 3.8-4.7 ms).
template <class T, Round R, bool Sat>
PTO_SIMD_CLONES bool float_to_int_int32_range(const float* __restrict src, T* __restrict d, int64_t n) {
  unsigned outside = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float r = rounded<R>(src[i]);
    const bool in = through_int32<T, Sat>(r);
    outside |= !in;
    d[i] = static_cast<T>(static_cast<int32_t>(in ? r : 0.0f));
  }
  return outside != 0;
}

// fp32 -> an integer dtype, saturating (NaN gives 0).
template <class T, Round R>
[[gnu::always_inline]] inline T saturated(float x) {
  constexpr float lo = static_cast<float>(std::numeric_limits<T>::min());
  // Just above the largest value: 2^(bits-1), or 2^bits unsigned (both exact in fp32); and the
  // float below it, the largest that converts.
  constexpr float hi = std::is_signed_v<T> ? -lo : 2.0f * static_cast<float>(std::numeric_limits<T>::max() / 2 + 1);
  const float below_hi = std::nextafter(hi, 0.0f);
  using Wide = std::conditional_t<(sizeof(T) < 4), int32_t, T>;
  const float r = rounded<R>(x);
  const float c = r != r ? 0.0f : r < lo ? lo : r > below_hi ? below_hi : r;
  const T v = static_cast<T>(static_cast<Wide>(c));
  return r >= hi ? std::numeric_limits<T>::max() : v;
}

// Written without branches: the value is clamped before it converts, so the loop vectorises
// (64-bit targets: see float_to_int_int32_range).
template <class T, Round R>
PTO_SIMD_CLONES void float_to_int_saturating_loop(const float* __restrict src, T* __restrict d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = saturated<T, R>(src[i]);
}

template <class T, Round R>
void float_to_int_saturating(const float* src, std::byte* dst, int64_t n) {
  auto* d = reinterpret_cast<T*>(dst);
  if constexpr (sizeof(T) < 8) {
    float_to_int_saturating_loop<T, R>(src, d, n);
  } else if (float_to_int_int32_range<T, R, true>(src, d, n)) {
    for (int64_t i = 0; i < n; ++i)
      if (!through_int32<T, true>(rounded<R>(src[i]))) d[i] = saturated<T, R>(src[i]);
  }
}

// fp32 -> an integer dtype keeping the low bits. Lanes beyond int32's range are fixed after the
// vectorised pass: below 2^63 by the CPU's 64-bit conversion (64-bit targets), else on the exact path.
template <class T, Round R>
void float_to_int_low_bits(const float* src, std::byte* dst, int64_t n) {
  auto* d = reinterpret_cast<T*>(dst);
  if (!float_to_int_int32_range<T, R, false>(src, d, n)) return;
  for (int64_t i = 0; i < n; ++i) {
    const float r = rounded<R>(src[i]);
    if (through_int32<T, false>(r)) continue;
    if (sizeof(T) == 8 && std::fabs(r) < 0x1p63f) d[i] = static_cast<T>(static_cast<int64_t>(r));
    else convert_element(DType::FP32, reinterpret_cast<const std::byte*>(src + i), dtype_of<T>(), dst + i * sizeof(T), {R, false});
  }
}

template <const minifloat::Format& F, class Code, bool Sat>
NarrowFn narrow_float_fn(Round r) {
  switch (r) {
    case Round::NearestEven: return narrow_float<F, Round::NearestEven, Sat, Code>;
    case Round::NearestAway: return narrow_float<F, Round::NearestAway, Sat, Code>;
    case Round::Down: return narrow_float<F, Round::Down, Sat, Code>;
    case Round::Up: return narrow_float<F, Round::Up, Sat, Code>;
    case Round::TowardZero: return narrow_float<F, Round::TowardZero, Sat, Code>;
    case Round::ToOdd: return narrow_float<F, Round::ToOdd, Sat, Code>;
  }
  __builtin_unreachable();
}

template <class T, Round R>
struct Saturating {
  static constexpr NarrowFn fn = float_to_int_saturating<T, R>;
};
template <class T, Round R>
struct LowBits {
  static constexpr NarrowFn fn = float_to_int_low_bits<T, R>;
};
template <class T, Round R>
struct Integral {
  static constexpr NarrowFn fn = integral_fp32<R>;
};

PTO_SIMD_CLONES void copy_fp32(const float* __restrict src, std::byte* __restrict dst, int64_t n) {
  std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
PTO_SIMD_CLONES void to_fp64(const float* __restrict src, std::byte* __restrict dst, int64_t n) {
  auto* d = reinterpret_cast<double*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = src[i];
}

template <template <class, Round> class Kernel, class T>
NarrowFn by_round(Round r) {
  switch (r) {
    case Round::NearestEven: return Kernel<T, Round::NearestEven>::fn;
    case Round::NearestAway: return Kernel<T, Round::NearestAway>::fn;
    case Round::Down: return Kernel<T, Round::Down>::fn;
    case Round::Up: return Kernel<T, Round::Up>::fn;
    case Round::TowardZero: return Kernel<T, Round::TowardZero>::fn;
    case Round::ToOdd: return Kernel<T, Round::ToOdd>::fn;
  }
  __builtin_unreachable();
}

NarrowFn narrow_fn(DType to, const Rule& rule) {
  using namespace minifloat;
  const bool sat = rule.saturate;
  if (rule.to_integral && to != DType::FP32) return nullptr;  // fp16 / bf16 / fp64 to integral values: the exact path
  switch (to) {
    case DType::FP64: return to_fp64;
    case DType::FP32: return rule.to_integral ? by_round<Integral, float>(rule.round) : copy_fp32;
    case DType::FP16:
      if (rule.round == Round::NearestEven && !sat) return narrow_fp16_nearest;
      return sat ? narrow_float_fn<kFp16, uint16_t, true>(rule.round) : narrow_float_fn<kFp16, uint16_t, false>(rule.round);
    case DType::BF16:
      return sat ? narrow_float_fn<kBf16, uint16_t, true>(rule.round) : narrow_float_fn<kBf16, uint16_t, false>(rule.round);
    case DType::FP8E4M3:
      return sat ? narrow_float_fn<kFp8E4M3, uint8_t, true>(rule.round) : narrow_float_fn<kFp8E4M3, uint8_t, false>(rule.round);
    case DType::FP8E5M2:
      return sat ? narrow_float_fn<kFp8E5M2, uint8_t, true>(rule.round) : narrow_float_fn<kFp8E5M2, uint8_t, false>(rule.round);
    case DType::FP4_E2M1: return narrow_float_fn<kFp4E2M1, uint8_t, true>(rule.round);
    case DType::FP4_E1M2: case DType::HF4: return narrow_float_fn<kFp4E1M2, uint8_t, true>(rule.round);
    case DType::HF8: return sat ? narrow_hf8<true> : narrow_hf8<false>;
    case DType::INT8: return sat ? by_round<Saturating, int8_t>(rule.round) : by_round<LowBits, int8_t>(rule.round);
    case DType::UINT8: return sat ? by_round<Saturating, uint8_t>(rule.round) : by_round<LowBits, uint8_t>(rule.round);
    case DType::INT16: return sat ? by_round<Saturating, int16_t>(rule.round) : by_round<LowBits, int16_t>(rule.round);
    case DType::UINT16: return sat ? by_round<Saturating, uint16_t>(rule.round) : by_round<LowBits, uint16_t>(rule.round);
    case DType::INT32: return sat ? by_round<Saturating, int32_t>(rule.round) : by_round<LowBits, int32_t>(rule.round);
    case DType::UINT32: return sat ? by_round<Saturating, uint32_t>(rule.round) : by_round<LowBits, uint32_t>(rule.round);
    case DType::INT64: return sat ? by_round<Saturating, int64_t>(rule.round) : by_round<LowBits, int64_t>(rule.round);
    case DType::UINT64: return sat ? by_round<Saturating, uint64_t>(rule.round) : by_round<LowBits, uint64_t>(rule.round);
    default: return nullptr;  // FP64, BOOL, INT4, FP8E8M0: the exact path
  }
}

// Integer -> integer: clamped or truncated to the low bits.
template <class S, class T, bool Sat>
PTO_SIMD_CLONES void int_to_int(const std::byte* __restrict src, std::byte* __restrict dst, int64_t n) {
  const auto* s = reinterpret_cast<const S*>(src);
  auto* d = reinterpret_cast<T*>(dst);
  constexpr __int128 lo = std::max<__int128>(std::numeric_limits<S>::min(), std::numeric_limits<T>::min());
  constexpr __int128 hi = std::min<__int128>(std::numeric_limits<S>::max(), std::numeric_limits<T>::max());
  for (int64_t i = 0; i < n; ++i) {
    S v = s[i];
    if constexpr (Sat) v = v < static_cast<S>(lo) ? static_cast<S>(lo) : v > static_cast<S>(hi) ? static_cast<S>(hi) : v;
    d[i] = static_cast<T>(v);
  }
}

// 32- and 64-bit integers -> fp32 to nearest even (the CPU's conversion).
template <class S>
PTO_SIMD_CLONES void int_to_fp32(const std::byte* __restrict src, std::byte* __restrict dst, int64_t n) {
  const auto* s = reinterpret_cast<const S*>(src);
  auto* d = reinterpret_cast<float*>(dst);
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);
}

template <class S>
DirectFn int_to_int_fn(DType to, bool sat) {
  return visit_dtype(to, [&](auto tag) -> DirectFn {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<S, bool>)
      return sat ? int_to_int<S, T, true> : int_to_int<S, T, false>;
    return nullptr;
  });
}

DirectFn direct_fn(DType from, DType to, const Rule& rule) {
  return visit_dtype(from, [&](auto tag) -> DirectFn {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<S> && (sizeof(S) >= 4)) {
      if (to == DType::FP32 && rule.round == Round::NearestEven) return int_to_fp32<S>;
    }
    if constexpr (std::is_integral_v<S>) {
      if (integer_valued(to)) return int_to_int_fn<S>(to, rule.saturate);
    }
    return nullptr;
  });
}

// ---- rows ----------------------------------------------------------------------------------------

struct Plan {
  DType from, to;
  Rule rule;
  WidenFn widen = nullptr;   // with narrow: source -> fp32 -> target
  NarrowFn narrow = nullptr;
  DirectFn direct = nullptr;
  bool stream = false;       // large outputs: written past the caches
};

// n elements of `from` -> `to` at dst (contiguous); src contiguous.
void convert_block(const Plan& p, const std::byte* src, std::byte* dst, int64_t n) {
  if (p.direct) return p.direct(src, dst, n);
  if (p.narrow) {
    alignas(64) float wide[kBlock];
    const float* f = reinterpret_cast<const float*>(src);
    if (p.widen) {
      p.widen(src, wide, n);
      f = wide;
    }
    return p.narrow(f, dst, n);
  }
  const int64_t fs = static_cast<int64_t>(dtype_size(p.from)), ts = static_cast<int64_t>(dtype_size(p.to));
  for (int64_t i = 0; i < n; ++i) convert_element(p.from, src + i * fs, p.to, dst + i * ts, p.rule);
}

void convert_row(void* ctx, std::byte* const* ptrs, const int64_t* strides, int64_t n) {
  const Plan& p = *static_cast<const Plan*>(ctx);
  const int64_t fs = static_cast<int64_t>(dtype_size(p.from)), ts = static_cast<int64_t>(dtype_size(p.to));
  alignas(64) std::byte gathered[kBlock * 8], staged[kBlock * 8];
  for (int64_t j = 0; j < n; j += kBlock) {
    const int64_t m = std::min(kBlock, n - j);
    const std::byte* src = ptrs[1] + j * strides[1];
    if (strides[1] != fs) {
      for (int64_t i = 0; i < m; ++i) std::memcpy(gathered + i * fs, src + i * strides[1], fs);
      src = gathered;
    }
    std::byte* dst = ptrs[0] + j * ts;  // out is contiguous
    if (!p.stream) {
      convert_block(p, src, dst, m);
      continue;
    }
    convert_block(p, src, staged, m);
    stream_copy_tuned(dst, staged, m * ts);
  }
  if (p.stream) stream_fence();
}

}  // namespace

void convert(const Tensor& in, const Tensor& out, Rule rule) {
  Plan p{in.dtype(), out.dtype(), rule};
  p.direct = direct_fn(p.from, p.to, rule);
  // Float-valued sources and integers of at most 16 bits hold exact fp32 values: widened, then encoded.
  if (!p.direct && (widen_fn(p.from) != nullptr || p.from == DType::FP32)) {
    p.widen = widen_fn(p.from);
    p.narrow = narrow_fn(p.to, rule);
  }
  p.stream = PTO_HAVE_STREAM_LINES && out.numel() * static_cast<int64_t>(out.itemsize()) >= kernel_tuning().stream_bytes;
  const Tensor* inputs[] = {&in};
  const ew::Loop loop = ew::make_loop(out, inputs, 1);
  ew::run_rows(loop, convert_row, &p);
}

namespace {

// The values of pairs [first, first + count) of a contiguous X2 tensor as fp32 (2 per pair).
void unpack_block(DType dt, const uint8_t* pairs, int64_t count, float* values) {
  const float* table = byte_code_values(dt);
  for (int64_t i = 0; i < count; ++i) {
    values[2 * i] = table[pairs[i] & 0xF];
    values[2 * i + 1] = table[pairs[i] >> 4];
  }
}

}  // namespace

void unpack_pairs(const Tensor& in, const Tensor& out) {
  const Tensor src = in.contiguous();
  const auto* pairs = static_cast<const uint8_t*>(src.data());
  auto* dst = static_cast<std::byte*>(out.data());
  const int64_t ts = static_cast<int64_t>(out.itemsize());
  const NarrowFn narrow = narrow_fn(out.dtype(), Rule{});  // the 4-bit values are exact in every float dtype
  constexpr int64_t kPairs = kBlock / 2;
  parallel_for(src.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
    alignas(64) float values[kBlock];
    for (int64_t b = begin; b < end; b += kPairs) {
      const int64_t count = std::min(kPairs, end - b);
      unpack_block(src.dtype(), pairs + b, count, values);
      if (narrow) {
        narrow(values, dst + 2 * b * ts, 2 * count);
        continue;
      }
      for (int64_t i = 0; i < 2 * count; ++i)
        convert_element(DType::FP32, reinterpret_cast<const std::byte*>(values + i), out.dtype(), dst + (2 * b + i) * ts, Rule{});
    }
  });
}

namespace {

// Code pairs -> bytes, the first code in the low nibble (a loop of its own: written into the caller,
// the byte stores may alias the pointers it reloads, and it ran a byte at a time, 10 ms of 16M).
PTO_SIMD_CLONES void pack_nibbles(const uint8_t* __restrict codes, uint8_t* __restrict pairs, int64_t count) {
  for (int64_t i = 0; i < count; ++i) pairs[i] = static_cast<uint8_t>(codes[2 * i] | codes[2 * i + 1] << 4);
}

}  // namespace

void pack_pairs(const Tensor& in, const Tensor& out) {
  const Tensor src = in.contiguous();
  const auto* values = static_cast<const std::byte*>(src.data());
  auto* pairs = static_cast<uint8_t*>(out.data());
  const DType from = src.dtype();
  const int64_t fs = static_cast<int64_t>(src.itemsize());
  const WidenFn widen = widen_fn(from);
  const NarrowFn encode = out.dtype() == DType::FP4_E2M1X2
                              ? narrow_float<minifloat::kFp4E2M1, Round::NearestEven, true, uint8_t>
                              : narrow_float<minifloat::kFp4E1M2, Round::NearestEven, true, uint8_t>;
  constexpr int64_t kPairs = kBlock / 2;
  parallel_for(out.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
    alignas(64) float wide[kBlock];
    alignas(64) uint8_t codes[kBlock];
    for (int64_t b = begin; b < end; b += kPairs) {
      const int64_t count = std::min(kPairs, end - b);
      const std::byte* v = values + 2 * b * fs;
      const float* f = reinterpret_cast<const float*>(v);
      if (widen) {
        widen(v, wide, 2 * count);
        f = wide;
      } else if (from != DType::FP32) {  // fp64: each value rounded to fp32 by odd first, then once to 4 bits
        for (int64_t i = 0; i < 2 * count; ++i) wide[i] = double_to_float_round_odd(float_value(from, v + i * fs));
        f = wide;
      }
      encode(f, reinterpret_cast<std::byte*>(codes), 2 * count);
      pack_nibbles(codes, pairs + b, count);
    }
  });
}

}  // namespace pto::kernels::cast
