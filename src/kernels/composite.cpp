// The composites' fused row kernels (kernels/composite.h). A row is
// loaded once into fp32 (in place when it already is contiguous fp32); each pass over it is a plain
// loop the compiler vectorises per instruction set. Reductions run in kLanes fixed lanes (element i
// into lane i % kLanes) closed by a fixed pairwise tree: the same order on every instruction set.
#include "kernels/composite.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "copy/simd.h"
#include "copy/stream.h"
#include "core/half.h"
#include "kernels/elementwise.h"
#include "kernels/math.h"
#include "kernels/dims.h"
#include "kernels/row_walk.h"
#include "kernels/scratch.h"
#include "ptocpu/parallel.h"

namespace pto::kernels::composite {
namespace {

constexpr int kLanes = 32;
#define PTO_INLINE inline __attribute__((always_inline))

// max that propagates NaN (a NaN row max makes the whole row NaN, as torch's softmax).
PTO_INLINE float max_nan(float a, float b) { return (a != a || a > b) ? a : b; }

// The lanes closed by the fixed tree: lane j += lane j + w for w = 16, 8, 4, 2, 1.
template <class Op>
PTO_INLINE float close_lanes(float* acc, Op op) {
  for (int w = kLanes / 2; w > 0; w /= 2)
#pragma GCC unroll 0  // unrolled before vectorising, a level would become scalar steps
    for (int j = 0; j < w; ++j) acc[j] = op(acc[j], acc[j + w]);
  return acc[0];
}

// The last n < kLanes values of a row padded with `identity` to a whole set of lanes, so that the
// lane loops keep their fixed width (short rows are all tail).
PTO_INLINE const float* padded_tail(const float* x, int64_t n, float identity, float* t) {
  for (int j = 0; j < kLanes; ++j) t[j] = j < n ? x[j] : identity;
  return t;
}

PTO_INLINE float lane_max(const float* __restrict x, int64_t n) {
  constexpr float kLow = -std::numeric_limits<float>::infinity();  // max_nan(a, -inf) is a
  float acc[kLanes], tail[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = kLow;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] = max_nan(acc[j], x[i + j]);
  if (i < n) {
    const float* t = padded_tail(x + i, n - i, kLow, tail);
    for (int j = 0; j < kLanes; ++j) acc[j] = max_nan(acc[j], t[j]);
  }
  return close_lanes(acc, max_nan);
}

// Adds f(x[i]) into running sum i % 32 of acc (f(v) >= 0, f(0) = +0). A row may come in pieces of
// whole sets of lanes, the last one any length: the sums are those of the whole row at once.
template <class F>
PTO_INLINE void lane_add(float* acc, const float* __restrict x, int64_t n, F f) {
  float tail[kLanes];
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += f(x[i + j]);
  if (i < n) {  // the padding adds +0 to lanes that are >= +0: no change
    const float* t = padded_tail(x + i, n - i, 0.0f, tail);
    for (int j = 0; j < kLanes; ++j) acc[j] += f(t[j]);
  }
}

// The sum of f(x[i]): element i into running sum i % 32, then the tree.
template <class F>
PTO_INLINE float lane_sum(const float* __restrict x, int64_t n, F f) {
  float acc[kLanes] = {};
  lane_add(acc, x, n, f);
  return close_lanes(acc, [](float a, float b) { return a + b; });
}

// softmax of the columns of a block: e[i * w + l] for i < n, l < w, in place. Column l is reduced
// in the rows' order exactly as softmax_rows reduces a row: max, then element i into lane i % 32.
PTO_SIMD_CLONES void softmax_columns(float* __restrict e, int64_t n, int64_t w, float* __restrict scratch) {
  float* m = scratch;  // [w], then the sums' lanes [kLanes][w]
  float* acc = scratch + w;
  for (int64_t l = 0; l < w; ++l) m[l] = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < w; ++l) m[l] = max_nan(m[l], e[i * w + l]);
  // Lanes past the n-th hold only +0 (sums of exps are >= +0): adding them changes nothing, so
  // they are neither filled nor folded.
  int64_t used = std::min<int64_t>(n, kLanes);
  std::fill(acc, acc + used * w, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < w; ++l) e[i * w + l] -= m[l];
  math::evaluate(math::Fn::Exp, e, e, n * w);  // the vector exp, as softmax_rows'
  for (int64_t i = 0; i < n; ++i) {
    float* lane = acc + (i % kLanes) * w;
    for (int64_t l = 0; l < w; ++l) lane[l] += e[i * w + l];
  }
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width && j + width < used; ++j)
      for (int64_t l = 0; l < w; ++l) acc[j * w + l] += acc[(j + width) * w + l];
    used = std::min<int64_t>(used, width);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < w; ++l) e[i * w + l] = e[i * w + l] / acc[l];
}

