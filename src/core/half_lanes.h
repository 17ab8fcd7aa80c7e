// fp16 / bf16 lanes widened to fp32 and narrowed back in registers: the elementwise engine's
// fused rows (docs/kernels.md#elementwise) convert a few lanes, apply the op and store, where the
// buffered path writes and reads three fp32 buffers per block. Bit-identical to core/half.h.
#pragma once
#include <cstdint>

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

// bf16 is a shift either way; the compiler vectorises these in the function they inline into.
template <int W>
[[gnu::always_inline]] inline void widen_bf16(const bf16_t* src, float* dst) {
  for (int l = 0; l < W; ++l) dst[l] = widen(src[l]);
}
template <int W>
[[gnu::always_inline]] inline void narrow_bf16(const float* src, bf16_t* dst) {
  for (int l = 0; l < W; ++l) dst[l] = to_bf16(src[l]);
}

#if PTO_X86
// fp16 needs the conversion instructions (GCC 12 does not vectorise _Float16 casts).
struct Avx512 {
  static constexpr int kLanes = 16;
  PTO_TARGET_AVX512 static inline void widen(const fp16_t* src, float* dst) {
    _mm512_storeu_ps(dst, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src))));
  }
  PTO_TARGET_AVX512 static inline void narrow(const float* src, fp16_t* dst) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_cvtps_ph(_mm512_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
  }
  [[gnu::always_inline]] static inline void widen(const bf16_t* src, float* dst) { widen_bf16<kLanes>(src, dst); }
  [[gnu::always_inline]] static inline void narrow(const float* src, bf16_t* dst) { narrow_bf16<kLanes>(src, dst); }
};
struct F16c {
  static constexpr int kLanes = 8;
  PTO_TARGET_F16C static inline void widen(const fp16_t* src, float* dst) {
    _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src))));
  }
  PTO_TARGET_F16C static inline void narrow(const float* src, fp16_t* dst) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_cvtps_ph(_mm256_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
  }
  [[gnu::always_inline]] static inline void widen(const bf16_t* src, float* dst) { widen_bf16<kLanes>(src, dst); }
  [[gnu::always_inline]] static inline void narrow(const float* src, bf16_t* dst) { narrow_bf16<kLanes>(src, dst); }
};
#endif

}  // namespace pto::half::lanes
