// The cube unit (docs/ops/matmul.md): matmul, scaled_mm and experimental.transposed_batchmatmul.
// Each call checks what the device checks (the dtype tables, ranks, batch broadcasting, the
// extend_params rules, the cube tile and its buffers on the platform), then builds one
// kernels::matmul::Problem: operands as strided views, per-batch offsets, the fixpipe's steps.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "kernels/matmul.h"
#include "ops/checks.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/tiling.h"

namespace pto {
namespace {

using checks::round_up;

using D = DType;
constexpr const char* kMatmul = "matmul";
constexpr const char* kScaledMm = "scaled_mm";
constexpr const char* kTransposedBmm = "transposed_batchmatmul";

// ---- the dtype tables (docs/ops/matmul.md#dtypes) ------------------------------------------------

bool is_fp8(D d) { return d == D::FP8E4M3 || d == D::FP8E5M2; }
// scaled_mm's operands: fp8 and FP4 E2M1 (two values per byte on the device; one per byte here).
bool is_mx_input(D d) { return is_fp8(d) || d == D::FP4_E2M1; }

// One input dtype: the right operand's dtypes, the output dtypes of a plain product (every input
// also quantises to DT_INT8 with a scale, and DT_INT8 dequantises to DT_FP16), the bias dtypes on
// ascend950 (and cpu) and on Atlas A2 / A3 (empty: the input is not offered there).
struct DTypeRow {
  D input;
  DTypeSet mat2, out, bias_950, bias_a2a3;
  bool scaled_only = false;  // an input of scaled_mm alone (its MX scales), not of matmul
};
constexpr DTypeRow kDTypeRows[] = {
    {D::FP16, {D::FP16}, {D::FP16, D::FP32}, {D::FP16, D::FP32}, {D::FP16, D::FP32}},
    {D::BF16, {D::BF16}, {D::BF16, D::FP32}, {D::BF16, D::FP32}, {D::FP32}},
    {D::FP32, {D::FP32}, {D::FP32}, {D::FP32}, {D::FP32}},
    {D::INT8, {D::INT8}, {D::INT32}, {D::INT32}, {D::INT32}},
    {D::FP8E5M2, {D::FP8E5M2, D::FP8E4M3}, {D::FP16, D::BF16, D::FP32}, {D::FP16, D::BF16, D::FP32}, {}},
    {D::FP8E4M3, {D::FP8E5M2, D::FP8E4M3}, {D::FP16, D::BF16, D::FP32}, {D::FP16, D::BF16, D::FP32}, {}},
    {D::HF8, {D::HF8}, {D::FP16, D::BF16, D::FP32}, {D::FP16, D::BF16, D::FP32}, {}},
    {D::FP4_E2M1, {D::FP4_E2M1}, {D::FP16, D::BF16, D::FP32}, {D::FP16, D::BF16, D::FP32}, {}, true},
};

const DTypeRow* row_of(D input) {
  for (const DTypeRow& r : kDTypeRows)
    if (r.input == input) return &r;
  return nullptr;
}

// matmul's inputs on the platforms (a2a3: Atlas A2 / A3), or scaled_mm's (scaled).
DTypeSet inputs(bool a2a3, bool scaled = false) {
  DTypeSet s;
  for (const DTypeRow& r : kDTypeRows)
    if ((!a2a3 || !r.bias_a2a3.empty()) && (scaled ? is_mx_input(r.input) : !r.scaled_only)) s = s.with({r.input});
  return s;
}

// The fixpipe converts with a scale: any input to DT_INT8 (quant), DT_INT8 to DT_FP16 (dequant).
bool fixpipe_pair(D input, D out) { return out == D::INT8 || (input == D::INT8 && out == D::FP16); }

DTypeSet out_dtypes(D input) {
  const DTypeSet s = row_of(input)->out.with({D::INT8});
  return input == D::INT8 ? s.with({D::FP16}) : s;
}

// The chips' layout rules (ND axis bounds, NZ alignment) apply on platforms with a cube unit.
bool device_layout() { return current_platform().l0a_bytes > 0; }

// ---- extend_params ------------------------------------------------------------------------------

const Param kExtendFields[] = {
    {"bias_tensor", ParamKind::Tensor, "None"},
    {"scale", ParamKind::Scalar, "0.0"},
    {"scale_tensor", ParamKind::Tensor, "None"},
    {"relu_type", ParamKind::Int, "0", false, nullptr, "ReLuType | int"},
    {"trans_mode", ParamKind::Int, "0", false, nullptr, "TransMode | int"},
};

MatmulExtendParams extend_of(const Args& fields) {
  MatmulExtendParams e;
  if (fields.is_tensor(0)) e.bias_tensor = fields.tensor(0);
  const Scalar& s = fields.scalar(1);
  e.scale = s.kind == Scalar::Kind::Float ? s.f : static_cast<double>(s.i);
  if (fields.is_tensor(2)) e.scale_tensor = fields.tensor(2);
  e.relu_type = fields.integer(3);
  e.trans_mode = fields.integer(4);
  return e;
}

// ---- the checks ---------------------------------------------------------------------------------

// What a call multiplies: the valid parts of its operands and what the checks derived.
struct Plan {
  const char* op = "";
  Tensor a, b;  // as given: [.., M, K] ([.., K, M] when a_trans), [.., K, N] ([.., N, K] when b_trans)
  bool a_trans = false, b_trans = false;
  D out_dtype = D::FP32;
  MatmulExtendParams ext;
  int64_t m = 0, n = 0, k = 0;
  Shape batch;      // the output's batch dims
  Shape out_shape;  // batch, M, N
  bool scaled = false;
  bool c_matrix_nz = false;
};

void check_inner_outer(const Plan& p, const char* param, const Tensor& t) {
  if (!device_layout()) return;
  const Shape& s = t.shape();
  const int64_t inner = s.back(), outer = s[s.size() - 2];
  if (!t.nz_format()) {
    if (inner > 65535)
      fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " has an inner axis of ", inner,
                          "; an ND operand's inner axis is at most 65535");
    if (outer > 2147483647)
      fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " has an outer axis of ", outer,
                          "; an ND operand's outer axis is at most 2^31 - 1");
    return;
  }
  if (inner * static_cast<int64_t>(t.itemsize()) % 32 != 0)
    fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " is NZ with an inner axis of ", inner, " (",
                        inner * static_cast<int64_t>(t.itemsize()), " bytes); NZ needs it 32-byte aligned");
  if (outer % 16 != 0)
    fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " is NZ with an outer axis of ", outer,
                        "; NZ needs it a multiple of 16");
}

