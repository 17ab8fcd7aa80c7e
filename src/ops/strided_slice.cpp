// strided_slice (docs/ops/strided_slice.md): one validation function turns begin / end / strides / masks into
// a canonical plan (output shape; per output dim the input dim, first index and step; the
// index of every shrunk dim). The view is that plan applied through Tensor::as_strided; the
// copy is copy_into(new, view).
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "copy/strided_copy.h"
#include "ops/checks.h"
#include "ops/entry_forms.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace pto {
namespace {

constexpr const char* kOp = "strided_slice";
constexpr size_t kMaxSlots = 32;

// The canonical plan, in index space (it depends on x's shape only): output dim k reads input
// dim dims[k].in_dim (-1: a new axis of size 1) from index dims[k].start with step dims[k].step;
// every input dim that is not read (a shrunk dim) sits at a fixed index, fixed[d] (-1 otherwise).
struct SliceDim {
  int in_dim;
  int64_t start, step;
};
struct StridedSlicePlan {
  Shape shape;                  // output shape
  std::vector<SliceDim> dims;   // one per output dim
  std::vector<int64_t> fixed;   // one per input dim
};

struct Masks {
  int64_t begin, end, ellipsis, shrink, new_axis;
};

std::string slot_list(uint64_t bits) {
  std::string s;
  for (int i = 0; i < 64; ++i)
    if (bits >> i & 1) s += (s.empty() ? "" : ", ") + std::to_string(i);
  return s;
}

// Mask bits must stay below len(begin).
void check_mask_range(const char* name, int64_t mask, size_t slots) {
  const uint64_t allowed = slots >= 64 ? ~uint64_t(0) : (uint64_t(1) << slots) - 1;
  const uint64_t extra = static_cast<uint64_t>(mask) & ~allowed;
  if (extra)
    fail<ArgumentError>(kOp, ": ", name, " = ", mask, " sets bit(s) ", slot_list(extra), " but begin / end / strides have ",
                        slots, " slot(s); allowed values are in [0, ", allowed + 1, ")");
}

void check_exclusive(const char* a, int64_t ma, const char* b, int64_t mb) {
  const uint64_t both = static_cast<uint64_t>(ma & mb);
  if (both)
    fail<ArgumentError>(kOp, ": slot ", std::countr_zero(both), " is set in both ", a, " (= ", ma, ") and ", b,
                        " (= ", mb, "); a slot may be at most one of ellipsis, shrink and new-axis");
}

// Number of elements of range(b, e, s) (b, e already clamped, s != 0), without overflow.
int64_t range_length(int64_t b, int64_t e, int64_t s) {
  if (s > 0) return e > b ? static_cast<int64_t>(static_cast<uint64_t>(e - b - 1) / static_cast<uint64_t>(s) + 1) : 0;
  const uint64_t step = uint64_t(0) - static_cast<uint64_t>(s);
  return b > e ? static_cast<int64_t>(static_cast<uint64_t>(b - e - 1) / step + 1) : 0;
}

// Every rule of docs/errors.md-6 for strided_slice, and the plan; touches no data.
StridedSlicePlan validate_strided_slice(const Tensor& x, const std::vector<int64_t>& begin,
                                        const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                                        const Masks& m) {
  const OpLimits& limits = require_offered(op_def(kOp));
  checks::check_dtype(kOp, "x", x.dtype(), limits.dtypes);
  checks::check_rank(kOp, "x", x.ndim(), limits.min_rank, limits.max_rank);
  checks::check_extent(kOp, "x", x.shape(), true);

  const size_t slots = begin.size();
  if (end.size() != slots || strides.size() != slots)
    fail<ArgumentError>(kOp, ": begin, end and strides must have the same length; got len(begin) = ", slots,
                        ", len(end) = ", end.size(), ", len(strides) = ", strides.size());
  if (slots > kMaxSlots)
    fail<ArgumentError>(kOp, ": len(begin) = ", slots, " is above the limit of ", kMaxSlots, " slots");
  for (size_t i = 0; i < slots; ++i)
    if (strides[i] == 0)
      fail<ArgumentError>(kOp, ": strides[", i, "] = 0; every stride must be nonzero");
  check_mask_range("begin_mask", m.begin, slots);
  check_mask_range("end_mask", m.end, slots);
  check_mask_range("ellipsis_mask", m.ellipsis, slots);
  check_mask_range("shrink_axis_mask", m.shrink, slots);
  check_mask_range("new_axis_mask", m.new_axis, slots);
  if (std::popcount(static_cast<uint64_t>(m.ellipsis)) > 1)
    fail<ArgumentError>(kOp, ": ellipsis_mask = ", m.ellipsis, " sets slots ", slot_list(m.ellipsis),
                        "; at most one slot may be an ellipsis");
  check_exclusive("ellipsis_mask", m.ellipsis, "shrink_axis_mask", m.shrink);
  check_exclusive("ellipsis_mask", m.ellipsis, "new_axis_mask", m.new_axis);
  check_exclusive("shrink_axis_mask", m.shrink, "new_axis_mask", m.new_axis);

  const int rank = x.ndim();
  const int new_axes = std::popcount(static_cast<uint64_t>(m.new_axis));
  const int ellipses = std::popcount(static_cast<uint64_t>(m.ellipsis));
  const int indexing = static_cast<int>(slots) - new_axes - ellipses;  // slots that consume one input dim
  if (indexing > rank)
    fail<ArgumentError>(kOp, ": ", indexing, " slot(s) index input dims (", slots, " slot(s), ", new_axes,
                        " new-axis, ", ellipses, " ellipsis) but x has rank ", rank, " (shape ",
                        shape_to_string(x.shape()), ")");

  StridedSlicePlan plan{{}, {}, std::vector<int64_t>(rank, -1)};
  auto keep_dim = [&](int d) {
    plan.shape.push_back(x.shape(d));
    plan.dims.push_back({d, 0, 1});
  };
  int d = 0;  // next input dim
  for (size_t i = 0; i < slots; ++i) {
    const int64_t bit = int64_t(1) << i;
    if (m.new_axis & bit) {
      plan.shape.push_back(1);
      plan.dims.push_back({-1, 0, 1});
      continue;
    }
    if (m.ellipsis & bit) {
      for (int k = 0; k < rank - indexing; ++k) keep_dim(d++);
      continue;
    }
    const int64_t n = x.shape(d);
    if (m.shrink & bit) {
      const int64_t raw = (m.begin & bit) ? 0 : begin[i];
      const int64_t idx = raw < 0 ? raw + n : raw;
      if (idx < 0 || idx >= n)
        fail<IndexError>(kOp, ": shrink_axis_mask slot ", i, ": begin[", i, "] = ", raw, " is out of range [", -n,
                         ", ", n, ") for dim ", d, " of x shape ", shape_to_string(x.shape()));
      plan.fixed[d++] = idx;
      continue;
    }
    const int64_t s = strides[i];
    const int64_t lo = s > 0 ? 0 : -1, hi = s > 0 ? n : n - 1;
    auto canonical = [&](int64_t v, bool masked, int64_t masked_value) {
      if (masked) return masked_value;
      if (v < 0) v += n;
      return v < lo ? lo : (v > hi ? hi : v);
    };
    const int64_t b = canonical(begin[i], m.begin & bit, s > 0 ? 0 : n - 1);
    const int64_t e = canonical(end[i], m.end & bit, s > 0 ? n : -1);
    plan.shape.push_back(range_length(b, e, s));
    plan.dims.push_back({d++, b, s});
  }
  while (d < rank) keep_dim(d++);
  checks::check_extent(kOp, "output", plan.shape, false);
  return plan;
}

// The plan as a view of x: element strides and the offset of out[0, ..., 0].
struct ViewLayout {
  Strides strides;
  int64_t offset = 0;
};
ViewLayout layout(const Tensor& x, const StridedSlicePlan& plan) {
  ViewLayout v{Strides(plan.shape.size()), 0};
  for (size_t k = 0; k < plan.dims.size(); ++k) {
    const SliceDim& sd = plan.dims[k];
    if (sd.in_dim < 0) continue;  // a new axis: size 1, stride 0
    const int64_t st = x.stride(sd.in_dim);
    v.strides[k] = plan.shape[k] > 1 ? sd.step * st : st;  // |step| <= extent here: no overflow
    v.offset += sd.start * st;
  }
  for (int d = 0; d < x.ndim(); ++d)
    if (plan.fixed[d] >= 0) v.offset += plan.fixed[d] * x.stride(d);
  if (shape_numel(plan.shape) == 0) v.offset = 0;  // nothing is read; keep the pointer inside x
  return v;
}

}  // namespace

