// The reduction and scan engines (docs/ops/reduction.md#order).
//
// Reduce: the kept dims are coalesced; then either
//  - rows (the reduced axis is the innermost in memory): each row is cut into chunks of kChunk
//    elements; element i of a chunk goes to lane i % kLanes, each lane accumulates its elements in
//    order from the identity, the lanes are folded by halving (lane j with lane j + 16, then + 8,
//    ...), and the chunks are combined by a pairwise tree;
//  - columns (another axis is innermost): the reduced axis is cut into blocks of kRowBlock rows,
//    each accumulated in order from the identity, vectorised across the innermost kept axis; the
//    blocks are combined by the same pairwise tree.
// Threads take rows, (row, chunk) pairs or (columns, block) pieces; every piece is computed the
// same way whoever computes it, so 1 and N threads give the same bits.
//
// Scan: the axis is cut into blocks of kScanBlock; within a block the running value starts at the
// identity, element by element; block k's outputs are offset_k (+) local value, offset_0 = the
// identity, offset_k+1 = offset_k (+) the block's last local value. Few long lines are scanned in
// three parallel passes (block totals, offsets, outputs), many lines one pass each; both give the
// same bits.
#include "kernels/reduction.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "copy/simd.h"
#include "core/half_lanes.h"
#include "kernels/arithmetic.h"
#include "kernels/elementwise.h"
#include "ptocpu/parallel.h"

#if PTO_X86
#include <immintrin.h>
#endif

namespace pto::kernels::reduction {
namespace {

using ew::compute_t;
using ew::kBlock;

// Rows up to this long go through the lanes a group of rows at a time, one element per lane.
constexpr int64_t kShortRow = kLanes;
// Work below this many elements per thread is not worth a thread's start-up.
constexpr int64_t kMinElementsPerThread = int64_t(1) << 16;
// Columns per piece: 16 KiB of accumulators, so they and the row being read stay in L1 and a
// matrix up to 4096 fp32 columns wide is read row after row, in one stream.
constexpr int64_t kColumnBytes = 16384;
template <class Acc>
constexpr int64_t kColumnWidth = kColumnBytes / static_cast<int64_t>(sizeof(Acc));
// Row segments that do not follow each other in memory are prefetched this many rows ahead (the
// hardware prefetchers stop at page boundaries).
constexpr int64_t kPrefetchRows = 4;
// Only segments up to this long: the hardware streams a longer one once it has read into it, and
// prefetching all its lines stalls on the fill buffers (measured: amax over dim 1 of [16, 16, 65536]
// fp32 1.98 -> 1.49 ms without them; segments of 256 bytes still gain).
constexpr int64_t kPrefetchedSegment = 2048;
// A block's contiguous rows wider than a strip are read a strip at a time down all the rows
// (column_block): 2 KiB strips, 512 B when the block has at most kFewRows rows (fewer streams, each
// visited more often), and 256 B strips accumulated in registers when the input is read in place.
constexpr int64_t kStrip = 2048, kFewRowsStrip = 512, kRegisterStrip = 256;
constexpr int64_t kFewRows = 32;

// Where kernel_tuning().prefetch_streams (docs/kernels.md#prefetching).
void prefetch(const std::byte* p, int64_t bytes) {
  if (bytes <= kPrefetchedSegment && kernel_tuning().prefetch_streams) prefetch_bytes(p, bytes);
}

// Where kernel_tuning().prefetch_streams (docs/kernels.md#prefetching), a span read in one stream
// asks for the lines this far ahead at each vector step: on the Ice Lake Xeon where this was
// measured the hardware prefetchers alone kept too few lines in flight to read one core's stream at
// memory speed (amax of 16M fp32 from memory on one thread: 5.8 -> 4.3 ms; on two 3.0 -> 2.3 ms).
constexpr int64_t kStreamAhead = 2048;
template <class T>
[[gnu::always_inline]] inline void prefetch_ahead(const T* p) {
  prefetch_bytes(reinterpret_cast<const char*>(p) + kStreamAhead, kLanes * static_cast<int64_t>(sizeof(T)));
}

// ---- layout ---------------------------------------------------------------------------------

constexpr size_t kMaxRank = 8;  // the cpu platform's largest rank

// One kept dim: its extent and the strides (elements) of the input, the output and var's center.
struct Axis {
  int64_t size = 1, in = 0, out = 0, ctr = 0;
};

struct Layout {
  std::vector<Axis> outer;  // the kept dims the walk goes over, outermost first
  int64_t n = 0;            // the reduced / scanned axis: extent,
  int64_t red = 0;          // input stride,
  int64_t out_red = 0;      // output stride (scans)
  bool columns = false;     // another axis is innermost: read as columns
  Axis col;                 // that axis (columns only)
};

Layout plan(const Tensor& in, int dim, const Tensor& out, const Tensor& ctr) {
  Layout l;
  for (int d = 0; d < in.ndim(); ++d) {
    if (d == dim || in.shape(d) == 1) continue;
    const Axis a{in.shape(d), in.stride(d), out.stride(d), ctr.defined() ? ctr.stride(d) : 0};
    if (!l.outer.empty()) {
      Axis& b = l.outer.back();
      if (b.in == a.in * a.size && b.out == a.out * a.size && b.ctr == a.ctr * a.size) {
        b = {b.size * a.size, a.in, a.out, a.ctr};
        continue;
      }
    }
    l.outer.push_back(a);
  }
  l.n = in.shape(dim);
  l.red = in.stride(dim);
  l.out_red = out.stride(dim);
  if (l.n > 1 && !l.outer.empty()) {
    const auto inner = std::min_element(l.outer.begin(), l.outer.end(), [](const Axis& a, const Axis& b) {
      return std::abs(a.in) < std::abs(b.in);
    });
    if (std::abs(inner->in) < std::abs(l.red)) {
      l.columns = true;
      l.col = *inner;
      l.outer.erase(inner);
    }
  }
  return l;
}

int64_t count(const std::vector<Axis>& axes) {
  int64_t n = 1;
  for (const Axis& a : axes) n *= a.size;
  return n;
}

// Element offsets of the flattened index `at` over `axes`, advanced one index at a time. No
// allocation: made once per piece of work.
class Walk {
 public:
  Walk(const std::vector<Axis>& axes, int64_t at) : axes_(axes) {
    for (int d = static_cast<int>(axes.size()) - 1; d >= 0; --d) {
      idx_[d] = at % axes[d].size;
      at /= axes[d].size;
      in += idx_[d] * axes[d].in;
      out += idx_[d] * axes[d].out;
      ctr += idx_[d] * axes[d].ctr;
    }
  }
  void next() {
    for (int d = static_cast<int>(axes_.size()) - 1; d >= 0; --d) {
      const Axis& a = axes_[d];
      in += a.in, out += a.out, ctr += a.ctr;
      if (++idx_[d] < a.size) return;
      in -= a.in * a.size, out -= a.out * a.size, ctr -= a.ctr * a.size;
      idx_[d] = 0;
    }
  }
  int64_t in = 0, out = 0, ctr = 0;

 private:
  const std::vector<Axis>& axes_;
  std::array<int64_t, kMaxRank> idx_{};
};

// The largest power of two below n (n >= 2): where the pairwise tree splits.
int64_t tree_split(int64_t n) { return std::bit_floor(static_cast<uint64_t>(n - 1)); }

// ---- keys: floats in a total order (docs/ops/reduction.md#nan-and-signed-zeros) ------------------

template <class F>
using Key = std::conditional_t<sizeof(F) == 4, int32_t, int64_t>;

// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN as signed integers; its own inverse.
template <class K>
K flip(K bits) {
  return bits ^ ((bits >> (8 * sizeof(K) - 1)) & std::numeric_limits<K>::max());
}
template <class F>
Key<F> order_key(F v) { return flip(std::bit_cast<Key<F>>(v)); }
template <class F>
F from_key(Key<F> k) { return std::bit_cast<F>(flip(k)); }
// Whether a float's bits are a NaN's (a magnitude past infinity's): a compare, no branch, so that
// loops over it vectorise (with `v != v` GCC branched per element).
template <class F>
bool nan_bits(Key<F> bits) {
  return (bits & std::numeric_limits<Key<F>>::max()) > std::bit_cast<Key<F>>(std::numeric_limits<F>::infinity());
}

// ---- the ops: identity, step (one element), combine (two partial results), result ------------

template <class T>
inline constexpr bool kFloat = std::is_floating_point_v<T>;

// sum (kProduct false) and prod: floats add / multiply, integers wrap.
template <class T, bool kProduct>
struct Fold {
  // Integers wrap, which gives the same bits signed or unsigned: reduce() runs signed ones as the
  // unsigned type of their width (ew::kernel_t), one build for both.
  static constexpr bool kSignless = true;
  using In = T;
  using Acc = T;
  using Res = T;
  static Acc identity() { return kProduct ? T(1) : T(0); }
  static Acc combine(Acc a, Acc b) {
    if constexpr (kFloat<T>) return kProduct ? a * b : a + b;
    else if constexpr (kProduct) return arith::wrap_mul(a, b);
    else return arith::wrap_add(a, b);
  }
  static Acc step(Acc a, In v, int64_t) { return combine(a, v); }
  static Res result(Acc a) { return a; }
};
template <class T>
using Sum = Fold<T, false>;
template <class T>
using Prod = Fold<T, true>;

// ---- where a span's values come from ---------------------------------------------------------------

// The compute type, read in place.
template <class T>
struct InPlace {
  using Value = T;
  const T* __restrict v;
  bool ahead;  // kernel_tuning().prefetch_streams: the span asks for its lines ahead
  // Values [i, i + kLanes).
  [[gnu::always_inline]] const T* block(int64_t i, T*) const { return v + i; }
  [[gnu::always_inline]] T at(int64_t i) const { return v[i]; }
};

// fp16 / bf16 values widened to fp32 a block of lanes at a time, in registers, by Conv (a
// half::lanes struct): the span is read once, with no fp32 copy written and read back
// (docs/ops/reduction.md#speed). The same values as the buffered widen, so the same bits.
template <class S, class Conv>
struct Widened {
  using Value = float;
  const S* __restrict v;
  bool ahead;  // kernel_tuning().prefetch_streams: the span asks for its lines ahead
  [[gnu::always_inline]] const float* block(int64_t i, float* lanes) const {
    for (int64_t k = 0; k < kLanes; k += Conv::kLanes) Conv::widen(v + i + k, lanes + k);
    return lanes;
  }
  [[gnu::always_inline]] float at(int64_t i) const { return half::widen(v[i]); }
};

// ---- spans of an extreme: the value in one vector pass, then where it is -------------------------

// The largest (kMax) or smallest value of v[0, m) (m >= 1) by plain comparisons: a NaN is never
// taken (it is reported in `nan`), equal values (-0 and +0) keep the one found first in its lane.
template <bool kMax, class Src, class T = typename Src::Value>
[[gnu::always_inline]] inline T extreme_of(const Src& src, int64_t m, bool& nan) {
  constexpr T start = kFloat<T> ? (kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity())
                                : (kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max());
  T b[kLanes];
  int32_t odd[kLanes];
  for (int j = 0; j < kLanes; ++j) b[j] = start, odd[j] = 0;
  int64_t i = 0;
  alignas(64) T widened[kLanes];
  for (; i + kLanes <= m; i += kLanes) {
    if (src.ahead) prefetch_ahead(src.v + i);
    const T* v = src.block(i, widened);
    for (int j = 0; j < kLanes; ++j) {
      const T x = v[j];
      b[j] = (kMax ? x > b[j] : x < b[j]) ? x : b[j];
      odd[j] |= x != x;
    }
  }
  for (int j = 0; i + j < m; ++j) {
    const T x = src.at(i + j);
    b[j] = (kMax ? x > b[j] : x < b[j]) ? x : b[j];
    odd[j] |= x != x;
  }
  const auto halve = [&](int half) {
#pragma GCC unroll 0  // as in lanes(): a level stays one vector step
    for (int j = 0; j < half; ++j) {
      b[j] = (kMax ? b[j + half] > b[j] : b[j + half] < b[j]) ? b[j + half] : b[j];
      odd[j] |= odd[j + half];
    }
  };
  static_assert(kLanes == 32);
  halve(16), halve(8), halve(4), halve(2), halve(1);
  nan = odd[0] != 0;
  return b[0];
}

// The first i in [0, m) with pick(v[i]), m if there is none.
template <class Src, class Pick>
[[gnu::always_inline]] inline int64_t first_of(const Src& src, int64_t m, Pick pick) {
  alignas(64) typename Src::Value widened[kLanes];
  int64_t i = 0;
  for (; i + kLanes <= m; i += kLanes) {
    const auto* v = src.block(i, widened);
    uint32_t hits = 0;
    for (int j = 0; j < kLanes; ++j) hits |= static_cast<uint32_t>(pick(v[j])) << j;
    if (hits) return i + std::countr_zero(hits);
  }
  while (i < m && !pick(src.at(i))) ++i;
  return i;
}

// max / min: integers compare as themselves; floats by order_key with every NaN mapped past the
// far end, so any NaN wins and the result is the default quiet NaN; -0 < +0.
template <class T, bool kMax>
struct Extreme {
  using In = T;
  using Acc = std::conditional_t<kFloat<T>, Key<T>, T>;
  using Res = T;
  static constexpr Acc kLow = std::numeric_limits<Acc>::lowest(), kHigh = std::numeric_limits<Acc>::max();
  static constexpr bool kLargest = kMax;
  static Acc identity() { return kMax ? kLow : kHigh; }
  static Acc combine(Acc a, Acc b) { return kMax ? (b > a ? b : a) : (b < a ? b : a); }
  static Acc step(Acc a, In v, int64_t) {
    if constexpr (kFloat<T>) {
      // NaN told by its bits, both sides computed (amax over dim 1 of [16384, 256, 3] fp32 with
      // `v != v`: 8.6 -> 6.0 ms).
      const Acc bits = std::bit_cast<Acc>(v);
      return combine(a, nan_bits<T>(bits) ? (kMax ? kHigh : kLow) : flip(bits));
    } else {
      return combine(a, v);
    }
  }
  static Res result(Acc a) {
    if constexpr (kFloat<T>) {
      if (a == (kMax ? kHigh : kLow)) return std::numeric_limits<T>::quiet_NaN();
      return from_key<T>(a);
    } else {
      return a;
    }
  }
  // A float span at once: the extreme by comparisons, then the rules the comparisons miss (a
  // NaN wins; between zeros +0 is the larger), looked at only where they can apply.
  template <class Src>
  [[gnu::always_inline]] static Acc span(const Src& src, int64_t m, int64_t) requires kFloat<T> {
    bool nan = false;
    T x = extreme_of<kMax>(src, m, nan);
    if (nan) return kMax ? kHigh : kLow;
    if (x == 0) {
      const bool preferred = first_of(src, m, [](T y) { return y == 0 && std::signbit(y) != kMax; }) < m;
      x = preferred ? (kMax ? T(0) : -T(0)) : (kMax ? -T(0) : T(0));
    }
    return order_key(x);
  }
};

// argmax / argmin: the key in the high half, the index in the low half, so that one max / min
// picks the largest (smallest) value and, among equal ones, the first index. Floats: -0 equals +0,
// NaN wins (the first NaN).
template <class T>
using ArgKey = std::conditional_t<kFloat<T>, Key<T>, std::conditional_t<(sizeof(T) < 4 || std::is_same_v<T, int32_t>), int32_t, int64_t>>;
template <class T>
using Packed = std::conditional_t<sizeof(ArgKey<T>) == 4, int64_t, __int128>;

template <class T, bool kMax>
struct Arg {
  using In = T;
  using Acc = Packed<T>;
  using Res = int32_t;
  using K = ArgKey<T>;
  using U = std::conditional_t<sizeof(Acc) == 8, uint64_t, unsigned __int128>;
  static constexpr int kShift = 8 * sizeof(K);
  static constexpr Acc kLowest = static_cast<Acc>(U(1) << (8 * sizeof(Acc) - 1));
  static constexpr Acc kHighest = static_cast<Acc>(~static_cast<U>(kLowest));
  static Acc identity() { return kMax ? kLowest : kHighest; }
  static Acc combine(Acc a, Acc b) { return kMax ? (b > a ? b : a) : (b < a ? b : a); }
  static K key(In v) {
    if constexpr (kFloat<T>) {
      // NaN told by its bits, both sides computed (argmax over dim 1 of [8192, 1024, 2] fp32 with
      // `v != v`: 14.4 -> 2.7 ms).
      const K nan = kMax ? std::numeric_limits<K>::max() : std::numeric_limits<K>::lowest();
      const K bits = std::bit_cast<K>(static_cast<T>(v + T(0)));  // -0 + 0 = +0
      return nan_bits<T>(bits) ? nan : flip(bits);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      return static_cast<K>(v ^ (uint64_t(1) << 63));
    } else {
      return static_cast<K>(v);
    }
  }
  static Acc step(Acc a, In v, int64_t idx) { return combine(a, packed(key(v), idx)); }
  static Res result(Acc a) {
    const uint32_t low = static_cast<uint32_t>(a);
    return static_cast<Res>(kMax ? 0xFFFFFFFFu - low : low);
  }

