#pragma once
#include "ptocpu/tensor.h"

namespace pto::kernels {

// out (contiguous, input.shape[:dim] + index.shape + input.shape[dim+1:]) = gather of input
// rows along dim. index is contiguous int32 / int64 with every value already checked.
void index_select(const Tensor& input, int dim, const Tensor& index, const Tensor& out);

// Tests: stream_bytes >= 0 streams outputs of at least that many bytes (-1: the default, half
// the last-level cache); isa "sse2" / "avx2" / "avx512" caps the instruction set (nullptr: the
// best this CPU has). Not thread-safe; call between kernels.
void index_select_set_overrides(int64_t stream_bytes, const char* isa);

}  // namespace pto::kernels