Tensor strided_slice_view(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                          const std::vector<int64_t>& strides, int64_t begin_mask, int64_t end_mask,
                          int64_t ellipsis_mask, int64_t shrink_axis_mask, int64_t new_axis_mask) {
  const Masks masks{begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask};
  const StridedSlicePlan plan = validate_strided_slice(x, begin, end, strides, masks);
  const ViewLayout v = layout(x, plan);
  return x.as_strided(plan.shape, v.strides, v.offset);
}

Tensor strided_slice(const Tensor& x_view, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                     const std::vector<int64_t>& strides, int64_t begin_mask, int64_t end_mask, int64_t ellipsis_mask,
                     int64_t shrink_axis_mask, int64_t new_axis_mask) {
  const Tensor x = x_view.valid_part();  // only the valid part is read (docs/kernel_model.md)
  const Masks masks{begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask};
  const StridedSlicePlan plan = validate_strided_slice(x, begin, end, strides, masks);
  const ViewLayout v = layout(x, plan);
  // Straight into the copy engine: no view Tensor in between (tiny calls count every allocation).
  Tensor out = Tensor::empty(plan.shape, x.dtype());
  kernels::strided_copy(out.data(), out.strides().data(), static_cast<const std::byte*>(x.data()) + v.offset * x.itemsize(),
                        v.strides.data(), plan.shape.data(), static_cast<int>(plan.shape.size()), x.itemsize());
  return out;
}

