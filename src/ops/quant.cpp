// quantize, dequantize and quant_mx (docs/ops/quantize.md, dequantize.md, quant_mx.md): checks,
// the scale's shape along the quantised axis and the tile rules, then the kernels of
// kernels/quant.h (quantize / dequantize on the elementwise engine).
#include "kernels/quant.h"

#include "ops/checks.h"
#include "ops/composite.h"
#include "ops/elementwise.h"
#include "ptocpu/error.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {

using D = DType;
namespace kq = kernels::quant;

constexpr DTypeSet kFp32{D::FP32};
constexpr DTypeSet kHalvesAndFp32{D::FP16, D::BF16, D::FP32};

// axis in [-rank, rank) (IndexError), then the last or the second-last axis (ArgumentError).
int last_two_axis(const char* op, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    fail<IndexError>(op, ": axis ", axis, " is out of range [", -rank, ", ", rank, ") for an input of rank ", rank);
  const int a = static_cast<int>(axis < 0 ? axis + rank : axis);
  if (a < rank - 2)
    fail<ArgumentError>(op, ": axis ", axis, " is not supported for an input of rank ", rank,
                        "; allowed: the last axis (-1) or the second-last (-2)");
  return a;
}

// ---- quantize / dequantize ------------------------------------------------------------------------

struct QuantPlan {
  Tensor x, scale, zero_points;  // scale / zero_points seen at x's shape
  int axis;
  DType out;
};

// A scale or zero-point tensor: fp32, one value per line along `axis` -- x's shape without that
// axis (the page's form), or with it as 1 -- seen at x's shape.
Tensor per_line(const char* op, const char* param, const Tensor& given, const Tensor& x, int axis) {
  const Tensor t = given.valid_part();
  checks::check_dtype(op, param, t.dtype(), kFp32);
  Shape dropped = x.shape(), kept = x.shape();
  dropped.erase(dropped.begin() + axis);
  kept[axis] = 1;
  if (t.shape() == dropped) {
    Strides strides = t.strides();
    strides.insert(strides.begin() + axis, 0);
    return t.as_strided(x.shape(), strides, 0);
  }
  if (t.shape() != kept)
    fail<ArgumentError>(op, ": ", param, " shape ", shape_to_string(t.shape()), " must be ", shape_to_string(dropped),
                        " (or ", shape_to_string(kept), "): one value per line along axis ", axis - x.ndim(),
                        " of input shape ", shape_to_string(x.shape()));
  return elementwise::broadcast_to(t, x.shape());
}

// The tile rule of quantize / dequantize: the input's rank; UB: the input, scale (one value per
// line), output tiles and quantize's int32 workspace of align8(tile[-2]) * align8(tile[-1]).
void check_quant_tile(const char* op, const QuantPlan& p, bool workspace) {
  const Shape& tile = get_vec_tile_shapes();
  if (tile.empty()) return;
  const int r = p.x.ndim();
  tiling::check_rank(op, tile, r, "input");
  Shape per_line = p.x.shape();
  per_line[p.axis] = 1;
  std::vector<tiling::Buffer> buffers{{"input tile", p.x.shape(), p.x.itemsize()},
                                      {"scale tile", per_line, 4},
                                      {"output tile", p.x.shape(), dtype_size(p.out)}};
  if (workspace) {
    const auto align8 = [](int64_t v) { return (v + 7) / 8 * 8; };
    const int64_t rows = align8(r >= 2 ? tile[r - 2] : 1), cols = align8(tile[r - 1]);
    buffers.push_back({"int32 workspace", {rows, cols}, 4, 1, {rows, cols}});
  }
  tiling::check_ub(op, tile, buffers);
}

QuantPlan plan_quant(const OpDef& op, const Args& a, bool quantize) {
  const char* name = op.name.c_str();
  QuantPlan p;
  p.x = elementwise::offered_input(op, a);
  p.axis = last_two_axis(name, a.integer(3), p.x.ndim());
  p.scale = per_line(name, "scale", a.tensor(1), p.x, p.axis);
  const bool zero_points = !a.is_none(4);
  if (zero_points) p.zero_points = per_line(name, "zero_points", a.tensor(4), p.x, p.axis);
  p.out = a.dtype(2);
  const DType want = !quantize ? D::FP32 : zero_points ? D::UINT8 : D::INT8;
  if (p.out != want)
    fail<DTypeError>(name, ": otype ", dtype_name(p.out), " is not supported", quantize ? (zero_points ? " with zero_points" : " without zero_points") : "",
                     "; allowed: ", dtype_name(want));
  check_quant_tile(name, p, quantize);
  return p;
}

