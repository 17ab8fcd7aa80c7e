#include "copy/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "copy/simd.h"
#include "copy/stream.h"
#include "ptocpu/dtype.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

struct Dim {
  int64_t size, ds, ss;  // extent, dst stride, src stride (elements)
};

// Every dim kept has size >= 2 and the numel fits int64, so at most 63 dims remain.
constexpr int kMaxDims = 64;

struct Layout {
  std::byte* dst;
  const std::byte* src;
  int64_t item;
  int n = 0;  // dims[0] outermost .. dims[n-1] innermost
  Dim dims[kMaxDims];
};

// Work below this many output bytes stays on the calling thread.
constexpr int64_t kMinChunkBytes = int64_t(64) << 10;

// Dense outputs from kernel_tuning().stream_bytes on are written with streaming stores (short
// rows assembled into whole lines first); smaller ones stay cached for whoever reads them next.
int64_t stream_threshold() { return kernel_tuning().stream_bytes; }

// ------------------------------------------------------------------------------------------
// Row kernels: n elements, dst stride ds, src stride ss. The vectorising compiler turns the
// constant-stride loops into shuffles per target (SSE2 / AVX2 / AVX-512, picked at load time).

using RowFn = void (*)(std::byte* d, int64_t ds, const std::byte* s, int64_t ss, int64_t n);

template <class T>
void row_copy(std::byte* d, int64_t, const std::byte* s, int64_t, int64_t n) {
  std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
}

template <class T>
PTO_SIMD_CLONES void row_reverse(std::byte* d, int64_t, const std::byte* s, int64_t, int64_t n) {
  T* __restrict out = reinterpret_cast<T*>(d);
  const T* __restrict in = reinterpret_cast<const T*>(s);
  for (int64_t i = 0; i < n; ++i) out[i] = in[-i];
}

template <class T, int K>
PTO_SIMD_CLONES void row_stride(std::byte* d, int64_t, const std::byte* s, int64_t, int64_t n) {
  T* __restrict out = reinterpret_cast<T*>(d);
  const T* __restrict in = reinterpret_cast<const T*>(s);
  for (int64_t i = 0; i < n; ++i) out[i] = in[i * K];
}

template <class T>
PTO_SIMD_CLONES void row_fill(std::byte* d, int64_t, const std::byte* s, int64_t, int64_t n) {
  T* __restrict out = reinterpret_cast<T*>(d);
  const T v = *reinterpret_cast<const T*>(s);
  for (int64_t i = 0; i < n; ++i) out[i] = v;
}

template <class T>
PTO_SIMD_CLONES void row_gather(std::byte* d, int64_t, const std::byte* s, int64_t ss, int64_t n) {
  T* __restrict out = reinterpret_cast<T*>(d);
  const T* __restrict in = reinterpret_cast<const T*>(s);
  for (int64_t i = 0; i < n; ++i) out[i] = in[i * ss];
}

template <class T>
void row_scatter(std::byte* d, int64_t ds, const std::byte* s, int64_t ss, int64_t n) {
  T* __restrict out = reinterpret_cast<T*>(d);
  const T* __restrict in = reinterpret_cast<const T*>(s);
  for (int64_t i = 0; i < n; ++i) out[i * ds] = in[i * ss];
}

// `rows` short rows at once (dst rows drow apart, src rows srow apart): per-row calls would
// cost more than the rows themselves.
template <class T>
PTO_SIMD_CLONES void short_rows(std::byte* d, int64_t ds, int64_t drow, const std::byte* s, int64_t ss, int64_t srow,
                                int64_t len, int64_t rows) {
  T* __restrict out = reinterpret_cast<T*>(d);
  const T* __restrict in = reinterpret_cast<const T*>(s);
  for (int64_t r = 0; r < rows; ++r, out += drow, in += srow)
    for (int64_t i = 0; i < len; ++i) out[i * ds] = in[i * ss];
}

