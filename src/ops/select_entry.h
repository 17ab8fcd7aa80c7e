// The run, infer and bytes of an op entry (ptocpu/op_table.h) for an op (input, dim, index) that
// returns a new tensor of input's dtype (gather, index_select): it reads the index once and
// writes, and reads as much, as its output holds (2 * out + index).
#pragma once
#include <cstdint>
#include <vector>

#include "ptocpu/op_table.h"
#include "ptocpu/tensor.h"

namespace pto {

template <Tensor (*Op)(const Tensor&, int64_t, const Tensor&), Shape (*OutShape)(const Tensor&, int64_t, const Tensor&)>
struct SelectEntry {
  static Outputs run(const OpDef&, const Args& a) { return {Op(a.tensor(0), a.integer(1), a.tensor(2))}; }
  static std::vector<OutputMeta> infer(const OpDef&, const Args& a) {
    return {{OutShape(a.tensor(0), a.integer(1), a.tensor(2)), a.tensor(0).dtype()}};
  }
  static int64_t bytes(const OpDef&, const Args& a, const Outputs& out) {
    return 2 * tensor_bytes(out[0]) + tensor_bytes(a.tensor(2));
  }
};

}  // namespace pto