// The cube tile against the operands (docs/ops/matmul.md#tiles): its values, alignments, L1 / L0
// relations, then the bytes of each cube buffer on the platform.
void check_cube_tile(const Plan& p) {
  const CubeTile& t = get_cube_tile_shapes();
  const Platform& platform = current_platform();
  if (t.m.empty()) {
    if (platform.l0a_bytes == 0) return;  // cpu: no tile set, no tile rule
    fail<TileError>(p.op, ": no cube tile shape is set; call set_cube_tile_shapes(m, k, n) first (platform ",
                    platform.name, " needs one)");
  }
  const int64_t m0 = t.m[0], m1 = t.m[1], k0 = t.k[0], ka1 = t.k[1], kb1 = t.k[2], n0 = t.n[0], n1 = t.n[1];
  const auto tile = [&] {  // for messages only
    std::ostringstream s;
    s << "m=[" << m0 << ", " << m1 << "], k=[" << k0 << ", " << ka1 << ", " << kb1 << "], n=[" << n0 << ", " << n1 << "]";
    return s.str();
  };
  const auto bad = [&](auto... why) { fail<TileError>(p.op, ": cube tile ", tile(), ": ", why...); };
  if (std::min({m0, m1, k0, ka1, kb1, n0, n1}) <= 0) bad("every value must be > 0");
  if (k0 % 16 != 0 || n0 % 16 != 0) bad("kL0 and nL0 must be multiples of 16 elements");
  for (const auto& [l0, l1, names] : {std::tuple{k0, ka1, "kL0 <= kAL1 and kAL1 % kL0 == 0"},
                                      std::tuple{k0, kb1, "kL0 <= kBL1 and kBL1 % kL0 == 0"},
                                      std::tuple{n0, n1, "nL0 <= nL1 and nL1 % nL0 == 0"},
                                      std::tuple{m0, m1, "mL0 <= mL1 and mL1 % mL0 == 0"}})
    if (l0 > l1 || l1 % l0 != 0) bad("needs ", names);
  const int64_t sa = static_cast<int64_t>(p.a.itemsize()), sb = static_cast<int64_t>(p.b.itemsize());
  if (k0 * sa % 32 != 0) bad("kL0 * ", sa, " bytes of ", dtype_name(p.a.dtype()), " = ", k0 * sa, " is not 32-byte aligned");
  if (n0 * sb % 32 != 0) bad("nL0 * ", sb, " bytes of ", dtype_name(p.b.dtype()), " = ", n0 * sb, " is not 32-byte aligned");
  if (p.a_trans && !(p.a.nz_format() && device_layout()) && m0 * sa % 32 != 0)
    bad("a transposed ND input needs mL0 * ", sa, " bytes = ", m0 * sa, " 32-byte aligned");
  // NZ operands: the inner axis's L0 tile 32-byte aligned, the outer axis's a multiple of 16.
  const auto nz = [&](const Tensor& x, const char* inner, int64_t inner_v, const char* outer, int64_t outer_v) {
    if (!x.nz_format() || !device_layout()) return;
    if (inner_v * static_cast<int64_t>(x.itemsize()) % 32 != 0)
      bad("an NZ operand needs ", inner, " * ", x.itemsize(), " bytes 32-byte aligned");
    if (outer_v % 16 != 0) bad("an NZ operand needs ", outer, " a multiple of 16");
  };
  if (p.a_trans) nz(p.a, "mL0", m0, "kL0", k0);
  else nz(p.a, "kL0", k0, "mL0", m0);
  if (p.b_trans) nz(p.b, "kL0", k0, "nL0", n0);
  else nz(p.b, "nL0", n0, "kL0", k0);
  const int64_t kl1_min = std::min(ka1, kb1), kl1_max = std::max(ka1, kb1);
  if (kl1_max < p.k && kl1_max % kl1_min != 0)
    bad("with K = ", p.k, " above max(kAL1, kBL1), the larger must be a multiple of the smaller");
  if (kl1_min % k0 != 0) bad("min(kAL1, kBL1) must be a multiple of kL0");
  if (p.scaled && k0 % 64 != 0) bad("scaled_mm needs kL0 a multiple of 64");

  // The buffers: tiles clipped to the product's M, K, N (the device's tiling loops move at most
  // what is left of the matrix: min(tile, extent - offset)), padded to the cube's fractal (16
  // elements; 32 for 1-byte operands); the accumulator 4 bytes per element (fp32, int32 for int8).
  if (platform.l0a_bytes == 0) return;
  const int64_t cm0 = std::min(m0, p.m), cm1 = std::min(m1, p.m), ck0 = std::min(k0, p.k), cka1 = std::min(ka1, p.k),
                ckb1 = std::min(kb1, p.k), cn0 = std::min(n0, p.n), cn1 = std::min(n1, p.n);
  const int64_t fa = checks::cube_fractal(sa), fb = checks::cube_fractal(sb), fc = std::max(fa, fb);
  // formula(): the bytes' terms, for the message only.
  const auto need = [&](const char* buffer, int64_t bytes, int64_t limit, const auto& formula) {
    if (bytes > limit)
      fail<TileError>(p.op, ": cube tile ", tile(), " needs ", bytes, " bytes of ", buffer, " (", formula(),
                      ") but platform ", platform.name, " has ", limit);
  };
  const auto str = [](auto... parts) {
    return [=] {
      std::ostringstream s;
      (s << ... << parts);
      return s.str();
    };
  };
  need("L0A", round_up(cm0, fa) * round_up(ck0, fa) * sa, platform.l0a_bytes,
       str("align(mL0) ", round_up(cm0, fa), " * align(kL0) ", round_up(ck0, fa), " * ", sa, " bytes"));
  need("L0B", round_up(cn0, fb) * round_up(ck0, fb) * sb, platform.l0b_bytes,
       str("align(nL0) ", round_up(cn0, fb), " * align(kL0) ", round_up(ck0, fb), " * ", sb, " bytes"));
  need("L0C", round_up(cm0, fc) * round_up(cn0, fc) * 4, platform.l0c_bytes,
       str("align(mL0) ", round_up(cm0, fc), " * align(nL0) ", round_up(cn0, fc), " * 4 bytes"));
  need("L1", round_up(cm1, fa) * round_up(cka1, fa) * sa + round_up(cn1, fb) * round_up(ckb1, fb) * sb, platform.l1_bytes,
       str("align(mL1) ", round_up(cm1, fa), " * align(kAL1) ", round_up(cka1, fa), " * ", sa, " + align(nL1) ",
           round_up(cn1, fb), " * align(kBL1) ", round_up(ckb1, fb), " * ", sb, " bytes"));
  if (p.ext.bias_tensor.defined())
    need("bias table", cn0 * 4, platform.bias_table_bytes, str("nL0 ", cn0, " * 4 bytes"));
  if (p.ext.scale_tensor.defined())
    need("fixpipe buffer", cn0 * 8, platform.fixpipe_bytes, str("nL0 ", cn0, " * 8 bytes"));
}