// The kernel for a row with dst stride ds and src stride ss.
template <class T>
RowFn pick_row(int64_t ds, int64_t ss) {
  if (ds != 1) return row_scatter<T>;
  switch (ss) {
    case 1: return row_copy<T>;
    case 0: return row_fill<T>;
    case -1: return row_reverse<T>;
    case 2: return row_stride<T, 2>;
    case 3: return row_stride<T, 3>;
    case 4: return row_stride<T, 4>;
    default: return row_gather<T>;
  }
}

RowFn pick_row(int64_t item, int64_t ds, int64_t ss) {
  return visit_width(static_cast<size_t>(item), [&](auto tag) { return pick_row<typename decltype(tag)::type>(ds, ss); });
}

// A tile of a transposing copy, out[j * dj + i] = in[j * sj + i * si] for i < ni <= kTileI,
// j < nj <= kTileJ: the src rows (along j) are read once into an L1 buffer, transposed there,
// and the dst rows (along i, whole cache lines) written once, so no line is fetched twice even
// when power-of-two strides map every row to the same cache set.
constexpr int64_t kTileBytes = 64;  // dst bytes per row of a tile: one cache line
// src elements per row of a tile: 1 KiB, the buffer at most 16 KiB.
constexpr int64_t tile_j(int64_t item) { return std::min<int64_t>(1024 / item, 16384 / kTileBytes); }

template <class T>
PTO_SIMD_CLONES void tile_copy(std::byte* d, int64_t dj, const std::byte* s, int64_t sj, int64_t si, int64_t nj,
                               int64_t ni, bool stream) {
  constexpr int64_t kTileI = kTileBytes / sizeof(T), kTileJ = tile_j(sizeof(T));
  alignas(64) T buf[kTileJ * kTileI];
  const T* __restrict in = reinterpret_cast<const T*>(s);
  for (int64_t i = 0; i < ni; ++i) {
    const T* __restrict row = in + i * si;
    if (sj == 1) {
      for (int64_t j = 0; j < nj; ++j) buf[j * kTileI + i] = row[j];
    } else {
      for (int64_t j = 0; j < nj; ++j) buf[j * kTileI + i] = row[j * sj];
    }
  }
  T* __restrict out = reinterpret_cast<T*>(d);
  if (ni == kTileI) {  // whole lines: constant-size copies, or streaming stores when aligned
    for (int64_t j = 0; j < nj; ++j) {
      std::byte* line = reinterpret_cast<std::byte*>(out + j * dj);
#if PTO_X86
      if (stream && (reinterpret_cast<uintptr_t>(line) & 63) == 0) {
        const __m128i* b = reinterpret_cast<const __m128i*>(buf + j * kTileI);
        __m128i* o = reinterpret_cast<__m128i*>(line);
        _mm_stream_si128(o, _mm_load_si128(b));
        _mm_stream_si128(o + 1, _mm_load_si128(b + 1));
        _mm_stream_si128(o + 2, _mm_load_si128(b + 2));
        _mm_stream_si128(o + 3, _mm_load_si128(b + 3));
        continue;
      }
#endif
      std::memcpy(line, buf + j * kTileI, kTileBytes);
    }
  } else {
    for (int64_t j = 0; j < nj; ++j) std::memcpy(out + j * dj, buf + j * kTileI, static_cast<size_t>(ni) * sizeof(T));
  }
}

// ------------------------------------------------------------------------------------------
// Streaming-store row kernels (dst stride 1): hand-vectorised per ISA, picked once at run time.
// Each writes scalars up to the first 64-byte boundary of dst, whole vectors with
// non-temporal stores, then a scalar tail; src is never read outside the row.

using NtFn = void (*)(std::byte* d, const std::byte* s, int64_t n);


template <class T>
inline int64_t head_to_line(const std::byte* d, int64_t n) {
  const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & 63);
  return std::min<int64_t>(n, mis ? (64 - mis) / static_cast<int64_t>(sizeof(T)) : 0);
}

