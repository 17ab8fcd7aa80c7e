// The layout family (docs/ops/layout.md): checks, tile rules, then views, strided copies
// (src/copy/strided_copy.cpp) or the family's kernels (src/kernels/layout.cpp). Pure data
// movement except tril / triu, whose masked elements are multiplied by 0 as on the device.
//
// Valid shapes (docs/kernel_model.md): each op reads its input's valid part; an output that
// upstream gives a larger declared shape than its valid shape is a zero-filled tensor of that
// shape holding the data in its leading box, with the valid shape set.
#include "ops/layout.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "kernels/layout.h"
#include "ops/checks.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/op_table.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;

// The device's implementation limits (transpose's axis pairs, concat's 128 inputs) hold on the
// chips; the host platform has none.
// The platform's row for op after the checks every input of the family gets.
const OpLimits& check_input(const char* op, const char* param, const Tensor& t) {
  const OpLimits& limits = require_offered(op_def(op));
  checks::check_dtype(op, param, t.dtype(), limits.dtypes);
  checks::check_rank(op, param, t.ndim(), limits.min_rank, limits.max_rank);
  checks::check_extent(op, param, t.shape(), true);
  return limits;
}

// The tile shape when one is set (nullptr otherwise), checked to have `rank` dims.
const Shape* tile_of_rank(const char* op, int rank, const char* of_what) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return nullptr;
  tiling::check_rank(op, tile, rank, of_what);
  return &tile;
}

// UB of the copy-like ops: an input tile over `in` and an output tile over `out`, both under the
// op's tile (over the output).
void check_in_out_ub(const char* op, const Shape& tile, const Shape& in, const Shape& out, size_t item) {
  tiling::check_ub(op, tile, {{"input tile", in, item}, {"output tile", out, item}});
}

// ---- boxes and fills ---------------------------------------------------------------------------

// The leading box `extent` of t, as a view.
Tensor leading(const Tensor& t, const Shape& extent) { return t.as_strided(extent, t.strides(), 0); }

// One element of a tensor's dtype, as bytes (all zero: the zero of every dtype ptocpu pads with).
struct Element {
  alignas(8) unsigned char bytes[8] = {};
};

void fill(const Tensor& region, const Element& e) {
  if (region.numel() == 0) return;
  Tensor one = Tensor::empty({1}, region.dtype());
  std::memcpy(one.data(), e.bytes, region.itemsize());
  copy_into(region, one.as_strided(region.shape(), Strides(region.ndim(), 0), 0));
}

// Fills every element of t outside its leading box `inside`: one band per dim k (dims before k
// inside the box, dim k past it, the dims after whole), so each element is written once.
void fill_outside(const Tensor& t, const Shape& inside, const Element& e) {
  for (int k = 0; k < t.ndim(); ++k) {
    Shape band(t.ndim());
    for (int i = 0; i < t.ndim(); ++i) band[i] = i < k ? inside[i] : t.shape(i);
    band[k] = t.shape(k) - inside[k];
    if (shape_numel(band) > 0) fill(t.as_strided(band, t.strides(), inside[k] * t.stride(k)), e);
  }
}

// dst = src: a transposing layout through the blocked transpose kernel, any other through the
// strided-copy engine.
void copy_block(const Tensor& dst, const Tensor& src) {
  if (!kernels::transposed_copy(dst, src)) copy_into(dst, src);
}

// A new tensor of `shape` holding `data` in its leading box and zeros elsewhere; the box is its
// valid shape.
Tensor padded_copy(const Shape& shape, const Tensor& data) {
  Tensor out = Tensor::empty(shape, data.dtype());
  copy_block(leading(out, data.shape()), data);
  fill_outside(out, data.shape(), Element{});
  return out.with_valid_shape(data.shape());
}

// A valid_shape argument for a tensor of `shape`: one entry per dim, each in [0, shape[i]].
void check_valid_shape(const char* op, const Shape& valid, const Shape& shape) {
  if (valid.size() != shape.size())
    fail<ArgumentError>(op, ": valid_shape ", shape_to_string(valid), " has ", valid.size(), " entries but the output shape ",
                        shape_to_string(shape), " has rank ", shape.size(), "; give one per dim");
  for (size_t i = 0; i < valid.size(); ++i)
    if (valid[i] < 0 || valid[i] > shape[i])
      fail<ArgumentError>(op, ": valid_shape ", shape_to_string(valid), " has ", valid[i], " at dim ", i,
                          ", outside [0, ", shape[i], "] of the output shape ", shape_to_string(shape));
}

// ---- reshape / unsqueeze -----------------------------------------------------------------------

// `to` with its -1 (at most one; may_infer) resolved so that it holds `count` elements.
Shape resolve_shape(const char* op, const std::vector<int64_t>& to, const Shape& from, bool may_infer) {
  const int64_t count = shape_numel(from);
  if (may_infer && to.size() == 1 && to[0] == -1) return {count};
  constexpr __int128 kCap = static_cast<__int128>(1) << 64;  // products past this only compare unequal
  int unknown = -1;
  __int128 known = 1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1 && !may_infer)
      fail<ArgumentError>(op, ": shape ", shape_to_string(to), " has -1 at index ", i,
                          "; with inplace=True every dim must be given");
    if (to[i] == -1 && unknown >= 0)
      fail<ArgumentError>(op, ": shape ", shape_to_string(to), " has -1 at indices ", unknown, " and ", i,
                          "; only one dim can be inferred");
    if (to[i] < -1)
      fail<ArgumentError>(op, ": shape ", shape_to_string(to), " has the negative dim ", to[i], " at index ", i);
    if (to[i] == -1) unknown = static_cast<int>(i);
    else known = std::min(known * to[i], kCap);
  }
  Shape out = to;
  if (unknown >= 0) {
    if (known == 0 || count % static_cast<int64_t>(known) != 0)
      fail<ArgumentError>(op, ": shape ", shape_to_string(to), " cannot hold the ", count, " elements of input shape ",
                          shape_to_string(from));
    out[unknown] = count / static_cast<int64_t>(known);
  } else if (known != count) {
    fail<ArgumentError>(op, ": shape ", shape_to_string(to), " does not hold the ", count, " elements of input shape ",
                        shape_to_string(from), "; the element counts must match");
  }
  return out;
}

