// The composites' fused row kernels (kernels/composite.h). A row is
// loaded once into fp32 (in place when it already is contiguous fp32); each pass over it is a plain
// loop the compiler vectorises per instruction set. Reductions run in kLanes fixed lanes (element i
// into lane i % kLanes) closed by a fixed pairwise tree: the same order on every instruction set.
#include "kernels/composite.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <vector>

#include "copy/simd.h"
#include "kernels/elementwise.h"
#include "kernels/math.h"
#include "kernels/row_walk.h"
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
    for (int j = 0; j < w; ++j) acc[j] = op(acc[j], acc[j + w]);
  return acc[0];
}

PTO_INLINE float lane_max(const float* __restrict x, int64_t n) {
  float acc[kLanes];
  for (int j = 0; j < kLanes; ++j) acc[j] = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] = max_nan(acc[j], x[i + j]);
  for (int j = 0; i + j < n; ++j) acc[j] = max_nan(acc[j], x[i + j]);
  return close_lanes(acc, max_nan);
}

// The sum of f(x[i]): element i into running sum i % 32, then the tree.
template <class F>
PTO_INLINE float lane_sum(const float* __restrict x, int64_t n, F f) {
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += f(x[i + j]);
  for (int j = 0; i + j < n; ++j) acc[j] += f(x[i + j]);
  return close_lanes(acc, [](float a, float b) { return a + b; });
}

// One row of softmax: y = exp(x - max) / sum (y may not be x). The exp is the elementwise exp's
// vector kernel (SLEEF, within 1 ulp): a libm call per element would not vectorise.
PTO_SIMD_CLONES void softmax_row(const float* __restrict x, float* __restrict y, int64_t n) {
  const float m = lane_max(x, n);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  math::evaluate(math::Fn::Exp, y, y, n);
  const float s = lane_sum(y, n, [](float v) { return v; });
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] / s;
}

// One row of rms_norm: y = x / sqrt(sum((x * x) * inv_n) + eps) [* g] (y may not be x).
PTO_SIMD_CLONES void rms_norm_row(const float* __restrict x, float* __restrict y, int64_t n, float inv_n, float eps,
                                  const float* __restrict g) {
  const float root = std::sqrt(lane_sum(x, n, [inv_n](float v) { return (v * v) * inv_n; }) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / root;
  if (g)
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] * g[i];
}

// softmax of the columns of a block: e[i * w + l] for i < n, l < w, in place. Column l is reduced
// in the rows' order exactly as softmax_row reduces a row: max, then element i into lane i % 32.
PTO_SIMD_CLONES void softmax_columns(float* __restrict e, int64_t n, int64_t w, float* __restrict scratch) {
  float* m = scratch;  // [w], then the sums' lanes [kLanes][w]
  float* acc = scratch + w;
  for (int64_t l = 0; l < w; ++l) m[l] = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < w; ++l) m[l] = max_nan(m[l], e[i * w + l]);
  std::fill(acc, acc + kLanes * w, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t l = 0; l < w; ++l) e[i * w + l] -= m[l];
  math::evaluate(math::Fn::Exp, e, e, n * w);  // the vector exp, as softmax_row's
  for (int64_t i = 0; i < n; ++i) {
    float* lane = acc + (i % kLanes) * w;
    for (int64_t l = 0; l < w; ++l) lane[l] += e[i * w + l];
  }
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j)
      for (int64_t l = 0; l < w; ++l) acc[j * w + l] += acc[(j + width) * w + l];
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

// Runs fn(x, y, n) over every row along dim: x the input row in fp32, y where the fp32 result goes
// (the output row itself when it is contiguous fp32), stored with one rounding afterwards.
template <class Fn>
void for_each_row(const Tensor& in, int dim, const Tensor& out, Fn fn) {
  const int64_t n = in.shape(dim);
  if (in.numel() == 0) return;
  const RowWalk walk(in.shape(), dim);
  const RowsOf src(in, dim), dst(out, dim);
  const ew::LoadFn<float> load = ew::loader<float>(in.dtype());
  const ew::StoreFn<float> store = ew::storer<float>(out.dtype());
  const bool direct = out.dtype() == DType::FP32 && dst.step == static_cast<int64_t>(sizeof(float));
  parallel_for(walk.count(), rows_per_chunk(n), [&](int64_t begin, int64_t end) {
    std::vector<float> buffer(static_cast<size_t>(direct ? n : 2 * n));
    float* xbuf = buffer.data();
    float* ybuf = direct ? nullptr : buffer.data() + n;
    for (int64_t r = begin; r < end; ++r) {
      const float* x = load(src.row(walk, r), src.step, n, xbuf);
      std::byte* o = dst.row(walk, r);
      float* y = direct ? reinterpret_cast<float*>(o) : ybuf;
      fn(x, y, n);
      if (!direct) store(y, o, dst.step, n);
    }
  });
}

uint16_t bf16_ties_away(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x8000u) >> 16);
}

// Reads element (i, j) of a 2-D fp32 tensor of any strides.
struct Matrix {
  const float* data;
  int64_t s0, s1;
  explicit Matrix(const Tensor& t) : data(t.data_as<const float>()), s0(t.stride(0)), s1(t.stride(1)) {}
  float operator()(int64_t i, int64_t j) const { return data[i * s0 + j * s1]; }
};

}  // namespace

void softmax(const Tensor& in, int dim, const Tensor& out) {
  if (dim == in.ndim() - 1) {
    for_each_row(in, dim, out, [](const float* x, float* y, int64_t n) { softmax_row(x, y, n); });
    return;
  }
  // Another dim: blocks of columns of the last axis, each column reduced along dim.
  if (in.numel() == 0) return;
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
  for_each_row(in, in.ndim() - 1, out,
               [=](const float* x, float* y, int64_t n) { rms_norm_row(x, y, n, inv_n, eps, g); });
}

void online_softmax(const Tensor& scores, float scale, const Tensor& exp_bf16, const Tensor& column_max,
                    const Tensor& column_sum) {
  const Matrix s(scores);
  const int64_t k = scores.shape(0), q = scores.shape(1);
  uint16_t* e16 = exp_bf16.data_as<uint16_t>();
  float* cmax = column_max.data_as<float>();
  float* csum = column_sum.data_as<float>();
  constexpr int64_t kBlock = 64;  // columns per task: each column's rows are summed in row order
  parallel_for((q + kBlock - 1) / kBlock, std::max<int64_t>(1, 8192 / (k + 1)), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t j0 = b * kBlock, j1 = std::min(q, j0 + kBlock);
      for (int64_t j = j0; j < j1; ++j) cmax[j] = -std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = j0; j < j1; ++j) cmax[j] = max_nan(cmax[j], s(i, j));
      for (int64_t j = j0; j < j1; ++j) {
        cmax[j] = cmax[j] * scale;
        csum[j] = 0.0f;
      }
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = j0; j < j1; ++j) {
          const float e = exp_f32(s(i, j) * scale - cmax[j]);
          e16[i * q + j] = bf16_ties_away(e);
          csum[j] += e;
        }
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
    a[j] = exp_f32(mp(0, j) - m[j]);
    b[j] = exp_f32(mc(0, j) - m[j]);
    const float scaled_previous = a[j] * sp(0, j), scaled_current = b[j] * sc(0, j);
    s[j] = scaled_previous + scaled_current;
  }
  parallel_for(h, std::max<int64_t>(1, 16384 / (q + 1)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t j = 0; j < q; ++j) {
        const float kept = op(i, j) * a[j], added = oc(i, j) * b[j];
        o[i * q + j] = kept + added;
      }
  });
}

}  // namespace pto::kernels::composite
