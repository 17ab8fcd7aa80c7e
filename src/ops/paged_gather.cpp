// experimental.gather_in_ub and experimental.gather_in_l1 (docs/ops/paged_gather.md): rows of a
// paged KV cache picked by logical token ids. Each id goes through the page table (block_table)
// to its physical row; then the rows are copied as index_select copies rows.
#include <algorithm>
#include <string>

#include "kernels/index_select.h"
#include "ops/checks.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;
constexpr const char* kGatherInUb = "gather_in_ub";
constexpr const char* kGatherInL1 = "gather_in_l1";

// The checks both ops share (docs/ops/paged_gather.md#arguments): 2-D non-empty operands, the
// token ids as one row [1, k], the page table as one row, a positive block size.
void check_paged_operands(const char* op, const char* source_name, const Tensor& source, const Tensor& indices,
                          DTypeSet index_dtypes, const Tensor& block_table, int64_t block_size) {
  const OpLimits& limits = require_offered(op_def(op));
  checks::check_dtype(op, source_name, source.dtype(), limits.dtypes);
  checks::check_dtype(op, "indices", indices.dtype(), checks::on_chip() ? index_dtypes : DTypeSet{D::INT32, D::INT64});
  checks::check_dtype(op, "block_table", block_table.dtype(), checks::on_chip() ? DTypeSet{D::INT32} : DTypeSet{D::INT32, D::INT64});
  for (const auto& [name, t] : {std::pair<const char*, const Tensor&>{source_name, source}, {"indices", indices},
                                {"block_table", block_table}}) {
    checks::check_rank(op, name, t.ndim(), 2, 2);
    checks::check_extent(op, name, t.shape(), true);
    if (t.numel() == 0) fail<ArgumentError>(op, ": ", name, " shape ", shape_to_string(t.shape()), " is empty; ", op, " needs data");
  }
  for (const auto& [name, t] : {std::pair<const char*, const Tensor&>{"indices", indices}, {"block_table", block_table}})
    if (t.shape(0) != 1)
      fail<ArgumentError>(op, ": ", name, " shape ", shape_to_string(t.shape()), " must be [1, n] (one row)");
  if (block_size <= 0) fail<ArgumentError>(op, ": block_size ", block_size, " must be > 0");
}

// Values of a contiguous int32 / int64 tensor as int64.
int64_t value_at(const Tensor& t, int64_t i) {
  return t.dtype() == D::INT32 ? t.data_as<const int32_t>()[i] : t.data_as<const int64_t>()[i];
}

// The physical row of each logical token id: block_table[0, id / block_size] * block_size +
// id % block_size. An id outside the page table, or a page that points past the cache, is an
// IndexError naming it (the device would read another sequence's rows).
Tensor physical_rows(const char* op, const Tensor& indices_view, const Tensor& block_table_view, int64_t block_size,
                     int64_t rows) {
  const Tensor ids = indices_view.contiguous(), pages = block_table_view.contiguous();
  const int64_t k = ids.numel(), n_pages = pages.numel();
  Tensor out = Tensor::empty({k}, D::INT64);
  int64_t* row = out.data_as<int64_t>();
  for (int64_t i = 0; i < k; ++i) {
    const int64_t id = value_at(ids, i);
    if (id < 0 || id / block_size >= n_pages)
      fail<IndexError>(op, ": indices[0, ", i, "] = ", id, " is outside the page table: block_table holds ", n_pages,
                       " pages of block_size ", block_size, ", so ids must be in [0, ", n_pages * block_size, ")");
    const int64_t page = value_at(pages, id / block_size), within = id % block_size;
    // page * block_size + within < rows, written so that no product can overflow
    if (page < 0 || within >= rows || page > (rows - 1 - within) / block_size)
      fail<IndexError>(op, ": indices[0, ", i, "] = ", id, " is in page block_table[0, ", id / block_size, "] = ", page,
                       " whose rows start at ", page, " * ", block_size, "; the cache has ", rows, " rows");
    row[i] = page * block_size + within;
  }
  return out;
}

Tensor gather_rows(const Tensor& source, const Tensor& rows) {
  Tensor out = Tensor::empty({rows.numel(), source.shape(1)}, source.dtype());
  kernels::index_select(source, 0, rows, out);
  return out;
}

}  // namespace

Tensor gather_in_ub(const Tensor& param_view, const Tensor& indices_view, const Tensor& block_table_view,
                    int64_t block_size, int64_t axis) {
  const Tensor param = param_view.valid_part(), indices = indices_view.valid_part(),
               block_table = block_table_view.valid_part();
  check_paged_operands(kGatherInUb, "param", param, indices, {D::INT32}, block_table, block_size);
  if (axis != -2) fail<ArgumentError>(kGatherInUb, ": axis ", axis, " is not supported; only -2 (the token axis) is");
  const Shape out_shape{indices.shape(1), param.shape(1)};
  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(kGatherInUb, tile, 2, "output");
    tiling::check_ub(kGatherInUb, tile, {{"output tile", out_shape, param.itemsize()}});
  }
  return gather_rows(param, physical_rows(kGatherInUb, indices, block_table, block_size, param.shape(0)));
}