// Strides under which `shape` sees t's elements in row-major order without a copy (numpy's
// no-copy reshape rule), or nullopt when t's layout does not allow one.
std::optional<Strides> view_strides(const Tensor& t, const Shape& shape) {
  const int n = static_cast<int>(shape.size());
  if (t.numel() == 0) return contiguous_strides(shape);
  Shape old_dims;
  Strides old_strides;
  for (int i = 0; i < t.ndim(); ++i)
    if (t.shape(i) != 1) {
      old_dims.push_back(t.shape(i));
      old_strides.push_back(t.stride(i));
    }
  const int m = static_cast<int>(old_dims.size());
  Strides strides(n, 1);
  int oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < n && oi < m) {
    // The smallest groups old[oi, oj) and new[ni, nj) of equal element count.
    int64_t np = shape[ni], op = old_dims[oi];
    while (np != op) {
      if (np < op) np *= shape[nj++];
      else op *= old_dims[oj++];
    }
    for (int k = oi; k < oj - 1; ++k)
      if (old_strides[k] != old_dims[k + 1] * old_strides[k + 1]) return std::nullopt;
    strides[nj - 1] = old_strides[oj - 1];
    for (int k = nj - 1; k > ni; --k) strides[k - 1] = strides[k] * shape[k];
    ni = nj++;
    oi = oj++;
  }
  for (int k = ni; k < n; ++k) strides[k] = ni > 0 ? strides[ni - 1] : 1;  // trailing size-1 dims
  return strides;
}

// ---- transpose / permute -----------------------------------------------------------------------

// transpose and permute return their input when nothing moves; upstream still copies it later
// in tiles whose last dim must be whole 32-byte blocks.
void check_no_op_tile(const char* op, const Tensor& input) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const int64_t bytes = tile.back() * static_cast<int64_t>(input.itemsize());
  if (bytes % 32 != 0)
    fail<TileError>(op, ": tile shape ", shape_to_string(tile), " has a last dim of ", tile.back(), " ",
                    dtype_name(input.dtype()), " elements (", bytes,
                    " bytes); the input is returned unchanged, and its copy needs a multiple of 32 bytes");
}

// The axes of a permutation: output axis i is input axis axes[i].
using Axes = std::vector<int>;

// UB of a transposing copy: input tile, output tile (the tile permuted), and for a swap of the last
// axis with axis `scratch_axis` the scratch tile: the input tile with that axis rounded up to 16
// (32 for 1-byte dtypes) and the last to 32 bytes.
void check_permute_ub(const char* op, const Tensor& input, const Shape& tile, const Axes& axes, int scratch_axis) {
  const int r = input.ndim();
  const size_t item = input.itemsize();
  Shape out_shape(r), out_tile(r), scratch(r);
  for (int i = 0; i < r; ++i) {
    out_shape[i] = input.shape(axes[i]);
    out_tile[i] = tile[axes[i]];
    scratch[i] = std::min(tile[i], input.shape(i));
  }
  std::vector<tiling::Buffer> buffers{{"input tile", input.shape(), item}, {"output tile", out_shape, item, 1, out_tile}};
  if (scratch_axis >= 0) {
    scratch[scratch_axis] = checks::round_up(scratch[scratch_axis], item == 1 ? 32 : 16);
    buffers.push_back({"transpose scratch", scratch, item, 1, scratch});
  }
  tiling::check_ub(op, tile, buffers);
}

// A new tensor with output axis i = input axis axes[i]: the valid part moved by the strided-copy
// engine (its tiled transposes), the rest of the declared shape zero.
Tensor permuted_copy(const Tensor& input, const Axes& axes) {
  const Tensor v = input.valid_part();
  const int r = input.ndim();
  Shape shape(r), valid(r);
  Strides strides(r);
  for (int i = 0; i < r; ++i) {
    shape[i] = input.shape(axes[i]);
    valid[i] = v.shape(axes[i]);
    strides[i] = v.stride(axes[i]);
  }
  return padded_copy(shape, v.as_strided(valid, strides, 0));
}

// ---- concat ------------------------------------------------------------------------------------

constexpr size_t kMaxConcatInputs = 128;

// "tensors[i]" for concat's messages: made once for the first kMaxConcatInputs (concat of many
// small tensors is common and every input is checked), on demand past them.
std::string list_item_name(size_t i) { return "tensors[" + std::to_string(i) + "]"; }

const char* list_item_name(size_t i, std::string& spare) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (size_t k = 0; k < kMaxConcatInputs; ++k) v.push_back(list_item_name(k));
    return v;
  }();
  if (i < names.size()) return names[i].c_str();
  spare = list_item_name(i);
  return spare.c_str();
}