// A row's element stride in bytes along dim, and the row's first byte.
struct RowsOf {
  std::byte* base;
  int64_t step;
  size_t itemsize;
  const Strides& strides;

  RowsOf(const Tensor& t, int dim)
      : base(static_cast<std::byte*>(t.data())), step(t.stride(dim) * static_cast<int64_t>(t.itemsize())),
        itemsize(t.itemsize()), strides(t.strides()) {}
  std::byte* row(const RowWalk& walk, int64_t r) const {
    return base + walk.offset(r, strides) * static_cast<int64_t>(itemsize);
  }
};

// Rows up to kShortRow elements (one lane each) go through softmax_columns kColumnGroup at a
// time, as the columns of a block: one at a time, a row's own max, sums and tree cost more.
constexpr int64_t kShortRow = kLanes;
constexpr int64_t kColumnGroup = 64;

// kColumnGroup rows of N elements to the columns of a block and back. With the sizes known the
// compiler turns the transposes into vector shuffles.
template <int N>
PTO_INLINE void to_columns(float* __restrict block, const float* __restrict x) {
  for (int j = 0; j < N; ++j)
    for (int g = 0; g < kColumnGroup; ++g) block[j * kColumnGroup + g] = x[g * N + j];
}
template <int N>
PTO_INLINE void to_rows(float* __restrict y, const float* __restrict block) {
  for (int g = 0; g < kColumnGroup; ++g)
    for (int j = 0; j < N; ++j) y[g * N + j] = block[j * kColumnGroup + g];
}

// The row lengths with fixed-size transposes (GCC 12 leaves those of other lengths scalar anyway).
template <class Fn>
PTO_INLINE bool with_row_length(int64_t n, Fn fn) {
  return with_constant<2, 4, 8, 16>(n, fn);
}

// Rows from kLongRow elements (beyond L1) that the register rows of math.cpp do not take (past
// 4095 elements with AVX-512, past 65536 with AVX2, all without FMA) go through
// x - max, exp and the sum in pieces of kLongRowPiece (whole sets of lanes, so the sums are the
// same): one pass over the row in L2 instead of three.
constexpr int64_t kLongRow = 4096, kLongRowPiece = 1024;
// Rows between: from kFusedRow elements, the exp and the sums a row at a time while it is in L1, a
// row's last set of lanes partly idle (measured when exp and sums shared one loop, one thread:
// [32768, 128] fp32 5.4 -> 4.9 ms, [4096, 1024] 6.3 -> 5.3 ms; shorter rows lose more to the idle
// lanes than the pass saves: [262144, 40] 17.6 -> 19.2 ms).
constexpr int64_t kFusedRow = 64, kGroupRows = 32;

