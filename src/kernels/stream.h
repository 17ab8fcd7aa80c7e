// Streaming (non-temporal) copies of whole 64-byte lines, one per instruction set, shared by the
// kernels that write large outputs past the caches. dst 64-byte aligned (16 for SSE2), n a
// multiple of 64; callers pick the set with kernels::best_isa() and end with stream_fence().
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PTO_HAVE_STREAM_LINES 1

namespace pto::kernels {

inline void stream_lines_sse2(std::byte* dst, const std::byte* src, int64_t n) {
  for (int64_t o = 0; o < n; o += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + o));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + o + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + o + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + o + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + o), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + o + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + o + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + o + 48), d);
  }
}

__attribute__((target("avx2"))) inline void stream_lines_avx2(std::byte* dst, const std::byte* src, int64_t n) {
  for (int64_t o = 0; o < n; o += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + o), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + o + 32), b);
  }
}

__attribute__((target("avx512f"))) inline void stream_lines_avx512(std::byte* dst, const std::byte* src, int64_t n) {
  for (int64_t o = 0; o < n; o += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + o), _mm512_loadu_si512(src + o));
}

// Orders this thread's streaming stores before whatever the caller does next.
inline void stream_fence() { _mm_sfence(); }

}  // namespace pto::kernels
#else
#define PTO_HAVE_STREAM_LINES 0
namespace pto::kernels {
inline void stream_fence() {}
}  // namespace pto::kernels
#endif
