// index_select kernels. The input is seen as [outer..., dim, inner...]; the output is
// contiguous [outer..., index..., inner...], so output "rows" (one inner block each) are
// written in order while the input rows they come from are random.
//
// Memory traffic decides the speed, so:
// - outputs larger than about half the last-level cache are written with non-temporal
//   (streaming) stores: no read-for-ownership of the output, no eviction of the input;
// - rows are not prefetched in software: their loads do not depend on each other, so the core
//   already keeps many in flight, and on an Intel Xeon with AVX-512 FP16 (2026-12-05) prefetching
//   the rows ahead cost 5-25 % from memory and from the caches (x [1048576, 32] int8, 104857 rows
//   from a cold table: 1.50 -> 1.20 ms, torch 1.50; 128-byte rows 2.3-2.9 -> 2.3 ms; 256-byte
//   rows streamed out 14.2 -> 12.3 ms);
// - work is handed out in blocks from a shared counter, so a thread that the OS descheduled
//   does not hold the others up;
// - the last-dim gather (inner block of one element) uses AVX-512 gathers when the CPU has
//   them (runtime dispatch; the default build runs on any x86-64) and prefetches the next
//   input slice while gathering from the current one.
#include "kernels/index_select.h"


#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "copy/simd.h"
#include "copy/stream.h"
#include "copy/strided_copy.h"
#include "ptocpu/parallel.h"


namespace pto::kernels {
namespace {

// Outputs of at least kernel_tuning().stream_bytes are streamed past the caches.
int64_t stream_threshold() { return kernel_tuning().stream_bytes; }

// Runs f(begin, end) over blocks of `grain` items of [0, n), handed out dynamically to the
// pool's threads. f may be called several times per thread; `done()` runs once per thread.
template <class F, class Done>
void dynamic_for(int64_t n, int64_t grain, F&& f, Done&& done) {
  grain = std::max<int64_t>(1, grain);
  const int64_t blocks = (n + grain - 1) / grain;
  const int threads = static_cast<int>(std::min<int64_t>(get_num_threads(), blocks));
  if (threads <= 1) {
    f(0, n);
    done();
    return;
  }
  std::atomic<int64_t> next{0};
  parallel_for(threads, 1, [&](int64_t, int64_t) {
    for (;;) {
      const int64_t b = next.fetch_add(1, std::memory_order_relaxed);
      if (b >= blocks) break;
      f(b * grain, std::min(n, (b + 1) * grain));
    }
    done();
  });
}

// ---------------------------------------------------------------------------------------------
// Geometry of input seen as [outer dims..., dim, inner dims...].

// Fixed-size arrays (no allocation per call): the platforms cap input rank at 8.
constexpr int kMaxDims = 16;

struct Geometry {
  int n_outer = 0, n_inner = 0;
  int64_t outer_shape[kMaxDims], outer_strides[kMaxDims];  // size-1 dims dropped, mergeable dims merged
  int64_t outer = 1, rows_per_outer = 0;                   // rows_per_outer = index.numel()
  int64_t dim_size = 0, dim_stride = 0;
  int64_t inner_shape[kMaxDims], inner_strides[kMaxDims];
  int64_t inner = 1;
  bool inner_contiguous = true;

  int64_t outer_offset(int64_t o) const {
    if (n_outer == 1) return o * outer_strides[0];
    int64_t off = 0;
    for (int i = n_outer - 1; i >= 0; --i) {
      off += (o % outer_shape[i]) * outer_strides[i];
      o /= outer_shape[i];
    }
    return off;
  }
};

Geometry geometry(const Tensor& input, int dim, const Tensor& index) {
  Geometry g;
  for (int i = 0; i < dim; ++i) {
    const int64_t n = input.shape(i), st = input.stride(i);
    if (n == 1) continue;  // a size-1 outer dim adds nothing
    if (g.n_outer > 0 && g.outer_strides[g.n_outer - 1] == st * n) {  // one dim with the previous one
      g.outer_shape[g.n_outer - 1] *= n;
      g.outer_strides[g.n_outer - 1] = st;
    } else {
      g.outer_shape[g.n_outer] = n;
      g.outer_strides[g.n_outer++] = st;
    }
    g.outer *= n;
  }
  g.rows_per_outer = index.numel();
  g.dim_size = input.shape(dim);
  g.dim_stride = input.stride(dim);
  int64_t expected = 1;
  for (int i = dim + 1; i < input.ndim(); ++i) {
    g.inner_shape[g.n_inner] = input.shape(i);
    g.inner_strides[g.n_inner++] = input.stride(i);
  }
  for (int i = input.ndim() - 1; i > dim; --i) {
    if (input.shape(i) != 1 && input.stride(i) != expected) g.inner_contiguous = false;
    expected *= input.shape(i);
    g.inner *= input.shape(i);
  }
  return g;
}

// Walks global output rows [begin, end) (row r = outer r / n, index position r % n).
template <class I>
struct RowWalk {
  const Geometry& g;
  const std::byte* in;
  const I* idx;
  int64_t item, block_bytes, row_stride_bytes;

