#include "kernels/conv.h"

#include <algorithm>
#include <cstring>

#include "kernels/elementwise.h"
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

}  // namespace pto::kernels::conv
