// The PyPTO kernel model (docs/kernel_model.md): view, assemble, loop bounds and the jit argument check.
// Every function checks all its arguments before it creates a view or writes a byte.
#include <algorithm>
#include <sstream>

#include "ops/checks.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"

namespace pto {
namespace {

// ArgumentError unless `values` has one entry per dim of a rank-`rank` tensor.
void check_length(const char* op, const char* param, const Shape& values, int rank, const char* of_what) {
  if (static_cast<int>(values.size()) != rank)
    fail<ArgumentError>(op, ": ", param, " ", shape_to_string(values), " has ", values.size(), " entries but ", of_what,
                        " has rank ", rank, "; give one per dim");
}

void check_non_negative(const char* op, const char* param, const Shape& values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] < 0)
      fail<ArgumentError>(op, ": ", param, " ", shape_to_string(values), " has the negative value ", values[i], " at dim ", i);
}

// TileError unless [offsets, offsets + extent) lies inside `bounds` on every dim.
// `what` names the extent ("valid_shape", "shape", "src shape"), `bounds_what` the tensor.
void check_inside(const char* op, const std::string& prefix, const Shape& offsets, const Shape& extent,
                  const char* what, const Shape& bounds, const char* bounds_what) {
  for (size_t i = 0; i < offsets.size(); ++i) {
    // offsets[i] + extent[i] <= bounds[i], written so that it cannot overflow.
    if (offsets[i] < 0 || offsets[i] > bounds[i] || extent[i] > bounds[i] - offsets[i]) {
      std::ostringstream reach;
      reach << '[';
      for (size_t j = 0; j < offsets.size(); ++j) {
        if (j) reach << ", ";
        // Printed only; saturate instead of overflowing.
        const int64_t e = extent[j], o = offsets[j];
        reach << ((o > 0 && e > INT64_MAX - o) ? INT64_MAX : o + e);
      }
      reach << ']';
      fail<TileError>(op, ": ", prefix, "offsets ", shape_to_string(offsets), " + ", what, " ", shape_to_string(extent), " = ", reach.str(),
                      " is outside ", bounds_what, " shape ", shape_to_string(bounds), " at dim ", i, " (",
                      offsets[i], " + ", extent[i], " > ", bounds[i], offsets[i] < 0 ? ", negative offset" : "",
                      "); the block must lie inside the tensor");
    }
  }
}

struct AssemblePlan {
  Tensor target;  // the region of out that src is copied into
};

AssemblePlan validate_assemble(const std::string& prefix, const Tensor& src, const Shape& offsets,
                               const Tensor& out) {
  constexpr const char* op = "assemble";
  if (!src.defined() || !out.defined())
    fail<DTypeError>(op, ": ", prefix, !src.defined() ? "src" : "out",
                     " is an annotation placeholder (Tensor()), not a tensor with storage");
  if (src.dtype() != out.dtype())
    fail<DTypeError>(op, ": ", prefix, "src dtype ", dtype_name(src.dtype()), " must match out dtype ",
                     dtype_name(out.dtype()));
  if (src.ndim() != out.ndim())
    fail<ArgumentError>(op, ": ", prefix, "src rank ", src.ndim(), " (shape ", shape_to_string(src.shape()),
                        ") must match out rank ", out.ndim(), " (shape ", shape_to_string(out.shape()), ")");
  if (static_cast<int>(offsets.size()) != out.ndim())
    fail<ArgumentError>(op, ": ", prefix, "offsets ", shape_to_string(offsets), " has ", offsets.size(),
                        " entries but out has rank ", out.ndim(), "; give one per dim");
  checks::check_extent(op, (prefix + "src").c_str(), src.shape(), true);
  checks::check_extent(op, "out", out.shape(), true);
  if (out.read_only())
    fail<ArgumentError>(op, ": out (shape ", shape_to_string(out.shape()), ") is read-only memory; it cannot be written");
  check_inside(op, prefix, offsets, src.shape(), "src shape", out.shape(), "out");
  int64_t element_offset = 0;
  for (int i = 0; i < out.ndim(); ++i) element_offset += offsets[i] * out.stride(i);
  return {out.as_strided(src.shape(), out.strides(), element_offset)};
}

