// The layout family's own kernels (docs/ops/layout.md): the blocked transpose, concat, the row
// fills of expand_clone and tril / triu. Each writes disjoint parts of its output per thread
// (split by size alone, so results never depend on the thread count); outputs from
// kernel_tuning().stream_bytes on are assembled in an L1 or L2 stage and written with streaming
// stores, so even outputs made of short runs do not read their lines before writing them.
#include "kernels/layout.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "copy/simd.h"
#include "copy/stream.h"
#include "kernels/dims.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

// Work below this many output bytes per thread stays on the calling thread.
constexpr int64_t kMinChunkBytes = int64_t(64) << 10;
// The L1 buffer that assembles a streamed output.
constexpr int64_t kStageBytes = 4096;

int64_t min_chunk(int64_t item) { return std::max<int64_t>(1, kMinChunkBytes / item); }

bool streams(int64_t bytes) { return PTO_HAVE_STREAM_LINES && bytes >= kernel_tuning().stream_bytes; }

// Writes the flat elements [lo, hi) of the dense output dst: emit(p, end, out) writes elements
// [p, end) to out. Streamed: a stage at a time, laid out like dst, then whole lines.
template <class Emit>
void write_range(std::byte* dst, int64_t lo, int64_t hi, int64_t item, bool stream, Emit&& emit) {
  if (!stream) {
    emit(lo, hi, dst + lo * item);
    return;
  }
  alignas(64) std::byte stage[kStageBytes];
  for (int64_t p = lo; p < hi;) {
    std::byte* d = dst + p * item;
    const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & 63);
    const int64_t end = std::min(hi, p + (kStageBytes - mis) / item);
    emit(p, end, stage + mis);
    stream_copy<Isa::Baseline>(d, stage + mis, (end - p) * item);
    p = end;
  }
  stream_fence();
}

// dst[0, n) = src[0, n): short runs (concat of narrow pieces) with two overlapping fixed-size
// moves instead of a call.
inline void copy_bytes(std::byte* dst, const std::byte* src, int64_t n) {
  const auto two = [&](auto width) {
    constexpr size_t w = decltype(width)::value;
    std::memcpy(dst, src, w);
    std::memcpy(dst + n - w, src + n - w, w);
  };
  if (n > 64) std::memcpy(dst, src, static_cast<size_t>(n));
  else if (n > 32) two(std::integral_constant<size_t, 32>{});
  else if (n > 16) two(std::integral_constant<size_t, 16>{});
  else if (n >= 8) two(std::integral_constant<size_t, 8>{});
  else if (n >= 4) two(std::integral_constant<size_t, 4>{});
  else
    for (int64_t k = 0; k < n; ++k) dst[k] = src[k];
}

// ------------------------------------------------------------------------------------------
// Blocked transposes: dst[j * dst_ld + i] = src[i * src_ld + j], i < m, j < n (elements, W
// bytes each). DRAM serves a few long streams well and scattered lines badly, on both sides, so
// a tile is D = 256 / W source rows by TJ = 4096 / W source columns:
//   - its rows are read in bands of 16, each band swept along its 4 KiB: 16 streams at a time;
//   - each band's 16 x (64 / W) blocks are transposed in registers (K x K elements per 16-byte
//     register set, K = 16 / W) into a per-thread L2 stage, one contiguous piece per band;
//   - then every destination row gets its D elements (256 bytes) at once, streamed when large.

struct Matrix2d {
  const std::byte* src;
  std::byte* dst;
  int64_t m, n, src_ld, dst_ld;  // elements
};

constexpr int64_t kBand = 16;          // source rows read together
constexpr int64_t kRowBurst = 256;     // destination bytes written per row and tile
constexpr int64_t kSweepBytes = 4096;  // source bytes per row and tile

