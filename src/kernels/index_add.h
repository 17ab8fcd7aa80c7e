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
  bool alpha_is_one = false;    // the device's test: contributions are the source values themselves
  bool round_product = false;   // fp16 / bf16: alpha * s is rounded to the dtype (the device's last-axis path)
};

// Each target element x receives, in index order, the contributions v_i = alpha * source[.., i, ..]
// of the index positions i naming it:
//  - integers: x = x + v_i per step, wrapping; fp32 (fp64): the same, each product and sum
//    rounded to fp32 (fp64);
//  - fp16 / bf16: one fp32 accumulator per target, acc = widen(x), acc = acc + v_i in fp32 (v_i
//    in fp32, rounded to the dtype first when round_product), x = round(acc) once at the end.
// Parallel and deterministic: each target element is owned by one work item, which applies its
// contributions in index order.
void index_add(const IndexAddArgs& args);

}  // namespace pto::kernels