// bias_tensor / scale_tensor: [.., 1, N], ND; 2-D, or of the product's rank with batch dims equal to
// the output's or 1 (a 4-D product takes a 2-D bias only).
void check_column(const Plan& p, const char* param, const Tensor& t) {
  const Shape& s = t.shape();
  if (t.nz_format() && device_layout()) fail<ArgumentError>(p.op, ": ", param, " must be ND, not NZ");
  if (s.size() < 2 || s[s.size() - 2] != 1)
    fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " must be [.., 1, N] (rank >= 2, second-last dim 1)");
  if (s.back() != p.n)
    fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " must end in N = ", p.n, " (mat2's columns)");
  const size_t rank = p.batch.size() + 2;
  if (s.size() == 2) return;
  const bool bias = std::string_view(param) == "bias_tensor";  // a 4-D product takes a 2-D bias only
  if ((bias && rank == 4) || s.size() != rank)
    fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " does not fit a ", rank, "-D product: a 2-D one, or ",
                        bias ? "(3-D products) a 3-D one" : "one of the product's rank", " with the output's batch or 1");
  for (size_t d = 0; d < p.batch.size(); ++d)
    if (s[d] != p.batch[d] && s[d] != 1)
      fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s), " has batch ", s[d], " where the output has ",
                          p.batch[d], "; it must be equal or 1");
}