#if PTO_X86
// a's and b's W-byte elements interleaved: their low halves' into lo, their high halves' into hi.
template <int W>
inline void unpack(__m128i a, __m128i b, __m128i& lo, __m128i& hi) {
  if constexpr (W == 1) lo = _mm_unpacklo_epi8(a, b), hi = _mm_unpackhi_epi8(a, b);
  else if constexpr (W == 2) lo = _mm_unpacklo_epi16(a, b), hi = _mm_unpackhi_epi16(a, b);
  else if constexpr (W == 4) lo = _mm_unpacklo_epi32(a, b), hi = _mm_unpackhi_epi32(a, b);
  else lo = _mm_unpacklo_epi64(a, b), hi = _mm_unpackhi_epi64(a, b);
}

// K x K elements, row r at in + r * in_stride (bytes), to out + c * out_stride: log2(K) rounds of
// the perfect shuffle (row i meets row i + K/2 and gives rows 2i, 2i + 1) transpose the block.
template <int W>
inline void transpose_regs(const std::byte* in, int64_t in_stride, std::byte* out, int64_t out_stride) {
  constexpr int K = 16 / W;
  __m128i r[K];
#pragma GCC unroll 16
  for (int i = 0; i < K; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i * in_stride));
#pragma GCC unroll 4
  for (int round = 1; round < K; round *= 2) {
    __m128i t[K];
#pragma GCC unroll 8
    for (int i = 0; i < K / 2; ++i) unpack<W>(r[i], r[i + K / 2], t[2 * i], t[2 * i + 1]);
#pragma GCC unroll 16
    for (int i = 0; i < K; ++i) r[i] = t[i];
  }
#pragma GCC unroll 16
  for (int i = 0; i < K; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i * out_stride), r[i]);
}
#endif

// rows x cols elements of src (row stride src_ld bytes) to out transposed (row stride out_ld
// bytes): whole K x K sub-blocks in registers. Where rows (cols) is at least K but no multiple of
// it, the last sub-blocks start K before the end and overlap the ones before, which they rewrite
// with the same values; only edges narrower than K go element by element ([1024, 15, 1024] bf16
// swapping dims 1 and 2: 7 of every 15 columns went one element at a time).
template <int W>
void transpose_block(const std::byte* src, int64_t src_ld, std::byte* out, int64_t out_ld, int64_t rows, int64_t cols) {
  int64_t full_rows = 0, full_cols = 0;
#if PTO_X86
  constexpr int64_t K = 16 / W;
  const auto starts = [](int64_t size, auto&& each) {  // each sub-block's first index along a side
    for (int64_t x = 0; x + K <= size; x += K) each(x);
    if (size % K != 0 && size > K) each(size - K);
  };
  starts(rows, [&](int64_t r) {
    starts(cols, [&](int64_t c) { transpose_regs<W>(src + r * src_ld + c * W, src_ld, out + c * out_ld + r * W, out_ld); });
  });
  full_rows = rows >= K ? rows : 0;
  full_cols = cols >= K ? cols : 0;
#endif
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = r < full_rows ? full_cols : 0; c < cols; ++c)
      std::memcpy(out + c * out_ld + r * W, src + r * src_ld + c * W, W);
}

// One tile: source rows [i0, i0 + D), columns [j0, j0 + tj), clipped to the matrix; band b's
// piece for destination row jj sits at stage + (b * tj + jj) * piece.
template <int W>
void transpose_tile(const Matrix2d& g, int64_t i0, int64_t j0, int64_t tj, std::byte* stage, bool stream) {
  constexpr int64_t D = kRowBurst / W, piece = kBand * W;
  const int64_t rows = std::min(D, g.m - i0), cols = std::min(tj, g.n - j0), sld = g.src_ld * W;
  for (int64_t b = 0; b * kBand < rows; ++b) {
    const int64_t band_rows = std::min(kBand, rows - b * kBand);
    const std::byte* in = g.src + ((i0 + b * kBand) * g.src_ld + j0) * W;
    std::byte* out = stage + b * tj * piece;
    for (int64_t jj = 0; jj < cols; jj += 64 / W)
      transpose_block<W>(in + jj * W, sld, out + jj * piece, piece, band_rows, std::min<int64_t>(64 / W, cols - jj));
  }
  const int64_t bands = (rows + kBand - 1) / kBand, row_bytes = rows * W;
  alignas(64) std::byte burst[kRowBurst];
  for (int64_t jj = 0; jj < cols; ++jj) {
    std::byte* d = g.dst + ((j0 + jj) * g.dst_ld + i0) * W;
    const std::byte* from = stage + jj * piece;
    // The row's pieces side by side: straight into dst, or through `burst` for the streaming
    // stores (its whole lines streamed, a partial line at either end stored as usual).
    std::byte* to = stream ? burst : d;
    if (row_bytes == kRowBurst) {
      for (int64_t b = 0; b < D / kBand; ++b) std::memcpy(to + b * piece, from + b * tj * piece, piece);
    } else {
      for (int64_t b = 0; b < bands; ++b) copy_bytes(to + b * piece, from + b * tj * piece, std::min(piece, row_bytes - b * piece));
    }
    if (stream) {
      const int64_t head = std::min(row_bytes, (64 - static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & 63)) & 63);
      const int64_t body = (row_bytes - head) & ~int64_t(63);
      copy_bytes(d, burst, head);
      stream_lines<Isa::Baseline>(d + head, burst + head, body);
      copy_bytes(d + head + body, burst + head + body, row_bytes - head - body);
    }
  }
}