// Rows of softmax, one after another: y = exp(x - max) / sum per row (y may not be x). The exp is
// the elementwise exp's vector kernel (SLEEF, within 1 ulp), over all the rows at once: a libm call
// per element would not vectorise, a call per short row would cost more than its elements.
PTO_SIMD_CLONES void softmax_rows(const float* __restrict x, float* __restrict y, int64_t rows, int64_t n) {
  if (math::softmax_register_rows(y, x, rows, n)) return;
  if (n <= kShortRow && rows > 1) {  // the rows go as the columns of a block
    alignas(64) float block[kShortRow * kColumnGroup], scratch[(kLanes + 1) * kColumnGroup];
    for (int64_t r0 = 0; r0 < rows; r0 += kColumnGroup) {
      const int64_t w = std::min(kColumnGroup, rows - r0);
      const bool whole = w == kColumnGroup;
      const float* xs = x + r0 * n;
      float* ys = y + r0 * n;
      if (!(whole && with_row_length(n, [&](auto len) { to_columns<len()>(block, xs); })))
        for (int64_t j = 0; j < n; ++j)
          for (int64_t g = 0; g < w; ++g) block[j * w + g] = xs[g * n + j];
      softmax_columns(block, n, w, scratch);
      if (!(whole && with_row_length(n, [&](auto len) { to_rows<len()>(ys, block); })))
        for (int64_t g = 0; g < w; ++g)
          for (int64_t j = 0; j < n; ++j) ys[g * n + j] = block[j * w + g];
    }
    return;
  }
  if (n >= kLongRow) {  // x - max, exp and the sum a piece at a time while the piece is in L1
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      const float m = lane_max(xr, n);
      float acc[kLanes] = {};
      for (int64_t c = 0; c < n; c += kLongRowPiece)
        math::exp_shifted_lane_sums(yr + c, xr + c, &m, 1, std::min(kLongRowPiece, n - c), acc);
      const float s = close_lanes(acc, [](float a, float b) { return a + b; });
      for (int64_t i = 0; i < n; ++i) yr[i] = yr[i] / s;
    }
    return;
  }
  if (n < kFusedRow) {  // x - max, the exp of the whole group, the sums: no lanes idle at a row's end
    for (int64_t r = 0; r < rows; ++r) {
      const float m = lane_max(x + r * n, n);
      for (int64_t i = r * n; i < (r + 1) * n; ++i) y[i] = x[i] - m;
    }
    math::evaluate(math::Fn::Exp, y, y, rows * n);
    for (int64_t r = 0; r < rows; ++r) {
      const float s = lane_sum(y + r * n, n, [](float v) { return v; });
      for (int64_t i = r * n; i < (r + 1) * n; ++i) y[i] = y[i] / s;
    }
    return;
  }
  // The exp and the sums a row at a time (math::exp_shifted_lane_sums), a group's rows (at most
  // kGroupElements / kFusedRow of them) in one call.
  float shifts[kGroupRows], acc[kGroupRows][kLanes];
  for (int64_t r0 = 0; r0 < rows; r0 += kGroupRows) {
    const int64_t count = std::min(kGroupRows, rows - r0);
    for (int64_t r = 0; r < count; ++r) {
      shifts[r] = lane_max(x + (r0 + r) * n, n);
      std::fill(acc[r], acc[r] + kLanes, 0.0f);
    }
    math::exp_shifted_lane_sums(y + r0 * n, x + r0 * n, shifts, count, n, acc[0]);
    for (int64_t r = 0; r < count; ++r) {
      float* yr = y + (r0 + r) * n;
      const float s = close_lanes(acc[r], [](float a, float b) { return a + b; });
      for (int64_t i = 0; i < n; ++i) yr[i] = yr[i] / s;
    }
  }
}

// Rows of rms_norm, one after another: y = x / sqrt(sum((x * x) * inv_n) + eps) [* g] (y may not be x).
PTO_SIMD_CLONES void rms_norm_rows(const float* __restrict x, float* __restrict y, int64_t rows, int64_t n, float inv_n,
                                   float eps, const float* __restrict g) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float root = std::sqrt(lane_sum(xr, n, [inv_n](float v) { return (v * v) * inv_n; }) + eps);
    for (int64_t i = 0; i < n; ++i) yr[i] = xr[i] / root;
    if (g)
      for (int64_t i = 0; i < n; ++i) yr[i] = yr[i] * g[i];
  }
}

// Rows shorter than this are worked in groups of rows that lie one after another in memory, so
// that a group takes one load, one exp call and one store.
constexpr int64_t kGroupElements = 2048;

// Whether an output is large enough to be streamed past the caches (docs/kernels.md#streaming-stores).
bool streamed_output(const Tensor& out) {
  return PTO_HAVE_STREAM_LINES && out.numel() * static_cast<int64_t>(out.itemsize()) >= kernel_tuning().stream_bytes;
}

