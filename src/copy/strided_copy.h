// The strided-copy engine: dst[i..] = src[i..] over any strides (in elements; negative
// strides walk backwards, src strides may be 0 to broadcast, a dst stride of 0 keeps the last
// write like a sequential loop). One engine for Tensor::contiguous(), assignment, copy_into
// and the ops' general paths:
//   - dims are reordered by dst stride and merged where both sides are contiguous together;
//   - contiguous runs are copied as blocks; a last dim read with stride -1, 2, 3 or 4 (or 0) has
//     a vectorised kernel per element width (runtime CPU dispatch: PTO_SIMD_CLONES, and
//     hand-written AVX-512 / AVX2 / SSE2 kernels for the streaming-store variants);
//   - short rows are copied in batches along the next dim;
//   - a transposing copy (src stride 1 on an outer dim) goes through L1 tiles;
//   - dense outputs from kernel_tuning().stream_bytes on are written with streaming stores
//     (short rows assembled into whole lines in an L1 buffer first);
//   - the output is split over threads (pto::parallel_for) in disjoint flat ranges.
// src and dst must not overlap (callers copy first when they do). Never throws.
#pragma once
#include <cstddef>
#include <cstdint>

namespace pto::kernels {

void strided_copy(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                  const int64_t* shape, int ndim, size_t itemsize);

}  // namespace pto::kernels