template <class F>
Outputs run_elementwise(const QuantPlan& p) {
  Tensor out = Tensor::empty(p.x.shape(), p.out);
  if (p.zero_points.defined()) elementwise::run<F, 3>(out, {&p.x, &p.scale, &p.zero_points}, D::FP32);
  else elementwise::run<F, 2>(out, {&p.x, &p.scale}, D::FP32);
  return {out};
}

Outputs run_quantize(const OpDef& op, const Args& a) {
  const QuantPlan p = plan_quant(op, a, true);
  return p.out == D::INT8 ? run_elementwise<kq::Quantize<int8_t>>(p) : run_elementwise<kq::Quantize<uint8_t>>(p);
}

Outputs run_dequantize(const OpDef& op, const Args& a) { return run_elementwise<kq::Dequantize>(plan_quant(op, a, false)); }

template <bool Quantize>
std::vector<OutputMeta> infer_quant(const OpDef& op, const Args& a) {
  const QuantPlan p = plan_quant(op, a, Quantize);
  return {{p.x.shape(), p.out}};
}

// ---- quant_mx -------------------------------------------------------------------------------------

struct MxPlan {
  Tensor x;
  DType quant_dtype;  // DT_FP8E4M3, or DT_FP4_E2M1X2 (pairs along the last dim)
  bool along_rows;
  DequantScaleRoundingMode mode;
  Shape quant_shape, scale_shape;
};

MxPlan plan_quant_mx(const OpDef& op, const Args& a) {
  const char* name = op.name.c_str();
  MxPlan p;
  p.x = elementwise::offered_input(op, a);
  p.quant_dtype = a.dtype(1);
  const bool fp4 = p.quant_dtype == D::FP4_E2M1X2;
  if (p.quant_dtype != D::FP8E4M3 && !fp4)
    fail<DTypeError>(name, ": quant_dtype ", dtype_name(p.quant_dtype),
                     " is not supported; allowed: DT_FP8E4M3, DT_FP4_E2M1X2");
  if (fp4 && p.x.dtype() != D::FP16 && p.x.dtype() != D::BF16)
    fail<DTypeError>(name, ": quant_dtype DT_FP4_E2M1X2 takes DT_FP16 or DT_BF16 input; got ", dtype_name(p.x.dtype()));
  const int64_t mode = a.integer(2);
  if (mode != 0 && mode != 1)
    fail<ArgumentError>(name, ": mode ", mode,
                        " is not supported; allowed: DequantScaleRoundingMode.ROUND_UP (0), DequantScaleRoundingMode.ROUND_DOWN (1)");
  p.mode = static_cast<DequantScaleRoundingMode>(mode);
  const int r = p.x.ndim();
  p.along_rows = last_two_axis(name, a.integer(3), r) == r - 2;
  const bool performance = a.flag(4);
  const Shape& shape = p.x.shape();
  const int64_t n = shape[r - 1];
  if (p.along_rows && shape[r - 2] % 64 != 0)
    fail<ArgumentError>(name, ": input shape ", shape_to_string(shape), " has a second-last dim of ", shape[r - 2],
                        "; axis -2 needs a multiple of 64");
  if (!p.along_rows && performance && n * static_cast<int64_t>(p.x.itemsize()) % 256 != 0)
    fail<ArgumentError>(name, ": input shape ", shape_to_string(shape), " has a last dim of ", n, " (", n * p.x.itemsize(),
                        " bytes); performance_mode needs a multiple of 256 bytes");
  if (!p.along_rows && n % 64 != 0)
    fail<ArgumentError>(name, ": input shape ", shape_to_string(shape), " has a last dim of ", n,
                        "; axis -1 needs a multiple of 64");
  if (p.along_rows && fp4 && n % 64 != 0)  // packed rows of 32-byte multiples
    fail<ArgumentError>(name, ": input shape ", shape_to_string(shape), " has a last dim of ", n,
                        "; axis -2 with DT_FP4_E2M1X2 needs a multiple of 64");
  const Shape& tile = get_vec_tile_shapes();
  if (!tile.empty()) {
    tiling::check_rank(name, tile, r, "input");
    if (p.along_rows && tile[r - 2] % 64 != 0)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a second-last dim of ", tile[r - 2],
                      "; axis -2 needs a multiple of 64");
    if (!p.along_rows && performance && tile[r - 1] != n)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a last dim of ", tile[r - 1],
                      "; performance_mode needs the input's last dim, ", n);
    if (p.along_rows && fp4 && tile[r - 1] % 64 != 0)
      fail<TileError>(name, ": tile shape ", shape_to_string(tile), " has a last dim of ", tile[r - 1],
                      "; axis -2 with DT_FP4_E2M1X2 needs a multiple of 64");
  }
  p.quant_shape = shape;
  if (fp4) p.quant_shape[r - 1] = n / 2;  // ptocpu's X2 shapes count pairs (docs/dtypes.md)
  p.scale_shape = Shape(shape.begin(), shape.end() - (p.along_rows ? 2 : 1));
  if (p.along_rows) p.scale_shape.insert(p.scale_shape.end(), {shape[r - 2] / 64, n});
  else p.scale_shape.push_back(n / 64);
  p.scale_shape.push_back(2);
  return p;
}

