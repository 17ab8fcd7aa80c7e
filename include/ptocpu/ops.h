// The operators of SPEC 5. Each validates everything first (SPEC 4: a call that fails
// changes nothing), then runs its kernel.
#pragma once
#include <cstdint>
#include <utility>

#include "ptocpu/tensor.h"

namespace pto {

// SPEC 5.1: out = input.shape[:d] + index.shape + input.shape[d+1:], gathered along dim.
Tensor index_select(const Tensor& input, int64_t dim, const Tensor& index);

// SPEC 5.2: along the last axis the 2n stream s[2k] = input[k], s[2k+1] = other[k];
// out0 = s[0:n], out1 = s[n:2n] (both of input's shape). other: input's dtype and shape, n even.
std::pair<Tensor, Tensor> interleave(const Tensor& input, const Tensor& other);
// SPEC 5.3, two inputs (same rules as interleave): c = concat(input, other) on the last axis,
// out0 = c[..., 0::2], out1 = c[..., 1::2]. An undefined other means the single-input form.
std::pair<Tensor, Tensor> deinterleave(const Tensor& input, const Tensor& other);
// SPEC 5.3, single input (last dim 2m): out0 = input[..., 0::2], out1 = input[..., 1::2].
std::pair<Tensor, Tensor> deinterleave(const Tensor& input);

}  // namespace pto
