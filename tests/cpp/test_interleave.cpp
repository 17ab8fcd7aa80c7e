#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

using pto::DType;
using pto::Shape;
using pto::Tensor;

// Address of the element at row-major position `flat` (any strides).
const std::byte* element(const Tensor& t, int64_t flat) {
  int64_t off = 0;
  for (int d = t.ndim() - 1; d >= 0; --d) {
    off += (flat % t.shape(d)) * t.stride(d);
    flat /= t.shape(d);
  }
  return static_cast<const std::byte*>(t.data()) + off * static_cast<int64_t>(t.itemsize());
}

bool same_element(const Tensor& a, int64_t i, const Tensor& b, int64_t j) {
  return std::memcmp(element(a, i), element(b, j), a.itemsize()) == 0;
}

// docs/ops/interleave.md elementwise, bit for bit.
void expect_interleaved(const Tensor& a, const Tensor& b, const Tensor& o0, const Tensor& o1) {
  ASSERT_EQ(o0.shape(), a.shape());
  ASSERT_EQ(o1.shape(), a.shape());
  const int64_t n = a.shape(a.ndim() - 1), rows = n ? a.numel() / n : 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < 2 * n; ++k) {
      const Tensor& src = k % 2 ? b : a;
      const Tensor& dst = k < n ? o0 : o1;
      ASSERT_TRUE(same_element(dst, r * n + k % n, src, r * n + k / 2)) << "row " << r << " stream " << k;
    }
}

TEST(Interleave, SeedExample) {
  Tensor a = arange_f32({2, 4}), b = arange_f32({2, 4}, 10.0f);
  auto [o0, o1] = pto::interleave(a, b);
  const float want0[2][4] = {{0, 10, 1, 11}, {4, 14, 5, 15}}, want1[2][4] = {{2, 12, 3, 13}, {6, 16, 7, 17}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(o0.at<float>({i, j}), want0[i][j]);
      EXPECT_EQ(o1.at<float>({i, j}), want1[i][j]);
    }
}

TEST(Deinterleave, SeedExampleSingleInput) {
  const float x[2][8] = {{0, 10, 1, 11, 2, 12, 3, 13}, {4, 14, 5, 15, 6, 16, 7, 17}};
  Tensor t = Tensor::empty({2, 8}, DType::FP32);
  std::memcpy(t.data(), x, sizeof(x));
  auto [o0, o1] = pto::deinterleave(t);
  ASSERT_EQ(o0.shape(), (Shape{2, 4}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(o0.at<float>({i, j}), x[i][2 * j]);
      EXPECT_EQ(o1.at<float>({i, j}), x[i][2 * j + 1]);
    }
}

// Every width, small and large (streamed, multi-threaded) sizes, unaligned rows, views.
TEST(Interleave, RoundTripsEveryWidthAndLayout) {
  const DType dtypes[] = {DType::UINT8, DType::BF16, DType::FP32, DType::INT64};
  const Shape shapes[] = {{2}, {3, 6}, {5, 1, 34}, {7, 0}, {0, 4}, {3, 2062}, {1, 1 << 21}, {515, 2 * 1031}};
  uint64_t seed = 1;
  for (DType dt : dtypes)
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(pto::dtype_name(dt)) + " " + pto::shape_to_string(shape));
      Tensor a = random_bytes(shape, dt, seed++), b = random_bytes(shape, dt, seed++);
      auto [o0, o1] = pto::interleave(a, b);
      expect_interleaved(a, b, o0, o1);
      auto [d0, d1] = pto::deinterleave(o0, o1);
      for (int64_t i = 0; i < a.numel(); ++i) {
        ASSERT_TRUE(same_element(d0, i, a, i)) << i;
        ASSERT_TRUE(same_element(d1, i, b, i)) << i;
      }
      // Single input: the even / odd elements of each row.
      auto [s0, s1] = pto::deinterleave(a);
      const int64_t n = shape.back(), m = n / 2, rows = n ? a.numel() / n : 0;
      ASSERT_EQ(s0.shape().back(), m);
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < m; ++k) {
          ASSERT_TRUE(same_element(s0, r * m + k, a, r * n + 2 * k));
          ASSERT_TRUE(same_element(s1, r * m + k, a, r * n + 2 * k + 1));
        }
    }
}

TEST(Interleave, NonContiguousInputs) {
  Tensor base = random_bytes({6, 8, 10}, DType::INT16, 7);
  // base[:, 1:7, 2:8] (rows of one stride per dim that do not collapse), and a transposed view.
  Tensor sliced = base.as_strided({6, 6, 6}, {80, 10, 1}, 12);
  Tensor transposed = base.as_strided({10, 8, 6}, {1, 10, 80}, 0);
  Tensor flipped = base.as_strided({8, 10}, {-10, 1}, 70);  // base[0, ::-1, :]
  Tensor cols = base.as_strided({6, 8, 6}, {80, 10, 1}, 2);   // base[:, :, 2:8]: one row stride of 10
  Tensor other = random_bytes({6, 6, 6}, DType::INT16, 8);
  auto [o0, o1] = pto::interleave(sliced, other);
  expect_interleaved(sliced, other, o0, o1);
  auto [p0, p1] = pto::interleave(transposed, transposed);
  expect_interleaved(transposed, transposed, p0, p1);
  Tensor other8 = random_bytes({6, 8, 6}, DType::INT16, 9);
  auto [c0, c1] = pto::interleave(cols, other8);
  expect_interleaved(cols, other8, c0, c1);
  auto [e0, e1] = pto::deinterleave(cols);
  for (int64_t i = 0; i < e0.numel(); ++i) {
    ASSERT_TRUE(same_element(e0, i, cols, 2 * i));
    ASSERT_TRUE(same_element(e1, i, cols, 2 * i + 1));
  }
  auto [q0, q1] = pto::deinterleave(flipped, flipped);
  auto [r0, r1] = pto::interleave(q0, q1);
  for (int64_t i = 0; i < flipped.numel(); ++i) {
    ASSERT_TRUE(same_element(r0, i, flipped, i));
    ASSERT_TRUE(same_element(r1, i, flipped, i));
  }
}

