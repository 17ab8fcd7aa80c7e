#include "kernels/conv.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "copy/simd.h"
#include "kernels/elementwise.h"
#include "kernels/onednn_threads.h"
#include "ptocpu/parallel.h"

#if PTO_X86
#include <immintrin.h>
#endif

namespace pto::kernels::conv {
namespace {

// The outputs o in [0, out) whose input position o * stride - pad + offset lies in [0, in).
std::pair<int64_t, int64_t> inside(int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t offset) {
  const int64_t shift = pad - offset;  // position = o * stride - shift
  const int64_t lo = shift <= 0 ? 0 : (shift + stride - 1) / stride;
  const int64_t last = in - 1 + shift;  // position <= in - 1  <=>  o * stride <= last
  const int64_t hi = last < 0 ? 0 : std::min(out, last / stride + 1);
  return {std::min(lo, hi), hi};
}

}  // namespace

void im2col(const Source& src, const Geometry& g, int64_t first_line, int64_t lines, float* dst) {
  const int64_t k = g.k(), line = g.out[2], cols = lines * line;
  const int64_t kernel = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t itemsize = static_cast<int64_t>(dtype_size(src.dtype));
  const ew::LoadFn<float> load = ew::loader<float>(src.dtype);
  const int64_t rows = static_cast<int64_t>(src.offsets.size()) * k;
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t j = r / k, row = r % k;
      const int64_t c = row / kernel, tap = row % kernel;
      const std::array<int64_t, 3> at{tap / (g.kernel[1] * g.kernel[2]), tap / g.kernel[2] % g.kernel[1],
                                      tap % g.kernel[2]};
      std::array<std::pair<int64_t, int64_t>, 3> span;
      for (int d = 0; d < 3; ++d)
        span[d] = inside(g.in[d], g.out[d], g.stride[d], g.pad_before[d], at[d] * g.dilation[d]);
      const std::byte* channel = src.data + src.offsets[j] + c * src.channel_stride * itemsize;
      const auto [w0, w1] = span[2];
      const int64_t w_step = g.stride[2] * src.strides[2] * itemsize;
      for (int64_t l = 0; l < lines; ++l) {
        const int64_t od = (first_line + l) / g.out[1], oh = (first_line + l) % g.out[1];
        float* o = dst + r * cols + l * line;
        if (od < span[0].first || od >= span[0].second || oh < span[1].first || oh >= span[1].second || w0 == w1) {
          std::memset(o, 0, static_cast<size_t>(line) * sizeof(float));
          continue;
        }
        const int64_t id = od * g.stride[0] - g.pad_before[0] + at[0] * g.dilation[0];
        const int64_t ih = oh * g.stride[1] - g.pad_before[1] + at[1] * g.dilation[1];
        const int64_t iw = w0 * g.stride[2] - g.pad_before[2] + at[2] * g.dilation[2];
        const std::byte* s = channel + (id * src.strides[0] + ih * src.strides[1] + iw * src.strides[2]) * itemsize;
        std::memset(o, 0, static_cast<size_t>(w0) * sizeof(float));
        const float* got = load(s, w_step, w1 - w0, o + w0);
        if (got != o + w0) std::memcpy(o + w0, got, static_cast<size_t>(w1 - w0) * sizeof(float));
        std::memset(o + w1, 0, static_cast<size_t>(line - w1) * sizeof(float));
      }
    }
  });
}

// ---- oneDNN's direct convolution ----
namespace {

using dnnl::memory;
using Dims = memory::dims;
constexpr auto kF32 = memory::data_type::f32;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A 64-byte aligned buffer that only grows (per thread, reused across pieces and calls).
class Buffer {
 public:
  void* get(size_t bytes) {
    if (bytes > size_) {
      size_ = (bytes + 63) / 64 * 64;
      data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, size_)));
      if (!data_) {
        size_ = 0;
        throw std::bad_alloc();
      }
    }
    return data_.get();
  }
  // Gives the memory back when it is over `keep` bytes (a thread keeps no huge block for good).
  void trim(size_t keep) {
    if (size_ > keep) {
      data_.reset();
      size_ = 0;
    }
  }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  size_t size_ = 0;
};

struct PieceScratch {
  Buffer src, src_blocked, dst, dst_blocked, pad;
};
thread_local PieceScratch t_piece;

// Primitive attributes: the scratchpad is ours (one per thread, so that pieces can run at once);
// fp32 math stays fp32 (never bf16 or tf32 inside).
dnnl::primitive_attr attributes() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  a.set_fpmath_mode(dnnl::fpmath_mode::strict);
  return a;
}