void check_extend(Plan& p) {
  const MatmulExtendParams& e = p.ext;
  const D in = p.a.dtype(), out = p.out_dtype;
  const bool split_k = get_cube_tile_shapes().enable_split_k;
  if (e.relu_type != 0 && e.relu_type != 1)
    fail<ArgumentError>(p.op, ": relu_type ", e.relu_type, " is not supported; allowed: ReLuType.NO_RELU (0), RELU (1)");
  if (e.trans_mode < 0 || e.trans_mode > 2)
    fail<ArgumentError>(p.op, ": trans_mode ", e.trans_mode,
                        " is not supported; allowed: TransMode.CAST_NONE (0), CAST_RINT (1), CAST_ROUND (2)");
  if (e.bias_tensor.defined()) {
    const DTypeRow& row = *row_of(p.b.dtype());
    const DTypeSet allowed = checks::on_a2a3() ? row.bias_a2a3 : row.bias_950;
    if (!allowed.contains(e.bias_tensor.dtype()))
      fail<DTypeError>(p.op, ": bias_tensor dtype ", dtype_name(e.bias_tensor.dtype()), " does not go with ",
                       dtype_name(p.b.dtype()), " operands on platform ", current_platform().name,
                       "; allowed: ", allowed.to_string());
    checks::check_extent(p.op, "bias_tensor", e.bias_tensor.shape(), true);
    check_column(p, "bias_tensor", e.bias_tensor);
  }
  const bool fixpipe = fixpipe_pair(in, out);
  if (e.scale_tensor.defined()) {
    const D st = e.scale_tensor.dtype();
    if (st != D::INT64 && st != D::UINT64)
      fail<DTypeError>(p.op, ": scale_tensor dtype ", dtype_name(st),
                       " is not supported; allowed: DT_INT64, DT_UINT64 (the low 32 bits hold the fp32 scale)");
    if (!fixpipe)
      fail<DTypeError>(p.op, ": scale_tensor needs DT_INT8 operands with out_dtype DT_FP16, or out_dtype DT_INT8; got ",
                       dtype_name(in), " to ", dtype_name(out));
    checks::check_extent(p.op, "scale_tensor", e.scale_tensor.shape(), true);
    check_column(p, "scale_tensor", e.scale_tensor);
  }
  const bool has_scale = std::fabs(e.scale) > 1e-6;  // the device's test: |scale| > 1e-6
  if (has_scale && !fixpipe)
    fail<DTypeError>(p.op, ": scale needs DT_INT8 operands with out_dtype DT_FP16, or out_dtype DT_INT8; got ",
                     dtype_name(in), " to ", dtype_name(out));
  if (fixpipe && !has_scale && !e.scale_tensor.defined())
    fail<ArgumentError>(p.op, ": ", dtype_name(in), " to ", dtype_name(out),
                        " goes through the fixpipe's scale: give extend_params 'scale' (non-zero) or 'scale_tensor'");
  if (e.trans_mode != 0) {
    if (checks::on_a2a3())
      fail<ArgumentError>(p.op, ": trans_mode (TF32) is not supported on platform ", current_platform().name);
    if (in != D::FP32 || out != D::FP32)
      fail<DTypeError>(p.op, ": trans_mode needs DT_FP32 operands and out_dtype DT_FP32; got ", dtype_name(in), " to ",
                       dtype_name(out));
  }
  if (split_k) {
    if (out != D::FP32 && out != D::INT32)
      fail<ArgumentError>(p.op, ": enable_split_k needs out_dtype DT_FP32 or DT_INT32; got ", dtype_name(out));
    if (e.bias_tensor.defined() || has_scale || e.scale_tensor.defined() || e.relu_type != 0)
      fail<ArgumentError>(p.op, ": enable_split_k does not combine with bias_tensor, scale, scale_tensor or relu_type");
  }
}

