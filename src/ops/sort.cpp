// topk and argsort (docs/ops/topk.md, argsort.md): checks, the algorithm's dtype rows and the tile
// rules, then the kernels of kernels/sort.h.
#include "kernels/sort.h"

#include "ops/checks.h"
#include "ops/composite.h"
#include "ops/elementwise.h"
#include "ptocpu/error.h"
#include "ptocpu/modes.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;

// What the device's sorts take: 32-bit and narrower numbers (every one of them on the cpu).
constexpr DTypeSet kSortable{D::BF16, D::FP16, D::FP32, D::INT32, D::UINT32, D::INT16, D::UINT16, D::INT8, D::UINT8};
constexpr DTypeSet kFp32{D::FP32};
constexpr DTypeSet kFp32Fp16{D::FP32, D::FP16};

// topk's rows per algorithm: MERGE_SORT takes fp32 on every chip, RADIX_SELECT exists on the 950.
const PlatformRows& algorithm_rows(TopKAlgo algo) {
  static const PlatformRows merge = platform_rows(kSortable, kFp32, kFp32, kFp32);
  static const PlatformRows radix = platform_rows(kSortable, kSortable, {}, {});
  return algo == TopKAlgo::MERGE_SORT ? merge : radix;
}

// ---- topk -----------------------------------------------------------------------------------------

struct TopkPlan {
  Tensor x;
  int dim;
  int64_t k;
  bool largest;
  Shape out_shape;
};

void check_topk_tile(const char* name, const Tensor& x, int64_t k, TopKAlgo algo) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const int r = x.ndim();
  tiling::check_rank(name, tile, r, "input");
  const int64_t last = tile.back();
  if (k > last)
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a last dim of ", last, " < k ", k,
                    "; the k axis is not split");
  const bool chip = current_platform().ub_bytes != 0;
  if (algo == TopKAlgo::MERGE_SORT) {
    if (chip && last * 4 >= 22 * 1024)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a last dim of ", last,
                      "; MERGE_SORT needs TileShape[-1] * 4 < 22528 bytes (22 KB)");
    return;
  }
  if (last < x.shape(r - 1))
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a last dim of ", last, " < input's last dim ",
                    x.shape(r - 1), "; RADIX_SELECT does not split the last axis");
  const int64_t rows = r >= 2 ? tile[r - 2] : 1, aligned = checks::round_up(last, 128);
  Shape out_extent = x.shape();
  out_extent.back() = k;
  tiling::check_ub(name, tile,
                   {{"input tile", x.shape(), x.itemsize()},
                    {"values tile", out_extent, x.itemsize()},
                    {"indices tile", out_extent, 4},
                    {"radix workspace", {rows, aligned}, 26, 1, {rows, aligned}}});
}

TopkPlan plan_topk(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const char* name = op.name.c_str();
  const int64_t algo_value = a.integer(4);
  if (algo_value != 0 && algo_value != 1)
    fail<ArgumentError>(name, ": algo ", algo_value, " is not supported; allowed: TopKAlgo.MERGE_SORT (0), TopKAlgo.RADIX_SELECT (1)");
  const TopKAlgo algo = static_cast<TopKAlgo>(algo_value);
  const OpLimits& rows = algorithm_rows(algo)[static_cast<int>(current_platform().id)];
  if (!rows.offered)
    fail<ArgumentError>(name, ": algo TopKAlgo.RADIX_SELECT is not supported on platform ", current_platform().name,
                        "; it runs on ascend950 (use TopKAlgo.MERGE_SORT)");
  TopkPlan p;
  p.x = elementwise::operand(op, limits, a.tensor(0), "input", rows.dtypes);
  const int r = p.x.ndim();
  p.dim = a.is_none(2) ? r - 1 : checks::normalize_dim(name, a.integer(2), r);
  if (p.dim != r - 1)
    fail<ArgumentError>(name, ": dim ", a.integer(2), " is not supported for input of rank ", r,
                        "; topk works along the last axis only (-1 or ", r - 1, ")");
  p.k = a.integer(1);
  const int64_t n = p.x.shape(r - 1);
  if (p.k < 1 || p.k > n)
    fail<ArgumentError>(name, ": k ", p.k, " is out of range [1, ", n, "] for input shape ",
                        shape_to_string(p.x.shape()));
  p.largest = a.flag(3);
  check_topk_tile(name, p.x, p.k, algo);
  p.out_shape = p.x.shape();
  p.out_shape.back() = p.k;
  return p;
}

