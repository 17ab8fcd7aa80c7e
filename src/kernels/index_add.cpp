// index_add_ kernel (docs/ops/index_add.md). One step per index entry, rounded as the device
// rounds: v = round(alpha * s), x = round(x + v), no wider accumulator. This file is compiled
// with -ffp-contract=off (CMakeLists.txt) so that the compiler never fuses the two roundings
// into one FMA.
//  * block mode (axes after dim): a work item is (outer position, block of inner positions,
//    range of target lines); for each index entry in order whose target lies in the range, a
//    run of the block is updated (vectorised per dtype).
//  * row mode (dim is the last axis): a work item is one outer line; its steps land at random
//    positions of that line, in index order.
#include "kernels/index_add.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "copy/simd.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

// ---- one step per dtype ----------------------------------------------------------------------
// Step<T>::A is alpha's compute type; alpha(p) reads alpha (already in T) as A.

template <class T>
T load(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline float widen(fp16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h.bits)); }
inline float widen(bf16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16); }
template <class H>
H narrow(float f);
template <>
inline fp16_t narrow<fp16_t>(float f) {
  return {std::bit_cast<uint16_t>(static_cast<_Float16>(f))};
}
template <>
inline bf16_t narrow<bf16_t>(float f) {  // round to nearest even; a NaN stays a (quiet) NaN
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x40;
  return {static_cast<uint16_t>((bits & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded)};
}

template <class T>
inline constexpr bool kHalf = std::is_same_v<T, fp16_t> || std::is_same_v<T, bf16_t>;

template <class T, class = void>
struct Step {  // integers: wrap-around (unsigned arithmetic, no signed overflow)
  using A = T;
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
  static A alpha(const void* p) { return load<T>(p); }
  template <bool kOne>
  static T apply(T x, T s, A a) {
    const W v = kOne ? W(U(s)) : W(W(U(a)) * W(U(s)));
    return static_cast<T>(static_cast<U>(W(U(x)) + v));
  }
};

template <class T>
struct Step<T, std::enable_if_t<std::is_floating_point_v<T>>> {  // fp32 in fp32, fp64 in fp64
  using A = T;
  static A alpha(const void* p) { return load<T>(p); }
  template <bool kOne>
  static T apply(T x, T s, A a) {
    const T v = kOne ? s : a * s;
    return x + v;
  }
};

template <class T>
struct Step<T, std::enable_if_t<kHalf<T>>> {  // fp16 / bf16: both roundings to T, each computed in fp32
  using A = float;
  static A alpha(const void* p) { return widen(load<T>(p)); }
  template <bool kOne>
  static T apply(T x, T s, A a) {
    const float v = kOne ? widen(s) : widen(narrow<T>(a * widen(s)));
    return narrow<T>(widen(x) + v);
  }
};

// One index entry on a dense run of n targets (vectorised clones per target CPU).
template <class T, bool kOne>
PTO_SIMD_CLONES void add_run(T* dst, const T* src, int64_t n, typename Step<T>::A a) {
  for (int64_t k = 0; k < n; ++k) dst[k] = Step<T>::template apply<kOne>(dst[k], src[k], a);
}

// ---- geometry: [outer axes..., dim, inner axes...] ----------------------------------------

struct Axes {
  std::vector<int64_t> shape, out_strides, src_strides;
  int64_t count = 1;
  // Offsets of position p (row-major over shape) in out and in source.
  void offsets(int64_t p, int64_t& o, int64_t& s) const {
    o = s = 0;
    for (int a = static_cast<int>(shape.size()) - 1; a >= 0; --a) {
      const int64_t c = p % shape[a];
      p /= shape[a];
      o += c * out_strides[a];
      s += c * src_strides[a];
    }
  }
};

struct Geometry {
  Axes outer, inner;
  int64_t m = 0, out_sd = 0, src_sd = 0;
  bool inner_dense = true;  // inner position k sits at offset k in out and in source
};

Geometry geometry(const IndexAddArgs& a) {
  Geometry g;
  const int r = a.out.ndim();
  g.m = a.index.numel();
  g.out_sd = a.out.stride(a.dim);
  g.src_sd = a.source.stride(a.dim);
  for (int i = 0; i < r; ++i) {
    if (i == a.dim || a.out.shape(i) == 1) continue;
    Axes& axes = i < a.dim ? g.outer : g.inner;
    axes.shape.push_back(a.out.shape(i));
    axes.out_strides.push_back(a.out.stride(i));
    axes.src_strides.push_back(a.source.stride(i));
    axes.count *= a.out.shape(i);
  }
  int64_t expected = 1;
  for (int i = static_cast<int>(g.inner.shape.size()) - 1; i >= 0; --i) {
    if (g.inner.out_strides[i] != expected || g.inner.src_strides[i] != expected) g.inner_dense = false;
    expected *= g.inner.shape[i];
  }
  return g;
}

template <class T, class I, bool kOne>
void run(const IndexAddArgs& args, const Geometry& g) {
  using A = typename Step<T>::A;
  T* out = args.out.data_as<T>();
  const T* src = args.source.data_as<const T>();
  const I* idx = args.index.data_as<I>();
  const A a = Step<T>::alpha(args.alpha);
  const int threads = get_num_threads();

  if (g.inner.count == 1) {  // row mode
    const int64_t min_lines = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.m));
    parallel_for(g.outer.count, min_lines, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        int64_t oo, so;
        g.outer.offsets(o, oo, so);
        T* line = out + oo;
        const T* sline = src + so;
        for (int64_t i = 0; i < g.m; ++i) {
          T& x = line[static_cast<int64_t>(idx[i]) * g.out_sd];
          x = Step<T>::template apply<kOne>(x, sline[i * g.src_sd], a);
        }
      }
    });
    return;
  }

  // block mode. Work items: (outer position, block of inner positions, range of target lines
  // along dim); an item applies, in index order, the entries whose target lies in its range.
  // When there are too few outer positions for the threads, the targets are split into ranges
  // (each item then reads whole source lines) or, with few target lines, the inner axis is.
  int64_t block = g.inner.count, ranges = 1;
  const int64_t nd = args.out.shape(args.dim);
  if (threads > 1 && g.outer.count < 2 * threads) {
    const int64_t parts = (2 * threads + g.outer.count - 1) / g.outer.count;
    if (nd >= 4 * parts) ranges = parts;
    else block = std::max<int64_t>(64, (g.inner.count + parts - 1) / parts / 16 * 16);
  }
  const int64_t blocks = (g.inner.count + block - 1) / block;
  // Inner offsets of a strided layout, computed once for all items.
  std::unique_ptr<int64_t[]> inner_out, inner_src;
  if (!g.inner_dense) {
    inner_out.reset(new int64_t[g.inner.count]);
    inner_src.reset(new int64_t[g.inner.count]);
    for (int64_t k = 0; k < g.inner.count; ++k) g.inner.offsets(k, inner_out[k], inner_src[k]);
  }
  const int64_t min_items = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.m * block / ranges));
  parallel_for(g.outer.count * blocks * ranges, min_items, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r = item % ranges, b = item / ranges % blocks, o = item / ranges / blocks;
      const int64_t k0 = b * block, kn = std::min(block, g.inner.count - k0);
      const int64_t t0 = nd * r / ranges, t1 = nd * (r + 1) / ranges;
      int64_t oo, so;
      g.outer.offsets(o, oo, so);
      for (int64_t i = 0; i < g.m; ++i) {
        const int64_t t = idx[i];
        if (t < t0 || t >= t1) continue;
        T* dst = out + oo + t * g.out_sd;
        const T* s = src + so + i * g.src_sd;
        if (g.inner_dense) {
          add_run<T, kOne>(dst + k0, s + k0, kn, a);
        } else {
          for (int64_t k = k0; k < k0 + kn; ++k)
            dst[inner_out[k]] = Step<T>::template apply<kOne>(dst[inner_out[k]], s[inner_src[k]], a);
        }
      }
    }
  });
}

template <class T>
bool is_one(const void* alpha) {
  return Step<T>::alpha(alpha) == typename Step<T>::A(1);
}

}  // namespace

void index_add(const IndexAddArgs& args) {
  if (args.index.numel() == 0 || args.out.numel() == 0) return;
  const Geometry g = geometry(args);
  visit_index_dtype(args.index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    visit_dtype(args.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // bool and fp8 take no index_add (validated before the kernel)
      if constexpr ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) || kHalf<T>) {
        if (is_one<T>(args.alpha)) run<T, I, true>(args, g);
        else run<T, I, false>(args, g);
      }
    });
  });
}

}  // namespace pto::kernels
