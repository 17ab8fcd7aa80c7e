// pypto.conv (docs/ops/conv.md): 1-D, 2-D and 3-D convolutions on the cube unit. Each call checks
// what the device checks (dtypes, ranks, the geometry's ranges, groups, bias, the conv tile and
// its buffers on the platform), then runs a depthwise one (one input channel per group) as a stencil
// per plane (kernels::conv::run_depthwise), others on oneDNN's direct convolution in fp32
// (kernels::conv::run_direct) or, for a 1 x 1 kernel read in place and whenever oneDNN has no fast kernel, per
// image and group, weight [Cout / groups, K] times the patch matrix [K, Dout * Hout * Wout] as one
// kernels::matmul::Problem. Either way: exact products, fp32 sums with the bias, ReLU, one rounding
// to the output dtype.
#include <algorithm>
#include <array>
#include <sstream>

#include "core/allocator.h"
#include "kernels/conv.h"
#include "kernels/matmul.h"
#include "ops/checks.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/parallel.h"
#include "ptocpu/tiling.h"

namespace pto {
namespace {

using checks::round_up;

using D = DType;
constexpr const char* kConv = "conv";

// The device's ranges (upstream's Load3D limits): strides and dilations, paddings and kernels,
// every dim of the operands and the output, groups and kh * kw * C0 (an inner axis).
constexpr int64_t kMaxStride = 63, kMaxPadKernel = 255, kMaxDim = 1000000, kMaxInner = 65535;
constexpr int64_t kAlign = 32;  // bytes: C0 = 32 / itemsize channels

const Param kExtendFields[] = {
    {"bias_tensor", ParamKind::Tensor, "None"},
    {"scale", ParamKind::Scalar, "0.0"},
    {"scale_tensor", ParamKind::Tensor, "None"},
    {"relu_type", ParamKind::Int, "0", false, nullptr, "ConvReLuType | int"},
};

ConvExtendParams extend_of(const Args& fields) {
  ConvExtendParams e;
  if (fields.is_tensor(0)) e.bias_tensor = fields.tensor(0);
  const Scalar& s = fields.scalar(1);
  e.scale = s.kind == Scalar::Kind::Float ? s.f : static_cast<double>(s.i);
  if (fields.is_tensor(2)) e.scale_tensor = fields.tensor(2);
  e.relu_type = fields.integer(3);
  return e;
}

std::string list(const std::vector<int64_t>& v) { return shape_to_string(Shape(v.begin(), v.end())); }

// What a call convolves: the valid parts of its operands and the geometry the checks derived.
struct Plan {
  Tensor input, weight, bias;  // input [N, Cin, spatial..], weight [Cout, Cin / groups, kernel..]
  int nd = 0;                  // spatial dims: 1, 2 or 3
  int64_t groups = 1, batch = 0, cout = 0;
  bool relu = false;
  kernels::conv::Geometry g;   // as 3-D (leading dims of 1 for 1-D and 2-D)
  std::array<int64_t, 3> pad_after{0, 0, 0};
  Shape out_shape;
};

// The spatial dims' values of a per-dim list (strides, dilations) as 3-D.
std::array<int64_t, 3> as_3d(const std::vector<int64_t>& v, int nd, int64_t fill) {
  std::array<int64_t, 3> out{fill, fill, fill};
  for (int d = 0; d < nd; ++d) out[3 - nd + d] = v[d];
  return out;
}

void check_range(const char* what, const std::vector<int64_t>& v, int64_t lo, int64_t hi) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < lo || v[i] > hi)
      fail<ArgumentError>(kConv, ": ", what, " ", list(v), " has ", v[i], " at position ", i, "; each must be in [", lo,
                          ", ", hi, "]");
}

void check_dims(const char* param, const Shape& s) {
  for (int64_t d : s)
    if (d < 1 || d > kMaxDim)
      fail<ArgumentError>(kConv, ": ", param, " shape ", shape_to_string(s), " has a dim of ", d, "; each must be in [1, ", kMaxDim,
                          "]");
}

