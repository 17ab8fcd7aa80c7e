#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "ptocpu/ptocpu.h"
#include "ptocpu/scalar.h"

namespace {

TEST(Tensor, EmptyIsContiguousWithRowMajorStrides) {
  pto::Tensor t = pto::Tensor::empty({2, 3, 4}, pto::DType::FP16);
  EXPECT_EQ(t.strides(), (pto::Strides{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.itemsize(), 2u);
  EXPECT_TRUE(t.is_contiguous());
}

TEST(Tensor, ViewsShareStorageAndNegativeStridesWork) {
  pto::Tensor t = pto::Tensor::empty({2, 3}, pto::DType::INT32);
  std::iota(t.data_as<int32_t>(), t.data_as<int32_t>() + 6, 0);
  pto::Tensor reversed = t.as_strided({2, 3}, {3, -1}, 2);  // t[:, ::-1]
  EXPECT_FALSE(reversed.is_contiguous());
  EXPECT_EQ(reversed.at<int32_t>({0, 0}), 2);
  EXPECT_EQ(reversed.at<int32_t>({1, 2}), 3);
  reversed.at<int32_t>({1, 0}) = 42;
  EXPECT_EQ(t.at<int32_t>({1, 2}), 42);
  pto::Tensor c = reversed.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.at<int32_t>({0, 0}), 2);
  EXPECT_EQ(c.at<int32_t>({1, 0}), 42);
  EXPECT_EQ(c.at<int32_t>({1, 2}), 3);
}

TEST(Tensor, FromBlobKeepsOwnerAlive) {
  auto owner = std::make_shared<std::vector<double>>(4, 1.5);
  pto::Tensor t = pto::Tensor::from_blob(owner->data(), {2, 2}, {2, 1}, pto::DType::FP64, owner);
  owner.reset();
  EXPECT_EQ(t.at<double>({1, 1}), 1.5);
}

TEST(Tensor, ReadOnlyMemoryIsNeverWritten) {
  pto::Tensor t = pto::Tensor::zeros({2, 3}, pto::DType::FP32).as_read_only();
  pto::Tensor view = t.as_strided({3}, {1}, 3);
  EXPECT_TRUE(view.read_only());
  pto::Tensor ones = pto::Tensor::empty({3}, pto::DType::FP32);
  std::fill(ones.data_as<float>(), ones.data_as<float>() + 3, 1.0f);
  EXPECT_THROW(pto::copy_into(view, ones), pto::ArgumentError);
  EXPECT_EQ(t.at<float>({1, 0}), 0.0f);
}

TEST(Tensor, SizesThatOverflowInt64AreRefusedBeforeAllocating) {
  EXPECT_THROW(pto::Tensor::empty({int64_t(1) << 40, int64_t(1) << 40}, pto::DType::FP32), pto::ArgumentError);
  EXPECT_THROW(pto::Tensor::empty({int64_t(1) << 62, 4}, pto::DType::FP32), pto::ArgumentError);
  EXPECT_THROW(pto::Tensor::empty({-1, 3}, pto::DType::FP32), pto::ArgumentError);
  EXPECT_EQ(pto::Tensor::empty({0, int64_t(1) << 62, int64_t(1) << 62}, pto::DType::FP32).numel(), 0);
  EXPECT_EQ(pto::checked_nbytes({3, 4}, 2, "t"), 24);
}

TEST(Tensor, SmallBlocksAreReusedAndZerosAreZeroAgain) {
  // A freed 16 KiB block comes back for the next request of its size (this thread's recent
  // blocks); zeros() clears what the previous tensor left there, and live tensors never share one.
  [[maybe_unused]] const void* freed = nullptr;
  {
    pto::Tensor t = pto::Tensor::empty({4096}, pto::DType::FP32);
    std::fill_n(t.data_as<float>(), 4096, 7.0f);
    freed = t.data();
  }
  pto::Tensor z = pto::Tensor::zeros({4096}, pto::DType::FP32);
#ifndef __SANITIZE_ADDRESS__  // (under AddressSanitizer nothing is cached)
  EXPECT_EQ(z.data(), freed);
#endif
  EXPECT_TRUE(std::all_of(z.data_as<float>(), z.data_as<float>() + 4096, [](float v) { return v == 0.0f; }));
  pto::Tensor other = pto::Tensor::empty({4096}, pto::DType::FP32);
  EXPECT_NE(other.data(), z.data());
  // Blocks freed on another thread stay with that thread's cache or go back to malloc.
  std::thread([] { pto::Tensor t = pto::Tensor::empty({8192}, pto::DType::INT8); }).join();
}

TEST(Tensor, OverlapUsesTheByteSpan) {
  pto::Tensor t = pto::Tensor::empty({4, 4}, pto::DType::FP32);
  pto::Tensor top = t.as_strided({2, 4}, {4, 1}, 0), bottom = t.as_strided({2, 4}, {4, 1}, 8);
  EXPECT_FALSE(top.may_overlap(bottom));
  EXPECT_TRUE(t.may_overlap(bottom));
}

TEST(DType, TraitsAndNames) {
  EXPECT_EQ(pto::dtype_size(pto::DType::BF16), 2u);
  EXPECT_EQ(pto::dtype_size(pto::DType::FP8E8M0), 1u);
  EXPECT_EQ(pto::dtype_from_name("bfloat16"), pto::DType::BF16);
  EXPECT_EQ(pto::dtype_from_name("DT_FP32"), pto::DType::FP32);
  EXPECT_EQ(pto::dtype_from_name("float8_e4m3fn"), pto::DType::FP8E4M3);
  EXPECT_THROW(pto::dtype_from_name("complex64"), pto::ArgumentError);
  EXPECT_TRUE(pto::is_floating(pto::DType::FP8E5M2));
  EXPECT_FALSE(pto::is_floating(pto::DType::BOOL));
}

TEST(DType, SmallFloatConversionsKnownCodes) {
  EXPECT_EQ(pto::float_to_fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(pto::float_to_fp16_bits(65520.0f), 0x7C00);  // rounds to inf
  EXPECT_EQ(pto::float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(448.0f), 0x7E);
  EXPECT_EQ(pto::float_to_fp8e4m3_bits(465.0f), 0x7F);  // E4M3FN overflow is NaN
  EXPECT_EQ(pto::float_to_fp8e5m2_bits(1e6f), 0x7C);    // E5M2 overflow is inf
  EXPECT_EQ(pto::float_to_fp8e8m0_bits(1.0f), 127);
  EXPECT_TRUE(std::isnan(pto::fp8e4m3_bits_to_float(0xFF)));
  EXPECT_EQ(pto::fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
}

TEST(Scalar, ConversionRules) {
  unsigned char out[8];
  pto::encode_scalar(pto::Scalar::of_float(-2.9), pto::DType::INT8, out, "t", "v");
  EXPECT_EQ(static_cast<int8_t>(out[0]), -2);
  EXPECT_THROW(pto::encode_scalar(pto::Scalar::of_int(300), pto::DType::UINT8, out, "t", "v"), pto::ArgumentError);
  EXPECT_THROW(pto::encode_scalar(pto::Scalar::of_int(2), pto::DType::BOOL, out, "t", "v"), pto::ArgumentError);
  pto::encode_scalar(pto::Scalar::of_float(1e10), pto::DType::FP16, out, "t", "v");
  EXPECT_EQ(out[0] | (out[1] << 8), 0x7C00);
}

TEST(Runtime, PlatformsAndThreads) {
  EXPECT_EQ(pto::current_platform().name, "cpu");
  {
    pto::PlatformScope scope("DAV_3510");
    EXPECT_EQ(pto::current_platform().name, "ascend950");
  }
  EXPECT_EQ(pto::current_platform().name, "cpu");
  EXPECT_THROW(pto::set_platform("tpu"), pto::ArgumentError);
  EXPECT_THROW(pto::set_num_threads(0), pto::ArgumentError);
  EXPECT_THROW(pto::set_num_threads(pto::kMaxThreads + 1), pto::ArgumentError);
  EXPECT_THROW(pto::set_num_threads(int64_t(1) << 31), pto::ArgumentError);  // not truncated to an int
  EXPECT_THROW(pto::set_vec_tile_shapes({4, 0}), pto::TileError);
  EXPECT_THROW(pto::set_vec_tile_shapes({}), pto::TileError);
}

TEST(Runtime, ParallelForCoversTheRangeOnce) {
  const int saved = pto::get_num_threads();
  pto::set_num_threads(4);
  std::vector<int> hits(100000, 0);
  pto::parallel_for(static_cast<int64_t>(hits.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[i];
  });
  pto::set_num_threads(saved);
  for (int h : hits) ASSERT_EQ(h, 1);
}

}  // namespace