  // Columns keep the key and the index apart (vectors of keys, no packing per element).
  static constexpr K kWorst = kMax ? std::numeric_limits<K>::lowest() : std::numeric_limits<K>::max();
  static bool better(K a, K b) { return kMax ? a > b : a < b; }

  // A span at once: its extreme by comparisons, then the first index holding it (the first NaN
  // when there is one).
  template <class Src>
  [[gnu::always_inline]] static Acc span(const Src& src, int64_t m, int64_t idx0) {
    bool nan = false;
    const T x = extreme_of<kMax>(src, m, nan);
    const int64_t i =
        nan ? first_of(src, m, [](T y) { return y != y; }) : first_of(src, m, [x](T y) { return y == x; });
    return packed(key(src.at(i)), idx0 + i);
  }
  // Row `idx` of w columns through column_step.
  PTO_SIMD_CLONES static void update(K* __restrict keys, int32_t* __restrict at, const In* __restrict v, int64_t w,
                                     int32_t idx) {
    for (int64_t c = 0; c < w; ++c) column_step(keys[c], at[c], v[c], idx);
  }
  // A column's next value v at row idx: a strictly better key replaces the column's best (the first
  // index stays).
  [[gnu::always_inline]] static void column_step(K& best, int32_t& at, In v, int32_t idx) {
    const K k = key(v);
    const bool take = better(k, best);
    best = take ? k : best;
    at = take ? idx : at;
  }
  static Acc packed(K k, int64_t idx) {
    const U low = kMax ? U(0xFFFFFFFFu) - static_cast<U>(idx) : static_cast<U>(idx);
    return static_cast<Acc>((static_cast<U>(static_cast<Acc>(k)) << kShift) | low);
  }
};

template <class P>
inline constexpr bool kIndexed = requires { P::kWorst; };
// Ops that take a span at once (two passes over it in L1) rather than element by element.
template <class P>
inline constexpr bool kSpanWise = requires(const InPlace<typename P::In>& v) { P::span(v, int64_t(1), int64_t(0)); };

// ---- vectorised loops ---------------------------------------------------------------------------

// v[0, m) through the lanes: lane j accumulates v[i] for i % kLanes == j in order from the
// identity, then the lanes fold by halving (lane j with lane j + 16, then + 8, ..., + 1). One
// function, so that the lanes stay in registers or in same-width stores.
template <class P, class Src>
[[gnu::always_inline]] inline typename P::Acc lanes(const Src& src, int64_t m, int64_t idx0) {
  using Acc = typename P::Acc;
  static_assert(kLanes == 32);
  Acc acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = P::identity();
  alignas(64) typename Src::Value widened[kLanes];
  int64_t i = 0;
  for (; i + kLanes <= m; i += kLanes) {
    if (src.ahead) prefetch_ahead(src.v + i);
    const auto* v = src.block(i, widened);
    for (int j = 0; j < kLanes; ++j) acc[j] = P::step(acc[j], v[j], idx0 + i + j);
  }
  for (int j = 0; i + j < m; ++j) acc[j] = P::step(acc[j], src.at(i + j), idx0 + i + j);
  // Not unrolled before the vectoriser sees them: unrolled, each level becomes scalar steps.
#pragma GCC unroll 0
  for (int j = 0; j < 16; ++j) acc[j] = P::combine(acc[j], acc[j + 16]);
#pragma GCC unroll 0
  for (int j = 0; j < 8; ++j) acc[j] = P::combine(acc[j], acc[j + 8]);
#pragma GCC unroll 0
  for (int j = 0; j < 4; ++j) acc[j] = P::combine(acc[j], acc[j + 4]);
  for (int j = 0; j < 2; ++j) acc[j] = P::combine(acc[j], acc[j + 2]);
  return P::combine(acc[0], acc[1]);
}

// A span of a row: through the lanes, or at once for the ops that take spans.
template <class P, class Src>
[[gnu::always_inline]] inline typename P::Acc one_span(const Src& src, int64_t m, int64_t idx0) {
  if constexpr (kSpanWise<P>) return P::span(src, m, idx0);
  else return lanes<P>(src, m, idx0);
}

template <class P>
PTO_SIMD_CLONES typename P::Acc span_of(const typename P::In* v, int64_t m, int64_t idx0) {
  return one_span<P>(InPlace<typename P::In>{v, kernel_tuning().prefetch_streams}, m, idx0);
}

// `rows` rows of n values one after another, each a span.
template <class P>
PTO_SIMD_CLONES void spans_of_rows(typename P::Acc* out, const typename P::In* v, int64_t rows, int64_t n) {
  const bool ahead = kernel_tuning().prefetch_streams;
  for (int64_t r = 0; r < rows; ++r) out[r] = one_span<P>(InPlace<typename P::In>{v + r * n, ahead}, n, 0);
}

// `rows` rows of n fp16 / bf16 values one after another (S), each a span from index idx0, widened
// in registers; one build per instruction set that has the conversion.
template <class P>
using WidenedSpansFn = void (*)(typename P::Acc* out, const std::byte* v, int64_t rows, int64_t n, int64_t idx0);
template <class P, class S, class Conv>
[[gnu::always_inline]] inline void widened_spans(typename P::Acc* out, const std::byte* v, int64_t rows, int64_t n,
                                                 int64_t idx0) {
  const S* s = reinterpret_cast<const S*>(v);
  const bool ahead = kernel_tuning().prefetch_streams;
  for (int64_t r = 0; r < rows; ++r) out[r] = one_span<P>(Widened<S, Conv>{s + r * n, ahead}, n, idx0);
}
template <class P>
PTO_SIMD_CLONES void widened_spans_bf16(typename P::Acc* out, const std::byte* v, int64_t rows, int64_t n,
                                        int64_t idx0) {
  widened_spans<P, bf16_t, half::lanes::Bf16>(out, v, rows, n, idx0);
}
#if PTO_X86
template <class P>
PTO_TARGET_AVX512 void widened_spans_avx512(typename P::Acc* out, const std::byte* v, int64_t rows, int64_t n,
                                            int64_t idx0) {
  widened_spans<P, fp16_t, half::lanes::Avx512>(out, v, rows, n, idx0);
}
template <class P>
PTO_TARGET_F16C void widened_spans_f16c(typename P::Acc* out, const std::byte* v, int64_t rows, int64_t n,
                                        int64_t idx0) {
  widened_spans<P, fp16_t, half::lanes::F16c>(out, v, rows, n, idx0);
}
#endif

// The widened spans for an fp16 / bf16 input read as fp32 (null: the buffered path).
template <class P>
WidenedSpansFn<P> widened_spans_for(DType input) {
  if constexpr (std::is_same_v<typename P::In, float>) {
    if (input == DType::BF16) return &widened_spans_bf16<P>;
#if PTO_X86
    if (input == DType::FP16) {
      const Isa isa = kernel_tuning().isa;
      if (isa == Isa::Avx512) return &widened_spans_avx512<P>;
      if (isa == Isa::Avx2 && __builtin_cpu_supports("f16c")) return &widened_spans_f16c<P>;
    }
#endif
  }
  return nullptr;
}

// Rows [0, rows) of n <= kLanes values one after another into lanes, row g into column first + g:
// lane j holds element j of its row (taken from the identity).
template <class P, int64_t kGroup>
PTO_SIMD_CLONES void spread(typename P::Acc (*__restrict lanes)[kGroup], const typename P::In* __restrict v,
                            int64_t rows, int64_t n, int64_t first) {
  for (int64_t g = 0; g < rows; ++g)
    for (int64_t j = 0; j < n; ++j) lanes[j][first + g] = P::step(P::identity(), v[g * n + j], j);
}

// As spread, for kGroup whole rows of N values: with the sizes known the compiler vectorises the
// transpose (rows of 2 to 8; of 16 the generic spread measured faster; two threads, 8M fp32 over
// rows of 3: sum 8.0 -> 1.1 ms, amax 8.5 -> 1.5 ms, torch 10.6 and 6.0).
template <class P, int64_t kGroup, int N>
PTO_SIMD_CLONES void spread_whole(typename P::Acc (*__restrict lanes)[kGroup], const typename P::In* __restrict v) {
  for (int j = 0; j < N; ++j)
    for (int64_t g = 0; g < kGroup; ++g) lanes[j][g] = P::step(P::identity(), v[g * N + j], j);
}

// As accumulate, for w == kW: the accumulators stay in registers across the rows.
template <class P, int kW>
PTO_SIMD_CLONES void accumulate_narrow(typename P::Acc* __restrict acc, const typename P::In* __restrict v,
                                       int64_t rows, int64_t r0) {
  typename P::Acc a[kW];
  for (int c = 0; c < kW; ++c) a[c] = acc[c];
  for (int64_t i = 0; i < rows; ++i)
    for (int c = 0; c < kW; ++c) a[c] = P::step(a[c], v[i * kW + c], r0 + i);
  for (int c = 0; c < kW; ++c) acc[c] = a[c];
}

// `rows` rows of w values one after another, row r0 + i the i-th: acc[c] accumulates column c.
template <class P>
PTO_SIMD_CLONES void accumulate(typename P::Acc* __restrict acc, const typename P::In* __restrict v, int64_t rows,
                                int64_t w, int64_t r0) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < w; ++c) acc[c] = P::step(acc[c], v[i * w + c], r0 + i);
}