// The conv tile against the operands (docs/ops/conv.md#tiles): its L1 values, then (when an L0
// tile is set) the L0 values and the L0A / L0B / L0C bytes, then the L1 bytes on the platform.
void check_conv_tile(const Plan& p) {
  const ConvTile& t = get_conv_tile_shapes();
  const Platform& platform = current_platform();
  if (t.l1.empty()) {
    if (platform.l0a_bytes == 0) return;  // cpu: no tile set, no tile rule
    fail<TileError>(kConv, ": no conv tile shape is set; call set_conv_tile_shapes(tile_l1_info, tile_l0_info) "
                    "first (platform ", platform.name, " needs one)");
  }
  const int64_t hin = p.g.in[1], win = p.g.in[2], hout = p.g.out[1], wout = p.g.out[2];
  const int64_t kd = p.g.kernel[0], kh = p.g.kernel[1], kw = p.g.kernel[2];
  const int64_t size = static_cast<int64_t>(dtype_size(p.input.dtype())), c0 = kAlign / size;
  const int64_t cin_w = p.weight.shape(1);
  const int64_t tile_hin = t.l1[0], tile_hout = t.l1[1], tile_win = t.l1[2], tile_wout = t.l1[3];
  const int64_t cin_fmap = t.l1[4], cin_weight = t.l1[5], tile_n = t.l1[6], tile_batch = t.l1[7];
  const auto tile = [&] {  // for messages only
    std::ostringstream s;
    s << "TileL1Info(" << list(t.l1) << ")";
    if (t.set_l0) s << ", TileL0Info(" << list(t.l0) << ")";
    return s.str();
  };
  const auto bad = [&](auto... why) { fail<TileError>(kConv, ": conv tile ", tile(), ": ", why...); };
  const auto in_range = [&](const char* name, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi) bad(name, " = ", v, " must be in [", lo, ", ", hi, "]");
  };
  const auto multiple = [&](const char* name, int64_t v, int64_t of) {
    if (v % of != 0) bad(name, " = ", v, " must be a multiple of ", of);
  };
  in_range("tileHin", tile_hin, 1, hin);
  in_range("tileBatch", tile_batch, 1, 1);
  in_range("tileWin", tile_win, 1, win);
  in_range("tileCinFmap", cin_fmap, c0, round_up(cin_w, c0));
  in_range("tileCinWeight", cin_weight, c0, round_up(cin_w, c0));
  in_range("tileL1Info.tileN", tile_n, 1, round_up(p.cout / p.groups, 16));
  multiple("tileL1Info.tileN", tile_n, 16);
  if (wout % 16 != 0 && tile_hout != 1) bad("tileHout = ", tile_hout, " must be 1 when Wout (", wout, ") is not a multiple of 16");
  in_range("tileHout", tile_hout, 1, hout);
  in_range("tileWout", tile_wout, 1, round_up(wout, 16));
  multiple("tileWout", tile_wout, 16);
  multiple("tileCinFmap", cin_fmap, c0);
  multiple("tileCinWeight", cin_weight, c0);
  const auto need = [&](const char* buffer, int64_t bytes, int64_t limit, auto... formula) {
    if (bytes > limit)
      fail<TileError>(kConv, ": conv tile ", tile(), " needs ", bytes, " bytes of ", buffer, " (", formula...,
                      ") but platform ", platform.name, " has ", limit);
  };
  if (t.set_l0) {
    const int64_t l0_h = t.l0[0], l0_w = t.l0[1], l0_k = t.l0[2], l0_n = t.l0[3];
    const int64_t ka_l1 = round_up(cin_fmap, c0) * kd * kh * kw, kb_l1 = round_up(cin_weight, c0) * kd * kh * kw;
    multiple("tileK", l0_k, c0);
    in_range("tileH", l0_h, 1, tile_hout);
    in_range("tileW", l0_w, 1, tile_wout);
    in_range("tileK", l0_k, 1, std::min(ka_l1, kb_l1));
    multiple("tileL0Info.tileN", l0_n, 16);
    multiple("tileW", l0_w, 16);
    in_range("tileL0Info.tileN", l0_n, 1, round_up(tile_n, 16));
    if (ka_l1 % l0_k != 0 || kb_l1 % l0_k != 0)
      bad("tileK = ", l0_k, " must divide kAL1 = ", ka_l1, " and kBL1 = ", kb_l1,
          " (tileCinFmap and tileCinWeight, C0-aligned, times the kernel's volume)");
    if (platform.l0a_bytes > 0) {
      need("L0A", l0_h * l0_w * l0_k * size, platform.l0a_bytes, "tileH ", l0_h, " * tileW ", l0_w, " * tileK ", l0_k,
           " * ", size, " bytes");
      need("L0B", l0_k * l0_n * size, platform.l0b_bytes, "tileK ", l0_k, " * tileN ", l0_n, " * ", size, " bytes");
      need("L0C", l0_h * l0_w * l0_n * 4, platform.l0c_bytes, "tileH ", l0_h, " * tileW ", l0_w, " * tileN ", l0_n,
           " * 4 bytes");
    }
  }
  if (platform.l1_bytes == 0) return;
  // The device's sum: the input rows and columns one L1 tile of outputs reads (over H and W), the
  // weight's L1 tile (over kh * kw) and the bias's, each 32-byte aligned.
  const int64_t hin_l1 = std::min((tile_hout - 1) * p.g.stride[1] + (kh - 1) * p.g.dilation[1] + 1, hin);
  const int64_t win_l1 = std::min((tile_wout - 1) * p.g.stride[2] + (kw - 1) * p.g.dilation[2] + 1, win);
  const int64_t input_l1 = round_up(hin_l1 * win_l1 * cin_fmap * size, kAlign);
  const int64_t weight_l1 = round_up(round_up(cin_weight * kh * kw, c0) * tile_n * size, kAlign);
  const int64_t bias_l1 = p.bias.defined() ? round_up(tile_n * size, kAlign) : 0;
  need("L1", input_l1 + weight_l1 + bias_l1, platform.l1_bytes, "input ", hin_l1, " * ", win_l1, " * tileCinFmap ",
       cin_fmap, " * ", size, " + weight ", round_up(cin_weight * kh * kw, c0), " * tileN ", tile_n, " * ", size,
       p.bias.defined() ? " + bias tileN * " : "", p.bias.defined() ? std::to_string(size) : "", " bytes, each 32-byte aligned");
}

