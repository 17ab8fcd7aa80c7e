// The layout family's C++ API (src/ops/layout.h) and its kernels (src/kernels/layout.cpp): the
// blocked transpose on every element width, with and without streaming stores, unaligned and
// exactly-sized buffers; concat's segment copy; tril / triu's mask multiply; views, valid shapes
// and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "helpers.h"
#include "kernels/layout.h"
#include "ops/layout.h"
#include "ptocpu/build.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

pto::DType unsigned_of(size_t width) {
  return width == 1 ? pto::DType::UINT8 : width == 2 ? pto::DType::UINT16 : width == 4 ? pto::DType::UINT32
                                                                                       : pto::DType::UINT64;
}

// The element of a row-major tensor at the multi-index, as raw bytes.
const uint8_t* element(const pto::Tensor& t, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.stride(static_cast<int>(d));
  return static_cast<const uint8_t*>(t.data()) + off * static_cast<int64_t>(t.itemsize());
}

// permute(x, axes) against an element-by-element walk, x a view of an exactly-sized buffer.
void check_permute(size_t width, const pto::Shape& shape, const std::vector<int64_t>& axes, bool reversed_rows) {
  const int64_t n = pto::shape_numel(shape);
  std::vector<uint8_t> buf(n * width);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 131 + (i >> 8) * 7 + 1);
  pto::Strides strides = pto::contiguous_strides(shape);
  uint8_t* base = buf.data();
  if (reversed_rows) {  // the first axis walks backwards
    base += (shape[0] - 1) * strides[0] * static_cast<int64_t>(width);
    strides[0] = -strides[0];
  }
  const pto::Tensor x = pto::Tensor::from_blob(base, shape, strides, unsigned_of(width), nullptr);
  const pto::Tensor out = pto::permute(x, axes);
  const int r = static_cast<int>(shape.size());
  std::vector<int64_t> o(r, 0), i(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    for (int a = 0; a < r; ++a) i[axes[a]] = o[a];
    ASSERT_EQ(std::memcmp(element(out, o), element(x, i), width), 0)
        << "width " << width << " shape " << pto::shape_to_string(shape) << " axes " << pto::shape_to_string(axes)
        << " output element " << k;
    for (int a = r - 1; a >= 0; --a)
      if (++o[a] < out.shape(a)) break;
      else o[a] = 0;
  }
}

class Streaming : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { pto::set_kernel_tuning(GetParam() ? 4096 : int64_t(1) << 40, nullptr); }
  void TearDown() override { pto::set_kernel_tuning(-1, nullptr); }
};

TEST_P(Streaming, TransposesEveryWidthAndEdge) {
  for (size_t width : {1, 2, 4, 8}) {
    check_permute(width, {70, 33}, {1, 0}, false);
    check_permute(width, {300, 257}, {1, 0}, true);
    check_permute(width, {3, 65, 17}, {0, 2, 1}, false);
    check_permute(width, {5, 20, 4, 40}, {3, 1, 0, 2}, false);
    check_permute(width, {1030, 16}, {1, 0}, false);  // tall: one tile wide
    check_permute(width, {16, 1030}, {1, 0}, false);  // wide
    check_permute(width, {512, 130}, {1, 0}, false);  // whole 256-byte destination bursts (streamed)
    check_permute(width, {2, 260, 64}, {0, 2, 1}, true);
  }
}

TEST_P(Streaming, ConcatOfManyPiecesAndLayouts) {
  std::vector<pto::Tensor> pieces;
  for (int64_t k = 0; k < 40; ++k) pieces.push_back(arange_f32({64, 1 + k % 7}, static_cast<float>(1000 * k)));
  pieces[3] = arange_f32({8, 64}).as_strided({64, 4}, {1, 64}, 0);  // a transposed piece: copied first
  const pto::Tensor out = pto::concat(pieces, 1);
  int64_t col = 0;
  for (const pto::Tensor& p : pieces) {
    for (int64_t r = 0; r < 64; ++r)
      for (int64_t c = 0; c < p.shape(1); ++c) ASSERT_EQ(out.at<float>({r, col + c}), p.at<float>({r, c}));
    col += p.shape(1);
  }
  EXPECT_EQ(out.shape(), (pto::Shape{64, col}));
}

INSTANTIATE_TEST_SUITE_P(Layout, Streaming, ::testing::Values(false, true));

TEST(Layout, TransposedCopyDeclinesLayoutsItDoesNotCover) {
  pto::Tensor x = arange_f32({8, 8});
  pto::Tensor out = pto::Tensor::empty({8, 8}, pto::DType::FP32);
  EXPECT_FALSE(pto::kernels::transposed_copy(out, x));                                    // a plain copy
  EXPECT_FALSE(pto::kernels::transposed_copy(out, x.as_strided({8, 8}, {1, 0}, 0)));      // broadcast
  EXPECT_FALSE(pto::kernels::transposed_copy(out, x.as_strided({8, 8}, {2, 16}, 0)));     // no unit stride
  EXPECT_TRUE(pto::kernels::transposed_copy(out, x.as_strided({8, 8}, {1, 8}, 0)));
  EXPECT_EQ(out.at<float>({2, 5}), x.at<float>({5, 2}));
}

