// index_add_ kernel (docs/ops/index_add.md). Integers, fp32 and fp64 apply each contribution
// in place, in index order; fp16 / bf16 accumulate every target in fp32 and round it once. This
// file is compiled with -ffp-contract=off (CMakeLists.txt) so that the compiler never fuses a
// product and a sum into one FMA.
//  * row mode (dim is the last axis): lines from 1 KiB on are taken in bands of kBand, each
//    index position applied to the band's lines side by side (independent chains, the index read
//    once per band) while the next band is prefetched; shorter lines one at a time (with at most
//    kFewPositions index positions, straight from the strides, no band setup). fp16 / bf16
//    accumulate in an fp32 copy of the band's targets (or, for very long lines, per target in
//    a register, the index grouped by target).
//  * block mode (axes after dim): a work item is (outer position, block of inner positions,
//    range of targets along dim). In place: the entries whose target lies in the range, in
//    index order, each adding a source run to its target run (vectorised per dtype). fp16 /
//    bf16: the index grouped by target; per target, the run enters fp32 accumulators, takes the
//    source runs of its contributions in index order (the next ones prefetched: they come in
//    target order, not memory order) and leaves rounded once.
#include "kernels/index_add.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "copy/simd.h"
#include "core/unaligned.h"
#include "kernels/scratch.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

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

// How a contribution is formed from its source value s: s itself, alpha * s, or alpha * s
// rounded to the dtype (fp16 / bf16 on the device's last-axis path; for the other dtypes the
// product is computed in the dtype anyway, so only the first two occur).
enum class Form { One, Scaled, ScaledRounded };

// The accumulator of one target element: its type A, how the target enters and leaves it, and
// one contribution. Alpha is alpha's compute type.
template <class T, class = void>
struct Acc {  // integers: wrap-around (unsigned arithmetic, no signed overflow)
  using A = T;
  using Alpha = T;
  using U = std::make_unsigned_t<T>;
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
  static A enter(T x) { return x; }
  static T leave(A x) { return x; }
  template <Form F>
  static A add(A x, T s, Alpha a) {
    const W v = F == Form::One ? W(U(s)) : W(W(U(a)) * W(U(s)));
    return static_cast<T>(static_cast<U>(W(U(x)) + v));
  }
};

template <class T>
struct Acc<T, std::enable_if_t<std::is_floating_point_v<T>>> {  // fp32 in fp32, fp64 in fp64: every step rounded
  using A = T;
  using Alpha = T;
  static A enter(T x) { return x; }
  static T leave(A x) { return x; }
  template <Form F>
  static A add(A x, T s, Alpha a) {
    return x + (F == Form::One ? s : a * s);
  }
};

template <class T>
struct Acc<T, std::enable_if_t<kHalf<T>>> {  // fp16 / bf16: an fp32 accumulator, rounded once when it leaves
  using A = float;
  using Alpha = float;
  static A enter(T x) { return widen(x); }
  static T leave(A x) { return narrow<T>(x); }
  template <Form F>
  static A add(A x, T s, Alpha a) {
    float v = widen(s);
    if constexpr (F == Form::Scaled) v = a * v;
    if constexpr (F == Form::ScaledRounded) v = widen(narrow<T>(a * v));
    return x + v;
  }
};

template <class T>
using AccOf = typename Acc<T>::A;
template <class T>
using AlphaOf = typename Acc<T>::Alpha;

template <class T>
AlphaOf<T> alpha_value(const void* p) {
  if constexpr (kHalf<T>) return widen(load_unaligned<T>(p));
  else return load_unaligned<T>(p);
}

// Runs over a block of inner positions (vectorised clones per target CPU).
template <class T, Form F>
PTO_SIMD_CLONES void add_run(AccOf<T>* acc, const T* src, int64_t n, AlphaOf<T> a) {
  for (int64_t k = 0; k < n; ++k) acc[k] = Acc<T>::template add<F>(acc[k], src[k], a);
}
template <class T>
PTO_SIMD_CLONES void enter_run(float* acc, const T* x, int64_t n) {
  for (int64_t k = 0; k < n; ++k) acc[k] = widen(x[k]);
}
template <class T>
PTO_SIMD_CLONES void leave_run(T* x, const float* acc, int64_t n) {
  for (int64_t k = 0; k < n; ++k) x[k] = narrow<T>(acc[k]);
}

