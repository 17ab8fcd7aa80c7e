// kernels/cast.h: every vectorised block conversion gives the bits of the exact element path
// (convert_element), for every rounding and saturation, on every instruction set this CPU offers
// and with streamed stores; and the exact path itself on values worked out by hand (the Python
// tests check it against the formats' definitions at length).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/cast.h"
#include "ptocpu/ptocpu.h"

namespace {

using pto::DType;
using pto::Round;
namespace kc = pto::kernels::cast;

constexpr Round kRounds[] = {Round::NearestEven, Round::NearestAway, Round::Down, Round::Up, Round::TowardZero, Round::ToOdd};

// Inputs of `dt` that reach every branch: every code of the 1- and 2-byte dtypes; for wider
// ones the edges, values around halfway points and integers, and random bit patterns.
pto::Tensor inputs_of(DType dt) {
  const size_t size = pto::dtype_size(dt);
  std::vector<uint8_t> bytes;
  if (size <= 2) {
    const uint32_t codes = 1u << (8 * size);
    bytes.resize(codes * size);
    for (uint32_t c = 0; c < codes; ++c) std::memcpy(bytes.data() + c * size, &c, size);
    if (dt == DType::BOOL)
      for (auto& b : bytes) b &= 1;
  } else {
    std::mt19937_64 rng(7);
    std::vector<uint64_t> words;
    if (dt == DType::FP32) {
      for (float f : {0.0f, -0.0f, 0.5f, 1.5f, 2.5f, -2.5f, 65504.0f, 65519.99f, 65520.0f, 1e10f, -1e10f, 0x1p31f,
                      -0x1p31f, 0x1p63f, 3e38f, std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), 1e-45f, 0x1p-23f,
                      0x1p-24f, 1.5f * 0x1p-24f, 448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 32768.0f, 40960.0f, 40959.0f})
        words.push_back(std::bit_cast<uint32_t>(f));
      for (int i = -300; i <= 300; ++i) {
        words.push_back(std::bit_cast<uint32_t>(i * 0.25f));
        words.push_back(std::bit_cast<uint32_t>(std::ldexp(1.0f + i / 1024.0f, i / 10)));
      }
      for (int i = 0; i < 40000; ++i) words.push_back(static_cast<uint32_t>(rng()));
    } else {
      const uint64_t edges[] = {0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                                0x1000001, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, ~0ull};
      for (uint64_t e : edges) words.push_back(e), words.push_back(~e + 1);
      for (int i = 0; i < 40000; ++i) words.push_back(rng() >> (rng() % 64));
    }
    bytes.resize(words.size() * size);
    for (size_t i = 0; i < words.size(); ++i) std::memcpy(bytes.data() + i * size, &words[i], size);
  }
  const int64_t n = static_cast<int64_t>(bytes.size() / size);
  pto::Tensor t = pto::Tensor::empty({n}, dt);
  std::memcpy(t.data(), bytes.data(), bytes.size());
  return t;
}

struct Case {
  DType from, to;
  kc::Rule rule;
};

std::string name_of(const Case& c) {
  return std::string(pto::dtype_name(c.from)) + " -> " + pto::dtype_name(c.to) + " round " +
         std::to_string(static_cast<int>(c.rule.round)) + (c.rule.saturate ? " sat" : "") + (c.rule.to_integral ? " integral" : "");
}

void expect_exact(const Case& c, const pto::Tensor& in) {
  pto::Tensor out = pto::Tensor::empty(in.shape(), c.to);
  kc::convert(in, out, c.rule);
  const size_t fs = in.itemsize(), ts = out.itemsize();
  std::vector<std::byte> want(ts);
  const auto* src = static_cast<const std::byte*>(in.data());
  const auto* got = static_cast<const std::byte*>(out.data());
  for (int64_t i = 0; i < in.numel(); ++i) {
    kc::convert_element(c.from, src + i * fs, c.to, want.data(), c.rule);
    if (std::memcmp(want.data(), got + i * ts, ts) != 0) {
      uint64_t a = 0, b = 0, x = 0;
      std::memcpy(&a, want.data(), ts);
      std::memcpy(&b, got + i * ts, ts);
      std::memcpy(&x, src + i * fs, fs);
      ADD_FAILURE() << name_of(c) << ": input bits 0x" << std::hex << x << " gives 0x" << b << ", exact path 0x" << a;
      return;
    }
  }
}

