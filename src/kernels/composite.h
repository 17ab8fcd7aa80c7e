// The composites' kernels (docs/ops/softmax.md, rms_norm.md, online_softmax.md, expand_exp_dif.md):
// each is a fused pass over rows in fp32, computed in the order the device composes its ops (max,
// exp, sum, division; sum of squares, sqrt, division), one rounding per device op. Threads split
// the rows; the order inside a row is fixed, so results do not depend on the thread count or the
// instruction set. No checks, no exceptions: the ops checked everything.
#pragma once
#include <cstdint>
#include <type_traits>

#include "ptocpu/tensor.h"

namespace pto::kernels::composite {

// out = softmax of in along dim: m = max, e = exp(x - m), s = sum(e), out = e / s, in fp32, rounded
// once to out's dtype. in: fp16 / bf16 / fp32, any strides; out: contiguous, in's shape and dtype.
// Along the last axis by rows, along another dim by blocks of columns of the last axis; the order
// of the max and the sum is the same either way.
void softmax(const Tensor& in, int dim, const Tensor& out);

// out = x / sqrt(sum((x * x) * inv_n) + eps) [* gamma] along the last axis, in fp32, rounded once
// to out's dtype. gamma: undefined, or 1-D of the last axis' length (fp16 / bf16 / fp32, any stride).
void rms_norm(const Tensor& in, const Tensor& gamma, float inv_n, float eps, const Tensor& out);

// online_softmax over the rows of scores [k, q] (fp32, any strides): column_max = max(scores) *
// scale, e = exp(scores * scale - column_max), exp_bf16 = e rounded to bf16 ties away from zero,
// column_sum = e summed over the rows in row order. Outputs contiguous: [k, q] bf16, [1, q] fp32 x2.
void online_softmax(const Tensor& scores, float scale, const Tensor& exp_bf16, const Tensor& column_max,
                    const Tensor& column_sum);

// online_softmax_update, all fp32: M = max(Mp, Mc), a = exp(Mp - M), b = exp(Mc - M), S = a * Sp +
// b * Sc, O = Op * a + Oc * b (a, b per column). Stats [1, q], outputs [h, q]; inputs any strides,
// outputs contiguous.
struct OnlineUpdate {
  Tensor previous_max, previous_sum, previous_output, current_max, current_sum, current_output;
  Tensor max, sum, output;
};
void online_softmax_update(const OnlineUpdate& u);

// expand_exp_dif's functors on the elementwise engine (fp32 compute), a block at a time through the
// vector exp (softmax's): exp(a - b), and exp of the difference rounded to fp16 first (fp16 tiles
// of equal shape: a native sub, then exp).
struct ExpDif {
  template <class T> using out = T;
  template <class T> static constexpr bool takes = std::is_same_v<T, float>;
  static void apply_block(float* out, const float* a, const float* b, int64_t n);
};
struct ExpOfFp16Dif {
  template <class T> using out = T;
  template <class T> static constexpr bool takes = std::is_same_v<T, float>;
  static void apply_block(float* out, const float* a, const float* b, int64_t n);
};

}  // namespace pto::kernels::composite
