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

void scalar(const fp16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = widen(src[i]);
}
void scalar(const float* src, fp16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = to_fp16(src[i]);
}

#if PTO_X86
// Each build's conversion of one block of kLanes elements, either way.
struct F16c {
  static constexpr int64_t kLanes = 8;
  PTO_TARGET_F16C static void block(const fp16_t* src, float* dst) {
    _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src))));
  }
  PTO_TARGET_F16C static void block(const float* src, fp16_t* dst) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), _mm256_cvtps_ph(_mm256_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
  }
};
struct Avx512 {
  static constexpr int64_t kLanes = 16;
  PTO_TARGET_AVX512 static void block(const fp16_t* src, float* dst) {
    _mm512_storeu_ps(dst, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src))));
  }
  PTO_TARGET_AVX512 static void block(const float* src, fp16_t* dst) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), _mm512_cvtps_ph(_mm512_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
  }
};

// Whole blocks with one build's instructions (inlined into the functions compiled for that
// build), the tail element by element.
template <class Build, class From, class To>
[[gnu::always_inline]] inline void blocks(const From* src, To* dst, int64_t n) {
  int64_t i = 0;
  for (; i + Build::kLanes <= n; i += Build::kLanes) Build::block(src + i, dst + i);
  scalar(src + i, dst + i, n - i);
}
template <class From, class To>
PTO_TARGET_F16C void blocks_f16c(const From* src, To* dst, int64_t n) {
  blocks<F16c>(src, dst, n);
}
template <class From, class To>
PTO_TARGET_AVX512 void blocks_avx512(const From* src, To* dst, int64_t n) {
  blocks<Avx512>(src, dst, n);
}
#endif

// In the best build the CPU runs (kernel_tuning().isa; AVX2 machines need F16C too).
template <class From, class To>
void convert(const From* src, To* dst, int64_t n) {
#if PTO_X86
  switch (kernels::kernel_tuning().isa) {
    case kernels::Isa::Avx512: return blocks_avx512(src, dst, n);
    case kernels::Isa::Avx2: if (__builtin_cpu_supports("f16c")) return blocks_f16c(src, dst, n); break;
    default: break;
  }
#endif
  scalar(src, dst, n);
}

}  // namespace

void widen(const fp16_t* src, float* dst, int64_t n) { convert(src, dst, n); }

void narrow(const float* src, fp16_t* dst, int64_t n) { convert(src, dst, n); }

}  // namespace pto::half
