// scatter_ kernels (docs/ops/scatter.md). Threads own disjoint target lines (the non-dim coordinates), so
// the result does not depend on the thread count:
//  * row mode (no index axis after dim, e.g. dim == last axis): a work item is one index row;
//    its contributions all land in one input line and are applied in index order. The line
//    a few rows on is prefetched meanwhile (no hardware prefetcher guesses scattered stores).
//  * block mode (index axes after dim): a work item is (outer position, block of B inner
//    positions); for each index row along dim, in order, the block's contributions are
//    applied. Each inner position is its own target line, so every target sees its
//    contributions in row-major order. When contributions are dense (index.shape[dim] >=
//    input.shape[dim] / 4) the block's targets are packed into a contiguous buffer that stays
//    in L2 while index and src stream by, and written back afterwards.
// fp16 / bf16 add / multiply accumulate per target in fp32 and round once: dense lines, packed
// blocks and dense blocks too long to pack convert the whole line / block (vectorised), sparse
// lines and blocks run three passes over their contributions (load the targets, apply, store back).
#include "kernels/scatter.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "copy/simd.h"
#include "core/allocator.h"
#include "core/half.h"
#include "kernels/dims.h"
#include "kernels/scratch.h"
#include "ptocpu/parallel.h"

#if PTO_X86
#include <immintrin.h>
#endif

namespace pto::kernels {
namespace {

// Extents or strides of up to kMaxAxes axes, held in place: a tiny call's allocations cost more than
// its work (with Scratch's inline slots, scatter_ of [4, 16] into [8, 16]: 2.1-2.3 -> 1.9 us, torch 1.7-1.9 us).
constexpr size_t kMaxAxes = 16;
class Axes {
 public:
  size_t size() const { return n_; }
  void push_back(int64_t x) { v_.at(n_++) = x; }
  void resize(size_t n) { n_ = n; }
  int64_t& operator[](size_t i) { return v_[i]; }
  int64_t operator[](size_t i) const { return v_[i]; }

 private:
  std::array<int64_t, kMaxAxes> v_{};
  size_t n_ = 0;
};

// Index positions seen as [outer axes..., dim, inner axes...] (axes of index extent 1 dropped).
struct Geometry {
  int64_t outer = 1, md = 0, inner = 1, nd = 0;  // nd = out.shape(dim)
  int64_t out_sd = 0, src_sd = 0;
  Axes outer_shape, outer_out, outer_src;
  Axes inner_shape, inner_out, inner_src;
  bool inner_identity = true;  // inner offset of out == k, and of src == k (or 0 for a scalar)

  // About one contribution per target or more: whole lines / blocks are worth converting.
  bool dense() const { return md * 4 >= nd; }

