// The strided-copy engine (src/copy/strided_copy.cpp) under Tensor::contiguous() and copy_into:
// every element width x layout x instruction set, with and without streaming stores, against a
// byte-by-byte reference walk.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "helpers.h"
#include "ptocpu/build.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;


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
    pto::set_kernel_tuning(0, isa);  // streaming stores for every dense output
    check_engine_layouts();
  }
  pto::set_kernel_tuning(-1, nullptr);
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