  struct Cursor {
    int64_t o, k;
    const std::byte* base;
  };
  Cursor at(int64_t r) const {
    const int64_t o = r / g.rows_per_outer;
    return {o, r % g.rows_per_outer, in + g.outer_offset(o) * item};
  }
  void step(Cursor& c) const {
    if (++c.k == g.rows_per_outer) {
      c.k = 0;
      ++c.o;
      if (c.o < g.outer) c.base = in + g.outer_offset(c.o) * item;
    }
  }
  const std::byte* src(const Cursor& c) const { return c.base + static_cast<int64_t>(idx[c.k]) * row_stride_bytes; }
};

// Contiguous inner blocks of a multiple of 64 bytes (or at least 256 bytes): each row is
// streamed straight from the input.
template <Isa isa, class I>
void gather_rows_stream(const RowWalk<I>& w, std::byte* dst, int64_t begin, int64_t end) {
  const int64_t B = w.block_bytes;
  auto cur = w.at(begin);
  std::byte* d = dst + begin * B;
  for (int64_t r = begin; r < end; ++r, d += B) {
    if (B % 64 == 0) stream_lines<isa>(d, w.src(cur), B);
    else stream_copy<isa>(d, w.src(cur), B);
    w.step(cur);
  }
}

// Small contiguous inner blocks: rows are gathered into an L1-resident stage, which is then
// streamed out in whole lines.
template <Isa isa, class I, size_t Bytes>
void gather_small_stream_fixed(const RowWalk<I>& w, std::byte* dst, int64_t begin, int64_t end, int64_t bytes_dyn) {
  constexpr int64_t kStage = 4096;
  alignas(64) std::byte stage[kStage];
  const int64_t B = Bytes ? static_cast<int64_t>(Bytes) : bytes_dyn;
  const int64_t per = std::max<int64_t>(1, kStage / B);
  auto cur = w.at(begin);
  for (int64_t r = begin; r < end;) {
    const int64_t m = std::min(per, end - r);
    for (int64_t j = 0; j < m; ++j) {
      std::memcpy(stage + j * B, w.src(cur), Bytes ? Bytes : static_cast<size_t>(B));
      w.step(cur);
    }
    stream_copy<isa>(dst + r * B, stage, m * B);
    r += m;
  }
}

template <Isa isa, class I>
void gather_small_stream(const RowWalk<I>& w, std::byte* dst, int64_t begin, int64_t end) {
  switch (w.block_bytes) {
    case 1: return gather_small_stream_fixed<isa, I, 1>(w, dst, begin, end, 1);
    case 2: return gather_small_stream_fixed<isa, I, 2>(w, dst, begin, end, 2);
    case 4: return gather_small_stream_fixed<isa, I, 4>(w, dst, begin, end, 4);
    case 8: return gather_small_stream_fixed<isa, I, 8>(w, dst, begin, end, 8);
    case 16: return gather_small_stream_fixed<isa, I, 16>(w, dst, begin, end, 16);
    case 32: return gather_small_stream_fixed<isa, I, 32>(w, dst, begin, end, 32);
    default: return gather_small_stream_fixed<isa, I, 0>(w, dst, begin, end, w.block_bytes);
  }
}

// Ordinary stores (outputs that fit in cache): fixed-size blocks inline to a few moves.
template <size_t Bytes, class I>
void gather_fixed_blocks(const RowWalk<I>& w, std::byte* dst, int64_t begin, int64_t end) {
  auto cur = w.at(begin);
  for (int64_t r = begin; r < end; ++r) {
    std::memcpy(dst + r * static_cast<int64_t>(Bytes), w.src(cur), Bytes);
    w.step(cur);
  }
}

template <class I>
void gather_rows_cached(const RowWalk<I>& w, std::byte* dst, int64_t begin, int64_t end) {
  switch (w.block_bytes) {
    case 1: return gather_fixed_blocks<1>(w, dst, begin, end);
    case 2: return gather_fixed_blocks<2>(w, dst, begin, end);
    case 4: return gather_fixed_blocks<4>(w, dst, begin, end);
    case 8: return gather_fixed_blocks<8>(w, dst, begin, end);
    case 16: return gather_fixed_blocks<16>(w, dst, begin, end);
    case 32: return gather_fixed_blocks<32>(w, dst, begin, end);
    case 64: return gather_fixed_blocks<64>(w, dst, begin, end);
    default: break;
  }
  const int64_t B = w.block_bytes;
  auto cur = w.at(begin);
  for (int64_t r = begin; r < end; ++r) {
    std::memcpy(dst + r * B, w.src(cur), B);
    w.step(cur);
  }
}

// ---------------------------------------------------------------------------------------------
// Last-dim gather: out[o, j] = slice_o[idx[j] * dim_stride], one element per output.

// Prefetches the slice `next` a little at a time while the current one is gathered.
struct SlicePrefetch {
  const std::byte* next = nullptr;
  int64_t bytes = 0, done = 0, per_step = 0;
  void step() {
    for (int64_t i = 0; i < per_step && done < bytes; ++i, done += 64)
      __builtin_prefetch(next + done, 0, 3);
  }
  void finish() {
    while (done < bytes) step();
  }
};

// Prefetches row[idx[k] * stride] for k < n: a random gather's next elements.
constexpr int64_t kFarAhead = 64;
template <class T, class I>
inline void prefetch_elements(const T* row, const I* idx, int64_t n, int64_t stride = 1) {
  for (int64_t k = 0; k < n; ++k) __builtin_prefetch(row + static_cast<int64_t>(idx[k]) * stride);
}

template <class T, class I>
PTO_SIMD_CLONES void gather_elements_scalar(T* out, const T* row, int64_t stride, const I* idx, int64_t n) {
  if (stride == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = row[idx[j]];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = row[idx[j] * stride];
  }
}

#if PTO_X86
// GCC 12 warns about the intrinsics' own undefined pass-through operand.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// 16 (4-byte) or 8 (8-byte) elements per step into a 64-byte aligned dst, streamed or not.
template <class T, class I, bool NT>
PTO_TARGET_AVX512 void gather_elements_avx512(T* out, const T* row, const I* idx, int64_t n,
                                                                SlicePrefetch& pf, bool far) {
  int64_t j = 0;
  if constexpr (sizeof(T) == 4) {
    for (; j + 16 <= n; j += 16) {
      if (far && j + kFarAhead + 16 <= n) prefetch_elements(row, idx + j + kFarAhead, 16);
      __m512i v;
      if constexpr (sizeof(I) == 4) {
        const __m512i ix = _mm512_loadu_si512(idx + j);
        v = _mm512_i32gather_epi32(ix, row, 4);
      } else {
        const __m512i lo = _mm512_loadu_si512(idx + j), hi = _mm512_loadu_si512(idx + j + 8);
        const __m256i a = _mm512_i64gather_epi32(lo, row, 4), b = _mm512_i64gather_epi32(hi, row, 4);
        v = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
      }
      if constexpr (NT) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + j), v);
      else _mm512_storeu_si512(out + j, v);
      pf.step();
    }
  } else {
    for (; j + 8 <= n; j += 8) {
      if (far && j + kFarAhead + 8 <= n) prefetch_elements(row, idx + j + kFarAhead, 8);
      __m512i v;
      if constexpr (sizeof(I) == 4) {
        const __m256i ix = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(idx + j));
        v = _mm512_i32gather_epi64(ix, row, 8);
      } else {
        v = _mm512_i64gather_epi64(_mm512_loadu_si512(idx + j), row, 8);
      }
      if constexpr (NT) _mm512_stream_si512(reinterpret_cast<__m512i*>(out + j), v);
      else _mm512_storeu_si512(out + j, v);
      pf.step();
    }
  }
  for (; j < n; ++j) out[j] = row[idx[j]];
}
#pragma GCC diagnostic pop
#endif

