// fp16 / bf16 lanes widened to fp32 and narrowed back, one register at a time: the block conversions
// of core/half.cpp and the elementwise engine's fused rows (docs/kernels.md#fused-half-rows), which
// convert a register of lanes, apply the op and store it without an fp32 buffer in between.
// Bit-identical to the element functions of core/half.h (round to nearest even, bf16's NaN quieted).
#pragma once
#include <cstdint>
#include <type_traits>

#include "copy/simd.h"
#include "core/half.h"

#if PTO_X86
// GCC 12's avx512fintrin.h warns of its own undefined-vector idiom (_mm512_undefined_*) when inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace pto::half::lanes {

// bf16 widens by a shift, which the compiler vectorises in any build.
struct Bf16 {
  static constexpr int kLanes = 16;
  [[gnu::always_inline]] static inline void widen(const bf16_t* src, float* dst) {
    for (int l = 0; l < kLanes; ++l) dst[l] = half::widen(src[l]);
  }
};

#if PTO_X86
// The conversion instructions (GCC 12 does not vectorise _Float16 casts).
struct Avx512 {
  using Storage = fp16_t;
  static constexpr int kLanes = 16;
  static constexpr bool kZmm = true;  // one AVX-512 register of lanes
  // A register's conversions, for kernels that keep their lanes in registers (softmax's rows).
  PTO_TARGET_AVX512 static inline __m512 widened(__m256i codes) { return _mm512_cvtph_ps(codes); }
  PTO_TARGET_AVX512 static inline __m256i narrowed(__m512 v) { return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); }
  // Lane by lane rather than one store: after a vector store into the lanes, GCC 12 left the loop
  // that applies a functor with selects (clip, maximum) unvectorised.
  PTO_TARGET_AVX512 static inline void widen(const fp16_t* src, float* dst) {
    const __m512 lanes = widened(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
#pragma GCC unroll 0
    for (int l = 0; l < kLanes; ++l) dst[l] = lanes[l];
  }
  PTO_TARGET_AVX512 static inline void narrow(const float* src, fp16_t* dst) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), narrowed(_mm512_loadu_ps(src)));
  }
};
struct F16c {
  using Storage = fp16_t;
  static constexpr int kLanes = 8;
  PTO_TARGET_F16C static inline void widen(const fp16_t* src, float* dst) {
    _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src))));
  }
  PTO_TARGET_F16C static inline void narrow(const float* src, fp16_t* dst) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_cvtps_ph(_mm256_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
  }
};
// 16 lanes in two AVX2 registers with F16C's conversions, for the fused rows: over 8 lanes GCC 12 left
// some functors' steps (maximum) partly scalar. Lane by lane, as Avx512::widen.
struct F16cPair {
  using Storage = fp16_t;
  static constexpr int kLanes = 16;
  static constexpr bool kZmm = false;
  PTO_TARGET_F16C static inline void widen(const fp16_t* src, float* dst) {
    const __m256 low = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
    const __m256 high = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 8)));
#pragma GCC unroll 0
    for (int l = 0; l < 8; ++l) dst[l] = low[l];
#pragma GCC unroll 0
    for (int l = 0; l < 8; ++l) dst[8 + l] = high[l];
  }
  PTO_TARGET_F16C static inline void narrow(const float* src, fp16_t* dst) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_cvtps_ph(_mm256_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 8), _mm256_cvtps_ph(_mm256_loadu_ps(src + 8), _MM_FROUND_TO_NEAREST_INT));
  }
};
// bf16 in two AVX2 registers. Widening puts each element in the upper half of a zero (one unpack per
// register), which orders the lanes 0-3, 8-11 | 4-7, 12-15 (the unpacks work per 128-bit half);
// narrowing is Bf16Avx512's integer rounding, and packing the two registers' 16-bit results per half
// puts that order back. The functor works lane by lane, so the order in between does not matter.
struct Bf16Avx2 {
  using Storage = bf16_t;
  static constexpr int kLanes = 16;
  static constexpr bool kZmm = false;
  PTO_TARGET_AVX2 static inline void widen(const bf16_t* src, float* dst) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)), zero = _mm256_setzero_si256();
    const __m256 low = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, bits));
    const __m256 high = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, bits));
#pragma GCC unroll 0
    for (int l = 0; l < 8; ++l) dst[l] = low[l];
#pragma GCC unroll 0
    for (int l = 0; l < 8; ++l) dst[8 + l] = high[l];
  }
  PTO_TARGET_AVX2 static inline __m256i rounded(const float* src) {
    const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(src));
    const __m256i high = _mm256_srli_epi32(u, 16);
    const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), _mm256_and_si256(high, _mm256_set1_epi32(1)));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF)), _mm256_set1_epi32(0x7F800000));
    return _mm256_blendv_epi8(_mm256_srli_epi32(_mm256_add_epi32(u, bias), 16), _mm256_or_si256(high, _mm256_set1_epi32(0x40)), nan);
  }
  PTO_TARGET_AVX2 static inline void narrow(const float* src, bf16_t* dst) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_packus_epi32(rounded(src), rounded(src + 8)));  // 16-bit values: packus keeps them
  }
};
// bf16 in AVX-512 registers: a shift widens; narrowing is half::to_bf16's integer rounding a
// register at a time (vcvtneps2bf16 would treat subnormal inputs as zero, so it is not used).
struct Bf16Avx512 {
  using Storage = bf16_t;
  static constexpr int kLanes = 16;
  static constexpr bool kZmm = true;
  PTO_TARGET_AVX512 static inline __m512 widened(__m256i codes) {  // a register's, as Avx512::widened
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(codes), 16));
  }
  PTO_TARGET_AVX512 static inline void widen(const bf16_t* src, float* dst) {
    const __m512 lanes = widened(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
#pragma GCC unroll 0
    for (int l = 0; l < kLanes; ++l) dst[l] = lanes[l];  // lane by lane: see Avx512::widen
  }
  PTO_TARGET_AVX512 static inline void narrow(const float* src, bf16_t* dst) {
    const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(src));
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i bias = _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), _mm512_and_si512(high, _mm512_set1_epi32(1)));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                                  _mm512_set1_epi32(0x7F800000));
    const __m512i bits = _mm512_mask_or_epi32(rounded, nan, high, _mm512_set1_epi32(0x40));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_cvtepi32_epi16(bits));
  }
};

// 16 fp16 / bf16 codes from src with their sign bit flipped (neg) or cleared (abs), into dst: what
// widening to fp32, the sign op and the rounding back give, a NaN quieted as that rounding quiets it.
template <class Storage>
PTO_TARGET_AVX2 inline void sign_codes(bool flip, const Storage* src, Storage* dst) {
  constexpr bool kBf16 = std::is_same_v<Storage, bf16_t>;
  const __m256i codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
  const __m256i magnitude = _mm256_and_si256(codes, _mm256_set1_epi16(0x7FFF));
  const __m256i signed_codes = flip ? _mm256_xor_si256(codes, _mm256_set1_epi16(int16_t(0x8000))) : magnitude;
  // NaN: a magnitude above infinity's code (both below 0x8000, so the signed compare holds)
  const __m256i nan = _mm256_cmpgt_epi16(magnitude, _mm256_set1_epi16(kBf16 ? 0x7F80 : 0x7C00));
  const __m256i quiet = _mm256_and_si256(nan, _mm256_set1_epi16(kBf16 ? 0x0040 : 0x0200));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm256_or_si256(signed_codes, quiet));
}
#endif

}  // namespace pto::half::lanes