// ------------------------------------------------------------------------------------------
// tril / triu

// v * 0 for a 16-bit IEEE format, on its bits (what the product in fp32, rounded back, gives):
// +-0 with v's sign; a NaN quieted with its sign and payload; +-inf the default NaN (x86's: sign
// set, quiet).
template <uint16_t kExp, uint16_t kQuiet>
inline uint16_t half_times_zero(uint16_t b) {
  constexpr uint16_t kSign = 0x8000, kMantissa = kQuiet * 2 - 1;
  if ((b & kExp) != kExp) return b & kSign;
  return (b & kMantissa) ? b | kQuiet : kSign | kExp | kQuiet;
}

// v * 0 as the device's mask multiply computes it: +-0 with v's sign, NaN for NaN and +-inf
// (e5m2 through fp32; e4m3fn, whose only NaN is S.1111.111 and which has no inf, on its bits so
// that a NaN keeps its sign).
template <class T>
inline T times_zero(T v) {
  if constexpr (std::is_floating_point_v<T>) return v * T(0);
  else if constexpr (std::is_same_v<T, fp16_t>) return {half_times_zero<0x7C00, 0x0200>(v.bits)};
  else if constexpr (std::is_same_v<T, bf16_t>) return {half_times_zero<0x7F80, 0x0040>(v.bits)};
  else if constexpr (std::is_same_v<T, fp8e4m3_t>) return {static_cast<uint8_t>((v.bits & 0x7F) == 0x7F ? v.bits : v.bits & 0x80)};
  else if constexpr (std::is_same_v<T, fp8e5m2_t>) return {float_to_fp8e5m2_bits(fp8e5m2_bits_to_float(v.bits) * 0.0f)};
  else return T{};  // integers and bool (fp8e8m0, which has no zero, is refused by the op)
}

// out[j] = in[j * in_step] * 0 for j < n.
template <class T>
PTO_SIMD_CLONES void mask_run(T* __restrict out, const T* __restrict in, int64_t in_step, int64_t n) {
  if (in_step == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = times_zero(in[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = times_zero(in[j * in_step]);
  }
}

template <class T>
PTO_SIMD_CLONES void mask_in_place(T* line, int64_t step, int64_t n) {
  for (int64_t j = 0; j < n; ++j) line[j * step] = times_zero(line[j * step]);
}

template <class T>
void copy_run(T* __restrict out, const T* __restrict in, int64_t in_step, int64_t n) {
  if (in_step == 1) std::memcpy(out, in, static_cast<size_t>(n) * sizeof(T));
  else
    for (int64_t j = 0; j < n; ++j) out[j] = in[j * in_step];
}

template <class T>
PTO_SIMD_CLONES void fill_run(T* __restrict out, T v, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = v;
}

// Rows of len elements one after another, row r filled with v[r]: one call for many short rows.
template <class T>
PTO_SIMD_CLONES void fill_whole_rows(T* __restrict out, const T* __restrict v, int64_t rows, int64_t len) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < len; ++j) out[r * len + j] = v[r];
}

