#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "helpers.h"
#include "ptocpu/ptocpu.h"
#include "ptocpu/scalar.h"

namespace {

using namespace test_helpers;

TEST(Scatter, SeedExample) {
  pto::Tensor x = pto::Tensor::zeros({3, 5}, pto::DType::FP32);
  pto::Tensor out = pto::scatter_(x, 0, index_i64({2, 2}, {1, 2, 0, 1}), pto::Scalar::of_float(2.0));
  EXPECT_EQ(out.data(), x.data());
  EXPECT_EQ(values_f32(x), (std::vector<float>{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 2, 0, 0, 0}));
}

TEST(Scatter, TensorSrcAddOnLastDimWithDuplicates) {
  pto::Tensor x = arange_f32({2, 3});
  pto::Tensor src = arange_f32({2, 4});  // larger than index: only the [2, 3] prefix is read
  pto::Tensor out = pto::scatter(x, -1, index_i64({2, 3}, {0, 0, 2, 1, 1, 1}), src, pto::ScatterReduce::Add);
  EXPECT_EQ(values_f32(out), (std::vector<float>{0 + 0 + 1, 1, 2 + 2, 3, 4 + 4 + 5 + 6, 5}));
  EXPECT_EQ(values_f32(x), (std::vector<float>{0, 1, 2, 3, 4, 5}));  // scatter leaves input untouched
}

TEST(Scatter, MultiplyDimZeroThroughAView) {
  pto::Tensor base = arange_f32({4, 3});
  pto::Tensor view = base.as_strided({2, 3}, {6, 1}, 3);  // rows 1 and 3
  pto::scatter_(view, 0, index_i64({2, 2}, {1, 0, 1, 1}), pto::Scalar::of_int(2), pto::ScatterReduce::Multiply);
  EXPECT_EQ(values_f32(base), (std::vector<float>{0, 1, 2, 3, 8, 5, 6, 7, 8, 36, 20, 11}));
}

TEST(Scatter, Bf16AddRoundsOnce) {
  // 1 + 256 * 2^-9: per-step bf16 rounding would stay at 1 (each 2^-9 is below half an ulp).
  const int n = 256;
  pto::Tensor x = pto::Tensor::empty({1}, pto::DType::BF16);
  x.data_as<pto::bf16_t>()[0].bits = pto::float_to_bf16_bits(1.0f);
  pto::Tensor src = pto::Tensor::empty({n}, pto::DType::BF16);
  for (int i = 0; i < n; ++i) src.data_as<pto::bf16_t>()[i].bits = pto::float_to_bf16_bits(0x1p-9f);
  pto::Tensor index = pto::Tensor::zeros({n}, pto::DType::INT32);
  pto::scatter_(x, 0, index, src, pto::ScatterReduce::Add);
  EXPECT_EQ(pto::bf16_bits_to_float(x.data_as<pto::bf16_t>()[0].bits), 1.5f);
}

TEST(Scatter, IntegersWrapAround) {
  pto::Tensor x = pto::Tensor::empty({2}, pto::DType::INT8);
  x.data_as<int8_t>()[0] = 127;
  x.data_as<int8_t>()[1] = -128;
  pto::scatter_(x, 0, index_i64({3}, {0, 1, 1}), pto::Scalar::of_int(-1), pto::ScatterReduce::Add);
  EXPECT_EQ(x.data_as<int8_t>()[0], 126);
  EXPECT_EQ(x.data_as<int8_t>()[1], 126);
}

TEST(Scatter, BlockModeMatchesSerialLoop) {
  std::mt19937 rng(1);
  const int64_t n0 = 37, n1 = 300, m0 = 90, m1 = 280;
  pto::Tensor x = arange_f32({n0, n1});
  pto::Tensor src = pto::Tensor::empty({m0, m1}, pto::DType::FP32);
  pto::Tensor index = pto::Tensor::empty({m0, m1}, pto::DType::INT64);
  for (int64_t i = 0; i < m0 * m1; ++i) {
    src.data_as<float>()[i] = static_cast<float>(rng() % 1000) / 7.0f;
    index.data_as<int64_t>()[i] = rng() % n0;
  }
  std::vector<float> expected = values_f32(x);
  for (int64_t i = 0; i < m0; ++i)
    for (int64_t j = 0; j < m1; ++j) expected[index.at<int64_t>({i, j}) * n1 + j] += src.at<float>({i, j});
  for (int threads : {1, 2, 4}) {
    pto::set_num_threads(threads);
    EXPECT_EQ(values_f32(pto::scatter(x, 0, index, src, pto::ScatterReduce::Add)), expected) << threads << " threads";
  }
}

TEST(Scatter, ErrorsChangeNothing) {
  pto::Tensor x = arange_f32({3, 4});
  const std::vector<float> before = values_f32(x);
  const pto::Scalar one = pto::Scalar::of_float(1.0);
  try {
    pto::scatter_(x, 0, index_i64({2, 2}, {0, 1, 2, 3}), one);
    FAIL() << "expected IndexError";
  } catch (const pto::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("scatter_: index value 3 at index position (1, 1) is out of range [0, 3)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(pto::scatter_(x, 2, index_i64({1, 1}, {0}), one), pto::IndexError);
  EXPECT_THROW(pto::scatter_(x, 0, index_i64({2}, {0, 1}), one), pto::ArgumentError);          // index rank
  EXPECT_THROW(pto::scatter_(x, 0, index_i64({1, 5}, {0, 0, 0, 0, 0}), one), pto::ArgumentError);  // > input
  EXPECT_THROW(pto::scatter_(x, 0, index_i64({1, 1}, {0}), pto::Tensor::zeros({1, 1}, pto::DType::FP16)),
               pto::DTypeError);
  EXPECT_THROW(pto::scatter_(x, 0, pto::Tensor::zeros({1, 1}, pto::DType::FP32), one), pto::DTypeError);
  EXPECT_THROW(pto::scatter_reduce_from_name("sum"), pto::ArgumentError);
  pto::Tensor b = pto::Tensor::zeros({2}, pto::DType::BOOL);
  EXPECT_THROW(pto::scatter_(b, 0, index_i64({1}, {0}), pto::Scalar::of_bool(true), pto::ScatterReduce::Add),
               pto::DTypeError);
  {
    pto::PlatformScope scope("ascend950");
    EXPECT_THROW(pto::scatter_(x, 0, index_i64({1, 1}, {0}), pto::Scalar::of_float(1e39)), pto::ArgumentError);
    pto::set_vec_tile_shapes({2, 4});
    EXPECT_THROW(pto::scatter_(x, 0, index_i64({1, 1}, {0}), one), pto::TileError);  // tile[0] < 3
    pto::reset_vec_tile_shapes();
  }
  EXPECT_EQ(values_f32(x), before);
}

// Every kernel path on a rank-3 bf16 input against a serial fp32-accumulator reference:
// dense (packed) and sparse blocks, index smaller than input on the inner axes, strided src.
TEST(Scatter, Bf16BlocksMatchSerialReference) {
  std::mt19937 rng(3);
  const pto::Shape xs{30, 5, 20};
  for (int64_t m0 : {40, 3}) {  // dense (packed) and sparse
    for (auto reduce : {pto::ScatterReduce::None, pto::ScatterReduce::Add, pto::ScatterReduce::Multiply}) {
      pto::Tensor x = pto::Tensor::empty(xs, pto::DType::BF16);
      for (int64_t i = 0; i < x.numel(); ++i)
        x.data_as<pto::bf16_t>()[i].bits = pto::float_to_bf16_bits(0.5f + static_cast<float>(rng() % 100) / 100.0f);
      const pto::Shape is{m0, 4, 17};
      pto::Tensor index = pto::Tensor::empty(is, pto::DType::INT64);
      pto::Tensor src_base = pto::Tensor::empty({m0, 4, 34}, pto::DType::BF16);
      for (int64_t i = 0; i < index.numel(); ++i) index.data_as<int64_t>()[i] = rng() % xs[0];
      for (int64_t i = 0; i < src_base.numel(); ++i)
        src_base.data_as<pto::bf16_t>()[i].bits =
            pto::float_to_bf16_bits(0.75f + static_cast<float>(rng() % 64) / 128.0f);
      pto::Tensor src = src_base.as_strided(is, {4 * 34, 34, 2}, 0);  // every other element
      // reference: fp32 accumulators, row-major contributions, one rounding
      std::vector<float> acc(x.numel());
      for (int64_t i = 0; i < x.numel(); ++i) acc[i] = pto::bf16_bits_to_float(x.data_as<pto::bf16_t>()[i].bits);
      std::vector<bool> touched(x.numel());
      for (int64_t a = 0; a < is[0]; ++a)
        for (int64_t b = 0; b < is[1]; ++b)
          for (int64_t c = 0; c < is[2]; ++c) {
            const int64_t q = (index.at<int64_t>({a, b, c}) * xs[1] + b) * xs[2] + c;
            const float v = pto::bf16_bits_to_float(src.at<pto::bf16_t>({a, b, c}).bits);
            if (reduce == pto::ScatterReduce::None) acc[q] = v;
            else acc[q] = reduce == pto::ScatterReduce::Add ? acc[q] + v : acc[q] * v;
            touched[q] = true;
          }
      pto::Tensor out = pto::scatter(x, 0, index, src, reduce);
      for (int64_t i = 0; i < x.numel(); ++i) {
        const uint16_t want = touched[i] ? pto::float_to_bf16_bits(acc[i]) : x.data_as<pto::bf16_t>()[i].bits;
        ASSERT_EQ(out.data_as<pto::bf16_t>()[i].bits, want) << "m0 " << m0 << " reduce " << int(reduce) << " at " << i;
      }
    }
  }
}

}  // namespace
