#include <gtest/gtest.h>

#include <vector>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

TEST(ScatterUpdate, DocExamples) {
  pto::Tensor cache = pto::Tensor::zeros({8, 3}, pto::DType::FP32);
  pto::Tensor out = pto::scatter_update(cache, -2, index_i64({2, 2}, {1, 2, 4, 5}), arange_f32({4, 3}, 1));
  EXPECT_EQ(out.data(), cache.data());
  EXPECT_EQ(values_f32(cache),
            (std::vector<float>{0, 0, 0, 1, 2, 3, 4, 5, 6, 0, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0, 0, 0}));
  pto::Tensor paged = pto::Tensor::zeros({2, 6, 1, 3}, pto::DType::FP32);
  pto::scatter_update(paged, -2, index_i64({2, 2}, {1, 8, 4, 10}), arange_f32({2, 2, 1, 3}, 1));
  EXPECT_EQ(paged.at<float>({0, 1, 0, 0}), 1);
  EXPECT_EQ(paged.at<float>({1, 2, 0, 2}), 6);
  EXPECT_EQ(paged.at<float>({0, 4, 0, 1}), 8);
  EXPECT_EQ(paged.at<float>({1, 4, 0, 0}), 10);
}

// Negative slots skip their row; duplicates keep the last write, whatever the thread count.
TEST(ScatterUpdate, SkipsNegativesAndLastWriteWins) {
  const int64_t rows = 64, d = 40, b = 50, s = 200;
  pto::Tensor index = pto::Tensor::empty({b, s}, pto::DType::INT64);
  std::mt19937_64 rng(7);
  for (int64_t k = 0; k < b * s; ++k) index.data_as<int64_t>()[k] = static_cast<int64_t>(rng() % (rows + 10)) - 10;
  pto::Tensor src = arange_f32({b * s, d});
  std::vector<float> want = values_f32(arange_f32({rows, d}, -1e6f));
  for (int64_t k = 0; k < b * s; ++k) {
    const int64_t slot = index.data_as<int64_t>()[k];
    if (slot >= 0)
      for (int64_t j = 0; j < d; ++j) want[slot * d + j] = static_cast<float>(k * d + j);
  }
  for (int threads : {1, 2, 3}) {
    pto::set_num_threads(threads);
    pto::Tensor cache = arange_f32({rows, d}, -1e6f);
    pto::scatter_update(cache, -2, index, src);
    EXPECT_EQ(values_f32(cache), want) << threads << " threads";
  }
}

TEST(ScatterUpdate, ErrorsChangeNothing) {
  pto::Tensor cache = arange_f32({4, 2});
  const std::vector<float> before = values_f32(cache);
  pto::Tensor src = arange_f32({4, 2});
  expect_error<pto::IndexError>([&] { pto::scatter_update(cache, -2, index_i64({2, 2}, {0, -1, 2, 4}), src); },
                                "scatter_update: index value 4 at index position (1, 1) is out of range [0, 4)");
  expect_error<pto::ArgumentError>([&] { pto::scatter_update(cache, 0, index_i64({1, 1}, {0}), src); },
                                   "dim 0 is not supported");
  expect_error<pto::ArgumentError>([&] { pto::scatter_update(cache, -2, index_i64({4}, {0, 1, 2, 3}), src); },
                                   "index shape [4] must be [b, s]");
  expect_error<pto::ArgumentError>([&] { pto::scatter_update(cache, -2, index_i64({1, 5}, {0, 1, 2, 3, 0}), src); },
                                   "writes b*s = 5");
  expect_error<pto::DTypeError>(
      [&] { pto::scatter_update(cache, -2, pto::Tensor::zeros({1, 1}, pto::DType::UINT8), src); }, "DT_UINT8");
  EXPECT_EQ(values_f32(cache), before);
}

}  // namespace