Plan plan_conv(const Tensor& input_conv, const Tensor& weight, D out_dtype, const std::vector<int64_t>& strides,
               const std::vector<int64_t>& paddings, const std::vector<int64_t>& dilations, const ConvOptions& o) {
  const OpLimits& limits = require_offered(op_def(kConv));
  Plan p;
  p.input = input_conv.valid_part();
  p.weight = weight.valid_part();
  const D in = p.input.dtype();
  checks::check_dtype(kConv, "input_conv", in, limits.dtypes);
  checks::check_same_dtype(kConv, "weight", p.weight.dtype(), "input_conv", in);
  if (out_dtype != in)
    fail<DTypeError>(kConv, ": out_dtype ", dtype_name(out_dtype), " must be input_conv's dtype ", dtype_name(in),
                     " (no quantisation)");
  const int rank = p.input.ndim();
  if (rank < 3 || rank > 5 || p.weight.ndim() != rank)
    fail<ArgumentError>(kConv, ": input_conv rank ", rank, " and weight rank ", p.weight.ndim(),
                        " must be equal and 3, 4 or 5 (NCL / NCHW / NCDHW with [Cout, Cin / groups, kernel..])");
  if (o.transposed)
    fail<UnsupportedError>(kConv, ": transposed=True (transposed convolution) is not supported; PyPTO does not "
                           "implement it either");
  p.nd = rank - 2;
  const ConvExtendParams& e = o.extend;
  check_dims("input_conv", p.input.shape());
  check_dims("weight", p.weight.shape());
  checks::check_extent(kConv, "input_conv", p.input.shape(), true);
  checks::check_extent(kConv, "weight", p.weight.shape(), true);
  p.batch = p.input.shape(0);
  p.cout = p.weight.shape(0);
  if (e.bias_tensor.defined()) {
    p.bias = e.bias_tensor.valid_part();
    // Atlas A2 / A3 add a bf16 convolution's bias in fp32 only; elsewhere the bias has the input's dtype.
    const D want = checks::on_a2a3() && in == D::BF16 ? D::FP32 : in;
    if (p.bias.dtype() != want)
      fail<DTypeError>(kConv, ": bias_tensor dtype ", dtype_name(p.bias.dtype()), " does not go with ", dtype_name(in),
                       " operands on platform ", current_platform().name, "; allowed: ", dtype_name(want));
    if (p.bias.ndim() != 1 || p.bias.shape(0) != p.cout)
      fail<ArgumentError>(kConv, ": bias_tensor shape ", shape_to_string(p.bias.shape()), " must be [Cout] = [", p.cout, "]");
  }
  if (e.scale != 0 || e.scale_tensor.defined())
    fail<ArgumentError>(kConv, ": extend_params 'scale' and 'scale_tensor' are not supported: PyPTO's conv has no "
                        "quantisation yet (out_dtype is input_conv's dtype)");
  if (e.relu_type != 0 && e.relu_type != 1)
    fail<ArgumentError>(kConv, ": relu_type ", e.relu_type,
                        " is not supported; allowed: ConvReLuType.NO_RELU (0), RELU (1)");
  p.relu = e.relu_type == 1;
  const size_t nd = static_cast<size_t>(p.nd);
  if (strides.size() != nd || dilations.size() != nd || paddings.size() != 2 * nd)
    fail<ArgumentError>(kConv, ": a ", nd, "-D convolution takes ", nd, " strides, ", nd, " dilations and ", 2 * nd,
                        " paddings (before and after, per dim); got ", strides.size(), ", ", dilations.size(), " and ",
                        paddings.size());
  check_range("strides", strides, 1, kMaxStride);
  check_range("dilations", dilations, 1, kMaxStride);
  check_range("paddings", paddings, 0, kMaxPadKernel);
  static const char* const kNames[] = {"D", "H", "W"};
  for (int d = 0; d < p.nd; ++d) {
    const int64_t k = p.weight.shape(2 + d);
    if (paddings[2 * d] >= k || paddings[2 * d + 1] >= k)
      fail<ArgumentError>(kConv, ": paddings ", paddings[2 * d], " and ", paddings[2 * d + 1], " of dim ",
                          kNames[3 - p.nd + d], " must each be < the kernel's ", k);
  }
  p.groups = o.groups;
  if (p.groups < 1 || p.groups > kMaxInner)
    fail<ArgumentError>(kConv, ": groups ", p.groups, " must be in [1, ", kMaxInner, "]");
  const int64_t cin = p.input.shape(1);
  if (cin % p.groups != 0 || p.cout % p.groups != 0)
    fail<ArgumentError>(kConv, ": groups ", p.groups, " must divide Cin (", cin, ") and Cout (", p.cout, ")");
  if (cin != p.weight.shape(1) * p.groups)
    fail<ArgumentError>(kConv, ": input_conv's Cin ", cin, " must be weight's Cin ", p.weight.shape(1), " * groups ",
                        p.groups);
  p.g.channels = p.weight.shape(1);
  p.g.stride = as_3d(strides, p.nd, 1);
  p.g.dilation = as_3d(dilations, p.nd, 1);
  for (int d = 0; d < p.nd; ++d) {
    const int at = 3 - p.nd + d;
    p.g.in[at] = p.input.shape(2 + d);
    p.g.kernel[at] = p.weight.shape(2 + d);
    p.g.pad_before[at] = paddings[2 * d];
    p.pad_after[at] = paddings[2 * d + 1];
  }
  const int64_t kh = p.g.kernel[1], kw = p.g.kernel[2];
  if (kh > kMaxPadKernel || kw > kMaxPadKernel)
    fail<ArgumentError>(kConv, ": weight shape ", shape_to_string(p.weight.shape()), " has a kernel of kh ", kh, ", kw ", kw,
                        "; each must be <= ", kMaxPadKernel);
  const int64_t c0 = kAlign / static_cast<int64_t>(dtype_size(in));
  if (kh * kw * c0 > kMaxInner)
    fail<ArgumentError>(kConv, ": weight shape ", shape_to_string(p.weight.shape()), ": kh * kw * C0 = ", kh, " * ", kw, " * ", c0,
                        " = ", kh * kw * c0, " must be <= ", kMaxInner, " (C0 = 32 bytes / ", dtype_size(in), ")");
  p.out_shape = {p.batch, p.cout};
  for (int d = 0; d < p.nd; ++d) {
    const int at = 3 - p.nd + d;
    const int64_t span = p.g.dilation[at] * (p.g.kernel[at] - 1) + 1;
    const int64_t padded = p.g.in[at] + paddings[2 * d] + paddings[2 * d + 1];
    const int64_t out = padded >= span ? (padded - span) / p.g.stride[at] + 1 : 0;
    if (out < 1 || out > kMaxDim)
      fail<ArgumentError>(kConv, ": output dim ", kNames[at], " = (", p.g.in[at], " + ", paddings[2 * d], " + ",
                          paddings[2 * d + 1], " - ", span, ") / ", p.g.stride[at], " + 1 = ", out,
                          " must be in [1, ", kMaxDim, "] (input ", shape_to_string(p.input.shape()), ", weight ",
                          shape_to_string(p.weight.shape()), ")");
    p.g.out[at] = out;
    p.out_shape.push_back(out);
  }
  check_conv_tile(p);
  checks::check_extent(kConv, "output", p.out_shape, false);
  return p;
}