  static int64_t offset(int64_t flat, const Axes& shape, const Axes& strides) {
    if (shape.size() == 1) return flat * strides[0];  // the common case, once per row: no division
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
    std::array<int64_t, kMaxAxes> pos{};
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
  // Index positions are row-major, so out and src usually step over neighbouring axes as one.
  merge_contiguous_dims(g.outer_shape, 0, g.outer_out, g.outer_src);
  merge_contiguous_dims(g.inner_shape, 0, g.inner_out, g.inner_src);
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

// The 16-bit floats: decode to the fp32 accumulator, round once at the end.
inline float decode(bf16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
inline uint32_t float_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline uint16_t bf16_round(uint32_t bits) {  // round to nearest even; same as float_to_bf16_bits
  const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16;
  const uint32_t quiet_nan = (bits >> 16) | 0x40;
  return static_cast<uint16_t>((bits & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded);
}
inline float float_from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
// fp16 -> fp32 by a table of all 2^16 codes (256 KiB, built at compile time, stays in L2): one
// load per decode in the accumulate loops. Integer arithmetic, bit-identical to
// fp16_bits_to_float (NaN codes give its quiet NaN with the code's sign).
constexpr uint32_t fp16_to_fp32_bits(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, ex = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  if (ex == 0x1F) return sign | (man ? 0x7FC00000u : 0x7F800000u);
  if (ex != 0) return sign | ((ex + 112) << 23) | (man << 13);
  if (man == 0) return sign;
  uint32_t e = 113;  // subnormal: man * 2^-24, normalised
  while (!(man & 0x400u)) man <<= 1, --e;
  return sign | (e << 23) | ((man & 0x3FFu) << 13);
}
struct Fp16Table {
  uint32_t bits[1 << 16];
  constexpr Fp16Table() : bits() {
    for (uint32_t h = 0; h < (1u << 16); ++h) bits[h] = fp16_to_fp32_bits(h);
  }
};
constexpr Fp16Table kFp16Table{};
inline float decode(fp16_t v) { return float_from_bits(kFp16Table.bits[v.bits]); }
// The same decode without the table, branch-free (Marat Dukhan's FP16 bit trick, NaN codes made
// the table's quiet NaN), for loops that vectorise; bit-identical to decode over all 2^16 codes.
inline float decode_arith(fp16_t v) {
  const uint32_t h = v.bits, sign = (h & 0x8000u) << 16, two_w = h << 17;
  const uint32_t normal = float_bits(float_from_bits((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f);
  const uint32_t subnormal = float_bits(float_from_bits((two_w >> 17) | (126u << 23)) - 0.5f);
  const uint32_t magnitude = two_w < (1u << 27) ? subnormal : normal;
  return float_from_bits(sign | ((h & 0x7FFFu) > 0x7C00u ? 0x7FC00000u : magnitude));
}
// fp32 -> fp16 inline and branch-free, so that loops over it vectorise (the exact IEEE bit trick
// of Marat Dukhan's FP16 library), bit-identical to float_to_fp16_bits (checked over all 2^32
// floats); a NaN gives its canonical quiet NaN, as float_to_fp16_bits does.
inline uint16_t fp16_round(float f) {  // round to nearest even, overflow to inf
  const uint32_t w = float_bits(f), shl1 = w + w;
  uint32_t bias = std::max(shl1 & 0xFF000000u, 0x71000000u);
  const float base = float_from_bits((bias >> 1) + 0x07800000u) + (std::fabs(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t bits = float_bits(base);
  const uint32_t sign = (w & 0x80000000u) >> 16;
  const uint32_t finite = sign | (((bits >> 13) & 0x7C00u) + (bits & 0x0FFFu));
  return static_cast<uint16_t>(shl1 > 0xFF000000u ? sign | 0x7E00u : finite);
}

// Stores an accumulator back: rounded once, except that an element whose accumulator still
// holds exactly its decoded value keeps its own bits (untouched elements, NaN payloads).
inline void store_back(bf16_t& dst, float acc) {
  const uint32_t a = float_bits(acc), orig = static_cast<uint32_t>(dst.bits) << 16;
  dst.bits = a == orig ? dst.bits : bf16_round(a);
}
inline void store_back(fp16_t& dst, float acc) {  // branch-free: a target may be stored several times
  const uint16_t keep = static_cast<uint16_t>(0u - static_cast<uint32_t>(float_bits(decode_arith(dst)) == float_bits(acc)));
  dst.bits = static_cast<uint16_t>((dst.bits & keep) | (fp16_round(acc) & ~keep));
}

// A contiguous run of 16-bit floats to fp32 accumulators (vectorised per target).
inline float decode_arith(bf16_t v) { return decode(v); }
template <class T>
PTO_SIMD_CLONES void decode_run(float* dst, const T* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = decode_arith(src[i]);
}

template <class T>
inline constexpr bool kNeedsAccumulator = std::is_same_v<T, fp16_t> || std::is_same_v<T, bf16_t>;

// ---- the walks: call f(dst, src element, target index along dim, position in block) --------

template <class T, class I, bool kUnit, class F>
inline void walk_row(T* orow, const T* srow, const I* irow, int64_t j0, int64_t j1, int64_t osd, int64_t ssd, F&& f) {
  for (int64_t j = j0; j < j1; ++j) {
    const int64_t t = irow[j];
    f(orow[kUnit ? t : t * osd], srow[kUnit ? j : j * ssd], t, 0);
  }
}

constexpr int64_t kWalkChunk = 64;  // contributions per body call of chunked_with_prefetch
constexpr int64_t kRandomLineBytes = 2048;  // row mode: target lines always prefetched from here

// Runs body(j0, j1) over [0, md) in chunks of kWalkChunk and meanwhile prefetches (for writing)
// the `bytes` at `ahead`: the input line of a later row, whose scattered targets no hardware
// prefetcher would guess.
template <class Body>
inline void chunked_with_prefetch(int64_t md, const char* ahead, int64_t bytes, Body&& body) {
  const int64_t lines = ahead ? (bytes + 63) / 64 : 0;
  const int64_t chunks = (md + kWalkChunk - 1) / kWalkChunk;
  const int64_t per_chunk = chunks ? (lines + chunks - 1) / chunks : 0;
  int64_t next = 0;
  for (int64_t j0 = 0; j0 < md; j0 += kWalkChunk) {
    for (int64_t p = 0; p < per_chunk && next < lines; ++p, ++next) __builtin_prefetch(ahead + next * 64, 1);
    body(j0, std::min(md, j0 + kWalkChunk));
  }
}

// Calls row(index row, src row) for each of a block's g.md rows. Index / src rows are far apart:
// where kernel_tuning().prefetch_streams (docs/kernels.md#prefetching), the first kn indices (and,
// with kIdentity, the src row) kAhead rows on are fetched early.
template <int64_t kAhead, class T, class I, bool kIdentity, class Row>
inline void block_rows(const Geometry& g, const T* sbase, const I* ibase, int64_t kn, int64_t src_k, Row&& row) {
  const int64_t K = g.inner, ssd = g.src_sd;
  const int64_t line_elems = 64 / static_cast<int64_t>(sizeof(I));
  const int64_t fetched = kernel_tuning().prefetch_streams ? g.md - kAhead : 0;  // rows that fetch ahead
  for (int64_t i = 0; i < g.md; ++i) {
    const I* irow = ibase + i * K;
    const T* srow = sbase + i * ssd;
    if (i < fetched) {
      for (int64_t c = 0; c < kn; c += line_elems) __builtin_prefetch(irow + kAhead * K + c);
      if (kIdentity && src_k)
        for (int64_t c = 0; c < kn * static_cast<int64_t>(sizeof(T)); c += 64)
          __builtin_prefetch(reinterpret_cast<const char*>(srow + kAhead * ssd) + c);
    }
    row(irow, srow);
  }
}

template <class T, class I, bool kIdentity, class F>
inline void walk_block(const Geometry& g, T* obase, const T* sbase, const I* ibase, int64_t kn, int64_t src_k,
                       const int64_t* ooff, const int64_t* soff, F&& f) {
  const int64_t osd = g.out_sd;
  block_rows<8, T, I, kIdentity>(g, sbase, ibase, kn, src_k, [&](const I* irow, const T* srow) {
    for (int64_t k = 0; k < kn; ++k) {
      const int64_t t = irow[k];
      if constexpr (kIdentity) f(obase[t * osd + k], srow[k * src_k], t, k);
      else f(obase[t * osd + ooff[k]], srow[soff[k]], t, k);
    }
  });
}

// ---- packed blocks --------------------------------------------------------------------------
// A dense block (many contributions per target) is applied to a packed copy of its targets:
// nd x kn elements (fp32 accumulators for fp16 / bf16 add / multiply), contiguous, so they stay
// in L2 — in the input itself, targets nd rows apart often share a handful of cache sets
// (power-of-two row strides) and every update would miss. A byte per packed element marks the
// targets; only those are written back (an untargeted element is never stored to: another
// thread may be writing it). Reduce None needs no copy in, only the marks.

template <class T, ScatterReduce R>
using Packed = std::conditional_t<R != ScatterReduce::None && kNeedsAccumulator<T>, float, T>;

template <class T, class P>
inline P pack_load(const T& v) {
  if constexpr (std::is_same_v<T, P>) return v;
  else return decode(v);
}
template <class T, class P>
inline void unpack_store(T& dst, P v) {
  if constexpr (std::is_same_v<T, P>) dst = v;
  else store_back(dst, v);
}

// dst[i] = v[i] where marked[i] (masked stores once vectorised; nothing else is written).
template <class T, class P>
PTO_SIMD_CLONES void store_marked(T* dst, const P* v, const uint8_t* marked, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (marked[i]) unpack_store<T, P>(dst[i], v[i]);
}

template <class T, class I, ScatterReduce R, bool kIdentity>
void packed_block(const Geometry& g, T* obase, const T* sbase, const I* ibase, int64_t kn, int64_t src_k,
                  const int64_t* ooff, const int64_t* soff, Packed<T, R>* buf, uint8_t* marks) {
  using P = Packed<T, R>;
  const int64_t osd = g.out_sd;
  if constexpr (R != ScatterReduce::None) {
    for (int64_t t = 0; t < g.nd; ++t) {
      const T* row = obase + t * osd;
      P* b = buf + t * kn;
      if constexpr (kIdentity && std::is_same_v<T, P>) std::memcpy(b, row, kn * sizeof(T));
      else if constexpr (kIdentity) decode_run(b, row, kn);
      else for (int64_t k = 0; k < kn; ++k) b[k] = pack_load<T, P>(row[ooff[k]]);
    }
  }
  // Elements of 4 bytes or more are stored back where marked, by masked stores; narrower ones (no
  // masked stores below AVX-512, and a branch per element on marks as random as the index) once
  // per contribution, in a second walk of the block's index rows (fp16 x [16, 16, 256, 64] dim 2,
  // index [16, 16, 128, 64], 2 threads of an AVX2 EPYC: 13.1 -> 2.8 ms; torch 5.3 ms).
  constexpr bool kMarks = sizeof(T) >= 4;
  if constexpr (kMarks) std::memset(marks, 0, static_cast<size_t>(g.nd * kn));
  block_rows<16, T, I, kIdentity>(g, sbase, ibase, kn, src_k, [&](const I* irow, const T* srow) {
    for (int64_t k = 0; k < kn; ++k) {
      const int64_t at = static_cast<int64_t>(irow[k]) * kn + k;
      const T& v = srow[kIdentity ? k * src_k : soff[k]];
      if constexpr (kMarks) marks[at] = 1;
      if constexpr (R == ScatterReduce::None) buf[at] = v;
      else buf[at] = combine<P, R>(buf[at], pack_load<T, P>(v));
    }
  });
  if constexpr (!kMarks) {
    walk_block<T, I, kIdentity>(g, obase, sbase, ibase, kn, src_k, ooff, soff,
                                [&](T& target, const T&, int64_t t, int64_t k) { unpack_store<T, P>(target, buf[t * kn + k]); });
    return;
  }
  for (int64_t t = 0; t < g.nd; ++t) {
    T* row = obase + t * osd;
    const P* b = buf + t * kn;
    const uint8_t* m = marks + t * kn;
    if constexpr (kIdentity) store_marked(row, b, m, kn);
    else for (int64_t k = 0; k < kn; ++k) if (m[k]) unpack_store<T, P>(row[ooff[k]], b[k]);
  }
}

// ---- whole runs of 16-bit floats (row mode's dense lines) ------------------------------------
// fp16 goes through the CPU's conversions (half::widen / narrow: vcvtph2ps / vcvtps2ph where the
// CPU has them), bf16 through its shifts. A NaN code widens quieted with its payload rather than
// as decode's quiet NaN; stored_bits compares against the same widening, so an element
// keeps its bits exactly where store_back keeps them, and a NaN result is stored as fp16_round
// stores it.

template <class T>
void widen_run(float* dst, const T* src, int64_t n) {
  if constexpr (std::is_same_v<T, fp16_t>) half::widen(src, dst, n);
  else decode_run(dst, src, n);
}

// An element's bits after the store: its own where its widening equals the accumulator bit for
// bit, else the rounded value, or the quiet NaN sign | 0x7E00 for a NaN accumulator. Masks, not
// branches: which elements changed is as random as the index, and the loops over it vectorise.
inline uint16_t merged_bits(uint16_t own, uint32_t widened, uint16_t rounded, uint32_t acc) {
  const uint16_t nan = static_cast<uint16_t>(((acc >> 16) & 0x8000u) | 0x7E00u);
  const uint16_t is_nan = static_cast<uint16_t>(0u - static_cast<uint32_t>((acc & 0x7FFFFFFFu) > 0x7F800000u));
  const uint16_t changed = static_cast<uint16_t>(0u - static_cast<uint32_t>(widened != acc));
  const uint16_t value = static_cast<uint16_t>((nan & is_nan) | (rounded & ~is_nan));
  return static_cast<uint16_t>((value & changed) | (own & ~changed));
}
PTO_SIMD_CLONES void merge_rounded(uint16_t* __restrict out, const fp16_t* __restrict own, const float* __restrict widened,
                                   const fp16_t* __restrict rounded, const float* __restrict acc, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = merged_bits(own[i].bits, float_bits(widened[i]), rounded[i].bits, float_bits(acc[i]));
}
PTO_SIMD_CLONES void merge_rounded(uint16_t* __restrict out, const bf16_t* __restrict own, const float* __restrict acc,
                                   int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t a = float_bits(acc[i]);
    out[i] = a == static_cast<uint32_t>(own[i].bits) << 16 ? own[i].bits : bf16_round(a);
  }
}

// The bits a run of accumulators stores back (into `bits`, a pass that vectorises): rounded once,
// or the element's own bits where its accumulator still holds its widened value (NaN payloads,
// values a contribution left unchanged), as store_back keeps them. The caller writes them to its
// targets only (scatter_ writes nothing else: another call may be writing the other elements).
// A whole-run pass and a write per contribution instead of a branch per element on whether it
// is a target and changed (as random as the index): add over x [262144, 16] with index [262144, 16]
// on 2 threads of an AVX2 EPYC, fp16 12.4 -> 5.2 ms, bf16 11.2 -> 4.9 ms.
template <class T>
void stored_bits(const T* own, const float* acc, uint16_t* bits, int64_t n) {
  if constexpr (std::is_same_v<T, fp16_t>) {
    constexpr int64_t kPiece = 256;
    alignas(64) float widened[kPiece];
    alignas(64) fp16_t rounded[kPiece];
    for (int64_t i = 0; i < n; i += kPiece) {
      const int64_t m = std::min(kPiece, n - i);
      half::widen(own + i, widened, m);
      half::narrow(acc + i, rounded, m);
      merge_rounded(bits + i, own + i, widened, rounded, acc + i, m);
    }
  } else {
    merge_rounded(bits, own, acc, n);
  }
}

// Writes bits[i] to out[i] where it differs from own[i], the element's bits before the call: the
// elements this call changed, and no other (see stored_bits). Sixteen compared at once, the
// changed ones found by their mask bits: a branch per element on whether it changed (as random as
// the index) cost more than the rest of a block's store.
#if PTO_X86
PTO_TARGET_AVX2 int64_t store_changed_avx2(uint16_t* out, const uint16_t* own, const uint16_t* bits, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i same = _mm256_cmpeq_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(own + i)),
                                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bits + i)));
    for (uint32_t changed = ~static_cast<uint32_t>(_mm256_movemask_epi8(same)) & 0x55555555u; changed;
         changed &= changed - 1) {
      const int j = __builtin_ctz(changed) >> 1;  // two mask bits per element
      out[i + j] = bits[i + j];
    }
  }
  return i;
}
#endif
template <class T>
void store_changed(T* out, const T* own, const uint16_t* bits, int64_t n) {
  int64_t i = 0;
#if PTO_X86
  if (kernel_tuning().isa != Isa::Baseline)
    i = store_changed_avx2(reinterpret_cast<uint16_t*>(out), reinterpret_cast<const uint16_t*>(own), bits, n);
#endif
  for (; i < n; ++i)
    if (bits[i] != own[i].bits) out[i].bits = bits[i];
}

// A block of kn targets in each of nd lines (line t at obase + t * out_sd) as fp32 accumulators,
// ac[t * kn + k], with each element's bits before the call kept beside them, and back
// (stored_bits, store_changed): an element whose accumulator no longer holds the widening of its
// bits before is rounded once and stored; every other one is left alone: untouched by this call
// (another call may be writing it), or left with its own bits (NaN payloads, contributions that
// changed nothing), as store_back keeps them. Lines that follow each other (out_sd == kn) are
// one run. Whole-run passes rather than a loop per element with its conversions, which GCC 12
// left scalar (fp16 add of x [262144, 16] at dim 0, AVX2 EPYC: one thread 52-56 -> 23 ms, two
// threads 29 -> 13-21 ms, torch 19-26 ms).
template <class F>
void block_runs(int64_t out_sd, int64_t nd, int64_t kn, F&& run) {  // run(offset in line, in block, n)
  if (out_sd == kn) run(int64_t(0), int64_t(0), nd * kn);
  else for (int64_t t = 0; t < nd; ++t) run(t * out_sd, t * kn, kn);
}
template <class T>
void widen_block(float* ac, T* before, const T* obase, int64_t out_sd, int64_t nd, int64_t kn) {
  block_runs(out_sd, nd, kn, [&](int64_t at, int64_t k, int64_t n) {
    std::memcpy(before + k, obase + at, static_cast<size_t>(n) * sizeof(T));
    widen_run(ac + k, before + k, n);
  });
}
template <class T>
void store_block(T* obase, int64_t out_sd, const float* ac, const T* before, int64_t nd, int64_t kn) {
  constexpr int64_t kPiece = 1024;
  alignas(64) uint16_t bits[kPiece];
  block_runs(out_sd, nd, kn, [&](int64_t at, int64_t k, int64_t n) {
    for (int64_t i = 0; i < n; i += kPiece) {
      const int64_t m = std::min(kPiece, n - i);
      stored_bits(before + k + i, ac + k + i, bits, m);
      store_changed(obase + at + i, before + k + i, bits, m);
    }
  });
}

// ---- the driver ----------------------------------------------------------------------------

// Row mode with short lines and few contributions per row (narrow tensors, e.g. x [N, 8],
// index [N, 1]): per-row bookkeeping would cost more than the row, so each row is a plain loop
// and consecutive rows stream through the hardware prefetcher. fp16 / bf16 add / multiply
// load their targets into fp32 accumulators on the stack, apply, and store the targets back.
constexpr int64_t kShortRowContributions = 32;
constexpr int64_t kShortLineBytes = 1024;

// fp16 conversions for the short-row loops: the portable ones above, or the CPU's (F16C) via
// _Float16 casts in a function compiled for it. inf / NaN codes and NaN results take the
// portable path, whose NaN handling is the contract; finite values convert identically (IEEE).
struct PortableFp16 {
  static float decode(fp16_t v) { return kernels::decode(v); }
  static uint16_t round(float f) { return fp16_round(f); }
};
struct HardwareFp16 {
  __attribute__((always_inline)) static inline float decode(fp16_t v) {
    if ((v.bits & 0x7C00) == 0x7C00) return kernels::decode(v);
    _Float16 h;
    std::memcpy(&h, &v.bits, 2);
    return static_cast<float>(h);
  }
  __attribute__((always_inline)) static inline uint16_t round(float f) {
    if (std::isnan(f)) return float_to_fp16_bits(f);
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
  }
};
template <class Conv, class T>
__attribute__((always_inline)) inline float decode_with(const T& v) {
  if constexpr (std::is_same_v<T, fp16_t>) return Conv::decode(v);
  else return decode(v);
}
template <class Conv, class T>
__attribute__((always_inline)) inline void store_back_with(T& dst, float acc) {
  if constexpr (std::is_same_v<T, fp16_t>) {  // branch-free, as store_back
    const uint16_t keep = static_cast<uint16_t>(0u - static_cast<uint32_t>(float_bits(Conv::decode(dst)) == float_bits(acc)));
    dst.bits = static_cast<uint16_t>((dst.bits & keep) | (Conv::round(acc) & ~keep));
  } else {
    store_back(dst, acc);
  }
}

template <class T, class I, ScatterReduce R, class Conv>
__attribute__((always_inline)) inline void short_rows_range(const ScatterArgs& a, const Geometry& g, int64_t begin,
                                                            int64_t end) {
  constexpr bool kAcc = R != ScatterReduce::None && kNeedsAccumulator<T>;
  T* out = static_cast<T*>(a.out.data());
  const bool scalar = !a.src.defined();
  const T* src = scalar ? static_cast<const T*>(a.scalar) : static_cast<const T*>(a.src.data());
  const I* idx = a.index.data_as<I>();
  const int64_t md = g.md, osd = g.out_sd, ssd = scalar ? 0 : g.src_sd;
  [[maybe_unused]] float ac[kShortLineBytes / 2];
  [[maybe_unused]] uint64_t touched[kShortLineBytes / 2 / 64];
  const int64_t words = (g.nd + 63) / 64;
  // Lines longer than a cache line with few targets each: the targets kTargetsAhead rows on are
  // prefetched for writing (a random line of each row; the hardware prefetchers follow the rows
  // only when every line of them is touched).
  constexpr int64_t kTargetsAhead = 16;
  const bool prefetch = g.nd * osd * static_cast<int64_t>(sizeof(T)) > 64 && md * 4 <= g.nd;
  for (int64_t o = begin; o < end; ++o) {
    T* orow = out + g.out_outer(o);
    const T* srow = scalar ? src : src + g.src_outer(o);
    const I* irow = idx + o * md;
    if (prefetch && o + kTargetsAhead < end) {
      const T* arow = out + g.out_outer(o + kTargetsAhead);
      for (int64_t j = 0; j < md; ++j) __builtin_prefetch(arow + irow[kTargetsAhead * md + j] * osd, 1);
    }
    if constexpr (kAcc) {  // each target stored once: a bit per line element marks the targets
      if (words == 1) {  // lines of up to 64 elements: the whole line decoded, the marks in a register
        uint64_t bits = 0;
        for (int64_t t = 0; t < g.nd; ++t) ac[t] = decode_with<Conv>(orow[t * osd]);
        for (int64_t j = 0; j < md; ++j) {
          const int64_t t = irow[j];
          ac[t] = combine<float, R>(ac[t], decode_with<Conv>(srow[j * ssd]));
          bits |= uint64_t(1) << t;
        }
        for (; bits; bits &= bits - 1) {
          const int64_t t = std::countr_zero(bits);
          store_back_with<Conv>(orow[t * osd], ac[t]);
        }
        continue;
      }
      std::fill(touched, touched + words, uint64_t(0));
      for (int64_t j = 0; j < md; ++j) {
        const int64_t t = irow[j];
        ac[t] = decode_with<Conv>(orow[t * osd]);
        touched[t >> 6] |= uint64_t(1) << (t & 63);
      }
      for (int64_t j = 0; j < md; ++j) ac[irow[j]] = combine<float, R>(ac[irow[j]], decode_with<Conv>(srow[j * ssd]));
      for (int64_t w = 0; w < words; ++w)
        for (uint64_t bits = touched[w]; bits; bits &= bits - 1) {
          const int64_t t = w * 64 + std::countr_zero(bits);
          store_back_with<Conv>(orow[t * osd], ac[t]);
        }
    } else {
      for (int64_t j = 0; j < md; ++j) {
        T& dst = orow[irow[j] * osd];
        if constexpr (R == ScatterReduce::None) dst = srow[j * ssd];
        else dst = combine<T, R>(dst, srow[j * ssd]);
      }
    }
  }
}

template <class T, class I, ScatterReduce R>
void short_rows_portable(const ScatterArgs& a, const Geometry& g, int64_t begin, int64_t end) {
  short_rows_range<T, I, R, PortableFp16>(a, g, begin, end);
}
template <class T, class I, ScatterReduce R>
PTO_TARGET_F16C void short_rows_f16c(const ScatterArgs& a, const Geometry& g, int64_t begin, int64_t end) {
  short_rows_range<T, I, R, HardwareFp16>(a, g, begin, end);
}

// fp16 / bf16 add / multiply over short lines that each take at least a quarter of their length
// in contributions, with the lines, the src rows and the index rows each back to back: a group
// of rows is widened at once, accumulated in fp32, and its targets stored back at once
// (stored_bits).
constexpr int64_t kGroupElements = 1024;  // elements per group and buffer (4 KiB of fp32)

bool lines_back_to_back(const ScatterArgs& a, const Geometry& g) {
  const bool scalar = !a.src.defined();
  return g.out_sd == 1 && g.outer_shape.size() == 1 && g.outer_out[0] == g.nd &&
         (scalar || (g.src_sd == 1 && g.outer_src[0] == g.md)) && g.dense();
}

template <class T, class I, ScatterReduce R>
void short_rows_grouped(const ScatterArgs& a, const Geometry& g, int64_t begin, int64_t end) {
  T* out = static_cast<T*>(a.out.data());
  const bool scalar = !a.src.defined();
  const T* src = scalar ? static_cast<const T*>(a.scalar) : static_cast<const T*>(a.src.data());
  const I* idx = a.index.data_as<I>();
  const int64_t nd = g.nd, md = g.md;
  const int64_t rows_per_group = std::max<int64_t>(1, kGroupElements / std::max(nd, md));
  alignas(64) float ac[kGroupElements];
  alignas(64) float value[kGroupElements];
  alignas(64) uint16_t bits[kGroupElements];
  if (scalar) std::fill(value, value + kGroupElements, decode(*src));
  for (int64_t o = begin; o < end; o += rows_per_group) {
    const int64_t rows = std::min(rows_per_group, end - o);
    T* lines = out + o * nd;
    widen_run(ac, lines, rows * nd);
    if (!scalar) widen_run(value, src + o * md, rows * md);
    const I* irow = idx + o * md;
    for (int64_t r = 0; r < rows; ++r) {
      float* line = ac + r * nd;
      const float* v = scalar ? value : value + r * md;
      for (int64_t j = 0; j < md; ++j) line[irow[j]] = combine<float, R>(line[irow[j]], v[j]);
      irow += md;
    }
    stored_bits(lines, ac, bits, rows * nd);
    irow = idx + o * md;
    for (int64_t r = 0; r < rows; ++r, irow += md)
      for (int64_t j = 0; j < md; ++j) lines[r * nd + irow[j]].bits = bits[r * nd + irow[j]];
  }
}

// Contributions applied straight to the targets over short lines along one outer axis, with
// unit steps along dim (the common x [N, w] with index [N, m]): the row loop only advances three
// pointers, and a row of kMd contributions (0: md at run time) is unrolled. At a few
// contributions a row, per-row bookkeeping would otherwise cost as much as the row.
template <class T, class I, ScatterReduce R, int64_t kMd>
void short_rows_flat(const ScatterArgs& a, const Geometry& g, int64_t begin, int64_t end) {
  const bool scalar = !a.src.defined();
  const int64_t md = kMd ? kMd : g.md, so = scalar ? 0 : g.outer_src[0], ss = scalar ? 0 : 1;
  T* line = static_cast<T*>(a.out.data()) + begin * g.outer_out[0];
  const T* srow = scalar ? static_cast<const T*>(a.scalar) : static_cast<const T*>(a.src.data()) + begin * so;
  const I* irow = a.index.data_as<I>() + begin * md;
  for (int64_t o = begin; o < end; ++o, line += g.outer_out[0], srow += so, irow += md) {
    for (int64_t j = 0; j < md; ++j) {
      T& dst = line[irow[j]];
      if constexpr (R == ScatterReduce::None) dst = srow[j * ss];
      else dst = combine<T, R>(dst, srow[j * ss]);
    }
  }
}

// (Lines longer than a cache line with few targets each keep short_rows_range, which prefetches them.)
template <class T>
bool flat_short_rows(const ScatterArgs& a, const Geometry& g) {
  return g.out_sd == 1 && g.outer_shape.size() == 1 && (!a.src.defined() || g.src_sd == 1) &&
         (g.nd * static_cast<int64_t>(sizeof(T)) <= 64 || g.md * 4 > g.nd);
}

template <class T, class I, ScatterReduce R>
void short_rows(const ScatterArgs& a, const Geometry& g) {
  const int64_t min_rows = std::max<int64_t>(1, 16384 / g.md);
  if constexpr (R != ScatterReduce::None && kNeedsAccumulator<T>) {
    if (lines_back_to_back(a, g)) {
      parallel_for(g.outer, min_rows,
                   [&](int64_t begin, int64_t end) { short_rows_grouped<T, I, R>(a, g, begin, end); });
      return;
    }
  } else {
    if (flat_short_rows<T>(a, g)) {
      auto range = &short_rows_flat<T, I, R, 0>;
      with_constant<1, 2, 4, 8, 16>(g.md, [&](auto md) { range = &short_rows_flat<T, I, R, md()>; });
      parallel_for(g.outer, min_rows, [&](int64_t begin, int64_t end) { range(a, g, begin, end); });
      return;
    }
  }
  auto range = &short_rows_portable<T, I, R>;
#if PTO_X86
  if constexpr (std::is_same_v<T, fp16_t> && R != ScatterReduce::None)
    if (kernel_tuning().isa != Isa::Baseline && __builtin_cpu_supports("f16c")) range = &short_rows_f16c<T, I, R>;
#endif
  parallel_for(g.outer, min_rows, [&](int64_t begin, int64_t end) { range(a, g, begin, end); });
}

// fp16 / bf16 add / multiply in block mode, dense blocks too long to pack and too few of them to
// give every thread its own: each block of kn inner positions runs in three phases on all threads
// over one shared set of fp32 accumulators. Target rows are widened and stored back
// split by rows (threads splitting the columns would stream through the same cache lines
// together); the walk is split by columns, so every target still sees its contributions in index
// order, on one thread.
template <class T, class I, ScatterReduce R>
void dense_blocks_phased(const ScatterArgs& a, const Geometry& g, int64_t B) {
  T* out = static_cast<T*>(a.out.data());
  const bool scalar = !a.src.defined();
  const T* src = scalar ? static_cast<const T*>(a.scalar) : static_cast<const T*>(a.src.data());
  const I* idx = a.index.data_as<I>();
  const int64_t src_k = scalar ? 0 : 1;
  const std::shared_ptr<void> storage = allocate_storage(static_cast<size_t>(g.nd * B) * (sizeof(float) + sizeof(T)), false);
  float* const ac = static_cast<float*>(storage.get());
  T* const before = reinterpret_cast<T*>(ac + g.nd * B);
  const int64_t min_rows = std::max<int64_t>(1, 16384 / B);
  for (int64_t o = 0; o < g.outer; ++o) {
    for (int64_t k0 = 0; k0 < g.inner; k0 += B) {
      const int64_t kn = std::min(B, g.inner - k0);
      T* obase = out + g.out_outer(o) + k0;
      const T* sbase = scalar ? src : src + g.src_outer(o) + k0;
      const I* ibase = idx + o * g.md * g.inner + k0;
      parallel_for(g.nd, min_rows, [&](int64_t t0, int64_t t1) {
        widen_block(ac + t0 * kn, before + t0 * kn, obase + t0 * g.out_sd, g.out_sd, t1 - t0, kn);
      });
      parallel_for(kn, 1, [&](int64_t c0, int64_t c1) {
        walk_block<T, I, true>(g, obase + c0, sbase + c0 * src_k, ibase + c0, c1 - c0, src_k, nullptr, nullptr,
                               [&](T&, const T& v, int64_t t, int64_t k) {
                                 float& acc = ac[t * kn + c0 + k];
                                 acc = combine<float, R>(acc, decode(v));
                               });
      });
      parallel_for(g.nd, min_rows, [&](int64_t t0, int64_t t1) {
        store_block(obase + t0 * g.out_sd, g.out_sd, ac + t0 * kn, before + t0 * kn, t1 - t0, kn);
      });
    }
  }
}

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

  // Short fp16 / bf16 lines back to back take the row groups of short_rows_grouped whatever their
  // contributions: a line at a time, its widening, rounding and store back were passes over a
  // few cache lines each (add of x [65536, 64] fp16 with a full-width index, 2 threads of a Xeon:
  // 9.2-9.6 -> 5.5-6.7 ms, torch 8-10).
  if (g.inner == 1 && g.nd * static_cast<int64_t>(sizeof(T)) <= kShortLineBytes &&
      (g.md <= kShortRowContributions || (kAcc && g.md <= kGroupElements && lines_back_to_back(a, g)))) {
    short_rows<T, I, R>(a, g);
    return;
  }
  if (g.inner == 1) {  // row mode
    const bool unit = g.out_sd == 1 && (scalar || g.src_sd == 1);
    const int64_t min_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.md));
    // The target line of a row is nd elements; when it is contiguous, the line about 16 KiB on is
    // prefetched while this row is scattered (further ahead, it leaves L1 before its turn). A line
    // of kRandomLineBytes or more is written at random places that no hardware prefetcher guesses:
    // always; a shorter one is read nearly in order: where kernel_tuning().prefetch_streams
    // (docs/kernels.md#prefetching; Zen 4, reduce add over rows of 512 fp32: 14.5 -> 11.4 ms with
    // them, rows of 64 2.5 -> 2.8 ms).
    const int64_t line_bytes = g.out_sd == 1 ? g.nd * static_cast<int64_t>(sizeof(T)) : 0;
    const bool lines_ahead = line_bytes >= kRandomLineBytes || (line_bytes && kernel_tuning().prefetch_streams);
    const int64_t kAhead = std::clamp<int64_t>((16 << 10) / std::max<int64_t>(1, line_bytes), 1, 4);
    const bool dense_row = g.out_sd == 1 && g.dense();
    // Dense lines keep two accumulator buffers: a line is stored back after the next one is
    // walked, when its scattered stores have left the store buffer (read back at once as vectors,
    // they stall on store forwarding).
    Scratch<float> scratch(2 * g.nd, kAcc);
    Scratch<uint16_t> line_bits(g.nd, kAcc && dense_row);
    parallel_for(g.outer, min_rows, [&](int64_t begin, int64_t end) {
      float* const ac_pair = scratch.take();
      uint16_t* const bits = line_bits.take();
      T* pending = nullptr;  // a dense line walked but not yet stored back: in the other buffer
      const I* pending_index = nullptr;
      const auto store_pending = [&](int64_t which) {  // `which`: the half of the buffer it is in
        if constexpr (kAcc) {
          if (!pending) return;
          stored_bits(pending, ac_pair + which * g.nd, bits, g.nd);
          for (int64_t j = 0; j < g.md; ++j) pending[pending_index[j]].bits = bits[pending_index[j]];
        }
      };
      for (int64_t o = begin; o < end; ++o) {
        const int64_t half = (o - begin) & 1;
        float* const ac = ac_pair ? ac_pair + half * g.nd : nullptr;
        T* orow = out + g.out_outer(o);
        const T* srow = scalar ? src : src + g.src_outer(o);
        const I* irow = idx + o * g.md;
        const int64_t ssd = scalar ? 0 : g.src_sd;
        const char* ahead =
            lines_ahead && o + kAhead < end ? reinterpret_cast<const char*>(out + g.out_outer(o + kAhead)) : nullptr;
        // f over the row's contributions; the prefetch rides along when `prefetch` is set
        auto walk = [&](bool prefetch, auto&& f) {
          chunked_with_prefetch(g.md, prefetch ? ahead : nullptr, line_bytes, [&](int64_t j0, int64_t j1) {
            if (unit && !scalar) walk_row<T, I, true>(orow, srow, irow, j0, j1, 1, 1, f);
            else walk_row<T, I, false>(orow, srow, irow, j0, j1, g.out_sd, ssd, f);
          });
        };
        if constexpr (kAcc) {
          auto accumulate = [&](T&, const T& v, int64_t t, int64_t) { ac[t] = combine<float, R>(ac[t], decode(v)); };
          if (dense_row) {  // the whole line read into the accumulators (one vectorised pass), its
                            // targets stored back (stored_bits)
            widen_run(ac, orow, g.nd);
            if (!scalar && ssd == 1) {  // the src run widened a chunk at a time (vectorised)
              chunked_with_prefetch(g.md, ahead, line_bytes, [&](int64_t j0, int64_t j1) {
                alignas(64) float v[kWalkChunk];
                widen_run(v, srow + j0, j1 - j0);
                for (int64_t j = j0; j < j1; ++j) ac[irow[j]] = combine<float, R>(ac[irow[j]], v[j - j0]);
              });
            } else {  // decode: the widening's value for every code but NaN's, which wins either way
              walk(true, [&](T&, const T& v, int64_t t, int64_t) { ac[t] = combine<float, R>(ac[t], decode(v)); });
            }
            store_pending(1 - half);
            pending = orow;
            pending_index = irow;
          } else {  // a sparse line: only the targets
            walk(true, [&](T& dst, const T&, int64_t t, int64_t) { ac[t] = decode(dst); });
            walk(false, accumulate);
            walk(false, [&](T& dst, const T&, int64_t t, int64_t) { store_back(dst, ac[t]); });
          }
        } else if (R == ScatterReduce::None && scalar && g.out_sd == 1) {
          const T v = *src;
          chunked_with_prefetch(g.md, ahead, line_bytes, [&](int64_t j0, int64_t j1) {
            for (int64_t j = j0; j < j1; ++j) orow[irow[j]] = v;
          });
        } else {
          walk(true, direct);
        }
      }
      store_pending((end - 1 - begin) & 1);
    });
    return;
  }