template <class P>
inline constexpr bool kFloatExtreme = false;
template <class T, bool kMax>
inline constexpr bool kFloatExtreme<Extreme<T, kMax>> = kFloat<T>;

// accumulate_strip for float amax / amin: the values compared as floats (one max or min a vector,
// where the order keys took five more steps: amax over dim 1 of [16, 16, 256, 256] fp32 ran at
// 1.5x sum's time), with what the comparison misses kept beside it: a NaN seen, and the sign bits
// ANDed (amax) or ORed (amin). A column whose extreme is a zero is the larger (smaller) zero
// exactly when some zero has that sign: the sign bits decide, as all its values are <= 0 (>= 0).
// The result is Extreme's key, the same as step by step.
template <class P, int kW>
PTO_SIMD_CLONES void accumulate_strip_floats(typename P::Acc* __restrict acc, const typename P::In* __restrict v,
                                             int64_t stride, int64_t r0, int64_t r1, bool ahead) {
  using T = typename P::In;
  using K = typename P::Acc;
  constexpr bool kMax = P::kLargest;
  constexpr K kNanKey = kMax ? P::kHigh : P::kLow, kSign = std::numeric_limits<K>::min();
  const T far = kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  T a[kW];
  K signs[kW], nan[kW];
  for (int c = 0; c < kW; ++c) {
    nan[c] = acc[c] == kNanKey ? -1 : 0;
    a[c] = acc[c] == P::identity() || nan[c] ? far : from_key<T>(acc[c]);
    signs[c] = std::bit_cast<K>(a[c]);
  }
  for (int64_t r = r0; r < r1; ++r, v += stride) {
    if (ahead && r + 1 < r1) prefetch_bytes(v + stride, kW * static_cast<int64_t>(sizeof(*v)));
    for (int c = 0; c < kW; ++c) {
      const T x = v[c];
      a[c] = kMax ? (x > a[c] ? x : a[c]) : (x < a[c] ? x : a[c]);  // a NaN x leaves a[c]
      nan[c] |= x != x ? K(-1) : K(0);
      signs[c] = kMax ? signs[c] & std::bit_cast<K>(x) : signs[c] | std::bit_cast<K>(x);
    }
  }
  for (int c = 0; c < kW; ++c) {
    const T x = a[c] == 0 ? std::bit_cast<T>(signs[c] & kSign) : a[c];
    acc[c] = nan[c] ? kNanKey : order_key(x);
  }
}

// Rows [r0, r1) of kW columns, `stride` elements apart from v: acc[c] accumulates column c in
// registers, the next row's columns asked for ahead when `ahead` (kernel_tuning().prefetch_streams).
template <class P, int kW>
PTO_SIMD_CLONES void accumulate_strip(typename P::Acc* __restrict acc, const typename P::In* __restrict v,
                                      int64_t stride, int64_t r0, int64_t r1, bool ahead) {
  typename P::Acc a[kW];
  for (int c = 0; c < kW; ++c) a[c] = acc[c];
  for (int64_t r = r0; r < r1; ++r, v += stride) {
    if (ahead && r + 1 < r1) prefetch_bytes(v + stride, kW * static_cast<int64_t>(sizeof(*v)));
    for (int c = 0; c < kW; ++c) a[c] = P::step(a[c], v[c], r);
  }
  for (int c = 0; c < kW; ++c) acc[c] = a[c];
}

// As accumulate_narrow for argmax / argmin: rows r0, r0 + 1, ... of kW columns through P::column_step.
template <class P, int kW>
PTO_SIMD_CLONES void update_narrow(typename P::K* __restrict keys, int32_t* __restrict at,
                                   const typename P::In* __restrict v, int64_t rows, int64_t r0) {
  typename P::K k[kW];
  int32_t a[kW];
  for (int c = 0; c < kW; ++c) k[c] = keys[c], a[c] = at[c];
  for (int64_t i = 0; i < rows; ++i)
    for (int c = 0; c < kW; ++c) P::column_step(k[c], a[c], v[i * kW + c], static_cast<int32_t>(r0 + i));
  for (int c = 0; c < kW; ++c) keys[c] = k[c], at[c] = a[c];
}

// Rows [first, rows) of `outers` outers' narrow columns side by side (Reducer::grouped_columns):
// outer g's row i, W values at v[g] + i * W, goes to buf row i (kGroupLanes wide) at lanes
// [g * P, g * P + W), P = lane_pitch(W): rows padded to a power of two, so that the AVX-512 moves
// below take whole 128-bit or 256-bit units (lanes past W stay as buf was filled: zeros).
constexpr int64_t kGroupLanes = 16;  // accumulators of a group of outers: one AVX-512 register of fp32
constexpr int64_t lane_pitch(int64_t w) { return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(w))); }
template <class In, int W>
PTO_SIMD_CLONES void side_by_side(In* __restrict buf, const In* const* v, int64_t outers, int64_t first,
                                  int64_t rows) {
  constexpr int64_t P = lane_pitch(W);
  for (int64_t i = first; i < rows; ++i)
    for (int64_t g = 0; g < outers; ++g)  // a row's W values as one move of W * sizeof(In) bytes
      std::memcpy(buf + i * kGroupLanes + g * P, v[g] + i * W, W * sizeof(In));
}
using SideBySideFn = void (*)(void* buf, const void* const* v, int64_t outers, int64_t rows);
template <class In, int W>
void side_by_side_moves(void* buf, const void* const* v, int64_t outers, int64_t rows) {
  side_by_side<In, W>(static_cast<In*>(buf), reinterpret_cast<const In* const*>(v), outers, 0, rows);
}

#if PTO_X86
// t[l] = 128-bit lane l of x[0], x[1], x[2], x[3] (a 4 x 4 transpose of 128-bit lanes).
PTO_TARGET_AVX512 inline void transpose_lanes(const __m512i* x, __m512i* t) {
  const __m512i even01 = _mm512_shuffle_i64x2(x[0], x[1], _MM_SHUFFLE(2, 0, 2, 0));
  const __m512i even23 = _mm512_shuffle_i64x2(x[2], x[3], _MM_SHUFFLE(2, 0, 2, 0));
  const __m512i odd01 = _mm512_shuffle_i64x2(x[0], x[1], _MM_SHUFFLE(3, 1, 3, 1));
  const __m512i odd23 = _mm512_shuffle_i64x2(x[2], x[3], _MM_SHUFFLE(3, 1, 3, 1));
  t[0] = _mm512_shuffle_i64x2(even01, even23, _MM_SHUFFLE(2, 0, 2, 0));
  t[2] = _mm512_shuffle_i64x2(even01, even23, _MM_SHUFFLE(3, 1, 3, 1));
  t[1] = _mm512_shuffle_i64x2(odd01, odd23, _MM_SHUFFLE(2, 0, 2, 0));
  t[3] = _mm512_shuffle_i64x2(odd01, odd23, _MM_SHUFFLE(3, 1, 3, 1));
}

// side_by_side for 4-byte values in rows of W = 2 to 8, a full group of kUnits = 16 / P outers
// (P = lane_pitch(W): 2, 4 or 8): the next kUnits rows of each outer are one register (rows of 3,
// 5, 6 or 7 spread to the pitch as they load: an expanding load), and a transpose in units of a row
// turns the kUnits registers into kUnits rows of buf (24, 8 or 2 shuffles for 16 row moves; the
// moves took five times the additions in sum over dim 1 of [8192, 1024, 2]; rows of 3 moved one at
// a time took 1 cycle an element in sum over dim 1 of [16384, 256, 3]).
template <class In, int W>
PTO_TARGET_AVX512 void side_by_side_avx512(void* buf_, const void* const* v_, int64_t outers, int64_t rows) {
  constexpr int P = static_cast<int>(lane_pitch(W));
  constexpr int kUnits = static_cast<int>(kGroupLanes / P);
  static_assert(sizeof(In) == 4 && kUnits * P == kGroupLanes);
  constexpr __mmask16 kRowLanes = [] {  // the first W lanes of every P
    unsigned m = 0;
    for (int l = 0; l < kGroupLanes; ++l) m |= (l % P < W ? 1u : 0u) << l;
    return static_cast<__mmask16>(m);
  }();
  In* buf = static_cast<In*>(buf_);
  const In* const* v = reinterpret_cast<const In* const*>(v_);
  int64_t i = 0;
  if (outers == kUnits) {
    for (; i + kUnits <= rows; i += kUnits) {
      __m512i r[kUnits], t[kUnits];
      for (int g = 0; g < kUnits; ++g)
        r[g] = W == P ? _mm512_loadu_si512(v[g] + i * W) : _mm512_maskz_expandloadu_epi32(kRowLanes, v[g] + i * W);
      if constexpr (P == 2) {
        __m512i a[8];  // a[2p + h]: rows 2l + h of outers 2p, 2p + 1 in lane l
        for (int p = 0; p < 4; ++p) {
          a[2 * p] = _mm512_unpacklo_epi64(r[2 * p], r[2 * p + 1]);
          a[2 * p + 1] = _mm512_unpackhi_epi64(r[2 * p], r[2 * p + 1]);
        }
        __m512i h[2][4];
        for (int e = 0; e < 2; ++e) {
          const __m512i x[4] = {a[e], a[e + 2], a[e + 4], a[e + 6]};
          transpose_lanes(x, h[e]);
        }
        for (int l = 0; l < 4; ++l) t[2 * l] = h[0][l], t[2 * l + 1] = h[1][l];
      } else if constexpr (P == 4) {
        transpose_lanes(r, t);
      } else {
        t[0] = _mm512_shuffle_i64x2(r[0], r[1], _MM_SHUFFLE(1, 0, 1, 0));
        t[1] = _mm512_shuffle_i64x2(r[0], r[1], _MM_SHUFFLE(3, 2, 3, 2));
      }
      for (int g = 0; g < kUnits; ++g) _mm512_store_si512(buf + (i + g) * kGroupLanes, t[g]);
    }
  }
  side_by_side<In, W>(buf, v, outers, i, rows);
}
#endif