// ---- the index grouped by target ----------------------------------------------------------

// The distinct targets in ascending order and, for each, the index positions naming it in
// ascending order: group u is order[start[u] .. start[u + 1]).
struct Groups {
  std::vector<int64_t> target, start, order;
};

template <class I>
Groups group_by_target(const I* idx, int64_t m, int64_t nd) {
  Groups g;
  g.order.resize(m);
  if (nd <= 4 * m + 4096) {  // a stable counting sort
    std::vector<int64_t> at(nd, 0);
    for (int64_t i = 0; i < m; ++i) ++at[idx[i]];
    int64_t pos = 0;
    for (int64_t t = 0; t < nd; ++t) {
      if (!at[t]) continue;
      g.target.push_back(t);
      g.start.push_back(pos);
      pos += std::exchange(at[t], pos);
    }
    for (int64_t i = 0; i < m; ++i) g.order[at[idx[i]]++] = i;
  } else {  // few positions on a long dim: sorting them costs less than a pass over the dim
    std::iota(g.order.begin(), g.order.end(), int64_t(0));
    std::stable_sort(g.order.begin(), g.order.end(), [idx](int64_t a, int64_t b) { return idx[a] < idx[b]; });
    for (int64_t j = 0; j < m; ++j) {
      if (j > 0 && idx[g.order[j]] == idx[g.order[j - 1]]) continue;
      g.target.push_back(idx[g.order[j]]);
      g.start.push_back(j);
    }
  }
  g.start.push_back(m);
  return g;
}

// ---- geometry: [outer axes..., dim, inner axes...] ----------------------------------------