// Many outer slices with few index positions each (e.g. x [N, 32], index [16] on the last dim):
// per-slice setup would cost more than the slice, so a block of slices is one plain loop (the
// slices are read in order, which the hardware prefetcher follows).
constexpr int64_t kShortSliceGather = 32;

template <class T, class I>
PTO_SIMD_CLONES void gather_short_slices(const Geometry& g, const std::byte* in, const I* idx, T* out, int64_t o0,
                                         int64_t o1) {
  const int64_t n = g.rows_per_outer, stride = g.dim_stride;
  const T* base = reinterpret_cast<const T*>(in);
  for (int64_t o = o0; o < o1; ++o) {
    const T* row = base + g.outer_offset(o);
    T* d = out + o * n;
    for (int64_t j = 0; j < n; ++j) d[j] = row[idx[j] * stride];
  }
}

template <class T, class I>
void gather_elements(const Geometry& g, const std::byte* in, const I* idx, std::byte* dst, bool stream) {
  const int64_t n = g.rows_per_outer;
  if (n <= kShortSliceGather && g.outer > 1) {
    parallel_for(g.outer, std::max<int64_t>(1, 16384 / n), [&](int64_t begin, int64_t end) {
      gather_short_slices<T, I>(g, in, idx, reinterpret_cast<T*>(dst), begin, end);
    });
    return;
  }
  const int64_t item = sizeof(T);
  const int64_t slice_bytes = g.dim_size * std::abs(g.dim_stride) * item;
  // Prefetch whole next slices when they are small and the gather touches most of their lines.
  const bool slice_prefetch = g.dim_stride == 1 && slice_bytes <= (int64_t(256) << 10) && n * 2 >= slice_bytes / 64;
  const bool vector = PTO_X86 && kernel_tuning().isa == Isa::Avx512 && g.dim_stride == 1 && (item == 4 || item == 8);
  // Slices beyond L2 are read at random: the elements kFarAhead positions on are prefetched.
  const bool far = slice_bytes > (int64_t(1) << 20);
  // Work items: (outer slice, tile of index positions).
  const int64_t tile = std::max<int64_t>(1024, std::min<int64_t>(n, int64_t(1) << 16));
  const int64_t tiles = (n + tile - 1) / tile;
  const int64_t items = g.outer * tiles;
  const int64_t grain = std::max<int64_t>(1, (int64_t(64) << 10) / std::max<int64_t>(1, std::min(n, tile) * item));

  constexpr int64_t kChunk = 256;
  dynamic_for(items, grain, [&](int64_t begin, int64_t end) {
    alignas(64) T stage[kChunk];
    for (int64_t it = begin; it < end; ++it) {
      const int64_t o = it / tiles, t = it % tiles;
      const int64_t j0 = t * tile, m = std::min(tile, n - j0);
      const T* row = reinterpret_cast<const T*>(in + g.outer_offset(o) * item);
      T* out = reinterpret_cast<T*>(dst) + o * n + j0;
      SlicePrefetch pf;
      if (slice_prefetch && t == tiles - 1 && o + 1 < g.outer) {
        pf.next = in + g.outer_offset(o + 1) * item;
        pf.bytes = slice_bytes;
        // One step per vector (the AVX-512 path) or per chunk of kChunk elements (the others).
        const int64_t steps = std::max<int64_t>(1, vector ? m / (64 / item) : (m + kChunk - 1) / kChunk);
        pf.per_step = std::max<int64_t>(1, (slice_bytes / 64 + steps - 1) / steps);
      }
#if PTO_X86
      if (vector) {
        // Head elements up to a 64-byte boundary of out, then whole vectors.
        int64_t head = ((64 - (reinterpret_cast<uintptr_t>(out) & 63)) & 63) / item;
        head = std::min(head, m);
        for (int64_t j = 0; j < head; ++j) out[j] = row[idx[j0 + j]];
        if (stream)
          gather_elements_avx512<T, I, true>(out + head, row, idx + j0 + head, m - head, pf, far);
        else
          gather_elements_avx512<T, I, false>(out + head, row, idx + j0 + head, m - head, pf, far);
        pf.finish();
        continue;
      }
#endif
      for (int64_t j = 0; j < m; j += kChunk) {
        const int64_t c = std::min<int64_t>(kChunk, m - j);
        if (far && j + kChunk < m)
          prefetch_elements(row, idx + j0 + j + kChunk, std::min<int64_t>(kChunk, m - j - kChunk), g.dim_stride);
        if (!stream) {
          gather_elements_scalar<T, I>(out + j, row, g.dim_stride, idx + j0 + j, c);
          pf.step();
          continue;
        }
        gather_elements_scalar<T, I>(stage, row, g.dim_stride, idx + j0 + j, c);
        switch (kernel_tuning().isa) {
#if PTO_X86
          case Isa::Avx512: stream_copy<Isa::Avx512>(reinterpret_cast<std::byte*>(out + j),
                                                     reinterpret_cast<const std::byte*>(stage), c * item); break;
          case Isa::Avx2: stream_copy<Isa::Avx2>(reinterpret_cast<std::byte*>(out + j),
                                                 reinterpret_cast<const std::byte*>(stage), c * item); break;
#endif
          default: stream_copy<Isa::Baseline>(reinterpret_cast<std::byte*>(out + j),
                                          reinterpret_cast<const std::byte*>(stage), c * item); break;
        }
        pf.step();
      }
      pf.finish();
    }
  }, [&] { if (stream) stream_fence(); });
}

