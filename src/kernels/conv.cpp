#include "kernels/conv.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "kernels/elementwise.h"
#include "kernels/onednn_threads.h"
#include "ptocpu/parallel.h"

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

}  // namespace

Path requested_path() {
  const char* path = std::getenv("PTOCPU_CONV_PATH");
  if (!path) return Path::Auto;
  const std::string_view p(path);
  return p == "im2col" ? Path::Patches : p == "onednn" ? Path::OneDnn : Path::Auto;
}

bool run_direct(const Direct& d) {
  try {
    [[maybe_unused]] const OneThreadPerCall one;  // the primitives are chosen for one thread
    // The weights and the bias in fp32 (exact), contiguous.
    const int64_t kvol = d.g.kernel[0] * d.g.kernel[1] * d.g.kernel[2];
    std::vector<float> weights(static_cast<size_t>(d.cout * d.g.channels * kvol));
    {
      const ew::LoadFn<float> load = ew::loader<float>(d.dtype);
      const int64_t size = static_cast<int64_t>(dtype_size(d.dtype));
      const int rank = 2 + d.nd;
      Dims dims{d.cout, d.g.channels};
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
    }
    std::vector<float> bias;
    if (d.bias) {
      bias.resize(static_cast<size_t>(d.cout));
      const int64_t size = static_cast<int64_t>(dtype_size(d.bias_dtype));
      const float* got = ew::loader<float>(d.bias_dtype)(d.bias, d.bias_stride * size, d.cout, bias.data());
      if (got != bias.data()) std::memcpy(bias.data(), got, bias.size() * sizeof(float));
    }
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