// Copies every part; a source that shares memory with out is read in full first.
void run_assemble(const std::vector<std::pair<Tensor, Tensor>>& copies, const Tensor& out) {
  std::vector<Tensor> sources;
  sources.reserve(copies.size());
  for (const auto& [src, target] : copies) {
    (void)target;
    if (src.may_overlap(out)) {
      Tensor copy = Tensor::empty(src.shape(), src.dtype());
      copy_into(copy, src);
      sources.push_back(copy);
    } else {
      sources.push_back(src);
    }
  }
  for (size_t i = 0; i < copies.size(); ++i) copy_into(copies[i].second, sources[i]);
}

}  // namespace

// view's rules; with offsets_inside false (t[i:j] blocks inside a kernel, docs/tensors.md#indexing)
// a block may start at or past the end of input and then holds no valid element.
Tensor view_block(const Tensor& input, const Shape& shape, const Shape& offsets,
                  const std::optional<Shape>& valid_shape, bool offsets_inside) {
  constexpr const char* op = "view";
  if (!input.defined())
    fail<DTypeError>(op, ": input is an annotation placeholder (Tensor()), not a tensor with storage");
  const int rank = input.ndim();
  check_length(op, "shape", shape, rank, "input");
  check_length(op, "offsets", offsets, rank, "input");
  check_non_negative(op, "shape", shape);
  if (valid_shape) {
    check_length(op, "valid_shape", *valid_shape, rank, "input");
    check_non_negative(op, "valid_shape", *valid_shape);
    // PyPTO bounds a valid shape by input's shape only; the part beyond the block's shape is never
    // read (the device clips every tile's valid shape at the block), so it is clipped here.
    for (int i = 0; i < rank; ++i)
      if ((*valid_shape)[i] > input.shape(i))
        fail<TileError>(op, ": valid_shape ", shape_to_string(*valid_shape), " exceeds input shape ",
                        shape_to_string(input.shape()), " at dim ", i, " (", (*valid_shape)[i], " > ", input.shape(i),
                        "); a valid shape cannot be larger than the viewed tensor");
  }
  checks::check_extent(op, "input", input.shape(), true);
  checks::check_extent(op, "shape", shape, true);
  Shape valid;
  if (valid_shape) {
    valid.resize(rank);
    for (int i = 0; i < rank; ++i) valid[i] = std::min((*valid_shape)[i], shape[i]);
    check_inside(op, "", offsets, valid, valid == *valid_shape ? "valid_shape" : "valid_shape (clipped to shape)",
                 input.shape(), "input");
  } else {
    // A block that runs past the end of input keeps its shape; its valid shape is the part inside.
    for (int i = 0; i < rank; ++i)
      if (offsets[i] < 0 || (offsets_inside && offsets[i] >= input.shape(i) && input.shape(i) > 0))
        fail<TileError>(op, ": offsets ", shape_to_string(offsets), " has the offset ", offsets[i], " at dim ", i,
                        ", outside [0, ", input.shape(i), ") of input shape ", shape_to_string(input.shape()),
                        "; the block must start inside the tensor");
    valid.resize(rank);
    for (int i = 0; i < rank; ++i)
      valid[i] = offsets[i] >= input.shape(i) ? 0 : std::min(shape[i], input.shape(i) - offsets[i]);
  }

  int64_t element_offset = 0;
  if (shape_numel(valid) > 0)  // offsets lie inside input
    for (int i = 0; i < rank; ++i) element_offset += offsets[i] * input.stride(i);
  const Tensor block = input.as_strided(valid, input.strides(), element_offset);
  if (valid == shape) return block;  // zero-copy
  // A partly valid block is its own zero-filled tensor of `shape` (see docs/running_pypto_programs.md).
  Tensor padded = Tensor::zeros(shape, input.dtype());
  copy_into(padded.as_strided(valid, padded.strides(), 0), block, op);
  return padded.with_valid_shape(valid);
}

Tensor view(const Tensor& input, const Shape& shape, const Shape& offsets, const std::optional<Shape>& valid_shape) {
  return view_block(input, shape, offsets, valid_shape, true);
}

