// The layout family (docs/ops/layout.md): reshape, unsqueeze, transpose, permute, concat,
// expand_clone, clone, pad, fillpad, tril / triu (and their in-place forms), pack, unpack.
// Each validates everything first (docs/errors.md), then copies, views or runs its kernel.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ptocpu/scalar.h"
#include "ptocpu/tensor.h"

namespace pto {

// shape may hold one -1 (inferred; [-1] flattens). A zero-copy view of input when its strides
// allow one, else a contiguous copy; inplace=True requires the view. The valid shape is
// valid_shape, or the whole new shape.
Tensor reshape(const Tensor& input, const std::vector<int64_t>& shape,
               const std::optional<Shape>& valid_shape = std::nullopt, bool inplace = false);
// A view of input with a size-1 axis inserted at dim (in [-rank - 1, rank]).
Tensor unsqueeze(const Tensor& input, int64_t dim);
// A new tensor with axes dim0 and dim1 swapped (input itself when the swap changes nothing).
Tensor transpose(const Tensor& input, int64_t dim0, int64_t dim1);
// A new tensor with out.shape[i] = input.shape[dims[i]] (input itself for 1-D or the identity).
Tensor permute(const Tensor& input, const std::vector<int64_t>& dims);
// The tensors joined along dim.
Tensor concat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// input's size-1 axes repeated to shape (same rank).
Tensor expand_clone(const Tensor& input, const Shape& shape, const std::optional<Shape>& valid_shape = std::nullopt);
// A copy with input's shape and valid shape.
Tensor clone(const Tensor& input);
// padding = (0, right) for 1-D, (0, right, 0, bottom) otherwise: value appended after the last
// axis (and the second-to-last).
Tensor pad(const Tensor& x, const std::vector<int64_t>& padding, const std::string& mode = "constant",
           const Scalar& value = Scalar::of_int(0));
// x with every element past its valid shape set to value; fully valid.
Tensor fillpad(const Tensor& x, const std::string& mode = "constant", const Scalar& value = Scalar::of_int(0));
// Lower / upper triangle of the last two axes, the rest multiplied by 0 (the device's mask).
Tensor tril(const Tensor& input, int64_t diagonal = 0);
Tensor triu(const Tensor& input, int64_t diagonal = 0);
Tensor tril_(const Tensor& input, int64_t diagonal = 0);  // in place; returns input
Tensor triu_(const Tensor& input, int64_t diagonal = 0);
// The bytes of input (row-major, little-endian) as a 1-D DT_UINT8 tensor, and back.
Tensor pack(const Tensor& input);
Tensor unpack(const Tensor& input, DType dtype);

}  // namespace pto
