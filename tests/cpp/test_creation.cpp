// The creation family's kernels (src/kernels/creation.h): Philox4x32-10 against the known-answer vectors
// published with Random123, the stream's layout, the uniform mappings, Box-Muller against long double,
// the device's tiled fp32 range against a sequential replay, and the ops through the op table.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "helpers.h"
#include "kernels/creation.h"
#include "ptocpu/ptocpu.h"

namespace {

namespace cr = pto::kernels::creation;
using test_helpers::expect_error;

TEST(Philox, Random123KnownAnswers) {
  // kat_vectors, philox4x32 10 rounds: counter, key -> output
  EXPECT_EQ(cr::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(cr::philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(cr::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, StreamLayout) {
  // word i = word i % 4 of the block with counter (i / 4 as 64 bits, offset as 64 bits), key (lo, hi)
  const cr::Stream stream{0x0123456789ABCDEFull, 0xFEDCBA9876543210ull};
  const int64_t n = 4 * 70 + 3;  // more than one group of 16 blocks, a partial block at the end
  for (int64_t first : {int64_t(0), int64_t(4) << 30}) {
    std::vector<uint32_t> words(n);
    cr::philox_words(stream, first, n, words.data());
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t b = static_cast<uint64_t>((first + i) / 4);
      const auto block = cr::philox4x32_10(
          {static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0x76543210u, 0xFEDCBA98u}, {0x89ABCDEFu, 0x01234567u});
      ASSERT_EQ(words[i], block[(first + i) % 4]) << "word " << first + i;
    }
  }
}

TEST(Uniform, MantissaMappings) {
  const cr::Stream stream{1234, 1};
  const int64_t n = 4099;
  std::vector<uint32_t> words(n);
  cr::philox_words(stream, 0, n, words.data());
  pto::Tensor f32 = pto::Tensor::empty({n}, pto::DType::FP32), f16 = pto::Tensor::empty({n}, pto::DType::FP16),
              b16 = pto::Tensor::empty({n}, pto::DType::BF16);
  cr::uniform(f32, stream);
  cr::uniform(f16, stream);
  cr::uniform(b16, stream);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(f32.data_as<float>()[i], static_cast<float>(words[i] & 0x7FFFFF) * 0x1p-23f);
    ASSERT_EQ(pto::fp16_bits_to_float(f16.data_as<pto::fp16_t>()[i].bits), static_cast<float>(words[i] & 0x3FF) * 0x1p-10f);
    ASSERT_EQ(pto::bf16_bits_to_float(b16.data_as<pto::bf16_t>()[i].bits), static_cast<float>(words[i] & 0x7F) * 0x1p-7f);
  }
  // the page's first value (key 1234, counter [0, 1])
  EXPECT_NEAR(f32.data_as<float>()[0], 0.1689806f, 5e-8);
}

TEST(BoxMuller, EveryStepCorrectlyRounded) {
  // each fp32 step against long double rounded once: ln, sin and cos of fp32 arguments
  std::mt19937 rng(2026);
  const int64_t pairs = 200000;
  std::vector<float> u(2 * pairs), out(2 * pairs);
  for (int64_t i = 0; i < 2 * pairs; ++i) u[i] = static_cast<float>(rng() & 0x7FFFFF) * 0x1p-23f;
  u[0] = 0.0f;               // max(0, 1e-7)
  u[2] = 1.0f - 0x1p-23f;    // ln close to 0
  u[3] = 0.25f;              // an angle next to pi/2
  cr::box_muller(u.data(), out.data(), pairs);
  int64_t differ = 0;
  for (int64_t k = 0; k < pairs; ++k) {
    const float u1 = std::max(u[2 * k], 1.0e-7f);
    const float angle = u[2 * k + 1] * 6.28318530717958647692f;
    const float radius = std::sqrt(static_cast<float>(std::log(static_cast<long double>(u1))) * -2.0f);
    const float s = static_cast<float>(std::sin(static_cast<long double>(angle))) * radius;
    const float c = static_cast<float>(std::cos(static_cast<long double>(angle))) * radius;
    differ += out[2 * k] != s || out[2 * k + 1] != c;
  }
  EXPECT_EQ(differ, 0);
  EXPECT_FLOAT_EQ(out[0], static_cast<float>(std::sqrt(-2.0 * std::log(double(1.0e-7f)))) *
                              static_cast<float>(std::sin(double(u[1] * 6.28318530717958647692f))));
}

// Restores the thread count a test changes.
class ThreadCount {
 public:
  ThreadCount() : saved_(pto::get_num_threads()) {}
  ~ThreadCount() { pto::set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(Normal, ThreadsAndStreamingGiveTheSameBits) {
  const ThreadCount restore;
  const cr::Stream stream{99, 5};
  const int64_t n = (int64_t(1) << 20) + 3;
  std::vector<float> results[2];
  for (int threads = 1; threads <= 2; ++threads) {
    pto::set_num_threads(threads);
    pto::set_kernel_tuning(threads == 2 ? 0 : -1, nullptr);  // the second run streams every output
    pto::Tensor out = pto::Tensor::empty({n}, pto::DType::FP32);
    cr::normal(out, stream);
    results[threads - 1].assign(out.data_as<float>(), out.data_as<float>() + n);
  }
  pto::set_kernel_tuning(-1, nullptr);
  EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), n * sizeof(float)), 0);
}

// The device's range replayed element by element, for one tile of `count` at t0.
std::vector<float> tile_replay(float start, float step, int64_t t0, int64_t count) {
  std::vector<float> e(count);
  const float base = start + step * static_cast<float>(t0);
  for (int64_t j = 0; j < count; ++j) {
    if (j < 8) e[j] = base + step * static_cast<float>(j);
    else if (j < 64) e[j] = e[j - 8] + step * 8.0f;
    else e[j] = e[j - 64] + step * 64.0f;
  }
  return e;
}

TEST(Arange, TiledAdditionsOnAnyThreadCount) {
  const ThreadCount restore;
  const float start = -3.25f, step = 0.37f;
  for (int64_t tile : {int64_t(5), int64_t(8), int64_t(64), int64_t(100), int64_t(300000)}) {
    const int64_t n = 250003;
    std::vector<float> want;
    for (int64_t t0 = 0; t0 < n; t0 += tile) {
      const auto e = tile_replay(start, step, t0, std::min(tile, n - t0));
      want.insert(want.end(), e.begin(), e.end());
    }
    for (int threads = 1; threads <= 2; ++threads) {
      pto::set_num_threads(threads);
      pto::Tensor out = pto::Tensor::empty({n}, pto::DType::FP32);
      cr::arange_f32(out, start, step, tile);
      ASSERT_EQ(std::memcmp(out.data(), want.data(), n * sizeof(float)), 0) << "tile " << tile << " threads " << threads;
    }
  }
}

pto::Args args(std::vector<pto::Value> values) { return pto::Args(std::move(values)); }

TEST(CreationOps, ThroughTheOpTable) {
  const pto::Tensor u = pto::call_op(pto::op_def("uniform"), args({pto::Shape{2, 2}, std::vector<int64_t>{1234},
                                                                  std::vector<int64_t>{0, 1}, std::vector<int64_t>{1},
                                                                  pto::DType::FP32}))[0];
  EXPECT_EQ(u.shape(), (pto::Shape{2, 2}));
  const pto::Tensor full = pto::call_op(pto::op_def("full"), args({pto::Shape{3}, pto::Scalar::of_float(2.5),
                                                                   pto::DType::FP16, std::monostate{}}))[0];
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(pto::fp16_bits_to_float(full.data_as<pto::fp16_t>()[i].bits), 2.5f);
  pto::Tensor index = test_helpers::index_i64({2, 0, 1});
  const pto::Tensor hot = pto::call_op(pto::op_def("one_hot"), args({index, int64_t(3)}))[0];
  EXPECT_EQ(std::vector<int64_t>(hot.data_as<int64_t>(), hot.data_as<int64_t>() + 9),
            (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0}));
  expect_error<pto::IndexError>([&] { pto::call_op(pto::op_def("one_hot"), args({index, int64_t(2)})); },
                                "input value 2 at index position (0,)");
  pto::PlatformScope chip("atlas_a2");
  expect_error<pto::UnsupportedError>(
      [&] {
        pto::call_op(pto::op_def("normal"), args({pto::Shape{4}, std::vector<int64_t>{1}, std::vector<int64_t>{0, 0},
                                                  std::vector<int64_t>{1}, pto::DType::FP32}));
      },
      "not offered on platform atlas_a2");
}

}  // namespace