template <class T>
inline void scalar_stride(T* out, const T* in, int64_t k, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i * k];
}

// The unsigned integer of W bytes: the kernels move elements as their bits.
template <int W>
using Bits = std::conditional_t<W == 1, uint8_t, std::conditional_t<W == 2, uint16_t, std::conditional_t<W == 4, uint32_t, uint64_t>>>;

// Stride -1 (out[i] = in[-i]): the head scalar, then two vectors at a time by Pair, which streams
// dst[k] = src[-k] for k < 2 * Pair::kLanes (inlined into the kernels compiled for Pair's build),
// then the tail.
template <int W, class Pair>
[[gnu::always_inline]] inline void reverse_rows(std::byte* d, const std::byte* s, int64_t n, const Pair& pair) {
  Bits<W>* out = reinterpret_cast<Bits<W>*>(d);
  const Bits<W>* in = reinterpret_cast<const Bits<W>*>(s);
  constexpr int64_t V = Pair::kLanes;
  int64_t i = head_to_line<Bits<W>>(d, n);
  for (int64_t k = 0; k < i; ++k) out[k] = in[-k];
  for (; i + 2 * V <= n; i += 2 * V) pair(out + i, in - i);
  for (; i < n; ++i) out[i] = in[-i];
}

// Contiguous rows: stream_copy of count W-byte elements.
template <Isa isa, int W>
void copy_nt(std::byte* d, const std::byte* s, int64_t count) {
  stream_copy<isa>(d, s, count * W);
}

#if PTO_X86
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own _mm512_undefined_*().
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace avx2 {

// One 32-byte vector reversed element-wise.
template <int W>
PTO_TARGET_AVX2 inline __m256i reverse_vec(__m256i v) {
  if constexpr (W == 1 || W == 2) {
    const __m256i m = W == 1 ? _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12,
                                                11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
                             : _mm256_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1, 14, 15, 12, 13,
                                                10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
    return _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, m), 0x4E);
  } else if constexpr (W == 4) {
    return _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0));
  } else {
    return _mm256_permute4x64_epi64(v, 0x1B);
  }
}

template <int W>
struct ReversePair {
  static constexpr int64_t kLanes = 32 / W;
  PTO_TARGET_AVX2 void operator()(Bits<W>* dst, const Bits<W>* src) const {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src - kLanes + 1));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src - 2 * kLanes + 1));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), reverse_vec<W>(a));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + kLanes), reverse_vec<W>(b));
  }
};

template <int W>
PTO_TARGET_AVX2 void reverse_nt(std::byte* d, const std::byte* s, int64_t n) {
  reverse_rows<W>(d, s, n, ReversePair<W>{});
}

// Stride K on 4- or 8-byte elements: each output vector of 8 dwords is gathered from K
// source vectors by one lane permute each and blends.
template <int W, int K>
PTO_TARGET_AVX2 void stride_nt(std::byte* d, const std::byte* s, int64_t n) {
  static_assert(W == 4 || W == 8);
  using T = Bits<W>;
  T* out = reinterpret_cast<T*>(d);
  const T* in = reinterpret_cast<const T*>(s);
  constexpr int64_t V = 32 / W;  // elements per vector
  alignas(32) int32_t idx[8], sel[K][8];
  for (int q = 0; q < 8; ++q) {
    const int pos = W == 4 ? K * q : 2 * K * (q >> 1) + (q & 1);  // source dword
    idx[q] = pos & 7;
    for (int v = 0; v < K; ++v) sel[v][q] = pos / 8 == v ? -1 : 0;
  }
  const __m256i vidx = _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
  __m256i vsel[K];
  for (int v = 0; v < K; ++v) vsel[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sel[v]));
  int64_t i = head_to_line<T>(d, n);
  scalar_stride(out, in, K, i);
  for (; i + V < n; i += V) {
    const T* src = in + i * K;
    __m256i r = _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)), vidx);
    for (int v = 1; v < K; ++v)
      r = _mm256_blendv_epi8(
          r, _mm256_permutevar8x32_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + v * V)), vidx),
          vsel[v]);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(out + i), r);
  }
  scalar_stride(out + i, in + i * K, K, n - i);
}

}  // namespace avx2