#if PTO_X86
// side_by_side for 4-byte values in rows of W = 2 to 8 on AVX2, a full group of kUnits = 16 / P
// outers: each outer's next 8 values are one register (4 rows of 2; 2 rows of 4, or of 3 spread
// to a pitch of 4 by a permute; one row of 5 to 8), and 128-bit lane shuffles put them side by side.
// A register reads past its rows (the pad lanes take whatever follows: they are never stored), so
// only rows whose register ends inside the outer's rows go this way. Rows of 3 one move at a
// time took 54% of sum over dim 1 of [16384, 256, 3] fp32 (one thread 7.2 ms, torch 5.3 ms).
template <class In, int W>
PTO_TARGET_AVX2 void side_by_side_avx2(void* buf_, const void* const* v_, int64_t outers, int64_t rows) {
  constexpr int P = static_cast<int>(lane_pitch(W));
  constexpr int kUnits = static_cast<int>(kGroupLanes / P);
  constexpr int kRows = P == 8 ? 1 : 8 / P;  // rows a register takes
  static_assert(sizeof(In) == 4);
  float* buf = static_cast<float*>(buf_);
  const float* const* v = reinterpret_cast<const float* const*>(v_);
  int64_t i = 0;
  if (outers == kUnits) {
    const __m256i spread = _mm256_setr_epi32(0, 1, 2, 2, 3, 4, 5, 5);  // rows of 3 to a pitch of 4
    for (; i * W + 8 <= rows * W; i += kRows) {
      __m256 r[kUnits];
      for (int g = 0; g < kUnits; ++g) {
        r[g] = _mm256_loadu_ps(v[g] + i * W);
        if constexpr (W == 3) r[g] = _mm256_permutevar8x32_ps(r[g], spread);
      }
      float* row = buf + i * kGroupLanes;
      if constexpr (P == 8) {
        _mm256_store_ps(row, r[0]);
        _mm256_store_ps(row + 8, r[1]);
      } else if constexpr (P == 4) {  // r[g] = [row i | row i + 1] of outer g
        _mm256_store_ps(row, _mm256_permute2f128_ps(r[0], r[1], 0x20));
        _mm256_store_ps(row + 8, _mm256_permute2f128_ps(r[2], r[3], 0x20));
        _mm256_store_ps(row + kGroupLanes, _mm256_permute2f128_ps(r[0], r[1], 0x31));
        _mm256_store_ps(row + kGroupLanes + 8, _mm256_permute2f128_ps(r[2], r[3], 0x31));
      } else {  // P == 2: r[g] = rows i to i + 3 of outer g, a row a 64-bit unit
        for (int q = 0; q < 2; ++q) {  // outers 4q to 4q + 3
          const __m256d d[4] = {_mm256_castps_pd(r[4 * q]), _mm256_castps_pd(r[4 * q + 1]),
                                _mm256_castps_pd(r[4 * q + 2]), _mm256_castps_pd(r[4 * q + 3])};
          const __m256d even01 = _mm256_unpacklo_pd(d[0], d[1]), odd01 = _mm256_unpackhi_pd(d[0], d[1]);
          const __m256d even23 = _mm256_unpacklo_pd(d[2], d[3]), odd23 = _mm256_unpackhi_pd(d[2], d[3]);
          const __m256d out[4] = {_mm256_permute2f128_pd(even01, even23, 0x20), _mm256_permute2f128_pd(odd01, odd23, 0x20),
                                  _mm256_permute2f128_pd(even01, even23, 0x31), _mm256_permute2f128_pd(odd01, odd23, 0x31)};
          for (int j = 0; j < 4; ++j) _mm256_store_pd(reinterpret_cast<double*>(row + j * kGroupLanes + 8 * q), out[j]);
        }
      }
    }
  }
  side_by_side<In, W>(static_cast<In*>(buf_), reinterpret_cast<const In* const*>(v_), outers, i, rows);
}
#endif

// The side-by-side copy for w columns of In.
template <class In>
SideBySideFn side_by_side_for(int64_t w) {
  SideBySideFn fn = nullptr;
  with_constant<2, 3, 4, 5, 6, 7, 8>(w, [&](auto k) { fn = &side_by_side_moves<In, k()>; });  // no dims of 1
#if PTO_X86
  if constexpr (sizeof(In) == 4) {
    if (kernel_tuning().isa == Isa::Avx512)
      with_constant<2, 3, 4, 5, 6, 7, 8>(w, [&](auto k) { fn = &side_by_side_avx512<In, k()>; });
    else if (kernel_tuning().isa == Isa::Avx2)
      with_constant<2, 3, 4, 5, 6, 7, 8>(w, [&](auto k) { fn = &side_by_side_avx2<In, k()>; });
  }
#endif
  return fn;
}

// Packed rows of n values (n a multiple of 8), folded each into out[r] in the order of the lanes'
// trees, so with the same bits: a row's 8-lane vectors go into up to four accumulators as lanes()
// (rows past kShortRow) and short_rows() hold them (lane j takes elements j, j + 32, ...; a
// row shorter than 32 leaves lanes past it out), those are combined as the trees do (j with
// j + 16, then j + 8), then lanes j and j + 4, j + 2, j + 1. Per row that tree cost more than the
// fold: sum of [2097152, 8] int32 took 0.8 ns an element on one core of an AVX2 EPYC, and amin of
// [262144, 64] fp32 one span a row 23 ns a row. Eight rows are folded in AVX2 registers where the
// fold has a vector form (RowsOf8), their last three levels across the rows' transpose; the rest
// one at a time.
template <class P>
struct RowsOf8 {
  static constexpr bool kVector = false;
};
#if PTO_X86
// The values as they are (P::step(a, v) = P::combine(a, v)).
struct RawValues {
  PTO_TARGET_AVX2 static inline __m256 key(__m256 v) { return v; }
};
// fp32 as Extreme's keys: order_key, every NaN the key past all others (kMax ? kHigh : kLow).
template <bool kMax>
struct FloatKeys {
  PTO_TARGET_AVX2 static inline __m256 key(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v), magnitude = _mm256_set1_epi32(0x7FFFFFFF);
    const __m256i flipped = _mm256_xor_si256(bits, _mm256_and_si256(_mm256_srai_epi32(bits, 31), magnitude));
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, magnitude), _mm256_set1_epi32(0x7F800000));
    const __m256i past = _mm256_set1_epi32(kMax ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min());
    return _mm256_castsi256_ps(_mm256_blendv_epi8(flipped, past, nan));
  }
};

// The first `count` (< 8) lanes of a register: a mask for maskload and blendv.
PTO_TARGET_AVX2 inline __m256i first_lanes(int64_t count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
// The row's values after its last whole register: n % 8 of them go to the accumulator (i / 8) % 4
// that element i = n - n % 8 belongs to, and take(a, at, lanes) steps it over them (lanes: the
// first n % 8), leaving its other lanes as they are. Nothing is read past the row.
template <class Take>
PTO_TARGET_AVX2 inline void step_rest(__m256& a0, __m256& a1, __m256& a2, __m256& a3, const float* row, int64_t n,
                                      Take take) {
  const int64_t part = n % 8;
  if (part == 0) return;
  const float* at = row + (n - part);
  const __m256i lanes = first_lanes(part);
  switch ((n / 8) % 4) {
    case 0: take(a0, at, lanes); break;
    case 1: take(a1, at, lanes); break;
    case 2: take(a2, at, lanes); break;
    default: take(a3, at, lanes); break;
  }
}

// A row's lanes as Op's accumulators hold them after the tree's levels across accumulators: lane j
// of the last three levels' input (RowsOf8Vector's Lanes). Op::apply(a, Keys::key(v)) = P::step(a,
// v), Op::apply(a, b) = P::combine(a, b) on the raw 32-bit values, in the lanes' order (sums and
// products depend on it).
template <class Op, class Keys = RawValues>
struct StepLanes {
  PTO_TARGET_AVX2 static inline __m256 step(__m256 a, const float* at) { return Op::apply(a, Keys::key(_mm256_loadu_ps(at))); }
  PTO_TARGET_AVX2 static inline __m256 step_part(__m256 a, const float* at, __m256i lanes) {
    const __m256 stepped = Op::apply(a, Keys::key(_mm256_maskload_ps(at, lanes)));
    return _mm256_blendv_ps(a, stepped, _mm256_castsi256_ps(lanes));
  }
  PTO_TARGET_AVX2 static inline __m256 row_lanes(const float* row, int64_t n, __m256 identity) {
    __m256 a0 = identity, a1 = identity, a2 = identity, a3 = identity;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      a0 = step(a0, row + i), a1 = step(a1, row + i + 8);
      a2 = step(a2, row + i + 16), a3 = step(a3, row + i + 24);
    }
    if (i + 8 <= n) a0 = step(a0, row + i);
    if (i + 16 <= n) a1 = step(a1, row + i + 8);
    if (i + 24 <= n) a2 = step(a2, row + i + 16);
    step_rest(a0, a1, a2, a3, row, n,
              [](__m256& a, const float* at, const __m256i& lanes) PTO_TARGET_AVX2 { a = step_part(a, at, lanes); });
    const int64_t count = std::min<int64_t>(4, (n + 7) / 8);  // the accumulators the row reaches
    if (count > 2) a0 = Op::apply(a0, a2);
    if (count > 3) a1 = Op::apply(a1, a3);
    return count > 1 ? Op::apply(a0, a1) : a0;
  }
};
// fp32 amax / amin (Op the keys' integer max / min): rows of up to kKeyedRow values through their
// keys (StepLanes); longer ones compare each lane's values as floats, with what the comparisons
// miss kept beside them (as accumulate_strip_floats: a NaN seen, the sign bits ANDed for amax, ORed
// for amin), and make the lane's extreme its key once. The integer max / min of the lanes' keys is
// the row's key whatever the order: an extreme zero takes the larger (smaller) zero exactly when
// its lane holds one. Four steps a register and about twelve a row where the keys took seven a
// register: amax over rows of 256 fp32 ran at 1.4x sum's time, rows of 16 at 1.2x their keys' time.
template <bool kMax, class Op>
struct FloatExtremeLanes {
  static constexpr int64_t kKeyedRow = 32;
  PTO_TARGET_AVX2 static inline __m256 pick(__m256 a, __m256 b) { return kMax ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b); }
  PTO_TARGET_AVX2 static inline void take(__m256& best, __m256& nan, __m256& signs, const float* at) {
    take_value(best, nan, signs, _mm256_loadu_ps(at));
  }
  PTO_TARGET_AVX2 static inline void take_value(__m256& best, __m256& nan, __m256& signs, __m256 x) {
    best = pick(x, best);  // a NaN x leaves best
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    signs = kMax ? _mm256_and_ps(signs, x) : _mm256_or_ps(signs, x);
  }
  PTO_TARGET_AVX2 static inline __m256 row_lanes(const float* row, int64_t n, __m256 identity) {
    if (n <= kKeyedRow) return StepLanes<Op, FloatKeys<kMax>>::row_lanes(row, n, identity);
    const __m256 far = _mm256_set1_ps(kMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
    __m256 m0 = far, m1 = far, m2 = far, m3 = far, nan = _mm256_setzero_ps();
    __m256 signs = kMax ? _mm256_castsi256_ps(_mm256_set1_epi32(-1)) : nan;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
      take(m0, nan, signs, row + i), take(m1, nan, signs, row + i + 8);
      take(m2, nan, signs, row + i + 16), take(m3, nan, signs, row + i + 24);
    }
    if (i + 8 <= n) take(m0, nan, signs, row + i);
    if (i + 16 <= n) take(m1, nan, signs, row + i + 8);
    if (i + 24 <= n) take(m2, nan, signs, row + i + 16);
    // the lanes past the row's end read as `far`, which changes none of best, nan and signs
    step_rest(m0, m1, m2, m3, row, n, [&](__m256& m, const float* at, const __m256i& lanes) PTO_TARGET_AVX2 {
      take_value(m, nan, signs, _mm256_blendv_ps(far, _mm256_maskload_ps(at, lanes), _mm256_castsi256_ps(lanes)));
    });
    const __m256 best = pick(pick(m0, m1), pick(m2, m3));  // n > 32: all four reached
    const __m256 zero = _mm256_cmp_ps(best, _mm256_setzero_ps(), _CMP_EQ_OQ), sign = _mm256_set1_ps(-0.0f);
    const __m256 past = _mm256_castsi256_ps(_mm256_set1_epi32(kMax ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int32_t>::min()));
    return _mm256_blendv_ps(FloatKeys<kMax>::key(_mm256_blendv_ps(best, _mm256_and_ps(signs, sign), zero)), past, nan);
  }
};