// Row r of t (every dim but the last, row-major): its first element's offset.
int64_t row_offset(const Tensor& t, int64_t r) {
  int64_t off = 0;
  for (int i = t.ndim() - 2; i >= 0; --i) {
    off += (r % t.shape(i)) * t.stride(i);
    r /= t.shape(i);
  }
  return off;
}

// The kept columns [first, last) of row i of an m x n matrix.
struct Kept {
  int64_t first, last;
};

struct Triangle {
  int64_t m, n, diagonal;  // diagonal clamped to [-m - 1, n + 1]: the same masks, no overflow
  bool upper;

  Triangle(int64_t rows, int64_t cols, int64_t d, bool up)
      : m(rows), n(cols), diagonal(std::clamp<int64_t>(d, -rows - 1, cols + 1)), upper(up) {}
  Kept kept(int64_t i) const {
    if (upper) return {std::clamp<int64_t>(i + diagonal, 0, n), n};
    return {0, std::clamp<int64_t>(i + diagonal + 1, 0, n)};
  }
};

template <class T>
void triangle_typed(const Tensor& dst, const Tensor& src, const Triangle& tri) {
  const int r = src.ndim();
  const int64_t n = tri.n, rows = src.numel() / n, item = sizeof(T), in_step = src.stride(r - 1);
  const bool dense_src = src.is_contiguous();
  const T* in = src.data_as<const T>();
  T* out = dst.data_as<T>();
  const auto emit = [&](int64_t p, int64_t end, std::byte* to) {
    T* o = reinterpret_cast<T*>(to);
    while (p < end) {
      const int64_t row = p / n, c = p % n, len = std::min(n - c, end - p);
      const T* line = in + (dense_src ? row * n : row_offset(src, row));
      const Kept k = tri.kept(row % tri.m);
      // Columns [c, c + len): masked before k.first, kept in [k.first, k.last), masked after.
      const int64_t a = std::clamp(k.first, c, c + len), b = std::clamp(k.last, a, c + len);
      mask_run(o, line + c * in_step, in_step, a - c);
      copy_run(o + (a - c), line + a * in_step, in_step, b - a);
      mask_run(o + (b - c), line + b * in_step, in_step, c + len - b);
      o += len;
      p += len;
    }
  };
  const int64_t total = rows * n;
  const bool stream = streams(total * item);
  parallel_for(total, min_chunk(item), [&](int64_t lo, int64_t hi) {
    write_range(reinterpret_cast<std::byte*>(out), lo, hi, item, stream, emit);
  });
}

template <class T>
void triangle_in_place_typed(const Tensor& t, const Triangle& tri) {
  const int r = t.ndim();
  const int64_t n = tri.n, rows = t.numel() / n, step = t.stride(r - 1);
  T* base = t.data_as<T>();
  parallel_for(rows, std::max<int64_t>(1, min_chunk(sizeof(T)) / std::max<int64_t>(n, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      T* line = base + row_offset(t, row);
      const Kept k = tri.kept(row % tri.m);
      mask_in_place(line, step, k.first);
      mask_in_place(line + k.last * step, step, n - k.last);
    }
  });
}

// A last dim of a few elements read from as many planes (channels moved last, [N, 3, H, W] to
// [N, H, W, 3]; the first and last dims of [a, M, b] swapped): out[j * C + k] = src[k * plane +
// j * step], the C planes read in order and the output written in order, where the blocked
// transpose would work tiles only C rows deep (or C x step elements).
constexpr int64_t kMaxPlanes = 8;  // and at least 2: dims of one element are dropped
constexpr int64_t kMaxPlaneStepBytes = 64;  // a larger step reads a line per element
template <class T, int C, bool kUnitStep>
PTO_SIMD_CLONES void interleave_planes(T* __restrict out, const T* __restrict src, int64_t plane, int64_t step,
                                       int64_t n) {
  const int64_t s = kUnitStep ? 1 : step;  // unit steps vectorise
  for (int64_t j = 0; j < n; ++j)
    for (int k = 0; k < C; ++k) out[j * C + k] = src[k * plane + j * s];
}
template <class T>
void interleave_planes(T* __restrict out, const T* __restrict src, int64_t plane, int64_t step, int64_t n,
                       int64_t c) {
  with_constant<2, 3, 4, 5, 6, 7, 8>(c, [&](auto k) {
    if (step == 1) interleave_planes<T, k(), true>(out, src, plane, 1, n);
    else interleave_planes<T, k(), false>(out, src, plane, step, n);
  });
}

