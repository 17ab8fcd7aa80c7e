#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <vector>

#include "helpers.h"
#include "kernels/conv.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

// Small integers: every partial sum is exact in fp32.
pto::Tensor small_ints(const pto::Shape& shape, int seed) {
  pto::Tensor t = pto::Tensor::empty(shape, pto::DType::FP32);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = static_cast<float>((i * 5 + seed) % 7 - 3);
  return t;
}

// A direct 3-D convolution, from the definition.
struct Direct {
  std::array<int64_t, 3> stride, pad_before, pad_after, dilation;
  int64_t groups;
};

std::vector<double> direct(const pto::Tensor& x, const pto::Tensor& w, const pto::Tensor& bias, const Direct& c,
                           pto::Shape& out_shape) {
  const int64_t n = x.shape(0), cin = x.shape(1), cout = w.shape(0), cg = cin / c.groups, og = cout / c.groups;
  std::array<int64_t, 3> in{x.shape(2), x.shape(3), x.shape(4)}, k{w.shape(2), w.shape(3), w.shape(4)}, out{};
  for (int d = 0; d < 3; ++d)
    out[d] = (in[d] + c.pad_before[d] + c.pad_after[d] - c.dilation[d] * (k[d] - 1) - 1) / c.stride[d] + 1;
  out_shape = {n, cout, out[0], out[1], out[2]};
  std::vector<double> r(static_cast<size_t>(n * cout * out[0] * out[1] * out[2]), 0.0);
  const float* xv = x.data_as<float>();
  const float* wv = w.data_as<float>();
  size_t at = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow, ++at) {
            double s = bias.defined() ? bias.data_as<float>()[co] : 0.0;
            const int64_t g = co / og;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t kd = 0; kd < k[0]; ++kd)
                for (int64_t kh = 0; kh < k[1]; ++kh)
                  for (int64_t kw = 0; kw < k[2]; ++kw) {
                    const int64_t id = od * c.stride[0] - c.pad_before[0] + kd * c.dilation[0];
                    const int64_t ih = oh * c.stride[1] - c.pad_before[1] + kh * c.dilation[1];
                    const int64_t iw = ow * c.stride[2] - c.pad_before[2] + kw * c.dilation[2];
                    if (id < 0 || id >= in[0] || ih < 0 || ih >= in[1] || iw < 0 || iw >= in[2]) continue;
                    s += double(xv[(((b * cin + g * cg + ci) * in[0] + id) * in[1] + ih) * in[2] + iw]) *
                         wv[(((co * cg + ci) * k[0] + kd) * k[1] + kh) * k[2] + kw];
                  }
            r[at] = s;
          }
  return r;
}

TEST(Conv, ThreeDWithStridesPaddingsDilationsGroupsAndBiasIsTheDefinition) {
  const pto::Tensor x = small_ints({2, 6, 5, 7, 8}, 1), w = small_ints({9, 2, 2, 3, 2}, 3), bias = small_ints({9}, 5);
  const Direct c{{2, 1, 3}, {1, 0, 1}, {0, 2, 1}, {1, 2, 1}, 3};
  pto::ConvOptions o;
  o.groups = 3;
  o.extend.bias_tensor = bias;
  const pto::Tensor got = pto::conv(x, w, pto::DType::FP32, {2, 1, 3}, {1, 0, 0, 2, 1, 1}, {1, 2, 1}, o);
  pto::Shape shape;
  const std::vector<double> want = direct(x, w, bias, c, shape);
  ASSERT_EQ(got.shape(), shape);
  const std::vector<float> values = values_f32(got);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values[i], want[i]) << i;
}

TEST(Conv, ReluAndHalfOutputsRoundOnce) {
  const pto::Tensor x = small_ints({1, 4, 1, 6, 6}, 2), w = small_ints({4, 4, 1, 3, 3}, 6);
  pto::ConvOptions o;
  o.extend.relu_type = 1;
  const pto::Tensor got =
      pto::conv(pto::astype(x, pto::DType::BF16), pto::astype(w, pto::DType::BF16), pto::DType::BF16, {1, 1, 1},
                {0, 0, 1, 1, 1, 1}, {1, 1, 1}, o);
  pto::Shape shape;
  const std::vector<double> want = direct(x, w, pto::Tensor(), {{1, 1, 1}, {0, 1, 1}, {0, 1, 1}, {1, 1, 1}, 1}, shape);
  const std::vector<float> values = values_f32(pto::astype(got, pto::DType::FP32));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values[i], want[i] < 0 ? 0.0 : want[i]) << i;  // |sums| < 256
}