// The element stride between t's blocks of dims [d, rank) when each block is dense and the outer
// dims step by one stride (0 for a single block); nullopt otherwise.
std::optional<int64_t> block_stride(const Tensor& t, int d) {
  int64_t expect = 1;
  for (int i = t.ndim() - 1; i >= d; --i) {
    if (t.shape(i) != 1 && t.stride(i) != expect) return std::nullopt;
    expect *= t.shape(i);
  }
  std::optional<int64_t> stride;
  int64_t next = 0;
  for (int i = d - 1; i >= 0; --i) {
    if (t.shape(i) == 1) continue;
    if (!stride) stride = t.stride(i);
    else if (t.stride(i) != next) return std::nullopt;
    next = t.stride(i) * t.shape(i);
  }
  return stride.value_or(0);
}

// ---- pad / fillpad -----------------------------------------------------------------------------

void check_mode(const char* op, const std::string& mode) {
  if (mode != "constant") fail<ArgumentError>(op, ": mode '", mode, "' is not supported; allowed: 'constant'");
}

// The fill value in x's dtype; a float needs a floating dtype (upstream refuses float('-inf')
// for integers and asks for the dtype's own minimum).
Element encode_value(const char* op, const Scalar& value, DType dt) {
  if (value.kind == Scalar::Kind::Float && !is_floating(dt))
    fail<ArgumentError>(op, ": value ", value.to_string(), " is a float but x dtype ", dtype_name(dt),
                        " is not floating; give an integer value (e.g. the dtype's minimum instead of -inf)");
  Element e;
  encode_scalar(value, dt, e.bytes, op, "constant");
  return e;
}

// ---- tril / triu -------------------------------------------------------------------------------

Tensor triangle_op(const char* op, const Tensor& input, int64_t diagonal, bool upper, bool in_place) {
  check_input(op, "input", input);
  if (in_place) checks::check_writable_in_place(op, input, upper ? "use triu" : "use tril");
  const int r = input.ndim();
  if (const Shape* tile = tile_of_rank(op, r, "output")) {
    const size_t item = input.itemsize();
    std::vector<tiling::Buffer> buffers{{"input tile", input.shape(), item}, {"output tile", input.shape(), item}};
    if (input.dtype() == D::INT8)  // the device computes int8 in fp16
      buffers.push_back({"fp16 tiles", input.shape(), dtype_size(D::FP16), 2});
    tiling::check_ub(op, *tile, buffers);
  }
  const Tensor v = input.valid_part();
  if (in_place) {
    kernels::triangle_in_place(v, diagonal, upper);
    return input;
  }
  Tensor out = Tensor::empty(v.shape(), input.dtype());
  kernels::triangle(out, v, diagonal, upper);
  return input.partially_valid() ? padded_copy(input.shape(), out) : out;
}

// ---- unpack's output dtypes per platform ------------------------------------------------------

constexpr DTypeSet kUnpackChips{D::UINT8, D::INT8, D::UINT16, D::INT16, D::UINT32, D::INT32,
                            D::UINT64, D::INT64, D::BF16, D::FP16, D::FP32};
constexpr std::array<DTypeSet, kNumPlatforms> kUnpackTargets{DTypeSet::all(), kUnpackChips, kUnpackChips,
                                                             kUnpackChips};

// input's elements in row-major order as `shape`: a view with `strides` (view_strides' answer),
// or a contiguous copy when it had none.
Tensor view_or_copy(const Tensor& input, const Shape& shape, const std::optional<Strides>& strides) {
  if (strides) return input.as_strided(shape, *strides, 0);
  Tensor copy = Tensor::empty(input.shape(), input.dtype());
  copy_block(copy, input);
  return copy.as_strided(shape, contiguous_strides(shape), 0);
}

}  // namespace

// ---- the ops -----------------------------------------------------------------------------------

Tensor reshape(const Tensor& input, const std::vector<int64_t>& shape, const std::optional<Shape>& valid_shape,
               bool inplace) {
  constexpr const char* op = "reshape";
  check_input(op, "input", input);
  if (inplace && valid_shape)
    // PyPTO refuses the pair for every input, with words about dynamic views that its tests match.
    fail<ArgumentError>(op, ": valid_shape cannot be given with inplace=True; use inplace=False (PyPTO: "
                        "\"Reshape(Inplace=true) is not supported for tensors derived from dynamic view\")");
  if (inplace && input.partially_valid())
    fail<ArgumentError>(op, ": input has valid shape ", shape_to_string(input.valid_shape()), " inside shape ",
                        shape_to_string(input.shape()), "; a partly valid tensor (a view) may only be reshaped with inplace=False");
  if (valid_shape && !inplace) {
    // Upstream reshapes the valid part (docs/ops/reshape.md#valid-parts): a valid_shape holding just
    // the input's valid elements gets them in row-major order, even where the shapes hold more.
    const Shape& valid = *valid_shape;
    const bool counts_differ = std::ranges::none_of(shape, [](int64_t d) { return d < 0; }) &&
                               shape_numel(shape) != shape_numel(input.shape());
    if ((input.partially_valid() || counts_differ) && valid.size() == shape.size() &&
        shape_numel(valid) == shape_numel(input.valid_shape())) {
      checks::check_extent(op, "shape", shape, false);
      check_valid_shape(op, valid, shape);
      const Tensor data = input.valid_part();
      return padded_copy(shape, view_or_copy(data, valid, view_strides(data, valid)));
    }
  }
  const Shape out_shape = resolve_shape(op, shape, input.shape(), !inplace);
  checks::check_extent(op, "shape", out_shape, false);
  if (valid_shape) check_valid_shape(op, *valid_shape, out_shape);
  const std::optional<Strides> strides = view_strides(input, out_shape);
  if (inplace && !strides)
    fail<ArgumentError>(op, ": input shape ", shape_to_string(input.shape()), " with strides ", shape_to_string(input.strides()),
                        " cannot be viewed as shape ", shape_to_string(out_shape),
                        "; inplace=True shares the input's memory, inplace=False copies");
  const Tensor out = view_or_copy(input, out_shape, strides);
  return valid_shape ? out.with_valid_shape(*valid_shape) : out;
}