// The mirror: src's contiguous dim of a few elements spread into as many planes of dst (channels
// moved first, [N, H, W, 3] to [N, 3, H, W]): out[k * plane + j] = src[j * C + k], src read in
// order and each plane written in order, where the blocked transpose would work tiles C wide.
template <class T, int C>
PTO_SIMD_CLONES void split_planes(T* __restrict out, const T* __restrict src, int64_t plane, int64_t n) {
  for (int k = 0; k < C; ++k)
    for (int64_t j = 0; j < n; ++j) out[k * plane + j] = src[j * C + k];
}
template <class T>
void split_planes(T* __restrict out, const T* __restrict src, int64_t plane, int64_t n, int64_t c) {
  with_constant<2, 3, 4, 5, 6, 7, 8>(c, [&](auto k) { split_planes<T, k()>(out, src, plane, n); });
}

}  // namespace

bool transposed_copy(const Tensor& dst, const Tensor& src) {
  // dst's dims in order with both sides' strides, size-1 dims dropped, neighbours merged where
  // both sides step over them together.
  std::vector<int64_t> sizes, dst_steps, src_steps;
  for (int i = 0; i < dst.ndim(); ++i) {
    if (dst.shape(i) == 0) return false;
    if (dst.shape(i) == 1) continue;
    sizes.push_back(dst.shape(i));
    dst_steps.push_back(dst.stride(i));
    src_steps.push_back(src.stride(i));
  }
  merge_contiguous_dims(sizes, 0, dst_steps, src_steps);
  struct Dim {
    int64_t size, ds, ss;
  };
  std::vector<Dim> dims;
  for (size_t k = 0; k < sizes.size(); ++k) dims.push_back({sizes[k], dst_steps[k], src_steps[k]});
  if (dims.size() < 2 || dims.back().ds != 1 || dims.back().ss == 1 || dims.back().ss == 0) return false;
  size_t t = 0;  // the dim src reads contiguously
  while (t + 1 < dims.size() && dims[t].ss != 1) ++t;
  if (t + 1 == dims.size()) return false;
  for (size_t k = 0; k + 1 < dims.size(); ++k)
    if (dims[k].ds <= 0) return false;  // dst laid out in its dims' order
  const int64_t item = static_cast<int64_t>(dst.itemsize());
  const Dim inner = dims.back();
  // The planes' interleave runs along dst's next-to-last dim, the blocked transpose along src's
  // contiguous one; the other dims are batches.
  const Dim& beside = dims[dims.size() - 2];
  const bool planes = inner.size <= kMaxPlanes && beside.ds == inner.size && beside.ss > 0 &&
                      (beside.ss == 1 || beside.ss * item <= kMaxPlaneStepBytes);
  if (!planes && inner.size <= kMaxPlanes && beside.ds == inner.size) {
    // Rows of C elements from C planes whose rows lie far apart in src (the first and last dims of
    // [a, M, b] swapped, b elements past a cache line): tiles C rows deep spent their time on
    // bookkeeping. Each plane is transposed on its own into a stage, then the stage's planes are
    // interleaved: two copies that each run at speed ([2, 528, 3302] fp16 to [3302, 528, 2] from
    // memory: 4.3 -> 1.4 ms, torch 3.7).
    Shape rest;
    Strides src_rest, dst_rest;
    for (size_t k = 0; k + 1 < dims.size(); ++k) {
      rest.push_back(dims[k].size);
      src_rest.push_back(dims[k].ss);
      dst_rest.push_back(dims[k].ds);
    }
    Strides stage_rest = contiguous_strides(rest);
    const int64_t plane = shape_numel(rest);
    const Tensor stage = Tensor::empty({inner.size * plane}, dst.dtype());
    const auto copy = [](const Tensor& to, const Tensor& from) {
      if (!transposed_copy(to, from)) copy_into(to, from);
    };
    for (int64_t k = 0; k < inner.size; ++k)
      copy(stage.as_strided(rest, stage_rest, k * plane), src.as_strided(rest, src_rest, k * inner.ss));
    rest.push_back(inner.size);
    dst_rest.push_back(inner.ds);
    stage_rest.push_back(plane);
    copy(dst.as_strided(rest, dst_rest, 0), stage.as_strided(rest, stage_rest, 0));
    return true;
  }
  const size_t across_at = planes ? dims.size() - 2 : t;
  const Dim across = dims[across_at];
  std::vector<Dim> batch;
  for (size_t k = 0; k + 1 < dims.size(); ++k)
    if (k != across_at) batch.push_back(dims[k]);
  int64_t batches = 1;
  for (const Dim& d : batch) batches *= d.size;
  const auto batch_offsets = [&](int64_t b, int64_t& soff, int64_t& doff) {
    soff = doff = 0;
    for (size_t k = batch.size(); k-- > 0;) {
      soff += (b % batch[k].size) * batch[k].ss;
      doff += (b % batch[k].size) * batch[k].ds;
      b /= batch[k].size;
    }
  };
  if (planes) {
    // Pieces of (run of j, batch), every batch of a run before the next run: with a step > 1 the
    // batches whose sources interleave within it (src's contiguous dim) read the run's lines while
    // they are in L1. A run covers 16 KiB of source lines.
    const int64_t c = inner.size, step = across.ss;
    const int64_t run = std::min(across.size, std::max<int64_t>(64, 16384 / (c * step * item)));
    const int64_t runs = (across.size + run - 1) / run, pieces = runs * batches;
    visit_width(static_cast<size_t>(item), [&](auto tag) {
      using T = typename decltype(tag)::type;
      parallel_for(pieces, std::max<int64_t>(1, kMinChunkBytes / (c * item * run)), [&](int64_t lo, int64_t hi) {
        for (int64_t p = lo; p < hi; ++p) {
          const int64_t j = p / batches * run, n = std::min(run, across.size - j);
          int64_t soff, doff;
          batch_offsets(p % batches, soff, doff);
          interleave_planes(dst.data_as<T>() + doff + j * c, src.data_as<T>() + soff + j * step, inner.ss, step, n, c);
        }
      });
    });
    return true;
  }
  if (across.size <= kMaxPlanes && inner.ss == across.size) {
    // src rows of a few elements back to back along dst's last dim: split into planes, a run of
    // 16 KiB of src at a time, batch by batch.
    const int64_t c = across.size;
    const int64_t run = std::min(inner.size, std::max<int64_t>(64, 16384 / (c * item)));
    const int64_t runs = (inner.size + run - 1) / run;
    visit_width(static_cast<size_t>(item), [&](auto tag) {
      using T = typename decltype(tag)::type;
      parallel_for(runs * batches, std::max<int64_t>(1, kMinChunkBytes / (c * item * run)), [&](int64_t lo, int64_t hi) {
        for (int64_t p = lo; p < hi; ++p) {
          const int64_t j = p % runs * run, n = std::min(run, inner.size - j);
          int64_t soff, doff;
          batch_offsets(p / runs, soff, doff);
          split_planes(dst.data_as<T>() + doff + j, src.data_as<T>() + soff + j * c, across.ds, n, c);
        }
      });
    });
    return true;
  }
  // i runs along dst's last dim (src rows), j along `across` (src's contiguous dim).
  const Matrix2d base{static_cast<const std::byte*>(src.data()), static_cast<std::byte*>(dst.data()), inner.size,
                      across.size, inner.ss, across.ds};
  const bool stream = streams(dst.numel() * item);
  // Tiles in destination order (batch, j tile, i tile): a destination row's consecutive bursts
  // come from consecutive tiles, so the line two of them share is still cached for the second.
  // Split into parts, one per thread at most, each with its own L2 stage (allocated here,
  // before any work starts).
  const int64_t depth = kRowBurst / item, tile_j = std::min(kSweepBytes / item, across.size);
  const int64_t ti = (inner.size + depth - 1) / depth, tj = (across.size + tile_j - 1) / tile_j;
  const int64_t tiles = ti * tj, total = batches * tiles;
  const int64_t stage_bytes = (std::min(depth, inner.size) + kBand - 1) / kBand * tile_j * kBand * item;
  const int64_t parts = std::clamp<int64_t>(total * stage_bytes / kMinChunkBytes, 1, std::min<int64_t>(total, get_num_threads()));
  const Tensor stages = Tensor::empty({parts * stage_bytes}, DType::UINT8);
  visit_width(static_cast<size_t>(item), [&](auto tag) {
    constexpr int W = static_cast<int>(sizeof(typename decltype(tag)::type));
    parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t part = lo; part < hi; ++part) {
        std::byte* stage = stages.data_as<std::byte>() + part * stage_bytes;
        for (int64_t w = total * part / parts; w < total * (part + 1) / parts; ++w) {
          int64_t soff, doff;
          batch_offsets(w / tiles, soff, doff);
          Matrix2d g = base;
          g.src += soff * item;
          g.dst += doff * item;
          const int64_t tile = w % tiles;
          transpose_tile<W>(g, tile % ti * depth, tile / ti * tile_j, tile_j, stage, stream);
        }
      }
      if (stream) stream_fence();
    });
  });
  return true;
}

