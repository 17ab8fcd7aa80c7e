// The composite family (families::add_composite, src/ops/composite.cpp): softmax, rms_norm,
// online_softmax, online_softmax_update and expand_exp_dif there; the sort and quantisation ops in
// their own files, added to the table by the family.
#pragma once
#include <vector>

#include "ptocpu/op_table.h"

namespace pto::composite_family {

void add_sort(std::vector<OpDef>& table);   // topk, argsort (src/ops/sort.cpp)
void add_quant(std::vector<OpDef>& table);  // quantize, dequantize, quant_mx (src/ops/quant.cpp)

}  // namespace pto::composite_family
