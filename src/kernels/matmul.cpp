#include "kernels/matmul.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "copy/simd.h"
#include "copy/strided_copy.h"
#include "core/allocator.h"
#include "kernels/elementwise.h"
#include "kernels/onednn_threads.h"
#include "ptocpu/parallel.h"

namespace pto::kernels::matmul {
namespace {

using kernels::OneThreadPerCall;

// Output blocks of floating products: their size depends on the problem's shape only (never on
// the thread count), and they are large enough for the library to run at full speed.
struct Blocks {
  int64_t rows, cols;
};
// Blocks of more than 384 rows: pieces of at most 1024 rows and 2048 columns, cut further (the
// longer side first, to no less than 256 rows or 512 columns) until their count is a multiple of
// four (so that 1, 2 or 4 threads share them evenly). One core's sgemm
// on an Intel Xeon (2026-12-05) runs [256, 512] blocks at 150-165 GFLOP/s, [1024, 1536] at 180-195
// (K 1024 to 4096). A block of up to 384 rows is cut into one piece per 2^18 products and at most
// four: along N into pieces of 128 columns or more where it has 256, else along M into pieces of 32
// rows or more ([384, 1024] x [1024, 1024]: 4.8 -> 2.5 ms on 2 threads).
Blocks float_blocks(int64_t m, int64_t n, int64_t k) {
  if (m > 384) {
    int64_t row_pieces = (m + 1023) / 1024, col_pieces = (n + 2047) / 2048;
    while ((row_pieces * col_pieces) % 4 != 0) {
      const bool rows_can = m / (row_pieces + 1) >= 256, cols_can = n / (col_pieces + 1) >= 512;
      if (!rows_can && !cols_can) break;
      if (rows_can && (!cols_can || m / row_pieces >= n / col_pieces / 2)) ++row_pieces;
      else ++col_pieces;
    }
    return {(m + row_pieces - 1) / row_pieces, (n + col_pieces - 1) / col_pieces};
  }
  const int64_t cols = std::min<int64_t>(n, 1024);
  const int64_t pieces = std::clamp<int64_t>(m * cols * k >> 18, 1, 4);
  if (cols >= 256) return {m, std::max<int64_t>(128, (cols + pieces - 1) / pieces)};
  return {std::max<int64_t>(std::min<int64_t>(m, 32), (m + pieces - 1) / pieces), cols};
}
// int8 sums are exact, so any cut gives the same bits: one block per thread and batch, none below a
// few million products (a thread's wake-up costs more than it saves there), cut along the longer
// side (the GEMM's best case), or along M for the tile unit, whose brgemm kernels want whole rows
// of B and of the output (one core, [2048, 1024] x [1024, 3000] cut in two: 1264 GOPS per half of
// the rows, 341 per half of the columns).
Blocks int8_blocks(int64_t m, int64_t n, int64_t k, int64_t batches, bool tile_unit) {
  constexpr int64_t kMinProducts = int64_t(1) << 22;
  const int64_t by_work = std::max<int64_t>(1, m * n * k / kMinProducts);
  const int64_t per_batch =
      std::min(by_work, std::max<int64_t>(1, get_num_threads() / std::max<int64_t>(batches, 1)));
  if (m >= n || tile_unit) return {(m + per_batch - 1) / per_batch, n};
  return {m, (n + per_batch - 1) / per_batch};
}

// Any exact integer sum of up to this many int8 products fits fp32's 24-bit significand.
constexpr int64_t kExactInt8Piece = 1024;

// An operand as a GEMM takes it: row-major [rows, cols] with leading dimension ld, or (trans) its
// transpose stored that way.
struct View {
  const void* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
};

// Float: fp32 operands (others widened, exactly); Int8: int8 operands as they are; Bf16: bf16
// operands as they are, for oneDNN's bf16 matmul primitive.
enum class Form : uint8_t { Float, Int8, Bf16 };

// The operand of every output batch in `form`: the caller's memory where the library can read it
// as it is, else a packed contiguous copy (made once per distinct matrix, in tensor storage's
// cached blocks: a repeated call reuses mapped pages instead of faulting in fresh ones).
struct Prepared {
  InlineVector<View, 4> views;
  std::vector<std::shared_ptr<void>> copies;