// Inputs whose blocks average fewer bytes than this are joined in blocks of output rows.
constexpr int64_t kNarrowSegments = 256;
constexpr int64_t kRowBlockBytes = 128 << 10;

// `rows` runs of `bytes` from src (src_step apart) to dst (dst_step apart). Runs of a power-of-two
// size up to 16 bytes are fixed-size moves in a loop of their own (concat of [2M, 1] fp32 pieces
// along dim 1, two threads: 2.3 -> 0.93 ms, torch 1.0 ms); other sizes copy_bytes each.
void copy_column(std::byte* dst, int64_t dst_step, const std::byte* src, int64_t src_step, int64_t rows, int64_t bytes) {
  const auto fixed = [&](auto width) {
    constexpr size_t w = decltype(width)::value;
    for (int64_t o = 0; o < rows; ++o) std::memcpy(dst + o * dst_step, src + o * src_step, w);
  };
  switch (bytes) {
    case 1: return fixed(std::integral_constant<size_t, 1>{});
    case 2: return fixed(std::integral_constant<size_t, 2>{});
    case 4: return fixed(std::integral_constant<size_t, 4>{});
    case 8: return fixed(std::integral_constant<size_t, 8>{});
    case 16: return fixed(std::integral_constant<size_t, 16>{});
    default:
      for (int64_t o = 0; o < rows; ++o) copy_bytes(dst + o * dst_step, src + o * src_step, bytes);
  }
}