namespace avx512 {

template <int W>
PTO_TARGET_AVX512 inline __m512i permute(__m512i idx, __m512i v) {
  if constexpr (W == 2) return _mm512_permutexvar_epi16(idx, v);
  else if constexpr (W == 4) return _mm512_permutexvar_epi32(idx, v);
  else return _mm512_permutexvar_epi64(idx, v);
}

template <int W>
PTO_TARGET_AVX512 inline __m512i mask_permute(__m512i r, uint64_t m, __m512i idx, __m512i v) {
  if constexpr (W == 2) return _mm512_mask_permutexvar_epi16(r, static_cast<__mmask32>(m), idx, v);
  else if constexpr (W == 4) return _mm512_mask_permutexvar_epi32(r, static_cast<__mmask16>(m), idx, v);
  else return _mm512_mask_permutexvar_epi64(r, static_cast<__mmask8>(m), idx, v);
}

template <int W>
PTO_TARGET_AVX512 inline __m512i lane_index(const int* values) {  // one index per W-byte lane
  alignas(64) uint8_t bytes[64];
  for (int q = 0; q < 64 / W; ++q) {
    if constexpr (W == 2) reinterpret_cast<uint16_t*>(bytes)[q] = static_cast<uint16_t>(values[q]);
    else if constexpr (W == 4) reinterpret_cast<uint32_t*>(bytes)[q] = static_cast<uint32_t>(values[q]);
    else reinterpret_cast<uint64_t*>(bytes)[q] = static_cast<uint64_t>(values[q]);
  }
  return _mm512_load_si512(bytes);
}

template <int W>
PTO_TARGET_AVX512 inline __m512i reverse_vec(__m512i v, __m512i idx) {
  if constexpr (W == 1) {
    const __m512i m = _mm512_broadcast_i32x4(_mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(6, 7, 4, 5, 2, 3, 0, 1), _mm512_shuffle_epi8(v, m));
  } else {
    return permute<W>(idx, v);
  }
}

template <int W>
struct ReversePair {
  static constexpr int64_t kLanes = 64 / W;
  __m512i idx;  // the lane permutation reversing a vector (unused for bytes)
  PTO_TARGET_AVX512 void operator()(Bits<W>* dst, const Bits<W>* src) const {
    const __m512i a = _mm512_loadu_si512(src - kLanes + 1);
    const __m512i b = _mm512_loadu_si512(src - 2 * kLanes + 1);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), reverse_vec<W>(a, idx));
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + kLanes), reverse_vec<W>(b, idx));
  }
};

template <int W>
PTO_TARGET_AVX512 void reverse_nt(std::byte* d, const std::byte* s, int64_t n) {
  constexpr int64_t V = 64 / W;
  int rev[64];
  for (int q = 0; q < V; ++q) rev[q] = static_cast<int>(V) - 1 - q;
  reverse_rows<W>(d, s, n, ReversePair<W>{W == 1 ? _mm512_setzero_si512() : lane_index<W == 1 ? 2 : W>(rev)});
}