// Runs fn(x, y, rows, n) over every row along dim: x rows of the input in fp32 one after another, y
// where their fp32 results go (the output itself when it is contiguous fp32), stored with one
// rounding afterwards. Rows that follow each other in the input (a contiguous input along its last
// axis) go in groups of up to kGroupElements elements, others one at a time. A contiguous output of
// at least kernel_tuning().stream_bytes gets each group's results streamed from L1
// (docs/kernels.md#streaming-stores): the output's lines are never read.
template <class Fn>
void for_each_row(const Tensor& in, int dim, const Tensor& out, Fn fn) {
  const int64_t n = in.shape(dim);
  if (in.numel() == 0) return;
  const RowWalk walk(in.shape(), dim);
  const RowsOf src(in, dim), dst(out, dim);
  const ew::LoadFn<float> load = ew::loader<float>(in.dtype());
  const ew::StoreFn<float> store = ew::storer<float>(out.dtype());
  const bool packed = dim == in.ndim() - 1 && in.is_contiguous() && dst.step == static_cast<int64_t>(out.itemsize());
  const bool stream = packed && out.is_contiguous() && streamed_output(out);
  const bool direct = !stream && out.dtype() == DType::FP32 && dst.step == static_cast<int64_t>(sizeof(float));
  const bool staged = stream && out.dtype() != DType::FP32;  // rounded into a stage, then streamed
  const int64_t group = packed ? std::max<int64_t>(1, kGroupElements / std::max<int64_t>(n, 1)) : 1;
  const int64_t groups = (walk.count() + group - 1) / group;
  // Reused pages: a long row's buffers are beyond malloc's mmap threshold, fresh pages every call.
  Scratch<float> buffers((direct ? 1 : 2) * group * n + (staged ? group * n : 0), true);
  parallel_for(groups, std::max<int64_t>(1, rows_per_chunk(n) / group), [&](int64_t begin, int64_t end) {
    float* const buffer = buffers.take();
    float* xbuf = buffer;
    float* ybuf = direct ? nullptr : buffer + group * n;
    std::byte* stage = staged ? reinterpret_cast<std::byte*>(ybuf + group * n) : nullptr;
    for (int64_t k = begin; k < end; ++k) {
      const int64_t r = k * group, rows = std::min(group, walk.count() - r);
      const float* x = load(src.row(walk, r), src.step, rows * n, xbuf);
      std::byte* o = dst.row(walk, r);
      float* y = direct ? reinterpret_cast<float*>(o) : ybuf;
      fn(x, y, rows, n);
      if (stream) {
        if (staged) store(y, stage, dst.step, rows * n);
        stream_copy_tuned(o, staged ? stage : reinterpret_cast<const std::byte*>(y), rows * n * dst.step);
      } else if (!direct) {
        store(y, o, dst.step, rows * n);
      }
    }
    if (stream) stream_fence();
  });
}

PTO_INLINE uint16_t bf16_ties_away(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;  // quieted, not rounded (a select: vectorises)
  return static_cast<uint16_t>(nan ? (u >> 16) | 0x40u : (u + 0x8000u) >> 16);
}

// Reads element (i, j) of a 2-D fp32 tensor of any strides.
struct Matrix {
  const float* data;
  int64_t s0, s1;
  explicit Matrix(const Tensor& t) : data(t.data_as<const float>()), s0(t.stride(0)), s1(t.stride(1)) {}
  float operator()(int64_t i, int64_t j) const { return data[i * s0 + j * s1]; }
  // Row i's elements [j0, j0 + w): in place when they are contiguous, else copied into buf.
  const float* span(int64_t i, int64_t j0, int64_t w, float* buf) const {
    const float* p = data + i * s0 + j0 * s1;
    if (s1 == 1) return p;
    for (int64_t j = 0; j < w; ++j) buf[j] = p[j * s1];
    return buf;
  }
};

PTO_SIMD_CLONES void running_max(float* __restrict m, const float* __restrict x, int64_t w) {
  for (int64_t j = 0; j < w; ++j) m[j] = max_nan(m[j], x[j]);
}

// online_softmax's column max scaled; its sums start at zero.
PTO_SIMD_CLONES void start_sums(float* __restrict m, float* __restrict sum, float scale, int64_t w) {
  for (int64_t j = 0; j < w; ++j) m[j] = m[j] * scale, sum[j] = 0.0f;
}

// One row of online_softmax_update: o = previous * a + current * b.
PTO_SIMD_CLONES void blend_row(float* __restrict o, const float* __restrict previous, const float* __restrict current,
                               const float* __restrict a, const float* __restrict b, int64_t q) {
  for (int64_t j = 0; j < q; ++j) {
    const float kept = previous[j] * a[j], added = current[j] * b[j];
    o[j] = kept + added;
  }
}

// One row of an online_softmax block: e = exp(x * scale - m) (the vector exp, as softmax's),
// rounded to bf16 into e16 and added to sum. t: w floats of scratch.
PTO_SIMD_CLONES void exp_of_row(uint16_t* __restrict e16, float* __restrict sum, float* __restrict t,
                                const float* __restrict x, const float* __restrict m, float scale, int64_t w) {
  for (int64_t j = 0; j < w; ++j) t[j] = x[j] * scale - m[j];
  math::evaluate(math::Fn::Exp, t, t, w);
  for (int64_t j = 0; j < w; ++j) {
    e16[j] = bf16_ties_away(t[j]);
    sum[j] += t[j];
  }
}

}  // namespace

