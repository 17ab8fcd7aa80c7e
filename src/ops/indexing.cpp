// t[key] and t[key] = value (docs/tensors.md#indexing): numpy's basic indexing as views, and
// PyPTO's forms on top of it (gather / scatter_ by an index tensor, blocks past the end inside
// kernels, block assignment by assemble).
#include <algorithm>
#include <optional>

#include "ops/checks.h"
#include "ptocpu/error.h"
#include "ptocpu/op_table.h"
#include "ptocpu/ops.h"

namespace pto {
namespace {

constexpr const char* kOp = "Tensor index";
thread_local int t_kernel_depth = 0;

// Python's slice.indices(n): the start and the number of elements of a slice over n elements.
struct SliceRange {
  int64_t start, length;
};
SliceRange slice_range(const IndexItem& s, int64_t n) {
  const int64_t step = s.step;
  const bool back = step < 0;
  const int64_t lower = back ? -1 : 0, upper = back ? n - 1 : n;
  const auto clamp = [&](int64_t v) { return v < 0 ? std::max(v + n, lower) : std::min(v, upper); };
  const int64_t start = s.has_start ? clamp(s.start) : (back ? upper : lower);
  const int64_t stop = s.has_stop ? clamp(s.stop) : (back ? lower : upper);
  int64_t length = 0;
  if (back ? stop < start : start < stop) {
    const __int128 span = back ? static_cast<__int128>(start) - stop : static_cast<__int128>(stop) - start;
    const __int128 by = back ? -static_cast<__int128>(step) : step;
    length = static_cast<int64_t>((span - 1) / by + 1);
  }
  return {start, length};
}

// The items with Ellipsis expanded to full slices (at most one Ellipsis).
std::vector<IndexItem> expanded(const IndexKey& key, int rank) {
  int consumed = 0, ellipses = 0;
  for (const IndexItem& it : key.items) {
    if (it.kind == IndexItem::Kind::Ellipsis) ++ellipses;
    else if (it.kind != IndexItem::Kind::NewAxis) ++consumed;
  }
  if (ellipses > 1) fail<ArgumentError>(kOp, ": at most one Ellipsis, got ", ellipses);
  if (consumed > rank) fail<IndexError>(kOp, ": ", consumed, " indices for a tensor of rank ", rank);
  std::vector<IndexItem> out;
  for (const IndexItem& it : key.items) {
    if (it.kind != IndexItem::Kind::Ellipsis) {
      out.push_back(it);
      continue;
    }
    for (int k = 0; k < rank - consumed; ++k) out.push_back({IndexItem::Kind::Slice});
  }
  for (int k = consumed + (ellipses ? rank - consumed : 0); k < rank; ++k) out.push_back({IndexItem::Kind::Slice});
  return out;
}

Tensor basic_index(const Tensor& t, const IndexKey& key) {
  Shape shape;
  Strides strides;
  int64_t offset = 0;
  int dim = 0;
  for (const IndexItem& it : expanded(key, t.ndim())) {
    switch (it.kind) {
      case IndexItem::Kind::NewAxis:
        shape.push_back(1);
        strides.push_back(0);
        break;
      case IndexItem::Kind::Slice: {
        if (it.step == 0) fail<ArgumentError>(kOp, ": slice step cannot be zero");
        const SliceRange r = slice_range(it, t.shape(dim));
        shape.push_back(r.length);
        strides.push_back(t.stride(dim) * it.step);
        if (r.length > 0) offset += r.start * t.stride(dim);
        ++dim;
        break;
      }
      case IndexItem::Kind::Int: {
        const int64_t n = t.shape(dim), i = it.value;
        if (i < -n || i >= n)
          fail<IndexError>(kOp, ": index ", i, " is out of range [", -n, ", ", n, ") for dim ", dim, " of shape ",
                           shape_to_string(t.shape()));
        offset += (i < 0 ? i + n : i) * t.stride(dim);
        ++dim;
        break;
      }
      case IndexItem::Kind::Ellipsis: break;  // expanded already
    }
  }
  return t.as_strided(shape, strides, offset);
}

// PyPTO's block form: only ints and unit-step slices (after Ellipsis). An int i is the block
// [i, i + 1) of its dim and is listed in int_dims.
struct Block {
  Shape offsets, sizes;
  std::vector<int> int_dims;
};
std::optional<Block> block_of(const IndexKey& key, const Shape& shape) {
  const int rank = static_cast<int>(shape.size());
  for (const IndexItem& it : key.items)
    if (it.kind == IndexItem::Kind::NewAxis) return std::nullopt;
  int consumed = 0;
  for (const IndexItem& it : key.items) consumed += it.kind != IndexItem::Kind::Ellipsis;
  if (consumed > rank) return std::nullopt;
  Block b;
  int dim = 0;
  for (const IndexItem& it : expanded(key, rank)) {
    const int64_t n = shape[dim];
    if (it.kind == IndexItem::Kind::Int) {
      b.offsets.push_back(it.value < 0 ? it.value + n : it.value);
      b.sizes.push_back(1);
      b.int_dims.push_back(dim);
    } else {
      if (it.step != 1) return std::nullopt;
      const int64_t start = !it.has_start ? 0 : (it.start < 0 ? it.start + n : it.start);
      const int64_t stop = !it.has_stop ? n : (it.stop < 0 ? it.stop + n : it.stop);
      b.offsets.push_back(start);
      b.sizes.push_back(stop - start);
    }
    ++dim;
  }
  return b;
}

// Copies value (already t's dtype) into view, broadcasting like numpy; value is read in full
// first when it shares memory with t.
void copy_broadcast(const Tensor& view, Tensor value) {
  if (value.dtype() != view.dtype())
    fail<DTypeError>("Tensor assignment: value dtype ", dtype_name(value.dtype()), " must match the tensor dtype ",
                     dtype_name(view.dtype()));
  if (value.ndim() > view.ndim())
    fail<ArgumentError>("Tensor assignment: value shape ", shape_to_string(value.shape()), " cannot broadcast to ",
                        shape_to_string(view.shape()));
  Strides strides(view.ndim(), 0);
  const int lead = view.ndim() - value.ndim();
  for (int i = 0; i < value.ndim(); ++i) {
    const int64_t n = value.shape(i), want = view.shape(lead + i);
    if (n == want) strides[lead + i] = value.stride(i);
    else if (n != 1)
      fail<ArgumentError>("Tensor assignment: value shape ", shape_to_string(value.shape()), " cannot broadcast to ",
                          shape_to_string(view.shape()));
  }
  value = checks::unaliased(value, view);
  copy_into(view, value.as_strided(view.shape(), strides, 0), "Tensor assignment");
}

void require_storage(const Tensor& t) {
  if (!t.defined())
    fail<DTypeError>(kOp, ": Tensor() is an annotation placeholder without storage; create a tensor with "
                     "ptocpu.tensor(shape, dtype) or ptocpu.asarray(data)");
}

}  // namespace

bool in_kernel() { return t_kernel_depth > 0; }
void enter_kernel() { ++t_kernel_depth; }
void exit_kernel() { --t_kernel_depth; }

Tensor get_item(const Tensor& t, const IndexKey& key) {
  require_storage(t);
  if (key.by_index_tensor) return gather(t, key.dim, key.index);
  if (in_kernel()) {
    const std::optional<Block> b = block_of(key, t.shape());
    if (b && b->int_dims.empty()) {
      bool inside = true, past_end = false;
      for (int i = 0; i < t.ndim(); ++i) {
        inside = inside && b->offsets[i] >= 0 && b->sizes[i] >= 0;
        past_end = past_end || b->offsets[i] + b->sizes[i] > t.shape(i);
      }
      if (inside && past_end) return view_block(t, b->sizes, b->offsets, std::nullopt, false);  // numpy would shorten it
    }
  }
  return basic_index(t, key);
}

void set_item(const Tensor& t, const IndexKey& key, const Scalar& value) {
  require_storage(t);
  if (key.by_index_tensor) {
    scatter_(t, key.dim, key.index, value);
    return;
  }
  const Tensor view = basic_index(t, key);
  alignas(8) unsigned char element[8];
  encode_scalar(value, view.dtype(), element, "Tensor assignment", "value");
  copy_into(view, Tensor::from_blob(element, view.shape(), Strides(view.ndim(), 0), view.dtype(), nullptr),
            "Tensor assignment");
}

void set_item(const Tensor& t, const IndexKey& key, const Tensor& value) {
  require_storage(t);
  if (key.by_index_tensor) {
    scatter_(t, key.dim, key.index, value);
    return;
  }
  if (const std::optional<AssemblePart> block = block_assignment(t, key, value)) {
    assemble(block->src, block->offsets, t);
    return;
  }
  copy_broadcast(basic_index(t, key), value);
}

std::optional<AssemblePart> block_assignment(const Tensor& t, const IndexKey& key, const Tensor& value) {
  if (!in_kernel() || key.by_index_tensor) return std::nullopt;
  const std::optional<Block> b = block_of(key, t.shape());
  if (!b) return std::nullopt;
  // PyPTO's block assignment: b of the block's rank (its int dims dropped) is assembled at the
  // block's start (its valid part), never broadcast: out[i:, ...] = row writes one row, as
  // upstream's Tensor.__setitem__ does (docs/tensors.md#indexing).
  int kept = 0;
  for (int d = 0; d < t.ndim(); ++d)
    kept += std::find(b->int_dims.begin(), b->int_dims.end(), d) == b->int_dims.end();
  if (value.ndim() != kept) return std::nullopt;
  Tensor part = value.valid_part();
  if (!b->int_dims.empty()) {  // value gains the key's int dims as dims of size 1
    Shape shape;
    Strides strides;
    for (int d = 0, v = 0; d < t.ndim(); ++d) {
      const bool is_int = std::find(b->int_dims.begin(), b->int_dims.end(), d) != b->int_dims.end();
      shape.push_back(is_int ? 1 : part.shape(v));
      strides.push_back(is_int ? 0 : part.stride(v));
      v += !is_int;
    }
    part = part.as_strided(shape, strides, 0);
  }
  return AssemblePart{part, b->offsets};
}

}  // namespace pto
