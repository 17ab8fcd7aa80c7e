// pto::output_shape: the ops' output shapes from shapes and dtypes alone (docs/torch.md).
#include <gtest/gtest.h>

#include "ptocpu/ptocpu.h"

namespace {

// A tensor with a shape and a dtype but no storage: the output_shape functions read no data.
pto::Tensor no_storage(const pto::Shape& shape, pto::DType dtype = pto::DType::FP32) {
  return pto::Tensor::from_blob(nullptr, shape, pto::contiguous_strides(shape), dtype, nullptr);
}

TEST(OutputShape, MatchesTheOps) {
  const pto::Tensor x = pto::Tensor::zeros({3, 4, 6}, pto::DType::BF16);
  const pto::Tensor index = pto::Tensor::zeros({2, 5}, pto::DType::INT64);
  for (int64_t dim : {0, 1, 2, -1})
    EXPECT_EQ(pto::output_shape::index_select(no_storage(x.shape(), x.dtype()), dim, no_storage(index.shape(), index.dtype())),
              pto::index_select(x, dim, index).shape());
  EXPECT_EQ(pto::output_shape::interleave(x, x), pto::interleave(x, x).first.shape());
  EXPECT_EQ(pto::output_shape::deinterleave(x, x), pto::deinterleave(x, x).first.shape());
  EXPECT_EQ(pto::output_shape::deinterleave(x, pto::Tensor()), (pto::Shape{3, 4, 3}));
  EXPECT_EQ(pto::output_shape::deinterleave(x, pto::Tensor()), pto::deinterleave(x).second.shape());
  // new axis, shrink, ellipsis, negative stride
  EXPECT_EQ(pto::output_shape::strided_slice(no_storage({3, 4, 6}), {0, 1, 0, 5}, {0, 0, 0, 0}, {1, 1, 1, -2},
                                             /*begin_mask=*/0, /*end_mask=*/8, /*ellipsis_mask=*/4,
                                             /*shrink_axis_mask=*/2, /*new_axis_mask=*/1),
            pto::strided_slice(x, {0, 1, 0, 5}, {0, 0, 0, 0}, {1, 1, 1, -2}, 0, 8, 4, 2, 1).shape());
  const pto::Tensor gather_index = pto::Tensor::zeros({2, 3, 9}, pto::DType::INT32);
  EXPECT_EQ(pto::output_shape::gather(no_storage(x.shape(), x.dtype()), -1, no_storage({2, 3, 9}, pto::DType::INT32)),
            pto::gather(x, -1, gather_index).shape());
  const pto::Tensor lanes = pto::Tensor::zeros({3, 4, 8}, pto::DType::BF16);
  for (int64_t mode : {1, 2, 3, 6, 7})
    EXPECT_EQ(pto::output_shape::gathermask(no_storage(lanes.shape(), lanes.dtype()), mode),
              pto::gathermask(lanes, mode).shape());
}

TEST(OutputShape, IgnoresPlatformAndTileShape) {
  // FP64 and rank 5 are refused by atlas_a2's tables, the tile by its rank: the op checks them
  // when it runs, the planned shape is the same on every platform.
  pto::PlatformScope a2("atlas_a2");
  pto::TileShapeScope tile({1, 1});
  const pto::Tensor x = no_storage({2, 1, 1, 1, 8}, pto::DType::FP64);
  EXPECT_EQ(pto::output_shape::deinterleave(x, pto::Tensor()), (pto::Shape{2, 1, 1, 1, 4}));
  EXPECT_EQ(pto::output_shape::interleave(x, x), x.shape());
  EXPECT_EQ(pto::current_platform().name, "atlas_a2");
  EXPECT_EQ(pto::get_vec_tile_shapes(), (pto::Shape{1, 1}));
  EXPECT_THROW(pto::interleave(pto::Tensor::zeros(x.shape(), x.dtype()), pto::Tensor::zeros(x.shape(), x.dtype())),
               pto::UnsupportedError);
}

TEST(OutputShape, RaisesWhatTheOpRaises) {
  const pto::Tensor x = no_storage({3, 5});
  EXPECT_THROW(pto::output_shape::index_select(x, 2, no_storage({2}, pto::DType::INT32)), pto::IndexError);
  EXPECT_THROW(pto::output_shape::index_select(x, 0, no_storage({2}, pto::DType::FP32)), pto::DTypeError);
  EXPECT_THROW(pto::output_shape::interleave(x, x), pto::ArgumentError);  // odd last dim
  EXPECT_THROW(pto::output_shape::deinterleave(x, no_storage({3, 5}, pto::DType::INT8)), pto::DTypeError);
  EXPECT_THROW(pto::output_shape::strided_slice(x, {7}, {8}, {1}, 0, 0, 0, /*shrink_axis_mask=*/1), pto::IndexError);
  EXPECT_THROW(pto::output_shape::gather(x, 0, no_storage({2, 6}, pto::DType::INT64)), pto::ArgumentError);
  EXPECT_THROW(pto::output_shape::gathermask(x, 1), pto::ArgumentError);  // odd last dim
}

TEST(OutputShape, EmptyTileScopeRestoresTheTile) {
  pto::TileShapeScope outer({4, 8});
  {
    pto::TileShapeScope none({});
    EXPECT_TRUE(pto::get_vec_tile_shapes().empty());
  }
  EXPECT_EQ(pto::get_vec_tile_shapes(), (pto::Shape{4, 8}));
}

}  // namespace