// fp16 / bf16 rows of the last dim read and written in their dtype by the register kernels, in place
// of for_each_row's fp32 copies (the same bits); not where for_each_row streams the output.
bool softmax_half_rows(const Tensor& in, const Tensor& out) {
  const int64_t n = in.numel() == 0 ? 0 : in.shape(in.ndim() - 1);
  if (n == 0 || out.dtype() != in.dtype() || !math::softmax_half_register_rows(in.dtype(), n) ||
      !in.is_contiguous() || !out.is_contiguous() || in.partially_valid() || out.partially_valid() ||
      streamed_output(out))
    return false;
  const auto* src = in.data_as<const uint16_t>();
  auto* dst = out.data_as<uint16_t>();
  parallel_for(in.numel() / n, rows_per_chunk(n), [&](int64_t begin, int64_t end) {
    math::softmax_register_rows(dst + begin * n, src + begin * n, in.dtype(), end - begin, n);
  });
  return true;
}

void softmax(const Tensor& in, int dim, const Tensor& out) {
  if (dim == in.ndim() - 1) {
    if (softmax_half_rows(in, out)) return;
    for_each_row(in, dim, out, [](const float* x, float* y, int64_t rows, int64_t n) { softmax_rows(x, y, rows, n); });
    return;
  }
  // Another dim: blocks of columns of the last axis, each column reduced along dim.
  if (in.numel() == 0) return;
  // The dims after dim as one where they follow each other in both tensors: blocks then span them
  // all ([2, 41, 29, 4] over dim 1 went in blocks of 4 columns, 3x the time of [2, 41, 116]).
  Shape shape = in.shape();
  Strides in_strides = in.strides(), out_strides = out.strides();
  if (!in.partially_valid() && !out.partially_valid()) merge_contiguous_dims(shape, dim + 1, in_strides, out_strides);
  if (shape.size() < in.shape().size())
    return softmax(in.as_strided(shape, in_strides, 0), dim, out.as_strided(shape, out_strides, 0));
  const int r = in.ndim();
  const int64_t n = in.shape(dim), lanes = in.shape(r - 1);
  const int64_t w = std::min(lanes, std::clamp<int64_t>(131072 / n / 8 * 8, 8, 256));  // n * w floats: 512 KB
  const int64_t blocks = (lanes + w - 1) / w;
  Shape groups = in.shape();
  groups[r - 1] = 1;
  const RowWalk walk(groups, dim);  // every index but dim's and the last axis'
  const ew::LoadFn<float> load = ew::loader<float>(in.dtype());
  const ew::StoreFn<float> store = ew::storer<float>(out.dtype());
  const auto* src = static_cast<const std::byte*>(in.data());
  auto* dst = static_cast<std::byte*>(out.data());
  const int64_t in_item = static_cast<int64_t>(in.itemsize()), out_item = static_cast<int64_t>(out.itemsize());
  parallel_for(walk.count() * blocks, std::max<int64_t>(1, 16384 / (n * w)), [&](int64_t begin, int64_t end) {
    std::vector<float> block(static_cast<size_t>(n * w)), scratch(static_cast<size_t>((kLanes + 1) * w));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t l0 = (item % blocks) * w, width = std::min(w, lanes - l0);
      const int64_t in_at = walk.offset(item / blocks, in.strides()) + l0 * in.stride(r - 1);
      const int64_t out_at = walk.offset(item / blocks, out.strides()) + l0 * out.stride(r - 1);
      for (int64_t i = 0; i < n; ++i) {
        float* row = block.data() + i * width;
        const float* x = load(src + (in_at + i * in.stride(dim)) * in_item, in.stride(r - 1) * in_item, width, row);
        if (x != row) std::copy(x, x + width, row);
      }
      softmax_columns(block.data(), n, width, scratch.data());
      for (int64_t i = 0; i < n; ++i)
        store(block.data() + i * width, dst + (out_at + i * out.stride(dim)) * out_item, out.stride(r - 1) * out_item,
              width);
    }
  });
}