// Whether t's dims from `first` on collapse into one run of unit stride (a matrix's columns).
bool collapses(const Tensor& t, int first) {
  int64_t expect = 1;
  for (int d = t.ndim() - 1; d >= first; --d) {
    if (t.shape(d) != 1 && t.stride(d) != expect) return false;
    expect *= t.shape(d);
  }
  return true;
}

// The patch matrices of one product are built about this large, so that they are still in the
// cache when the product reads them: whole images when one fits (and one per thread at least),
// else blocks of output lines ((od, oh) pairs) of at least 2048 columns (several of the product's
// 512-column blocks, for its threads). The line blocks, which set each product's columns and so
// the order of its sums, depend on the shapes only.
constexpr int64_t kPatchBytes = int64_t(8) << 20;
constexpr int64_t kMinDirectProducts = int64_t(1) << 22;
constexpr int64_t kMinColumns = 2048;
constexpr int64_t kDepthwiseLine = 32, kMaxDepthwiseSmall = int64_t(1) << 17;

// The convolution for kernels::conv's direct kernels (oneDNN's, the depthwise one).
kernels::conv::Direct direct_of(const Plan& p, Tensor& out) {
  kernels::conv::Direct d;
  d.nd = p.nd;
  d.batch = p.batch;
  d.cin = p.input.shape(1);
  d.cout = p.cout;
  d.groups = p.groups;
  d.g = p.g;
  d.pad_after = p.pad_after;
  d.dtype = p.input.dtype();
  d.input = static_cast<const std::byte*>(p.input.data());
  d.weight = static_cast<const std::byte*>(p.weight.data());
  for (int i = 0; i < 2 + p.nd; ++i) {
    d.input_strides[i] = p.input.stride(i);
    d.weight_strides[i] = p.weight.stride(i);
  }
  if (p.bias.defined()) {
    d.bias = static_cast<const std::byte*>(p.bias.data());
    d.bias_dtype = p.bias.dtype();
    d.bias_stride = p.bias.stride(0);
  }
  d.relu = p.relu;
  d.out = static_cast<std::byte*>(out.data());
  d.out_dtype = out.dtype();
  return d;
}