// concat of many narrow inputs: read in turn row by row, they would be as many interleaved
// streams of a few bytes each. Instead each block of output rows (kRowBlockBytes) takes every
// input's rows in one sweep (a long run per input), assembled in an L2 stage when streaming.
void concat_narrow(std::byte* dst, int64_t outer, std::span<const ConcatSource> sources,
                   const std::vector<int64_t>& start, int64_t item, bool stream) {
  const int64_t row_bytes = start.back() * item, rows = std::max<int64_t>(1, kRowBlockBytes / row_bytes);
  const int64_t blocks = (outer + rows - 1) / rows;
  const int64_t parts = std::min<int64_t>(blocks, get_num_threads());
  const Tensor stages = Tensor::empty({stream ? parts * rows * row_bytes : 0}, DType::UINT8);
  parallel_for(parts, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t part = lo; part < hi; ++part) {
      std::byte* stage = stream ? stages.data_as<std::byte>() + part * rows * row_bytes : nullptr;
      for (int64_t b = blocks * part / parts; b < blocks * (part + 1) / parts; ++b) {
        const int64_t o0 = b * rows, o1 = std::min(outer, o0 + rows);
        std::byte* out = stream ? stage : dst + o0 * row_bytes;
        for (size_t s = 0; s < sources.size(); ++s) {
          const int64_t bytes = sources[s].len * item, step = sources[s].outer_stride * item;
          const std::byte* in = sources[s].data + o0 * step;
          std::byte* to = out + start[s] * item;
          copy_column(to, row_bytes, in, step, o1 - o0, bytes);
        }
        if (stream) stream_copy<Isa::Baseline>(dst + o0 * row_bytes, stage, (o1 - o0) * row_bytes);
      }
    }
    if (stream) stream_fence();
  });
}

