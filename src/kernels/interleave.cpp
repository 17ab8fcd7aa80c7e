// interleave / deinterleave kernels (docs/ops/interleave.md, docs/ops/deinterleave.md): pure data movement, dispatched on element
// width. Each op is a walk over "units" of the last axis (a pair of elements of the stream):
//   zip   (interleave):    unit j of row r reads input[r, j], other[r, j] and writes them
//                          adjacently into out0 (j < n/2) or out1 (j >= n/2);
//   unzip (deinterleave):  unit k of row r reads two adjacent elements of input (k < split) or
//                          other (k >= split) and writes out0[r, k], out1[r, k].
// Threads take disjoint ranges of units (whole rows or parts of one), so any shape splits
// evenly. Large outputs go through an L1 stage and non-temporal stores (no read-for-ownership
// of output lines that are never read back).
#include "kernels/interleave.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "copy/simd.h"
#include "copy/stream.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

// Each thread gets at least this many output bytes; calls below twice that stay on the calling
// thread (measured: waking a second thread pays off from about 512 KiB of output).
constexpr int64_t kMinChunkBytes = int64_t(1) << 18;
// Outputs (both together) from kernel_tuning().stream_bytes on are written with non-temporal
// stores (measured on IL1 / IL2 / DI1 / DI2: 15-30% faster than plain stores; about even at
// 8 MiB). Segments shorter than kMinStreamRun bytes use plain stores.
constexpr int64_t kMinStreamRun = 256;
constexpr int64_t kStageBytes = 4096;

// The last axis of a tensor as rows: row r starts at base + r * stride (elements) and its
// elements are adjacent. A tensor whose outer dims do not collapse to one stride, or whose
// last axis is strided, is copied first (keep holds the copy).
struct Rows {
  Tensor keep;  // only when a copy was made (no Tensor copies on the fast path: tiny calls count)
  const std::byte* base = nullptr;
  int64_t stride = 0;
};

Rows rows_of(const Tensor& t) {
  const int r = t.ndim();
  bool ok = t.shape(r - 1) <= 1 || t.stride(r - 1) == 1;
  int64_t stride = t.shape(r - 1), expect = 0;
  bool have_outer = false;
  for (int i = r - 2; i >= 0 && ok; --i) {
    if (t.shape(i) == 1) continue;
    if (!have_outer) {
      have_outer = true;
      stride = t.stride(i);
      expect = stride * t.shape(i);
    } else if (t.stride(i) == expect) {
      expect *= t.shape(i);
    } else {
      ok = false;
    }
  }
  if (ok) return {Tensor(), static_cast<const std::byte*>(t.data()), stride};
  Tensor c = t.contiguous();
  return {c, static_cast<const std::byte*>(c.data()), t.shape(r - 1)};
}

struct Geo {
  const std::byte* a;
  const std::byte* b;  // null for single-input deinterleave (split == n)
  int64_t a_stride, b_stride;  // row strides in elements
  std::byte* out0;
  std::byte* out1;
  int64_t n;      // units per row (= elements per output row)
  int64_t split;  // units [0, split) use input / out0, [split, n) other / out1
};

// g's inputs and outputs as arrays of T.
template <class T>
struct Arrays {
  const T* a;
  const T* b;
  T* out0;
  T* out1;
};
template <class T>
Arrays<T> arrays_of(const Geo& g) {
  return {reinterpret_cast<const T*>(g.a), reinterpret_cast<const T*>(g.b), reinterpret_cast<T*>(g.out0),
          reinterpret_cast<T*>(g.out1)};
}

// The inner loops; restrict lets the vectoriser use whole-register shuffles without alias checks.
template <class T>
inline void zip(T* __restrict d, const T* __restrict a, const T* __restrict b, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    d[2 * k] = a[k];
    d[2 * k + 1] = b[k];
  }
}

template <class T>
inline void unzip(T* __restrict d0, T* __restrict d1, const T* __restrict s, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    d0[k] = s[2 * k];
    d1[k] = s[2 * k + 1];
  }
}

// Calls seg(r, j, len) for each run of units [u0, u1) that stays in one row and on one side of
// g.split: units [j, j + len) of row r. Then, after streaming stores, the fence. Both it and seg
// are always inlined, so the loops in seg are compiled for each PTO_SIMD_CLONES target.
template <bool Stream, class Seg>
__attribute__((always_inline)) inline void for_each_run(const Geo& g, int64_t u0, int64_t u1, Seg&& seg) {
  int64_t r = u0 / g.n, j = u0 % g.n;
  for (int64_t u = u0; u < u1;) {
    const int64_t len = std::min((j < g.split ? g.split : g.n) - j, u1 - u);
    seg(r, j, len);
    u += len;
    if ((j += len) == g.n) j = 0, ++r;
  }
#if PTO_HAVE_STREAM_LINES
  if (Stream) stream_fence();
#endif
}