  // Block mode. Packed when a block's targets take about one contribution each or more and a
  // block of at least a cache line of inner positions fits the L2 budget; otherwise the
  // contributions go straight to the input, in blocks as wide as the threads allow (each index
  // and src row is read in long runs, each thread's targets are whole cache lines).
  using P = Packed<T, R>;
  constexpr int64_t kBudget = 512 << 10;  // bytes of packed targets per block (L2)
  constexpr int64_t kAccBudget = 8 << 20;  // bytes of sparse fp32 accumulators per thread
  const int64_t line = std::min<int64_t>(g.inner, std::max<int64_t>(1, 64 / static_cast<int64_t>(sizeof(T))));
  // Targets already within the budget's bytes of the input (a slab of rows back to back, say) gain
  // nothing from a packed copy but its copies and second walk, unless the copy holds accumulators
  // or the threads would split the slab's rows between them (each part's lines then fall in a part
  // of the cache's sets, or share lines): [64, 512, 128] int8 dim 1, index [64, 256, 128], 2
  // threads of an Intel Xeon: 2.1 -> 1.1 ms; [1024, 64] fp32 add dim 0 split in two: 5.3 -> 7.6 ms.
  const int64_t parts = (threads + g.outer - 1) / g.outer;  // blocks of an outer row the threads need
  const bool compact = std::is_same_v<P, T> && g.inner_identity && parts == 1 &&
                       g.nd * g.out_sd * static_cast<int64_t>(sizeof(T)) <= kBudget;
  const bool use_packed = g.dense() && !compact && g.nd * line * static_cast<int64_t>(sizeof(P)) <= kBudget;
  int64_t B = g.inner;
  if (use_packed) B = std::clamp<int64_t>(kBudget / (g.nd * static_cast<int64_t>(sizeof(P))), line, g.inner);
  else if (kAcc) B = std::clamp<int64_t>(kAccBudget / (g.nd * 4), line, g.inner);
  const bool few_blocks = threads > 1 && g.outer * ((g.inner + B - 1) / B) < 2 * threads;
  // fp16 / bf16 accumulators over dense blocks too long to pack: every line widened at once
  const bool whole_blocks = kAcc && !use_packed && g.dense() && g.inner_identity;
  if constexpr (kAcc) {
    if (few_blocks && whole_blocks) {
      dense_blocks_phased<T, I, R>(a, g, B);
      return;
    }
  }
  if (few_blocks) {
    // Too few blocks for the threads: one narrower block per thread, below a cache line if need
    // be (threads then share target lines, which costs little when the targets are spread over
    // many rows). No more: every block walks all its index and src rows, and a block as narrow
    // as one cache line of each row leaves the prefetchers a stream of single lines to follow.
    B = std::max<int64_t>(1, (g.inner + parts - 1) / parts);
  }
  if (B < g.inner && B > line) B = B / line * line;
  const int64_t blocks = (g.inner + B - 1) / B;
  const int64_t items = g.outer * blocks;
  const int64_t per_item = std::max<int64_t>(1, g.md * B);
  const int64_t min_items = std::max<int64_t>(1, 16384 / per_item);
  const int64_t src_k = scalar ? 0 : 1;
  Scratch<P> packs(g.nd * B, use_packed);
  Scratch<uint8_t> marks(g.nd * B, use_packed || (kAcc && !whole_blocks));
  Scratch<float> accs(g.nd * B, kAcc && !use_packed);
  Scratch<T> befores(g.nd * B, whole_blocks);
  Scratch<int64_t> offsets(2 * B, !g.inner_identity);
  parallel_for(items, min_items, [&](int64_t begin, int64_t end) {
    P* const buf = packs.take();
    uint8_t* const marked = marks.take();
    float* const ac = accs.take();
    T* const before = befores.take();
    int64_t* const ooff = offsets.take();
    int64_t* const soff = ooff ? ooff + B : nullptr;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / blocks, k0 = (item % blocks) * B, kn = std::min(B, g.inner - k0);
      T* obase = out + g.out_outer(o);
      const T* sbase = scalar ? src : src + g.src_outer(o);
      const I* ibase = idx + o * g.md * g.inner + k0;
      if (g.inner_identity) {
        obase += k0;
        sbase += k0 * src_k;
      } else {
        g.inner_offsets(k0, kn, ooff, soff);
        if (scalar) std::fill(soff, soff + kn, 0);
      }
      if (use_packed) {
        if (g.inner_identity)
          packed_block<T, I, R, true>(g, obase, sbase, ibase, kn, src_k, nullptr, nullptr, buf, marked);
        else
          packed_block<T, I, R, false>(g, obase, sbase, ibase, kn, src_k, ooff, soff, buf, marked);
        continue;
      }
      auto walk = [&](auto&& f) {
        if (g.inner_identity) walk_block<T, I, true>(g, obase, sbase, ibase, kn, src_k, nullptr, nullptr, f);
        else walk_block<T, I, false>(g, obase, sbase, ibase, kn, src_k, ooff, soff, f);
      };
      if constexpr (kAcc) {
        if (whole_blocks) {  // the changed elements stored back
          widen_block(ac, before, obase, g.out_sd, g.nd, kn);
          walk([&](T&, const T& v, int64_t t, int64_t k) {
            float& acc = ac[t * kn + k];
            acc = combine<float, R>(acc, decode(v));
          });
          store_block(obase, g.out_sd, ac, before, g.nd, kn);
          continue;
        }
        // a target's accumulator is loaded at its first contribution
        std::memset(marked, 0, static_cast<size_t>(g.nd * kn));
        walk([&](T& dst, const T& v, int64_t t, int64_t k) {
          const int64_t at = t * kn + k;
          if (!marked[at]) ac[at] = decode(dst), marked[at] = 1;
          ac[at] = combine<float, R>(ac[at], decode(v));
        });
        for (int64_t t = 0; t < g.nd; ++t) {  // the targets back, in address order
          T* row = obase + t * g.out_sd;
          const float* acc = ac + t * kn;
          const uint8_t* m = marked + t * kn;
          if (g.inner_identity) store_marked(row, acc, m, kn);
          else for (int64_t k = 0; k < kn; ++k) if (m[k]) store_back(row[ooff[k]], acc[k]);
        }
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
      // Integers add and multiply with wrap-around, which gives the same bits signed or unsigned:
      // one build per width.
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) run<std::make_unsigned_t<T>, I, R>(a, g);
      else if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) run<T, I, R>(a, g);
      else if constexpr (kNeedsAccumulator<T>) run<T, I, R>(a, g);
      // bool and fp8 take reduce None only (validated before the kernel)
    });
  }
}

// The kernels' index types: int32 / int64 as given, uint8 / uint16 for a narrowed copy.
template <class F>
void visit_kernel_index(DType dt, F&& f) {
  if (dt == DType::UINT8) f(type_tag<uint8_t>{});
  else if (dt == DType::UINT16) f(type_tag<uint16_t>{});
  else visit_index_dtype(dt, f);
}

}  // namespace

bool has_internal_overlap(const Tensor& t) {
  if (t.numel() == 0 || t.is_contiguous()) return false;  // (the general test sorts the dims)
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
  visit_kernel_index(a.index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    switch (a.reduce) {
      case ScatterReduce::None: return dispatch_type<I, ScatterReduce::None>(a, g);
      case ScatterReduce::Add: return dispatch_type<I, ScatterReduce::Add>(a, g);
      case ScatterReduce::Multiply: return dispatch_type<I, ScatterReduce::Multiply>(a, g);
    }
  });
}

}  // namespace pto::kernels
