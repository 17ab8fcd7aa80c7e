// scatter_ kernels (SPEC 5.4). Threads own disjoint target lines, so the result does not
// depend on the thread count:
//  * row mode (nothing after dim, e.g. dim == last axis): a work item is one index row; its
//    contributions all land in one input line, applied in index order;
//  * block mode (axes after dim): a work item is (outer position, block of B inner
//    positions); for each index row along dim (in order) the block's contributions are
//    applied. Each inner position is its own target line, so per-target order is row-major
//    order. B is chosen so the targets of a block stay in L2 while index and src stream by.
// fp16 / bf16 add / multiply run in three passes over a work item's contributions: load the
// targets into fp32 accumulators, apply every contribution, round once and store.
#include "kernels/scatter.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

// Index positions seen as [outer axes..., dim, inner axes...] (axes of index extent 1 dropped).
struct Geometry {
  int64_t outer = 1, md = 0, inner = 1, nd = 0;  // nd = out.shape(dim)
  int64_t out_sd = 0, src_sd = 0;
  std::vector<int64_t> outer_shape, outer_out, outer_src;
  std::vector<int64_t> inner_shape, inner_out, inner_src;
  bool inner_identity = true;  // inner offset of out == k, and of src == k (or 0 for a scalar)

  static int64_t offset(int64_t flat, const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
    int64_t off = 0;
    for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
      off += (flat % shape[i]) * strides[i];
      flat /= shape[i];
    }
    return off;
  }
  int64_t out_outer(int64_t o) const { return offset(o, outer_shape, outer_out); }
  int64_t src_outer(int64_t o) const { return offset(o, outer_shape, outer_src); }

  // Offsets of inner positions [k0, k0 + n) in out and src.
  void inner_offsets(int64_t k0, int64_t n, int64_t* oo, int64_t* so) const {
    const int rank = static_cast<int>(inner_shape.size());
    std::vector<int64_t> pos(rank);
    int64_t flat = k0;
    for (int i = rank - 1; i >= 0; --i) {
      pos[i] = flat % inner_shape[i];
      flat /= inner_shape[i];
    }
    int64_t a = 0, b = 0;
    for (int i = 0; i < rank; ++i) a += pos[i] * inner_out[i], b += pos[i] * inner_src[i];
    for (int64_t k = 0; k < n; ++k) {
      oo[k] = a, so[k] = b;
      for (int i = rank - 1; i >= 0; --i) {
        a += inner_out[i], b += inner_src[i];
        if (++pos[i] < inner_shape[i]) break;
        a -= inner_shape[i] * inner_out[i], b -= inner_shape[i] * inner_src[i];
        pos[i] = 0;
      }
    }
  }
};

Geometry geometry(const ScatterArgs& a) {
  Geometry g;
  const int d = a.dim, r = a.out.ndim();
  const bool scalar = !a.src.defined();
  g.md = a.index.shape(d);
  g.nd = a.out.shape(d);
  g.out_sd = a.out.stride(d);
  g.src_sd = scalar ? 0 : a.src.stride(d);
  for (int i = 0; i < r; ++i) {
    const int64_t m = a.index.shape(i);
    if (i == d || m == 1) continue;
    const int64_t so = scalar ? 0 : a.src.stride(i);
    if (i < d) {
      g.outer_shape.push_back(m), g.outer_out.push_back(a.out.stride(i)), g.outer_src.push_back(so);
      g.outer *= m;
    } else {
      g.inner_shape.push_back(m), g.inner_out.push_back(a.out.stride(i)), g.inner_src.push_back(so);
      g.inner *= m;
    }
  }
  int64_t expected = 1;
  for (int i = static_cast<int>(g.inner_shape.size()) - 1; i >= 0; --i) {
    if (g.inner_out[i] != expected || (!scalar && g.inner_src[i] != expected)) g.inner_identity = false;
    expected *= g.inner_shape[i];
  }
  return g;
}

// ---- element arithmetic -------------------------------------------------------------------

template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T, ScatterReduce R>
inline T combine(T a, T b) {
  if constexpr (std::is_integral_v<T>) {  // two's complement wrap-around, no signed overflow
    using U = std::make_unsigned_t<T>;
    const Wide<T> x = static_cast<U>(a), y = static_cast<U>(b);
    return static_cast<T>(static_cast<U>(R == ScatterReduce::Add ? x + y : x * y));
  } else {
    return R == ScatterReduce::Add ? a + b : a * b;
  }
}

