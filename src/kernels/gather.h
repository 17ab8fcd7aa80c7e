#pragma once
#include "ptocpu/tensor.h"

namespace pto::kernels {

// out (contiguous, index's shape) = input gathered along dim: out[p] = input[p with p[dim] :=
// index[p]]. index is contiguous int32 / int64 of input's rank with every value checked.
void gather(const Tensor& input, int dim, const Tensor& index, const Tensor& out);

}  // namespace pto::kernels
