#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "helpers.h"
#include "kernels/matmul.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

// Small integers: every partial sum is exact in fp32, so any summation order gives these values.
pto::Tensor small_ints(const pto::Shape& shape, pto::DType dt, int seed) {
  pto::Tensor f = pto::Tensor::empty(shape, pto::DType::FP32);
  for (int64_t i = 0; i < f.numel(); ++i) f.data_as<float>()[i] = static_cast<float>((i * 5 + seed) % 7 - 3);
  return dt == pto::DType::FP32 ? f : pto::astype(f, dt);
}

std::vector<double> reference(const pto::Tensor& a, const pto::Tensor& b, bool a_trans, bool b_trans) {
  const pto::Tensor fa = pto::astype(a, pto::DType::FP64).contiguous(), fb = pto::astype(b, pto::DType::FP64).contiguous();
  const int64_t m = a_trans ? a.shape(1) : a.shape(0), k = a_trans ? a.shape(0) : a.shape(1);
  const int64_t n = b_trans ? b.shape(0) : b.shape(1);
  std::vector<double> out(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < k; ++q)
        out[i * n + j] += fa.data_as<double>()[a_trans ? q * m + i : i * k + q] *
                          fb.data_as<double>()[b_trans ? j * k + q : q * n + j];
  return out;
}

TEST(Matmul, TransposedOperandsOfEveryFloatDtype) {
  for (pto::DType dt : {pto::DType::FP16, pto::DType::BF16, pto::DType::FP32, pto::DType::FP8E4M3}) {
    for (const bool at : {false, true})
      for (const bool bt : {false, true}) {
        const pto::Tensor a = small_ints(at ? pto::Shape{30, 21} : pto::Shape{21, 30}, dt, 1);
        const pto::Tensor b = small_ints(bt ? pto::Shape{17, 30} : pto::Shape{30, 17}, dt, 4);
        pto::MatmulOptions o;
        o.a_trans = at;
        o.b_trans = bt;
        const pto::Tensor out = pto::matmul(a, b, pto::DType::FP32, o);
        const std::vector<double> want = reference(a, b, at, bt);
        const std::vector<float> got = values_f32(out);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << pto::dtype_name(dt) << " " << i;
      }
  }
}

TEST(Matmul, Int8IsExactWithBiasAndResultsDoNotDependOnThreads) {
  pto::Tensor a = pto::Tensor::empty({300, 900}, pto::DType::INT8), b = pto::Tensor::empty({900, 700}, pto::DType::INT8);
  for (int64_t i = 0; i < a.numel(); ++i) a.data_as<int8_t>()[i] = static_cast<int8_t>((i * 37) % 256 - 128);
  for (int64_t i = 0; i < b.numel(); ++i) b.data_as<int8_t>()[i] = static_cast<int8_t>((i * 101) % 256 - 128);
  pto::MatmulOptions o;
  o.extend.bias_tensor = pto::Tensor::empty({1, 700}, pto::DType::INT32);
  for (int64_t j = 0; j < 700; ++j) o.extend.bias_tensor.data_as<int32_t>()[j] = static_cast<int32_t>(j * 1000 - 7);
  const int threads = pto::get_num_threads();
  pto::set_num_threads(1);
  const pto::Tensor one = pto::matmul(a, b, pto::DType::INT32, o);
  pto::set_num_threads(2);
  const pto::Tensor two = pto::matmul(a, b, pto::DType::INT32, o);
  pto::set_num_threads(threads);
  for (int64_t i = 0; i < 300; i += 37)
    for (int64_t j = 0; j < 700; j += 53) {
      int64_t want = j * 1000 - 7;
      for (int64_t q = 0; q < 900; ++q) want += int64_t(a.data_as<int8_t>()[i * 900 + q]) * b.data_as<int8_t>()[q * 700 + j];
      EXPECT_EQ(one.data_as<int32_t>()[i * 700 + j], want);
    }
  EXPECT_EQ(0, std::memcmp(one.data(), two.data(), static_cast<size_t>(one.numel()) * 4));
}

TEST(Matmul, FloatResultsDoNotDependOnThreads) {
  pto::Tensor a = pto::Tensor::empty({2, 600, 500}, pto::DType::FP32), b = pto::Tensor::empty({500, 1300}, pto::DType::FP32);
  for (int64_t i = 0; i < a.numel(); ++i) a.data_as<float>()[i] = std::sin(0.37f * static_cast<float>(i));
  for (int64_t i = 0; i < b.numel(); ++i) b.data_as<float>()[i] = std::cos(0.11f * static_cast<float>(i));
  const pto::Tensor b3 = b.as_strided({1, 500, 1300}, {0, 1300, 1}, 0);
  const int threads = pto::get_num_threads();
  pto::set_num_threads(1);
  const pto::Tensor one = pto::matmul(a, b3, pto::DType::FP32);
  pto::set_num_threads(2);
  const pto::Tensor two = pto::matmul(a, b3, pto::DType::FP32);
  pto::set_num_threads(threads);
  EXPECT_EQ(0, std::memcmp(one.data(), two.data(), static_cast<size_t>(one.numel()) * 4));
}

TEST(Matmul, Tf32RoundingAndThe19BitScale) {
  namespace k = pto::kernels::matmul;
  const float half_way = 1.0f + std::ldexp(1.0f, -11);  // between TF32's 1 and 1 + 2^-10
  EXPECT_EQ(k::to_tf32(half_way, pto::TransMode::CAST_RINT), 1.0f);
  EXPECT_EQ(k::to_tf32(half_way, pto::TransMode::CAST_ROUND), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(k::to_tf32(-half_way, pto::TransMode::CAST_ROUND), -(1.0f + std::ldexp(1.0f, -10)));
  EXPECT_EQ(k::to_tf32(half_way, pto::TransMode::CAST_NONE), half_way);
  EXPECT_TRUE(std::isnan(k::to_tf32(NAN, pto::TransMode::CAST_RINT)));
  EXPECT_EQ(std::bit_cast<uint32_t>(k::scale_19bit(0.2f)), std::bit_cast<uint32_t>(0.2f) & 0xFFFFE000u);
}

TEST(Matmul, Errors) {
  const pto::Tensor f = small_ints({16, 32}, pto::DType::FP16, 0);
  expect_error<pto::ArgumentError>([&] { pto::matmul(f, f, pto::DType::FP32); }, "K of input");
  expect_error<pto::DTypeError>([&] { pto::matmul(f, f.as_strided({32, 16}, {1, 32}, 0), pto::DType::INT32); },
                                "out_dtype DT_INT32 is not supported for DT_FP16");
  pto::PlatformScope chip("atlas_a2");
  expect_error<pto::TileError>([&] { pto::matmul(f, f.as_strided({32, 16}, {1, 32}, 0), pto::DType::FP32); },
                               "no cube tile shape is set");
  pto::set_cube_tile_shapes({16, 16}, {16, 16}, {1040, 1040});
  pto::MatmulOptions o;
  o.extend.bias_tensor = small_ints({1, 1040}, pto::DType::FP32, 0);
  const pto::Tensor wide = small_ints({32, 1040}, pto::DType::FP16, 0);  // N as large as nL0: nothing clipped
  expect_error<pto::TileError>([&] { pto::matmul(f, wide, pto::DType::FP32, o); },
                               "needs 4160 bytes of bias table (nL0 1040 * 4 bytes) but platform atlas_a2 has 1024");
  pto::reset_cube_tile_shapes();
}

}  // namespace