void rms_norm(const Tensor& in, const Tensor& gamma, float inv_n, float eps, const Tensor& out) {
  std::vector<float> gamma32;
  const float* g = nullptr;
  if (gamma.defined()) {
    gamma32.resize(static_cast<size_t>(gamma.numel()));
    const int64_t step = gamma.stride(0) * static_cast<int64_t>(gamma.itemsize());
    g = ew::loader<float>(gamma.dtype())(static_cast<const std::byte*>(gamma.data()), step, gamma.numel(),
                                         gamma32.data());
  }
  for_each_row(in, in.ndim() - 1, out, [=](const float* x, float* y, int64_t rows, int64_t n) {
    rms_norm_rows(x, y, rows, n, inv_n, eps, g);
  });
}

void online_softmax(const Tensor& scores, float scale, const Tensor& exp_bf16, const Tensor& column_max,
                    const Tensor& column_sum) {
  const Matrix s(scores);
  const int64_t k = scores.shape(0), q = scores.shape(1);
  uint16_t* e16 = exp_bf16.data_as<uint16_t>();
  float* cmax = column_max.data_as<float>();
  float* csum = column_sum.data_as<float>();
  // Columns per task: each column's rows are summed in row order. Spans of 256 floats per row keep
  // the exp call's fixed cost small (64 columns: [4096, 1024] 8.3 -> 5.1 ms, [512, 8192] 7.7 -> 3.3 ms).
  constexpr int64_t kBlock = 256;
  parallel_for((q + kBlock - 1) / kBlock, std::max<int64_t>(1, 8192 / (k + 1)), [&](int64_t begin, int64_t end) {
    float buf[kBlock], t[kBlock];
    for (int64_t b = begin; b < end; ++b) {
      const int64_t j0 = b * kBlock, w = std::min(q - j0, kBlock);
      std::fill(cmax + j0, cmax + j0 + w, -std::numeric_limits<float>::infinity());
      for (int64_t i = 0; i < k; ++i) running_max(cmax + j0, s.span(i, j0, w, buf), w);
      start_sums(cmax + j0, csum + j0, scale, w);
      for (int64_t i = 0; i < k; ++i) exp_of_row(e16 + i * q + j0, csum + j0, t, s.span(i, j0, w, buf), cmax + j0, scale, w);
    }
  });
}

void online_softmax_update(const OnlineUpdate& u) {
  const int64_t h = u.previous_output.shape(0), q = u.previous_output.shape(1);
  const Matrix mp(u.previous_max), sp(u.previous_sum), op(u.previous_output);
  const Matrix mc(u.current_max), sc(u.current_sum), oc(u.current_output);
  float* m = u.max.data_as<float>();
  float* s = u.sum.data_as<float>();
  float* o = u.output.data_as<float>();
  std::vector<float> a(static_cast<size_t>(q)), b(static_cast<size_t>(q));
  for (int64_t j = 0; j < q; ++j) {
    m[j] = max_nan(mp(0, j), mc(0, j));
    a[j] = mp(0, j) - m[j];
    b[j] = mc(0, j) - m[j];
  }
  math::evaluate(math::Fn::Exp, a.data(), a.data(), q);  // the vector exp, as softmax's
  math::evaluate(math::Fn::Exp, b.data(), b.data(), q);
  for (int64_t j = 0; j < q; ++j) {
    const float scaled_previous = a[j] * sp(0, j), scaled_current = b[j] * sc(0, j);
    s[j] = scaled_previous + scaled_current;
  }
  parallel_for(h, std::max<int64_t>(1, 16384 / (q + 1)), [&](int64_t begin, int64_t end) {
    std::vector<float> kept(static_cast<size_t>(q)), added(static_cast<size_t>(q));
    for (int64_t i = begin; i < end; ++i)
      blend_row(o + i * q, op.span(i, 0, q, kept.data()), oc.span(i, 0, q, added.data()), a.data(), b.data(), q);
  });
}

namespace {
PTO_SIMD_CLONES void difference(float* __restrict out, const float* __restrict a, const float* __restrict b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] - b[i];
}
PTO_SIMD_CLONES void fp16_difference(float* __restrict out, const float* __restrict a, const float* __restrict b,
                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = half::widen(half::to_fp16(a[i] - b[i]));
}
}  // namespace

void ExpDif::apply_block(float* out, const float* a, const float* b, int64_t n) {
  difference(out, a, b, n);
  math::evaluate(math::Fn::Exp, out, out, n);
}

void ExpOfFp16Dif::apply_block(float* out, const float* a, const float* b, int64_t n) {
  fp16_difference(out, a, b, n);
  math::evaluate(math::Fn::Exp, out, out, n);
}

}  // namespace pto::kernels::composite