struct Axes {
  std::vector<int64_t> shape, out_strides, src_strides;
  int64_t count = 1;
  // Offsets of position p (row-major over shape) in out and in source.
  void offsets(int64_t p, int64_t& o, int64_t& s) const {
    if (shape.size() == 1) {  // the common case: no division
      o = p * out_strides[0];
      s = p * src_strides[0];
      return;
    }
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
  int64_t m = 0, nd = 0, out_sd = 0, src_sd = 0;
  bool inner_dense = true;  // inner position k sits at offset k in out and in source
};

Geometry geometry(const IndexAddArgs& a) {
  Geometry g;
  const int r = a.out.ndim();
  g.m = a.index.numel();
  g.nd = a.out.shape(a.dim);
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

// What every work item reads. tpos: the target of each index position, in index order.
template <class T>
struct Job {
  T* out;
  const T* src;
  AlphaOf<T> a;
  const Geometry& g;
  const int64_t* tpos;
  const Groups* gr;  // fp16 / bf16 only
  Job(const IndexAddArgs& args, const Geometry& geo, const int64_t* targets, const Groups* groups)
      : out(args.out.data_as<T>()), src(args.source.data_as<const T>()), a(alpha_value<T>(args.alpha)), g(geo),
        tpos(targets), gr(groups) {}
};

// Work items: `units` units of targets (bands of lines, or (outer, block) pairs), each split
// into `ranges` ranges of target positions along dim when there are too few units for the
// threads (an item then applies only the contributions whose target lies in its range).
struct Items {
  int64_t units = 0, ranges = 1, nd = 0;
  int64_t count() const { return units * ranges; }
  int64_t t0(int64_t item) const { return nd * (item % ranges) / ranges; }
  int64_t t1(int64_t item) const { return nd * (item % ranges + 1) / ranges; }
};

Items items_for(int64_t units, int64_t nd) {
  const int threads = get_num_threads();
  Items it{units, 1, nd};
  if (threads > 1 && units < 2 * threads) it.ranges = std::min<int64_t>(nd, (2 * threads + units - 1) / units);
  return it;
}

inline void prefetch_lines(const void* p, int64_t bytes, int rw) {
  const char* c = static_cast<const char*>(p);
  for (int64_t o = 0; o < bytes; o += 64) {
    if (rw) __builtin_prefetch(c + o, 1);
    else __builtin_prefetch(c + o, 0);
  }
}

// ---- row mode -------------------------------------------------------------------------------
// Lines are taken in bands of kBand: for each index position in order, the band's lines take
// their contribution side by side (independent chains across the lines, each index value read
// once per band). fp16 / bf16 accumulate in an fp32 copy of the band's targets.

constexpr int kBand = 8;
// Up to this many index positions, short lines at one stride skip the band setup (measured: 4
// positions gain 20%, 16 break even, 64 lose 10% against the band loop below).
constexpr int64_t kFewPositions = 8;
// Lines from this size on are prefetched a band ahead: their targets are visited in index
// order, which no hardware prefetcher follows; shorter lines stream through it in order.
constexpr int64_t kPrefetchLineBytes = 1024;
// fp32 accumulators of one band (kBand lines of nd), per thread; longer lines take their
// contributions grouped by target instead.
constexpr int64_t kBandAccBytes = int64_t(1) << 20;
// Lines updated a multiple of this many bytes apart put a band's kBand updates of one index
// position in one L1 set and alias in the load / store queues; such lines go one at a time
// (docs/ops/index_add.md#speed; AMD EPYC, x [2048, 1024] fp32 += 4096 columns along dim 1:
// 5.9-7.1 -> 3.7-5.5 ms; lines 1000 wide keep the band, 3.9-5.3 ms against 4.3-5.5 one at a time).
constexpr int64_t kAliasingBytes = 4096;

// Issues, a few per index position, one prefetch per cache line of the next band's lines.
struct BandPrefetch {
  const char* line[2 * kBand];
  int64_t bytes[2 * kBand];
  int n = 0, r = 0;
  int64_t at = 0, per_step = 0;
  void add(const void* p, int64_t b, int64_t steps) {
    line[n] = static_cast<const char*>(p);
    bytes[n++] = b;
    per_step += (b / 64 + steps - 1) / steps;
  }
  void step() {
    for (int64_t k = 0; k < per_step && r < n; ++k) {
      __builtin_prefetch(line[r] + at, 1);
      if ((at += 64) >= bytes[r]) at = 0, ++r;
    }
  }
};

// The distinct targets of [t0, t1): groups [u0, u1).
inline void group_range(const Groups& gr, int64_t t0, int64_t t1, int64_t& u0, int64_t& u1) {
  u0 = std::lower_bound(gr.target.begin(), gr.target.end(), t0) - gr.target.begin();
  u1 = std::lower_bound(gr.target.begin(), gr.target.end(), t1) - gr.target.begin();
}

// kLines lines in index order; accumulators in place, or (kHalf) in acc[r * nd + t].
template <class T, Form F, int kLines>
__attribute__((always_inline)) inline void band_in_order(const Job<T>& job, T* const* lines, const T* const* slines,
                                                         float* acc, int64_t t0, int64_t t1, BandPrefetch* pf) {
  const Geometry& g = job.g;
  const int64_t osd = g.out_sd, ssd = g.src_sd, nd = g.nd, m = g.m;
  const bool all = t0 == 0 && t1 == nd;
  int64_t u0 = 0, u1 = 0;
  if constexpr (kHalf<T>) {
    group_range(*job.gr, t0, t1, u0, u1);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t t = job.gr->target[u];
      for (int r = 0; r < kLines; ++r) acc[r * nd + t] = Acc<T>::enter(lines[r][t * osd]);
    }
  }
  auto apply = [&](int64_t i_begin, int64_t i_end) __attribute__((always_inline)) {
    for (int64_t i = i_begin; i < i_end; ++i) {
      const int64_t t = job.tpos[i];
      if (!all && (t < t0 || t >= t1)) continue;
      for (int r = 0; r < kLines; ++r) {
        const T s = slines[r][i * ssd];
        if constexpr (kHalf<T>) acc[r * nd + t] = Acc<T>::template add<F>(acc[r * nd + t], s, job.a);
        else lines[r][t * osd] = Acc<T>::template add<F>(lines[r][t * osd], s, job.a);
      }
    }
  };
  if (pf) {
    constexpr int64_t kStep = 64;  // index positions per prefetch step
    for (int64_t i0 = 0; i0 < m; i0 += kStep) {
      pf->step();
      apply(i0, std::min(m, i0 + kStep));
    }
  } else {
    apply(0, m);
  }
  if constexpr (kHalf<T>) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t t = job.gr->target[u];
      for (int r = 0; r < kLines; ++r) lines[r][t * osd] = Acc<T>::leave(acc[r * nd + t]);
    }
  }
}