// Eight rows at a time: each row's lanes (Lanes::row_lanes), then the last three levels across
// the rows' transpose by Op (Op::apply(a, b) = P::combine(a, b) per lane on the raw 32-bit values).
template <class Op, class Lanes = StepLanes<Op>>
struct RowsOf8Vector {
  static constexpr bool kVector = true;
  // identity: P::identity()'s bits.
  PTO_TARGET_AVX2 static void fold(const void* values, int64_t rows, int64_t n, void* out, float identity_bits) {
    if (n == 8) fold_rows<true>(values, rows, n, out, identity_bits);
    else fold_rows<false>(values, rows, n, out, identity_bits);
  }
  // kEight: rows of 8, the row length known (a loop for a register took 1.8x as long).
  template <bool kEight>
  PTO_TARGET_AVX2 static void fold_rows(const void* values, int64_t rows, int64_t n, void* out, float identity_bits) {
    const __m256 identity = _mm256_set1_ps(identity_bits);
    const float* v = static_cast<const float*>(values);
    float* o = static_cast<float*>(out);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int64_t r = 0; r + 8 <= rows; r += 8) {
      __m256 x[8], t[4], u[2];
      for (int i = 0; i < 8; ++i) x[i] = Lanes::row_lanes(v + (r + i) * n, kEight ? 8 : n, identity);
      for (int i = 0; i < 4; ++i)  // [lanes 0-3 of row 2i | of row 2i + 1], lane j with j + 4
        t[i] = Op::apply(_mm256_permute2f128_ps(x[2 * i], x[2 * i + 1], 0x20),
                         _mm256_permute2f128_ps(x[2 * i], x[2 * i + 1], 0x31));
      for (int i = 0; i < 2; ++i)  // lanes 0-1 of rows 4i, 4i + 2 | 4i + 1, 4i + 3, lane j with j + 2
        u[i] = Op::apply(_mm256_shuffle_ps(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm256_shuffle_ps(t[2 * i], t[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
      // rows 0, 2, 4, 6 | 1, 3, 5, 7, lane 0 with lane 1; then in row order
      const __m256 w = Op::apply(_mm256_shuffle_ps(u[0], u[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm256_shuffle_ps(u[0], u[1], _MM_SHUFFLE(3, 1, 3, 1)));
      _mm256_storeu_ps(o + r, _mm256_permutevar8x32_ps(w, order));
    }
  }
};
#define PTO_ROWS_OF_8(P, body)                                                        \
  struct P##Op {                                                                      \
    PTO_TARGET_AVX2 static inline __m256 apply(__m256 a, __m256 b) { return body; } \
  }
#define PTO_AS_INT(x) _mm256_castps_si256(x)
#define PTO_AS_FLOAT(x) _mm256_castsi256_ps(x)
PTO_ROWS_OF_8(SumF32, _mm256_add_ps(a, b));
PTO_ROWS_OF_8(ProdF32, _mm256_mul_ps(a, b));
PTO_ROWS_OF_8(SumI32, PTO_AS_FLOAT(_mm256_add_epi32(PTO_AS_INT(a), PTO_AS_INT(b))));
PTO_ROWS_OF_8(ProdI32, PTO_AS_FLOAT(_mm256_mullo_epi32(PTO_AS_INT(a), PTO_AS_INT(b))));
PTO_ROWS_OF_8(MaxI32, PTO_AS_FLOAT(_mm256_max_epi32(PTO_AS_INT(a), PTO_AS_INT(b))));
PTO_ROWS_OF_8(MinI32, PTO_AS_FLOAT(_mm256_min_epi32(PTO_AS_INT(a), PTO_AS_INT(b))));
#undef PTO_ROWS_OF_8
#undef PTO_AS_INT
#undef PTO_AS_FLOAT
template <>
struct RowsOf8<Fold<float, false>> : RowsOf8Vector<SumF32Op> {};
template <>
struct RowsOf8<Fold<float, true>> : RowsOf8Vector<ProdF32Op> {};
template <>
struct RowsOf8<Fold<uint32_t, false>> : RowsOf8Vector<SumI32Op> {};
template <>
struct RowsOf8<Fold<uint32_t, true>> : RowsOf8Vector<ProdI32Op> {};
template <>
struct RowsOf8<Extreme<int32_t, true>> : RowsOf8Vector<MaxI32Op> {};
template <>
struct RowsOf8<Extreme<int32_t, false>> : RowsOf8Vector<MinI32Op> {};
template <>
struct RowsOf8<Extreme<float, true>> : RowsOf8Vector<MaxI32Op, FloatExtremeLanes<true, MaxI32Op>> {};
template <>
struct RowsOf8<Extreme<float, false>> : RowsOf8Vector<MinI32Op, FloatExtremeLanes<false, MinI32Op>> {};
#endif

// Whether packed rows of n values take fold_packed_rows, for the ops whose fold has a vector form:
// rows of 8 on every ISA (the scalar tree beats the lanes), longer ones up to kLongestFoldedRow
// with AVX2 (past it, rows of 1024 fp32 amax took 4x as long: a chunk holds fewer than 8 rows),
// any length (the last n % 8 values a masked step; two threads, 8M fp32 over rows of 33: sum 2.24
// -> 0.70 ms, amax 2.93 -> 0.92 ms; torch 0.87, 1.19). Rows of 2 to 7 stay in short_rows' lanes,
// which measured as fast or faster (prod of rows of 5: 4.9 against 6.1 ms folded).
inline constexpr int64_t kLongestFoldedRow = 256;
// fp16 / bf16 rows of whole sets of lanes (n % kLanes == 0) are read widened in registers
// (widened_spans: one pass, a tree per row); others are folded from an fp32 copy, as the lanes'
// scalar steps at a row's end cost more than the copy (bf16 sum of 8M values, two threads: rows
// of 128 0.35 widened against 0.45 ms folded; rows of 72 1.12 against 0.53 ms; of 48 1.53 against 0.63).
template <class P>
bool folds_packed_rows(int64_t n) {
  if (!RowsOf8<P>::kVector) return false;
  return n == 8 || (n > 8 && n <= kLongestFoldedRow && kernel_tuning().isa != Isa::Baseline);
}

template <class P>
void fold_packed_rows(const typename P::In* v, int64_t rows, int64_t n, typename P::Acc* out) {
  using Acc = typename P::Acc;
  int64_t done = 0;
#if PTO_X86
  if constexpr (RowsOf8<P>::kVector) {
    if (kernel_tuning().isa != Isa::Baseline) {
      const Acc id = P::identity();
      float id_bits;
      std::memcpy(&id_bits, &id, 4);
      RowsOf8<P>::fold(v, rows, n, out, id_bits);
      done = rows / 8 * 8;
    }
  }
#endif
  const int64_t count = std::min<int64_t>(4, (n + 7) / 8);
  for (int64_t r = done; r < rows; ++r) {
    Acc a[4][8];
    for (auto& lanes : a) std::fill(lanes, lanes + 8, P::identity());
    for (int64_t i = 0; i < n; i += 8)
      for (int j = 0; j < 8 && i + j < n; ++j) a[(i / 8) % 4][j] = P::step(a[(i / 8) % 4][j], v[r * n + i + j], i + j);
    for (int c = 0; c < 2; ++c)
      if (c + 2 < count)
        for (int j = 0; j < 8; ++j) a[c][j] = P::combine(a[c][j], a[c + 2][j]);
    if (count > 1)
      for (int j = 0; j < 8; ++j) a[0][j] = P::combine(a[0][j], a[1][j]);
    const Acc* s = a[0];
    out[r] = P::combine(P::combine(P::combine(s[0], s[4]), P::combine(s[2], s[6])),
                        P::combine(P::combine(s[1], s[5]), P::combine(s[3], s[7])));
  }
}

template <class P>
PTO_SIMD_CLONES void combine_rows(typename P::Acc* __restrict a, const typename P::Acc* __restrict b, int64_t w) {
  for (int64_t c = 0; c < w; ++c) a[c] = P::combine(a[c], b[c]);
}

// The pairwise tree over `count` rows of `w` accumulators `pitch` apart; the result in row 0.
template <class P>
void tree(typename P::Acc* rows, int64_t count, int64_t w, int64_t pitch) {
  if (count < 2) return;
  const int64_t half = tree_split(count);
  tree<P>(rows, half, w, pitch);
  tree<P>(rows + half * pitch, count - half, w, pitch);
  combine_rows<P>(rows, rows + half * pitch, w);
}

template <class T>
PTO_SIMD_CLONES void scale(T* __restrict v, int64_t m, T divisor) {
  for (int64_t i = 0; i < m; ++i) v[i] = v[i] / divisor;
}

template <class T>
PTO_SIMD_CLONES void squared_deviation(T* __restrict v, int64_t m, const T* __restrict center, int64_t cstride,
                                       T divisor) {
  if (cstride == 0) {
    const T c = center[0];
    for (int64_t i = 0; i < m; ++i) v[i] = ((v[i] - c) * (v[i] - c)) / divisor;
  } else if (cstride == 1) {
    for (int64_t i = 0; i < m; ++i) v[i] = ((v[i] - center[i]) * (v[i] - center[i])) / divisor;
  } else {
    for (int64_t i = 0; i < m; ++i) v[i] = ((v[i] - center[i * cstride]) * (v[i] - center[i * cstride])) / divisor;
  }
}

// ---- reduce ---------------------------------------------------------------------------------------

// The outer indices in runs along the innermost outer axis, at most kBlock long, on the pool:
// body(at, k) for the k indices from `at` (a reduced or scanned dim of one element).
template <class Body>
void runs_of_outers(const std::vector<Axis>& outer, Body&& body) {
  const int64_t inner = outer.back().size;
  parallel_for(count(outer), kMinElementsPerThread, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e;) {
      const int64_t k = std::min({kBlock, e - o, inner - o % inner});
      body(Walk(outer, o), k);
      o += k;
    }
  });
}

// The input's and the output's bytes and their converters to / from the compute types.
template <class In, class Res>
struct Io {
  Io(const Tensor& input, const Tensor& output)
      : in(static_cast<const std::byte*>(input.data())),
        out(static_cast<std::byte*>(output.data())),
        isz(static_cast<int64_t>(input.itemsize())),
        osz(static_cast<int64_t>(output.itemsize())),
        load(ew::loader<In>(input.dtype())),
        store(ew::storer<Res>(output.dtype())) {}
  const std::byte* in;
  std::byte* out;
  int64_t isz, osz;
  ew::LoadFn<In> load;
  ew::StoreFn<Res> store;
};

template <class P>
class Reducer {
  using In = typename P::In;
  using Acc = typename P::Acc;
  using Res = typename P::Res;

 public:
  explicit Reducer(const Reduce& r) : r_(r), l_(plan(r.input, r.dim, r.out, r.center)), io_(r.input, r.out) {
    if constexpr (kFloat<In>) {
      divisor_ = static_cast<In>(r.divisor);
      if (r.center.defined()) ctr_ = static_cast<const In*>(r.center.data());
    }
    direct_ = r.transform == Transform::None &&
              visit_dtype(r.input.dtype(), [](auto tag) { return ew::kSameBits<In, typename decltype(tag)::type>; });
    if (r.transform == Transform::None && l_.red == 1) widened_ = widened_spans_for<P>(r.input.dtype());
  }

  void run() {
    if (r_.out.numel() == 0) return;
    if (l_.n == 0) return fill_identity();
    if (l_.n == 1 && !l_.outer.empty()) return single_values();
    if (l_.columns) return columns();
    if (l_.n <= kShortRow) return short_rows();
    rows();
  }

 private:
  // n values along a stride (elements) as the compute type, transformed for var.
  const In* values(const std::byte* src, int64_t stride, int64_t m, In* buf, const In* center, int64_t cstride) const {
    const In* v = io_.load(src, stride * io_.isz, m, buf);
    if constexpr (kFloat<In>) {
      if (r_.transform == Transform::None) return v;
      if (v != buf) std::memcpy(buf, v, sizeof(In) * m);
      if (r_.transform == Transform::Scaled) scale(buf, m, divisor_);
      else squared_deviation(buf, m, center, cstride, divisor_);
      return buf;
    } else {
      return v;
    }
  }

  const In* center_at(int64_t offset) const { return ctr_ ? ctr_ + offset : nullptr; }

  // Rows of the reduced axis that follow each other in memory (and take no per-row center).
  bool packed_lines() const {
    return l_.red == 1 && (l_.outer.empty() || (l_.outer.size() == 1 && l_.outer[0].in == l_.n)) &&
           r_.transform != Transform::SquaredDeviation;
  }

  // Whole rows of the column axis lie one after another: a run of them is one contiguous span.
  bool packed_rows(int64_t width) const { return width == l_.col.size && l_.col.in == 1 && l_.red == width; }

  void store_results(const Acc* acc, int64_t m, std::byte* dst, int64_t stride) const {
    Res res[kBlock];
    for (int64_t j = 0; j < m; j += kBlock) {
      const int64_t k = std::min(kBlock, m - j);
      for (int64_t i = 0; i < k; ++i) res[i] = P::result(acc[j + i]);
      io_.store(res, dst + j * stride * io_.osz, stride * io_.osz, k);
    }
  }

  void fill_identity() {
    parallel_for(r_.out.numel(), kMinElementsPerThread, [&](int64_t b, int64_t e) {
      Acc acc[kBlock];
      std::fill(acc, acc + kBlock, P::identity());
      for (int64_t o = b; o < e; o += kBlock) store_results(acc, std::min(kBlock, e - o), io_.out + o * io_.osz, 1);
    });
  }

  // A reduced dim of one element: each result is its value stepped from the identity (through the
  // lanes, a row of one value cost 4 ns: amax over dim 0 of [1, 1522685] int32 took 6.3 ms, torch 0.5).
  void single_values() {
    const Axis& inner = l_.outer.back();
    runs_of_outers(l_.outer, [&](const Walk& at, int64_t k) {
      alignas(64) In buf[kBlock];
      Acc acc[kBlock];
      if constexpr (kIndexed<P>) {  // the index of the one element, whatever it holds: no reads
        std::fill(acc, acc + k, P::packed(P::kWorst, 0));
      } else {
        const In* v = values(io_.in + at.in * io_.isz, inner.in, k, buf, center_at(at.ctr), inner.ctr);
        for (int64_t i = 0; i < k; ++i) acc[i] = P::step(P::identity(), v[i], 0);
      }
      store_results(acc, k, io_.out + at.out * io_.osz, inner.out);
    });
  }

  // One row's elements [first, first + m) (m <= kChunk) through the lanes (or as one span).
  Acc span(const std::byte* row, int64_t first, int64_t m, const In* center) const {
    if (widened_) {
      Acc acc;
      widened_(&acc, row + first * io_.isz, 1, m, first);
      return acc;
    }
    alignas(64) In buf[kChunk];
    const In* v = values(row + first * l_.red * io_.isz, l_.red, m, buf, center, 0);
    return span_of<P>(v, m, first);
  }

  // Rows longer than kShortRow. The output of row o is out[o] (out is contiguous, keepdim).
  void rows() {
    const int64_t rows = count(l_.outer), chunks = (l_.n + kChunk - 1) / kChunk;
    if (chunks == 1 && packed_lines()) {
      // Rows one after another in memory: as many as fit a chunk are loaded at once.
      const int64_t n = l_.n;
      const bool folded = folds_packed_rows<P>(n);
      // Folded rows go eight at a time (the rest one at a time): loads of whole eights.
      const int64_t per_load = folded ? kChunk / n / 8 * 8 : std::max<int64_t>(1, kChunk / n);
      parallel_for(rows, std::max<int64_t>(1, kMinElementsPerThread / n), [&](int64_t b, int64_t e) {
        alignas(64) In buf[kChunk];
        Acc acc[kBlock];
        for (int64_t o = b; o < e;) {
          const int64_t k = std::min(kBlock, e - o);
          const bool widen = widened_ && (!folded || n % kLanes == 0);
          if (widen) widened_(acc, io_.in + o * n * io_.isz, k, n, 0);
          for (int64_t i = 0; i < k && !widen;) {
            const int64_t m = std::min(per_load, k - i);
            const In* v = values(io_.in + (o + i) * n * io_.isz, 1, m * n, buf, nullptr, 0);
            if (folded) fold_packed_rows<P>(v, m, n, acc + i);
            else spans_of_rows<P>(acc + i, v, m, n);
            i += m;
          }
          store_results(acc, k, io_.out + o * io_.osz, 1);
          o += k;
        }
      });
      return;
    }
    if (chunks == 1) {
      parallel_for(rows, std::max<int64_t>(1, kMinElementsPerThread / l_.n), [&](int64_t b, int64_t e) {
        Walk at(l_.outer, b);
        Acc acc[kBlock];
        for (int64_t o = b; o < e;) {
          const int64_t k = std::min(kBlock, e - o);
          for (int64_t i = 0; i < k; ++i, at.next()) acc[i] = span(io_.in + at.in * io_.isz, 0, l_.n, center_at(at.ctr));
          store_results(acc, k, io_.out + o * io_.osz, 1);
          o += k;
        }
      });
      return;
    }
    std::vector<Acc> partial(static_cast<size_t>(rows * chunks));
    parallel_for(rows * chunks, std::max<int64_t>(1, kMinElementsPerThread / kChunk), [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / chunks, c = t % chunks;
        const Walk at(l_.outer, o);
        partial[t] = span(io_.in + at.in * io_.isz, c * kChunk, std::min(kChunk, l_.n - c * kChunk), center_at(at.ctr));
      }
    });
    parallel_for(rows, 64, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        Acc* p = partial.data() + o * chunks;
        tree<P>(p, chunks, 1, 1);
        store_results(p, 1, io_.out + o * io_.osz, 1);
      }
    });
  }

  // Rows of at most kShortRow elements: a group of rows goes through the lanes side by side, so
  // that the fold runs across the group (vector steps) and skips lanes that hold only the identity
  // (combining with it changes nothing).
  void short_rows() {
    constexpr int64_t kGroup = 64;
    const int64_t rows = count(l_.outer), n = l_.n, per_load = std::max<int64_t>(1, kLanes * kGroup / n);
    // Consecutive rows one after another in memory: a group is one run of values.
    const bool packed = packed_lines();
    parallel_for(rows, std::max<int64_t>(kGroup, kMinElementsPerThread / n), [&](int64_t b, int64_t e) {
      alignas(64) Acc lanes[kLanes][kGroup];
      alignas(64) In buf[kLanes * kGroup];
      Walk at(l_.outer, b);
      for (int64_t o = b; o < e; o += kGroup) {
        const int64_t g_count = std::min(kGroup, e - o);
        if (packed && folds_packed_rows<P>(n)) {
          fold_packed_rows<P>(values(io_.in + o * n * io_.isz, 1, g_count * n, buf, nullptr, 0), g_count, n, lanes[0]);
          store_results(lanes[0], g_count, io_.out + o * io_.osz, 1);
          continue;
        }
        for (int64_t g = 0; g < g_count;) {
          const int64_t m = packed ? std::min(per_load, g_count - g) : 1;
          const In* v = packed ? values(io_.in + (o + g) * n * io_.isz, 1, m * n, buf, nullptr, 0)
                               : values(io_.in + at.in * io_.isz, l_.red, n, buf, center_at(at.ctr), 0);
          // whole groups of a length spread_whole is made for go through it
          if (m < kGroup ||
              !with_constant<2, 3, 4, 5, 6, 7, 8>(n, [&](auto len) { spread_whole<P, kGroup, len()>(lanes, v); }))
            spread<P, kGroup>(lanes, v, m, n, g);
          g += m;
          if (!packed) at.next();
        }
        int64_t used = std::min(n, kLanes);
        for (int64_t s = kLanes / 2; s >= 1; s /= 2) {
          for (int64_t j = 0; j < s && j + s < used; ++j) combine_rows<P>(lanes[j], lanes[j + s], g_count);
          used = std::min(used, s);
        }
        store_results(lanes[0], g_count, io_.out + o * io_.osz, 1);
      }
    });
  }

  // Rows [r0, r1) of the columns [c0, c0 + w) into acc, `run` rows per load. Contiguous rows wider
  // than a strip are read in strips: a strip goes down all the rows, asking for the next row's strip
  // ahead, before the next strip. Many rows' lines in flight read faster than one row after another
  // (two threads, [16, 16, 256, 256] fp32 over dim 1: sum 3.10 -> 2.55 ms, amax 3.47 -> 3.08 ms;
  // [64, 256, 1024] over dim 0: sum 3.43 -> 2.87 ms). Each column still takes its rows in order:
  // the same bits.
  void column_block(const Walk& at, int64_t c0, int64_t w, int64_t r0, int64_t r1, int64_t run, Acc* acc) const {
    alignas(64) In buf[kColumnWidth<Acc>];
    const In* center = center_at(at.ctr + c0 * l_.col.ctr);
    const auto row = [&](int64_t r) { return io_.in + (at.in + r * l_.red + c0 * l_.col.in) * io_.isz; };
    const bool few_rows = r1 - r0 <= kFewRows;
    const int64_t strip = (few_rows ? kFewRowsStrip : kStrip) / io_.isz;
    const bool strips = run == 1 && l_.col.in == 1 && w > strip;
    const bool ahead = kernel_tuning().prefetch_streams;  // the next row's strip asked for ahead
    // take(c, k, r, m, v): rows [r, r + m) of the columns [c, c + k), one after another in v;
    // columns from `first` on (strips only).
    const auto each_load = [&](int64_t first, auto&& take) {
      if (strips) {
        for (int64_t c = first; c < w; c += strip) {
          const int64_t k = std::min(strip, w - c);
          for (int64_t r = r0; r < r1; ++r) {
            if (ahead && r + 1 < r1) prefetch_bytes(row(r + 1) + c * io_.isz, k * io_.isz);
            take(c, k, r, 1, values(row(r) + c * io_.isz, 1, k, buf, center ? center + c * l_.col.ctr : nullptr, l_.col.ctr));
          }
        }
        return;
      }
      // Row segments that do not follow each other are prefetched ahead.
      const bool scattered = l_.col.in == 1 && l_.red != w;
      for (int64_t r = r0; r < r1; r += run) {
        const int64_t m = std::min(run, r1 - r);
        if (scattered && r + kPrefetchRows < r1) prefetch(row(r + kPrefetchRows), w * io_.isz);
        take(0, w, r, m, values(row(r), l_.col.in, m * w, buf, center, l_.col.ctr));
      }
    };
    std::fill(acc, acc + w, P::identity());
    if constexpr (kIndexed<P>) {
      alignas(64) typename P::K keys[kColumnWidth<Acc>];
      alignas(64) int32_t rows[kColumnWidth<Acc>];
      std::fill(keys, keys + w, P::kWorst);
      std::fill(rows, rows + w, static_cast<int32_t>(r0));
      each_load(0, [&](int64_t c, int64_t k, int64_t r, int64_t m, const In* v) {
        for (int64_t i = 0; i < m; ++i) P::update(keys + c, rows + c, v + i * k, k, static_cast<int32_t>(r + i));
      });
      for (int64_t c = 0; c < w; ++c) acc[c] = P::packed(keys[c], rows[c]);
    } else {
      constexpr int kW = static_cast<int>(kRegisterStrip / sizeof(In));
      int64_t first = 0;
      if (strips && few_rows && direct_)
        for (; first + kW <= w; first += kW) {
          const In* v = reinterpret_cast<const In*>(row(r0)) + first;
          if constexpr (kFloatExtreme<P>) accumulate_strip_floats<P, kW>(acc + first, v, l_.red, r0, r1, ahead);
          else accumulate_strip<P, kW>(acc + first, v, l_.red, r0, r1, ahead);
        }
      each_load(first, [&](int64_t c, int64_t k, int64_t r, int64_t m, const In* v) {
        if (k == 8) accumulate_narrow<P, 8>(acc + c, v, m, r);
        else if (k == 16) accumulate_narrow<P, 16>(acc + c, v, m, r);
        else accumulate<P>(acc + c, v, m, k, r);
      });
    }
  }

  // Columns of at most kGroupLanes / 2 values whose rows follow each other, read in place, with more
  // than one outer: pieces of (group of outers, row block), the group's columns side by side in
  // kGroupLanes accumulators, each column still taking its rows in order from the identity and its
  // blocks through the same tree (the same bits as columns()). One outer's two or three columns a
  // piece spent the time on the pieces (sum over dim 1 of [8192, 1024, 2] fp32: 9.5 -> 2.9 ms, torch 2.1-2.9).
  void grouped_columns() {
    const int64_t w = l_.col.size, pitch = lane_pitch(w), group = kGroupLanes / pitch, lanes = group * pitch;
    const int64_t outers = count(l_.outer), groups = (outers + group - 1) / group;
    const int64_t blocks = (l_.n + kRowBlock - 1) / kRowBlock;
    const SideBySideFn gather = side_by_side_for<In>(w);
    std::vector<Acc> partial(blocks > 1 ? static_cast<size_t>(groups * blocks * lanes) : 0);
    const In* in = reinterpret_cast<const In*>(io_.in);
    parallel_for(groups * blocks, std::max<int64_t>(1, kMinElementsPerThread / (kRowBlock * lanes)), [&](int64_t b, int64_t e) {
      alignas(64) Acc acc[kGroupLanes];
      // Lanes past a group's columns (the pitch's padding, a short last group) are
      // accumulated too, from whatever they hold, and never stored: all 16 stay one register.
      alignas(64) In buf[kRowBlock * kGroupLanes] = {};
      const In* v[kGroupLanes];
      for (int64_t t = b; t < e; ++t) {
        const int64_t block = t % blocks, o0 = t / blocks * group, k = std::min(group, outers - o0);
        const int64_t r0 = block * kRowBlock, m = std::min(l_.n, r0 + kRowBlock) - r0;
        Walk at(l_.outer, o0);
        for (int64_t g = 0; g < k; ++g, at.next()) v[g] = in + at.in + r0 * l_.red;
        gather(buf, reinterpret_cast<const void* const*>(v), k, m);
        if constexpr (kIndexed<P>) {
          alignas(64) typename P::K keys[kGroupLanes];
          alignas(64) int32_t rows[kGroupLanes];
          std::fill(keys, keys + kGroupLanes, P::kWorst);
          std::fill(rows, rows + kGroupLanes, static_cast<int32_t>(r0));
          update_narrow<P, kGroupLanes>(keys, rows, buf, m, r0);
          for (int64_t c = 0; c < kGroupLanes; ++c) acc[c] = P::packed(keys[c], rows[c]);
        } else {
          std::fill(acc, acc + kGroupLanes, P::identity());
          accumulate_narrow<P, kGroupLanes>(acc, buf, m, r0);
        }
        if (blocks == 1) store_group(acc, o0, k);
        else std::copy(acc, acc + k * pitch, partial.data() + t * lanes);
      }
    });
    if (blocks == 1) return;
    parallel_for(groups, 1, [&](int64_t b, int64_t e) {
      for (int64_t grp = b; grp < e; ++grp) {
        const int64_t o0 = grp * group, k = std::min(group, outers - o0);
        Acc* rows = partial.data() + grp * blocks * lanes;
        tree<P>(rows, blocks, k * pitch, lanes);
        store_group(rows, o0, k);
      }
    });
  }
  // The results of outers [o0, o0 + k), l_.col.size each, lane_pitch(l_.col.size) apart in acc.
  void store_group(const Acc* acc, int64_t o0, int64_t k) const {
    Walk at(l_.outer, o0);
    for (int64_t g = 0; g < k; ++g, at.next())
      store_results(acc + g * lane_pitch(l_.col.size), l_.col.size, io_.out + at.out * io_.osz, l_.col.out);
  }

  // The reduced axis is not innermost: pieces of (outer index, column chunk, row block).
  void columns() {
    if (direct_ && l_.col.size <= kGroupLanes / 2 && packed_rows(l_.col.size) && count(l_.outer) > 1)
      return grouped_columns();
    const int64_t width = std::min(kColumnWidth<Acc>, l_.col.size);
    const int64_t outers = count(l_.outer), chunks = (l_.col.size + width - 1) / width;
    const int64_t blocks = (l_.n + kRowBlock - 1) / kRowBlock;
    // Narrow rows that follow each other in memory are loaded several at a time.
    const bool packed = packed_rows(width) && r_.transform != Transform::SquaredDeviation;
    const int64_t run = packed ? kColumnWidth<Acc> / width : 1;
    std::vector<Acc> partial(blocks > 1 ? static_cast<size_t>(outers * chunks * blocks * width) : 0);
    const int64_t pieces = outers * chunks * blocks;
    parallel_for(pieces, std::max<int64_t>(1, kMinElementsPerThread / (kRowBlock * width)), [&](int64_t b, int64_t e) {
      alignas(64) Acc acc[kColumnWidth<Acc>];
      for (int64_t t = b; t < e; ++t) {
        const int64_t block = t % blocks, chunk = t / blocks % chunks, o = t / blocks / chunks;
        const Walk at(l_.outer, o);
        const int64_t c0 = chunk * width, w = std::min(width, l_.col.size - c0);
        column_block(at, c0, w, block * kRowBlock, std::min(l_.n, (block + 1) * kRowBlock), run, acc);
        if (blocks == 1) store_results(acc, w, io_.out + (at.out + c0 * l_.col.out) * io_.osz, l_.col.out);
        else std::copy(acc, acc + w, partial.data() + t * width);
      }
    });
    if (blocks == 1) return;
    parallel_for(outers * chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t chunk = t % chunks, o = t / chunks;
        const Walk at(l_.outer, o);
        const int64_t c0 = chunk * width, w = std::min(width, l_.col.size - c0);
        Acc* rows = partial.data() + t * blocks * width;
        tree<P>(rows, blocks, w, width);
        store_results(rows, w, io_.out + (at.out + c0 * l_.col.out) * io_.osz, l_.col.out);
      }
    });
  }

  const Reduce& r_;
  const Layout l_;
  const Io<In, Res> io_;
  In divisor_ = In(1);
  const In* ctr_ = nullptr;
  bool direct_ = false;  // the input is stored as In and taken as it is: read in place
  // fp16 / bf16 rows along a contiguous reduced axis, widened in registers (null: buffered)
  WidenedSpansFn<P> widened_ = nullptr;
};