TEST(Layout, ReshapeIsAViewWhenTheStridesAllow) {
  pto::Tensor x = arange_f32({4, 6});
  pto::Tensor v = pto::reshape(x, {2, -1});
  EXPECT_EQ(v.data(), x.data());
  EXPECT_EQ(v.shape(), (pto::Shape{2, 12}));
  pto::Tensor t = x.as_strided({6, 4}, {1, 6}, 0);
  pto::Tensor c = pto::reshape(t, {24});
  EXPECT_NE(c.data(), x.data());
  for (int64_t k = 0; k < 24; ++k) EXPECT_EQ(c.at<float>({k}), static_cast<float>((k % 4) * 6 + k / 4));
  expect_error<pto::ArgumentError>([&] { pto::reshape(t, {24}, std::nullopt, true); }, "inplace=True shares");
  pto::Tensor valid = pto::reshape(x, {24, 1}, pto::Shape{5, 1});
  EXPECT_EQ(valid.valid_shape(), (pto::Shape{5, 1}));
  EXPECT_EQ(pto::unsqueeze(x, -1).shape(), (pto::Shape{4, 6, 1}));
  expect_error<pto::IndexError>([&] { pto::unsqueeze(x, 3); }, "dim 3 is out of range [-3, 2]");
}

TEST(Layout, TrilMultipliesByTheMask) {
  pto::Tensor x = pto::Tensor::empty({3, 3}, pto::DType::FP32);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float values[9] = {1, nan, inf, -2, 3, -4, nan, -inf, 5};
  std::memcpy(x.data(), values, sizeof values);
  const pto::Tensor lower = pto::tril(x);
  EXPECT_TRUE(std::isnan(lower.at<float>({0, 1})) && std::isnan(lower.at<float>({0, 2})));
  EXPECT_TRUE(lower.at<float>({1, 2}) == 0.0f && std::signbit(lower.at<float>({1, 2})));
  EXPECT_TRUE(std::isnan(lower.at<float>({2, 0})) && std::isinf(lower.at<float>({2, 1})));
  pto::Tensor y = arange_i32({2, 3, 4});
  pto::triu_(y, 1);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j)
        EXPECT_EQ(y.at<int32_t>({b, i, j}), j - i >= 1 ? static_cast<int32_t>(b * 12 + i * 4 + j) : 0);
  expect_error<pto::ArgumentError>([&] { pto::tril(arange_f32({4})); }, "tril: input rank 1 is out of range [2, 8]");
}

TEST(Layout, PadFillpadAndValidShapes) {
  pto::Tensor x = arange_f32({2, 3});
  const pto::Tensor p = pto::pad(x, {0, 1, 0, 2}, "constant", pto::Scalar::of_float(-1.0));
  EXPECT_EQ(p.shape(), (pto::Shape{4, 4}));
  EXPECT_EQ(values_f32(p), (std::vector<float>{0, 1, 2, -1, 3, 4, 5, -1, -1, -1, -1, -1, -1, -1, -1, -1}));
  const pto::Tensor part = pto::view(x, {2, 3}, {0, 0}, pto::Shape{1, 2});
  const pto::Tensor f = pto::fillpad(part, "constant", pto::Scalar::of_int(7));
  EXPECT_EQ(values_f32(f), (std::vector<float>{0, 1, 7, 7, 7, 7}));
  EXPECT_FALSE(f.partially_valid());
  const pto::Tensor c = pto::clone(part);
  EXPECT_EQ(c.valid_shape(), (pto::Shape{1, 2}));
  expect_error<pto::ArgumentError>([&] { pto::pad(x, {1, 0, 0, 0}); }, "only right and bottom");
  expect_error<pto::ArgumentError>([&] { pto::fillpad(x, "reflect"); }, "mode 'reflect' is not supported");
  expect_error<pto::ArgumentError>([&] { pto::pad(arange_i32({2, 2}), {0, 1, 0, 0}, "constant", pto::Scalar::of_float(0.5)); },
                                   "is not floating");
}

TEST(Layout, ExpandClonePackUnpack) {
  pto::Tensor x = arange_f32({1, 3});
  EXPECT_EQ(values_f32(pto::expand_clone(x, {2, 3})), (std::vector<float>{0, 1, 2, 0, 1, 2}));
  expect_error<pto::ArgumentError>([&] { pto::expand_clone(x, {2, 4}); }, "only size-1 axes expand");
  pto::Tensor i = arange_i32({2});
  const pto::Tensor bytes = pto::pack(i);
  EXPECT_EQ(bytes.shape(), (pto::Shape{8}));
  EXPECT_EQ(bytes.at<uint8_t>({4}), 1);
  const pto::Tensor back = pto::unpack(bytes, pto::DType::INT32);
  EXPECT_EQ(back.at<int32_t>({1}), 1);
  expect_error<pto::ArgumentError>([&] { pto::unpack(pto::pack(arange_i32({3})), pto::DType::FP64); }, "not a multiple of 8");
  pto::PlatformScope chip("atlas_a2");
  pto::TileShapeScope tile({6});
  expect_error<pto::TileError>([&] { pto::unpack(bytes, pto::DType::INT32); }, "tile shape [6] is not a multiple of 4");
}

TEST(Layout, ConcatAndTransposeChipRules) {
  pto::PlatformScope chip("ascend950");
  const pto::Tensor x = arange_f32({2, 3, 4, 5});
  expect_error<pto::ArgumentError>([&] { pto::transpose(x, 0, 1); }, "supported pairs: (0, 2), (1, 2), (1, 3), (2, 3)");
  EXPECT_EQ(pto::transpose(x, 0, 2).shape(), (pto::Shape{4, 3, 2, 5}));
  std::vector<pto::Tensor> many(129, arange_f32({1, 2}));
  expect_error<pto::ArgumentError>([&] { pto::concat(many, 0); }, "joins at most 128");
  pto::TileShapeScope tile({2, 2, 2});
  expect_error<pto::TileError>([&] { pto::concat({x, x}, 0); }, "has rank 3 but the output has rank 4");
}

}  // namespace