Tensor gather_in_l1(const Tensor& src_view, const Tensor& indices_view, const Tensor& block_table_view,
                    int64_t block_size, int64_t size, bool is_b_matrix, bool is_trans) {
  const Tensor src = src_view.valid_part(), indices = indices_view.valid_part(),
               block_table = block_table_view.valid_part();
  check_paged_operands(kGatherInL1, "src", src, indices, {D::INT32, D::INT64}, block_table, block_size);
  if (size <= 0 || size > src.shape(1))
    fail<ArgumentError>(kGatherInL1, ": size ", size, " must be in [1, ", src.shape(1), "] (src's columns)");
  // The L1 tile (docs/ops/paged_gather.md#tiles): [mL1, kAL1] of the cube tile for a left
  // operand, [kBL1, nL1] for a right one, swapped when the result is stored transposed.
  const CubeTile& cube = get_cube_tile_shapes();
  const Platform& platform = current_platform();
  if (cube.m.empty() && platform.l1_bytes > 0)
    fail<TileError>(kGatherInL1, ": no cube tile shape is set; call set_cube_tile_shapes(m, k, n) first (platform ",
                    platform.name, " needs one)");
  if (!cube.m.empty() && platform.l1_bytes > 0) {
    int64_t first = is_b_matrix ? cube.k[2] : cube.m[1], second = is_b_matrix ? cube.n[1] : cube.k[1];
    if (is_trans) std::swap(first, second);
    first = std::min(first, indices.shape(1));
    second = std::min(second, size);
    const int64_t item = static_cast<int64_t>(src.itemsize()), fractal = checks::cube_fractal(item);
    const int64_t padded_first = checks::round_up(first, fractal), padded_second = checks::round_up(second, fractal);
    const int64_t bytes = padded_first * padded_second * item;
    if (bytes > platform.l1_bytes)
      fail<TileError>(kGatherInL1, ": the L1 tile [", first, ", ", second, "] needs ", bytes, " bytes of L1 (", padded_first,
                      " * ", padded_second, " * ", item, " bytes) but platform ", platform.name, " has ",
                      platform.l1_bytes);
  }
  const Tensor columns = src.as_strided({src.shape(0), size}, src.strides(), 0);
  return gather_rows(columns, physical_rows(kGatherInL1, indices, block_table, block_size, src.shape(0)));
}

void families::add_paged_gather(std::vector<OpDef>& table) {
  const DTypeSet ub{D::FP32, D::FP16}, l1{D::FP32, D::FP16, D::BF16, D::INT8};
  const std::vector<Param> paged = {{"indices", ParamKind::Tensor},
                                    {"block_table", ParamKind::Tensor},
                                    {"block_size", ParamKind::Int}};
  OpDef in_ub{
      .name = kGatherInUb,
      .params = {{"param", ParamKind::Tensor}},
      .doc_page = "docs/ops/paged_gather.md",
      .submodule = "experimental",
      .tile_rule = "TileShape [k1, h1] over the output [k, hidden]; UB: one output tile",
      .limits = platform_rows(DTypeSet::all(), ub, ub, ub, 2, 2, 2, 2),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {gather_in_ub(a.tensor(0), a.tensor(1), a.tensor(2), a.integer(3), a.integer(4))};
      },
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        return {{{a.tensor(1).shape().back(), a.tensor(0).shape().back()}, a.tensor(0).dtype()}};
      },
      .bytes = [](const OpDef&, const Args& a, const Outputs& out) { return 2 * tensor_bytes(out[0]) + tensor_bytes(a.tensor(1)); },
  };
  in_ub.params.insert(in_ub.params.end(), paged.begin(), paged.end());
  in_ub.params.push_back({"axis", ParamKind::Int});
  OpDef in_l1 = in_ub;
  in_l1.name = kGatherInL1;
  in_l1.params = {{"src", ParamKind::Tensor}};
  in_l1.params.insert(in_l1.params.end(), paged.begin(), paged.end());
  in_l1.params.insert(in_l1.params.end(), {{"size", ParamKind::Int}, {"is_b_matrix", ParamKind::Bool}, {"is_trans", ParamKind::Bool}});
  in_l1.tile_rule = "the L1 tile of the cube tile ([mL1, kAL1], or [kBL1, nL1] for a right operand; swapped when transposed)";
  in_l1.limits = platform_rows(DTypeSet::all(), l1, l1, l1, 2, 2, 2, 2);
  in_l1.run = [](const OpDef&, const Args& a) -> Outputs {
    return {gather_in_l1(a.tensor(0), a.tensor(1), a.tensor(2), a.integer(3), a.integer(4), a.flag(5), a.flag(6))};
  };
  in_l1.infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
    return {{{a.tensor(1).shape().back(), a.integer(4)}, a.tensor(0).dtype()}};
  };
  table.push_back(std::move(in_ub));
  table.push_back(std::move(in_l1));
}

}  // namespace pto