template <template <class> class Op, class T>
void run_reducer(const Reduce& r) {
  Reducer<Op<T>>(r).run();
}

template <class T>
using Max = Extreme<T, true>;
template <class T>
using Min = Extreme<T, false>;
template <class T>
using ArgMax = Arg<T, true>;
template <class T>
using ArgMin = Arg<T, false>;

// ---- scan -----------------------------------------------------------------------------------------

// The scan's compute types: floats as in reductions; integers accumulate in int32 (int64 for
// 64-bit integers) and are written as int64.
template <class S>
using ScanIn = std::conditional_t<!std::is_integral_v<S>, compute_t<S>, std::conditional_t<(sizeof(S) == 8), int64_t, int32_t>>;

// The reductions' sum / prod, integers written as int64.
template <class T, bool kProduct>
struct ScanOp : Fold<T, kProduct> {
  using Res = std::conditional_t<kFloat<T>, T, int64_t>;

  // An output is its block's offset (+) the running value. x86 takes a microcode assist (about 100
  // cycles) for every fp32 product below the normal range, and a cumprod that decays through it (its
  // offsets tiny or subnormal) ran about twice as slow. Outputs from such an offset are the exact
  // fp64 product rounded once to fp32: the fp32 multiply's bits, without the assist. Other offsets
  // keep the fp32 multiply, which is cheaper where nothing falls below the normal range.
  static constexpr bool kWidens = kProduct && std::is_same_v<T, float>;
  using Wide = std::conditional_t<kWidens, double, T>;
  static bool widens(T offset) { return kWidens && offset != T(0) && std::fabs(offset) < T(0x1p-100); }
  // The offset as fp64, once per segment (widening a subnormal takes the assist). The compiler must
  // not see that it holds an fp32 value: it would narrow the product back to the fp32 multiply.
  static Wide widened(T offset) {
    Wide o = offset;
    if constexpr (kWidens) asm("" : "+m"(o));
    return o;
  }
  template <class O>
  static Res with_offset(O offset, T running) {
    if constexpr (kWidens && std::is_same_v<O, double>) return static_cast<float>(offset * static_cast<double>(running));
    else return static_cast<Res>(Fold<T, kProduct>::combine(offset, running));
  }
  // True when one of the n offsets takes the fp64 product; then wide holds them all widened.
  static bool widen(const T* offset, int64_t n, Wide* wide) {
    if (!kWidens || std::none_of(offset, offset + n, widens)) return false;
    for (int64_t c = 0; c < n; ++c) wide[c] = widened(offset[c]);
    return true;
  }
};