Tensor unsqueeze(const Tensor& input, int64_t dim) {
  constexpr const char* op = "unsqueeze";
  check_input(op, "input", input);
  const int r = input.ndim();
  if (dim < -r - 1 || dim > r)
    fail<IndexError>(op, ": dim ", dim, " is out of range [", -r - 1, ", ", r, "] for a tensor of rank ", r);
  const int d = static_cast<int>(dim < 0 ? dim + r + 1 : dim);
  Shape shape = input.shape(), valid = input.valid_shape();
  Strides strides = input.strides();
  shape.insert(shape.begin() + d, 1);
  valid.insert(valid.begin() + d, 1);
  strides.insert(strides.begin() + d, d < r ? input.stride(d) * input.shape(d) : 1);
  return input.as_strided(shape, strides, 0).with_valid_shape(valid);
}

Tensor transpose(const Tensor& input, int64_t dim0, int64_t dim1) {
  constexpr const char* op = "transpose";
  check_input(op, "input", input);
  const int r = input.ndim();
  int a = checks::normalize_dim(op, dim0, r), b = checks::normalize_dim(op, dim1, r);
  if (a > b) std::swap(a, b);
  if (a == b || (input.shape(a) == 1 && input.shape(b) == 1)) {
    check_no_op_tile(op, input);
    return input;
  }
  if (checks::on_chip() && ((r == 4 && a == 0 && b != 2) || (r == 5 && (a != 3 || b != 4))))
    fail<ArgumentError>(op, ": dims (", a, ", ", b, ") of a ", r, "-D input are not supported on platform ",
                        current_platform().name, "; supported pairs: ",
                        r == 4 ? "(0, 2), (1, 2), (1, 3), (2, 3)" : "(3, 4)");
  Axes axes(r);
  for (int i = 0; i < r; ++i) axes[i] = i;
  std::swap(axes[a], axes[b]);
  if (const Shape* tile = tile_of_rank(op, r, "input")) check_permute_ub(op, input, *tile, axes, b == r - 1 ? a : -1);
  return permuted_copy(input, axes);
}

Tensor permute(const Tensor& input, const std::vector<int64_t>& dims) {
  constexpr const char* op = "permute";
  check_input(op, "input_tensor", input);
  const int r = input.ndim();
  if (static_cast<int>(dims.size()) != r)
    fail<ArgumentError>(op, ": dims ", shape_to_string(dims), " has ", dims.size(), " entries but input_tensor has rank ",
                        r, "; give a permutation of all ", r, " axes");
  Axes axes(r);
  std::vector<bool> seen(r, false);
  bool identity = true;
  for (int i = 0; i < r; ++i) {
    if (dims[i] < -r || dims[i] >= r)
      fail<IndexError>(op, ": dims ", shape_to_string(dims), " has the axis ", dims[i], ", out of range [", -r, ", ", r,
                       ") for a tensor of rank ", r);
    axes[i] = static_cast<int>(dims[i] < 0 ? dims[i] + r : dims[i]);
    if (seen[axes[i]])
      fail<ArgumentError>(op, ": dims ", shape_to_string(dims), " names axis ", axes[i], " twice; give each axis once");
    seen[axes[i]] = true;
    identity = identity && axes[i] == i;
  }
  if (identity) {  // a 1-D input included
    check_no_op_tile(op, input);
    return input;
  }
  if (const Shape* tile = tile_of_rank(op, r, "input")) check_permute_ub(op, input, *tile, axes, -1);
  return permuted_copy(input, axes);
}

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim) {
  constexpr const char* op = "concat";
  const OpLimits& limits = require_offered(op_def(op));
  if (tensors.empty()) fail<ArgumentError>(op, ": tensors is empty; give at least one tensor");
  if (checks::on_chip() && tensors.size() > kMaxConcatInputs)
    fail<ArgumentError>(op, ": ", tensors.size(), " tensors given; platform ", current_platform().name, " joins at most ",
                        kMaxConcatInputs);
  const Tensor& first = tensors[0];
  checks::check_dtype(op, "tensors[0]", first.dtype(), limits.dtypes);
  const int r = first.ndim();
  checks::check_rank(op, "tensors[0]", r, limits.min_rank, limits.max_rank);
  const int d = checks::normalize_dim(op, dim, r);
  int64_t joined = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    std::string spare;
    const char* name = list_item_name(i, spare);
    checks::check_same_dtype(op, name, t.dtype(), "tensors[0]", first.dtype());
    if (t.ndim() != r)
      fail<ArgumentError>(op, ": ", name, " rank ", t.ndim(), " (shape ", shape_to_string(t.shape()),
                          ") must equal tensors[0] rank ", r, " (shape ", shape_to_string(first.shape()), ")");
    checks::check_extent(op, name, t.shape(), true);
    for (int a = 0; a < r; ++a) {
      if (a != d && t.shape(a) != first.shape(a))
        fail<ArgumentError>(op, ": ", name, " shape ", shape_to_string(t.shape()), " differs from tensors[0] shape ",
                            shape_to_string(first.shape()), " at axis ", a, " (", t.shape(a), " != ", first.shape(a),
                            "); only dim ", d, " may differ");
      if (a == d && t.valid_shape()[a] != t.shape(a))
        fail<ArgumentError>(op, ": ", name, " has valid shape ", shape_to_string(t.valid_shape()), " inside shape ",
                            shape_to_string(t.shape()), "; along dim ", d, " the whole extent must be valid");
      if (a != d && t.valid_shape()[a] != first.valid_shape()[a])
        fail<ArgumentError>(op, ": ", name, " valid shape ", shape_to_string(t.valid_shape()),
                            " differs from tensors[0] valid shape ", shape_to_string(first.valid_shape()), " at axis ", a,
                            "; the valid shapes must agree off dim ", d);
    }
    if (t.shape(d) > std::numeric_limits<int64_t>::max() - joined)
      fail<ArgumentError>(op, ": the tensors' extents along dim ", d, " add up past int64");
    joined += t.shape(d);
  }
  Shape shape = first.shape(), valid = first.valid_shape();
  shape[d] = valid[d] = joined;
  checks::check_extent(op, "output", shape, false);
  const size_t item = first.itemsize();
  if (const Shape* tile = tile_of_rank(op, r, "output")) tiling::check_ub(op, *tile, {{"output tile", shape, item}});

  Tensor out = Tensor::empty(shape, first.dtype());
  if (valid != shape) {  // partly valid off dim: each valid part at its offset, zeros around
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      const Tensor v = t.valid_part();
      copy_into(out.as_strided(v.shape(), out.strides(), offset * out.stride(d)), v, op);
      offset += t.shape(d);
    }
    fill_outside(out, valid, Element{});
    return out.with_valid_shape(valid);
  }
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < d; ++a) outer *= shape[a];
  for (int a = d + 1; a < r; ++a) inner *= shape[a];
  std::vector<kernels::ConcatSource> sources;
  sources.reserve(tensors.size());
  std::vector<Tensor> copies;  // inputs whose blocks are not dense, made contiguous first
  for (const Tensor& t : tensors) {
    if (t.numel() == 0) continue;
    std::optional<int64_t> stride = block_stride(t, d);
    const Tensor* src = &t;
    if (!stride) {
      src = &copies.emplace_back(t.contiguous());
      stride = t.shape(d) * inner;
    }
    sources.push_back({static_cast<const std::byte*>(src->data()), *stride, t.shape(d) * inner});
  }
  kernels::concat(static_cast<std::byte*>(out.data()), outer, sources, item);
  return out;
}

