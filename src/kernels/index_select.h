#pragma once
#include "ptocpu/tensor.h"

namespace pto::kernels {

// out (contiguous, input.shape[:dim] + index.shape + input.shape[dim+1:]) = gather of input
// rows along dim. index is contiguous int32 / int64 with every value already checked.
void index_select(const Tensor& input, int dim, const Tensor& index, const Tensor& out);

}  // namespace pto::kernels
