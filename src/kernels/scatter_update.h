#pragma once
#include "ptocpu/tensor.h"

namespace pto::kernels {

// What the scatter_update kernel consumes (docs/ops/scatter_update.md); everything has been
// validated and every index value checked, so the kernel neither checks nor throws (bar an
// allocation failure before its first write).
struct ScatterUpdateArgs {
  Tensor input;  // [rows, d] or [blocks, block_size, n, d], written in place
  Tensor index;  // contiguous int32 / int64 [b, s]; every value < the number of slots
  Tensor src;    // [>= b*s, d] or [>= b, >= s, n, d]; does not overlap input
};

// For each (i, j) in row-major order with slot = index[i][j] >= 0, the slot's row of input
// (2-D: input[slot]; 4-D: input[slot / block_size][slot % block_size]) takes src's row
// (2-D: src[i*s + j]; 4-D: src[i][j]). Duplicates: the last write wins. Parallel and
// deterministic: each slot is written once, by its last writer.
void scatter_update(const ScatterUpdateArgs& args);

}  // namespace pto::kernels