// The checks every cube op shares, once p.a, p.b, the flags, out_dtype and extend_params are set.
void check_product(Plan& p, const OpLimits& limits) {
  const Tensor &a = p.a, &b = p.b;
  checks::check_dtype(p.op, p.scaled ? "mat_a" : "input", a.dtype(), limits.dtypes);
  const int ra = a.ndim(), rb = b.ndim();
  if (ra != rb || ra < 2 || ra > 4)
    fail<ArgumentError>(p.op, ": input rank ", ra, " and mat2 rank ", rb, " must be equal and in [2, 4]");
  const int64_t ka = p.a_trans ? a.shape(ra - 2) : a.shape(ra - 1);
  const int64_t kb = p.b_trans ? b.shape(rb - 1) : b.shape(rb - 2);
  if (ka != kb)
    fail<ArgumentError>(p.op, ": K of input (shape ", shape_to_string(a.shape()), ", a_trans ", p.a_trans, ") is ", ka,
                        " but K of mat2 (shape ", shape_to_string(b.shape()), ", b_trans ", p.b_trans, ") is ", kb);
  const MatmulExtendParams& e = p.ext;
  if (e.trans_mode != 0 && a.dtype() != D::FP32 && b.dtype() != D::FP32)
    fail<DTypeError>(p.op, ": trans_mode is only supported for DT_FP32 operands; got ", dtype_name(a.dtype()));
  if (e.bias_tensor.defined()) {
    const int rbias = e.bias_tensor.ndim();
    if ((ra == 3 && rbias != 2 && rbias != 3) || (ra == 4 && rbias != 2))
      fail<ArgumentError>(p.op, ": bias_tensor rank ", rbias, " does not fit a ", ra,
                          "-D product (3-D: a 2-D or 3-D bias; 4-D: a 2-D bias)");
  }
  if (p.c_matrix_nz) fail<ArgumentError>(p.op, ": c_matrix_nz=True is not supported; the output is always ND");
  for (const Tensor* x : {&a, &b})
    if (x->nz_format() && device_layout() && (x->dtype() == D::FP32 || x->dtype() == D::FP8E5M2 || x->dtype() == D::HF8))
      fail<ArgumentError>(p.op, ": an operand of dtype ", dtype_name(x->dtype()), " must be ND; NZ is not supported");
  if (!(is_fp8(a.dtype()) && is_fp8(b.dtype())) && a.dtype() != b.dtype())
    fail<DTypeError>(p.op, ": input dtype ", dtype_name(a.dtype()), " and mat2 dtype ", dtype_name(b.dtype()),
                     " must be equal (only the two fp8 dtypes mix)");
  if (!row_of(a.dtype())->mat2.contains(b.dtype()))
    fail<DTypeError>(p.op, ": mat2 dtype ", dtype_name(b.dtype()), " does not go with input dtype ",
                     dtype_name(a.dtype()), "; allowed: ", row_of(a.dtype())->mat2.to_string());
  if (!out_dtypes(a.dtype()).contains(p.out_dtype))
    fail<DTypeError>(p.op, ": out_dtype ", dtype_name(p.out_dtype), " is not supported for ", dtype_name(a.dtype()),
                     " operands; allowed: ", out_dtypes(a.dtype()).to_string());
  checks::check_extent(p.op, p.scaled ? "mat_a" : "input", a.shape(), true);
  checks::check_extent(p.op, p.scaled ? "mat_b" : "mat2", b.shape(), true);
  for (int d = 0; d < ra - 2; ++d) {
    if (a.shape(d) != b.shape(d) && a.shape(d) != 1 && b.shape(d) != 1)
      fail<ArgumentError>(p.op, ": batch dim ", d, " of input (", a.shape(d), ") and mat2 (", b.shape(d),
                          ") must be equal or 1");
    p.batch.push_back(std::max(a.shape(d), b.shape(d)));
  }
  p.m = p.a_trans ? a.shape(ra - 1) : a.shape(ra - 2);
  p.n = p.b_trans ? b.shape(rb - 2) : b.shape(rb - 1);
  p.k = ka;
  check_cube_tile(p);
  check_inner_outer(p, p.scaled ? "mat_a" : "input", a);
  check_inner_outer(p, p.scaled ? "mat_b" : "mat2", b);
  check_extend(p);
  p.out_shape.reserve(p.batch.size() + 2);
  p.out_shape = p.batch;
  p.out_shape.push_back(p.m);
  p.out_shape.push_back(p.n);
  checks::check_extent(p.op, "output", p.out_shape, false);
}

// ---- the kernel's problem -----------------------------------------------------------------------

// Byte offset of each output batch in t (a batch dim of 1 repeats), t's batch dims being the last
// `batch.size()` before its matrix dims (fewer: broadcast).
kernels::matmul::Offsets batch_offsets(const Tensor& t, const Shape& batch) {
  const int lead = t.ndim() - 2 - static_cast<int>(batch.size());
  kernels::matmul::Offsets out(static_cast<size_t>(std::max<int64_t>(shape_numel(batch), 1)), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t rest = static_cast<int64_t>(i), off = 0;
    for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      const int td = d + lead;
      if (td >= 0 && t.shape(td) != 1) off += idx * t.stride(td);
    }
    out[i] = off * static_cast<int64_t>(t.itemsize());
  }
  return out;
}