void run_conv(const Plan& p, Tensor& out) {
  const int64_t groups = p.groups, cg = p.cout / groups, k = p.g.k(), m = p.g.m();
  const Tensor& input = p.input;
  const int64_t in_size = static_cast<int64_t>(input.itemsize());
  const int64_t out_size = static_cast<int64_t>(out.itemsize());
  // A 1 x 1 kernel with stride 1 and no padding reads the input itself as its patch matrix when the
  // spatial dims of each channel collapse into one run.
  const bool no_patches =
      p.g.kernel == std::array<int64_t, 3>{1, 1, 1} && p.g.stride == std::array<int64_t, 3>{1, 1, 1} &&
      p.g.pad_before == std::array<int64_t, 3>{0, 0, 0} && collapses(input, 2);
  // Anything else from kMinDirectProducts products on goes to oneDNN's direct convolution first.
  // The product above is faster on the 1 x 1 case (0.5 against 1.0 ms on the sweep's [8, 256, 28,
  // 28] * [64, 256, 1, 1]), and the patches on small convolutions, where oneDNN's set-up (primitive
  // descriptors, reorders: 70-100 us) dominates.
  using kernels::conv::Path;
  const Path path = kernels::conv::requested_path();
  const int64_t products = p.batch * p.cout * m * k;
  // One input channel per group: a stencil per plane, no set-up and no reorders
  // (docs/ops/conv.md#the-depthwise-kernel). Faster than the patches at every size; than oneDNN on
  // lines of unit stride at least two AVX-512 registers long, and on small convolutions (oneDNN's
  // set-up); else oneDNN's kernel, whatever the size.
  const bool depthwise = p.g.channels == 1;
  const bool wide_lines = p.g.stride[2] == 1 && p.g.out[2] >= kDepthwiseLine;
  if (depthwise && (path == Path::Depthwise || (path == Path::Auto && (wide_lines || products < kMaxDepthwiseSmall)))) {
    kernels::conv::run_depthwise(direct_of(p, out));
    return;
  }
  const bool try_direct = path == Path::OneDnn || (path == Path::Auto && (depthwise || products >= kMinDirectProducts));
  if (!no_patches && try_direct && kernels::conv::run_direct(direct_of(p, out))) return;
  const Tensor weight = collapses(p.weight, 1) ? p.weight : p.weight.contiguous();
  const int64_t w_size = static_cast<int64_t>(weight.itemsize());
  const int64_t all_lines = p.g.out[0] * p.g.out[1], line = p.g.out[2];
  const int64_t per_line = groups * k * line * static_cast<int64_t>(sizeof(float));  // one image's
  const int64_t per_image = per_line * all_lines;
  int64_t images = p.batch, lines = all_lines;
  if (!no_patches) {
    // At least one (image, group) product per thread (the image count changes no sum).
    const int64_t per_thread = (get_num_threads() + groups - 1) / groups;
    images = std::clamp<int64_t>(std::max(kPatchBytes / std::max<int64_t>(per_image, 1), per_thread), 1, p.batch);
    if (per_image > kPatchBytes)
      lines = std::clamp<int64_t>(std::max(kPatchBytes / std::max<int64_t>(per_line, 1), (kMinColumns + line - 1) / line),
                                  1, all_lines);
  }
  // The storage allocator's cache keeps the block mapped between calls (no page faults per call).
  const std::shared_ptr<void> scratch =
      no_patches ? nullptr : allocate_storage(static_cast<size_t>(images * per_line * lines), false);
  float* const patches = static_cast<float*>(scratch.get());
  for (int64_t n0 = 0; n0 < p.batch; n0 += images) {
    const int64_t count = std::min(images, p.batch - n0), batches = count * groups;
    kernels::matmul::Offsets weight_offsets(static_cast<size_t>(batches), 0), image_offsets(static_cast<size_t>(batches), 0);
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t image = n0 + b / groups, group = b % groups;
      weight_offsets[b] = group * cg * weight.stride(0) * w_size;
      image_offsets[b] = (image * input.stride(0) + group * p.g.channels * input.stride(1)) * in_size;
    }
    for (int64_t l0 = 0; l0 < all_lines; l0 += lines) {
      const int64_t n_lines = std::min(lines, all_lines - l0), cols = n_lines * line;
      kernels::matmul::Problem q;
      q.batches = batches;
      q.m = cg;
      q.n = cols;
      q.k = k;
      q.a.data = static_cast<const std::byte*>(weight.data());
      q.a.dtype = weight.dtype();
      q.a.offsets = weight_offsets;
      q.a.row_stride = weight.stride(0);
      q.a.col_stride = 1;
      if (no_patches) {
        q.b.data = static_cast<const std::byte*>(input.data());
        q.b.dtype = input.dtype();
        q.b.offsets = image_offsets;
        q.b.row_stride = input.stride(1);
      } else {
        kernels::conv::Source src;
        src.data = static_cast<const std::byte*>(input.data());
        src.dtype = input.dtype();
        src.offsets.assign(image_offsets.begin(), image_offsets.end());
        src.channel_stride = input.stride(1);
        for (int d = 0; d < p.nd; ++d) src.strides[3 - p.nd + d] = input.stride(2 + d);
        kernels::conv::im2col(src, p.g, l0, n_lines, patches);
        q.b.data = reinterpret_cast<const std::byte*>(patches);
        q.b.dtype = D::FP32;
        for (int64_t b = 0; b < batches; ++b) q.b.offsets.push_back(b * k * cols * static_cast<int64_t>(sizeof(float)));
        q.b.row_stride = cols;
      }
      q.b.col_stride = 1;
      if (p.bias.defined()) {
        q.bias.data = static_cast<const std::byte*>(p.bias.data());
        q.bias.dtype = p.bias.dtype();
        q.bias.stride = p.bias.stride(0);
        for (int64_t b = 0; b < batches; ++b)
          q.bias.offsets.push_back(b % groups * cg * p.bias.stride(0) * static_cast<int64_t>(p.bias.itemsize()));
        q.bias_by_row = true;
      }
      q.relu = p.relu;
      q.out = static_cast<std::byte*>(out.data()) + (n0 * p.cout * m + l0 * line) * out_size;
      q.out_dtype = out.dtype();
      q.out_batch_stride = cg * m;
      q.out_row_stride = m;
      kernels::matmul::run(q);
    }
  }
}