Outputs run_quant_mx(const OpDef& op, const Args& a) {
  const MxPlan p = plan_quant_mx(op, a);
  Tensor quantized = Tensor::empty(p.quant_shape, p.quant_dtype), scale = Tensor::empty(p.scale_shape, D::FP8E8M0);
  kq::quant_mx(p.x, p.along_rows, p.mode, quantized, scale);
  return {quantized, scale};
}

std::vector<Param> quant_params() {
  return {{"input", ParamKind::Tensor},
          {"scale", ParamKind::Tensor},
          {"otype", ParamKind::DType},
          {"axis", ParamKind::Int},
          {"zero_points", ParamKind::Tensor, "None"}};
}

}  // namespace

void composite_family::add_quant(std::vector<OpDef>& table) {
  const DTypeSet dequant_chips{D::INT8, D::INT16};
  table.push_back(OpDef{
      .name = "quantize",
      .params = quant_params(),
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has the input's rank; UB: input, scale and output tiles and an int32 workspace of align8(tile[-2]) * align8(tile[-1])",
      .limits = platform_rows(kHalvesAndFp32, kFp32, kFp32, kFp32, 1, 4, 1, 8),
      .run = run_quantize,
      .infer = infer_quant<true>,
  });
  table.push_back(OpDef{
      .name = "dequantize",
      .params = quant_params(),
      .forms = kFunction | kTorch,
      .tile_rule = "TileShape has the input's rank; UB: input, scale and output tiles",
      .limits = platform_rows({D::INT8, D::UINT8, D::INT16}, dequant_chips, dequant_chips, dequant_chips, 1, 4, 1, 8),
      .run = run_dequantize,
      .infer = infer_quant<false>,
  });
  table.push_back(OpDef{
      .name = "quant_mx",
      .params = {{"input", ParamKind::Tensor},
                 {"quant_dtype", ParamKind::DType, "DT_FP8E4M3"},
                 {"mode", ParamKind::Int, "1", false, nullptr, "DequantScaleRoundingMode | int"},
                 {"axis", ParamKind::Int, "-1"},
                 {"performance_mode", ParamKind::Bool, "True"}},
      .forms = kFunction | kMethod,
      .num_outputs = 2,
      .tile_rule = "TileShape has the input's rank; axis -1 in performance_mode: its last dim is the input's; axis -2: its second-last dim a multiple of 64 (DT_FP4_E2M1X2: its last dim too)",
      .limits = platform_rows(kHalvesAndFp32, kHalvesAndFp32, {}, {}, 1, 4, 1, 8),
      .run = run_quant_mx,
      .infer = [](const OpDef& op, const Args& a) -> std::vector<OutputMeta> {
        const MxPlan p = plan_quant_mx(op, a);
        return {{p.quant_shape, p.quant_dtype}, {p.scale_shape, D::FP8E8M0}};
      },
  });
}

}  // namespace pto
