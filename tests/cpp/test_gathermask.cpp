#include <gtest/gtest.h>

#include <vector>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

TEST(GatherMask, EveryModeOnAStridedInput) {
  pto::Tensor base = arange_f32({6, 16});
  pto::Tensor x = base.as_strided({3, 8}, {32, 1}, 4);  // rows 0, 2, 4; columns 4..11
  const int64_t first[8] = {0, 0, 1, 0, 1, 2, 3, 0}, step[8] = {0, 2, 2, 4, 4, 4, 4, 1};
  for (int mode = 1; mode <= 7; ++mode) {
    std::vector<float> want;
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = first[mode]; c < 8; c += step[mode]) want.push_back(static_cast<float>(r * 32 + 4 + c));
    EXPECT_EQ(values_f32(pto::gathermask(x, mode)), want) << "mode " << mode;
  }
}

TEST(GatherMask, Errors) {
  pto::Tensor x = arange_f32({2, 6});
  expect_error<pto::ArgumentError>([&] { pto::gathermask(x, 0); }, "pattern_mode 0 is not supported");
  expect_error<pto::ArgumentError>([&] { pto::gathermask(x, 3); }, "not divisible by 4");
  pto::TileShapeScope tile({2, 3});
  expect_error<pto::TileError>([&] { pto::gathermask(x, 1); }, "tile shape [2, 3] has a last dim of 3");
}

}  // namespace