TEST(Conv, PatchMatrixHasZerosInThePadding) {
  // 1-D: input [1, 4] (one channel), kernel 2, stride 1, dilation 2, one zero before.
  pto::kernels::conv::Geometry g;
  g.channels = 1;
  g.in = {1, 1, 4};
  g.kernel = {1, 1, 2};
  g.dilation = {1, 1, 2};
  g.pad_before = {0, 0, 1};
  g.out = {1, 1, 3};
  const std::vector<float> x{1, 2, 3, 4};
  pto::kernels::conv::Source src;
  src.data = reinterpret_cast<const std::byte*>(x.data());
  src.offsets = {0};
  src.strides = {0, 0, 1};
  std::vector<float> patches(static_cast<size_t>(g.k() * g.m()), -1.0f);
  pto::kernels::conv::im2col(src, g, 0, 1, patches.data());
  EXPECT_EQ(patches, (std::vector<float>{0, 1, 2, 2, 3, 4}));  // tap 0 at -1, 0, 1; tap 1 at 1, 2, 3
  // 2-D, one channel [3, 2], kernel [2, 1], pad one row on top: output lines 1 and 2 of 3 only.
  g.in = {1, 3, 2};
  g.kernel = {1, 2, 1};
  g.dilation = {1, 1, 1};
  g.pad_before = {0, 1, 0};
  g.out = {1, 3, 2};
  const std::vector<float> y{1, 2, 3, 4, 5, 6};
  src.data = reinterpret_cast<const std::byte*>(y.data());
  src.strides = {0, 2, 1};
  std::vector<float> part(static_cast<size_t>(g.k() * 2 * 2), -1.0f);
  pto::kernels::conv::im2col(src, g, 1, 2, part.data());
  EXPECT_EQ(part, (std::vector<float>{1, 2, 3, 4, 3, 4, 5, 6}));  // tap 0: rows 0, 1; tap 1: rows 1, 2
}

// oneDNN's kernel called directly (3-D, strides, asymmetric paddings, dilations, groups, bias, a
// strided input and an fp16 one), and the entry with the patch path forced: both the definition.
TEST(Conv, OneDnnKernelAndForcedPatchPathAreTheDefinition) {
  const pto::Tensor x = small_ints({2, 6, 5, 7, 8}, 1), w = small_ints({9, 2, 2, 3, 2}, 3), bias = small_ints({9}, 5);
  const Direct c{{2, 1, 3}, {1, 0, 1}, {0, 2, 1}, {1, 2, 1}, 3};
  pto::Shape shape;
  const std::vector<double> want = direct(x, w, bias, c, shape);
  for (const pto::DType dtype : {pto::DType::FP32, pto::DType::FP16}) {
    const pto::Tensor xt = pto::astype(x, dtype), wt = pto::astype(w, dtype);
    pto::kernels::conv::Direct d;
    d.nd = 3;
    d.batch = 2;
    d.cin = 6;
    d.cout = 9;
    d.groups = 3;
    d.g.channels = 2;
    d.g.in = {5, 7, 8};
    d.g.kernel = {2, 3, 2};
    d.g.stride = c.stride;
    d.g.dilation = c.dilation;
    d.g.pad_before = c.pad_before;
    d.pad_after = c.pad_after;
    d.g.out = {shape[2], shape[3], shape[4]};
    d.dtype = dtype;
    d.input = static_cast<const std::byte*>(xt.data());
    d.weight = static_cast<const std::byte*>(wt.data());
    for (int i = 0; i < 5; ++i) {
      d.input_strides[i] = xt.stride(i);
      d.weight_strides[i] = wt.stride(i);
    }
    d.bias = static_cast<const std::byte*>(bias.data());
    d.bias_stride = 1;
    pto::Tensor out = pto::Tensor::empty(shape, dtype);
    d.out = static_cast<std::byte*>(out.data());
    d.out_dtype = dtype;
    ASSERT_TRUE(pto::kernels::conv::run_direct(d));  // x86-64 oneDNN has a fast fp32 kernel for it
    const std::vector<float> values = values_f32(pto::astype(out, pto::DType::FP32));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values[i], want[i]) << i;  // |sums| < 2048
  }
  pto::ConvOptions o;
  o.groups = 3;
  o.extend.bias_tensor = bias;
  ::setenv("PTOCPU_CONV_PATH", "im2col", 1);
  EXPECT_EQ(pto::kernels::conv::requested_path(), pto::kernels::conv::Path::Patches);
  const pto::Tensor got = pto::conv(x, w, pto::DType::FP32, {2, 1, 3}, {1, 0, 0, 2, 1, 1}, {1, 2, 1}, o);
  ::unsetenv("PTOCPU_CONV_PATH");
  const std::vector<float> values = values_f32(got);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(values[i], want[i]) << i;
}

TEST(Conv, ChecksComeBeforeAnything) {
  const pto::Tensor x = small_ints({1, 4, 6, 6}, 0), w = small_ints({4, 4, 3, 3}, 0);
  expect_error<pto::ArgumentError>([&] { pto::conv(x, w, pto::DType::FP32, {1, 1}, {3, 0, 0, 0}, {1, 1}); },
                                   "paddings 3 and 0 of dim H must each be < the kernel's 3");
  pto::ConvOptions o;
  o.transposed = true;
  expect_error<pto::UnsupportedError>([&] { pto::conv(x, w, pto::DType::FP32, {1, 1}, {0, 0, 0, 0}, {1, 1}, o); },
                                      "transposed=True");
  const pto::PlatformScope chip("ascend950");
  expect_error<pto::TileError>([&] { pto::conv(x, w, pto::DType::FP32, {1, 1}, {0, 0, 0, 0}, {1, 1}); },
                               "no conv tile shape is set");
  pto::set_conv_tile_shapes({1, 1, 1, 16, 8, 8, 16, 1}, {});
  EXPECT_EQ(pto::conv(x, w, pto::DType::FP32, {1, 1}, {0, 0, 0, 0}, {1, 1}).shape(), (pto::Shape{1, 4, 4, 4}));
  pto::reset_conv_tile_shapes();
}

}  // namespace
