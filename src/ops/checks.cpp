#include "ops/checks.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <sstream>

#include "ptocpu/error.h"
#include "ptocpu/parallel.h"
#include "copy/simd.h"
#include "kernels/scatter.h"

namespace pto::checks {

void check_dtype(const char* op, const char* param, DType dt, DTypeSet allowed) {
  if (!allowed.contains(dt))
    fail<DTypeError>(op, ": ", param, " dtype ", dtype_name(dt), " is not supported on platform ",
                     current_platform().name, "; allowed: ", allowed.to_string());
}

void check_same_dtype(const char* op, const char* param, DType got, const char* other_param, DType expected) {
  if (got != expected)
    fail<DTypeError>(op, ": ", param, " dtype ", dtype_name(got), " must match ", other_param, " dtype ",
                     dtype_name(expected));
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

namespace {
// OR of "value out of [0, bound)" over v[0, n), one unsigned compare per value (negative
// values wrap to huge ones); branch-free so that it vectorises (runtime-dispatched clones).
PTO_SIMD_CLONES bool any_out_of_range32(const uint32_t* v, int64_t n, uint32_t bound) {
  uint32_t any = 0;
  for (int64_t i = 0; i < n; ++i) any |= static_cast<uint32_t>(v[i] >= bound);
  return any != 0;
}
PTO_SIMD_CLONES bool any_out_of_range64(const uint64_t* v, int64_t n, uint64_t bound) {
  uint64_t any = 0;
  for (int64_t i = 0; i < n; ++i) any |= static_cast<uint64_t>(v[i] >= bound);
  return any != 0;
}

// OR of "value >= bound" (signed: negative values pass).
template <class I>
PTO_SIMD_CLONES bool any_at_or_above(const I* v, int64_t n, I bound) {
  I any = 0;
  for (int64_t i = 0; i < n; ++i) any |= static_cast<I>(v[i] >= bound);
  return any != 0;
}

template <class I>
bool all_in_range(const I* v, int64_t n, int64_t bound, Negatives negatives) {
  std::atomic<bool> bad{false};
  parallel_for(n, int64_t(1) << 17, [&](int64_t begin, int64_t end) {
    bool any;
    if (negatives == Negatives::Skip)
      any = bound > std::numeric_limits<I>::max() ? false
                                                  : any_at_or_above<I>(v + begin, end - begin, static_cast<I>(bound));
    else if constexpr (sizeof(I) == 4)  // bound above 2^31: only negative values (>= 2^31 unsigned) are out
      any = any_out_of_range32(reinterpret_cast<const uint32_t*>(v) + begin, end - begin,
                               static_cast<uint32_t>(std::min<int64_t>(bound, int64_t(1) << 31)));
    else
      any = any_out_of_range64(reinterpret_cast<const uint64_t*>(v) + begin, end - begin, static_cast<uint64_t>(bound));
    if (any) bad.store(true, std::memory_order_relaxed);
  });
  return !bad.load();
}

std::string position(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < idx.size(); ++i) os << (i ? ", " : "") << idx[i];
  os << (idx.size() == 1 ? ",)" : ")");
  return os.str();
}
}  // namespace

bool index_values_in_range(const Tensor& index, int64_t bound, Negatives negatives) {
  bool ok = true;
  visit_index_dtype(index.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    ok = all_in_range(index.data_as<I>(), index.numel(), bound, negatives);
  });
  return ok;
}

void check_index_values(const char* op, const Tensor& index, int64_t bound, const std::string& context,
                        Negatives negatives) {
  visit_index_dtype(index.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* v = index.data_as<I>();
    const int64_t n = index.numel();
    if (all_in_range(v, n, bound, negatives)) return;
    for (int64_t i = 0; i < n; ++i)
      if ((v[i] < 0 && negatives == Negatives::Error) || v[i] >= bound)
        fail<IndexError>(op, ": index value ", static_cast<int64_t>(v[i]), " at index position ",
                         position(i, index.shape()), " is out of range [0, ", bound, ") ", context);
  });
}

void check_index_for_dim(const char* op, const Tensor& index, const Tensor& input, int dim) {
  if (index_values_in_range(index, input.shape(dim))) return;
  check_index_values(op, index, input.shape(dim),
                     "for dim " + std::to_string(dim) + " of input shape " + shape_to_string(input.shape()));
}

}  // namespace pto::checks
