// The operators of SPEC 5. Each validates everything first (SPEC 4: a call that fails
// changes nothing), then runs its kernel.
#pragma once
#include <cstdint>

#include "ptocpu/tensor.h"

namespace pto {

// SPEC 5.1: out = input.shape[:d] + index.shape + input.shape[d+1:], gathered along dim.
Tensor index_select(const Tensor& input, int64_t dim, const Tensor& index);

}  // namespace pto