// Interleaved lines (several lines at once, so the dependency chains overlap).
constexpr int kLines = 8;
// Elements of short lines loaded and stored at once.
constexpr int64_t kRun = 4096;

template <class P>
class Scanner {
  using In = typename P::In;
  using Acc = typename P::Acc;
  using Res = typename P::Res;

 public:
  explicit Scanner(const Scan& s) : s_(s), l_(plan(s.input, s.dim, s.out, Tensor())), io_(s.input, s.out) {
    out_native_ = visit_dtype(s.out.dtype(), [](auto o) { return std::is_same_v<typename decltype(o)::type, Res>; });
    blocks_ = (l_.n + kScanBlock - 1) / kScanBlock;
  }

  void run() {
    if (s_.out.numel() == 0) return;
    if (l_.n == 1 && !l_.outer.empty()) return single_values();
    if (l_.columns) return columns();
    lines();
  }

 private:
  // n outputs to dst, `stride` elements apart, with one rounding to the output dtype.
  void write_out(const Res* y, std::byte* dst, int64_t stride, int64_t n) const {
    if (out_native_ && stride == 1) std::memcpy(dst, y, sizeof(Res) * n);
    else io_.store(y, dst, stride * io_.osz, n);
  }

  // A scanned dim of one element: each output is its value combined with the identity (as lines of
  // one value: cumsum over dim 1 of [36509, 1, 1, 33] fp32 took 6.3 ms, torch 0.6).
  void single_values() {
    const Axis& inner = l_.outer.back();
    runs_of_outers(l_.outer, [&](const Walk& at, int64_t k) {
      alignas(64) In buf[kBlock];
      Res y[kBlock];
      const In* v = io_.load(io_.in + at.in * io_.isz, inner.in * io_.isz, k, buf);
      for (int64_t i = 0; i < k; ++i) y[i] = static_cast<Res>(P::combine(P::identity(), v[i]));
      write_out(y, io_.out + at.out * io_.osz, inner.out, k);
    });
  }

  // A segment: elements [first, first + m) of one line, starting from `offset`.
  struct Segment {
    int64_t in = 0, out = 0;  // element offsets of the line's start
    int64_t first = 0, m = 0;
    Acc offset = P::identity();
  };

  // Scans up to kLines segments together; returns each one's local total. Writes the outputs when
  // `write`. A segment shorter than the others (or absent) is padded with the identity, which
  // leaves its local value unchanged. The lines are worked in local buffers: lines a power of two
  // apart in memory would share cache sets.
  void scan_segments(const Segment* seg, int count, bool write, Acc* totals) const {
    alignas(64) In buf[kLines][kBlock];
    alignas(64) Res ybuf[kLines][kBlock];
    Acc local[kLines], offset[kLines];
    int64_t longest = 0;
    for (int g = 0; g < kLines; ++g) {
      local[g] = P::identity();
      offset[g] = g < count ? seg[g].offset : P::identity();
      if (g < count) longest = std::max(longest, seg[g].m);
    }
    const bool offsets = std::any_of(offset, offset + kLines, [](Acc o) { return o != P::identity(); });
    for (int64_t j = 0; j < longest; j += kBlock) {
      const int64_t k = std::min(kBlock, longest - j);
      for (int g = 0; g < kLines; ++g) {
        const int64_t have = g < count ? std::clamp<int64_t>(seg[g].m - j, 0, k) : 0;
        const std::byte* src = io_.in + (seg[g < count ? g : 0].in + (seg[g < count ? g : 0].first + j) * l_.red) * io_.isz;
        const In* loaded = have ? io_.load(src, l_.red * io_.isz, have, buf[g]) : buf[g];
        if (loaded != buf[g]) std::memcpy(buf[g], loaded, sizeof(In) * have);
        std::fill(buf[g] + have, buf[g] + k, P::identity());
      }
      scan_block(buf, write ? ybuf : nullptr, local, offset, k, offsets);
      if (!write) continue;
      for (int g = 0; g < count; ++g) {
        const int64_t have = std::clamp<int64_t>(seg[g].m - j, 0, k);
        if (have)
          write_out(ybuf[g], io_.out + (seg[g].out + (seg[g].first + j) * l_.out_red) * io_.osz, l_.out_red, have);
      }
    }
    for (int g = 0; g < count; ++g) totals[g] = local[g];
  }

  // k elements of kLines lines side by side (v[g][i], y[g][i]): running values in registers, so
  // that the lines' chains overlap. y null: only the running values; offsets false (all the
  // identity): the outputs are the running values themselves.
  template <class Lines, class Outs>
  static void scan_block(Lines v, Outs y, Acc* local, const Acc* offset, int64_t k, bool offsets) {
    Acc l[kLines];
    for (int g = 0; g < kLines; ++g) l[g] = local[g];
    if (!y) {
      for (int64_t i = 0; i < k; ++i)
        for (int g = 0; g < kLines; ++g) l[g] = P::combine(l[g], v[g][i]);
    } else if (typename P::Wide wide[kLines]; offsets && P::widen(offset, kLines, wide)) {
      outputs_from(v, y, l, wide, k);
    } else if (offsets) {
      outputs_from(v, y, l, offset, k);
    } else {
      for (int64_t i = 0; i < k; ++i)
        for (int g = 0; g < kLines; ++g) {
          l[g] = P::combine(l[g], v[g][i]);
          y[g][i] = static_cast<Res>(l[g]);
        }
    }
    for (int g = 0; g < kLines; ++g) local[g] = l[g];
  }

  // The running values of k elements and their outputs from the offsets o (as with_offset takes them).
  template <class Lines, class Outs, class O>
  static void outputs_from(Lines v, Outs y, Acc* l, const O* o, int64_t k) {
    for (int64_t i = 0; i < k; ++i)
      for (int g = 0; g < kLines; ++g) {
        l[g] = P::combine(l[g], v[g][i]);
        y[g][i] = P::with_offset(o[g], l[g]);
      }
  }

  // Short lines one after another in memory, in and out: runs of them are loaded and stored at once.
  bool packed_lines() const {
    const bool one_run = l_.outer.empty() || (l_.outer.size() == 1 && l_.outer[0].in == l_.n && l_.outer[0].out == l_.n);
    return l_.red == 1 && l_.out_red == 1 && l_.n * kLines <= kRun && one_run;
  }