// Stride K: lane q of an output vector is source element K*q, in source vector K*q / V at
// lane K*q % V; one permute per source vector, merged under lane masks.
template <int W, int K>
PTO_TARGET_AVX512 void stride_nt(std::byte* d, const std::byte* s, int64_t n) {
  using T = Bits<W>;
  T* out = reinterpret_cast<T*>(d);
  const T* in = reinterpret_cast<const T*>(s);
  constexpr int64_t V = 64 / W;
  int64_t i = head_to_line<T>(d, n);
  scalar_stride(out, in, K, i);
  if constexpr (W == 1) {  // bytes: narrow 16-bit (K = 2) or 32-bit (K = 4) lanes
    static_assert(K == 2 || K == 4);
    for (; i + V < n; i += V) {
      const T* src = in + i * K;
      __m512i r;
      if constexpr (K == 2) {
        const __m256i lo = _mm512_cvtepi16_epi8(_mm512_loadu_si512(src));
        const __m256i hi = _mm512_cvtepi16_epi8(_mm512_loadu_si512(src + 64));
        r = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
      } else {
        r = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(_mm512_loadu_si512(src)));
        r = _mm512_inserti32x4(r, _mm512_cvtepi32_epi8(_mm512_loadu_si512(src + 64)), 1);
        r = _mm512_inserti32x4(r, _mm512_cvtepi32_epi8(_mm512_loadu_si512(src + 128)), 2);
        r = _mm512_inserti32x4(r, _mm512_cvtepi32_epi8(_mm512_loadu_si512(src + 192)), 3);
      }
      _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), r);
    }
  } else {
    int lanes[64];
    uint64_t masks[K] = {};
    for (int q = 0; q < V; ++q) {
      lanes[q] = (K * q) % V;
      masks[(K * q) / V] |= uint64_t(1) << q;
    }
    const __m512i idx = lane_index<W>(lanes);
    for (; i + V < n; i += V) {
      const T* src = in + i * K;
      __m512i r = permute<W>(idx, _mm512_loadu_si512(src));
      for (int v = 1; v < K; ++v) r = mask_permute<W>(r, masks[v], idx, _mm512_loadu_si512(src + v * V));
      _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), r);
    }
  }
  scalar_stride(out + i, in + i * K, K, n - i);
}

}  // namespace avx512
#pragma GCC diagnostic pop
#endif  // PTO_X86

#if PTO_X86
// One instruction set's streaming kernels: copy<W> (src stride 1), reverse<W> (stride -1; null
// where there is none) and stride<W, K> (stride K = 2, 3, 4) where has_stride<W, K>.
struct Sse2Kernels {
  template <int W> static constexpr NtFn copy = copy_nt<Isa::Baseline, W>;
  template <int W> static constexpr NtFn reverse = nullptr;
  template <int W, int K> static constexpr bool has_stride = false;
  template <int W, int K> static constexpr NtFn stride = nullptr;
};
struct Avx2Kernels {
  template <int W> static constexpr NtFn copy = copy_nt<Isa::Avx2, W>;
  template <int W> static constexpr NtFn reverse = avx2::reverse_nt<W>;
  template <int W, int K> static constexpr bool has_stride = W == 4 || W == 8;
  template <int W, int K> static constexpr NtFn stride = avx2::stride_nt<W, K>;
};
struct Avx512Kernels {
  template <int W> static constexpr NtFn copy = copy_nt<Isa::Avx512, W>;
  template <int W> static constexpr NtFn reverse = avx512::reverse_nt<W>;
  template <int W, int K> static constexpr bool has_stride = W != 1 || K == 2 || K == 4;
  template <int W, int K> static constexpr NtFn stride = avx512::stride_nt<W, K>;
};

template <class Ks, int W, int K>
NtFn stride_kernel() {
  if constexpr (Ks::template has_stride<W, K>) return Ks::template stride<W, K>;
  else return nullptr;
}

// The streaming kernel of Ks for w-byte elements read with src stride ss, or nullptr.
template <class Ks, int W>
NtFn pick_in(int64_t ss) {
  switch (ss) {
    case 1: return Ks::template copy<W>;
    case -1: return Ks::template reverse<W>;
    case 2: return stride_kernel<Ks, W, 2>();
    case 3: return stride_kernel<Ks, W, 3>();
    case 4: return stride_kernel<Ks, W, 4>();
    default: return nullptr;
  }
}