  template <class T>
  T* copy(int64_t elements) {
    const size_t bytes = static_cast<size_t>(elements) * sizeof(T);
    return static_cast<T*>(copies.emplace_back(allocate_storage(bytes, false)).get());
  }
};

float mx_scale(const Operand& op, int64_t r, int64_t c) {
  return fp8e8m0_bits_to_float(static_cast<uint8_t>(op.scale[r * op.scale_row + (c / 32) * op.scale_k]));
}

// oneDNN's AVX2 sgemm reads B in place (its "no-copy" kernels) for blocks with few rows or columns
// (1 / rows + 1 / cols >= 0.0038 in its GEMM driver), and those run at half speed when B's rows lie a
// multiple of 1 KiB apart, whatever K is (cache sets alias). One core of an AMD EPYC, GFLOP/s with B's
// rows n and n + 16 floats apart: [256, 1024] x [1024, 1024] 46 / 94, [32, 1024] x [1024, 4096] 40 / 65,
// [512, 512] x [512, 512] 64 / 92. A copy with rows 16 floats longer costs one pass over B.
bool no_copy_blocks(const Blocks& b) { return b.rows * b.cols * 38 <= (b.rows + b.cols) * 10000; }
bool rows_alias(int64_t ld_floats) { return ld_floats % 256 == 0; }
constexpr int64_t kRowPad = 16;

// Which operand rows that alias (above) are avoided: none, those of the copies made anyway, or also
// those of an operand that could be used in place (copied then).
enum class RowPadding : uint8_t { None, Copies, All };

// transposed: whether a native operand stored transposed may be used in place (else it is copied
// to row-major through the strided-copy engine's L1 tiles).
Prepared prepare(const Operand& op, int64_t rows, int64_t cols, Form form, TransMode tf32, bool transposed = true,
                 RowPadding padding = RowPadding::None) {
  Prepared out;
  const int64_t copy_ld = padding != RowPadding::None && rows_alias(cols) ? cols + kRowPad : cols;
  const size_t itemsize = dtype_size(op.dtype);
  const bool native = (form == Form::Float && op.dtype == DType::FP32 && tf32 == TransMode::CAST_NONE && !op.scale) ||
                      (form == Form::Int8 && op.dtype == DType::INT8) ||
                      (form == Form::Bf16 && op.dtype == DType::BF16);
  for (size_t i = 0; i < op.offsets.size(); ++i) {
    const int64_t offset = op.offsets[i];
    // A broadcast batch repeats an earlier batch's matrix: one copy per distinct matrix.
    const auto seen = std::find(op.offsets.begin(), op.offsets.begin() + static_cast<int64_t>(i), offset);
    if (seen != op.offsets.begin() + static_cast<int64_t>(i)) {
      out.views.push_back(out.views[seen - op.offsets.begin()]);
      continue;
    }
    const std::byte* base = op.data + offset;
    View v;
    if (native && op.col_stride == 1 && op.row_stride >= std::max<int64_t>(cols, 1) &&
        !(padding == RowPadding::All && rows_alias(op.row_stride))) {
      v = {base, op.row_stride, false};
    } else if (native && op.row_stride == 1 && op.col_stride >= std::max<int64_t>(rows, 1) && transposed) {
      v = {base, op.col_stride, true};
    } else if (native) {  // copied to row-major through the strided-copy engine's L1 tiles
      std::byte* packed = out.copy<std::byte>(rows * copy_ld * static_cast<int64_t>(itemsize));
      const int64_t shape[] = {rows, cols}, to[] = {copy_ld, 1}, from[] = {op.row_stride, op.col_stride};
      strided_copy(packed, to, base, from, shape, 2, itemsize);
      v = {packed, copy_ld, false};
    } else {
      float* const dst = out.copy<float>(rows * copy_ld);
      const ew::LoadFn<float> load = ew::loader<float>(op.dtype);
      parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          float* row = dst + r * copy_ld;
          const float* got = load(base + r * op.row_stride * static_cast<int64_t>(itemsize),
                                  op.col_stride * static_cast<int64_t>(itemsize), cols, row);
          if (got != row) std::memcpy(row, got, static_cast<size_t>(cols) * sizeof(float));
          if (tf32 != TransMode::CAST_NONE)
            for (int64_t c = 0; c < cols; ++c) row[c] = to_tf32(row[c], tf32);
          if (op.scale)
            for (int64_t c = 0; c < cols; ++c) row[c] *= mx_scale(op, r, c);
        }
      });
      v = {dst, copy_ld, false};
    }
    out.views.push_back(v);
  }
  return out;
}

// Whether a bf16 operand ([rows, cols]) holds a nonzero below 2^-40 in magnitude. The bf16 dot-product
// instructions treat subnormal inputs and results as zero; with every nonzero operand at 2^-40 or more,
// every product and partial sum is a multiple of 2^-94 (8-bit significands), so none is subnormal.
bool holds_tiny_bf16(const View& v, int64_t rows, int64_t cols) {
  constexpr uint16_t kTinyBits = (127 - 40) << 7;  // |x| < 2^-40: biased exponent below 87
  const int64_t lines = v.trans ? cols : rows, length = v.trans ? rows : cols;
  unsigned tiny = 0;
  for (int64_t i = 0; i < lines; ++i) {
    const uint16_t* line = static_cast<const uint16_t*>(v.data) + i * v.ld;
    for (int64_t j = 0; j < length; ++j)  // (zero wraps to 0xFFFF: not tiny)
      tiny |= static_cast<uint16_t>((line[j] & 0x7FFFu) - 1u) < kTinyBits - 1u;
    if (tiny) return true;
  }
  return false;
}

// Element (row, col) of an operand's matrix, as the library's pointer arguments take it.
template <class T>
const T* element(const View& v, int64_t row, int64_t col) {
  const T* p = static_cast<const T*>(v.data);
  return v.trans ? p + col * v.ld + row : p + row * v.ld + col;
}

// Per-thread scratch: accumulators of a block and a split-K / int8 piece; the tile unit's
// scratchpad and its products when a bias is added to them.
struct Scratch {
  std::vector<float> piece;
  std::vector<std::byte> acc, tile_pad;
  std::vector<float> row, scales, float_products, wide_a, wide_b;
  std::vector<int32_t> products;
};
thread_local Scratch t_scratch;