Tensor expand_clone(const Tensor& input, const Shape& shape, const std::optional<Shape>& valid_shape) {
  constexpr const char* op = "expand_clone";
  check_input(op, "input", input);
  const int r = input.ndim();
  if (static_cast<int>(shape.size()) != r)
    fail<ArgumentError>(op, ": shape ", shape_to_string(shape), " has ", shape.size(), " entries but input has rank ", r,
                        "; expand_clone keeps the rank");
  for (int i = 0; i < r; ++i) {
    if (shape[i] < 0)
      fail<ArgumentError>(op, ": shape ", shape_to_string(shape), " has the negative dim ", shape[i], " at index ", i);
    if (shape[i] != input.shape(i) && input.shape(i) != 1)
      fail<ArgumentError>(op, ": shape ", shape_to_string(shape), " does not match input shape ",
                          shape_to_string(input.shape()), " at axis ", i, " (", shape[i], " != ", input.shape(i),
                          "); only size-1 axes expand");
  }
  checks::check_extent(op, "shape", shape, false);
  if (valid_shape) check_valid_shape(op, *valid_shape, shape);
  if (const Shape* tile = tile_of_rank(op, r, "output")) check_in_out_ub(op, *tile, input.shape(), shape, input.itemsize());
  // A fully valid input whose trailing axes expand: a fill of each row by its value.
  int trailing = r;
  while (trailing > 0 && shape[trailing - 1] != input.shape(trailing - 1)) --trailing;
  if (trailing < r && !input.partially_valid()) {
    const Shape lead(shape.begin(), shape.begin() + trailing);
    Strides lead_strides(input.strides().begin(), input.strides().begin() + trailing);
    for (int i = 0; i < trailing; ++i)
      if (shape[i] != input.shape(i)) lead_strides[i] = 0;
    const Tensor values = input.as_strided(lead, lead_strides, 0).contiguous();
    Tensor out = Tensor::empty(shape, input.dtype());
    kernels::fill_rows(static_cast<std::byte*>(out.data()), static_cast<const std::byte*>(values.data()),
                       shape_numel(lead), shape_numel(shape) / std::max<int64_t>(1, shape_numel(lead)), input.itemsize());
    return valid_shape ? out.with_valid_shape(*valid_shape) : out;
  }
  // The valid part, its expanded axes read with stride 0.
  const Tensor v = input.valid_part();
  Shape region(r);
  Strides strides(r);
  for (int i = 0; i < r; ++i) {
    const bool expanded = shape[i] != input.shape(i);
    region[i] = expanded && v.shape(i) > 0 ? shape[i] : v.shape(i);
    strides[i] = expanded ? 0 : v.stride(i);
  }
  return padded_copy(shape, v.as_strided(region, strides, 0)).with_valid_shape(valid_shape.value_or(shape));
}

