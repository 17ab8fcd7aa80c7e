// The rows of a tensor along one axis (the composite, sort and quantisation kernels): row r is the
// line through every dim but `dim` fixed at r's position, counted row-major over those dims.
#pragma once
#include <cstdint>
#include <vector>

#include "ptocpu/tensor.h"

namespace pto::kernels {

class RowWalk {
 public:
  RowWalk(const Shape& shape, int dim) {
    for (int d = 0; d < static_cast<int>(shape.size()); ++d)
      if (d != dim) {
        extents_.push_back(shape[d]);
        dims_.push_back(d);
      }
    count_ = shape_numel(extents_);
  }

  int64_t count() const { return count_; }

  // The element offset of row r's first element in a tensor with these strides.
  int64_t offset(int64_t r, const Strides& strides) const {
    int64_t off = 0;
    for (int i = static_cast<int>(extents_.size()) - 1; i >= 0; --i) {
      off += (r % extents_[i]) * strides[dims_[i]];
      r /= extents_[i];
    }
    return off;
  }

 private:
  Shape extents_;
  std::vector<int> dims_;
  int64_t count_ = 1;
};

// Rows per parallel chunk: enough that a chunk holds some 16K elements.
inline int64_t rows_per_chunk(int64_t row_length) { return row_length >= 16384 ? 1 : 16384 / (row_length + 1) + 1; }

}  // namespace pto::kernels