void concat(std::byte* dst, int64_t outer, std::span<const ConcatSource> sources, size_t itemsize) {
  const int64_t item = static_cast<int64_t>(itemsize);
  std::vector<int64_t> start(sources.size() + 1, 0);  // each source's first column in a row
  for (size_t s = 0; s < sources.size(); ++s) start[s + 1] = start[s] + sources[s].len;
  const int64_t row = start.back(), total = outer * row;
  if (total == 0) return;
  const auto emit = [&](int64_t p, int64_t end, std::byte* out) {
    int64_t o = p / row, c = p % row;
    size_t s = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), c) - start.begin() - 1);
    while (p < end) {
      const ConcatSource& src = sources[s];
      const int64_t k = c - start[s], n = std::min(src.len - k, end - p);
      copy_bytes(out, src.data + (o * src.outer_stride + k) * item, n * item);
      out += n * item;
      p += n;
      c += n;
      if (k + n == src.len && ++s == sources.size()) {
        s = 0;
        c = 0;
        ++o;
      }
    }
  };
  const bool stream = streams(total * item);
  if (outer > 1 && row * item < kNarrowSegments * static_cast<int64_t>(sources.size())) {
    concat_narrow(dst, outer, sources, start, item, stream);
    return;
  }
  if (total < 2 * min_chunk(item)) return write_range(dst, 0, total, item, stream, emit);  // no thread pool
  parallel_for(total, min_chunk(item), [&](int64_t lo, int64_t hi) { write_range(dst, lo, hi, item, stream, emit); });
}

void fill_rows(std::byte* dst, const std::byte* values, int64_t rows, int64_t len, size_t itemsize) {
  const int64_t item = static_cast<int64_t>(itemsize), total = rows * len;
  if (total == 0) return;
  const bool stream = streams(total * item);
  visit_width(itemsize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* v = reinterpret_cast<const T*>(values);
    const auto emit = [&](int64_t p, int64_t end, std::byte* to) {
      T* o = reinterpret_cast<T*>(to);
      int64_t row = p / len;
      if (p % len != 0) {  // a partial first row
        const int64_t head = std::min((row + 1) * len, end) - p;
        fill_run(o, v[row++], head);
        o += head;
        p += head;
      }
      const int64_t whole = (end - p) / len;
      fill_whole_rows(o, v + row, whole, len);
      o += whole * len;
      p += whole * len;
      if (p < end) fill_run(o, v[row + whole], end - p);
    };
    parallel_for(total, min_chunk(item), [&](int64_t lo, int64_t hi) { write_range(dst, lo, hi, item, stream, emit); });
  });
}

void triangle(const Tensor& dst, const Tensor& src, int64_t diagonal, bool upper) {
  if (src.numel() == 0) return;
  const int r = src.ndim();
  const Triangle tri(src.shape(r - 2), src.shape(r - 1), diagonal, upper);
  visit_dtype(src.dtype(), [&](auto tag) { triangle_typed<typename decltype(tag)::type>(dst, src, tri); });
}

void triangle_in_place(const Tensor& t, int64_t diagonal, bool upper) {
  if (t.numel() == 0) return;
  const int r = t.ndim();
  const Triangle tri(t.shape(r - 2), t.shape(r - 1), diagonal, upper);
  visit_dtype(t.dtype(), [&](auto tag) { triangle_in_place_typed<typename decltype(tag)::type>(t, tri); });
}

}  // namespace pto::kernels
