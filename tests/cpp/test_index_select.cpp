#include <gtest/gtest.h>

#include <numeric>

#include "helpers.h"
#include "seed_index_select.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

TEST(IndexSelect, SeedExampleRowsAndColumns) {
  const auto& x = seed::kInput;
  const pto::Tensor input = seed::input();
  const pto::Tensor index = seed::index();

  pto::Tensor rows = pto::index_select(input, 0, index);
  ASSERT_EQ(rows.shape(), (pto::Shape{2, 4}));
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(rows.at<float>({0, j}), x[0][j]);
    EXPECT_EQ(rows.at<float>({1, j}), x[2][j]);
  }
  pto::Tensor cols = pto::index_select(input, 1, index);
  ASSERT_EQ(cols.shape(), (pto::Shape{3, 2}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(cols.at<float>({i, 0}), x[i][0]);
    EXPECT_EQ(cols.at<float>({i, 1}), x[i][2]);
  }
}

TEST(IndexSelect, NegativeDimOnTransposedView) {
  pto::Tensor base = arange_f32({4, 3});
  pto::Tensor t = base.as_strided({3, 4}, {1, 3}, 0);  // base.T
  pto::Tensor out = pto::index_select(t, -1, index_i64({3, 0}));
  ASSERT_EQ(out.shape(), (pto::Shape{3, 2}));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out.at<float>({i, 0}), base.at<float>({3, i}));
    EXPECT_EQ(out.at<float>({i, 1}), base.at<float>({0, i}));
  }
}

TEST(IndexSelect, TwoDimIndexReplacesTheDim) {
  pto::Tensor x = arange_f32({2, 5, 3});
  pto::Tensor index = pto::Tensor::empty({2, 2}, pto::DType::INT64);
  int64_t* v = index.data_as<int64_t>();
  v[0] = 4, v[1] = 0, v[2] = 2, v[3] = 2;
  pto::Tensor out = pto::index_select(x, 1, index);
  ASSERT_EQ(out.shape(), (pto::Shape{2, 2, 2, 3}));
  EXPECT_EQ(out.at<float>({1, 0, 0, 2}), x.at<float>({1, 4, 2}));
  EXPECT_EQ(out.at<float>({0, 1, 1, 1}), x.at<float>({0, 2, 1}));
}

TEST(IndexSelect, BadIndexValueThrowsAndNamesIt) {
  pto::Tensor x = arange_f32({3, 4});
  try {
    pto::index_select(x, 0, index_i64({0, 7}));
    FAIL() << "expected IndexError";
  } catch (const pto::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index value 7 at index position (1,)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(pto::index_select(x, 0, index_i64({-1})), pto::IndexError);
  EXPECT_THROW(pto::index_select(x, 2, index_i64({0})), pto::IndexError);
  EXPECT_THROW(pto::index_select(x, 0, pto::Tensor::empty({1}, pto::DType::FP32)), pto::DTypeError);
}

TEST(IndexSelect, PlatformRulesComeFromTheTables) {
  pto::PlatformScope scope("atlas_a2");
  EXPECT_THROW(pto::index_select(pto::Tensor::zeros({2}, pto::DType::FP8E4M3), 0, index_i64({0})), pto::DTypeError);
  EXPECT_THROW(pto::index_select(arange_f32({1, 1, 1, 1, 2}), 0, index_i64({0})), pto::ArgumentError);
  EXPECT_THROW(pto::index_select(arange_f32({0, 2}), 1, index_i64({0})), pto::ArgumentError);
}

TEST(IndexSelect, TileShapeOverUbIsATileError) {
  pto::PlatformScope scope("ascend950");
  pto::Tensor x = arange_f32({512, 512});
  pto::Tensor rows = pto::Tensor::empty({256}, pto::DType::INT64);
  std::iota(rows.data_as<int64_t>(), rows.data_as<int64_t>() + 256, 0);
  {
    pto::TileShapeScope tile({256, 512});  // 512 KiB output tile > 248 KiB UB
    EXPECT_THROW(pto::index_select(x, 0, rows), pto::TileError);
  }
  {
    pto::TileShapeScope tile({256, 512});  // clipped to the [3, 512] output: 6 KiB
    EXPECT_NO_THROW(pto::index_select(x, 0, index_i64({0, 1, 2})));
  }
  {
    pto::TileShapeScope tile({8, 64});
    EXPECT_NO_THROW(pto::index_select(x, 0, index_i64({0, 1, 2})));
  }
  {
    pto::TileShapeScope tile({8});  // rank must equal the output rank
    EXPECT_THROW(pto::index_select(x, 0, index_i64({0})), pto::TileError);
  }
}

}  // namespace
