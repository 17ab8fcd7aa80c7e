#pragma once
#include "ptocpu/scatter_reduce.h"
#include "ptocpu/tensor.h"

namespace pto::kernels {

// What the scatter kernel consumes; everything has been validated (docs/ops/scatter.md, docs/platforms.md, docs/kernel_model.md) and every
// index value checked, so the kernel neither checks nor throws.
struct ScatterArgs {
  Tensor out;             // written in place; any strides, no two elements at one address
  int dim = 0;            // normalised
  Tensor index;           // contiguous int32 / int64 (or the uint8 / uint16 copy index_bounds narrows), values in [0, out.shape(dim))
  Tensor src;             // index-shaped view of src (any strides); undefined for a scalar src
  const void* scalar = nullptr;  // one element of out's dtype when src is undefined
  ScatterReduce reduce = ScatterReduce::None;
};

// out must have no internal overlap (has_internal_overlap false). Deterministic and parallel:
// threads own disjoint sets of target lines (the non-dim coordinates), each applies its
// contributions in row-major index order. fp16 / bf16 add and multiply accumulate per target
// in fp32 and round once.
void scatter(const ScatterArgs& args);

// True when distinct positions of t may share an address (zero or overlapping strides).
bool has_internal_overlap(const Tensor& t);

}  // namespace pto::kernels
