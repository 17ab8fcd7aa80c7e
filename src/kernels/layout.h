// Kernels of the layout family (docs/ops/layout.md) where the strided-copy engine is slow or does
// not apply: transposing copies, concat, row fills and tril / triu's mask multiply. No checks;
// the arguments are validated by src/ops/layout.cpp. Scratch space is allocated before any
// parallel work starts (an allocation failure is the only exception they let through).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "ptocpu/tensor.h"

namespace pto::kernels {

// One input of a concat: per outer index o, `len` elements from data + o * outer_stride (dense),
// written side by side with the other inputs' blocks into one output row.
struct ConcatSource {
  const std::byte* data;
  int64_t outer_stride;  // elements
  int64_t len;           // elements, > 0
};

// dst (dense, `outer` rows of the sources' summed lengths) = the sources' blocks side by side.
void concat(std::byte* dst, int64_t outer, std::span<const ConcatSource> sources, size_t itemsize);

// dst = src (same shape, dst's last dim unit-strided) when the copy is, after merging dims, a batch
// of 2-D transposes: src is unit-strided along a dim that dst is not, and strided along dst's last
// dim. Blocks of 64 bytes x 64 bytes are transposed in SSE2 registers (bit-exact for any dtype).
// Returns false, touching nothing, for any other layout (the strided-copy engine's cases).
bool transposed_copy(const Tensor& dst, const Tensor& src);

// dst (dense, rows x len elements) row r = len copies of values[r] (dense): expand_clone's
// expanded trailing axes.
void fill_rows(std::byte* dst, const std::byte* values, int64_t rows, int64_t len, size_t itemsize);

// tril / triu over the last two axes of src (any strides): element [.., i, j] is kept when
// j - i <= diagonal (lower) or j - i >= diagonal (upper), otherwise multiplied by 0 as the
// device's mask multiply does (floats: +-0 with the element's sign, NaN for NaN and +-inf;
// integers and bool: 0). dst is dense and of src's shape.
void triangle(const Tensor& dst, const Tensor& src, int64_t diagonal, bool upper);
// The same in place: only the masked elements of t (any strides, distinct elements) are written.
void triangle_in_place(const Tensor& t, int64_t diagonal, bool upper);

}  // namespace pto::kernels
