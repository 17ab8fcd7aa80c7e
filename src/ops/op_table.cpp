// The op table: built once from the families (src/ops/families.h), looked up by name.
#include "ptocpu/op_table.h"

#include <algorithm>
#include <deque>
#include <string>
#include <unordered_map>

#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/platform.h"

namespace pto {
namespace generated {
extern const char kDocstringRegions[];  // cmake/Docstrings.cmake
}
namespace {

struct Index {
  std::vector<OpDef> ops;
  std::unordered_map<std::string_view, const OpDef*> by_name;
  std::deque<std::string> texts;  // the derived doc pages and docstrings the entries point to
};

// The op's docstring: the ```text block of the region `<!-- begin docstring NAME -->` in its doc
// page (docs/CONTRIBUTING.md), which the build embeds.
std::string docstring_of(std::string_view name) {
  const std::string_view regions = generated::kDocstringRegions;
  const std::string begin = "<!-- begin docstring " + std::string(name) + " -->\n```text\n";
  const size_t start = regions.find(begin);
  const size_t stop = start == std::string_view::npos ? start : regions.find("\n```\n<!-- end docstring -->", start);
  if (stop == std::string_view::npos)
    fail<ArgumentError>("op table: ", name, " has no docstring region (<!-- begin docstring ", name,
                        " --> and a ```text block) in its doc page");
  return std::string(regions.substr(start + begin.size(), stop - start - begin.size()));
}

// A parameter's type in a torch schema; optional (a None default) as `T?`.
std::string torch_type(const OpDef& op, const Param& p) {
  const auto optional = [&](std::string type) {
    return p.default_value && std::string_view(p.default_value) == "None" ? type + "?" : type;
  };
  switch (p.kind) {
    case ParamKind::Memory: return "Tensor(a!)";
    case ParamKind::Tensor:
    case ParamKind::TensorOrScalar: return optional("Tensor");
    case ParamKind::TensorList: return "Tensor[]";
    case ParamKind::Scalar: return p.type_hint && std::string_view(p.type_hint) == "float" ? "float" : "Scalar";
    case ParamKind::Int:
    case ParamKind::Dim: return optional("int");
    case ParamKind::IntList: return optional("int[]");
    case ParamKind::Bool: return "bool";
    case ParamKind::DType: return "ScalarType";
    case ParamKind::Str: return optional("str");
    default: fail<ArgumentError>("op table: ", op.name, "'s parameter ", p.name, " has no torch type; give torch_schema");
  }
}

// `name(Type param=default, *, ...) -> outputs` from the op's parameters (docs/torch.md).
std::string torch_schema_from_params(const OpDef& op) {
  std::string schema = op.name + "(";
  bool keyword_only = false;
  for (const Param& p : op.params) {
    if (&p != &op.params.front()) schema += ", ";
    if (p.keyword_only && !keyword_only) schema += "*, ", keyword_only = true;
    schema += torch_type(op, p) + " " + p.name;
    if (p.default_value) schema += std::string("=") + p.default_value;
  }
  if (op.in_place() || op.num_outputs == 0) return schema + ") -> ()";
  std::string outputs = "Tensor";
  for (int k = 1; k < op.num_outputs; ++k) outputs += ", Tensor";
  return schema + ") -> " + (op.num_outputs == 1 ? outputs : "(" + outputs + ")");
}

const Index& index() {
  static const Index built = [] {
    Index idx;
    for (auto add : families::kAll) add(idx.ops);
    for (OpDef& op : idx.ops) {
      if (!*op.doc_page) op.doc_page = idx.texts.emplace_back("docs/ops/" + op.name + ".md").c_str();
      if (!*op.doc) op.doc = idx.texts.emplace_back(docstring_of(op.name)).c_str();
      if ((op.forms & kTorch) && !*op.torch_schema)
        op.torch_schema = idx.texts.emplace_back(torch_schema_from_params(op)).c_str();
    }
    for (const OpDef& op : idx.ops) {
      if (!idx.by_name.emplace(op.name, &op).second)
        fail<ArgumentError>("op table: ", op.name, " is defined twice");
    }
    return idx;
  }();
  return built;
}

}  // namespace

int OpDef::param_index(std::string_view param, int overload) const {
  const std::vector<Param>& list = signature(overload);
  for (size_t i = 0; i < list.size(); ++i)
    if (param == list[i].name) return static_cast<int>(i);
  return -1;
}

const std::vector<OpDef>& op_table() { return index().ops; }

const OpDef* find_op(std::string_view name) {
  const auto& by_name = index().by_name;
  const auto it = by_name.find(name);
  return it == by_name.end() ? nullptr : it->second;
}

const OpDef& op_def(std::string_view name) {
  if (const OpDef* op = find_op(name)) return *op;
  fail<ArgumentError>("op table: there is no operator named '", name, "'");
}

PlatformRows platform_rows(DTypeSet cpu, DTypeSet ascend950, DTypeSet atlas_a3, DTypeSet atlas_a2, int min_rank,
                           int max_rank, int cpu_min_rank, int cpu_max_rank) {
  const auto chip = [&](DTypeSet dtypes) {
    OpLimits l;
    l.offered = !dtypes.empty();
    l.dtypes = dtypes;
    l.min_rank = min_rank;
    l.max_rank = max_rank;
    return l;
  };
  OpLimits host;
  host.dtypes = cpu;
  host.min_rank = cpu_min_rank;
  host.max_rank = cpu_max_rank;
  return {host, chip(ascend950), chip(atlas_a3), chip(atlas_a2)};
}

PlatformRows with_autocast(PlatformRows rows, DTypeSet autocast) {
  for (OpLimits& l : rows) l.autocast = autocast;
  return rows;
}

const OpLimits& require_offered(const OpDef& op) {
  const Platform& platform = current_platform();
  const OpLimits& limits = op.limits_on(platform.id);
  if (!limits.offered) {
    std::string where;
    for (const Platform& p : all_platforms())
      if (op.limits_on(p.id).offered) where += (where.empty() ? "" : ", ") + p.name + " (" + p.arch + ")";
    fail<UnsupportedError>(op.name, ": not offered on platform ", platform.name, " (", platform.arch,
                           "); it is offered on ", where);
  }
  return limits;
}

Outputs call_op(const OpDef& op, const Args& args) {
  return with_op_named(op.name, [&] { return op.run(op, args); });
}

int64_t bytes_read_written(const OpDef&, const Args& args, const Outputs& outputs) {
  int64_t bytes = 0;
  const auto add = [&bytes](const Tensor& t) {
    if (t.defined()) bytes += t.numel() * static_cast<int64_t>(t.itemsize());
  };
  for (const Value& v : args.values()) {
    if (const auto* t = std::get_if<Tensor>(&v)) add(*t);
    else if (const auto* list = std::get_if<std::vector<Tensor>>(&v))
      for (const Tensor& t : *list) add(t);
  }
  for (const Tensor& t : outputs) add(t);
  return bytes;
}

int64_t bytes_of_valid_parts(const OpDef&, const Args& args, const Outputs& outputs) {
  int64_t bytes = 0;
  for (const Tensor& t : outputs) bytes += tensor_bytes(t);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args.is_tensor(i)) bytes += tensor_bytes(args.tensor(i).valid_part());
    else if (std::holds_alternative<Fields>(args[i])) {
      const Args& fields = args.fields(i);
      for (size_t j = 0; j < fields.size(); ++j)
        if (fields.is_tensor(j)) bytes += tensor_bytes(fields.tensor(j).valid_part());
    }
  }
  return bytes;
}

}  // namespace pto