// One line of fp16 / bf16 too long for the band accumulators: per distinct target of
// [t0, t1), its contributions in index order in a register.
template <class T, Form F>
__attribute__((always_inline)) inline void line_grouped(const Job<T>& job, T* line, const T* sline, int64_t t0,
                                                        int64_t t1) {
  const Groups& gr = *job.gr;
  int64_t u0, u1;
  group_range(gr, t0, t1, u0, u1);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t t = gr.target[u] * job.g.out_sd;
    AccOf<T> x = Acc<T>::enter(line[t]);
    for (int64_t j = gr.start[u]; j < gr.start[u + 1]; ++j)
      x = Acc<T>::template add<F>(x, sline[gr.order[j] * job.g.src_sd], job.a);
    line[t] = Acc<T>::leave(x);
  }
}

// Items [begin, end) of row mode (one clone per target CPU: fp16 converts with F16C where the
// CPU has it).
template <class T, Form F>
PTO_SIMD_CLONES void rows_items(const Job<T>& job, const Items& items, int64_t begin, int64_t end, float* acc) {
  const Geometry& g = job.g;
  const int64_t lines = g.outer.count;
  const int64_t out_line = g.out_sd == 1 ? g.nd * static_cast<int64_t>(sizeof(T)) : 0;
  const int64_t src_line = g.src_sd == 1 ? g.m * static_cast<int64_t>(sizeof(T)) : 0;
  const bool long_lines = out_line >= kPrefetchLineBytes || g.out_sd != 1;
  const bool prefetch = items.ranges == 1 && out_line >= kPrefetchLineBytes;
  // the updated lines' distance: the targets' own, or fp16 / bf16 band accumulators' nd floats
  const int64_t line_stride = g.outer.shape.empty() ? 0 : g.outer.out_strides.back();
  const int64_t updated_apart = acc ? g.nd * static_cast<int64_t>(sizeof(float))
                                    : line_stride * static_cast<int64_t>(sizeof(T));
  const bool aliasing = g.out_sd == 1 && updated_apart != 0 && updated_apart % kAliasingBytes == 0;
  if constexpr (!kHalf<T>) {
    if (!long_lines && items.ranges == 1 && g.outer.shape.size() <= 1 && g.m <= kFewPositions) {
      // Short lines at one stride (a tall matrix) taking few index positions each, where the
      // per-line setup below would be most of the work: every line takes the positions in order,
      // its addresses computed from the strides alone (x [262144, 16] += 4 columns: 1.28 -> 1.0 ms).
      const int64_t os = g.outer.shape.empty() ? 0 : g.outer.out_strides[0];
      const int64_t ss = g.outer.shape.empty() ? 0 : g.outer.src_strides[0];
      const int64_t ssd = g.src_sd, m = g.m;
      const int64_t* const tpos = job.tpos;
      for (int64_t r = begin * kBand, r1 = std::min(end * kBand, lines); r < r1; ++r) {
        T* const line = job.out + r * os;
        const T* const sline = job.src + r * ss;
        for (int64_t i = 0; i < m; ++i) line[tpos[i]] = Acc<T>::template add<F>(line[tpos[i]], sline[i * ssd], job.a);
      }
      return;
    }
  }
  for (int64_t item = begin; item < end; ++item) {
    const int64_t band = item / items.ranges, t0 = items.t0(item), t1 = items.t1(item);
    const int64_t o0 = band * kBand, n = std::min<int64_t>(kBand, lines - o0);
    T* line[kBand];
    const T* sline[kBand];
    for (int64_t r = 0; r < n; ++r) {
      int64_t oo, so;
      g.outer.offsets(o0 + r, oo, so);
      line[r] = job.out + oo;
      sline[r] = job.src + so;
    }
    if (kHalf<T> && !acc) {
      for (int64_t r = 0; r < n; ++r) line_grouped<T, F>(job, line[r], sline[r], t0, t1);
      continue;
    }
    if (n < kBand || !long_lines || aliasing) {  // side by side they would cost more than they save
      for (int64_t r = 0; r < n; ++r) band_in_order<T, F, 1>(job, line + r, sline + r, acc, t0, t1, nullptr);
      continue;
    }
    BandPrefetch pf;
    const int64_t next = prefetch && item + 1 < end ? std::min<int64_t>(kBand, lines - o0 - kBand) : 0;
    const int64_t steps = (g.m + 63) / 64;
    for (int64_t r = 0; r < next; ++r) {
      int64_t oo, so;
      g.outer.offsets(o0 + kBand + r, oo, so);
      pf.add(job.out + oo, out_line, steps);
      if (src_line) pf.add(job.src + so, src_line, steps);
    }
    band_in_order<T, F, kBand>(job, line, sline, acc, t0, t1, next ? &pf : nullptr);
  }
}

