// index_put_ (docs/ops/index_put_.md): input[indices[0][j], ..., indices[k-1][j], ...] = values[j, ...],
// or += with accumulate, for j in index order. Every check first; then the writes.
#include <string>
#include <vector>

#include "kernels/arithmetic.h"
#include "kernels/cast.h"
#include "ops/checks.h"
#include "ops/elementwise.h"
#include "ops/families.h"
#include "ops/index_bounds.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;

constexpr DTypeSet kIndexDtypes{D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32, D::INT64, D::UINT64};
// What the chips add with accumulate=True (the cpu adds every dtype it offers).
constexpr DTypeSet kAccumulating{D::BF16, D::FP16, D::FP32, D::INT8, D::INT16, D::INT32};

// The tile has at most values' rank and is completed with values' trailing dims; the index
// tiles cover its first dim.
void check_index_put_tile(const char* op, const std::vector<Tensor>& indices, const Tensor& values) {
  Shape tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  if (static_cast<int>(tile.size()) > values.ndim())
    fail<TileError>(op, ": tile shape ", shape_to_string(tile), " has more dims than values shape ",
                    shape_to_string(values.shape()), "; its rank must be at most ", values.ndim());
  for (int d = static_cast<int>(tile.size()); d < values.ndim(); ++d) tile.push_back(values.shape(d));
  std::vector<tiling::Buffer> buffers{{"values tile", values.shape(), values.itemsize()}};
  for (const Tensor& index : indices)
    buffers.push_back({"indices tile", index.shape(), index.itemsize(), 1, {tile[0]}});
  tiling::check_ub(op, tile, buffers);
}

Outputs run_index_put(const OpDef& op, const Args& a) {
  const char* name = op.name.c_str();
  const OpLimits& limits = require_offered(op);
  const Tensor& input = a.tensor(0);
  const Tensor values = a.tensor(2).valid_part();
  const bool accumulate = a.flag(3);
  checks::check_dtype(name, "input", input.dtype(), limits.dtypes);
  checks::check_rank(name, "input", input.ndim(), limits.min_rank, limits.max_rank);
  checks::check_extent(name, "input", input.shape(), true);
  checks::check_same_dtype(name, "values", values.dtype(), "input", input.dtype());
  if (accumulate && checks::on_chip())
    checks::check_dtype(name, "input (accumulate=True)", input.dtype(), kAccumulating);

  std::vector<Tensor> indices;
  for (const Tensor& index : a.tensors(1)) indices.push_back(index.valid_part());
  const int k = static_cast<int>(indices.size());
  if (k == 0 || k > input.ndim())
    fail<ArgumentError>(name, ": indices holds ", k, " tensors; it needs 1 to ", input.ndim(),
                        " (one per leading dim of input shape ", shape_to_string(input.shape()), ")");
  const int64_t count = indices[0].numel();
  for (int i = 0; i < k; ++i) {
    const std::string param = "indices[" + std::to_string(i) + "]";
    checks::check_dtype(name, param.c_str(), indices[i].dtype(), kIndexDtypes);
    if (indices[i].ndim() != 1 || indices[i].numel() != count)
      fail<ArgumentError>(name, ": ", param, " shape ", shape_to_string(indices[i].shape()),
                          " must be 1-D with the length of indices[0] (", count, "); indices do not broadcast");
  }
  Shape want{count};
  for (int d = k; d < input.ndim(); ++d) want.push_back(input.shape(d));
  if (values.shape() != want)
    fail<ArgumentError>(name, ": values shape ", shape_to_string(values.shape()), " must be ", shape_to_string(want),
                        ": the indices' length, then the dims of input shape ", shape_to_string(input.shape()),
                        " after the ", k, " indexed ones (values do not broadcast)");
  checks::check_writable_in_place(name, input, "call it on a copy of input");
  check_index_put_tile(name, indices, values);

  // The index values as int64 (a copy), each against its dim; values are read as if before any
  // write (a copy where they share memory with input).
  std::vector<const int64_t*> rows(k);
  for (int i = 0; i < k; ++i) {
    Tensor wide = Tensor::empty(indices[i].shape(), D::INT64);
    kernels::cast::convert(indices[i], wide, {.saturate = true});  // exact, and a new tensor
    indices[i] = wide;
    index_bounds::check_for_dim(name, indices[i], input, i);
    rows[i] = indices[i].data_as<int64_t>();
  }
  const Tensor source = checks::unaliased(values, input);

  // Every check has passed: one slab of input per index position, in index order (a repeated
  // position keeps the last value, or adds every one).
  const Shape slab(want.begin() + 1, want.end());
  const Strides slab_strides(input.strides().begin() + k, input.strides().end());
  const DType compute = elementwise::compute_dtype(input.dtype());
  for (int64_t j = 0; j < count; ++j) {
    int64_t offset = 0;
    for (int i = 0; i < k; ++i) offset += rows[i][j] * input.stride(i);
    const Tensor target = input.as_strided(slab, slab_strides, offset);
    const Tensor update = source.as_strided(slab, Strides(source.strides().begin() + 1, source.strides().end()),
                                            j * source.stride(0));
    if (accumulate) elementwise::run<kernels::arith::Add, 2>(target, {&target, &update}, compute);
    else copy_into(target, update, name);
  }
  return {};
}

// indices and values read once; each slab of input read (accumulate) and written.
int64_t index_put_bytes(const OpDef&, const Args& a, const Outputs&) {
  int64_t bytes = 0;
  for (const Tensor& index : a.tensors(1)) bytes += tensor_bytes(index.valid_part());
  const int64_t slabs = tensor_bytes(a.tensor(2).valid_part());
  return bytes + (a.flag(3) ? 3 : 2) * slabs;
}

}  // namespace

void families::add_index_put(std::vector<OpDef>& table) {
  const DTypeSet chips{D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32,
                       D::INT64, D::UINT64, D::BF16, D::FP16, D::FP32};
  const DTypeSet cpu = DTypeSet::all().without({D::BOOL, D::FP8E4M3, D::FP8E5M2, D::FP8E8M0});
  table.push_back(OpDef{
      .name = "index_put_",
      .params = {{"input", ParamKind::Memory},
                 {"indices", ParamKind::TensorList, nullptr, false, nullptr, "tuple[Tensor, ...] | list[Tensor]"},
                 {"values", ParamKind::Tensor},
                 {"accumulate", ParamKind::Bool, "False"}},
      .num_outputs = 0,
      .written = "input",
      .tile_rule = "TileShape has at most values' rank (completed with values' trailing dims); UB: the values tile "
                   "and one index tile per indexed dim",
      .limits = platform_rows(cpu, chips, chips, chips, 1, 4, 1, 8),
      .run = run_index_put,
      .bytes = index_put_bytes,
  });
}

}  // namespace pto