template <class Ks>
NtFn pick_in(int w, int64_t ss) {
  switch (w) {
    case 1: return pick_in<Ks, 1>(ss);
    case 2: return pick_in<Ks, 2>(ss);
    case 4: return pick_in<Ks, 4>(ss);
    case 8: return pick_in<Ks, 8>(ss);
    default: return ss == 1 ? Ks::template copy<8> : nullptr;
  }
}
#endif

// The streaming kernel for a row read with src stride ss, or nullptr (then the cached kernel).
NtFn pick_nt(int64_t item, int64_t ss) {
#if PTO_X86
  const int w = static_cast<int>(item);
  switch (kernel_tuning().isa) {
    case Isa::Avx512: return pick_in<Avx512Kernels>(w, ss);
    case Isa::Avx2: return pick_in<Avx2Kernels>(w, ss);
    case Isa::Baseline: return pick_in<Sse2Kernels>(w, ss);
  }
#endif
  (void)item;
  (void)ss;
  return nullptr;
}


// ------------------------------------------------------------------------------------------
// Layout normalisation.

// Drops size-1 dims; makes every dst stride positive (flipping both sides of a dim); a dst
// stride of 0 keeps only the last index (what a sequential loop leaves); orders dims by dst
// stride (outermost largest); merges a dim into its inner neighbour when both sides step over
// it contiguously.
void normalise(Layout& L, const int64_t* dst_strides, const int64_t* src_strides, const int64_t* shape, int ndim) {
  int n = 0;
  for (int i = 0; i < ndim; ++i) {
    Dim d{shape[i], dst_strides[i], src_strides[i]};
    if (d.size == 1) continue;
    if (d.ds < 0) {
      L.dst += (d.size - 1) * d.ds * L.item;
      L.src += (d.size - 1) * d.ss * L.item;
      d.ds = -d.ds;
      d.ss = -d.ss;
    } else if (d.ds == 0) {
      L.src += (d.size - 1) * d.ss * L.item;
      continue;
    }
    L.dims[n++] = d;
  }
  std::stable_sort(L.dims, L.dims + n, [](const Dim& a, const Dim& b) { return a.ds > b.ds; });
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const Dim& d = L.dims[i];
    if (m > 0) {
      Dim& outer = L.dims[m - 1];
      if (outer.ds == d.ds * d.size && outer.ss == d.ss * d.size) {
        outer = {outer.size * d.size, d.ds, d.ss};
        continue;
      }
    }
    L.dims[m++] = d;
  }
  L.n = m;
}

// An odometer over dims[0, n) (outer dims), tracking element offsets on both sides.
struct Odometer {
  const Dim* dims;
  int n;
  int64_t idx[kMaxDims];
  int64_t doff = 0, soff = 0;

  Odometer(const Dim* d, int count, int64_t row) : dims(d), n(count) {
    for (int i = n - 1; i >= 0; --i) {
      idx[i] = row % dims[i].size;
      row /= dims[i].size;
      doff += idx[i] * dims[i].ds;
      soff += idx[i] * dims[i].ss;
    }
  }
  // Moves k >= 1 rows on; the innermost outer dim has at least k - 1 rows left.
  void advance(int64_t k) {
    doff += (k - 1) * dims[n - 1].ds;
    soff += (k - 1) * dims[n - 1].ss;
    idx[n - 1] += k - 1;
    next();
  }
  void next() {
    for (int i = n - 1; i >= 0; --i) {
      doff += dims[i].ds;
      soff += dims[i].ss;
      if (++idx[i] < dims[i].size) return;
      doff -= dims[i].ds * dims[i].size;
      soff -= dims[i].ss * dims[i].size;
      idx[i] = 0;
    }
  }
};

bool dst_is_dense(const Layout& L) {
  int64_t expected = 1;
  for (int i = L.n - 1; i >= 0; --i) {
    if (L.dims[i].ds != expected) return false;
    expected *= L.dims[i].size;
  }
  return true;
}

