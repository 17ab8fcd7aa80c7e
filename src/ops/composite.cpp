// The composite family's entries (docs/ops/softmax.md, rms_norm.md, online_softmax.md,
// expand_exp_dif.md): checks and tile rules, then the fused kernels of kernels/composite.h. The
// sort and quantisation entries of the family are in src/ops/sort.cpp and src/ops/quant.cpp.
#include "kernels/composite.h"

#include <numeric>

#include "ops/checks.h"
#include "ops/composite.h"
#include "ops/elementwise.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;
namespace kc = kernels::composite;

constexpr DTypeSet kHalvesAndFp32{D::FP16, D::BF16, D::FP32};
constexpr DTypeSet kFp32{D::FP32};
constexpr int64_t kReductionTileBytes = 64 * 1024;

// A Scalar parameter as the device's fp32 literal (a bool is a DTypeError).
float fp32_scalar(const OpDef& op, const char* param, const Scalar& s) {
  if (s.kind == Scalar::Kind::Bool)
    fail<DTypeError>(op.name, ": ", param, " ", s.to_string(), " is a bool; it must be an int or a float");
  float f;
  encode_scalar(s, D::FP32, &f, op.name.c_str(), param);
  return f;
}

// softmax / rms_norm: the tile rules of the reductions and elementwise ops they are made of. The
// tile has the input's rank; on a chip its fp32 bytes are at most 64 KB (the reductions' limit) and
// the UB holds the fp32 input tile, the row statistic's tile and the fp32 output tile.
void check_reduction_tile(const OpDef& op, const Shape& shape, int dim) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const char* name = op.name.c_str();
  const int r = static_cast<int>(shape.size());
  tiling::check_rank(name, tile, r, "input");
  if (current_platform().ub_bytes) {
    const int64_t bytes = std::accumulate(tile.begin(), tile.end(), int64_t(4), std::multiplies<>());
    if (bytes > kReductionTileBytes)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " holds ", bytes,
                      " bytes of fp32; its reductions take tiles of at most ", kReductionTileBytes, " bytes (64 KB)");
  }
  Shape statistic = shape;
  statistic[dim] = 1;
  tiling::check_ub(name, tile, {{"input tile", shape, 4}, {"row statistic tile", statistic, 4}, {"output tile", shape, 4}});
}

// ---- softmax ----------------------------------------------------------------------------------

struct SoftmaxPlan {
  Tensor x;
  int dim;
};

SoftmaxPlan plan_softmax(const OpDef& op, const Args& a) {
  const Tensor x = elementwise::offered_input(op, a);
  const int dim = checks::normalize_dim(op.name.c_str(), a.integer(1), x.ndim());
  check_reduction_tile(op, x.shape(), dim);
  return {x, dim};
}

Outputs run_softmax(const OpDef& op, const Args& a) {
  const SoftmaxPlan p = plan_softmax(op, a);
  Tensor out = Tensor::empty(p.x.shape(), p.x.dtype());
  kc::softmax(p.x, p.dim, out);
  return {out};
}

// ---- rms_norm -----------------------------------------------------------------------------------

struct RmsNormPlan {
  Tensor x, gamma;
  float eps;
};

RmsNormPlan plan_rms_norm(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const char* name = op.name.c_str();
  RmsNormPlan p;
  p.x = elementwise::operand(op, limits, a.tensor(0), "input", limits.dtypes);
  const int64_t c = p.x.shape(p.x.ndim() - 1);
  if (!a.is_none(1)) {
    p.gamma = a.tensor(1).valid_part();
    checks::check_dtype(name, "gamma", p.gamma.dtype(), limits.dtypes);
    if (p.gamma.shape() != Shape{c})
      fail<ArgumentError>(name, ": gamma shape ", shape_to_string(p.gamma.shape()), " must be [", c,
                          "], the last dim of input shape ", shape_to_string(p.x.shape()));
  }
  p.eps = fp32_scalar(op, "epsilon", a.scalar(2));
  check_reduction_tile(op, p.x.shape(), p.x.ndim() - 1);
  return p;
}

Outputs run_rms_norm(const OpDef& op, const Args& a) {
  const RmsNormPlan p = plan_rms_norm(op, a);
  Tensor out = Tensor::empty(p.x.shape(), p.x.dtype());
  // 1/n as the device takes it: a double rounded to an fp32 literal.
  const float inv_n = static_cast<float>(1.0 / static_cast<double>(p.x.shape(p.x.ndim() - 1)));
  kc::rms_norm(p.x, p.gamma, inv_n, p.eps, out);
  return {out};
}

