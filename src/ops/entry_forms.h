// Op-table entries (ptocpu/op_table.h) that come in two forms: an op's in-place and out-of-place
// forms share their entry but for a few fields (each form's docstring is its own region of the
// shared page).
#pragma once
#include <string>
#include <vector>

#include "ptocpu/op_table.h"

namespace pto {

// Appends the in-place form of `shared`, named shared.name + "_" unless `in_place_name` is given
// (its first parameter is memory it writes and returns), and then the out-of-place form,
// shared.name (the first parameter is read; the result is a new tensor of its shape and dtype). A
// form's torch schema is written from its parameters (kTorch among shared's forms) unless given
// here (overloads).
inline void add_in_place_pair(std::vector<OpDef>& table, const OpDef& shared, const char* in_place_schema = "",
                              const char* out_of_place_schema = "", const char* in_place_name = nullptr) {
  for (const bool writes : {true, false}) {
    OpDef op = shared;
    if (writes) op.name = in_place_name ? std::string(in_place_name) : op.name + "_";
    op.params[0].kind = writes ? ParamKind::Memory : ParamKind::Tensor;
    op.written = writes ? op.params[0].name : nullptr;
    op.torch_schema = writes ? in_place_schema : out_of_place_schema;
    if (!writes)
      op.infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        return {{a.tensor(0).shape(), a.tensor(0).dtype()}};
      };
    table.push_back(std::move(op));
  }
}

}  // namespace pto
