// fp16 blocks with the CPU's conversion instructions (vcvtph2ps / vcvtps2ph, round to nearest
// even); the compiler does not vectorise _Float16 conversions itself.
#include "core/half.h"

#include "copy/simd.h"

#if PTO_X86
// GCC 12's avx512fintrin.h warns of its own undefined-vector idiom (_mm512_undefined_*) when inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#endif

namespace pto::half {
namespace {

void widen_scalar(const fp16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = widen(src[i]);
}
void narrow_scalar(const float* src, fp16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = to_fp16(src[i]);
}

#if PTO_X86
PTO_TARGET_F16C void widen_f16c(const fp16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  widen_scalar(src + i, dst + i, n - i);
}
PTO_TARGET_F16C void narrow_f16c(const float* src, fp16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  narrow_scalar(src + i, dst + i, n - i);
}
PTO_TARGET_AVX512 void widen_avx512(const fp16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
  widen_scalar(src + i, dst + i, n - i);
}
PTO_TARGET_AVX512 void narrow_avx512(const float* src, fp16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  narrow_scalar(src + i, dst + i, n - i);
}
#endif

}  // namespace

void widen(const fp16_t* src, float* dst, int64_t n) {
#if PTO_X86
  switch (kernels::kernel_tuning().isa) {
    case kernels::Isa::Avx512: return widen_avx512(src, dst, n);
    case kernels::Isa::Avx2: if (__builtin_cpu_supports("f16c")) return widen_f16c(src, dst, n); break;
    default: break;
  }
#endif
  widen_scalar(src, dst, n);
}

void narrow(const float* src, fp16_t* dst, int64_t n) {
#if PTO_X86
  switch (kernels::kernel_tuning().isa) {
    case kernels::Isa::Avx512: return narrow_avx512(src, dst, n);
    case kernels::Isa::Avx2: if (__builtin_cpu_supports("f16c")) return narrow_f16c(src, dst, n); break;
    default: break;
  }
#endif
  narrow_scalar(src, dst, n);
}

}  // namespace pto::half
