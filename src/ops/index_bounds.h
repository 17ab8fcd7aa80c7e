// Index values against their bound, for every op that takes an index tensor: one branch-free,
// vectorised, parallel pass over all values; only when it fails does a rescan find the first
// bad value to name in the IndexError (docs/errors.md). Nothing is written before it passes.
#pragma once
#include <cstdint>
#include <string>

#include "ptocpu/error.h"
#include "ptocpu/tensor.h"

namespace pto::index_bounds {

// True when every value of the contiguous int32 / int64 `index` is in [0, bound). When
// `narrow` is given (bound <= 65536, numel elements), the same pass also writes every value
// as uint16 there, a copy a kernel can read at 2 bytes a value.
bool all_in_bounds(const Tensor& index, int64_t bound, uint16_t* narrow = nullptr);

// The IndexError for the first value of `index` out of [0, bound), naming its position;
// `context` ends the message, e.g. "for dim 0 of input shape [3, 4]". Called after a failed pass.
[[noreturn]] void fail_first_out_of_bounds(const char* op, const Tensor& index, int64_t bound,
                                           const std::string& context);

// The pass, then, only on failure, the rescan; context() builds the message tail only then.
template <class Context>
void check(const char* op, const Tensor& index, int64_t bound, Context&& context, uint16_t* narrow = nullptr) {
  if (!all_in_bounds(index, bound, narrow)) fail_first_out_of_bounds(op, index, bound, context());
}

}  // namespace pto::index_bounds
