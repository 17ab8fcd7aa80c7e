// Helpers for op-table entries (ptocpu/op_table.h) that come in forms: an op's in-place and
// out-of-place forms, or a copy and a view, share their entry but for a few fields and their
// docs' paragraphs but for the first line and the result.
#pragma once
#include <deque>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ptocpu/op_table.h"

namespace pto {

// A doc assembled from parts. OpDef::doc is a const char*, so the text is kept for the program's
// life (the table is built once).
inline const char* joined_doc(std::initializer_list<std::string_view> parts) {
  static std::mutex lock;
  static std::deque<std::string> kept;  // a deque: earlier texts never move
  std::string text;
  for (const std::string_view part : parts) text += part;
  const std::lock_guard<std::mutex> guard(lock);
  return kept.emplace_back(std::move(text)).c_str();
}

// What differs between an op's two forms' texts: the doc's first line (with the blank line after
// it) and its last part (the result and the example), the torch schema.
struct FormText {
  std::string_view doc_head;
  std::string_view doc_result;
  const char* torch_schema;
};

// Appends the in-place form of `shared`, named shared.name + "_" (its first parameter is memory it
// writes and returns), and then the out-of-place form, shared.name (the first parameter is read;
// the result is a new tensor of its shape and dtype). Their docs: head, `rules`, result.
inline void add_in_place_pair(std::vector<OpDef>& table, const OpDef& shared, std::string_view rules,
                              const FormText& in_place, const FormText& out_of_place) {
  for (const bool writes : {true, false}) {
    const FormText& form = writes ? in_place : out_of_place;
    OpDef op = shared;
    if (writes) op.name += "_";
    op.params[0].kind = writes ? ParamKind::Memory : ParamKind::Tensor;
    op.written = writes ? op.params[0].name : nullptr;
    op.doc = joined_doc({form.doc_head, rules, form.doc_result});
    op.torch_schema = form.torch_schema;
    if (!writes)
      op.infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        return {{a.tensor(0).shape(), a.tensor(0).dtype()}};
      };
    table.push_back(std::move(op));
  }
}

}  // namespace pto