// A piece's slab: output positions [o0, o1) of the outermost spatial dim, which read input
// positions [i0, i1) with pl / pr positions of padding before / after.
struct Slab {
  int64_t o0 = 0, o1 = 0, i0 = 0, i1 = 0, pl = 0, pr = 0;
};

// What differs between slabs (and so needs a primitive of its own).
using SlabKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // input length, output length, pl, pr
SlabKey key_of(const Slab& s) { return {s.i1 - s.i0, s.o1 - s.o0, s.pl, s.pr}; }

// One primitive with the reorders around it.
struct Config {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward conv;
  memory weights;                 // in the primitive's layout
  memory::desc src_plain, dst_plain;  // the pieces' own layouts
  bool in_place = false;              // the input read where it lies
  bool reorder_src = false, reorder_dst = false;
  dnnl::reorder src_reorder, dst_reorder;
  memory::desc src_reorder_pad, dst_reorder_pad;  // their scratchpads
  size_t scratch = 0;  // the largest scratchpad of the three
};

// The outermost spatial dim of a Direct in Geometry's 3-D arrays.
int outer(const Direct& d) { return 3 - d.nd; }

Dims spatial(const std::array<int64_t, 3>& v, int nd, int64_t minus = 0) {
  Dims out;
  for (int i = 3 - nd; i < 3; ++i) out.push_back(v[i] - minus);
  return out;
}

// The pieces of each image: whole images from kPieces images on, else slabs of the outermost output
// dim, so that there are about kPieces pieces to share out; and slabs of at most about kPieceBytes
// of fp32 input and output each, so that a piece's buffers stay small. Set by the shapes only.
// (Measured on the 2-core development machine: 1, 8, 16 or 32 pieces for 8 images were all within
// its noise.)
constexpr int64_t kPieces = 8;
constexpr int64_t kPieceBytes = int64_t(4) << 20;

std::vector<Slab> slabs_of(const Direct& d) {
  const int a = outer(d);
  const Geometry& g = d.g;
  const int64_t outs = g.out[a];
  const int64_t in_bytes = d.cin * g.in[0] * g.in[1] * g.in[2] * 4, out_bytes = d.cout * g.m() * 4;
  const int64_t by_size = (std::max(in_bytes, out_bytes) + kPieceBytes - 1) / kPieceBytes;
  const int64_t by_count = d.batch >= kPieces ? 1 : (kPieces + d.batch - 1) / d.batch;
  const int64_t count = std::min(outs, std::max(by_size, by_count));
  const int64_t len = (outs + count - 1) / count;
  const int64_t reach = (g.kernel[a] - 1) * g.dilation[a] + 1;
  std::vector<Slab> out;
  for (int64_t o0 = 0; o0 < outs; o0 += len) {
    Slab s;
    s.o0 = o0;
    s.o1 = std::min(outs, o0 + len);
    const int64_t lo = s.o0 * g.stride[a] - g.pad_before[a];
    const int64_t hi = (s.o1 - 1) * g.stride[a] - g.pad_before[a] + reach;
    s.i0 = std::max<int64_t>(0, lo);
    s.i1 = std::min(g.in[a], hi);
    s.pl = s.i0 - lo;
    s.pr = hi - s.i1;
    out.push_back(s);
  }
  return out;
}

// Whether the input can be read where it lies (fp32 with positive strides), else each piece
// copies (and widens) its part into a contiguous fp32 block first.
bool reads_in_place(const Direct& d) {
  if (d.dtype != DType::FP32) return false;
  for (int i = 0; i < 2 + d.nd; ++i)
    if (d.input_strides[i] <= 0) return false;
  return true;
}

// Dims of a piece's input: [1, Cin, slab, rest..] and of its output [1, Cout, slab, rest..].
Dims piece_dims(const Direct& d, int64_t channels, int64_t slab, const std::array<int64_t, 3>& sizes) {
  Dims out{1, channels};
  for (int i = outer(d); i < 3; ++i) out.push_back(i == outer(d) ? slab : sizes[i]);
  return out;
}

Dims contiguous_strides(const Dims& dims) {
  Dims out(dims.size());
  int64_t run = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    out[i] = run;
    run *= dims[i];
  }
  return out;
}