kernels::matmul::Operand operand(const Tensor& t, bool trans, const Shape& batch) {
  const int r = t.ndim();
  kernels::matmul::Operand op;
  op.data = static_cast<const std::byte*>(t.data());
  op.dtype = t.dtype();
  op.offsets = batch_offsets(t, batch);
  op.row_stride = trans ? t.stride(r - 1) : t.stride(r - 2);
  op.col_stride = trans ? t.stride(r - 2) : t.stride(r - 1);
  return op;
}

kernels::matmul::Column column(const Tensor& t, const Shape& batch) {
  kernels::matmul::Column c;
  if (!t.defined()) return c;
  c.data = static_cast<const std::byte*>(t.data());
  c.dtype = t.dtype();
  c.offsets = batch_offsets(t, batch);
  c.stride = t.stride(t.ndim() - 1);
  return c;
}

kernels::matmul::Problem problem(const Plan& p, Tensor& out) {
  kernels::matmul::Problem q;
  q.batches = std::max<int64_t>(shape_numel(p.batch), 1);
  q.m = p.m;
  q.n = p.n;
  q.k = p.k;
  q.a = operand(p.a, p.a_trans, p.batch);
  q.b = operand(p.b, p.b_trans, p.batch);
  q.bias = column(p.ext.bias_tensor, p.batch);
  q.relu = p.ext.relu_type == 1;
  q.scale = std::fabs(p.ext.scale) > 1e-6 ? kernels::matmul::scale_19bit(static_cast<float>(p.ext.scale)) : 0.0f;
  q.scale_tensor = column(p.ext.scale_tensor, p.batch);
  q.tf32 = static_cast<TransMode>(p.ext.trans_mode);
  const CubeTile& tile = get_cube_tile_shapes();
  if (tile.enable_split_k) q.split_k = std::min(tile.k[1], tile.k[2]);
  q.out = static_cast<std::byte*>(out.data());
  q.out_dtype = out.dtype();
  q.out_batch_stride = p.m * p.n;
  q.out_row_stride = p.n;
  return q;
}

Plan plan_matmul(const char* op, const Tensor& input, const Tensor& mat2, D out_dtype, bool a_trans, bool b_trans,
                 bool c_matrix_nz, const MatmulExtendParams& ext, bool scaled = false) {
  const OpLimits& limits = require_offered(op_def(op));
  Plan p;
  p.op = op;
  p.a = input.valid_part();
  p.b = mat2.valid_part();
  p.a_trans = a_trans;
  p.b_trans = b_trans;
  p.out_dtype = out_dtype;
  p.ext = ext;
  for (Tensor* t : {&p.ext.bias_tensor, &p.ext.scale_tensor})
    if (t->defined()) *t = t->valid_part();  // only the valid part is read, as of the operands
  p.scaled = scaled;
  p.c_matrix_nz = c_matrix_nz;
  check_product(p, limits);
  return p;
}

// ---- scaled_mm's MX scales ----------------------------------------------------------------------

// A scale tensor as [rows, ceil(K / 64), 2], contiguous (rows: M for scale_a, N for scale_b).
Tensor mx_scales(const Plan& p, const char* param, const Tensor& given, bool rows_first, int64_t rows) {
  const Tensor s = given.valid_part();
  if (s.dtype() != D::FP8E8M0)
    fail<DTypeError>(p.op, ": ", param, " dtype ", dtype_name(s.dtype()), " is not supported; allowed: DT_FP8E8M0");
  if (s.ndim() != 3)
    fail<ArgumentError>(p.op, ": ", param, " rank ", s.ndim(), " must be 3 ([rows, ceil(K / 64), 2] or its trans)");
  const int64_t k64 = (p.k + 63) / 64;
  const int64_t got_rows = rows_first ? s.shape(0) : s.shape(1), got_k = rows_first ? s.shape(1) : s.shape(0);
  if (s.shape(2) != 2 || got_k != k64 || got_rows != rows)
    fail<ArgumentError>(p.op, ": ", param, " shape ", shape_to_string(s.shape()), " must be ",
                        rows_first ? shape_to_string({rows, k64, 2}) : shape_to_string({k64, rows, 2}), " for ", rows, " rows and K = ", p.k,
                        " (one scale per 32 elements of K)");
  const Tensor canonical = rows_first ? s : s.as_strided({rows, k64, 2}, {s.stride(1), s.stride(0), s.stride(2)}, 0);
  return canonical.contiguous();
}

}  // namespace