std::vector<Case> cases() {
  const DType floats[] = {DType::FP32, DType::FP16, DType::BF16, DType::FP8E4M3, DType::FP8E5M2, DType::HF8,
                          DType::FP4_E2M1, DType::FP4_E1M2, DType::HF4, DType::INT4};
  const DType narrow_targets[] = {DType::FP16, DType::BF16, DType::FP8E4M3, DType::FP8E5M2, DType::HF8,
                                  DType::FP4_E2M1, DType::FP4_E1M2, DType::FP32, DType::FP64};
  const DType ints[] = {DType::INT8, DType::UINT8, DType::INT16, DType::UINT16, DType::INT32, DType::UINT32,
                        DType::INT64, DType::BOOL};
  std::vector<Case> out;
  for (DType from : floats)
    for (Round r : kRounds)
      for (bool sat : {false, true}) {
        for (DType to : narrow_targets)
          if (to != from) out.push_back({from, to, {r, sat}});
        for (DType to : ints)
          if (to != DType::BOOL) out.push_back({from, to, {r, sat}});
      }
  for (Round r : kRounds) out.push_back({DType::FP32, DType::FP32, {r, false, true}});
  for (DType from : ints)
    for (bool sat : {false, true}) {
      for (DType to : ints)
        if (to != DType::BOOL && to != from) out.push_back({from, to, {Round::NearestEven, sat}});
      for (Round r : kRounds)
        for (DType to : {DType::FP32, DType::FP16, DType::BF16}) out.push_back({from, to, {r, sat}});
    }
  return out;
}

// One test per instruction set and store kind, so that CTest runs them side by side (under the
// sanitizers each takes most of a minute).
struct Target {
  const char* isa;
  bool streamed;  // every output written with streaming stores
};

class CastBlocks : public ::testing::TestWithParam<Target> {};

TEST_P(CastBlocks, EveryFastBlockGivesTheExactPathsBits) {
  pto::set_kernel_tuning(GetParam().streamed ? 0 : -1, GetParam().isa);
  for (const Case& c : cases()) expect_exact(c, inputs_of(c.from));
  pto::set_kernel_tuning(-1, nullptr);
}

INSTANTIATE_TEST_SUITE_P(CastKernels, CastBlocks,
                         ::testing::Values(Target{"avx512", false}, Target{"avx512", true}, Target{"avx2", false},
                                           Target{"avx2", true}, Target{"baseline", false}, Target{"baseline", true}),
                         [](const ::testing::TestParamInfo<Target>& info) {
                           return std::string(info.param.isa) + (info.param.streamed ? "_streamed" : "");
                         });

TEST(CastKernels, ResultsDoNotDependOnTheThreadCount) {
  const int threads = pto::get_num_threads();
  pto::Tensor in = inputs_of(DType::FP32);
  std::vector<pto::Tensor> outs;
  for (int t : {1, 2}) {
    pto::set_num_threads(t);
    pto::Tensor out = pto::Tensor::empty(in.shape(), DType::FP16);
    kc::convert(in, out, {Round::NearestAway, true});
    outs.push_back(out);
  }
  pto::set_num_threads(threads);
  EXPECT_EQ(std::memcmp(outs[0].data(), outs[1].data(), in.numel() * 2), 0);
}

