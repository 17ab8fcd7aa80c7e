#include <gtest/gtest.h>

#include <vector>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

TEST(Gather, DocExample) {
  pto::Tensor x = arange_i32({3, 5});
  pto::Tensor index = index_i64({3, 4}, {0, 1, 2, 0, 1, 2, 0, 1, 2, 2, 1, 0});
  pto::Tensor out = pto::gather(x, 0, index);
  const std::vector<int32_t> want{0, 6, 12, 3, 5, 11, 2, 8, 10, 11, 7, 3};
  ASSERT_EQ(out.shape(), (pto::Shape{3, 4}));
  EXPECT_EQ(std::vector<int32_t>(out.data_as<int32_t>(), out.data_as<int32_t>() + 12), want);
}

// Every axis of a rank-3 input as dim, index smaller on the other axes, against a serial loop,
// single- and multi-threaded.
TEST(Gather, MatchesSerialLoopOnEveryDim) {
  const pto::Shape xs{9, 40, 70};
  pto::Tensor x = arange_f32(xs);
  for (int dim = 0; dim < 3; ++dim) {
    pto::Shape is{7, 30, 50};
    is[dim] = 90;
    pto::Tensor index = random_index(is, pto::DType::INT32, xs[dim], dim + 1);
    std::vector<float> want;
    for (int64_t a = 0; a < is[0]; ++a)
      for (int64_t b = 0; b < is[1]; ++b)
        for (int64_t c = 0; c < is[2]; ++c) {
          int64_t p[3] = {a, b, c};
          p[dim] = index.at<int32_t>({a, b, c});
          want.push_back(x.at<float>({p[0], p[1], p[2]}));
        }
    for (int threads : {1, 2}) {
      pto::set_num_threads(threads);
      EXPECT_EQ(values_f32(pto::gather(x, dim, index)), want) << "dim " << dim << ", " << threads << " threads";
    }
  }
}

TEST(Gather, Errors) {
  pto::Tensor x = arange_f32({3, 4});
  expect_error<pto::IndexError>([&] { pto::gather(x, 0, index_i64({1, 2}, {0, 3})); },
                                "gather: index value 3 at index position (0, 1) is out of range [0, 3)");
  expect_error<pto::ArgumentError>([&] { pto::gather(x, 0, index_i64({1}, {0})); }, "index rank 1");
  expect_error<pto::ArgumentError>([&] { pto::gather(x, 0, index_i64({1, 5}, {0, 0, 0, 0, 0})); },
                                   "is larger than input shape [3, 4] at axis 1");
  expect_error<pto::IndexError>([&] { pto::gather(x, -3, index_i64({1, 1}, {0})); }, "dim -3 is out of range");
  pto::PlatformScope scope("atlas_a2");
  expect_error<pto::DTypeError>([&] { pto::gather(pto::Tensor::zeros({2}, pto::DType::INT8), 0, index_i64({0})); },
                                "input dtype DT_INT8 is not supported on platform atlas_a2");
}

}  // namespace