template <class T, Form F>
void run_rows(const Job<T>& job) {
  const Geometry& g = job.g;
  const Items items = items_for((g.outer.count + kBand - 1) / kBand, g.nd);
  const bool band_acc = kHalf<T> && g.nd * kBand * static_cast<int64_t>(sizeof(float)) <= kBandAccBytes;
  const int64_t min_items = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, kBand * g.m / items.ranges));
  Scratch<float> acc(kBand * g.nd, band_acc);
  parallel_for(items.count(), min_items,
               [&](int64_t begin, int64_t end) { rows_items<T, F>(job, items, begin, end, acc.take()); });
}

// ---- block mode -----------------------------------------------------------------------------

// fp32 accumulators of one fp16 / bf16 block live on the stack.
constexpr int64_t kHalfBlock = 1024;

// Too few outer positions for the threads: a block of inner positions for each, unless the
// item ranges along dim can split the work (enough targets).
int64_t block_size(const Geometry& g, int64_t block) {
  const int threads = get_num_threads();
  if (threads > 1 && g.outer.count * ((g.inner.count + block - 1) / block) < 2 * threads) {
    const int64_t parts = (2 * threads + g.outer.count - 1) / g.outer.count;
    if (g.nd < 4 * parts) block = std::min(block, std::max<int64_t>(64, (g.inner.count + parts - 1) / parts / 16 * 16));
  }
  return block;
}

// Integers, fp32 and fp64: each item applies, in index order, the entries whose target lies in
// its range, straight to the target runs (the source rows are read in order).
template <class T, Form F>
void blocks_in_order(const Job<T>& job, const int64_t* inner_out, const int64_t* inner_src) {
  const Geometry& g = job.g;
  const int64_t block = block_size(g, g.inner.count);
  const int64_t blocks = (g.inner.count + block - 1) / block;
  const Items items = items_for(g.outer.count * blocks, g.nd);
  const int64_t min_items = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.m * block / items.ranges));
  parallel_for(items.count(), min_items, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t unit = item / items.ranges, b = unit % blocks, o = unit / blocks;
      const int64_t t0 = items.t0(item), t1 = items.t1(item);
      const int64_t k0 = b * block, kn = std::min(block, g.inner.count - k0);
      int64_t oo, so;
      g.outer.offsets(o, oo, so);
      for (int64_t i = 0; i < g.m; ++i) {
        const int64_t t = job.tpos[i];
        if (t < t0 || t >= t1) continue;
        T* dst = job.out + oo + t * g.out_sd;
        const T* s = job.src + so + i * g.src_sd;
        if (inner_out) {
          for (int64_t k = k0; k < k0 + kn; ++k)
            dst[inner_out[k]] = Acc<T>::template add<F>(dst[inner_out[k]], s[inner_src[k]], job.a);
        } else {
          add_run<T, F>(dst + k0, s + k0, kn, job.a);
        }
      }
    }
  });
}

