#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/strided_copy.h"
#include "ptocpu/ptocpu.h"

namespace {

pto::Tensor arange_i32(const pto::Shape& shape) {
  pto::Tensor t = pto::Tensor::empty(shape, pto::DType::INT32);
  std::iota(t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel(), 0);
  return t;
}

template <class E, class F>
void expect_error(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << text;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

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

// ---- the strided-copy engine (src/kernels/strided_copy.cpp) ----

// Element e of a buffer of `width`-byte elements holds bytes derived from e.
void fill_pattern(std::vector<uint8_t>& buf) {
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 131 + (i >> 8) * 7 + 1);
}

// Copies a view of an exactly-sized buffer (so a sanitizer sees any read past it) and checks
// every element against a plain loop.
void check_view(size_t width, const pto::Shape& shape, const pto::Strides& strides) {
  int64_t lo = 0, hi = 0;
  for (size_t d = 0; d < shape.size(); ++d) (strides[d] < 0 ? lo : hi) += (shape[d] - 1) * strides[d];
  std::vector<uint8_t> src((hi - lo + 1) * width);
  fill_pattern(src);
  const int64_t base = -lo;  // element index of the view's [0, ..., 0]: the lowest reach is element 0
  const pto::DType dt = width == 1 ? pto::DType::UINT8 : width == 2 ? pto::DType::UINT16
                        : width == 4 ? pto::DType::UINT32 : pto::DType::UINT64;
  pto::Tensor view = pto::Tensor::from_blob(src.data() + base * width, shape, strides, dt, nullptr);
  const int64_t n = pto::shape_numel(shape);
  std::vector<uint8_t> out((n + 2) * width);  // + unaligned starts
  for (int offset = 0; offset < 3; offset += 2) {
    pto::Tensor dst = pto::Tensor::from_blob(out.data() + offset * width, shape, pto::contiguous_strides(shape), dt, nullptr);
    pto::copy_into(dst, view);
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t e = base;
      for (size_t d = 0; d < shape.size(); ++d) e += idx[d] * strides[d];
      ASSERT_EQ(std::memcmp(out.data() + (offset + k) * width, src.data() + e * width, width), 0)
          << "width " << width << " element " << k << " shape " << pto::shape_to_string(shape) << " strides " << pto::shape_to_string(strides) << " offset " << offset;
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d)
        if (++idx[d] < shape[d]) break; else idx[d] = 0;
    }
  }
}

void check_engine_layouts() {
  for (size_t w : {1, 2, 4, 8}) {
    for (int64_t step : {1, -1, 2, 3, 4, -2, 5, 0}) {
      for (int64_t len : {1, 7, 64, 129, 1000, 2100}) {
        const int64_t row = std::max<int64_t>(1, std::abs(step) * (len - 1) + 1);
        check_view(w, {3, len}, {row + 5, step});
        check_view(w, {3, len}, {-(row + 5), step});
      }
    }
    check_view(w, {300, 257}, {1, 300});         // transposed
    check_view(w, {5, 70, 33}, {1, 5 * 33, 5});  // a permutation
    check_view(w, {40, 600}, {0, 1});            // a broadcast row
    check_view(w, {3 * 4096 + 17}, {1});         // one long contiguous run
  }
}

TEST(StridedCopy, EveryLayoutWidthAndIsaWithStreamingStores) {
  for (const char* isa : {"avx512", "avx2", "baseline"}) {
    pto::kernels::strided_copy_set_overrides(0, isa);  // streaming stores for every dense output
    check_engine_layouts();
  }
  pto::kernels::strided_copy_set_overrides(-1, nullptr);
  check_engine_layouts();  // the default: cached stores below the last-level cache size
}

TEST(StridedCopy, NegativeAndZeroDstStrides) {
  pto::Tensor src = arange_i32({4, 6});
  pto::Tensor dst = pto::Tensor::zeros({4, 6}, pto::DType::INT32);
  pto::copy_into(dst.as_strided({4, 6}, {-6, -1}, 23), src);  // dst[::-1, ::-1] = src
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) EXPECT_EQ(dst.at<int32_t>({3 - i, 5 - j}), 6 * i + j);
  pto::Tensor one = pto::Tensor::zeros({6}, pto::DType::INT32);
  pto::copy_into(one.as_strided({4, 6}, {0, 1}, 0), src);  // a sequential loop leaves the last row
  for (int j = 0; j < 6; ++j) EXPECT_EQ(one.at<int32_t>({j}), 18 + j);
}

}  // namespace