Config make_config(const Direct& d, const Slab& s, const std::vector<float>& weights, bool in_place) {
  const dnnl::engine& eng = cpu_engine();
  const int a = outer(d);
  const Dims src_dims = piece_dims(d, d.cin, s.i1 - s.i0, d.g.in);
  const Dims dst_dims = piece_dims(d, d.cout, s.o1 - s.o0, d.g.out);
  Dims w_dims;
  if (d.groups > 1) w_dims.push_back(d.groups);
  w_dims.push_back(d.cout / d.groups);
  w_dims.push_back(d.g.channels);
  for (int64_t k : spatial(d.g.kernel, d.nd)) w_dims.push_back(k);
  Dims pl = spatial(d.g.pad_before, d.nd), pr = spatial(d.pad_after, d.nd);
  pl[0] = s.pl;
  pr[0] = s.pr;
  // oneDNN picks the layouts (channels-last and blocked weights here: measured as fast as or faster
  // than forcing nChw16c); the pieces reorder into and out of them.
  const memory::desc any_src(src_dims, kF32, memory::format_tag::any);
  const memory::desc any_w(w_dims, kF32, memory::format_tag::any);
  const memory::desc any_dst(dst_dims, kF32, memory::format_tag::any);
  const Dims strides = spatial(d.g.stride, d.nd), dilations = spatial(d.g.dilation, d.nd, 1);
  const auto desc = d.bias
      ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        any_src, any_w, memory::desc({d.cout}, kF32, memory::format_tag::a), any_dst,
                                        strides, dilations, pl, pr)
      : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                        any_src, any_w, any_dst, strides, dilations, pl, pr);
  Config c;
  c.pd = dnnl::convolution_forward::primitive_desc(desc, attributes(), eng);
  if (std::string_view(c.pd.impl_info_str()).substr(0, 3) == "ref") throw std::runtime_error("reference only");
  c.conv = dnnl::convolution_forward(c.pd);
  c.scratch = c.pd.scratchpad_desc().get_size();
  // The pieces' layouts: the input where it lies (its strides) or a contiguous copy; the output
  // where it goes (fp32) or a contiguous block to round from.
  c.in_place = in_place;
  if (in_place) {
    Dims st{d.input_strides[0], d.input_strides[1]};
    for (int i = 0; i < d.nd; ++i) st.push_back(d.input_strides[2 + i]);
    c.src_plain = memory::desc(src_dims, kF32, st);
  } else {
    c.src_plain = memory::desc(src_dims, kF32, contiguous_strides(src_dims));
  }
  if (d.out_dtype == DType::FP32) {
    Dims full{d.batch, d.cout};
    for (int i = a; i < 3; ++i) full.push_back(d.g.out[i]);
    c.dst_plain = memory::desc(dst_dims, kF32, contiguous_strides(full));
  } else {
    c.dst_plain = memory::desc(dst_dims, kF32, contiguous_strides(dst_dims));
  }
  const dnnl::primitive_attr attr = attributes();
  if (c.src_plain != c.pd.src_desc()) {
    c.reorder_src = true;
    const dnnl::reorder::primitive_desc rpd(eng, c.src_plain, eng, c.pd.src_desc(), attr);
    c.src_reorder = dnnl::reorder(rpd);
    c.src_reorder_pad = rpd.scratchpad_desc();
    c.scratch = std::max(c.scratch, rpd.scratchpad_desc().get_size());
  }
  if (c.dst_plain != c.pd.dst_desc()) {
    c.reorder_dst = true;
    const dnnl::reorder::primitive_desc rpd(eng, c.pd.dst_desc(), eng, c.dst_plain, attr);
    c.dst_reorder = dnnl::reorder(rpd);
    c.dst_reorder_pad = rpd.scratchpad_desc();
    c.scratch = std::max(c.scratch, rpd.scratchpad_desc().get_size());
  }
  // The weights in the primitive's layout, once per call.
  const memory::desc w_plain(w_dims, kF32, contiguous_strides(w_dims));
  c.weights = memory(c.pd.weights_desc(), eng);
  {
    const dnnl::reorder::primitive_desc rpd(eng, w_plain, eng, c.pd.weights_desc(), attr);
    Buffer pad;
    const size_t need = rpd.scratchpad_desc().get_size();
    memory plain(w_plain, eng, const_cast<float*>(weights.data()));
    dnnl::stream strm(eng);
    std::unordered_map<int, memory> args{{DNNL_ARG_FROM, plain}, {DNNL_ARG_TO, c.weights}};
    if (need) args.emplace(DNNL_ARG_SCRATCHPAD, memory(rpd.scratchpad_desc(), eng, pad.get(need)));
    dnnl::reorder(rpd).execute(strm, args);
    strm.wait();
  }
  return c;
}