// ---------------------------------------------------------------------------------------------

template <Isa isa, class I>
void gather_rows(const Geometry& g, const std::byte* in, const I* idx, std::byte* dst, int64_t item) {
  const int64_t B = g.inner * item;
  const int64_t rows = g.outer * g.rows_per_outer;
  const RowWalk<I> w{g, in, idx, item, B, g.dim_stride * item};
  const bool stream = rows * B >= stream_threshold();
  if (!stream) {
    const int64_t min_rows = std::max<int64_t>(1, (int64_t(1) << 16) / B);
    parallel_for(rows, min_rows, [&](int64_t begin, int64_t end) { gather_rows_cached<I>(w, dst, begin, end); });
    return;
  }
  // Blocks of about 256 KiB of output; with small rows, a multiple of the stage so that each
  // block starts on a line boundary.
  int64_t grain = std::max<int64_t>(1, (int64_t(256) << 10) / B);
  if (B % 64 == 0 || B >= 256) {
    dynamic_for(rows, grain, [&](int64_t b, int64_t e) { gather_rows_stream<isa, I>(w, dst, b, e); },
                [] { stream_fence(); });
  } else {
    const int64_t per = std::max<int64_t>(1, 4096 / B);
    grain = (grain + per - 1) / per * per;
    dynamic_for(rows, grain, [&](int64_t b, int64_t e) { gather_small_stream<isa, I>(w, dst, b, e); },
                [] { stream_fence(); });
  }
}

}  // namespace

