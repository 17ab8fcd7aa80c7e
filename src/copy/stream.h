// The streaming-copy primitive every kernel shares (docs/kernels.md): copies that write whole
// 64-byte lines with non-temporal stores, so large outputs bypass the caches. Callers choose
// the instruction set from kernel_tuning().isa and end a thread's work with stream_fence().
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "copy/simd.h"

#if PTO_X86
#include <immintrin.h>
#endif

namespace pto::kernels {

#if PTO_X86
#define PTO_HAVE_STREAM_LINES 1

// Whole lines: dst 64-byte aligned (16 for SSE2), n a multiple of 64.
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

PTO_TARGET_AVX2 inline void stream_lines_avx2(std::byte* dst, const std::byte* src, int64_t n) {
  for (int64_t o = 0; o < n; o += 64) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + o + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + o), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + o + 32), b);
  }
}

PTO_TARGET_AVX512 inline void stream_lines_avx512(std::byte* dst, const std::byte* src, int64_t n) {
  for (int64_t o = 0; o < n; o += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + o), _mm512_loadu_si512(src + o));
}

// Orders this thread's streaming stores before whatever the caller does next.
inline void stream_fence() { _mm_sfence(); }

using StreamLinesFn = void (*)(std::byte*, const std::byte*, int64_t);

template <Isa isa>
constexpr StreamLinesFn stream_lines = isa == Isa::Avx512 ? stream_lines_avx512
                                       : isa == Isa::Avx2 ? stream_lines_avx2
                                                          : stream_lines_sse2;

#else
#define PTO_HAVE_STREAM_LINES 0

inline void stream_lines_plain(std::byte* dst, const std::byte* src, int64_t n) { std::memcpy(dst, src, n); }
inline void stream_fence() {}

template <Isa>
constexpr void (*stream_lines)(std::byte*, const std::byte*, int64_t) = stream_lines_plain;
#endif

// dst[0, n) = src[0, n), any alignment: the partial lines at both ends with ordinary stores,
// the whole lines between with isa's streaming stores.
template <Isa isa>
inline void stream_copy(std::byte* dst, const std::byte* src, int64_t n) {
  const int64_t head = std::min<int64_t>(n, (64 - (reinterpret_cast<uintptr_t>(dst) & 63)) & 63);
  if (head) std::memcpy(dst, src, head);
  const int64_t body = (n - head) & ~int64_t(63);
  if (body) stream_lines<isa>(dst + head, src + head, body);
  const int64_t tail = n - head - body;
  if (tail) std::memcpy(dst + head + body, src + head + body, tail);
}

// stream_copy with the instruction set kernel_tuning() allows.
inline void stream_copy_tuned(std::byte* dst, const std::byte* src, int64_t n) {
  switch (kernel_tuning().isa) {
    case Isa::Avx512: return stream_copy<Isa::Avx512>(dst, src, n);
    case Isa::Avx2: return stream_copy<Isa::Avx2>(dst, src, n);
    default: return stream_copy<Isa::Baseline>(dst, src, n);
  }
}

}  // namespace pto::kernels
