// The op families that make up the op table (ptocpu/op_table.h): each function appends its
// entries. The table is built once, in this order, which is the order of the docs.
#pragma once
#include <vector>

#include "ptocpu/op_table.h"

namespace pto::families {

void add_kernel_model(std::vector<OpDef>& table);  // view, assemble, indexing (src/ops/kernel_model.cpp)
void add_index_select(std::vector<OpDef>& table);
void add_interleave(std::vector<OpDef>& table);    // interleave, deinterleave
void add_scatter(std::vector<OpDef>& table);       // scatter_, scatter
void add_strided_slice(std::vector<OpDef>& table);  // strided_slice, strided_slice_view
void add_gather(std::vector<OpDef>& table);
void add_scatter_update(std::vector<OpDef>& table);
void add_index_add(std::vector<OpDef>& table);     // index_add_, index_add
void add_index_put(std::vector<OpDef>& table);
void add_gathermask(std::vector<OpDef>& table);
void add_paged_gather(std::vector<OpDef>& table);  // experimental.gather_in_ub, gather_in_l1 (src/ops/paged_gather.cpp)
void add_arithmetic(std::vector<OpDef>& table);    // add, sub, mul, div, maximum, minimum, comparisons, ...
void add_creation(std::vector<OpDef>& table);      // full, zeros, ones, arange, one_hot, uniform, normal
void add_composite(std::vector<OpDef>& table);     // softmax, rms_norm, online_softmax*, expand_exp_dif, sort, quant
void add_math(std::vector<OpDef>& table);          // exp, log, trig, hyperbolic, erf, sigmoid, rounding, ... (src/ops/math.cpp)
void add_layout(std::vector<OpDef>& table);        // reshape, transpose, concat, pad, tril, pack, ... (src/ops/layout.cpp)
void add_cast(std::vector<OpDef>& table);          // cast (astype shares its conversions) (src/ops/cast.cpp)
void add_matmul(std::vector<OpDef>& table);        // matmul, scaled_mm, transposed_batchmatmul (src/ops/matmul.cpp)
void add_binary(std::vector<OpDef>& table);        // floor_div, remainder, pow, atan2, bitwise, clip, where, ...
void add_reduction(std::vector<OpDef>& table);     // sum, prod, amax, amin, argmax, argmin, var, cumsum, cumprod
void add_conv(std::vector<OpDef>& table);          // conv (src/ops/conv.cpp)

// One family per line (merges of new families touch only their own line).
inline constexpr void (*kAll[])(std::vector<OpDef>&) = {
    add_kernel_model,
    add_index_select,
    add_interleave,
    add_scatter,
    add_strided_slice,
    add_gather,
    add_scatter_update,
    add_index_add,
    add_index_put,
    add_gathermask,
    add_paged_gather,
    add_arithmetic,
    add_creation,
    add_composite,
    add_math,
    add_layout,
    add_cast,
    add_matmul,
    add_binary,
    add_reduction,
    add_conv,
};

}  // namespace pto::families