// One image's slab: its input in, the primitive, its output out (ReLU, one rounding).
void run_piece(const Direct& d, const Config& c, int64_t n, const Slab& s, const float* bias) {
  const dnnl::engine& eng = cpu_engine();
  dnnl::stream strm(eng);
  const int a = outer(d);
  PieceScratch& t = t_piece;
  void* const pad = c.scratch ? t.pad.get(c.scratch) : nullptr;
  const auto with_pad = [&](std::unordered_map<int, memory> args, const memory::desc& pad_desc) {
    if (pad_desc.get_size()) args.emplace(DNNL_ARG_SCRATCHPAD, memory(pad_desc, eng, pad));
    return args;
  };
  const int64_t in_size = static_cast<int64_t>(dtype_size(d.dtype));
  const std::byte* image = d.input + (n * d.input_strides[0] + s.i0 * d.input_strides[2]) * in_size;
  memory src_plain;
  if (c.in_place) {
    src_plain = memory(c.src_plain, eng, const_cast<std::byte*>(image));
  } else {
    // A contiguous fp32 copy [Cin, slab, rest..], widened exactly, row by row of the last dim.
    const Dims dims = piece_dims(d, d.cin, s.i1 - s.i0, d.g.in);
    const int64_t rank = static_cast<int64_t>(dims.size());
    int64_t rows = 1;
    for (int64_t i = 1; i < rank - 1; ++i) rows *= dims[i];
    const int64_t len = dims[rank - 1];
    float* buf = static_cast<float*>(t.src.get(static_cast<size_t>(rows * len) * sizeof(float)));
    const ew::LoadFn<float> load = ew::loader<float>(d.dtype);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t offset = 0, rest = r;
      for (int64_t i = rank - 2; i >= 1; --i) {
        offset += rest % dims[i] * d.input_strides[i];
        rest /= dims[i];
      }
      float* row = buf + r * len;
      const float* got = load(image + offset * in_size, d.input_strides[rank - 1] * in_size, len, row);
      if (got != row) std::memcpy(row, got, static_cast<size_t>(len) * sizeof(float));
    }
    src_plain = memory(c.src_plain, eng, buf);
  }
  memory src = src_plain;
  if (c.reorder_src) {
    src = memory(c.pd.src_desc(), eng, t.src_blocked.get(c.pd.src_desc().get_size()));
    c.src_reorder.execute(strm, with_pad({{DNNL_ARG_FROM, src_plain}, {DNNL_ARG_TO, src}}, c.src_reorder_pad));
  }
  const int64_t line = d.g.m() / d.g.out[a];        // outputs per position of the outermost dim
  const int64_t run = (s.o1 - s.o0) * line;          // one channel's outputs in the slab
  const bool fp32_out = d.out_dtype == DType::FP32;
  float* const out32 = fp32_out ? reinterpret_cast<float*>(d.out) + n * d.cout * d.g.m() + s.o0 * line
                                : static_cast<float*>(t.dst.get(static_cast<size_t>(d.cout * run) * sizeof(float)));
  const memory dst_plain(c.dst_plain, eng, out32);
  const memory dst =
      c.reorder_dst ? memory(c.pd.dst_desc(), eng, t.dst_blocked.get(c.pd.dst_desc().get_size())) : dst_plain;
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, dst}};
  if (bias)
    args.emplace(DNNL_ARG_BIAS,
                 memory(memory::desc({d.cout}, kF32, memory::format_tag::a), eng, const_cast<float*>(bias)));
  c.conv.execute(strm, with_pad(std::move(args), c.pd.scratchpad_desc()));
  if (c.reorder_dst)
    c.dst_reorder.execute(strm, with_pad({{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, dst_plain}}, c.dst_reorder_pad));
  strm.wait();
  // ReLU as the patch path applies it (v < 0 becomes 0; NaN and -0 stay), then one rounding.
  const int64_t out_size = static_cast<int64_t>(dtype_size(d.out_dtype));
  for (int64_t ch = 0; ch < d.cout; ++ch) {
    float* v = fp32_out ? out32 + ch * d.g.m() : out32 + ch * run;
    if (d.relu)
      for (int64_t i = 0; i < run; ++i)
        if (v[i] < 0) v[i] = 0;
    if (!fp32_out) {
      std::byte* o = d.out + ((n * d.cout + ch) * d.g.m() + s.o0 * line) * out_size;
      ew::storer<float>(d.out_dtype)(v, o, out_size, run);
    }
  }
  constexpr size_t kKeep = size_t(64) << 20;
  for (Buffer* b : {&t.src, &t.src_blocked, &t.dst, &t.dst_blocked, &t.pad}) b->trim(kKeep);
}