// The 16-bit floats: decode to the fp32 accumulator, encode once at the end.
inline float decode(bf16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline bf16_t encode(float f, bf16_t) {  // round to nearest even; same as float_to_bf16_bits
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return {static_cast<uint16_t>((bits >> 16) | 0x40)};
  return {static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16)};
}
inline float decode(fp16_t v) { return fp16_bits_to_float(v.bits); }
inline fp16_t encode(float f, fp16_t) { return {float_to_fp16_bits(f)}; }

template <class T>
inline constexpr bool kNeedsAccumulator = std::is_same_v<T, fp16_t> || std::is_same_v<T, bf16_t>;

// ---- the walks: call f(dst, src element, target index along dim, position in block) --------

template <class T, class I, bool kUnit, class F>
inline void walk_row(T* orow, const T* srow, const I* irow, int64_t md, int64_t osd, int64_t ssd, F&& f) {
  for (int64_t j = 0; j < md; ++j) {
    const int64_t t = irow[j];
    f(orow[kUnit ? t : t * osd], srow[kUnit ? j : j * ssd], t, 0);
  }
}

template <class T, class I, bool kIdentity, class F>
inline void walk_block(const Geometry& g, T* obase, const T* sbase, const I* ibase, int64_t kn, int64_t src_k,
                       const int64_t* ooff, const int64_t* soff, F&& f) {
  const int64_t K = g.inner, osd = g.out_sd, ssd = g.src_sd;
  constexpr int64_t kAhead = 8;  // index / src rows are far apart: fetch them early
  const int64_t line_elems = 64 / static_cast<int64_t>(sizeof(I));
  for (int64_t i = 0; i < g.md; ++i) {
    const I* irow = ibase + i * K;
    const T* srow = sbase + i * ssd;
    if (i + kAhead < g.md) {
      for (int64_t c = 0; c < kn; c += line_elems) __builtin_prefetch(irow + kAhead * K + c);
      if (kIdentity && src_k)
        for (int64_t c = 0; c < kn * static_cast<int64_t>(sizeof(T)); c += 64)
          __builtin_prefetch(reinterpret_cast<const char*>(srow + kAhead * ssd) + c);
    }
    for (int64_t k = 0; k < kn; ++k) {
      const int64_t t = irow[k];
      if constexpr (kIdentity) f(obase[t * osd + k], srow[k * src_k], t, k);
      else f(obase[t * osd + ooff[k]], srow[soff[k]], t, k);
    }
  }
}

// ---- the driver ----------------------------------------------------------------------------

