#include <gtest/gtest.h>

#include <vector>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

TEST(IndexAdd, DocExampleInPlaceAndOutOfPlace) {
  pto::Tensor x = pto::Tensor::zeros({2, 3}, pto::DType::INT32);
  pto::Tensor source = pto::Tensor::empty({3, 3}, pto::DType::INT32);
  std::fill(source.data_as<int32_t>(), source.data_as<int32_t>() + 9, 1);
  pto::Tensor index = pto::Tensor::empty({3}, pto::DType::INT32);
  index.data_as<int32_t>()[0] = 0, index.data_as<int32_t>()[1] = 1, index.data_as<int32_t>()[2] = 0;
  pto::Tensor y = pto::index_add(x, 0, index, source);
  EXPECT_EQ(x.data_as<int32_t>()[0], 0);  // index_add leaves input untouched
  EXPECT_EQ(std::vector<int32_t>(y.data_as<int32_t>(), y.data_as<int32_t>() + 6), (std::vector<int32_t>{2, 2, 2, 1, 1, 1}));
  EXPECT_EQ(pto::index_add_(x, 0, index, source, pto::Scalar::of_int(3)).data(), x.data());
  EXPECT_EQ(std::vector<int32_t>(x.data_as<int32_t>(), x.data_as<int32_t>() + 6), (std::vector<int32_t>{6, 6, 6, 3, 3, 3}));
}

// One rounding of the product and one of the sum per step: fp32 alpha 0.1 against a serial
// float loop (the kernel must not fuse them into an FMA), on every dim, any thread count.
TEST(IndexAdd, Fp32RoundsProductAndSumPerStep) {
  const pto::Shape xs{5, 30, 70};
  const float alpha = 0.1f;
  for (int dim = 0; dim < 3; ++dim) {
    pto::Shape ss = xs;
    ss[dim] = 2 * xs[dim];
    pto::Tensor index = random_index({ss[dim]}, pto::DType::INT64, xs[dim], dim);
    pto::Tensor source = arange_f32(ss, 0.37f);
    pto::Tensor x0 = arange_f32(xs, -0.5f);
    std::vector<float> want = values_f32(x0);
    for (int64_t a = 0; a < ss[0]; ++a)
      for (int64_t b = 0; b < ss[1]; ++b)
        for (int64_t c = 0; c < ss[2]; ++c) {
          int64_t p[3] = {a, b, c};
          p[dim] = index.data_as<int64_t>()[p[dim]];
          volatile float v = alpha * source.at<float>({a, b, c});
          float& t = want[(p[0] * xs[1] + p[1]) * xs[2] + p[2]];
          t = t + v;
        }
    for (int threads : {1, 2}) {
      pto::set_num_threads(threads);
      EXPECT_EQ(values_f32(pto::index_add(x0, dim, index, source, pto::Scalar::of_float(0.1))), want) << dim;
    }
  }
}

TEST(IndexAdd, ErrorsChangeNothing) {
  pto::Tensor x = arange_f32({3, 2});
  const std::vector<float> before = values_f32(x);
  pto::Tensor src = arange_f32({2, 2});
  expect_error<pto::IndexError>([&] { pto::index_add_(x, 0, index_i64({0, 3}), src); },
                                "index_add_: index value 3 at index position (1,) is out of range [0, 3)");
  expect_error<pto::DTypeError>([&] { pto::index_add_(x, 0, index_i64({0, 1}), src, pto::Scalar::of_bool(true)); },
                                "alpha True is a bool");
  expect_error<pto::ArgumentError>(
      [&] { pto::index_add_(x, 0, index_i64({0, 1}), src, pto::Scalar::of_float(1.0 / 0.0)); }, "is not finite");
  expect_error<pto::ArgumentError>([&] { pto::index_add_(x, 0, index_i64({0}), src); },
                                   "source shape [2, 2] has 2 entries along dim 0 but index has 1");
  EXPECT_EQ(values_f32(x), before);
}

}  // namespace
