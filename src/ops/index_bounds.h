// Index values against their bound, for every op that takes an index tensor: one branch-free,
// vectorised, parallel pass over all values; only when it fails does a rescan find the first
// bad value to name in the IndexError (docs/errors.md). Nothing is written before it passes.
#pragma once
#include <cstdint>
#include <string>

#include "ptocpu/error.h"
#include "ptocpu/tensor.h"

namespace pto::index_bounds {

// What a negative index value means: an error (most ops), or a row to skip (scatter_update).
enum class Negatives { Error, Skip };

// True when every value of the contiguous int32 / int64 `index` is in [0, bound) (below bound
// with Negatives::Skip). When `narrow` is given (a contiguous UINT8 tensor for bound <= 256, or
// UINT16 for bound <= 65536, of index's numel, Negatives::Error), the same pass also writes
// every value there, a copy a kernel can read at 1 or 2 bytes a value.
bool all_in_bounds(const Tensor& index, int64_t bound, const Tensor* narrow = nullptr,
                   Negatives negatives = Negatives::Error);

// The IndexError for the first value of `index` out of [0, bound), naming its position;
// `context` ends the message, e.g. "for dim 0 of input shape [3, 4]". Called after a failed pass.
[[noreturn]] void fail_first_out_of_bounds(const char* op, const Tensor& index, int64_t bound,
                                           const std::string& context, Negatives negatives = Negatives::Error);

// The pass, then, only on failure, the rescan; context() builds the message tail only then.
template <class Context>
void check(const char* op, const Tensor& index, int64_t bound, Context&& context, const Tensor* narrow = nullptr,
           Negatives negatives = Negatives::Error) {
  if (!all_in_bounds(index, bound, narrow, negatives)) fail_first_out_of_bounds(op, index, bound, context(), negatives);
}

// check() with bound input.shape(dim) and the message "... for dim d of input shape [...]".
void check_for_dim(const char* op, const Tensor& index, const Tensor& input, int dim);

}  // namespace pto::index_bounds