template <class T>
T* grown(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// Products this few are summed by a plain loop: the library's entry (its checks, the packing
// buffers it allocates) costs more than they do. An Intel Xeon with AVX-512 (2026-12-06), a whole
// fp32 matmul call: [8, 8] x [8, 8] 2.4 -> 2.0 us (torch 1.3), transposed both 2.8 -> 2.3; at 2048
// products ([16, 16] x [16, 8], [8, 32] x [32, 8]) the loop is 0.2-0.4 us slower than the library.
// int8 (2026-12-07): [8, 8] x [8, 8] -> int32 3.1-3.5 -> 1.5-1.7 us (torch._int_mm 2.2-2.4).
constexpr int64_t kPlainLoopProducts = int64_t(1) << 10;

// c (+)= a b, each sum in K order: fp32 with fused multiply-adds, int8 in int32 (wrapping as the
// GEMM's sums do; the sums are exact, so any order gives these bits). Steps in elements: A(i, k) at
// a[i * a_row + k * a_col], B(k, j) at b[k * b_row + j * b_col]. A strip of kPlainStrip sums of a row
// is held in registers down K; summed in C's row itself, each step waited on the store of the last
// (store forwarding). Xeon with AVX-512, a whole [8, 8] x [8, 8] fp32 call: 1.74 -> 1.62 us (torch 1.3).
constexpr int64_t kPlainStrip = 8;
inline float multiply_add(float x, float y, float acc) { return std::fma(x, y, acc); }
inline int32_t multiply_add(int8_t x, int8_t y, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(int32_t{x} * int32_t{y}));
}

template <class In, class Acc>
[[gnu::always_inline]] inline void plain_gemm(const In* __restrict a, int64_t a_row, int64_t a_col,
                                              const In* __restrict b, int64_t b_row, int64_t b_col, int64_t m,
                                              int64_t n, int64_t k, bool accumulate, Acc* __restrict c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    Acc* ci = c + i * ldc;
    const In* ai = a + i * a_row;
    int64_t j0 = 0;
    for (; j0 + kPlainStrip <= n; j0 += kPlainStrip) {
      Acc acc[kPlainStrip];
      for (int64_t j = 0; j < kPlainStrip; ++j) acc[j] = accumulate ? ci[j0 + j] : Acc{0};
      const In* bj = b + j0 * b_col;
      for (int64_t kk = 0; kk < k; ++kk) {
        const In aik = ai[kk * a_col];
        const In* bk = bj + kk * b_row;
        if (b_col == 1) {  // B's rows contiguous: one vector step
          for (int64_t j = 0; j < kPlainStrip; ++j) acc[j] = multiply_add(aik, bk[j], acc[j]);
        } else {
          for (int64_t j = 0; j < kPlainStrip; ++j) acc[j] = multiply_add(aik, bk[j * b_col], acc[j]);
        }
      }
      for (int64_t j = 0; j < kPlainStrip; ++j) ci[j0 + j] = acc[j];
    }
    for (int64_t j = j0; j < n; ++j) {  // the last columns, each its own chain
      Acc acc = accumulate ? ci[j] : Acc{0};
      for (int64_t kk = 0; kk < k; ++kk) acc = multiply_add(ai[kk * a_col], b[kk * b_row + j * b_col], acc);
      ci[j] = acc;
    }
  }
}

PTO_SIMD_CLONES void plain_sgemm(const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t b_row,
                                 int64_t b_col, int64_t m, int64_t n, int64_t k, bool accumulate, float* c,
                                 int64_t ldc) {
  plain_gemm(a, a_row, a_col, b, b_row, b_col, m, n, k, accumulate, c, ldc);
}

PTO_SIMD_CLONES void plain_s8gemm(const int8_t* a, int64_t a_row, int64_t a_col, const int8_t* b, int64_t b_row,
                                  int64_t b_col, int64_t m, int64_t n, int64_t k, bool accumulate, int32_t* c,
                                  int64_t ldc) {
  plain_gemm(a, a_row, a_col, b, b_row, b_col, m, n, k, accumulate, c, ldc);
}

void sgemm(const View& a, int64_t r0, const View& b, int64_t c0, int64_t m, int64_t n, int64_t k0, int64_t k,
           float beta, float* c, int64_t ldc) {
  // K offset k0: along A's columns and B's rows.
  const float* ap = element<float>(a, r0, k0);
  const float* bp = element<float>(b, k0, c0);
  if (m * n * k <= kPlainLoopProducts)
    return plain_sgemm(ap, a.trans ? 1 : a.ld, a.trans ? a.ld : 1, bp, b.trans ? 1 : b.ld, b.trans ? b.ld : 1, m, n, k,
                       beta != 0.0f, c, ldc);
  [[maybe_unused]] const OneThreadPerCall one;
  dnnl_sgemm(a.trans ? 'T' : 'N', b.trans ? 'T' : 'N', m, n, k, 1.0f, ap, a.ld, bp, b.ld, beta, c, ldc);
}