Tensor bitcast_view(const Tensor& input, DType dtype) {
  constexpr const char* op = "view";
  if (!input.defined())
    fail<DTypeError>(op, ": input is an annotation placeholder (Tensor()), not a tensor with storage");
  const int64_t from = static_cast<int64_t>(input.itemsize()), to = static_cast<int64_t>(dtype_size(dtype));
  if (from == to) return input.reinterpret(dtype);
  if (input.ndim() == 0)
    fail<ArgumentError>(op, ": a 0-d tensor cannot be viewed as ", dtype_name(dtype), " (", to, " bytes per element, "
                        "input ", dtype_name(input.dtype()), " has ", from, ")");
  const int last = input.ndim() - 1;
  const int64_t row_bytes = input.shape(last) * from;
  if ((input.shape(last) > 1 && input.stride(last) != 1) || row_bytes % to != 0)
    fail<ArgumentError>(op, ": viewing ", dtype_name(input.dtype()), " as ", dtype_name(dtype),
                        " needs a contiguous last dim whose byte size is a multiple of ", to, "; input shape ",
                        shape_to_string(input.shape()), " has ", row_bytes, " bytes per row");
  Shape shape = input.shape();
  shape[last] = row_bytes / to;
  Strides strides(input.ndim());
  for (int i = 0; i < last; ++i) {
    if ((input.stride(i) * from) % to != 0)
      fail<ArgumentError>(op, ": stride ", input.stride(i), " of dim ", i, " (", input.stride(i) * from,
                          " bytes) is not a multiple of ", to, " bytes, so the input cannot be viewed as ",
                          dtype_name(dtype));
    strides[i] = input.stride(i) * from / to;
  }
  strides[last] = 1;
  Tensor out = Tensor::from_blob(input.data(), shape, strides, dtype, input.owner());
  return input.read_only() ? out.as_read_only() : out;
}

// assemble writes only src's valid part.
void assemble(const Tensor& src, const Shape& offsets, const Tensor& out) {
  const Tensor valid = src.defined() ? src.valid_part() : src;
  const AssemblePlan plan = validate_assemble("", valid, offsets, out);
  run_assemble({{valid, plan.target}}, out);
}

void assemble(const std::vector<AssemblePart>& parts, const Tensor& out) {
  std::vector<std::pair<Tensor, Tensor>> copies;
  copies.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string prefix = "inputs[" + std::to_string(i) + "]: ";
    const Tensor valid = parts[i].src.defined() ? parts[i].src.valid_part() : parts[i].src;
    copies.emplace_back(valid, validate_assemble(prefix, valid, parts[i].offsets, out).target);
  }
  run_assemble(copies, out);
}

int64_t loop_trip_count(int64_t start, int64_t stop, int64_t step) {
  if (step == 0)
    fail<ArgumentError>("loop: step must not be 0 (start ", start, ", stop ", stop, ", step ", step, ")");
  const __int128 span = static_cast<__int128>(stop) - start;
  if ((step > 0 && span <= 0) || (step < 0 && span >= 0)) return 0;
  const __int128 s = step;
  return static_cast<int64_t>(step > 0 ? (span + s - 1) / s : (span + s + 1) / s);
}

namespace {

Outputs run_view(const OpDef&, const Args& a) {
  Tensor t = a.tensor(0);
  if (!a.is_none(4)) t = bitcast_view(t, a.dtype(4));
  if (a.is_none(1) && a.is_none(2)) {
    if (a.is_none(4)) fail<ArgumentError>("view: give shape and offsets, or dtype= for a bit-cast view");
    return {t};
  }
  if (a.is_none(1) || a.is_none(2)) fail<ArgumentError>("view: give both shape and offsets");
  std::optional<Shape> valid;
  if (!a.is_none(3)) valid = a.ints(3);
  return {view(t, a.ints(1), a.ints(2), valid)};
}

Outputs run_assemble(const OpDef&, const Args& a) {
  if (a.overload == 0) {
    assemble(a.tensor(0), a.ints(1), a.tensor(2));
    return {};
  }
  std::vector<AssemblePart> parts;
  for (const TensorAt& p : a.parts(0)) parts.push_back({p.tensor, p.offsets});
  assemble(parts, a.tensor(1));
  return {};
}

int64_t assemble_bytes(const OpDef&, const Args& a, const Outputs&) {
  if (a.overload == 0) return 2 * tensor_bytes(a.tensor(0).valid_part());
  int64_t bytes = 0;
  for (const TensorAt& p : a.parts(0)) bytes += 2 * tensor_bytes(p.tensor.valid_part());
  return bytes;
}

int64_t no_bytes(const OpDef&, const Args&, const Outputs&) { return 0; }

// PyPTO's assemble checks its source's shape itself, before the refusal every operator shares.
constexpr const char* kAssembleDynamic = "Assemble: shape of src tensor requires integer";

}  // namespace

