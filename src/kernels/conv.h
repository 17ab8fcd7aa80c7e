// pypto.conv's patch matrices (docs/ops/conv.md): a convolution is, per image and group, the
// product weight [Cout / groups, K] x patches [K, M] (kernels/matmul.h), K = Cin / groups * kd * kh
// * kw, M = Dout * Hout * Wout. This builds the patches ("im2col"). No checks, no exceptions.
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

}  // namespace pto::kernels::conv
