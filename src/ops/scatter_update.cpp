// scatter_update (docs/ops/scatter_update.md): the paged KV-cache write. Checks and tile rules,
// then the index values (a negative slot skips its row, one past the last slot is an error),
// then the kernel. Nothing is written before every check has passed.
#include <algorithm>

#include "kernels/scatter_update.h"
#include "ops/checks.h"
#include "ops/families.h"
#include "ops/index_bounds.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

constexpr const char* kOp = "scatter_update";

void check_tile(const Tensor& input, const Tensor& index, const Tensor& src) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const int r = input.ndim();
  const int64_t s = index.shape(1), d = src.shape(r - 1);
  tiling::check_rank(kOp, tile, r, "input");
  const size_t ielem = dtype_size(index.dtype());
  if (r == 2) {
    const int64_t tile_bs = tile[0];
    if (!((tile_bs <= s && s % tile_bs == 0) || (tile_bs > s && tile_bs % s == 0)))
      fail<TileError>(kOp, ": tile shape ", shape_to_string(tile), " has tile[0] = ", tile_bs,
                      " which neither divides nor is a multiple of index.shape[1] = ", s,
                      "; a tile covers whole or equal parts of an index row");
    if (tile[1] != d)
      fail<TileError>(kOp, ": tile shape ", shape_to_string(tile), " has tile[1] = ", tile[1],
                      " but src.shape[1] is ", d, "; the last axis is never split, so tile[1] must equal it");
    const Shape index_tile{(tile_bs + s - 1) / s, std::min(tile_bs, s)};
    tiling::check_ub(kOp, tile, {{"src tile", src.shape(), src.itemsize()},
                                 {"index tile", index.shape(), ielem, 1, index_tile}});
  } else {
    if (tile[3] < d)
      fail<TileError>(kOp, ": tile shape ", shape_to_string(tile), " has tile[3] = ", tile[3],
                      " below src.shape[3] = ", d, "; the last axis is never split");
    tiling::check_ub(kOp, tile, {{"src tile", src.shape(), src.itemsize()},
                                 {"index tile", index.shape(), ielem, 1, {tile[0], tile[1]}}});
  }
}

// Everything docs/ops/scatter_update.md asks, touching no data.
void validate_scatter_update(const Tensor& input, int64_t dim, const Tensor& index, const Tensor& src) {
  const OpLimits& limits = require_offered(op_def(kOp));
  if (dim != -2)
    fail<ArgumentError>(kOp, ": dim ", dim, " is not supported; the paged cache is written along dim -2 only");
  const int r = input.ndim();
  checks::check_rank(kOp, "input", r, limits.min_rank, limits.max_rank);
  if (r != 2 && r != 4)
    fail<ArgumentError>(kOp, ": input rank ", r, " (shape ", shape_to_string(input.shape()),
                        ") must be 2 ([rows, d]) or 4 ([blocks, block_size, n, d])");
  checks::check_dtype(kOp, "input", input.dtype(), limits.dtypes);
  checks::check_same_dtype(kOp, "src", src.dtype(), "input", input.dtype());
  if (src.ndim() != r)
    fail<ArgumentError>(kOp, ": src rank ", src.ndim(), " (shape ", shape_to_string(src.shape()),
                        ") must equal input rank ", r, " (shape ", shape_to_string(input.shape()), ")");
  const DType idt = index.dtype();
  if (idt != DType::INT64 && idt != DType::INT32 && idt != DType::INT16)
    fail<DTypeError>(kOp, ": index dtype ", dtype_name(idt),
                     " is not an index dtype; allowed: DT_INT64, DT_INT32, DT_INT16");
  if (index.ndim() != 2 || index.shape(0) <= 0 || index.shape(1) <= 0)
    fail<ArgumentError>(kOp, ": index shape ", shape_to_string(index.shape()),
                        " must be [b, s] with b > 0 and s > 0");
  checks::check_extent(kOp, "input", input.shape(), true);
  checks::check_extent(kOp, "index", index.shape(), true);
  checks::check_extent(kOp, "src", src.shape(), true);
  for (int a = r == 2 ? 1 : 2; a < r; ++a)
    if (src.shape(a) != input.shape(a))
      fail<ArgumentError>(kOp, ": src shape ", shape_to_string(src.shape()), " differs from input shape ",
                          shape_to_string(input.shape()), " at axis ", a, " (", src.shape(a), " != ", input.shape(a),
                          "); a src row must be a whole cache row");
  const int64_t b = index.shape(0), s = index.shape(1);
  if (r == 2 && src.shape(0) < b * s)
    fail<ArgumentError>(kOp, ": src shape ", shape_to_string(src.shape()), " has ", src.shape(0),
                        " rows but index shape ", shape_to_string(index.shape()), " writes b*s = ", b * s);
  if (r == 4 && (src.shape(0) < b || src.shape(1) < s))
    fail<ArgumentError>(kOp, ": src shape ", shape_to_string(src.shape()), " is smaller than index shape ",
                        shape_to_string(index.shape()), " on its first two axes");
  checks::check_writable_in_place(kOp, input, "write a copy and assign it back");
  check_tile(input, index, src);
}