// The weights [Cout, Cin / groups, kernel..] in fp32 (exact), contiguous.
std::vector<float> fp32_weights(const Direct& d) {
  const int64_t kvol = d.g.kernel[0] * d.g.kernel[1] * d.g.kernel[2];
  std::vector<float> weights(static_cast<size_t>(d.cout * d.g.channels * kvol));
  const ew::LoadFn<float> load = ew::loader<float>(d.dtype);
  const int64_t size = static_cast<int64_t>(dtype_size(d.dtype));
  const int rank = 2 + d.nd;
  std::vector<int64_t> dims{d.cout, d.g.channels};
  for (int i = outer(d); i < 3; ++i) dims.push_back(d.g.kernel[i]);
  const int64_t len = dims[rank - 1], rows = static_cast<int64_t>(weights.size()) / len;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0, rest = r;
    for (int i = rank - 2; i >= 0; --i) {
      offset += rest % dims[i] * d.weight_strides[i];
      rest /= dims[i];
    }
    float* row = weights.data() + r * len;
    const float* got = load(d.weight + offset * size, d.weight_strides[rank - 1] * size, len, row);
    if (got != row) std::memcpy(row, got, static_cast<size_t>(len) * sizeof(float));
  }
  return weights;
}

// The bias [Cout] in fp32 (exact), or nothing.
std::vector<float> fp32_bias(const Direct& d) {
  std::vector<float> bias;
  if (!d.bias) return bias;
  bias.resize(static_cast<size_t>(d.cout));
  const int64_t size = static_cast<int64_t>(dtype_size(d.bias_dtype));
  const float* got = ew::loader<float>(d.bias_dtype)(d.bias, d.bias_stride * size, d.cout, bias.data());
  if (got != bias.data()) std::memcpy(bias.data(), got, bias.size() * sizeof(float));
  return bias;
}

// ---- depthwise: one input channel per group ----

// One output plane (image, output channel) of a depthwise convolution: its input plane, the
// channel's weights, bias and ReLU, and where the fp32 results go.
struct DepthwisePlane {
  const Geometry* g = nullptr;
  const std::byte* input = nullptr;  // the input plane's first element
  std::array<int64_t, 3> strides{};  // its (d, h, w) strides in bytes
  ew::LoadFn<float> load = nullptr;  // a row of the input to fp32
  const float* weights = nullptr;    // the channel's kernel, (kd, kh, kw) row-major
  float bias = 0.0f;
  bool relu = false;
  int64_t pad_after = 0;             // of the last dim
  const int64_t* reach = nullptr;    // per kw: the input position of output 0's tap (may be < 0)
  int64_t interior_lo = 0, interior_hi = 0;  // the outputs of a line whose every kw tap is inside
  uint32_t* edge_lanes = nullptr;    // per kw: the lanes inside of a line's first register, then of its last
  const std::pair<int64_t, int64_t>* spans = nullptr;  // per kw: the outputs whose tap is inside
  float* padded = nullptr;           // the input plane in fp32, each row with zeros on both sides
  const float** row_of = nullptr;    // kernel d x h pointers: each row's element 0
  const float** weights_of = nullptr;
  float* out = nullptr;              // Dout * Hout * Wout results
};

// The vector operations of each build on V: a float (the baseline, through std::fma), or the
// lanes of an AVX2 / AVX-512 register (their fused multiply-add: the same bits lane by lane). Every
// vector step goes through these: generic vector operators in the templates below would be lowered
// for the baseline (lane by lane) before being inlined into the builds' functions. Not
// always_inline: `flatten` inlines them there, where their targets fit. The pointer argument only
// picks the build.
using Lanes8 = float __attribute__((vector_size(32)));
using Lanes16 = float __attribute__((vector_size(64)));
#define PTO_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#define PTO_TARGET_AVX512_FMA __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))
inline float filled(const float*, float v) { return v; }  // every lane v
inline float loaded(const float*, const float* from) { return *from; }
inline void store(float* to, float lanes) { *to = lanes; }
inline float fused(float x, float w, float a) { return std::fma(x, w, a); }
// sum in the lanes whose bit is set in `lanes`, a in the others.
inline float keep_inside(float sum, float a, uint32_t lanes) { return lanes & 1u ? sum : a; }
#if PTO_X86
PTO_TARGET_AVX512_FMA inline Lanes16 filled(const Lanes16*, float v) { return _mm512_set1_ps(v); }
PTO_TARGET_AVX512_FMA inline Lanes16 loaded(const Lanes16*, const float* from) { return _mm512_loadu_ps(from); }
PTO_TARGET_AVX512_FMA inline void store(float* to, Lanes16 lanes) { _mm512_storeu_ps(to, lanes); }
PTO_TARGET_AVX512_FMA inline Lanes16 fused(Lanes16 x, float w, Lanes16 a) {
  return _mm512_fmadd_ps(x, _mm512_set1_ps(w), a);
}
PTO_TARGET_AVX512_FMA inline Lanes16 keep_inside(Lanes16 sum, Lanes16 a, uint32_t lanes) {
  return _mm512_mask_mov_ps(a, static_cast<__mmask16>(lanes), sum);
}
PTO_TARGET_AVX2_FMA inline Lanes8 filled(const Lanes8*, float v) { return _mm256_set1_ps(v); }
PTO_TARGET_AVX2_FMA inline Lanes8 loaded(const Lanes8*, const float* from) { return _mm256_loadu_ps(from); }
PTO_TARGET_AVX2_FMA inline void store(float* to, Lanes8 lanes) { _mm256_storeu_ps(to, lanes); }
PTO_TARGET_AVX2_FMA inline Lanes8 fused(Lanes8 x, float w, Lanes8 a) { return _mm256_fmadd_ps(x, _mm256_set1_ps(w), a); }
PTO_TARGET_AVX2_FMA inline Lanes8 keep_inside(Lanes8 sum, Lanes8 a, uint32_t lanes) {
  const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i in = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(static_cast<int32_t>(lanes)), bit), bit);
  return _mm256_blendv_ps(a, sum, _mm256_castsi256_ps(in));
}
#endif