std::vector<OutputMeta> same_as_input(const Tensor& x) { return {{x.shape(), x.dtype()}}; }

// ---- online_softmax / online_softmax_update -----------------------------------------------------

// The experimental ops do not split axis 0: the tile covers every row of `t` (TileError otherwise).
void check_rows_in_one_tile(const OpDef& op, const Tensor& t, const char* param) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const char* name = op.name.c_str();
  tiling::check_min_rank(name, tile, 2, param);
  if (t.shape(0) > tile[0])
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " splits axis 0 of ", param, " shape ",
                    shape_to_string(t.shape()), "; its first dim must be at least ", t.shape(0));
}

struct OnlineSoftmaxPlan {
  Tensor scores;
  float scale;
};

OnlineSoftmaxPlan plan_online_softmax(const OpDef& op, const Args& a) {
  const Tensor scores = elementwise::offered_input(op, a);
  const float scale = fp32_scalar(op, "scale", a.scalar(1));
  check_rows_in_one_tile(op, scores, "scores");
  return {scores, scale};
}

Outputs run_online_softmax(const OpDef& op, const Args& a) {
  const OnlineSoftmaxPlan p = plan_online_softmax(op, a);
  const int64_t q = p.scores.shape(1);
  Tensor e = Tensor::empty(p.scores.shape(), D::BF16), m = Tensor::empty({1, q}, D::FP32),
         s = Tensor::empty({1, q}, D::FP32);
  kc::online_softmax(p.scores, p.scale, e, m, s);
  return {e, m, s};
}

constexpr const char* kUpdateParams[] = {"previous_max", "previous_sum", "previous_output",
                                         "current_max",  "current_sum",  "current_output"};

kc::OnlineUpdate plan_online_softmax_update(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const char* name = op.name.c_str();
  Tensor t[6];
  for (int i = 0; i < 6; ++i) t[i] = elementwise::operand(op, limits, a.tensor(i), kUpdateParams[i], limits.dtypes);
  const Tensor& output = t[2];
  if (t[5].shape() != output.shape())
    fail<ArgumentError>(name, ": current_output shape ", shape_to_string(t[5].shape()),
                        " must equal previous_output shape ", shape_to_string(output.shape()));
  const Shape statistic{1, output.shape(1)};
  for (int i : {0, 1, 3, 4})
    if (t[i].shape() != statistic)
      fail<ArgumentError>(name, ": ", kUpdateParams[i], " shape ", shape_to_string(t[i].shape()), " must be ",
                          shape_to_string(statistic), " (one entry per column of previous_output shape ",
                          shape_to_string(output.shape()), ")");
  check_rows_in_one_tile(op, output, "previous_output");
  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty() && tile.back() % 8 != 0)
    fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a last dim of ", tile.back(),
                    "; fp32 rows of a tile must be 32-byte aligned (a multiple of 8 elements)");
  return {t[0], t[1], t[2], t[3], t[4], t[5], {}, {}, {}};
}

Outputs run_online_softmax_update(const OpDef& op, const Args& a) {
  kc::OnlineUpdate u = plan_online_softmax_update(op, a);
  u.max = Tensor::empty(u.previous_max.shape(), D::FP32);
  u.sum = Tensor::empty(u.previous_sum.shape(), D::FP32);
  u.output = Tensor::empty(u.previous_output.shape(), D::FP32);
  kc::online_softmax_update(u);
  return {u.max, u.sum, u.output};
}

// ---- expand_exp_dif -----------------------------------------------------------------------------

constexpr elementwise::BinaryRules kExpDif{};

// Does an operand broadcast along one of the output's last two axes? Then the device runs the
// fused EXPANDEXPDIF instruction; otherwise a SUB then an EXP of the tile dtype.
bool broadcasts_in_last_two(const elementwise::Plan& p) {
  const int r = static_cast<int>(p.shape.size());
  for (const Tensor& t : p.inputs)
    for (int d = std::max(0, r - 2); d < r; ++d) {
      const int td = d - (r - t.ndim());
      if ((td < 0 ? 1 : t.shape(td)) != p.shape[d]) return true;
    }
  return false;
}

