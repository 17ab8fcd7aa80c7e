// gathermask (docs/ops/gathermask.md): checks and tile rules, then the lanes the pattern picks
// are copied by the strided-copy engine (a last-axis read with stride 2 or 4 is one of its
// vectorised cases). Pure data movement: bit-exact for every dtype.
#include "ops/checks.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

constexpr const char* kOp = "gathermask";

// Mode 1..7 -> (first lane, step) along the last axis.
struct Pattern {
  int64_t first, step;
};

Pattern validate_gathermask(const Tensor& x, int64_t mode) {
  const OpLimits& limits = require_offered(op_def(kOp));
  checks::check_dtype(kOp, "x", x.dtype(), limits.dtypes);
  const int r = x.ndim();
  checks::check_rank(kOp, "x", r, limits.min_rank, limits.max_rank);
  checks::check_extent(kOp, "x", x.shape(), true);
  if (mode < 1 || mode > 7)
    fail<ArgumentError>(kOp, ": pattern_mode ", mode, " is not supported; allowed: 1, 2, 3, 4, 5, 6, 7");
  const Pattern p = mode <= 2 ? Pattern{mode - 1, 2} : mode <= 6 ? Pattern{mode - 3, 4} : Pattern{0, 1};
  const int64_t last = x.shape(r - 1);
  if (last % p.step != 0)
    fail<ArgumentError>(kOp, ": x shape ", shape_to_string(x.shape()), " has a last axis of ", last,
                        ", not divisible by ", p.step, " as pattern_mode ", mode, " requires");
  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    const Shape in_tile = tiling::leading_tile(kOp, tile, r, "output");
    if (tile.back() % p.step != 0)
      fail<TileError>(kOp, ": tile shape ", shape_to_string(tile), " has a last dim of ", tile.back(),
                      ", not divisible by ", p.step, " as pattern_mode ", mode, " requires");
    // The first r tile dims tile x; the last one is in x's lanes, the output tile has 1/step of them.
    Shape out_tile = in_tile, out_shape = x.shape();
    out_tile[r - 1] = in_tile[r - 1] / p.step;
    out_shape[r - 1] = last / p.step;
    tiling::check_ub(kOp, in_tile, {{"input tile", x.shape(), x.itemsize()},
                                    {"output tile", out_shape, x.itemsize(), 1, out_tile}});
  }
  return p;
}

// x's shape with the last axis holding the lanes the pattern picks.
Shape lanes_shape(const Tensor& x, const Pattern& p) {
  Shape shape = x.shape();
  shape.back() /= p.step;
  return shape;
}

}  // namespace

Tensor gathermask(const Tensor& x_view, int64_t pattern_mode) {
  const Tensor x = x_view.valid_part();  // only the valid part is read (docs/kernel_model.md)
  const Pattern p = validate_gathermask(x, pattern_mode);
  const int r = x.ndim();
  const Shape shape = lanes_shape(x, p);
  Strides strides = x.strides();
  strides[r - 1] *= p.step;
  const Tensor lanes = x.as_strided(shape, strides, shape_numel(shape) ? p.first * x.stride(r - 1) : 0);
  Tensor out = Tensor::empty(shape, x.dtype());
  copy_into(out, lanes, kOp);
  return out;
}

Shape output_shape::gathermask(const Tensor& x, int64_t pattern_mode) {
  const checks::EveryPlatformScope every_platform;
  return lanes_shape(x, validate_gathermask(x, pattern_mode));
}


void families::add_gathermask(std::vector<OpDef>& table) {
  using D = DType;
  const DTypeSet chips{D::FP32, D::FP16, D::BF16, D::INT32, D::INT16, D::UINT16, D::UINT32};
  table.push_back(OpDef{
      .name = kOp,
      .params = {{"x", ParamKind::Tensor}, {"pattern_mode", ParamKind::Int}},
      .forms = kFunction | kMethod | kTorch,
      .doc_page = "docs/ops/gathermask.md",
      .tile_rule = "TileShape has at least the input's rank, its last dim divisible by the pattern's step; UB: input and output tiles",
      .limits = platform_rows(DTypeSet::all(), chips, chips, chips, 1, 4, 1, 8),
      .run = [](const OpDef&, const Args& a) -> Outputs { return {gathermask(a.tensor(0), a.integer(1))}; },
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        return {{output_shape::gathermask(a.tensor(0), a.integer(1)), a.tensor(0).dtype()}};
      },
      .bytes = [](const OpDef&, const Args&, const Outputs& out) { return 2 * tensor_bytes(out[0]); },
  });
}

}  // namespace pto