template <class V>
constexpr int kLaneCount = sizeof(V) / sizeof(float);

// Outputs at[u] .. at[u] + lanes - 1 of the line, for kU registers at once (independent chains of
// fused multiply-adds): each the bias, then its taps fused in (kd, kh, kw) order
// (docs/ops/conv.md#what-is-computed, in the order of K). The line's first register (kFirst: u = 0)
// and last one (kLast: u = kU - 1) leave out their lanes' taps in the padding (p.edge_lanes); the
// padded rows make every load safe, and depthwise_plane computes any other output with a tap in
// the padding again.
template <class V, int kU, bool kUnit, int kTaps, bool kFirst, bool kLast>
inline void depthwise_vectors(const DepthwisePlane& p, int64_t rows, const int64_t* at, float* acc) {
  constexpr int kWidth = kLaneCount<V>;
  const int64_t taps = kTaps ? kTaps : p.g->kernel[2], step = kUnit ? 1 : p.g->stride[2];
  const V* kind = nullptr;  // picks the build's overloads
  V a[kU];
  for (int u = 0; u < kU; ++u) a[u] = filled(kind, p.bias);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kw = 0; kw < taps; ++kw) {
      const float w = p.weights_of[r][kw];
      const float* x = p.row_of[r] + p.reach[kw];
      for (int u = 0; u < kU; ++u) {
        V v;
        if constexpr (kUnit) {
          v = loaded(kind, x + at[u]);
        } else {
          float lanes[kWidth];
          for (int j = 0; j < kWidth; ++j) lanes[j] = x[(at[u] + j) * step];
          v = loaded(kind, lanes);
        }
        const V sum = fused(v, w, a[u]);
        if (kFirst && u == 0) a[u] = keep_inside(sum, a[u], p.edge_lanes[kw]);
        else if (kLast && u == kU - 1) a[u] = keep_inside(sum, a[u], p.edge_lanes[taps + kw]);
        else a[u] = sum;
      }
    }
  for (int u = 0; u < kU; ++u) store(acc + at[u], a[u]);
}

// Output i of the line with its taps in the padding left out: bias, then the taps inside, fused in
// (kd, kh, kw) order (one lane of depthwise_vectors, in the same order: the same bits).
inline float depthwise_output(const DepthwisePlane& p, int64_t rows, int64_t i) {
  float a = p.bias;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kw = 0; kw < p.g->kernel[2]; ++kw)
      if (i >= p.spans[kw].first && i < p.spans[kw].second)
        a = std::fma(p.row_of[r][p.reach[kw] + i * p.g->stride[2]], p.weights_of[r][kw], a);
  return a;
}

