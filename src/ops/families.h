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
void add_gathermask(std::vector<OpDef>& table);
void add_arithmetic(std::vector<OpDef>& table);    // add, sub, mul, div, maximum, minimum, comparisons, ...
void add_reduction(std::vector<OpDef>& table);     // sum, prod, amax, amin, argmax, argmin, var, cumsum, cumprod

inline constexpr void (*kAll[])(std::vector<OpDef>&) = {
    add_kernel_model, add_index_select, add_interleave, add_scatter, add_strided_slice,
    add_gather,       add_scatter_update, add_index_add, add_gathermask, add_arithmetic, add_reduction,
};

}  // namespace pto::families