// extend_params as the binding gives it (every field, defaults filled in); None from C++ callers.
ConvOptions conv_options(const Args& a) {
  ConvOptions o;
  o.groups = a.integer(6);
  o.transposed = a.flag(7);
  if (!a.is_none(8)) o.output_paddings = a.ints(8);
  if (std::holds_alternative<Fields>(a[9])) o.extend = extend_of(a.fields(9));
  return o;
}

}  // namespace

Tensor conv(const Tensor& input_conv, const Tensor& weight, DType out_dtype, const std::vector<int64_t>& strides,
            const std::vector<int64_t>& paddings, const std::vector<int64_t>& dilations, const ConvOptions& options) {
  const Plan p = plan_conv(input_conv, weight, out_dtype, strides, paddings, dilations, options);
  Tensor out = Tensor::empty(p.out_shape, out_dtype);
  run_conv(p, out);
  return out;
}

void families::add_conv(std::vector<OpDef>& table) {
  const DTypeSet floats{D::FP16, D::BF16, D::FP32};
  const std::span<const Param> extend{kExtendFields};
  table.push_back(OpDef{
      .name = kConv,
      .params = {{"input_conv", ParamKind::Tensor},
                 {"weight", ParamKind::Tensor},
                 {"out_dtype", ParamKind::DType},
                 {"strides", ParamKind::IntList},
                 {"paddings", ParamKind::IntList},
                 {"dilations", ParamKind::IntList},
                 {"groups", ParamKind::Int, "1", true},
                 {"transposed", ParamKind::Bool, "False", true},
                 {"output_paddings", ParamKind::IntList, "None", true},
                 {.name = "extend_params", .kind = ParamKind::Dict, .default_value = "None", .keyword_only = true,
                  .fields = extend}},
      .doc_page = "docs/ops/conv.md",
      .tile_rule = "set_conv_tile_shapes(tile_l1_info, tile_l0_info) (required on the chips): ranges and alignments "
                   "against the operands; L0A, L0B, L0C (with an L0 tile) and L1 bytes on the platform",
      .limits = platform_rows(floats, floats, floats, floats, 3, 5, 3, 5),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {conv(a.tensor(0), a.tensor(1), a.dtype(2), a.ints(3), a.ints(4), a.ints(5), conv_options(a))};
      },
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        const checks::EveryPlatformScope every_platform;
        const Plan p = plan_conv(a.tensor(0), a.tensor(1), a.dtype(2), a.ints(3), a.ints(4), a.ints(5), conv_options(a));
        return {{p.out_shape, a.dtype(2)}};
      },
      .bytes = bytes_of_valid_parts,
  });
}

}  // namespace pto