// The plane line by line, each line in registers of V, four at a time (the last one overlapping
// the one before: each is computed whole, from the bias); outputs with a tap in the padding beyond
// the first and last register again one by one; then ReLU (v < 0 becomes 0; NaN and -0 stay).
template <class V>
inline void depthwise_plane(const DepthwisePlane& p) {
  constexpr int64_t kWidth = kLaneCount<V>, kBlock = 4;
  const Geometry& g = *p.g;
  const int64_t line = g.out[2], width = g.in[2], before = g.pad_before[2];
  const int64_t padded = before + width + p.pad_after;  // the sides stay zero (set once)
  for (int64_t r = 0; r < g.in[0] * g.in[1]; ++r) {
    float* row = p.padded + r * padded + before;
    const float* got = p.load(p.input + r / g.in[1] * p.strides[0] + r % g.in[1] * p.strides[1], p.strides[2], width, row);
    if (got != row) std::memcpy(row, got, static_cast<size_t>(width) * sizeof(float));
  }
  const int64_t registers = (line + kWidth - 1) / kWidth, taps = g.kernel[2];
  const auto lanes_inside = [&](int64_t first, int64_t kw) {
    const int64_t from = std::clamp<int64_t>(p.spans[kw].first - first, 0, kWidth);
    const int64_t to = std::clamp<int64_t>(p.spans[kw].second - first, 0, kWidth);
    return ((1u << to) - 1) & ~((1u << from) - 1);
  };
  for (int64_t kw = 0; kw < taps; ++kw) {
    p.edge_lanes[kw] = lanes_inside(0, kw);
    p.edge_lanes[taps + kw] = lanes_inside(line - kWidth, kw);
  }
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      int64_t rows = 0;  // the kernel rows inside the input, in (kd, kh) order
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const int64_t id = od * g.stride[0] - g.pad_before[0] + kd * g.dilation[0];
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const int64_t ih = oh * g.stride[1] - g.pad_before[1] + kh * g.dilation[1];
          if (ih < 0 || ih >= g.in[1]) continue;
          p.row_of[rows] = p.padded + (id * g.in[1] + ih) * padded + before;
          p.weights_of[rows++] = p.weights + (kd * g.kernel[1] + kh) * g.kernel[2];
        }
      }
      float* acc = p.out + (od * g.out[1] + oh) * line;
      for (int64_t v0 = 0; v0 < registers; v0 += kBlock) {
        int64_t at[kBlock];
        const int64_t count = std::min(kBlock, registers - v0);
        for (int64_t u = 0; u < count; ++u) at[u] = std::min((v0 + u) * kWidth, line - kWidth);
        const bool first = v0 == 0, last = v0 + count == registers && !(first && count == 1);
        with_constant<1, 2, 3, 4>(count, [&](auto n) {
          const auto run = [&](auto unit, auto taps, auto with_first, auto with_last) {
            depthwise_vectors<V, n(), unit(), taps(), with_first(), with_last()>(p, rows, at, acc);
          };
          const auto edges = [&](auto unit, auto taps) {
            using Yes = std::true_type;
            using No = std::false_type;
            if (first && last) run(unit, taps, Yes{}, Yes{});
            else if (first) run(unit, taps, Yes{}, No{});
            else if (last) run(unit, taps, No{}, Yes{});
            else run(unit, taps, No{}, No{});
          };
          using Unit = std::true_type;
          using Strided = std::false_type;
          // the common kernel widths with their taps unrolled
          if (!(g.stride[2] == 1 && with_constant<3, 5>(taps, [&](auto k) { edges(Unit{}, k); }))) {
            if (g.stride[2] == 1) edges(Unit{}, std::integral_constant<int, 0>{});
            else edges(Strided{}, std::integral_constant<int, 0>{});
          }
        });
      }
      // outputs with a tap in the padding beyond the first and the last register (wide paddings)
      for (int64_t i = kWidth; i < std::min(p.interior_lo, line - kWidth); ++i) acc[i] = depthwise_output(p, rows, i);
      for (int64_t i = std::max({p.interior_hi, p.interior_lo, kWidth}); i < line - kWidth; ++i)
        acc[i] = depthwise_output(p, rows, i);
      if (p.relu)
        for (int64_t i = 0; i < line; ++i) acc[i] = acc[i] < 0 ? 0.0f : acc[i];
    }
}

// Each build's planes: in its widest registers that a line fills, else narrower ones.
#if PTO_X86
PTO_TARGET_AVX512_FMA __attribute__((flatten)) void depthwise_plane_avx512(const DepthwisePlane& p) {
  if (p.g->out[2] >= 16) depthwise_plane<Lanes16>(p);
  else if (p.g->out[2] >= 8) depthwise_plane<Lanes8>(p);
  else depthwise_plane<float>(p);
}
PTO_TARGET_AVX2_FMA __attribute__((flatten)) void depthwise_plane_avx2(const DepthwisePlane& p) {
  if (p.g->out[2] >= 8) depthwise_plane<Lanes8>(p);
  else depthwise_plane<float>(p);
}
#endif
__attribute__((flatten)) void depthwise_plane_scalar(const DepthwisePlane& p) { depthwise_plane<float>(p); }

}  // namespace

Path requested_path() {
  const char* path = std::getenv("PTOCPU_CONV_PATH");
  if (!path) return Path::Auto;
  const std::string_view p(path);
  return p == "im2col" ? Path::Patches : p == "onednn" ? Path::OneDnn : p == "depthwise" ? Path::Depthwise : Path::Auto;
}