void index_select(const Tensor& input, int dim, const Tensor& index, const Tensor& out) {
  const Geometry g = geometry(input, dim, index);
  const int64_t rows = g.outer * g.rows_per_outer;
  if (rows == 0 || g.inner == 0) return;
  const int64_t item = static_cast<int64_t>(input.itemsize());
  const auto* in = static_cast<const std::byte*>(input.data());
  auto* dst = static_cast<std::byte*>(out.data());

  visit_index_dtype(index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = index.data_as<I>();
    if (g.inner == 1) {
      const bool stream = rows * item >= stream_threshold();
      visit_width(input.itemsize(), [&](auto wtag) {
        using T = typename decltype(wtag)::type;
        gather_elements<T, I>(g, in, idx, dst, stream);
      });
    } else if (g.inner_contiguous) {
      switch (kernel_tuning().isa) {
#if PTO_X86
        case Isa::Avx512: return gather_rows<Isa::Avx512, I>(g, in, idx, dst, item);
        case Isa::Avx2: return gather_rows<Isa::Avx2, I>(g, in, idx, dst, item);
#endif
        default: return gather_rows<Isa::Baseline, I>(g, in, idx, dst, item);
      }
    } else {
      const int64_t block_bytes = g.inner * item;
      int64_t dst_inner_strides[kMaxDims];
      for (int i = g.n_inner - 1; i >= 0; --i) {
        dst_inner_strides[i] = i == g.n_inner - 1 ? 1 : dst_inner_strides[i + 1] * std::max<int64_t>(g.inner_shape[i + 1], 1);
      }
      const int64_t min_rows = std::max<int64_t>(1, (int64_t(1) << 16) / block_bytes);
      parallel_for(rows, min_rows, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r / g.rows_per_outer, k = r % g.rows_per_outer;
          const std::byte* src = in + (g.outer_offset(o) + static_cast<int64_t>(idx[k]) * g.dim_stride) * item;
          strided_copy(dst + r * block_bytes, dst_inner_strides, src, g.inner_strides, g.inner_shape, g.n_inner,
                       input.itemsize());
        }
      });
    }
  });
}

}  // namespace pto::kernels