// Products on oneDNN's matmul primitive, on the CPU's tile unit (AMX) or bf16 dot products where it has
// them. int8 x int8 -> int32: the primitive's brgemm kernels on the tiles run about 4x its VNNI GEMM on one
// core ([512, 1024] x [1024, 1024]: 0.73 against 2.8 ms); int8 sums are exact, so either gives the same
// bits. bf16 x bf16 -> fp32: exact products summed in fp32, as the widened sgemm does (in another order),
// 3-7x faster (docs/ops/matmul.md#speed). A primitive is compiled for one shape and layout (0.1 - 0.5
// ms). An int8 shape takes it from its second call, or from its first when its products are many enough
// to hide the compilation; a bf16 shape from its first (a later call must give the first call's bits).
// Each is compiled and run on one thread (its blocking then cannot split a sum by the thread count).
class MatmulPrimitives {
 public:
  enum class Kind : uint8_t { Int8, Bf16 };
  struct Shape {
    Kind kind;
    int64_t m, n, k, lda, ldb, ldc;
    bool trans_a, trans_b;
    auto key() const { return std::tie(kind, m, n, k, lda, ldb, ldc, trans_a, trans_b); }
    bool operator<(const Shape& o) const { return key() < o.key(); }
  };

  static bool available(Kind kind) {
    const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    const auto need =
        static_cast<unsigned>(kind == Kind::Int8 ? dnnl_cpu_isa_avx512_core_amx : dnnl_cpu_isa_avx512_core_bf16);
    return (isa & need) == need;
  }

  // Runs c = a b (c's rows ldc apart) and returns true, or returns false (the caller runs the GEMM).
  static bool run(const Shape& s, const void* a, const void* b, void* c) {
    static MatmulPrimitives* unit = new MatmulPrimitives();  // outlives its users at exit
    if (!available(s.kind)) return false;
    [[maybe_unused]] const OneThreadPerCall one;
    const std::optional<Compiled> compiled = unit->primitive(s);
    if (!compiled) return false;
    thread_local dnnl::stream stream(unit->engine_);
    dnnl::memory src(compiled->pd.src_desc(), unit->engine_, const_cast<void*>(a));
    dnnl::memory weights(compiled->pd.weights_desc(), unit->engine_, const_cast<void*>(b));
    dnnl::memory dst(compiled->pd.dst_desc(), unit->engine_, c);
    // Each thread brings its own scratchpad (packed tiles of B): threads run one primitive at once.
    const dnnl::memory::desc pad = compiled->pd.scratchpad_desc();
    dnnl::memory scratchpad(pad, unit->engine_, grown(t_scratch.tile_pad, static_cast<int64_t>(pad.get_size())));
    compiled->primitive.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst},
                                         {DNNL_ARG_SCRATCHPAD, scratchpad}});
    stream.wait();
    return true;
  }

 private:
  static constexpr int64_t kCompileAtOnce = int64_t(1) << 26;  // products (a 0.5 ms compile is < 10 % of the GEMM)
  static constexpr size_t kMaxKept = 4096;                     // shapes seen or compiled, before forgetting them

  struct Compiled {
    dnnl::matmul::primitive_desc pd;
    dnnl::matmul primitive;
  };

  // The primitive of a shape, or nothing (an int8 shape's first call, or no fitting kernel).
  std::optional<Compiled> primitive(const Shape& s) {
    std::lock_guard lock(mutex_);
    if (const auto it = compiled_.find(s); it != compiled_.end()) return it->second;
    if (s.kind == Kind::Int8 && s.m * s.n * s.k < kCompileAtOnce && seen_.insert(s).second) {
      if (seen_.size() > kMaxKept) seen_.clear();
      return std::nullopt;
    }
    seen_.erase(s);
    if (compiled_.size() >= kMaxKept) compiled_.clear();
    std::optional<Compiled> made = compile(s);
    compiled_.emplace(s, made);
    return made;
  }

  std::optional<Compiled> compile(const Shape& s) const {
    using dt = dnnl::memory::data_type;
    const bool int8 = s.kind == Kind::Int8;
    const dt in = int8 ? dt::s8 : dt::bf16, out = int8 ? dt::s32 : dt::f32;
    const auto strides = [](bool trans, int64_t ld) { return trans ? dnnl::memory::dims{1, ld} : dnnl::memory::dims{ld, 1}; };
    const dnnl::memory::desc a({s.m, s.k}, in, strides(s.trans_a, s.lda));
    const dnnl::memory::desc b({s.k, s.n}, in, strides(s.trans_b, s.ldb));
    const dnnl::memory::desc c({s.m, s.n}, out, dnnl::memory::dims{s.ldc, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    try {
      const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, engine_);
      // int8: only the tiles beat the GEMM; bf16: any kernel but the reference loops.
      const std::string_view impl = pd.impl_info_str();
      if (int8 ? impl.find("amx") == std::string_view::npos : impl.find("ref") != std::string_view::npos)
        return std::nullopt;
      return Compiled{pd, dnnl::matmul(pd)};
    } catch (const dnnl::error&) {
      return std::nullopt;
    }
  }

  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  std::mutex mutex_;
  std::map<Shape, std::optional<Compiled>> compiled_;
  std::set<Shape> seen_;
};

// [rows, cols] of a bf16 operand from (row0, col0), widened (exactly) into a row-major fp32 copy.
void widen_bf16(const View& v, int64_t row0, int64_t col0, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      dst[r * cols + c] = std::bit_cast<float>(uint32_t{*element<uint16_t>(v, row0 + r, col0 + c)} << 16);
}

