// The PyPTO kernel model (docs/kernel_model.md): view, assemble, loop bounds and the jit argument check.
// Every function checks all its arguments before it creates a view or writes a byte.
#include <sstream>

#include "ops/checks.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"

namespace pto {
namespace {

std::string join(const Shape& values) { return shape_to_string(values); }

// ArgumentError unless `values` has one entry per dim of a rank-`rank` tensor.
void check_length(const char* op, const char* param, const Shape& values, int rank, const char* of_what) {
  if (static_cast<int>(values.size()) != rank)
    fail<ArgumentError>(op, ": ", param, " ", join(values), " has ", values.size(), " entries but ", of_what,
                        " has rank ", rank, "; give one per dim");
}

void check_non_negative(const char* op, const char* param, const Shape& values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] < 0)
      fail<ArgumentError>(op, ": ", param, " ", join(values), " has the negative value ", values[i], " at dim ", i);
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
      fail<TileError>(op, ": ", prefix, "offsets ", join(offsets), " + ", what, " ", join(extent), " = ", reach.str(),
                      " is outside ", bounds_what, " shape ", join(bounds), " at dim ", i, " (",
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
    fail<ArgumentError>(op, ": ", prefix, "src rank ", src.ndim(), " (shape ", join(src.shape()),
                        ") must match out rank ", out.ndim(), " (shape ", join(out.shape()), ")");
  if (static_cast<int>(offsets.size()) != out.ndim())
    fail<ArgumentError>(op, ": ", prefix, "offsets ", join(offsets), " has ", offsets.size(),
                        " entries but out has rank ", out.ndim(), "; give one per dim");
  checks::check_extent(op, (prefix + "src").c_str(), src.shape(), true);
  checks::check_extent(op, "out", out.shape(), true);
  if (out.read_only())
    fail<ArgumentError>(op, ": out (shape ", join(out.shape()), ") is read-only memory; it cannot be written");
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

Tensor view(const Tensor& input, const Shape& shape, const Shape& offsets, const std::optional<Shape>& valid_shape) {
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
    for (int i = 0; i < rank; ++i)
      if ((*valid_shape)[i] > shape[i])
        fail<TileError>(op, ": valid_shape ", join(*valid_shape), " exceeds shape ", join(shape), " at dim ", i, " (",
                        (*valid_shape)[i], " > ", shape[i], "); the valid part lies inside the declared block");
  }
  checks::check_extent(op, "input", input.shape(), true);
  const Shape& extent = valid_shape ? *valid_shape : shape;
  check_inside(op, "", offsets, extent, valid_shape ? "valid_shape" : "shape", input.shape(), "input");

  int64_t element_offset = 0;
  for (int i = 0; i < rank; ++i) element_offset += offsets[i] * input.stride(i);
  return input.as_strided(extent, input.strides(), element_offset);
}

void assemble(const Tensor& src, const Shape& offsets, const Tensor& out) {
  const AssemblePlan plan = validate_assemble("", src, offsets, out);
  run_assemble({{src, plan.target}}, out);
}

void assemble(const std::vector<AssemblePart>& parts, const Tensor& out) {
  std::vector<std::pair<Tensor, Tensor>> copies;
  copies.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string prefix = "inputs[" + std::to_string(i) + "]: ";
    copies.emplace_back(parts[i].src, validate_assemble(prefix, parts[i].src, parts[i].offsets, out).target);
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

void check_kernel_argument(const std::string& kernel, const std::string& param, const Tensor& arg,
                           const Shape& shape, DType dtype) {
  if (!arg.defined())
    fail<DTypeError>("jit: kernel ", kernel, " parameter '", param,
                     "' got an annotation placeholder (Tensor()), not a tensor with storage");
  if (arg.dtype() != dtype)
    fail<DTypeError>("jit: kernel ", kernel, " parameter '", param, "' has dtype ", dtype_name(arg.dtype()),
                     " but its annotation asks for ", dtype_name(dtype));
  if (arg.shape() != shape)
    fail<ArgumentError>("jit: kernel ", kernel, " parameter '", param, "' has shape ", join(arg.shape()),
                        " but its annotation asks for ", join(shape));
}

}  // namespace pto