Tensor matmul(const Tensor& input, const Tensor& mat2, DType out_dtype, const MatmulOptions& options) {
  const Plan p = plan_matmul(kMatmul, input, mat2, out_dtype, options.a_trans, options.b_trans, options.c_matrix_nz,
                             options.extend);
  Tensor out = Tensor::empty(p.out_shape, out_dtype);
  kernels::matmul::run(problem(p, out));
  return out;
}

Tensor scaled_mm(const Tensor& mat_a, const Tensor& mat_b, DType out_dtype, const Tensor& scale_a,
                 const Tensor& scale_b, const ScaledMmOptions& options) {
  const Plan p = plan_matmul(kScaledMm, mat_a, mat_b, out_dtype, options.a_trans, options.b_trans,
                             options.c_matrix_nz, options.extend, true);
  if (options.extend.scale_tensor.defined() && options.extend.scale_tensor.ndim() != 2)
    fail<ArgumentError>(kScaledMm, ": scale_tensor rank ", options.extend.scale_tensor.ndim(), " must be 2");
  if (options.extend.bias_tensor.defined() && p.batch.size() != 1 && options.extend.bias_tensor.ndim() != 2)
    fail<ArgumentError>(kScaledMm, ": bias_tensor rank ", options.extend.bias_tensor.ndim(), " must be 2 for a ",
                        p.batch.size() + 2, "-D product");
  // The device packs two FP4 values per byte along an operand's inner (last) axis.
  for (const auto& [name, x] : {std::pair{"mat_a", &p.a}, std::pair{"mat_b", &p.b}})
    if (x->dtype() == D::FP4_E2M1 && x->shape(x->ndim() - 1) % 2 != 0)
      fail<ArgumentError>(kScaledMm, ": ", name, " shape ", shape_to_string(x->shape()), " is DT_FP4_E2M1 with an odd "
                          "inner axis; FP4 operands pack two values per byte along it, so it must be even");
  const Tensor sa = mx_scales(p, "scale_a", scale_a, !options.scale_a_trans, p.m);
  const Tensor sb = mx_scales(p, "scale_b", scale_b, options.scale_b_trans, p.n);
  Tensor out = Tensor::empty(p.out_shape, out_dtype);
  kernels::matmul::Problem q = problem(p, out);
  const int64_t k64 = sa.shape(1);
  q.a.scale = static_cast<const std::byte*>(sa.data());
  q.b.scale = static_cast<const std::byte*>(sb.data());
  q.a.scale_row = q.b.scale_row = 2 * k64;
  q.a.scale_k = q.b.scale_k = 1;
  kernels::matmul::run(q);
  return out;
}

Tensor transposed_batchmatmul(const Tensor& tensor_a, const Tensor& tensor_b, DType out_dtype) {
  const OpLimits& limits = require_offered(op_def(kTransposedBmm));
  const Tensor a = tensor_a.valid_part(), b = tensor_b.valid_part();
  checks::check_dtype(kTransposedBmm, "tensor_a", a.dtype(), limits.dtypes);
  checks::check_same_dtype(kTransposedBmm, "tensor_b", b.dtype(), "tensor_a", a.dtype());
  checks::check_dtype(kTransposedBmm, "out_dtype", out_dtype, limits.dtypes);
  if (a.ndim() != 3 || b.ndim() != 3)
    fail<ArgumentError>(kTransposedBmm, ": tensor_a rank ", a.ndim(), " and tensor_b rank ", b.ndim(),
                        " must both be 3 ([M, B, K] and [B, K, N])");
  if (a.shape(1) != b.shape(0) || a.shape(2) != b.shape(1))
    fail<ArgumentError>(kTransposedBmm, ": tensor_a shape ", shape_to_string(a.shape()), " ([M, B, K]) and tensor_b shape ",
                        shape_to_string(b.shape()), " ([B, K, N]) disagree on B or K");
  checks::check_extent(kTransposedBmm, "tensor_a", a.shape(), true);
  checks::check_extent(kTransposedBmm, "tensor_b", b.shape(), true);
  // Each batch is a plain [M, K] x [K, N] product under the cube tile.
  Plan p;
  p.op = kTransposedBmm;
  p.a = a.as_strided({a.shape(0), a.shape(2)}, {a.stride(0), a.stride(2)}, 0);
  p.b = b.as_strided({b.shape(1), b.shape(2)}, {b.stride(1), b.stride(2)}, 0);
  p.out_dtype = out_dtype;
  p.m = a.shape(0);
  p.n = b.shape(2);
  p.k = a.shape(2);
  check_cube_tile(p);
  const int64_t batches = a.shape(1);
  Tensor out = Tensor::empty({p.m, batches, p.n}, out_dtype);
  kernels::matmul::Problem q = problem(p, out);
  q.batches = batches;
  q.a.offsets.resize(static_cast<size_t>(batches));
  q.b.offsets.resize(static_cast<size_t>(batches));
  for (int64_t i = 0; i < batches; ++i) {
    q.a.offsets[i] = i * a.stride(1) * static_cast<int64_t>(a.itemsize());
    q.b.offsets[i] = i * b.stride(0) * static_cast<int64_t>(b.itemsize());
  }
  q.out_batch_stride = p.n;
  q.out_row_stride = batches * p.n;
  kernels::matmul::run(q);
  return out;
}

