#pragma once
#include "ptocpu/tensor.h"

namespace pto::kernels {

// What the index_add kernel consumes (docs/ops/index_add.md); everything has been validated and
// every index value checked, so the kernel neither checks nor throws.
struct IndexAddArgs {
  Tensor out;                   // written in place; no two elements at one address
  int dim = 0;                  // normalised
  Tensor index;                 // contiguous 1-D int32 / int64, values in [0, out.shape(dim))
  Tensor source;                // out's shape but source.shape(dim) == index.numel(); shares no memory with out
  const void* alpha = nullptr;  // one element of out's dtype
};

// For i = 0 .. len(index)-1 in order: out[.., index[i], ..] = step(out[.., index[i], ..],
// source[.., i, ..]) with step(x, s) = round(x + round(alpha * s)) in fp32 for fp16 / bf16 / fp32
// (fp64 for fp64), wrapping integer arithmetic for integers. Parallel and deterministic: threads
// own disjoint target lines, each applies its steps in index order.
void index_add(const IndexAddArgs& args);

}  // namespace pto::kernels