// c = a b over K [k0, k0 + k), for rows [r0, r0 + m) of A and columns [c0, c0 + n) of B, plus c when
// beta is 1: bf16 views on the bf16 primitive, fp32 views on sgemm.
void float_gemm(Form form, const View& a, int64_t r0, const View& b, int64_t c0, int64_t m, int64_t n, int64_t k0,
                int64_t k, float beta, float* c, int64_t ldc) {
  if (form != Form::Bf16) return sgemm(a, r0, b, c0, m, n, k0, k, beta, c, ldc);
  using Kind = MatmulPrimitives::Kind;
  const uint16_t* ap = element<uint16_t>(a, r0, k0);
  const uint16_t* bp = element<uint16_t>(b, k0, c0);
  if (beta == 0.0f) {
    if (MatmulPrimitives::run({Kind::Bf16, m, n, k, a.ld, b.ld, ldc, a.trans, b.trans}, ap, bp, c)) return;
  } else {  // the products to scratch, added here in fp32 (as sgemm's beta does)
    float* const products = grown(t_scratch.float_products, m * n);
    if (MatmulPrimitives::run({Kind::Bf16, m, n, k, a.ld, b.ld, n, a.trans, b.trans}, ap, bp, products)) {
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j) c[r * ldc + j] += products[r * n + j];
      return;
    }
  }
  // oneDNN has no kernel for this layout (none seen on CPUs with bf16 dot products): widen and sgemm.
  float* const wa = grown(t_scratch.wide_a, m * k);
  float* const wb = grown(t_scratch.wide_b, k * n);
  widen_bf16(a, r0, k0, m, k, wa);
  widen_bf16(b, k0, c0, k, n, wb);
  sgemm({wa, k, false}, 0, {wb, n, false}, 0, m, n, 0, k, beta, c, ldc);
}

void s8gemm(const View& a, int64_t r0, const View& b, int64_t c0, int64_t m, int64_t n, int64_t k, float beta,
            int32_t* c, int64_t ldc) {
  const int8_t* ap = element<int8_t>(a, r0, 0);
  const int8_t* bp = element<int8_t>(b, 0, c0);
  if (m * n * k <= kPlainLoopProducts)  // the primitive's lookup and call cost more than these sums
    return plain_s8gemm(ap, a.trans ? 1 : a.ld, a.trans ? a.ld : 1, bp, b.trans ? 1 : b.ld, b.trans ? b.ld : 1, m, n,
                        k, beta != 0.0f, c, ldc);
  using Kind = MatmulPrimitives::Kind;
  if (beta == 0.0f) {
    if (MatmulPrimitives::run({Kind::Int8, m, n, k, a.ld, b.ld, ldc, a.trans, b.trans}, ap, bp, c)) return;
  } else {
    // oneDNN's sum post-op adds in fp32: the products go to scratch and are added here, exactly.
    int32_t* const products = grown(t_scratch.products, m * n);
    if (MatmulPrimitives::run({Kind::Int8, m, n, k, a.ld, b.ld, n, a.trans, b.trans}, ap, bp, products)) {
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j)  // (wrapping as the GEMM's int32 sums do)
          c[r * ldc + j] = static_cast<int32_t>(static_cast<uint32_t>(c[r * ldc + j]) +
                                                static_cast<uint32_t>(products[r * n + j]));
      return;
    }
  }
  const int32_t zero = 0;
  [[maybe_unused]] const OneThreadPerCall one;
  dnnl_gemm_s8s8s32(a.trans ? 'T' : 'N', b.trans ? 'T' : 'N', 'F', m, n, k, 1.0f, ap, a.ld, 0, bp, b.ld, 0, beta, c,
                    ldc, &zero);
}

float per_channel_scale(const Column& s, int64_t batch, int64_t col) {
  const std::byte* at = s.data + s.offsets[batch] + col * s.stride * 8;
  uint64_t raw;
  std::memcpy(&raw, at, sizeof raw);
  return scale_19bit(std::bit_cast<float>(static_cast<uint32_t>(raw)));
}

int8_t saturate_int8(float v) {
  if (std::isnan(v)) return 0;
  const float r = std::nearbyint(std::clamp(v, -128.0f, 127.0f));  // ties to even (the default mode)
  return static_cast<int8_t>(r);
}

class Block {
 public:
  Block(const Problem& p, const View& a, const View& b, int64_t batch, int64_t r0, int64_t m, int64_t c0, int64_t n,
        Form form)
      : p_(p), a_(a), b_(b), batch_(batch), r0_(r0), m_(m), c0_(c0), n_(n), form_(form) {}

  void run() {
    const bool int_acc = p_.a.dtype == DType::INT8;
    const bool epilogue = p_.relu || p_.scale != 0 || p_.scale_tensor.data;
    std::byte* out_block = p_.out + (batch_ * p_.out_batch_stride + r0_ * p_.out_row_stride + c0_) *
                                        static_cast<int64_t>(dtype_size(p_.out_dtype));
    const DType acc_dtype = int_acc ? DType::INT32 : DType::FP32;
    // The accumulators go straight into the output when it has their dtype and nothing follows.
    const bool direct = p_.out_dtype == acc_dtype && !epilogue;
    std::byte* acc = direct ? out_block : reinterpret_cast<std::byte*>(grown(t_scratch.acc, m_ * n_ * 4));
    const int64_t ldc = direct ? p_.out_row_stride : n_;
    const float beta = start(acc, ldc, acc_dtype);
    if (int_acc) accumulate_int8(reinterpret_cast<int32_t*>(acc), ldc, beta);
    else accumulate_float(reinterpret_cast<float*>(acc), ldc, beta);
    if (!direct) finish(acc, int_acc, out_block);
  }