Outputs run_topk(const OpDef& op, const Args& a) {
  const TopkPlan p = plan_topk(op, a);
  Tensor values = Tensor::empty(p.out_shape, p.x.dtype()), indices = Tensor::empty(p.out_shape, D::INT32);
  kernels::sort::topk(p.x, p.dim, p.k, p.largest, values, indices);
  return {values, indices};
}

// ---- argsort --------------------------------------------------------------------------------------

struct ArgsortPlan {
  Tensor x;
  int dim;
};

void check_argsort_tile(const char* name, const Tensor& x, int dim) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  tiling::check_rank(name, tile, x.ndim(), "input");
  const int64_t along = tile[dim];
  if (along % 32 != 0)
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has ", along, " along dim ", dim,
                    "; the sort axis' tile dim must be a multiple of 32");
  if (current_platform().ub_bytes == 0) return;
  // A large sort works in global memory, in fewer than 128 tiles along the axis.
  int64_t others = 1;
  for (size_t d = 0; d < tile.size(); ++d)
    if (static_cast<int>(d) != dim) others *= tile[d];
  const int64_t tiles = (x.shape(dim) + along - 1) / along;
  if (others * checks::round_up(x.shape(dim), 32) >= 6144 && tiles >= 128)
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " cuts dim ", dim, " of input shape ",
                    shape_to_string(x.shape()), " into ", tiles, " tiles; a sort this large takes fewer than 128");
}

ArgsortPlan plan_argsort(const OpDef& op, const Args& a) {
  const char* name = op.name.c_str();
  ArgsortPlan p;
  p.x = elementwise::offered_input(op, a);
  const int r = p.x.ndim();
  p.dim = a.is_none(1) ? r - 1 : checks::normalize_dim(name, a.integer(1), r);
  if (r == 4 && p.dim == 0)
    fail<ArgumentError>(name, ": dim ", a.integer(1), " is not supported for a 4-D input; a 4-D input is not sorted along axis 0");
  check_argsort_tile(name, p.x, p.dim);
  return p;
}

Outputs run_argsort(const OpDef& op, const Args& a) {
  const ArgsortPlan p = plan_argsort(op, a);
  Tensor indices = Tensor::empty(p.x.shape(), D::INT32);
  kernels::sort::argsort(p.x, p.dim, a.flag(2), indices);
  return {indices};
}

}  // namespace

void composite_family::add_sort(std::vector<OpDef>& table) {
  table.push_back(OpDef{
      .name = "topk",
      .params = {{"input", ParamKind::Tensor},
                 {"k", ParamKind::Int},
                 {"dim", ParamKind::Dim, "None"},
                 {"largest", ParamKind::Bool, "True"},
                 {"algo", ParamKind::Int, "0", false, nullptr, "TopKAlgo | int"}},
      .forms = kFunction | kMethod | kTorch,
      .num_outputs = 2,
      .tile_rule = "TileShape has the input's rank, its last dim >= k; MERGE_SORT: last dim * 4 < 22 KB; RADIX_SELECT: last dim covers the row, UB: tiles + 26 * tileH * align128(tileW) bytes",
      .limits = platform_rows(kSortable, kSortable, kFp32, kFp32, 1, 4, 1, 8),
      .run = run_topk,
      .infer = [](const OpDef& op, const Args& a) -> std::vector<OutputMeta> {
        const TopkPlan p = plan_topk(op, a);
        return {{p.out_shape, p.x.dtype()}, {p.out_shape, D::INT32}};
      },
  });
  table.push_back(OpDef{
      .name = "argsort",
      .params = {{"input", ParamKind::Tensor}, {"dim", ParamKind::Dim, "None"}, {"descending", ParamKind::Bool, "False"}},
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has the input's rank, a multiple of 32 along dim; on a chip a large sort takes fewer than 128 tiles along dim",
      .limits = platform_rows(kSortable, kFp32Fp16, kFp32Fp16, kFp32Fp16, 1, 4, 1, 8),
      .run = run_argsort,
      .infer = [](const OpDef& op, const Args& a) -> std::vector<OutputMeta> {
        return {{plan_argsort(op, a).x.shape(), D::INT32}};
      },
  });
}

}  // namespace pto