template <class T, bool Stream>
PTO_SIMD_CLONES void zip_range(const Geo& g, int64_t u0, int64_t u1) {
  const Arrays<T> p = arrays_of<T>(g);
  for_each_run<Stream>(g, u0, u1, [&](int64_t r, int64_t j, int64_t len) __attribute__((always_inline)) {
    const bool first = j < g.split;
    const T* pa = p.a + r * g.a_stride + j;
    const T* pb = p.b + r * g.b_stride + j;
    T* d = (first ? p.out0 + 2 * j : p.out1 + 2 * (j - g.split)) + r * g.n;
#if PTO_HAVE_STREAM_LINES
    constexpr int64_t pair = 2 * sizeof(T);
    const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(d) & 15);
    if (Stream && len * pair >= kMinStreamRun && mis % pair == 0) {
      const int64_t head = std::min(len, ((16 - mis) & 15) / pair);
      zip(d, pa, pb, head);
      constexpr int64_t chunk = kStageBytes / pair;
      alignas(64) T stage[kStageBytes / sizeof(T)];
      for (int64_t k = head; k < len; k += chunk) {
        const int64_t c = std::min(chunk, len - k);
        zip(stage, pa + k, pb + k, c);
        stream_copy<Isa::Baseline>(reinterpret_cast<std::byte*>(d + 2 * k), reinterpret_cast<const std::byte*>(stage), c * pair);
      }
    } else
#endif
    {
      zip(d, pa, pb, len);
    }
  });
}

template <class T, bool Stream>
PTO_SIMD_CLONES void unzip_range(const Geo& g, int64_t u0, int64_t u1) {
  const Arrays<T> p = arrays_of<T>(g);
  for_each_run<Stream>(g, u0, u1, [&](int64_t r, int64_t k, int64_t len) __attribute__((always_inline)) {
    const bool first = k < g.split;
    const T* s = first ? p.a + r * g.a_stride + 2 * k : p.b + r * g.b_stride + 2 * (k - g.split);
    T* d0 = p.out0 + r * g.n + k;
    T* d1 = p.out1 + r * g.n + k;
#if PTO_HAVE_STREAM_LINES
    constexpr int64_t item = sizeof(T);
    const auto p0 = reinterpret_cast<uintptr_t>(d0), p1 = reinterpret_cast<uintptr_t>(d1);
    const int64_t mis = static_cast<int64_t>(p0 & 15);
    if (Stream && 2 * len * item >= kMinStreamRun && ((p0 ^ p1) & 15) == 0 && mis % item == 0) {
      const int64_t head = std::min(len, ((16 - mis) & 15) / item);
      unzip(d0, d1, s, head);
      constexpr int64_t chunk = kStageBytes / 2 / item;
      alignas(64) T stage0[chunk];
      alignas(64) T stage1[chunk];
      for (int64_t i = head; i < len; i += chunk) {
        const int64_t c = std::min(chunk, len - i);
        unzip(stage0, stage1, s + 2 * i, c);
        stream_copy<Isa::Baseline>(reinterpret_cast<std::byte*>(d0 + i), reinterpret_cast<const std::byte*>(stage0), c * item);
        stream_copy<Isa::Baseline>(reinterpret_cast<std::byte*>(d1 + i), reinterpret_cast<const std::byte*>(stage1), c * item);
      }
    } else
#endif
    {
      unzip(d0, d1, s, len);
    }
  });
}

// Runs units [0, units) in parallel: `zip_range` or `unzip_range` picked by width and by
// whether the output is large enough to stream.
template <bool Zip>
void run(const Geo& g, int64_t units, size_t itemsize) {
  if (units <= 0) return;
  const int64_t unit_bytes = 2 * static_cast<int64_t>(itemsize);  // output bytes per unit
  const bool stream = PTO_HAVE_STREAM_LINES && units * unit_bytes >= kernel_tuning().stream_bytes;
  const int64_t min_units = std::max<int64_t>(1, kMinChunkBytes / unit_bytes);
  visit_width(itemsize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    void (*fn)(const Geo&, int64_t, int64_t);
    if constexpr (Zip) fn = stream ? &zip_range<T, true> : &zip_range<T, false>;
    else fn = stream ? &unzip_range<T, true> : &unzip_range<T, false>;
    if (units < 2 * min_units) return fn(g, 0, units);  // tiny calls: no thread pool at all
    parallel_for(units, min_units, [&](int64_t begin, int64_t end) { fn(g, begin, end); });
  });
}

}  // namespace

void interleave(const Tensor& input, const Tensor& other, const Tensor& out0, const Tensor& out1) {
  const int64_t n = input.shape(input.ndim() - 1);
  const int64_t units = input.numel();
  if (units == 0) return;
  const Rows a = rows_of(input), b = rows_of(other);
  const Geo g{a.base, b.base, a.stride, b.stride, static_cast<std::byte*>(out0.data()),
              static_cast<std::byte*>(out1.data()), n, n / 2};
  run<true>(g, units, input.itemsize());
}

void deinterleave(const Tensor& input, const Tensor& other, const Tensor& out0, const Tensor& out1) {
  const int64_t n = input.shape(input.ndim() - 1);
  if (input.numel() == 0) return;
  const Rows a = rows_of(input);
  auto* d0 = static_cast<std::byte*>(out0.data());
  auto* d1 = static_cast<std::byte*>(out1.data());
  if (other.defined()) {
    const Rows b = rows_of(other);
    run<false>({a.base, b.base, a.stride, b.stride, d0, d1, n, n / 2}, input.numel(), input.itemsize());
    return;
  }
  // Single input: out row r is unit row r of input; adjacent rows collapse to one long row.
  const int64_t m = n / 2, rows = input.numel() / n;
  Geo g{a.base, nullptr, a.stride, 0, d0, d1, m, m};
  if (a.stride == n || rows == 1) g = {a.base, nullptr, 0, 0, d0, d1, rows * m, rows * m};
  run<false>(g, rows * m, input.itemsize());
}

}  // namespace pto::kernels