 private:
  // The accumulators' starting value: the bias (the device puts it in before the first K block)
  // or zero. Returns the GEMM's beta.
  float start(std::byte* acc, int64_t ldc, DType acc_dtype) {
    if (!p_.bias.data) {
      if (p_.k == 0) fill_zero(acc, ldc);
      return 0.0f;
    }
    const Column& bias = p_.bias;
    const int64_t stride = bias.stride * static_cast<int64_t>(dtype_size(bias.dtype));
    if (p_.bias_by_row) {
      const std::byte* src = bias.data + bias.offsets[batch_] + r0_ * stride;
      for (int64_t r = 0; r < m_; ++r) {
        std::byte* row = acc + r * ldc * 4;
        if (acc_dtype == DType::INT32) {
          int32_t v;
          std::memcpy(&v, src + r * stride, 4);
          std::fill_n(reinterpret_cast<int32_t*>(row), n_, v);
        } else {
          float v;
          std::fill_n(reinterpret_cast<float*>(row), n_, *ew::loader<float>(bias.dtype)(src + r * stride, stride, 1, &v));
        }
      }
      return 1.0f;
    }
    const std::byte* src = bias.data + bias.offsets[batch_] + c0_ * stride;
    for (int64_t r = 0; r < m_; ++r) {
      std::byte* row = acc + r * ldc * 4;
      if (acc_dtype == DType::INT32) {
        for (int64_t c = 0; c < n_; ++c) std::memcpy(row + c * 4, src + c * stride, 4);
      } else {
        float* frow = reinterpret_cast<float*>(row);
        const float* got = ew::loader<float>(bias.dtype)(src, stride, n_, frow);
        if (got != frow) std::memcpy(frow, got, static_cast<size_t>(n_) * sizeof(float));
      }
    }
    return 1.0f;
  }

  void fill_zero(std::byte* acc, int64_t ldc) {
    for (int64_t r = 0; r < m_; ++r) std::memset(acc + r * ldc * 4, 0, static_cast<size_t>(n_) * 4);
  }

  void accumulate_float(float* acc, int64_t ldc, float beta) {
    const int64_t k = p_.k;
    if (k == 0) return;
    const int64_t piece = p_.split_k > 0 && p_.split_k < k ? p_.split_k : k;
    float_gemm(form_, a_, r0_, b_, c0_, m_, n_, 0, piece, beta, acc, ldc);
    // Split-K: each further piece is a partial of its own, added to the sum so far in K order.
    float* part = piece < k ? grown(t_scratch.piece, m_ * n_) : nullptr;
    for (int64_t k0 = piece; k0 < k; k0 += piece) {
      float_gemm(form_, a_, r0_, b_, c0_, m_, n_, k0, std::min(piece, k - k0), 0.0f, part, n_);
      for (int64_t r = 0; r < m_; ++r)
        for (int64_t c = 0; c < n_; ++c) acc[r * ldc + c] += part[r * n_ + c];
    }
  }

  void accumulate_int8(int32_t* acc, int64_t ldc, float beta) {
    const int64_t k = p_.k;
    if (k == 0) return;
    if (form_ == Form::Int8) {
      s8gemm(a_, r0_, b_, c0_, m_, n_, k, beta, acc, ldc);
      return;
    }
    // fp32 GEMMs over pieces short enough that every partial sum is an exact integer.
    float* part = grown(t_scratch.piece, m_ * n_);
    for (int64_t k0 = 0; k0 < k; k0 += kExactInt8Piece) {
      sgemm(a_, r0_, b_, c0_, m_, n_, k0, std::min(kExactInt8Piece, k - k0), 0.0f, part, n_);
      const bool first = k0 == 0 && beta == 0.0f;
      for (int64_t r = 0; r < m_; ++r)
        for (int64_t c = 0; c < n_; ++c) {
          const int32_t v = static_cast<int32_t>(part[r * n_ + c]);
          acc[r * ldc + c] = first ? v : acc[r * ldc + c] + v;
        }
    }
  }

  // The fixpipe on write-out: ReLU, then the scale, then one rounding to the output dtype.
  void finish(const std::byte* acc, bool int_acc, std::byte* out_block) {
    const size_t out_size = dtype_size(p_.out_dtype);
    float* scales = nullptr;
    if (p_.scale_tensor.data) {
      scales = grown(t_scratch.scales, n_);
      for (int64_t c = 0; c < n_; ++c) scales[c] = per_channel_scale(p_.scale_tensor, batch_, c0_ + c);
    }
    const bool scaled = scales || p_.scale != 0;
    float* vals = grown(t_scratch.row, n_);
    for (int64_t r = 0; r < m_; ++r) {
      std::byte* dst = out_block + r * p_.out_row_stride * static_cast<int64_t>(out_size);
      if (int_acc && !scaled && p_.out_dtype == DType::INT32) {  // int8 -> int32 with ReLU
        const int32_t* src = reinterpret_cast<const int32_t*>(acc) + r * n_;
        int32_t* o = reinterpret_cast<int32_t*>(dst);
        for (int64_t c = 0; c < n_; ++c) o[c] = p_.relu && src[c] < 0 ? 0 : src[c];
        continue;
      }
      for (int64_t c = 0; c < n_; ++c) {
        float v = int_acc ? static_cast<float>(reinterpret_cast<const int32_t*>(acc)[r * n_ + c])
                          : reinterpret_cast<const float*>(acc)[r * n_ + c];
        if (p_.relu && v < 0) v = 0;
        if (scaled) v *= scales ? scales[c] : p_.scale;
        vals[c] = v;
      }
      if (p_.out_dtype == DType::INT8) {
        int8_t* o = reinterpret_cast<int8_t*>(dst);
        for (int64_t c = 0; c < n_; ++c) o[c] = saturate_int8(vals[c]);
      } else if (p_.out_dtype == DType::FP32) {
        std::memcpy(dst, vals, static_cast<size_t>(n_) * sizeof(float));
      } else {
        ew::storer<float>(p_.out_dtype)(vals, dst, static_cast<int64_t>(out_size), n_);
      }
    }
  }