uint64_t one(DType from, double value, DType to, kc::Rule rule) {
  std::byte src[8] = {}, dst[8] = {};
  if (from == DType::FP32) {
    const float f = static_cast<float>(value);
    std::memcpy(src, &f, 4);
  } else {
    const auto i = static_cast<int64_t>(value);
    std::memcpy(src, &i, pto::dtype_size(from));
  }
  kc::convert_element(from, src, to, dst, rule);
  uint64_t out = 0;
  std::memcpy(&out, dst, pto::dtype_size(to));
  return out;
}

TEST(CastKernels, ExactPathByHand) {
  // fp16 300 -> int8: clamp, or the low byte (0x12C -> 0x2C = 44; -300 -> 0xD4 = -44).
  EXPECT_EQ(one(DType::FP32, 300, DType::INT8, {Round::TowardZero, true}), 127u);
  EXPECT_EQ(one(DType::FP32, 300, DType::INT8, {Round::TowardZero, false}), 44u);
  EXPECT_EQ(one(DType::FP32, -300, DType::INT8, {Round::TowardZero, false}), 0xD4u);
  // +inf keeps the low bits of the largest wide integer (all ones), -inf of the smallest (zeros).
  EXPECT_EQ(one(DType::FP32, INFINITY, DType::INT16, {Round::TowardZero, false}), 0xFFFFu);
  EXPECT_EQ(one(DType::FP32, -INFINITY, DType::INT16, {Round::TowardZero, false}), 0u);
  EXPECT_EQ(one(DType::FP32, NAN, DType::INT32, {Round::TowardZero, true}), 0u);
  // Ties: 2.5 -> 2 (even), 3 (away); -2.5 floor -3, ceil -2.
  EXPECT_EQ(one(DType::FP32, 2.5, DType::INT32, {Round::NearestEven, true}), 2u);
  EXPECT_EQ(one(DType::FP32, 2.5, DType::INT32, {Round::NearestAway, true}), 3u);
  EXPECT_EQ(one(DType::FP32, -2.5, DType::INT32, {Round::Down, true}), static_cast<uint32_t>(-3));
  EXPECT_EQ(one(DType::FP32, -2.5, DType::INT32, {Round::Up, true}), static_cast<uint32_t>(-2));
  // int32 2^24 + 1 -> fp32: between 2^24 and 2^24 + 2: even gives 2^24, up 2^24 + 2, odd 2^24 + 2.
  EXPECT_EQ(one(DType::INT32, 16777217, DType::FP32, {Round::NearestEven}), std::bit_cast<uint32_t>(16777216.0f));
  EXPECT_EQ(one(DType::INT32, 16777217, DType::FP32, {Round::Up}), std::bit_cast<uint32_t>(16777218.0f));
  EXPECT_EQ(one(DType::INT32, 16777217, DType::FP32, {Round::ToOdd}), std::bit_cast<uint32_t>(16777218.0f));
  // fp16 overflow: to nearest gives inf, toward zero the largest value, saturation the largest value.
  EXPECT_EQ(one(DType::FP32, 70000, DType::FP16, {Round::NearestEven}), 0x7C00u);
  EXPECT_EQ(one(DType::FP32, 70000, DType::FP16, {Round::TowardZero}), 0x7BFFu);
  EXPECT_EQ(one(DType::FP32, INFINITY, DType::FP16, {Round::NearestEven, true}), 0x7BFFu);
  // HF8: 40960 (halfway between 2^15 and where inf stands) ties away to inf; 40959 gives 2^15.
  EXPECT_EQ(one(DType::FP32, 40960, DType::HF8, {Round::NearestAway}), 0x6Fu);
  EXPECT_EQ(one(DType::FP32, 40959, DType::HF8, {Round::NearestAway}), 0x6Eu);
  // int32 -> int16: clamp or the low half.
  EXPECT_EQ(one(DType::INT32, 70000, DType::INT16, {Round::NearestEven, true}), 0x7FFFu);
  EXPECT_EQ(one(DType::INT32, 70000, DType::INT16, {Round::NearestEven, false}), 70000u & 0xFFFF);
}

}  // namespace
