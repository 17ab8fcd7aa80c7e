#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

TEST(StridedSlice, SeedExampleStrideTwo) {
  pto::Tensor x = arange_i32({8, 6});
  pto::Tensor out = pto::strided_slice(x, {0, 0}, {4, 6}, {2, 2});
  ASSERT_EQ(out.shape(), (pto::Shape{2, 3}));
  EXPECT_TRUE(out.is_contiguous());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out.at<int32_t>({i, j}), 12 * i + 2 * j);
}

TEST(StridedSlice, FullReverseWithMasks) {
  pto::Tensor x = arange_i32({3, 5});
  pto::Tensor out = pto::strided_slice(x, {0, 0}, {0, 0}, {-1, -1}, /*begin_mask=*/3, /*end_mask=*/3);
  ASSERT_EQ(out.shape(), (pto::Shape{3, 5}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) EXPECT_EQ(out.at<int32_t>({i, j}), 5 * (2 - i) + (4 - j));
}

TEST(StridedSlice, EllipsisNewAxisShrink) {
  pto::Tensor x = arange_i32({2, 3, 4});
  // x[None, ..., 2]: new axis, ellipsis over dims 0-1, shrink dim 2 at index 2
  pto::Tensor out = pto::strided_slice(x, {0, 0, 2}, {0, 0, 3}, {1, 1, 1}, 0, 0, /*ellipsis=*/2, /*shrink=*/4,
                                       /*new_axis=*/1);
  ASSERT_EQ(out.shape(), (pto::Shape{1, 2, 3}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out.at<int32_t>({0, i, j}), 12 * i + 4 * j + 2);
}

TEST(StridedSlice, ViewSharesStorage) {
  pto::Tensor x = arange_i32({4, 4});
  pto::Tensor v = pto::strided_slice_view(x, {3, 0}, {0, 4}, {-2, 3}, 0, 1);
  ASSERT_EQ(v.shape(), (pto::Shape{2, 2}));
  EXPECT_EQ(v.stride(0), -8);
  EXPECT_EQ(v.stride(1), 3);
  v.at<int32_t>({1, 1}) = -5;
  EXPECT_EQ(x.at<int32_t>({1, 3}), -5);
}

TEST(StridedSlice, EmptyAndRankZero) {
  pto::Tensor x = arange_i32({3, 4});
  EXPECT_EQ(pto::strided_slice(x, {2}, {1}, {1}).shape(), (pto::Shape{0, 4}));
  pto::Tensor s = pto::strided_slice(x, {1, -1}, {0, 0}, {1, 1}, 0, 0, 0, 3);
  ASSERT_EQ(s.ndim(), 0);
  EXPECT_EQ(*s.data_as<int32_t>(), 7);
  pto::Tensor scalar = pto::Tensor::empty({}, pto::DType::INT32);
  *scalar.data_as<int32_t>() = 9;
  EXPECT_EQ(pto::strided_slice(scalar, {0}, {0}, {1}, 0, 0, 0, 0, 1).shape(), (pto::Shape{1}));
}

TEST(StridedSlice, Errors) {
  pto::Tensor x = arange_i32({3, 4});
  expect_error<pto::ArgumentError>([&] { pto::strided_slice(x, {0, 0}, {1, 1}, {1, 0}); },
                                   "strided_slice: strides[1] = 0; every stride must be nonzero");
  expect_error<pto::ArgumentError>([&] { pto::strided_slice(x, {0}, {1, 1}, {1}); },
                                   "len(begin) = 1, len(end) = 2, len(strides) = 1");
  expect_error<pto::ArgumentError>([&] { pto::strided_slice(x, {0, 0}, {1, 1}, {1, 1}, 4); },
                                   "begin_mask = 4 sets bit(s) 2");
  expect_error<pto::ArgumentError>([&] { pto::strided_slice(x, {0, 0}, {1, 1}, {1, 1}, 0, 0, 3); },
                                   "ellipsis_mask = 3 sets slots 0, 1");
  expect_error<pto::ArgumentError>([&] { pto::strided_slice(x, {0, 0}, {1, 1}, {1, 1}, 0, 0, 0, 1, 1); },
                                   "slot 0 is set in both shrink_axis_mask (= 1) and new_axis_mask (= 1)");
  expect_error<pto::ArgumentError>([&] { pto::strided_slice(x, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}); },
                                   "3 slot(s) index input dims");
  expect_error<pto::IndexError>([&] { pto::strided_slice(x, {0, -5}, {1, 1}, {1, 1}, 0, 0, 0, 2); },
                                "begin[1] = -5 is out of range [-4, 4) for dim 1");
  pto::PlatformScope scope("ascend950");
  expect_error<pto::DTypeError>(
      [&] { pto::strided_slice(pto::Tensor::zeros({2}, pto::DType::INT16), {0}, {1}, {1}); },
      "strided_slice: x dtype DT_INT16 is not supported on platform ascend950");
}

}  // namespace