// ------------------------------------------------------------------------------------------
// The row-wise copy: the output as rows of the innermost dim, threads over flat ranges.

// Rows from this size on are written by the streaming row kernels directly.
constexpr int64_t kStreamRowBytes = 2048;
// Rows up to this size are copied in batches.
constexpr int64_t kShortRowBytes = 256;
// The L1 buffer that assembles short rows for streaming stores.
constexpr int64_t kStageBytes = 1024;

void copy_rows(const Layout& L) {
  const Dim inner = L.dims[L.n - 1];
  const int outer_n = L.n - 1;
  const int64_t item = L.item, len = inner.size;
  int64_t rows = 1;
  for (int i = 0; i < outer_n; ++i) rows *= L.dims[i].size;
  const int64_t total = rows * len;
  const RowFn fn = pick_row(item, inner.ds, inner.ss);
  // Streaming stores: long rows straight from a streaming row kernel where there is one; other
  // rows are assembled in an L1 buffer laid out like dst first, so that no line is split
  // between two kinds of store. Not where the short rows are read sparsely (under half of the
  // source walked is read, with gaps of two lines or more; smaller gaps are fetched anyway, as the
  // prefetchers take lines in pairs): there the staged bursts of streaming stores slowed the strided
  // reads (AMD EPYC, 2 threads, fp32: [1048576, 16] [::3, :] 2.9 -> 1.7 ms, [1048576, 64] [::3, :]
  // 12.4 -> 8.5, [524288, 64] [::2, :] 8.9 -> 7.0), while denser reads gain from them ([2097152, 16]
  // [::2, :] 5.5 -> 4.6 ms, [393216, 48] of rows of 64: 5.2 -> 4.2).
  const Dim row_dim = outer_n > 0 ? L.dims[outer_n - 1] : Dim{1, 0, 0};
  const int64_t row_span = len * std::max<int64_t>(1, std::abs(inner.ss)) * item, pitch = std::abs(row_dim.ss) * item;
  const bool sparse_rows = pitch >= 2 * row_span && pitch - row_span >= 128;
  NtFn nt = nullptr, staged = nullptr;
  if (total * item > stream_threshold() && dst_is_dense(L) && reinterpret_cast<uintptr_t>(L.dst) % item == 0) {
    if (len * item >= kStreamRowBytes) nt = pick_nt(item, inner.ss);
    if (!nt && !sparse_rows) staged = pick_nt(item, 1);
  }

  // Short rows go in batches along the innermost outer dim.
  const bool batch = !nt && outer_n > 0 && len * item <= kShortRowBytes;
  const auto batch_fn = visit_width(static_cast<size_t>(item), [](auto tag) {
    return &short_rows<typename decltype(tag)::type>;
  });

  parallel_for(total, std::max<int64_t>(1, kMinChunkBytes / item), [&](int64_t lo, int64_t hi) {
    Odometer odo(L.dims, outer_n, lo / len);
    int64_t c = lo % len;  // column within the current row
    // Flat elements [p, end), the element at dst offset o written to base + (o - origin) * item.
    auto run = [&](int64_t p, int64_t end, std::byte* base, int64_t origin) {
      while (p < end) {
        if (batch && c == 0) {
          const int64_t k = std::min(row_dim.size - odo.idx[outer_n - 1], (end - p) / len);
          if (k > 1) {
            batch_fn(base + (odo.doff - origin) * item, inner.ds, row_dim.ds, L.src + odo.soff * item, inner.ss,
                     row_dim.ss, len, k);
            p += k * len;
            odo.advance(k);
            continue;
          }
        }
        const int64_t n = std::min(len - c, end - p);
        std::byte* d = base + (odo.doff + c * inner.ds - origin) * item;
        const std::byte* s = L.src + (odo.soff + c * inner.ss) * item;
        if (nt) nt(d, s, n);
        else fn(d, inner.ds, s, inner.ss, n);
        p += n;
        c += n;
        if (c == len) {
          c = 0;
          odo.next();
        }
      }
    };
    if (staged) {
      alignas(64) std::byte stage[kStageBytes];
      for (int64_t p = lo; p < hi;) {
        std::byte* d = L.dst + p * item;  // dense: the flat index is the dst offset
        const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & 63);
        const int64_t end = std::min(hi, p + (kStageBytes - mis) / item);
        run(p, end, stage + mis, p);
        staged(d, stage + mis, end - p);
        p = end;
      }
    } else {
      run(lo, hi, L.dst, 0);
    }
    if (nt || staged) stream_fence();
  });
}