// index as a contiguous int32 / int64 tensor that shares no memory with input (int16 widened).
Tensor readable_index(const Tensor& index, const Tensor& input) {
  if (index.dtype() == DType::INT16) {
    const Tensor narrow = index.contiguous();
    Tensor wide = Tensor::empty(index.shape(), DType::INT32);
    std::copy(narrow.data_as<int16_t>(), narrow.data_as<int16_t>() + narrow.numel(), wide.data_as<int32_t>());
    return wide;
  }
  return checks::unaliased(index.contiguous(), input);
}

}  // namespace

Tensor scatter_update(const Tensor& input, int64_t dim, const Tensor& index_view, const Tensor& src_view) {
  // index and src are read in their valid parts only (docs/kernel_model.md); input is written whole.
  const Tensor index = index_view.valid_part(), src = src_view.valid_part();
  validate_scatter_update(input, dim, index, src);
  const Tensor idx = readable_index(index, input);
  const int r = input.ndim();
  const int64_t slots = r == 2 ? input.shape(0) : input.shape(0) * input.shape(1);
  index_bounds::check(
      kOp, idx, slots,
      [&] {
        return "for the " + std::to_string(slots) + " cache rows of input shape " + shape_to_string(input.shape()) +
               " (a negative value skips its row)";
      },
      nullptr, index_bounds::Negatives::Skip);
  // Every check has passed: from here on the call succeeds.
  const int64_t b = index.shape(0), s = index.shape(1);
  Shape used = src.shape();  // the rows src contributes
  if (r == 2) used[0] = b * s;
  else used[0] = b, used[1] = s;
  kernels::scatter_update({input, idx, checks::unaliased(src.as_strided(used, src.strides(), 0), input)});
  return input;
}


void families::add_scatter_update(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chips{D::INT8, D::INT16, D::INT32, D::FP16, D::FP32, D::BF16};
  table.push_back(OpDef{
      .name = kOp,
      .params = {{"input", ParamKind::Memory}, {"dim", ParamKind::Int}, {"index", ParamKind::Tensor},
                 {"src", ParamKind::Tensor}},
      .forms = kFunction | kMethod | kTorch,
      .written = "input",
      .doc_page = "docs/ops/scatter_update.md",
      .tile_rule = "TileShape has the input's rank, the last axis never split; UB: src and index tiles",
      .limits = platform_rows(DTypeSet::all(), chips, chips, chips, 2, 4, 2, 4),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {scatter_update(a.tensor(0), a.integer(1), a.tensor(2), a.tensor(3))};
      },
      // index + each written row read from src and written into the cache
      .bytes = [](const OpDef&, const Args& a, const Outputs&) -> int64_t {
        const Tensor& cache = a.tensor(0);
        if (cache.ndim() != 2 && cache.ndim() != 4) return 0;
        const int64_t row = cache.ndim() == 2 ? cache.shape(1) : cache.shape(2) * cache.shape(3);
        return tensor_bytes(a.tensor(2)) + 2 * a.tensor(2).numel() * row * static_cast<int64_t>(cache.itemsize());
      },
  });
}

}  // namespace pto
