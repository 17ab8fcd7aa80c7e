// topk and argsort along one axis (docs/ops/topk.md, argsort.md). The order, as the device's
// 32-element sorts and merges give it: by value, ties to the smaller index; +0 and -0 equal; NaN
// after every number, in index order, in either direction. Each row is sorted on 64-bit keys (value
// key, then the index) that are all distinct, so any sorting algorithm gives the same result. No
// checks, no exceptions: the op checked everything.
#pragma once
#include <cstdint>

#include "ptocpu/tensor.h"

namespace pto::kernels::sort {

// in: fp32 / fp16 / bf16 / int8..int32 / uint8..uint32, any strides. values (in's dtype) and
// indices (int32): contiguous, in's shape with k along dim; the k largest (or smallest) of each row,
// sorted.
void topk(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values, const Tensor& indices);

// indices (int32, contiguous, in's shape): the order that sorts each row along dim.
void argsort(const Tensor& in, int dim, bool descending, const Tensor& indices);

}  // namespace pto::kernels::sort