Shape output_shape::strided_slice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                                  const std::vector<int64_t>& strides, int64_t begin_mask, int64_t end_mask,
                                  int64_t ellipsis_mask, int64_t shrink_axis_mask, int64_t new_axis_mask) {
  const checks::EveryPlatformScope every_platform;
  const Masks masks{begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask};
  return validate_strided_slice(x, begin, end, strides, masks).shape;
}


namespace {

using SliceFn = Tensor (*)(const Tensor&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                           const std::vector<int64_t>&, int64_t, int64_t, int64_t, int64_t, int64_t);

template <SliceFn slice>
Outputs run_slice(const OpDef&, const Args& a) {
  return {slice(a.tensor(0), a.ints(1), a.ints(2), a.ints(3), a.integer(4), a.integer(5), a.integer(6), a.integer(7),
                a.integer(8))};
}

std::vector<Param> slice_params(ParamKind x) {
  return {{"x", x},
          {"begin", ParamKind::IntList},
          {"end", ParamKind::IntList},
          {"strides", ParamKind::IntList},
          {"begin_mask", ParamKind::Int, "0"},
          {"end_mask", ParamKind::Int, "0"},
          {"ellipsis_mask", ParamKind::Int, "0"},
          {"shrink_axis_mask", ParamKind::Int, "0"},
          {"new_axis_mask", ParamKind::Int, "0"}};
}

// What both forms' docs state between their first line and what they return.
constexpr std::string_view kSliceDoc = R"(TensorFlow's strided_slice. Slot i of begin / end / strides is matched to input dims left to
right; mask bit i refers to slot i. begin_mask / end_mask: ignore begin[i] / end[i] (take from
the start / to the end); ellipsis_mask: slot i stands for all remaining dims; new_axis_mask:
insert a size-1 dim; shrink_axis_mask: take index begin[i] and drop the dim. Negative begin /
end count from the end, out-of-range values clamp, negative strides walk backwards, end = -1
excludes the last element. x has rank 0-8; len(begin) == len(end) == len(strides) <= 32.

Raises ArgumentError (zero stride, lengths, mask bits), IndexOutOfRange (a shrink index out of
range), DTypeError (non-integers, or a dtype the platform does not list).

)";

}  // namespace

void families::add_strided_slice(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chips{D::INT8, D::UINT8, D::INT32, D::INT64, D::FP16, D::FP32, D::BF16};
  const PlatformRows rows = platform_rows(DTypeSet::all(), chips, chips, chips, 0, 8, 0, 8);
  table.push_back(OpDef{
      .name = kOp,
      .params = slice_params(ParamKind::Tensor),
      .doc = joined_doc({"Slice x with begin / end / strides and masks into a new contiguous tensor (tf.strided_slice).\n\n",
                         kSliceDoc,
                         R"(Returns a new contiguous tensor of x's dtype.

>>> x = ptocpu.asarray([[0, 1, 2], [3, 4, 5]])
>>> ptocpu.strided_slice(x, [0, 0], [0, 0], [-1, -1], begin_mask=3, end_mask=3).tolist()
[[5, 4, 3], [2, 1, 0]])"}),
      .doc_page = "docs/ops/strided_slice.md",
      .tile_rule = "no tile rule (a view plus one copy)",
      .torch_schema = "strided_slice(Tensor x, int[] begin, int[] end, int[] strides, int begin_mask=0, int end_mask=0, "
                      "int ellipsis_mask=0, int shrink_axis_mask=0, int new_axis_mask=0) -> Tensor",
      .limits = rows,
      .run = run_slice<strided_slice>,
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        return {{output_shape::strided_slice(a.tensor(0), a.ints(1), a.ints(2), a.ints(3), a.integer(4), a.integer(5),
                                             a.integer(6), a.integer(7), a.integer(8)),
                 a.tensor(0).dtype()}};
      },
      .bytes = [](const OpDef&, const Args&, const Outputs& out) { return 2 * tensor_bytes(out[0]); },
  });
  table.push_back(OpDef{
      .name = "strided_slice_view",
      .params = slice_params(ParamKind::Memory),
      .doc = joined_doc({"Slice x with begin / end / strides and masks as a zero-copy view (tf.strided_slice).\n\n",
                         kSliceDoc,
                         R"(Returns a zero-copy view of x: writes through it are seen in x (x must be memory that can be
shared, not a list).

>>> import numpy as np
>>> a = np.zeros((2, 4), np.float32)
>>> ptocpu.strided_slice_view(a, [0, 1], [2, 4], [1, 2])[...] = 1
>>> a[0].tolist()
[0.0, 1.0, 0.0, 1.0])"}),
      .doc_page = "docs/ops/strided_slice.md",
      .tile_rule = "no tile rule (a view)",
      .limits = rows,
      .run = run_slice<strided_slice_view>,
      .bytes = [](const OpDef&, const Args&, const Outputs&) -> int64_t { return 0; },
  });
}

}  // namespace pto
