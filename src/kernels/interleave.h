#pragma once
#include "ptocpu/tensor.h"

namespace pto::kernels {

// docs/ops/interleave.md. input and other: same shape and element width, even last dim n (any strides).
// out0, out1: contiguous, input's shape. Row r: stream s = zip(input[r], other[r]);
// out0[r] = s[0:n], out1[r] = s[n:2n].
void interleave(const Tensor& input, const Tensor& other, const Tensor& out0, const Tensor& out1);

// docs/ops/deinterleave.md. Two-input form (other defined, same shape as input): c = concat(input, other) on
// the last axis, out0 = c[..., 0::2], out1 = c[..., 1::2], both of input's shape.
// Single-input form (other undefined): out0 = input[..., 0::2], out1 = input[..., 1::2],
// both of shape input.shape[:-1] + [n / 2]. Outputs contiguous.
void deinterleave(const Tensor& input, const Tensor& other, const Tensor& out0, const Tensor& out1);

}  // namespace pto::kernels