  void short_lines(int64_t lines) {
    const int64_t n = l_.n, per_run = kRun / n / kLines * kLines;
    parallel_for((lines + per_run - 1) / per_run, std::max<int64_t>(1, kMinElementsPerThread / kRun), [&](int64_t b, int64_t e) {
      alignas(64) In buf[kRun], padding[kBlock];
      alignas(64) Res ybuf[kRun], scratch[kBlock];
      std::fill(padding, padding + n, P::identity());
      for (int64_t run = b; run < e; ++run) {
        const int64_t first = run * per_run, count = std::min(per_run, lines - first);
        const In* v = io_.load(io_.in + first * n * io_.isz, io_.isz, count * n, buf);
        Res* y = out_native_ ? reinterpret_cast<Res*>(io_.out) + first * n : ybuf;
        for (int64_t i = 0; i < count; i += kLines) {
          const In* src[kLines];
          Res* dst[kLines];
          Acc local[kLines], offset[kLines];
          for (int g = 0; g < kLines; ++g) {
            src[g] = i + g < count ? v + (i + g) * n : padding;
            dst[g] = i + g < count ? y + (i + g) * n : scratch;
            local[g] = offset[g] = P::identity();
          }
          scan_block(src, dst, local, offset, n, false);
        }
        if (y == ybuf) write_out(ybuf, io_.out + first * n * io_.osz, 1, count * n);
      }
    });
  }

  // The scanned axis is innermost: lines of the flattened kept dims.
  void lines() {
    const int64_t lines = count(l_.outer);
    if (packed_lines()) return short_lines(lines);
    const int64_t groups = (lines + kLines - 1) / kLines;
    if (blocks_ == 1 || groups >= 2 * get_num_threads()) {
      // One pass: each group of lines goes through its blocks in order, carrying the offsets.
      parallel_for(groups, std::max<int64_t>(1, kMinElementsPerThread / (kLines * l_.n)), [&](int64_t b, int64_t e) {
        for (int64_t grp = b; grp < e; ++grp) {
          Segment seg[kLines];
          const int count = static_cast<int>(std::min<int64_t>(kLines, lines - grp * kLines));
          Walk at(l_.outer, grp * kLines);
          for (int g = 0; g < count; ++g, at.next()) seg[g].in = at.in, seg[g].out = at.out;
          for (int64_t k = 0; k < blocks_; ++k) {
            Acc totals[kLines];
            for (int g = 0; g < count; ++g) seg[g].first = k * kScanBlock, seg[g].m = std::min(kScanBlock, l_.n - k * kScanBlock);
            scan_segments(seg, count, true, totals);
            for (int g = 0; g < count; ++g) seg[g].offset = P::combine(seg[g].offset, totals[g]);
          }
        }
      });
      return;
    }
    // Three passes over (line, block) segments: totals, offsets, outputs.
    const int64_t segments = lines * blocks_;
    std::vector<Acc> offsets(static_cast<size_t>(segments));
    const auto segment = [&](int64_t t) {
      const Walk at(l_.outer, t / blocks_);
      const int64_t first = t % blocks_ * kScanBlock;
      return Segment{at.in, at.out, first, std::min(kScanBlock, l_.n - first), offsets[t]};
    };
    const auto pass = [&](bool write) {
      parallel_for((segments + kLines - 1) / kLines, 1, [&](int64_t b, int64_t e) {
        for (int64_t grp = b; grp < e; ++grp) {
          Segment seg[kLines];
          Acc totals[kLines];
          const int count = static_cast<int>(std::min<int64_t>(kLines, segments - grp * kLines));
          for (int g = 0; g < count; ++g) seg[g] = segment(grp * kLines + g);
          scan_segments(seg, count, write, totals);
          if (!write) std::copy(totals, totals + count, offsets.begin() + grp * kLines);
        }
      });
    };
    pass(false);
    for (int64_t line = 0; line < lines; ++line) exclusive_offsets(offsets.data() + line * blocks_, blocks_, 1);
    pass(true);
  }

  // Block totals (blocks rows of w, `pitch` apart) become the offsets of their blocks.
  static void exclusive_offsets(Acc* rows, int64_t blocks, int64_t w, int64_t pitch = 1) {
    for (int64_t c = 0; c < w; ++c) {
      Acc running = P::identity();
      for (int64_t k = 0; k < blocks; ++k) {
        const Acc total = rows[k * pitch + c];
        rows[k * pitch + c] = running;
        running = P::combine(running, total);
      }
    }
  }

  // Rows [r0, r1) of one column piece from `offset` (w values); local totals into `totals`.
  void column_block(const Walk& at, int64_t c0, int64_t w, int64_t r0, int64_t r1, const Acc* offset, bool write,
                    Acc* totals) const {
    alignas(64) In buf[kColumnWidth<Acc>];
    alignas(64) Res ybuf[kColumnWidth<Acc>];
    std::fill(totals, totals + w, P::identity());
    const bool direct = out_native_ && l_.col.out == 1;
    // Narrow rows that follow each other in memory (in and out) go several at a time.
    const bool packed = w == l_.col.size && l_.col.in == 1 && l_.red == w && l_.col.out == 1 && l_.out_red == w;
    const int64_t run = packed ? kColumnWidth<Acc> / w : 1;
    const bool scattered = l_.col.in == 1 && l_.red != w;
    // Offsets that take the fp64 product (ScanOp::widens) are widened once for the block.
    alignas(64) typename P::Wide wide[P::kWidens ? kColumnWidth<Acc> : 1];
    const bool widen = write && P::widen(offset, w, wide);
    for (int64_t r = r0; r < r1; r += run) {
      const int64_t rows = std::min(run, r1 - r);
      const std::byte* src = io_.in + (at.in + r * l_.red + c0 * l_.col.in) * io_.isz;
      if (scattered && r + kPrefetchRows < r1) prefetch(src + kPrefetchRows * l_.red * io_.isz, w * io_.isz);
      const In* v = io_.load(src, l_.col.in * io_.isz, rows * w, buf);
      std::byte* dst = io_.out + (at.out + r * l_.out_red + c0 * l_.col.out) * io_.osz;
      Res* y = direct ? reinterpret_cast<Res*>(dst) : ybuf;
      scan_rows(v, y, totals, offset, widen ? wide : nullptr, rows, w, write);
      if (write && !direct) io_.store(ybuf, dst, l_.col.out * io_.osz, rows * w);
    }
  }

  // wide: the offsets widened, when they take the fp64 product (then write is set); else null.
  PTO_SIMD_CLONES static void scan_rows(const In* __restrict v, Res* __restrict y, Acc* __restrict local,
                                        const Acc* __restrict offset, const typename P::Wide* __restrict wide,
                                        int64_t rows, int64_t w, bool write) {
    if (wide) return rows_from(v, y, local, wide, rows, w);
    if (with_constant<1, 2, 3, 4, 5, 6, 7, 8>(w, [&](auto width) {
          write ? narrow_rows<width(), true>(v, y, local, offset, rows) : narrow_rows<width(), false>(v, y, local, offset, rows);
        }))
      return;
    for (int64_t i = 0; i < rows; ++i, v += w, y += w) {
      if (!write) {
        for (int64_t c = 0; c < w; ++c) local[c] = P::combine(local[c], v[c]);
        continue;
      }
      for (int64_t c = 0; c < w; ++c) {
        local[c] = P::combine(local[c], v[c]);
        y[c] = static_cast<Res>(P::combine(offset[c], local[c]));
      }
    }
  }
  // scan_rows for a width known when compiled: the running values stay in registers. With a run-time
  // width they live in `local`, and each row's sum waits for the previous row's store to reach its
  // load (cumsum over dim 1 of [8192, 1024, 2] fp32, two threads: 15.8 -> 5.5 ms; [4096, 512, 8]:
  // 5.8 -> 4.6 ms; 16 wide and more vectorise across the row and gain nothing).
  template <int W, bool Write>
  static void narrow_rows(const In* __restrict v, Res* __restrict y, Acc* __restrict local, const Acc* __restrict offset,
                          int64_t rows) {
    Acc l[W], o[W];
    for (int c = 0; c < W; ++c) l[c] = local[c], o[c] = Write ? offset[c] : P::identity();
    for (int64_t i = 0; i < rows; ++i, v += W, y += W)
      for (int c = 0; c < W; ++c) {
        l[c] = P::combine(l[c], v[c]);
        if constexpr (Write) y[c] = static_cast<Res>(P::combine(o[c], l[c]));
      }
    for (int c = 0; c < W; ++c) local[c] = l[c];
  }
  // scan_rows' outputs from widened offsets (inlined into each of its builds).
  [[gnu::always_inline]] static inline void rows_from(const In* __restrict v, Res* __restrict y, Acc* __restrict local,
                                                      const typename P::Wide* __restrict o, int64_t rows, int64_t w) {
    for (int64_t i = 0; i < rows; ++i, v += w, y += w)
      for (int64_t c = 0; c < w; ++c) {
        local[c] = P::combine(local[c], v[c]);
        y[c] = P::with_offset(o[c], local[c]);
      }
  }

  // The scanned axis is not innermost: pieces of (outer index, column chunk), vectorised across
  // the columns.
  void columns() {
    const int64_t width = std::min(kColumnWidth<Acc>, l_.col.size);
    const int64_t outers = count(l_.outer), chunks = (l_.col.size + width - 1) / width;
    const int64_t units = outers * chunks;
    const auto piece = [&](int64_t u, int64_t& c0, int64_t& w) {
      c0 = u % chunks * width;
      w = std::min(width, l_.col.size - c0);
      return Walk(l_.outer, u / chunks);
    };
    if (blocks_ == 1 || units >= 2 * get_num_threads()) {
      parallel_for(units, std::max<int64_t>(1, kMinElementsPerThread / (width * l_.n)), [&](int64_t b, int64_t e) {
        alignas(64) Acc offset[kColumnWidth<Acc>], totals[kColumnWidth<Acc>];
        for (int64_t u = b; u < e; ++u) {
          int64_t c0, w;
          const Walk at = piece(u, c0, w);
          std::fill(offset, offset + w, P::identity());
          for (int64_t k = 0; k < blocks_; ++k) {
            column_block(at, c0, w, k * kScanBlock, std::min(l_.n, (k + 1) * kScanBlock), offset, true, totals);
            combine_rows<P>(offset, totals, w);
          }
        }
      });
      return;
    }
    // Three passes over (piece, block): totals, offsets, outputs.
    std::vector<Acc> offsets(static_cast<size_t>(units * blocks_ * width));
    const auto pass = [&](bool write) {
      parallel_for(units * blocks_, 1, [&](int64_t b, int64_t e) {
        alignas(64) Acc totals[kColumnWidth<Acc>];
        for (int64_t t = b; t < e; ++t) {
          int64_t c0, w;
          const Walk at = piece(t / blocks_, c0, w);
          const int64_t k = t % blocks_;
          Acc* row = offsets.data() + t * width;
          column_block(at, c0, w, k * kScanBlock, std::min(l_.n, (k + 1) * kScanBlock), row, write, totals);
          if (!write) std::copy(totals, totals + w, row);
        }
      });
    };
    pass(false);
    for (int64_t u = 0; u < units; ++u) exclusive_offsets(offsets.data() + u * blocks_ * width, blocks_, width, width);
    pass(true);
  }

  const Scan& s_;
  const Layout l_;
  const Io<In, Res> io_;
  int64_t blocks_ = 0;
  bool out_native_ = false;
};

}  // namespace

void reduce(const Reduce& r) {
  visit_dtype(r.input.dtype(), [&](auto tag) {
    using T = compute_t<typename decltype(tag)::type>;
    if constexpr (!std::is_same_v<T, bool>) {
      switch (r.op) {
        case Op::Sum: return run_reducer<Sum, ew::kernel_t<Sum<T>, T>>(r);
        case Op::Prod: return run_reducer<Prod, ew::kernel_t<Prod<T>, T>>(r);
        case Op::Max: return run_reducer<Max, T>(r);
        case Op::Min: return run_reducer<Min, T>(r);
        case Op::ArgMax: return run_reducer<ArgMax, T>(r);
        case Op::ArgMin: return run_reducer<ArgMin, T>(r);
      }
    }
  });
}

void scan(const Scan& s) {
  visit_dtype(s.input.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<S, bool>) {
      using T = ScanIn<S>;
      if constexpr (kFloat<T>) {
        if (s.product) return Scanner<ScanOp<T, true>>(s).run();
      }
      Scanner<ScanOp<T, false>>(s).run();
    }
  });
}

}  // namespace pto::kernels::reduction
