// The reduction family through the op table (call_op) and its engine (kernels/reduction.h): values,
// the documented order where it shows, thread-count independence, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "helpers.h"
#include "kernels/reduction.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

pto::Tensor run(const char* op, std::vector<pto::Value> args) {
  return pto::call_op(pto::op_def(op), pto::Args(std::move(args)))[0];
}

pto::Tensor random_f32(const pto::Shape& shape, uint64_t seed) {
  pto::Tensor t = pto::Tensor::empty(shape, pto::DType::FP32);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

bool same_bits(const pto::Tensor& a, const pto::Tensor& b) {
  const pto::Tensor x = a.contiguous(), y = b.contiguous();
  return x.shape() == y.shape() && x.dtype() == y.dtype() &&
         std::memcmp(x.data(), y.data(), static_cast<size_t>(x.numel()) * x.itemsize()) == 0;
}

TEST(Reduction, ValuesAndShapes) {
  const pto::Tensor x = arange_f32({2, 3}, 1.0f);  // [[1, 2, 3], [4, 5, 6]]
  EXPECT_EQ(values_f32(run("sum", {x, int64_t(0), false})), (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(values_f32(run("prod", {x, int64_t(-1), false})), (std::vector<float>{6, 120}));
  EXPECT_EQ(values_f32(run("amax", {x, int64_t(1), false})), (std::vector<float>{3, 6}));
  EXPECT_EQ(values_f32(run("amin", {x, int64_t(0), false})), (std::vector<float>{1, 2, 3}));
  const pto::Tensor arg = run("argmax", {x, int64_t(0), true});
  EXPECT_EQ(arg.dtype(), pto::DType::INT32);
  EXPECT_EQ(arg.shape(), (pto::Shape{1, 3}));
  EXPECT_EQ(arg.data_as<int32_t>()[2], 1);
  EXPECT_EQ(run("sum", {arange_f32({5}), int64_t(0), false}).shape(), (pto::Shape{1}));  // 1-D keeps [1]
  EXPECT_EQ(values_f32(run("var", {x, std::vector<int64_t>{1}, pto::Scalar::of_int(1), true})),
            (std::vector<float>{1, 1}));
  EXPECT_EQ(run("var", {x, std::monostate{}, pto::Scalar::of_int(1), false}).shape(), (pto::Shape{1}));
  EXPECT_EQ(values_f32(run("cumsum", {x, int64_t(1)})), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  const pto::Tensor ints = run("cumsum", {arange_i32({2, 3}), int64_t(0)});
  EXPECT_EQ(ints.dtype(), pto::DType::INT64);
  EXPECT_EQ(ints.data_as<int64_t>()[5], 2 + 5);
}

// Lanes: in a contiguous row of 64, element i goes to lane i % 32. 2^24 + 1 + 1 added in sequence
// stays 2^24; in separate lanes the ones meet first and survive.
TEST(Reduction, ContiguousRowsUseLanes) {
  pto::Tensor x = pto::Tensor::zeros({64}, pto::DType::FP32);
  float* p = x.data_as<float>();
  p[0] = 16777216.0f, p[1] = 1.0f, p[32] = 1.0f, p[33] = 1.0f;
  // In order: 2^24 + 1 rounds to 2^24 (ties to even) three times. In lanes: lane 0 = 2^24 + 1 =
  // 2^24, lane 1 = 1 + 1 = 2, and the fold adds them: 2^24 + 2, exact.
  EXPECT_EQ(values_f32(run("sum", {x, int64_t(0), false}))[0], 16777218.0f);
}

// Columns: along a strided axis each column adds its rows in order within a block of 128 (a
// pairwise order would give (2^24 + 1) + (1 + 1) = 2^24 + 2).
TEST(Reduction, StridedAxesAddInOrderWithinABlock) {
  pto::Tensor x = pto::Tensor::zeros({4, 2}, pto::DType::FP32);
  float* p = x.data_as<float>();
  p[0] = 16777216.0f, p[2] = 1.0f, p[4] = 1.0f, p[6] = 1.0f;  // column 0: 2^24, 1, 1, 1
  EXPECT_EQ(values_f32(run("sum", {x, int64_t(0), false}))[0], 16777216.0f);
}

TEST(Reduction, ThreadCountDoesNotChangeTheBits) {
  const int before = pto::get_num_threads();
  const pto::Tensor big = random_f32({1 << 17}, 1), wide = random_f32({24, 9000}, 2), tall = random_f32({9000, 3000}, 3);
  const auto all = [&] {
    std::vector<pto::Tensor> out;
    for (const char* op : {"sum", "prod", "amax", "argmin"})
      for (const pto::Tensor* t : {&big, &wide, &tall}) out.push_back(run(op, {*t, int64_t(0), false}));
    for (const char* op : {"cumsum", "cumprod"}) {
      out.push_back(run(op, {big, int64_t(0)}));
      out.push_back(run(op, {wide, int64_t(1)}));
      out.push_back(run(op, {tall, int64_t(0)}));
    }
    out.push_back(run("var", {tall, std::monostate{}, pto::Scalar::of_int(1), false}));
    return out;
  };
  pto::set_num_threads(1);
  const std::vector<pto::Tensor> one = all();
  pto::set_num_threads(4);
  const std::vector<pto::Tensor> four = all();
  pto::set_num_threads(before);
  ASSERT_EQ(one.size(), four.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(same_bits(one[i], four[i])) << "result " << i;
}

TEST(Reduction, KernelSumWithATransform) {
  namespace kr = pto::kernels::reduction;
  const pto::Tensor x = arange_f32({2, 4}, 1.0f);
  pto::Tensor out = pto::Tensor::empty({2, 1}, pto::DType::FP32);
  kr::Reduce r;
  r.input = x, r.dim = 1, r.out = out, r.transform = kr::Transform::Scaled, r.divisor = 4;
  kr::reduce(r);
  EXPECT_EQ(values_f32(out), (std::vector<float>{2.5f, 6.5f}));  // means
  pto::Tensor var = pto::Tensor::empty({2, 1}, pto::DType::FP32);
  r.out = var, r.transform = kr::Transform::SquaredDeviation, r.divisor = 3, r.center = out;
  kr::reduce(r);
  EXPECT_FLOAT_EQ(values_f32(var)[0], 5.0f / 3.0f);
}

TEST(Reduction, Errors) {
  const pto::Tensor x = arange_f32({2, 3});
  expect_error<pto::IndexError>([&] { run("sum", {x, int64_t(2), false}); }, "sum: dim 2 is out of range");
  expect_error<pto::ArgumentError>([&] { run("var", {x, std::vector<int64_t>{0, -2}, pto::Scalar::of_int(1), false}); },
                                   "names dim 0 twice");
  expect_error<pto::ArgumentError>([&] { run("amax", {pto::Tensor::empty({2, 0}, pto::DType::FP32), int64_t(1), false}); },
                                   "no elements along dim 1");
  {
    pto::PlatformScope chip("atlas_a2");
    expect_error<pto::DTypeError>([&] { run("prod", {pto::Tensor::zeros({2}, pto::DType::FP16), int64_t(0), false}); },
                                  "prod: input dtype DT_FP16 is not supported on platform atlas_a2");
    pto::TileShapeScope tile({128, 256});
    expect_error<pto::TileError>([&] { run("sum", {pto::Tensor::zeros({128, 256}, pto::DType::FP32), int64_t(0), false}); },
                                 "above the 65536 bytes (64 KB)");
  }
  pto::TileShapeScope tile({2, 3});
  expect_error<pto::TileError>([&] { run("argmin", {x, int64_t(1), false}); }, "multiple of 32 bytes");
}

}  // namespace