Tensor clone(const Tensor& input) {
  check_input("clone", "input", input);
  return padded_copy(input.shape(), input.valid_part());
}

Tensor pad(const Tensor& x, const std::vector<int64_t>& padding, const std::string& mode, const Scalar& value) {
  constexpr const char* op = "pad";
  check_input(op, "x", x);
  check_mode(op, mode);
  const int r = x.ndim();
  const size_t count = r == 1 ? 2 : 4;
  if (padding.size() != count)
    fail<ArgumentError>(op, ": padding ", shape_to_string(padding), " has ", padding.size(), " values; a rank-", r,
                        " x takes ", r == 1 ? "2 (pad_left, pad_right)" : "4 (pad_left, pad_right, pad_top, pad_bottom)",
                        ": only the last two axes are padded");
  if (padding[0] != 0 || (r > 1 && padding[2] != 0))
    fail<ArgumentError>(op, ": padding ", shape_to_string(padding), " pads on the left or top; only right and bottom ",
                        "padding is supported (pad_left and pad_top must be 0)");
  const int64_t right = padding[1], bottom = r > 1 ? padding[3] : 0;
  if (right < 0 || bottom < 0)
    fail<ArgumentError>(op, ": padding ", shape_to_string(padding), " has a negative value; padding must be >= 0 (no cropping)");
  const Element e = encode_value(op, value, x.dtype());
  Shape shape = x.shape(), valid = x.valid_shape();
  const auto grow = [&](int axis, int64_t by) {
    if (by > std::numeric_limits<int64_t>::max() - shape[axis])
      fail<ArgumentError>(op, ": padding ", shape_to_string(padding), " makes axis ", axis, " larger than int64");
    shape[axis] += by;
    valid[axis] += by;
  };
  grow(r - 1, right);
  if (r > 1) grow(r - 2, bottom);
  checks::check_extent(op, "output", shape, false);
  if (const Shape* tile = tile_of_rank(op, r, "output")) check_in_out_ub(op, *tile, x.shape(), shape, x.itemsize());
  // x's valid part, zeros up to x's shape, value past it.
  Tensor out = Tensor::empty(shape, x.dtype());
  const Tensor v = x.valid_part();
  copy_into(leading(out, v.shape()), v, op);
  fill_outside(leading(out, x.shape()), v.shape(), Element{});
  fill_outside(out, x.shape(), e);
  return out.with_valid_shape(valid);
}

Tensor fillpad(const Tensor& x, const std::string& mode, const Scalar& value) {
  constexpr const char* op = "fillpad";
  check_input(op, "x", x);
  check_mode(op, mode);
  const Element e = encode_value(op, value, x.dtype());
  if (const Shape* tile = tile_of_rank(op, x.ndim(), "output")) check_in_out_ub(op, *tile, x.shape(), x.shape(), x.itemsize());
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const Tensor v = x.valid_part();
  copy_into(leading(out, v.shape()), v, op);
  fill_outside(out, v.shape(), e);
  return out;
}

Tensor tril(const Tensor& input, int64_t diagonal) { return triangle_op("tril", input, diagonal, false, false); }
Tensor triu(const Tensor& input, int64_t diagonal) { return triangle_op("triu", input, diagonal, true, false); }
Tensor tril_(const Tensor& input, int64_t diagonal) { return triangle_op("tril_", input, diagonal, false, true); }
Tensor triu_(const Tensor& input, int64_t diagonal) { return triangle_op("triu_", input, diagonal, true, true); }

Tensor pack(const Tensor& input) {
  constexpr const char* op = "pack";
  check_input(op, "input", input);
  const int64_t item = static_cast<int64_t>(input.itemsize()), bytes = checked_nbytes(input.shape(), input.itemsize(), op);
  checks::check_extent(op, "output", {bytes}, false);
  if (const Shape* tile = tile_of_rank(op, input.ndim(), "input")) {
    int64_t tile_bytes = item;
    for (int i = 0; i < input.ndim(); ++i) tile_bytes *= std::min((*tile)[i], input.shape(i));
    tiling::check_ub(op, *tile, {{"input tile", input.shape(), input.itemsize()}, {"output tile", {bytes}, 1, 1, {tile_bytes}}});
  }
  // The output's bytes seen as input's elements: its valid part, zeros past it.
  Tensor out = Tensor::empty({bytes}, D::UINT8);
  const Tensor elements = Tensor::from_blob(out.data(), input.shape(), contiguous_strides(input.shape()), input.dtype(),
                                            out.owner());
  const Tensor v = input.valid_part();
  copy_into(leading(elements, v.shape()), v, op);
  fill_outside(elements, v.shape(), Element{});
  return out;
}

Tensor unpack(const Tensor& input, DType dtype) {
  constexpr const char* op = "unpack";
  check_input(op, "input", input);
  const Platform& platform = current_platform();
  checks::check_dtype(op, "output", dtype, kUnpackTargets[static_cast<int>(platform.id)]);
  const int64_t width = static_cast<int64_t>(dtype_size(dtype)), n = input.shape(0), valid = input.valid_shape()[0];
  if (n % width != 0)
    fail<ArgumentError>(op, ": input has ", n, " bytes, not a multiple of ", width, " (the width of ", dtype_name(dtype), ")");
  if (valid % width != 0)
    fail<ArgumentError>(op, ": input valid shape [", valid, "] is not a multiple of ", width, " bytes (the width of ",
                        dtype_name(dtype), ")");
  if (const Shape* tile = tile_of_rank(op, 1, "input")) {
    if ((*tile)[0] % width != 0)
      fail<TileError>(op, ": tile shape ", shape_to_string(*tile), " is not a multiple of ", width, " bytes (the width of ",
                      dtype_name(dtype), ")");
    tiling::check_ub(op, *tile, {{"input tile", input.shape(), 1}, {"output tile", input.shape(), 1}});
  }
  Tensor out = Tensor::empty({n / width}, dtype);
  const Tensor bytes = Tensor::from_blob(out.data(), {n}, {1}, D::UINT8, out.owner());
  copy_into(leading(bytes, {valid}), input.valid_part(), op);
  fill_outside(bytes, {valid}, Element{});
  return out.with_valid_shape({valid / width});
}

