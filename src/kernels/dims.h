// Dim coalescing shared by the kernels that walk several operands over one shape.
#pragma once

#include <cstddef>

namespace pto::kernels {

// Merges each dim i >= first into its outer neighbour where every operand steps over the two as one
// (stride[i - 1] == stride[i] * shape[i]); the containers (shape and each operand's strides: anything
// with size(), operator[] and resize()) shrink to the dims left. Row-major order is kept.
template <class Sizes, class... StrideSets>
void merge_contiguous_dims(Sizes& shape, size_t first, StrideSets&... strides) {
  size_t m = first;
  for (size_t i = first; i < shape.size(); ++i) {
    if (m > first && ((strides[m - 1] == strides[i] * shape[i]) && ...)) {
      shape[m - 1] *= shape[i];
      ((strides[m - 1] = strides[i]), ...);
      continue;
    }
    shape[m] = shape[i];
    ((strides[m] = strides[i]), ...);
    ++m;
  }
  shape.resize(m);
  (strides.resize(m), ...);
}

}  // namespace pto::kernels