namespace {

// extend_params as the binding gives it (every field, defaults filled in); None from C++ callers.
MatmulExtendParams extend_arg(const Args& a, size_t i) {
  return std::holds_alternative<Fields>(a[i]) ? extend_of(a.fields(i)) : MatmulExtendParams{};
}

MatmulOptions matmul_options(const Args& a) { return {a.flag(3), a.flag(4), a.flag(5), extend_arg(a, 6)}; }

ScaledMmOptions scaled_options(const Args& a) {
  return {a.flag(5), a.flag(6), a.flag(7), a.flag(8), a.flag(9), extend_arg(a, 10)};
}

}  // namespace

void families::add_matmul(std::vector<OpDef>& table) {
  const DTypeSet all_inputs = inputs(false), a2a3_inputs = inputs(true);
  const std::span<const Param> extend{kExtendFields};
  const Param extend_param{.name = "extend_params", .kind = ParamKind::Dict, .default_value = "None",
                           .keyword_only = true, .fields = extend};
  table.push_back(OpDef{
      .name = kMatmul,
      .params = {{"input", ParamKind::Tensor},
                 {"mat2", ParamKind::Tensor},
                 {"out_dtype", ParamKind::DType},
                 {"a_trans", ParamKind::Bool, "False", true},
                 {"b_trans", ParamKind::Bool, "False", true},
                 {"c_matrix_nz", ParamKind::Bool, "False", true},
                 extend_param},
      .forms = kFunction | kMethod,
      .doc_page = "docs/ops/matmul.md",
      .tile_rule = "set_cube_tile_shapes(m, k, n) (required on the chips): alignments and L1 / L0 relations; "
                   "L0A, L0B, L0C, L1, bias table and fixpipe bytes on the platform",
      .limits = platform_rows(all_inputs, all_inputs, a2a3_inputs, a2a3_inputs, 2, 4, 2, 4),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {matmul(a.tensor(0), a.tensor(1), a.dtype(2), matmul_options(a))};
      },
      .infer = [](const OpDef&, const Args& a) -> std::vector<OutputMeta> {
        const checks::EveryPlatformScope every_platform;
        const MatmulOptions o = matmul_options(a);
        const Plan p = plan_matmul(kMatmul, a.tensor(0), a.tensor(1), a.dtype(2), o.a_trans, o.b_trans, o.c_matrix_nz,
                                   o.extend);
        return {{p.out_shape, a.dtype(2)}};
      },
      .bytes = bytes_of_valid_parts,
  });
  const DTypeSet mx = inputs(false, true);
  table.push_back(OpDef{
      .name = kScaledMm,
      .params = {{"mat_a", ParamKind::Tensor},
                 {"mat_b", ParamKind::Tensor},
                 {"out_dtype", ParamKind::DType},
                 {"scale_a", ParamKind::Tensor},
                 {"scale_b", ParamKind::Tensor},
                 {"a_trans", ParamKind::Bool, "False", true},
                 {"b_trans", ParamKind::Bool, "False", true},
                 {"scale_a_trans", ParamKind::Bool, "False", true},
                 {"scale_b_trans", ParamKind::Bool, "False", true},
                 {"c_matrix_nz", ParamKind::Bool, "False", true},
                 extend_param},
      .doc_page = "docs/ops/scaled_mm.md",
      .tile_rule = "as matmul, and kL0 a multiple of 64",
      .limits = platform_rows(mx, mx, {}, {}, 2, 4, 2, 4),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {scaled_mm(a.tensor(0), a.tensor(1), a.dtype(2), a.tensor(3), a.tensor(4), scaled_options(a))};
      },
      .bytes = bytes_of_valid_parts,
  });
  const DTypeSet half{D::FP16, D::BF16};
  table.push_back(OpDef{
      .name = kTransposedBmm,
      .params = {{"tensor_a", ParamKind::Tensor}, {"tensor_b", ParamKind::Tensor}, {"out_dtype", ParamKind::DType}},
      .doc_page = "docs/ops/transposed_batchmatmul.md",
      .submodule = "experimental",
      .tile_rule = "as matmul for each [M, K] x [K, N] product",
      .limits = platform_rows(half, half, half, half, 3, 3, 3, 3),
      .run = [](const OpDef&, const Args& a) -> Outputs {
        return {transposed_batchmatmul(a.tensor(0), a.tensor(1), a.dtype(2))};
      },
  });
}

}  // namespace pto