// ---- the entries -------------------------------------------------------------------------------

namespace {

std::optional<Shape> optional_shape(const Args& a, size_t i) {
  if (a.is_none(i)) return std::nullopt;
  return a.ints(i);
}

// A view moves nothing; a copy reads and writes the output's bytes once each.
int64_t view_or_copy_bytes(const OpDef&, const Args& a, const Outputs& out) {
  return out[0].may_overlap(a.tensor(0)) ? 0 : 2 * tensor_bytes(out[0]);
}

const Param kMode{"mode", ParamKind::Str, "'constant'", false, "'constant'"};
// pad / fillpad take "-inf" too: upstream converts a non-int value with float().
const Param kValue{.name = "value", .kind = ParamKind::Scalar, .default_value = "0", .type_hint = "int | float | str",
                   .number_from_str = true};
const Param kDiagonal{"diagonal", ParamKind::Int, "0"};

template <Tensor (*Fn)(const Tensor&, int64_t)>
Outputs run_triangle(const OpDef&, const Args& a) {
  return {Fn(a.tensor(0), a.integer(1))};
}

// tril / triu and their in-place forms (Tensor methods only, as upstream's).
OpDef triangle_entry(const char* name, RunFn run, bool in_place, const PlatformRows& rows) {
  return OpDef{
      .name = name,
      .params = {{"input", in_place ? ParamKind::Memory : ParamKind::Tensor}, kDiagonal},
      .forms = in_place ? unsigned{kMethod} : kFunction | kMethod,
      .written = in_place ? "input" : nullptr,
      .doc_page = "docs/ops/tril.md",
      .tile_rule = "TileShape has the output's rank; UB: input and output tiles (int8: and two fp16 tiles)",
      .limits = rows,
      .run = run,
  };
}

}  // namespace