Outputs run_expand_exp_dif(const OpDef& op, const Args& a) {
  const elementwise::Plan p = elementwise::plan_binary(op, a, kExpDif);
  // fp16 runs natively (not in fp16's AutoCast list): a SUB rounds the difference to fp16 first.
  if (p.dtype == D::FP16 && !broadcasts_in_last_two(p)) return elementwise::run_plan<kc::ExpOfFp16Dif, 2>(p);
  return elementwise::run_plan<kc::ExpDif, 2>(p);
}

}  // namespace

void families::add_composite(std::vector<OpDef>& table) {
  table.push_back(OpDef{
      .name = "softmax",
      .params = {{"input", ParamKind::Tensor}, {"dim", ParamKind::Dim}},
      .forms = kFunction | kMethod | kTorch,
      .tile_rule = "TileShape has the input's rank, at most 64 KB of fp32 on a chip; UB: fp32 input, row statistic and output tiles",
      .limits = platform_rows(kHalvesAndFp32, kHalvesAndFp32, kHalvesAndFp32, kHalvesAndFp32, 1, 4, 1, 8),
      .run = run_softmax,
      .infer = [](const OpDef& op, const Args& a) { return same_as_input(plan_softmax(op, a).x); },
  });
  table.push_back(OpDef{
      .name = "rms_norm",
      .params = {{"input", ParamKind::Tensor},
                 {"gamma", ParamKind::Tensor, "None"},
                 {"epsilon", ParamKind::Scalar, "1e-6", false, nullptr, "float"}},
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has the input's rank, at most 64 KB of fp32 on a chip; UB: fp32 input, row statistic and output tiles",
      .limits = platform_rows(kHalvesAndFp32, kHalvesAndFp32, kHalvesAndFp32, kHalvesAndFp32, 1, 4, 1, 8),
      .run = run_rms_norm,
      .infer = [](const OpDef& op, const Args& a) { return same_as_input(plan_rms_norm(op, a).x); },
  });
  table.push_back(OpDef{
      .name = "online_softmax",
      .params = {{"scores", ParamKind::Tensor}, {"scale", ParamKind::Scalar, nullptr, false, nullptr, "float"}},
      .num_outputs = 3,
      .submodule = "experimental",
      .tile_rule = "TileShape rank >= 2, its first dim covers every row of scores",
      .limits = platform_rows(kFp32, kFp32, {}, {}, 2, 2, 2, 2),
      .run = run_online_softmax,
      .infer = [](const OpDef& op, const Args& a) -> std::vector<OutputMeta> {
        const Tensor& s = plan_online_softmax(op, a).scores;
        return {{s.shape(), D::BF16}, {{1, s.shape(1)}, D::FP32}, {{1, s.shape(1)}, D::FP32}};
      },
  });
  table.push_back(OpDef{
      .name = "online_softmax_update",
      .params = {{"previous_max", ParamKind::Tensor}, {"previous_sum", ParamKind::Tensor},
                 {"previous_output", ParamKind::Tensor}, {"current_max", ParamKind::Tensor},
                 {"current_sum", ParamKind::Tensor}, {"current_output", ParamKind::Tensor}},
      .num_outputs = 3,
      .doc_page = "docs/ops/online_softmax.md",
      .submodule = "experimental",
      .tile_rule = "TileShape rank >= 2, its first dim covers every row of the outputs, its last dim a multiple of 8",
      .limits = platform_rows(kFp32, kFp32, {}, {}, 2, 2, 2, 2),
      .run = run_online_softmax_update,
      .infer = [](const OpDef& op, const Args& a) -> std::vector<OutputMeta> {
        const kc::OnlineUpdate u = plan_online_softmax_update(op, a);
        return {{u.previous_max.shape(), D::FP32}, {u.previous_sum.shape(), D::FP32},
                {u.previous_output.shape(), D::FP32}};
      },
  });
  table.push_back(OpDef{
      .name = "expand_exp_dif",
      .params = {{"input", ParamKind::Tensor}, {"other", ParamKind::Tensor}},
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has the output's rank; UB: one tile per input and one output tile",
      .limits = platform_rows(kHalvesAndFp32, kHalvesAndFp32, kHalvesAndFp32, kHalvesAndFp32, 1, 4, 0, 8),
      .run = run_expand_exp_dif,
      .infer = elementwise::binary_infer<kExpDif>,
  });
  composite_family::add_sort(table);
  composite_family::add_quant(table);
}

}  // namespace pto
