#include "ops/checks.h"

#include "kernels/scatter.h"
#include "ptocpu/error.h"

namespace pto::checks {

void check_dtype(const char* op, const char* param, DType dt, DTypeSet allowed) {
  if (!allowed.contains(dt))
    fail<DTypeError>(op, ": ", param, " dtype ", dtype_name(dt), " is not supported on platform ",
                     current_platform().name, "; allowed: ", allowed.to_string());
}

void check_same_dtype(const char* op, const char* param, DType got, const char* other_param, DType expected) {
  if (got != expected)
    fail<DTypeError>(op, ": ", param, " dtype ", dtype_name(got), " must match ", other_param, " dtype ",
                     dtype_name(expected), " (data type inconsistent)");
}

void check_index_dtype(const char* op, const char* param, DType dt) {
  if (dt != DType::INT32 && dt != DType::INT64)
    fail<DTypeError>(op, ": ", param, " dtype ", dtype_name(dt), " is not an index dtype; allowed: DT_INT32, DT_INT64");
}

void check_rank(const char* op, const char* param, int rank, int min_rank, int max_rank) {
  if (rank < min_rank || rank > max_rank)
    fail<ArgumentError>(op, ": ", param, " rank ", rank, " is out of range [", min_rank, ", ", max_rank,
                        "] on platform ", current_platform().name);
}

void check_extent(const char* op, const char* param, const Shape& shape, bool is_input) {
  const Platform& platform = current_platform();
  checked_nbytes(shape, 1, op);  // the element count fits int64
  const int64_t n = shape_numel(shape);
  if (is_input && n == 0 && !platform.empty_inputs_allowed)
    fail<ArgumentError>(op, ": ", param, " shape ", shape_to_string(shape), " is empty; platform ", platform.name,
                        " does not accept empty input tensors");
  for (int64_t d : shape)
    if (d > platform.max_extent)
      fail<ArgumentError>(op, ": ", param, " shape ", shape_to_string(shape), " has a dim of ", d,
                          " above the platform ", platform.name, " limit of ", platform.max_extent);
  if (n > platform.max_extent)
    fail<ArgumentError>(op, ": ", param, " shape ", shape_to_string(shape), " has ", n,
                        " elements, above the platform ", platform.name, " limit of ", platform.max_extent);
}

void check_writable_in_place(const char* op, const Tensor& input, const char* alternative) {
  if (input.read_only())
    fail<ArgumentError>(op, ": input (shape ", shape_to_string(input.shape()),
                        ") is read-only memory; it cannot be written in place (", alternative, ")");
  if (kernels::has_internal_overlap(input))
    fail<ArgumentError>(op, ": input (shape ", shape_to_string(input.shape()), ", strides ",
                        shape_to_string(input.strides()),
                        ") has elements that share memory; writing it in place needs distinct elements (", alternative,
                        ", or a contiguous copy)");
}

Tensor written_tensor(const Tensor& input, bool in_place) {
  if (in_place) return input;
  Tensor out = Tensor::empty(input.shape(), input.dtype());
  copy_into(out, input);
  return out;
}

Tensor unaliased(const Tensor& t, const Tensor& written) {
  if (!t.may_overlap(written)) return t;
  Tensor copy = Tensor::empty(t.shape(), t.dtype());
  copy_into(copy, t);
  return copy;
}

int normalize_dim(const char* op, int64_t dim, int rank) {
  if (dim < -rank || dim >= rank)
    fail<IndexError>(op, ": dim ", dim, " is out of range [", -rank, ", ", rank, ") for a tensor of rank ", rank);
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

bool on_chip() { return current_platform().id != PlatformId::Cpu; }

bool on_a2a3() {
  const PlatformId id = current_platform().id;
  return id == PlatformId::AtlasA2 || id == PlatformId::AtlasA3;
}

}  // namespace pto::checks