  const Problem& p_;
  const View &a_, &b_;
  int64_t batch_, r0_, m_, c0_, n_;
  Form form_;
};

bool detect_vnni_gemm() {
  // avx512_core_vnni's bit: oneDNN's int8 GEMM kernels then use vpdpbusd, which sums products
  // into int32 without the int16 saturation of the older sequences.
  if ((static_cast<unsigned>(dnnl_get_effective_cpu_isa()) & 0x40u) == 0) return false;
  // And check it on the values that would saturate, in the shapes that take other kernels (a
  // single row or column).
  for (const auto [m, n, k] : {std::array<int64_t, 3>{17, 19, 96}, {1, 33, 130}, {29, 1, 70}}) {
    std::vector<int8_t> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = i % 3 ? 127 : -128;
    for (size_t i = 0; i < b.size(); ++i) b[i] = i % 5 ? 127 : -128;
    std::vector<int32_t> c(static_cast<size_t>(m * n));
    s8gemm({a.data(), k, false}, 0, {b.data(), n, false}, 0, m, n, k, 0.0f, c.data(), n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t want = 0;
        for (int64_t q = 0; q < k; ++q) want += int64_t(a[i * k + q]) * b[q * n + j];
        if (want != c[i * n + j]) return false;
      }
  }
  return true;
}

}  // namespace

float to_tf32(float x, TransMode mode) {
  if (!std::isfinite(x) || mode == TransMode::CAST_NONE) return x;
  uint32_t u = std::bit_cast<uint32_t>(x);
  constexpr uint32_t kDropped = 13, kHalf = 1u << (kDropped - 1), kMask = (1u << kDropped) - 1;
  const uint32_t rest = u & kMask;
  u &= ~kMask;
  // Rounding up adds one unit in the last kept place; a carry into the exponent is right (it may
  // reach infinity, as any rounding to nearest may).
  const bool odd = (u >> kDropped) & 1u;
  if (rest > kHalf || (rest == kHalf && (mode == TransMode::CAST_ROUND || odd))) u += 1u << kDropped;
  return std::bit_cast<float>(u);
}

float scale_19bit(float x) { return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & 0xFFFFE000u); }

bool int8_uses_vnni_gemm() {
  static const bool vnni = detect_vnni_gemm();
  return vnni;
}

namespace {

// Both fp32 operands stored transposed (A as [k, m] rows, B as [n, k] rows), nothing after the sums:
// C = (B A)^T, the library's 'N', 'N' product of the stored matrices into a scratch, then transposed
// into C, in place of B copied to row-major and a 'T', 'N' product ([1024]^3 on an Intel Xeon, 2
// threads: 6.7 -> 5.8 ms, torch 5.6-5.7). The same products, each sum in the library's K order.
bool run_swapped(const Problem& p) {
  const auto stored_transposed = [](const Operand& op, int64_t rows) {
    return op.dtype == DType::FP32 && !op.scale && op.row_stride == 1 && op.col_stride >= std::max<int64_t>(rows, 1);
  };
  if (!stored_transposed(p.a, p.m) || !stored_transposed(p.b, p.k) || p.bias.data || p.relu || p.scale != 0 ||
      p.scale_tensor.data || p.tf32 != TransMode::CAST_NONE || p.split_k > 0 || p.out_dtype != DType::FP32 ||
      p.m * p.n * p.k <= kPlainLoopProducts)
    return false;
  Problem swapped = p;
  swapped.m = p.n, swapped.n = p.m;
  swapped.a = p.b, swapped.b = p.a;
  std::swap(swapped.a.row_stride, swapped.a.col_stride);
  std::swap(swapped.b.row_stride, swapped.b.col_stride);
  const std::shared_ptr<void> scratch =
      allocate_storage(static_cast<size_t>(p.batches * p.n * p.m) * sizeof(float), false);
  swapped.out = static_cast<std::byte*>(scratch.get());
  swapped.out_row_stride = p.m, swapped.out_batch_stride = p.n * p.m;
  run(swapped);
  const int64_t shape[] = {p.batches, p.m, p.n}, to[] = {p.out_batch_stride, p.out_row_stride, 1},
                from[] = {p.n * p.m, 1, p.m};
  strided_copy(p.out, to, scratch.get(), from, shape, 3, sizeof(float));
  return true;
}

}  // namespace