// fp16 / bf16: per distinct target of an item's range, the block's run enters fp32
// accumulators, takes the source runs of its contributions in index order, and leaves rounded
// once; the source rows of the next contributions are prefetched (they come in target order).
template <class T, Form F>
void blocks_grouped(const Job<T>& job, const int64_t* inner_out, const int64_t* inner_src) {
  const Geometry& g = job.g;
  const Groups& gr = *job.gr;
  const int64_t block = block_size(g, std::min(g.inner.count, kHalfBlock));
  const int64_t blocks = (g.inner.count + block - 1) / block;
  const Items items = items_for(g.outer.count * blocks, g.nd);
  const int64_t run_bytes = std::min<int64_t>(block * static_cast<int64_t>(sizeof(T)), 1024);
  const int64_t min_items = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.m * block / items.ranges));
  constexpr int64_t kAhead = 4;  // contributions whose source runs are in flight
  parallel_for(items.count(), min_items, [&](int64_t begin, int64_t end) {
    alignas(64) float buf[kHalfBlock];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t unit = item / items.ranges, b = unit % blocks, o = unit / blocks;
      int64_t u0, u1;
      group_range(gr, items.t0(item), items.t1(item), u0, u1);
      const int64_t k0 = b * block, kn = std::min(block, g.inner.count - k0);
      int64_t oo, so;
      g.outer.offsets(o, oo, so);
      T* obase = job.out + oo + (inner_out ? 0 : k0);
      const T* sbase = job.src + so + (inner_out ? 0 : k0);
      const int64_t j_end = gr.start[u1];
      for (int64_t u = u0; u < u1; ++u) {
        T* dst = obase + gr.target[u] * g.out_sd;
        if (inner_out) {
          for (int64_t k = k0; k < k0 + kn; ++k) {
            float x = Acc<T>::enter(dst[inner_out[k]]);
            for (int64_t j = gr.start[u]; j < gr.start[u + 1]; ++j)
              x = Acc<T>::template add<F>(x, sbase[gr.order[j] * g.src_sd + inner_src[k]], job.a);
            dst[inner_out[k]] = Acc<T>::leave(x);
          }
          continue;
        }
        if (u + 2 < u1) prefetch_lines(obase + gr.target[u + 2] * g.out_sd, run_bytes, 1);
        enter_run(buf, dst, kn);
        for (int64_t j = gr.start[u]; j < gr.start[u + 1]; ++j) {
          if (j + kAhead < j_end) prefetch_lines(sbase + gr.order[j + kAhead] * g.src_sd, run_bytes, 0);
          add_run<T, F>(buf, sbase + gr.order[j] * g.src_sd, kn, job.a);
        }
        leave_run(dst, buf, kn);
      }
    }
  });
}

template <class T, Form F>
void run_blocks(const Job<T>& job) {
  const Geometry& g = job.g;
  // Inner offsets of a strided layout, computed once for all items.
  std::unique_ptr<int64_t[]> inner_out, inner_src;
  if (!g.inner_dense) {
    inner_out.reset(new int64_t[g.inner.count]);
    inner_src.reset(new int64_t[g.inner.count]);
    for (int64_t k = 0; k < g.inner.count; ++k) g.inner.offsets(k, inner_out[k], inner_src[k]);
  }
  if constexpr (kHalf<T>) blocks_grouped<T, F>(job, inner_out.get(), inner_src.get());
  else blocks_in_order<T, F>(job, inner_out.get(), inner_src.get());
}

template <class T, Form F>
void run(const IndexAddArgs& args, const Geometry& g, const int64_t* tpos, const Groups* gr) {
  const Job<T> job(args, g, tpos, gr);
  if (g.inner.count == 1) run_rows<T, F>(job);
  else run_blocks<T, F>(job);
}

}  // namespace

void index_add(const IndexAddArgs& args) {
  if (args.index.numel() == 0 || args.out.numel() == 0) return;
  const Geometry g = geometry(args);
  // The targets in index order as int64 (an int64 index is read in place); fp16 / bf16 also
  // group them by target.
  std::vector<int64_t> converted;
  const bool half = args.out.dtype() == DType::FP16 || args.out.dtype() == DType::BF16;
  Groups groups;
  const int64_t* tpos = visit_index_dtype(args.index.dtype(), [&](auto itag) -> const int64_t* {
    using I = typename decltype(itag)::type;
    const I* idx = args.index.data_as<I>();
    if (half) groups = group_by_target(idx, g.m, g.nd);
    if constexpr (std::is_same_v<I, int64_t>) {
      return idx;
    } else {
      converted.assign(idx, idx + g.m);
      return converted.data();
    }
  });
  visit_dtype(args.out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    // bool and fp8 take no index_add (validated before the kernel)
    if constexpr ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) || kHalf<T>) {
      if (args.alpha_is_one) {
        run<T, Form::One>(args, g, tpos, &groups);
      } else if constexpr (kHalf<T>) {
        if (args.round_product) run<T, Form::ScaledRounded>(args, g, tpos, &groups);
        else run<T, Form::Scaled>(args, g, tpos, &groups);
      } else {
        run<T, Form::Scaled>(args, g, tpos, &groups);
      }
    }
  });
}

}  // namespace pto::kernels