// A work item applies its contributions in place (reduce None; fp32 / fp64 / integer add and
// multiply) or, for fp16 / bf16 add and multiply, through an fp32 accumulator per target.
template <class T, class I, ScatterReduce R>
void run(const ScatterArgs& a, const Geometry& g) {
  constexpr bool kAcc = R != ScatterReduce::None && kNeedsAccumulator<T>;
  T* out = static_cast<T*>(a.out.data());
  const bool scalar = !a.src.defined();
  const T* src = scalar ? static_cast<const T*>(a.scalar) : static_cast<const T*>(a.src.data());
  const I* idx = a.index.data_as<I>();
  const int threads = get_num_threads();

  auto direct = [](T& dst, const T& v, int64_t, int64_t) {
    if constexpr (R == ScatterReduce::None) dst = v;
    else if constexpr (!kNeedsAccumulator<T>) dst = combine<T, R>(dst, v);
  };

  if (g.inner == 1) {  // row mode
    const bool unit = g.out_sd == 1 && (scalar || g.src_sd == 1);
    const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.md));
    parallel_for(g.outer, min_rows, [&](int64_t begin, int64_t end) {
      std::unique_ptr<float[]> acc(kAcc ? new float[g.nd] : nullptr);
      for (int64_t o = begin; o < end; ++o) {
        T* orow = out + g.out_outer(o);
        const T* srow = scalar ? src : src + g.src_outer(o);
        const I* irow = idx + o * g.md;
        const int64_t ssd = scalar ? 0 : g.src_sd;
        auto walk = [&](auto&& f) {
          if (unit && !scalar) walk_row<T, I, true>(orow, srow, irow, g.md, 1, 1, f);
          else walk_row<T, I, false>(orow, srow, irow, g.md, g.out_sd, ssd, f);
        };
        if constexpr (kAcc) {
          float* ac = acc.get();
          walk([&](T& dst, const T&, int64_t t, int64_t) { ac[t] = decode(dst); });
          walk([&](T&, const T& v, int64_t t, int64_t) { ac[t] = combine<float, R>(ac[t], decode(v)); });
          walk([&](T& dst, const T&, int64_t t, int64_t) { dst = encode(ac[t], T{}); });
        } else if (R == ScatterReduce::None && scalar && g.out_sd == 1) {
          const T v = *src;
          for (int64_t j = 0; j < g.md; ++j) orow[irow[j]] = v;
        } else {
          walk(direct);
        }
      }
    });
    return;
  }

  // block mode
  const int64_t elem = kAcc ? 4 : static_cast<int64_t>(sizeof(T));
  constexpr int64_t kBudget = 512 << 10;  // bytes of targets per block (L2)
  int64_t B = std::clamp<int64_t>(kBudget / std::max<int64_t>(1, g.nd * elem), 1, g.inner);
  if (threads > 1 && g.outer * ((g.inner + B - 1) / B) < 2 * threads) {
    const int64_t parts = (2 * threads + g.outer - 1) / g.outer;
    B = std::max<int64_t>(1, (g.inner + parts - 1) / parts);
  }
  if (B < g.inner && B > 16) B = B / 16 * 16;
  const int64_t blocks = (g.inner + B - 1) / B;
  const int64_t items = g.outer * blocks;
  const int64_t per_item = std::max<int64_t>(1, g.md * B);
  const int64_t min_items = std::max<int64_t>(1, 16384 / per_item);
  const int64_t src_k = scalar ? 0 : 1;
  parallel_for(items, min_items, [&](int64_t begin, int64_t end) {
    std::unique_ptr<float[]> acc(kAcc ? new float[g.nd * B] : nullptr);
    std::vector<int64_t> ooff(g.inner_identity ? 0 : B), soff(g.inner_identity ? 0 : B);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, k0 = (item % blocks) * B, kn = std::min(B, g.inner - k0);
      T* obase = out + g.out_outer(o);
      const T* sbase = scalar ? src : src + g.src_outer(o);
      const I* ibase = idx + o * g.md * g.inner + k0;
      if (g.inner_identity) {
        obase += k0;
        sbase += k0 * src_k;
      } else {
        g.inner_offsets(k0, kn, ooff.data(), soff.data());
        if (scalar) std::fill(soff.begin(), soff.end(), 0);
      }
      auto walk = [&](auto&& f) {
        if (g.inner_identity) walk_block<T, I, true>(g, obase, sbase, ibase, kn, src_k, nullptr, nullptr, f);
        else walk_block<T, I, false>(g, obase, sbase, ibase, kn, src_k, ooff.data(), soff.data(), f);
      };
      if constexpr (kAcc) {
        float* ac = acc.get();
        walk([&](T& dst, const T&, int64_t t, int64_t k) { ac[t * B + k] = decode(dst); });
        walk([&](T&, const T& v, int64_t t, int64_t k) { ac[t * B + k] = combine<float, R>(ac[t * B + k], decode(v)); });
        walk([&](T& dst, const T&, int64_t t, int64_t k) { dst = encode(ac[t * B + k], T{}); });
      } else {
        walk(direct);
      }
    }
  });
}

template <class I, ScatterReduce R>
void dispatch_type(const ScatterArgs& a, const Geometry& g) {
  if constexpr (R == ScatterReduce::None) {
    visit_width(a.out.itemsize(), [&](auto wtag) { run<typename decltype(wtag)::type, I, R>(a, g); });
  } else {
    visit_dtype(a.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) run<T, I, R>(a, g);
      else if constexpr (kNeedsAccumulator<T>) run<T, I, R>(a, g);
      // bool and fp8 take reduce None only (validated before the kernel)
    });
  }
}

}  // namespace

bool has_internal_overlap(const Tensor& t) {
  if (t.numel() == 0) return false;
  std::vector<std::pair<int64_t, int64_t>> dims;  // |stride|, extent
  for (int i = 0; i < t.ndim(); ++i) {
    if (t.shape(i) <= 1) continue;
    if (t.stride(i) == 0) return true;
    dims.emplace_back(t.stride(i) < 0 ? -t.stride(i) : t.stride(i), t.shape(i));
  }
  std::sort(dims.begin(), dims.end());
  int64_t span = 0;  // largest offset reachable by the smaller-stride dims
  for (auto [stride, extent] : dims) {
    if (stride <= span) return true;
    span += stride * (extent - 1);
  }
  return false;
}

void scatter(const ScatterArgs& a) {
  if (a.index.numel() == 0) return;
  const Geometry g = geometry(a);
  visit_index_dtype(a.index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    switch (a.reduce) {
      case ScatterReduce::None: return dispatch_type<I, ScatterReduce::None>(a, g);
      case ScatterReduce::Add: return dispatch_type<I, ScatterReduce::Add>(a, g);
      case ScatterReduce::Multiply: return dispatch_type<I, ScatterReduce::Multiply>(a, g);
    }
  });
}

}  // namespace pto::kernels