void run(const Problem& p) {
  if (p.batches == 0 || p.m == 0 || p.n == 0) return;
  if (run_swapped(p)) return;
  const bool int8 = p.a.dtype == DType::INT8;
  // (The kernel tuning's ISA cap below AVX-512 takes the other path: tests compare the two.)
  const bool vnni = int8 && kernel_tuning().isa == Isa::Avx512 && int8_uses_vnni_gemm();
  // bf16 products on the primitive from 2^17 of them per batch: below, its call costs more than
  // widening (one core, [32, 64] x [64, 32]: 5.1 against 3.4 us; [64, 128] x [128, 64]: 9.2 against 18.5).
  constexpr int64_t kBf16PrimitiveFrom = int64_t(1) << 17;
  const bool bf16 = p.a.dtype == DType::BF16 && p.b.dtype == DType::BF16 && !p.a.scale && !p.b.scale &&
                    p.m * p.n * p.k >= kBf16PrimitiveFrom && kernel_tuning().isa == Isa::Avx512 &&
                    MatmulPrimitives::available(MatmulPrimitives::Kind::Bf16);
  Form form = vnni ? Form::Int8 : bf16 ? Form::Bf16 : Form::Float;
  const TransMode tf32 = p.a.dtype == DType::FP32 ? p.tf32 : TransMode::CAST_NONE;
  const Blocks blocks = int8 ? int8_blocks(p.m, p.n, p.k, p.batches,
                                           vnni && MatmulPrimitives::available(MatmulPrimitives::Kind::Int8))
                             : float_blocks(p.m, p.n, p.k);
  Prepared a, b;
  // A transposed on AVX2: copied to row-major first. oneDNN's AVX2 sgemm runs 'T', 'N' and 'T', 'T' at
  // half the speed of 'N', 'N' ([1024]^3 fp32 on an AMD EPYC, 2 threads: 28.2 and 33.4 against 14.3 ms),
  // and the copy of A costs about 1 ms. Products the plain loop sums read A where it is.
  const bool copy_transposed_a = form == Form::Float && kernel_tuning().isa != Isa::Avx512 &&
                                 p.m * p.n * p.k > kPlainLoopProducts;
  const auto prepare_both = [&] {
    a = prepare(p.a, p.m, p.k, form, tf32, !copy_transposed_a);
    Operand b_op = p.b;
    if (p.b.scale) {
      // Pack B transposed ([n, k]) so that its MX blocks run along the packed rows, then read it as
      // the transpose of a row-major [k, n].
      std::swap(b_op.row_stride, b_op.col_stride);
      b = prepare(b_op, p.n, p.k, form, tf32);
      for (View& v : b.views) v.trans = !v.trans;
    } else {
      // Both operands transposed (not run_swapped's case): B is copied to row-major first. oneDNN's
      // sgemm runs 'T', 'T' at about half the speed of 'T', 'N' ([1024]^3 fp32 on an Ice Lake Xeon: 17.7
      // against 8.1 ms), and the copy of B costs about 1 ms.
      const bool a_transposed = std::any_of(a.views.begin(), a.views.end(), [](const View& v) { return v.trans; });
      // Where the library reads B in place on AVX2 (no_copy_blocks), B's copies get rows that do not
      // alias, and so does B itself from 64 rows of A on: below, the copy of B costs more than it saves
      // ([32, 4096] x [4096, 1024], 2 threads: 3.0 ms in place, 3.7 copied). Its AVX-512 kernels slow
      // down likewise for blocks of fewer than 128 rows (one core of an Intel Xeon, GFLOP/s with B's rows
      // 4096 and 4112 floats apart: [64, 4096] x [4096, 1024] 109 / 156, [32, 4096] x [4096, 256] 95 /
      // 121; 128 rows: 153 / 152), where B's copies, made anyway, get the longer rows.
      const bool avx512 = kernel_tuning().isa == Isa::Avx512;
      const bool pad = form == Form::Float && no_copy_blocks(blocks) && p.m * p.n * p.k > kPlainLoopProducts &&
                       (!avx512 || blocks.rows < 128);
      const RowPadding padding = !pad ? RowPadding::None : p.m >= 64 && !avx512 ? RowPadding::All : RowPadding::Copies;
      b = prepare(b_op, p.k, p.n, form, tf32, form != Form::Float || !a_transposed, padding);
    }
  };
  prepare_both();
  const auto tiny = [](const Prepared& op, int64_t rows, int64_t cols) {
    return std::any_of(op.views.begin(), op.views.end(), [&](const View& v) { return holds_tiny_bf16(v, rows, cols); });
  };
  if (form == Form::Bf16 && (tiny(a, p.m, p.k) || tiny(b, p.k, p.n))) {
    form = Form::Float;  // exact fp32 arithmetic keeps the subnormals
    prepare_both();
  }
  const int64_t mb = blocks.rows, nb = blocks.cols;
  const int64_t row_blocks = (p.m + mb - 1) / mb, col_blocks = (p.n + nb - 1) / nb;
  const int64_t per_batch = row_blocks * col_blocks;
  parallel_for(p.batches * per_batch, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t batch = t / per_batch, rb = (t % per_batch) / col_blocks, cb = t % col_blocks;
      const int64_t r0 = rb * mb, c0 = cb * nb;
      Block(p, a.views[batch], b.views[batch], batch, r0, std::min(mb, p.m - r0), c0, std::min(nb, p.n - c0), form)
          .run();
    }
  });
}

}  // namespace pto::kernels::matmul
