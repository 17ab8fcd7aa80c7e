// The strided-copy engine: dst[i..] = src[i..] over any strides (in elements; src strides
// may be 0 to broadcast, and negative). Dims that are contiguous together are merged,
// contiguous runs are copied as blocks, the rest by element width, in parallel over rows.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pto::kernels {

void strided_copy(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                  const int64_t* shape, int ndim, size_t itemsize);

}  // namespace pto::kernels