TEST(Interleave, ArgumentErrorsNameTheValue) {
  Tensor a = arange_f32({2, 5});
  std::string m = message_of<pto::ArgumentError>([&] { pto::interleave(a, a); });
  EXPECT_TRUE(contains(m, "interleave: input last dim 5")) << m;
  m = message_of<pto::ArgumentError>([&] { pto::deinterleave(a); });
  EXPECT_TRUE(contains(m, "deinterleave: input last dim 5")) << m;
  m = message_of<pto::ArgumentError>([&] { pto::interleave(arange_f32({2, 4}), arange_f32({4, 2})); });
  EXPECT_TRUE(contains(m, "other shape [4, 2] must equal input shape [2, 4]")) << m;
  m = message_of<pto::DTypeError>([&] { pto::deinterleave(arange_f32({4}), Tensor::zeros({4}, DType::INT32)); });
  EXPECT_TRUE(contains(m, "deinterleave: other dtype DT_INT32 must match input dtype DT_FP32")) << m;
  m = message_of<pto::ArgumentError>([&] { pto::interleave(arange_f32(Shape(9, 2)), arange_f32(Shape(9, 2))); });
  EXPECT_TRUE(contains(m, "input rank 9 is out of range [1, 8]")) << m;
}

TEST(Interleave, PlatformRules) {
  for (const char* name : {"atlas_a2", "atlas_a3"}) {
    pto::PlatformScope scope(name);
    // Offered nowhere here: UnsupportedError even for arguments that break other rules.
    std::string m = message_of<pto::UnsupportedError>([] { pto::interleave(arange_f32({3}), arange_f32({2})); });
    EXPECT_TRUE(contains(m, "interleave: not offered on platform") && contains(m, "ascend950 (DAV_3510)")) << m;
    m = message_of<pto::UnsupportedError>([] { pto::deinterleave(arange_f32({3})); });
    EXPECT_TRUE(contains(m, "deinterleave: not offered") && contains(m, "DAV_3510")) << m;
  }
  pto::PlatformScope scope("ascend950");
  EXPECT_THROW(pto::interleave(Tensor::zeros({2}, DType::INT64), Tensor::zeros({2}, DType::INT64)), pto::DTypeError);
  EXPECT_THROW(pto::deinterleave(Tensor::zeros({2}, DType::FP8E4M3)), pto::DTypeError);
  EXPECT_THROW(pto::deinterleave(arange_f32({1, 1, 1, 1, 2})), pto::ArgumentError);
  EXPECT_THROW(pto::deinterleave(arange_f32({0, 2})), pto::ArgumentError);
  EXPECT_NO_THROW(pto::deinterleave(arange_f32({1, 1, 1, 2})));
}

TEST(Interleave, TileRules) {
  pto::PlatformScope scope("ascend950");
  Tensor a = arange_f32({64, 256});
  {
    pto::TileShapeScope tile({8, 256});  // 4 x 8 KiB
    EXPECT_NO_THROW(pto::interleave(a, a));
    EXPECT_NO_THROW(pto::deinterleave(a, a));
  }
  {
    pto::TileShapeScope tile({8, 128});  // the last axis may not be split
    std::string m = message_of<pto::TileError>([&] { pto::interleave(a, a); });
    EXPECT_TRUE(contains(m, "interleave: tile shape [8, 128]") && contains(m, "256")) << m;
    EXPECT_NO_THROW(pto::deinterleave(a));  // single input: tile[-1] even is enough
  }
  {
    pto::TileShapeScope tile({64, 256});  // 4 x 64 KiB > 248 KiB
    std::string m = message_of<pto::TileError>([&] { pto::interleave(a, a); });
    EXPECT_TRUE(contains(m, "needs 262144 UB bytes") && contains(m, "253952")) << m;
    // deinterleave(x): 64 KiB input tile + 2 x 32 KiB output tiles fit.
    EXPECT_NO_THROW(pto::deinterleave(a));
  }
  {
    pto::TileShapeScope tile({8, 7});
    std::string m = message_of<pto::TileError>([&] { pto::deinterleave(a); });
    EXPECT_TRUE(contains(m, "deinterleave: tile shape [8, 7] has last dim 7")) << m;
  }
  {
    pto::TileShapeScope tile({256});
    EXPECT_THROW(pto::deinterleave(a), pto::TileError);
    EXPECT_THROW(pto::interleave(a, a), pto::TileError);
  }
}

}  // namespace