void run_depthwise(const Direct& d) {
  const Geometry& g = d.g;
  const std::vector<float> weights = fp32_weights(d), bias = fp32_bias(d);
  const int64_t kvol = g.kernel[0] * g.kernel[1] * g.kernel[2], per_group = d.cout / d.groups, m = g.m();
  const int64_t kernel_rows = g.kernel[0] * g.kernel[1];
  const int64_t in_size = static_cast<int64_t>(dtype_size(d.dtype)), out_size = static_cast<int64_t>(dtype_size(d.out_dtype));
  std::vector<std::pair<int64_t, int64_t>> spans(static_cast<size_t>(g.kernel[2]));
  std::vector<int64_t> reach(static_cast<size_t>(g.kernel[2]));
  int64_t interior_lo = 0, interior_hi = g.out[2];
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
    reach[kw] = kw * g.dilation[2] - g.pad_before[2];
    spans[kw] = inside(g.in[2], g.out[2], g.stride[2], g.pad_before[2], kw * g.dilation[2]);
    interior_lo = std::max(interior_lo, spans[kw].first);
    interior_hi = std::min(interior_hi, spans[kw].second);
  }
  std::array<int64_t, 3> strides{0, 0, 0};  // the missing dims have extent 1
  for (int i = outer(d); i < 3; ++i) strides[i] = d.input_strides[2 + i - outer(d)] * in_size;
  auto plane_fn = &depthwise_plane_scalar;
#if PTO_X86
  if (kernel_tuning().isa == Isa::Avx512 && __builtin_cpu_supports("fma")) plane_fn = &depthwise_plane_avx512;
  else if (kernel_tuning().isa == Isa::Avx2 && __builtin_cpu_supports("fma")) plane_fn = &depthwise_plane_avx2;
#endif
  const bool fp32_out = d.out_dtype == DType::FP32;
  const ew::StoreFn<float> store = ew::storer<float>(d.out_dtype);
  parallel_for(d.batch * d.cout, 1, [&](int64_t p0, int64_t p1) {
    const int64_t padded_rows = g.in[0] * g.in[1], padded = g.pad_before[2] + g.in[2] + d.pad_after[2];
    std::vector<float> plane_in(static_cast<size_t>(padded_rows * padded)), results(fp32_out ? 0 : static_cast<size_t>(m));
    std::vector<const float*> row_of(static_cast<size_t>(kernel_rows)), weights_of(static_cast<size_t>(kernel_rows));
    DepthwisePlane plane;
    plane.g = &g;
    plane.strides = strides;
    plane.load = ew::loader<float>(d.dtype);
    plane.relu = d.relu;
    plane.pad_after = d.pad_after[2];
    plane.reach = reach.data();
    plane.spans = spans.data();
    plane.padded = plane_in.data();
    plane.interior_lo = interior_lo;
    plane.interior_hi = interior_hi;
    std::vector<uint32_t> edge_lanes(static_cast<size_t>(2 * g.kernel[2]));
    plane.edge_lanes = edge_lanes.data();
    plane.row_of = row_of.data();
    plane.weights_of = weights_of.data();
    for (int64_t q = p0; q < p1; ++q) {
      const int64_t n = q / d.cout, co = q % d.cout;
      plane.input = d.input + (n * d.input_strides[0] + co / per_group * d.input_strides[1]) * in_size;
      plane.weights = weights.data() + co * kvol;
      plane.bias = bias.empty() ? 0.0f : bias[co];
      std::byte* const out = d.out + q * m * out_size;
      plane.out = fp32_out ? reinterpret_cast<float*>(out) : results.data();
      plane_fn(plane);
      if (!fp32_out) store(results.data(), out, out_size, m);
    }
  });
}

bool run_direct(const Direct& d) {
  try {
    [[maybe_unused]] const OneThreadPerCall one;  // the primitives are chosen for one thread
    const std::vector<float> weights = fp32_weights(d), bias = fp32_bias(d);
    const bool in_place = reads_in_place(d);
    const std::vector<Slab> slabs = slabs_of(d);
    std::map<SlabKey, Config> configs;
    for (const Slab& s : slabs) {
      if (s.i1 <= s.i0) return false;
      if (!configs.count(key_of(s))) configs.emplace(key_of(s), make_config(d, s, weights, in_place));
    }
    const int64_t per_image = static_cast<int64_t>(slabs.size());
    std::atomic<bool> failed{false};
    parallel_for(d.batch * per_image, 1, [&](int64_t p0, int64_t p1) {
      try {
        [[maybe_unused]] const OneThreadPerCall one_here;
        for (int64_t p = p0; p < p1 && !failed.load(std::memory_order_relaxed); ++p) {
          const Slab& s = slabs[static_cast<size_t>(p % per_image)];
          run_piece(d, configs.at(key_of(s)), p / per_image, s, d.bias ? bias.data() : nullptr);
        }
      } catch (...) {
        failed = true;
      }
    });
    return !failed;
  } catch (...) {
    return false;
  }
}

}  // namespace pto::kernels::conv