void families::add_kernel_model(std::vector<OpDef>& table) {
  // The kernel model moves data: every dtype and rank on every platform. Its page is
  // docs/kernel_model.md unless the entry names another.
  const DTypeSet every = DTypeSet::all().with(DTypeSet::storage_formats());
  const auto model_op = [rows = platform_rows(every, every, every, every, 0, 8)](OpDef entry) {
    entry.limits = rows;
    if (!*entry.doc_page) entry.doc_page = "docs/kernel_model.md";
    return entry;
  };
  table.push_back(model_op({
      .name = "view",
      .params = {{"input", ParamKind::Memory},
                 {"shape", ParamKind::IntList, "None"},
                 {"offsets", ParamKind::IntList, "None"},
                 {"valid_shape", ParamKind::IntList, "None"},
                 {"dtype", ParamKind::DType, "None", true}},
      .forms = kFunction | kMethod,
      .tile_rule = "no tile rule (a window, or a padded copy of a partly valid block)",
      .run = run_view,
      .bytes = no_bytes,
  }));
  table.push_back(model_op({
      .name = "assemble",
      .params = {{.name = "input", .kind = ParamKind::Tensor, .dynamic_refusal = kAssembleDynamic},
                 {"offsets", ParamKind::IntList},
                 {"out", ParamKind::Memory},
                 {.name = "parallel", .kind = ParamKind::Bool, .default_value = "False", .keyword_only = true}},
      .overloads = {{{.name = "inputs", .kind = ParamKind::Parts, .dynamic_refusal = kAssembleDynamic},
                     {"out", ParamKind::Memory},
                     {"parallel", ParamKind::Bool, "False"}}},
      .num_outputs = 0,
      .written = "out",
      .tile_rule = "no tile rule (copies)",
      .run = run_assemble,
      .bytes = assemble_bytes,
  }));
  table.push_back(model_op({
      .name = "getitem",
      .params = {{"self", ParamKind::Memory}, {"key", ParamKind::Index}},
      .forms = 0,
      .dunders = {{"__getitem__"}},
      .doc_page = "docs/tensors.md",
      .run = [](const OpDef&, const Args& a) -> Outputs { return {get_item(a.tensor(0), a.key(1))}; },
      .bytes = [](const OpDef&, const Args& a, const Outputs& out) -> int64_t {
        return a.key(1).by_index_tensor ? 2 * tensor_bytes(out[0]) + tensor_bytes(a.key(1).index) : 0;
      },
  }));
  table.push_back(model_op({
      .name = "setitem",
      .params = {{"self", ParamKind::Memory}, {"key", ParamKind::Index}, {"value", ParamKind::TensorOrScalar}},
      .forms = 0,
      .dunders = {{"__setitem__"}},
      .num_outputs = 0,
      .written = "self",
      .doc_page = "docs/tensors.md",
      .run = [](const OpDef&, const Args& a) -> Outputs {
        if (a.is_tensor(2)) set_item(a.tensor(0), a.key(1), a.tensor(2));
        else set_item(a.tensor(0), a.key(1), a.scalar(2));
        return {};
      },
      .bytes = [](const OpDef&, const Args& a, const Outputs&) -> int64_t {
        if (a.is_tensor(2)) return 2 * tensor_bytes(a.tensor(2));
        const IndexKey& key = a.key(1);
        return key.by_index_tensor ? tensor_bytes(key.index) : tensor_bytes(get_item(a.tensor(0), key));
      },
  }));
  table.push_back(model_op({
      .name = "astype",
      .params = {{"self", ParamKind::Tensor}, {"dtype", ParamKind::DType}},
      .forms = kMethod,
      .doc_page = "docs/dtypes.md",
      .run = [](const OpDef&, const Args& a) -> Outputs { return {astype(a.tensor(0), a.dtype(1))}; },
  }));
  table.push_back(model_op({
      .name = "contiguous",
      .params = {{"self", ParamKind::Tensor}},
      .forms = kMethod,
      .doc_page = "docs/tensors.md",
      .run = [](const OpDef&, const Args& a) -> Outputs { return {a.tensor(0).contiguous()}; },
  }));
}

}  // namespace pto
