// pypto.conv's kernels (docs/ops/conv.md#what-is-computed). run_direct: oneDNN's direct
// convolution on fp32 (fp16 / bf16 widened exactly first, rounded once at the end). The fallback:
// per image and group, the product weight [Cout / groups, K] x patches [K, M] (kernels/matmul.h),
// K = Cin / groups * kd * kh * kw, M = Dout * Hout * Wout; im2col builds the patches. No checks, no
// exceptions.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ptocpu/dtype.h"

namespace pto::kernels::conv {

// A convolution as a 3-D one over (D, H, W): a 1-D one has D = H = 1, a 2-D one D = 1, with a
// kernel of 1, stride 1, dilation 1 and no padding on the dims it lacks.
struct Geometry {
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1}, stride{1, 1, 1}, dilation{1, 1, 1};
  std::array<int64_t, 3> pad_before{0, 0, 0};  // front, top, left (the trailing padding only shapes `out`)
  int64_t channels = 0;                       // input channels per group
  int64_t k() const { return channels * kernel[0] * kernel[1] * kernel[2]; }
  int64_t m() const { return out[0] * out[1] * out[2]; }
};

// The input: channel c at position (d, h, w) of matrix j is at data + offsets[j] + (c * channel_stride
// + d * strides[0] + h * strides[1] + w * strides[2]) * itemsize (offsets in bytes).
struct Source {
  const std::byte* data = nullptr;
  DType dtype = DType::FP32;
  std::vector<int64_t> offsets;
  int64_t channel_stride = 0;
  std::array<int64_t, 3> strides{0, 0, 0};
};

// Writes offsets.size() patch matrices, each [K, lines * Wout] row-major fp32 (the widening is
// exact), one after another at dst: row (c, kd, kh, kw), column (od, oh, ow) holds input channel c at
// (od * stride - pad_before + kd * dilation, ...) per dim, 0 where that falls in the padding. The
// columns are those of output lines (od, oh) first_line .. first_line + lines - 1 (all: M columns).
void im2col(const Source& src, const Geometry& g, int64_t first_line, int64_t lines, float* dst);

// A whole convolution for run_direct. Strides are in elements: input's N, C, then its nd spatial
// dims; weight's Cout, Cin / groups, then its kernel dims. The output is contiguous.
struct Direct {
  int nd = 2;  // spatial dims: 1, 2 or 3 (g holds them as the last nd of its 3)
  int64_t batch = 0, cin = 0, cout = 0, groups = 1;
  Geometry g;
  std::array<int64_t, 3> pad_after{0, 0, 0};
  DType dtype = DType::FP32;  // input and weight
  const std::byte* input = nullptr;
  std::array<int64_t, 5> input_strides{};
  const std::byte* weight = nullptr;
  std::array<int64_t, 5> weight_strides{};
  const std::byte* bias = nullptr;  // [Cout] or none
  DType bias_dtype = DType::FP32;
  int64_t bias_stride = 0;
  bool relu = false;
  std::byte* out = nullptr;  // [N, Cout, out..]
  DType out_dtype = DType::FP32;
};

// Runs d on oneDNN's fp32 convolution primitive in pieces whose bounds depend on the shapes only
// (images, and slabs of the outermost output dim for few or large images), each piece one
// single-threaded oneDNN call, so the bits do not depend on the thread count. Returns false when
// oneDNN has no optimised (non-reference) implementation for the geometry, or when setting up or
// running one fails (anything oneDNN or an allocation throws is caught); the output may then be
// partly written, and the caller computes all of it on the patch path.
bool run_direct(const Direct& d);

// A depthwise convolution (one input channel per group, g.channels == 1) plane by plane, in
// pieces of whole planes (image, output channel), so the bits do not depend on the thread count.
void run_depthwise(const Direct& d);

// Which kernel the environment asks for (read at each call; the tests use it to cover all):
// PTOCPU_CONV_PATH=im2col always the patches, =onednn oneDNN whenever it has a fast kernel (also
// on small convolutions), =depthwise the depthwise kernel wherever a group has one input channel,
// else the geometry and the size decide (ops/conv.cpp).
enum class Path { Auto, Patches, OneDnn, Depthwise };
Path requested_path();

}  // namespace pto::kernels::conv
