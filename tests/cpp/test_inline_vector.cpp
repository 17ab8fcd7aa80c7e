#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "core/inline_vector.h"

namespace {

std::vector<int64_t> items(const pto::InlineVector<int64_t, 4>& v) { return {v.begin(), v.end()}; }

TEST(InlineVector, KeepsItsItemsAcrossTheInlineCapacityBothWays) {
  pto::InlineVector<int64_t, 4> v;
  EXPECT_TRUE(v.empty());
  for (int64_t i = 0; i < 7; ++i) v.push_back(i * 10);  // past 4: onto the heap
  EXPECT_EQ(items(v), (std::vector<int64_t>{0, 10, 20, 30, 40, 50, 60}));
  v.resize(3);  // back inside
  EXPECT_EQ(items(v), (std::vector<int64_t>{0, 10, 20}));
  v.resize(5, -1);
  EXPECT_EQ(items(v), (std::vector<int64_t>{0, 10, 20, -1, -1}));
  v.push_back(v[0]);  // an item of its own, while it grows
  EXPECT_EQ(v.size(), 6u);
  EXPECT_EQ(v[5], 0);
}

TEST(InlineVector, AssignsCountsAndRangesAndCopiesAsAValue) {
  pto::InlineVector<int64_t, 4> v(6, 7);
  EXPECT_EQ(items(v), std::vector<int64_t>(6, 7));
  v.assign(2, 3);
  EXPECT_EQ(items(v), (std::vector<int64_t>{3, 3}));
  std::vector<int64_t> source(9);
  std::iota(source.begin(), source.end(), 1);
  v.assign(source.begin(), source.end());
  EXPECT_EQ(items(v), source);
  pto::InlineVector<int64_t, 4> copy = v;
  copy[0] = 100;
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(copy[0], 100);
  EXPECT_EQ(copy.size(), 9u);
}

}  // namespace