void families::add_layout(std::vector<OpDef>& table) {
  const DTypeSet all = DTypeSet::all();
  const PlatformRows anywhere = platform_rows(all, all, all, all, 0, 8);
  const DTypeSet transpose_a2{D::FP16, D::BF16, D::INT8, D::UINT8, D::INT16, D::UINT16, D::FP32, D::INT32, D::UINT32};
  const DTypeSet transpose_950{D::FP16,  D::BF16,  D::INT8,    D::UINT8,   D::INT16,   D::UINT16, D::FP32,
                               D::INT32, D::UINT32, D::FP8E4M3, D::FP8E5M2, D::FP8E8M0};
  const DTypeSet permute_a2{D::FP16,  D::BF16,   D::FP32,  D::INT8,  D::UINT8,  D::INT16,
                            D::UINT16, D::INT32, D::UINT32, D::INT64, D::UINT64, D::BOOL};
  const DTypeSet permute_950 = all.without({D::FP64});
  const DTypeSet concat_chips{D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32,
                              D::FP16, D::FP32,  D::BF16,  D::INT64,  D::UINT64};
  const DTypeSet pad_chips{D::FP32, D::FP16, D::BF16, D::INT8, D::INT16, D::INT32, D::UINT8, D::UINT16, D::UINT32};
  const DTypeSet expand_chips{D::BF16, D::FP32,  D::FP16,  D::INT8,   D::INT16,
                              D::INT32, D::UINT8, D::UINT16, D::UINT32, D::BOOL};
  const DTypeSet tri_a2{D::FP32, D::FP16, D::BF16, D::INT8, D::INT16, D::INT32};
  const DTypeSet tri_950{D::FP32, D::FP16, D::BF16, D::INT8, D::INT16, D::INT32, D::UINT16, D::UINT32};
  const DTypeSet pack_chips{D::BF16,  D::FP16,  D::FP32,  D::INT64, D::UINT64, D::INT32,
                            D::UINT32, D::INT16, D::UINT16, D::INT8, D::UINT8};

  table.push_back(OpDef{
      .name = "reshape",
      .params = {{.name = "input",
                  .kind = ParamKind::Memory,
                  .dynamic_refusal = "reshape() requires integer shape when using non-inplace reshape: a dim of a "
                                     "dynamic tensor has no size while the kernel is built; use inplace=True for "
                                     "dynamic shapes",
                  .dynamic_allowed = [](const Args& a) { return a.flag(3) && a.is_none(2); }},
                 {"shape", ParamKind::IntList},
                 {"valid_shape", ParamKind::IntList, "None"},
                 {"inplace", ParamKind::Bool, "False", true}},
      .forms = kFunction | kMethod,
      .tile_rule = "no tile rule (a view, or a copy where the strides allow none)",
      .limits = anywhere,
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {reshape(a.tensor(0), a.ints(1), optional_shape(a, 2), a.flag(3))};
      },
      .bytes = view_or_copy_bytes,
  });
  table.push_back(OpDef{
      .name = "unsqueeze",
      .params = {{"input", ParamKind::Memory}, {"dim", ParamKind::Dim}},
      .forms = kFunction | kMethod,
      .doc_page = "docs/ops/reshape.md",
      .tile_rule = "no tile rule (a view)",
      .limits = platform_rows(all, all, all, all, 0, 7, 0, 7),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {unsqueeze(a.tensor(0), a.integer(1))}; },
      .bytes = view_or_copy_bytes,
  });
  table.push_back(OpDef{
      .name = "transpose",
      .params = {{"input", ParamKind::Tensor}, {"dim0", ParamKind::Dim}, {"dim1", ParamKind::Dim}},
      .forms = kFunction | kMethod,
      .tile_rule = "TileShape has the input's rank; UB: input tile, output tile and, when the last axis moves, a scratch tile",
      .limits = platform_rows(all, transpose_950, transpose_a2, transpose_a2, 1, 5, 1, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {transpose(a.tensor(0), a.integer(1), a.integer(2))}; },
      .bytes = view_or_copy_bytes,
  });
  table.push_back(OpDef{
      .name = "permute",
      .params = {{"input_tensor", ParamKind::Tensor}, {"dims", ParamKind::IntList}},
      .forms = kFunction | kMethod,
      .doc_page = "docs/ops/transpose.md",
      .tile_rule = "TileShape has the input's rank; UB: input and output tiles",
      .limits = platform_rows(all, permute_950, permute_a2, permute_a2, 1, 5, 1, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {permute(a.tensor(0), a.ints(1))}; },
      .bytes = view_or_copy_bytes,
  });
  table.push_back(OpDef{
      .name = "concat",
      .params = {{"tensors", ParamKind::TensorList}, {"dim", ParamKind::Dim, "0"}},
      .tile_rule = "TileShape has the output's rank; UB: one output tile",
      .limits = platform_rows(all, concat_chips, concat_chips, concat_chips, 1, 8, 1, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {concat(a.tensors(0), a.integer(1))}; },
  });
  table.push_back(OpDef{
      .name = "expand_clone",
      .params = {{"input", ParamKind::Tensor},
                 {"shape", ParamKind::IntList},
                 {"valid_shape", ParamKind::IntList, "None", true}},
      .forms = kFunction | kMethod,
      .tile_rule = "TileShape has the output's rank; UB: input and output tiles",
      .limits = platform_rows(all, expand_chips, expand_chips, expand_chips, 1, 4, 0, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {expand_clone(a.tensor(0), a.ints(1), optional_shape(a, 2))};
      },
  });
  table.push_back(OpDef{
      .name = "clone",
      .params = {{"input", ParamKind::Tensor}},
      .forms = kFunction | kMethod,
      .doc_page = "docs/ops/expand_clone.md",
      .tile_rule = "no tile rule (a copy)",
      .limits = anywhere,
      .run = [](const OpDef&, const Args& a) -> Outputs { return {clone(a.tensor(0))}; },
  });
  table.push_back(OpDef{
      .name = "pad",
      .params = {{"x", ParamKind::Tensor}, {"padding", ParamKind::IntList}, kMode, kValue},
      .forms = kFunction | kMethod,
      .tile_rule = "TileShape has the output's rank; UB: input and output tiles",
      .limits = platform_rows(all, pad_chips, pad_chips, pad_chips, 1, 4, 1, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {pad(a.tensor(0), a.ints(1), a.str(2), a.scalar(3))};
      },
  });
  table.push_back(OpDef{
      .name = "fillpad",
      .params = {{"x", ParamKind::Tensor}, kMode, kValue},
      .forms = kFunction | kMethod,
      .doc_page = "docs/ops/pad.md",
      .tile_rule = "TileShape has the output's rank; UB: input and output tiles",
      .limits = platform_rows(all, pad_chips, pad_chips, pad_chips, 1, 2, 1, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {fillpad(a.tensor(0), a.str(1), a.scalar(2))}; },
  });
  const DTypeSet tri_cpu = all.without({D::FP8E8M0});  // a scale format without a zero
  const PlatformRows tri_rows = platform_rows(tri_cpu, tri_950, tri_a2, tri_a2, 2, 5, 2, 8);
  table.push_back(triangle_entry("tril", run_triangle<tril>, false, tri_rows));
  table.push_back(triangle_entry("triu", run_triangle<triu>, false, tri_rows));
  table.push_back(triangle_entry("tril_", run_triangle<tril_>, true, tri_rows));
  table.push_back(triangle_entry("triu_", run_triangle<triu_>, true, tri_rows));
  table.push_back(OpDef{
      .name = "pack",
      .params = {{"input", ParamKind::Tensor}},
      .tile_rule = "TileShape has the input's rank; UB: input and output tiles",
      .limits = platform_rows(all, pack_chips, pack_chips, pack_chips, 1, 4, 0, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {pack(a.tensor(0))}; },
  });
  table.push_back(OpDef{
      .name = "unpack",
      .params = {{"input", ParamKind::Tensor}, {"dtype", ParamKind::DType}},
      .doc_page = "docs/ops/pack.md",
      .tile_rule = "TileShape has rank 1 and whole elements of dtype; UB: input and output tiles",
      .limits = platform_rows({D::UINT8}, {D::UINT8}, {D::UINT8}, {D::UINT8}, 1, 1, 1, 1),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {unpack(a.tensor(0), a.dtype(1))}; },
  });
}

}  // namespace pto