// ------------------------------------------------------------------------------------------
// The transposing copy: the inner dim is read with a large stride while an outer dim `t`
// reads nearly contiguously; tiles of (dim t) x (inner dim) keep both sides in cache lines.

bool copy_transposed(const Layout& L) {
  const Dim inner = L.dims[L.n - 1];
  const int64_t item = L.item;
  if (inner.ds != 1 || std::abs(inner.ss) * item <= 64 || L.n < 2) return false;
  int t = -1;
  for (int i = 0; i < L.n - 1; ++i)
    if (L.dims[i].ss != 0 && std::abs(L.dims[i].ss) * item < 64 &&
        (t < 0 || std::abs(L.dims[i].ss) < std::abs(L.dims[t].ss)))
      t = i;
  if (t < 0) return false;

  const Dim tj = L.dims[t];
  const int64_t bi = kTileBytes / item, bj = tile_j(item);
  const int64_t nbj = (tj.size + bj - 1) / bj, nbi = (inner.size + bi - 1) / bi;
  // The remaining outer dims.
  Dim rest[kMaxDims];
  int nrest = 0;
  for (int i = 0; i < L.n - 1; ++i)
    if (i != t) rest[nrest++] = L.dims[i];
  int64_t rest_rows = 1;
  for (int i = 0; i < nrest; ++i) rest_rows *= rest[i].size;

  const int64_t tile_bytes = bj * bi * item;
  const bool stream = rest_rows * tj.size * inner.size * item > stream_threshold() && dst_is_dense(L);
  // Work units are strips of kTileI src rows (one dst line wide), swept along j: every src
  // row is read sequentially and every dst line written whole, once.
  visit_width(static_cast<size_t>(item), [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_for(rest_rows * nbi, std::max<int64_t>(1, kMinChunkBytes / (tile_bytes * nbj)), [&](int64_t lo, int64_t hi) {
      Odometer odo(rest, nrest, lo / nbi);
      int64_t ib = lo % nbi;
      for (int64_t w = lo; w < hi; ++w) {
        const int64_t i0 = ib * bi, ni = std::min(bi, inner.size - i0);
        std::byte* d = L.dst + (odo.doff + i0) * item;
        const std::byte* s = L.src + (odo.soff + i0 * inner.ss) * item;
        for (int64_t j0 = 0; j0 < tj.size; j0 += bj)
          tile_copy<T>(d + j0 * tj.ds * item, tj.ds, s + j0 * tj.ss * item, tj.ss, inner.ss, std::min(bj, tj.size - j0),
                       ni, stream);
        if (++ib == nbi) {
          ib = 0;
          odo.next();
        }
      }
      if (stream) stream_fence();
    });
  });
  return true;
}

}  // namespace

void strided_copy(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                  const int64_t* shape, int ndim, size_t itemsize) {
  for (int i = 0; i < ndim; ++i)
    if (shape[i] == 0) return;
  Layout L;
  L.dst = static_cast<std::byte*>(dst);
  L.src = static_cast<const std::byte*>(src);
  L.item = static_cast<int64_t>(itemsize);
  normalise(L, dst_strides, src_strides, shape, ndim);
  if (L.n == 0) {
    std::memcpy(L.dst, L.src, itemsize);
    return;
  }
  if (copy_transposed(L)) return;
  copy_rows(L);
}

}  // namespace pto::kernels
