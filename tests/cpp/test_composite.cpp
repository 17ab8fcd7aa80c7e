// The composite family through the op table (call_op): results that must not depend on the thread
// count, the sort order's ties, quant_mx's codes, and the checks that run before anything is written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

pto::Tensor random_f32(const pto::Shape& shape, uint64_t seed, float scale = 4.0f) {
  pto::Tensor t = pto::Tensor::empty(shape, pto::DType::FP32);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = normal(rng);
  return t;
}

pto::Outputs call(const char* op, std::vector<pto::Value> args) {
  return pto::call_op(pto::op_def(op), pto::Args(std::move(args)));
}

bool same_bytes(const pto::Tensor& a, const pto::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), static_cast<size_t>(a.numel()) * a.itemsize()) == 0;
}

// Runs `run` with 1 and with 4 threads; every output must have the same bytes.
template <class Run>
void expect_thread_independent(Run run) {
  const int before = pto::get_num_threads();
  pto::set_num_threads(1);
  const pto::Outputs one = run();
  pto::set_num_threads(4);
  const pto::Outputs four = run();
  pto::set_num_threads(before);
  ASSERT_EQ(one.size(), four.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(same_bytes(one[i], four[i])) << "output " << i;
}

TEST(Composite, ResultsDoNotDependOnTheThreadCount) {
  const pto::Tensor x = random_f32({300, 2000}, 1);
  const pto::Tensor gamma = random_f32({2000}, 2);
  expect_thread_independent([&] { return call("softmax", {x, int64_t{-1}}); });
  expect_thread_independent([&] { return call("softmax", {x, int64_t{0}}); });
  expect_thread_independent([&] { return call("rms_norm", {x, gamma, pto::Scalar::of_float(1e-6)}); });
  expect_thread_independent([&] { return call("online_softmax", {x, pto::Scalar::of_float(0.125)}); });
  expect_thread_independent([&] { return call("topk", {x, int64_t{17}, std::monostate{}, false, int64_t{0}}); });
  expect_thread_independent([&] { return call("argsort", {x, int64_t{0}, true}); });
  expect_thread_independent([&] { return call("quant_mx", {x.as_strided({300, 1984}, {2000, 1}, 0), pto::DType::FP8E4M3,
                                                           int64_t{1}, int64_t{-1}, false}); });
}

TEST(Composite, SoftmaxRowsSumToOne) {
  const pto::Outputs out = call("softmax", {random_f32({64, 333}, 3), int64_t{1}});
  for (int64_t r = 0; r < 64; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < 333; ++c) sum += out[0].at<float>({r, c});
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(Composite, RmsNormIsADivisionByTheRoot) {
  pto::Tensor x = pto::Tensor::empty({1, 2}, pto::DType::FP32);
  x.data_as<float>()[0] = 3.0f;
  x.data_as<float>()[1] = 4.0f;
  const pto::Outputs out = call("rms_norm", {x, std::monostate{}, pto::Scalar::of_float(0.0)});
  const float root = std::sqrt((9.0f * 0.5f) + (16.0f * 0.5f));
  EXPECT_EQ(out[0].at<float>({0, 0}), 3.0f / root);
  EXPECT_EQ(out[0].at<float>({0, 1}), 4.0f / root);
}

TEST(Composite, TopkTiesGoToTheSmallerIndexAndNanLast) {
  pto::Tensor x = pto::Tensor::empty({1, 6}, pto::DType::FP32);
  const float v[6] = {1.0f, NAN, 2.0f, 1.0f, 2.0f, -0.0f};
  std::memcpy(x.data(), v, sizeof v);
  const pto::Outputs out = call("topk", {x, int64_t{6}, std::monostate{}, true, int64_t{0}});
  const std::vector<int32_t> want{2, 4, 0, 3, 5, 1};
  EXPECT_EQ(std::vector<int32_t>(out[1].data_as<int32_t>(), out[1].data_as<int32_t>() + 6), want);
  const pto::Outputs ascending = call("argsort", {x, int64_t{-1}, false});
  const std::vector<int32_t> want_ascending{5, 0, 3, 2, 4, 1};
  EXPECT_EQ(std::vector<int32_t>(ascending[0].data_as<int32_t>(), ascending[0].data_as<int32_t>() + 6), want_ascending);
}

TEST(Composite, QuantMxCodesAndScales) {
  pto::Tensor x = pto::Tensor::empty({1, 64}, pto::DType::FP32);
  for (int i = 0; i < 32; ++i) x.data_as<float>()[i] = 1.0f;        // 2^0: exponent 127 - 8
  for (int i = 32; i < 64; ++i) x.data_as<float>()[i] = 950.0f;     // 2^9: exponent 136 - 8, 475 saturates
  const pto::Outputs out = call("quant_mx", {x, pto::DType::FP8E4M3, int64_t{1}, int64_t{-1}, true});
  EXPECT_EQ(out[1].shape(), (pto::Shape{1, 1, 2}));
  EXPECT_EQ(out[1].data_as<uint8_t>()[0], 119);
  EXPECT_EQ(out[1].data_as<uint8_t>()[1], 128);
  EXPECT_EQ(out[0].data_as<uint8_t>()[0], pto::float_to_fp8e4m3_bits(256.0f));
  EXPECT_EQ(out[0].data_as<uint8_t>()[32], 0x7E);  // 448
}

TEST(Composite, ChecksBeforeAnything) {
  const pto::Tensor x = random_f32({4, 8}, 4);
  expect_error<pto::IndexError>([&] { call("softmax", {x, int64_t{2}}); }, "softmax: dim 2 is out of range");
  expect_error<pto::ArgumentError>([&] { call("topk", {x, int64_t{9}, std::monostate{}, true, int64_t{0}}); },
                                   "topk: k 9 is out of range [1, 8]");
  expect_error<pto::DTypeError>(
      [&] { call("quantize", {x, random_f32({4}, 5), pto::DType::UINT8, int64_t{-1}, std::monostate{}}); },
      "otype DT_UINT8 is not supported without zero_points");
  pto::PlatformScope a2("atlas_a2");
  expect_error<pto::UnsupportedError>([&] { call("online_softmax", {x, pto::Scalar::of_float(1.0)}); },
                                      "online_softmax: not offered on platform atlas_a2");
  expect_error<pto::ArgumentError>([&] { call("topk", {x, int64_t{2}, std::monostate{}, true, int64_t{1}}); },
                                   "RADIX_SELECT is not supported on platform atlas_a2");
}

}  // namespace
