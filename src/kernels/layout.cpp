// The layout family's own kernels (docs/ops/layout.md): concat's segment copy and tril / triu.
// Both write a dense output in flat ranges, one per thread (the split depends only on the
// size, so results never depend on the thread count); outputs from kernel_tuning().stream_bytes
// on are assembled in an L1 stage and written with streaming stores, so even outputs made of
// short runs never read their lines before writing them.
#include "kernels/layout.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "copy/simd.h"
#include "copy/stream.h"
#include "core/half.h"
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

// ------------------------------------------------------------------------------------------
// tril / triu

// v * 0 as the device's mask multiply computes it: +-0 with v's sign, NaN for NaN and +-inf
// (fp16 / bf16 / e5m2 through fp32; e4m3fn, whose only NaN is S.1111.111 and which has no inf,
// on its bits so that a NaN keeps its sign).
template <class T>
inline T times_zero(T v) {
  if constexpr (std::is_floating_point_v<T>) return v * T(0);
  else if constexpr (std::is_same_v<T, fp16_t>) return half::to_fp16(half::widen(v) * 0.0f);
  else if constexpr (std::is_same_v<T, bf16_t>) return half::to_bf16(half::widen(v) * 0.0f);
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

}  // namespace

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
      std::memcpy(out, src.data + (o * src.outer_stride + k) * item, static_cast<size_t>(n * item));
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
  parallel_for(total, min_chunk(item), [&](int64_t lo, int64_t hi) { write_range(dst, lo, hi, item, stream, emit); });
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
