// docs/kernel_model.md, the kernel model in C++: view, assemble, loop bounds, the jit argument check, and
// seed 000's kernel pattern passing on ascend950 and failing on atlas_a2 where docs/platforms.md says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

using pto::DType;
using pto::Shape;
using pto::Tensor;

bool all_zero(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data());
  return std::all_of(p, p + c.numel() * static_cast<int64_t>(c.itemsize()), [](unsigned char b) { return b == 0; });
}

const char* kPlatforms[] = {"cpu", "ascend950", "atlas_a2"};

// ---- view ------------------------------------------------------------------------------

TEST(KernelModelView, ZeroCopyBlockAndValidShape) {
  Tensor x = arange_f32({4, 8});
  Tensor v = pto::view(x, {4, 4}, {0, 4});
  ASSERT_EQ(v.shape(), (Shape{4, 4}));
  EXPECT_EQ(v.at<float>({1, 2}), 14.0f);
  v.at<float>({1, 3}) = -1.0f;
  EXPECT_EQ(x.at<float>({1, 7}), -1.0f);  // writes through a fully valid view reach the base
  EXPECT_EQ(v.data(), static_cast<float*>(x.data()) + 4);
  // A partly valid block keeps its shape; rows past the valid shape read 0.
  Tensor tail = pto::view(x, {4, 4}, {2, 4}, Shape{2, 4});
  ASSERT_EQ(tail.shape(), (Shape{4, 4}));
  ASSERT_EQ(tail.valid_shape(), (Shape{2, 4}));
  EXPECT_EQ(tail.at<float>({0, 0}), 20.0f);
  EXPECT_EQ(tail.at<float>({1, 3}), 31.0f);
  EXPECT_EQ(tail.at<float>({2, 0}), 0.0f);
  EXPECT_EQ(tail.valid_part().shape(), (Shape{2, 4}));
  // A valid shape beyond the block's shape (but inside the input's) is clipped to the block, as in PyPTO.
  Tensor clipped = pto::view(x, {2, 4}, {1, 2}, Shape{3, 8});
  ASSERT_EQ(clipped.valid_shape(), (Shape{2, 4}));
  EXPECT_EQ(clipped.at<float>({0, 0}), 10.0f);
  EXPECT_EQ(clipped.at<float>({1, 3}), 21.0f);
  // Without valid_shape, a block past the end is clipped to what lies inside the input.
  Tensor edge = pto::view(x, {4, 4}, {2, 6});
  ASSERT_EQ(edge.shape(), (Shape{4, 4}));
  EXPECT_EQ(edge.valid_shape(), (Shape{2, 2}));
  EXPECT_EQ(edge.at<float>({1, 1}), 31.0f);
  // An offset outside the input is a TileError (upstream: offsets lie inside the input);
  // PyPTO's t[i:j] blocks inside kernels may start past the end and hold nothing.
  expect_error<pto::TileError>([&] { pto::view(x, {1, 1}, {INT64_MAX, 0}); }, "view: offsets [9223372036854775807, 0]",
                               {"outside [0, 4)"});
  EXPECT_EQ(pto::view_block(x, {1, 1}, {INT64_MAX, 0}, std::nullopt, false).valid_shape(), (Shape{0, 1}));
}

TEST(KernelModelView, OfATransposedView) {
  Tensor base = arange_f32({6, 10});
  Tensor t = base.as_strided({10, 6}, {1, 10}, 0);  // base.T
  Tensor v = pto::view(t, {4, 3}, {5, 2}, Shape{2, 3});
  ASSERT_EQ(v.shape(), (Shape{4, 3}));
  ASSERT_EQ(v.valid_shape(), (Shape{2, 3}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(v.at<float>({i, j}), base.at<float>({2 + j, 5 + i}));
}

TEST(KernelModelView, ErrorsOnEveryPlatform) {
  for (const char* platform : kPlatforms) {
    SCOPED_TRACE(platform);
    pto::PlatformScope scope(platform);
    Tensor x = arange_f32({4, 8});
    expect_error<pto::ArgumentError>([&] { pto::view(x, {4}, {0, 0}); }, "view: shape [4] has 1 entries",
                                     {"rank 2"});
    expect_error<pto::ArgumentError>([&] { pto::view(x, {4, 4}, {0}); }, "view: offsets [0] has 1 entries");
    expect_error<pto::ArgumentError>([&] { pto::view(x, {4, 4}, {0, 0}, Shape{4}); },
                                     "view: valid_shape [4] has 1 entries");
    expect_error<pto::ArgumentError>([&] { pto::view(x, {4, -1}, {0, 0}); }, "view: shape [4, -1] has the negative");
    expect_error<pto::TileError>([&] { pto::view(x, {4, 4}, {2, 4}, Shape{3, 4}); },
                                 "view: offsets [2, 4] + valid_shape [3, 4] = [5, 8] is outside input shape [4, 8]");
    expect_error<pto::TileError>([&] { pto::view(x, {4, 4}, {-1, 0}); }, "view: offsets [-1, 0]", {"offset -1 at dim 0"});
    expect_error<pto::TileError>([&] { pto::view(x, {4, 4}, {4, 0}); }, "view: offsets [4, 0]", {"outside [0, 4)"});
    expect_error<pto::TileError>([&] { pto::view(x, {1, 1}, {INT64_MAX, 0}, Shape{1, 1}); },
                                 "view: offsets [9223372036854775807, 0]");
    expect_error<pto::TileError>([&] { pto::view(x, {2, 4}, {0, 0}, Shape{5, 4}); },
                                 "view: valid_shape [5, 4] exceeds input shape [4, 8] at dim 0");
    expect_error<pto::DTypeError>([&] { pto::view(Tensor(), {}, {}); }, "view: input is an annotation placeholder");
  }
}

TEST(KernelModelView, EmptyInputsFollowThePlatform) {
  Tensor empty = Tensor::empty({0, 4}, DType::FP32);
  EXPECT_EQ(pto::view(empty, {0, 4}, {0, 0}).shape(), (Shape{0, 4}));
  pto::PlatformScope scope("ascend950");
  expect_error<pto::ArgumentError>([&] { pto::view(empty, {0, 4}, {0, 0}); }, "view: input shape [0, 4] is empty",
                                   {"ascend950"});
}

// ---- assemble --------------------------------------------------------------------------

TEST(KernelModelView, BitcastScalesTheLastDimAndSharesMemory) {
  Tensor x = arange_f32({3, 4});
  Tensor h = pto::bitcast_view(x, DType::FP16);
  ASSERT_EQ(h.shape(), (Shape{3, 8}));
  EXPECT_EQ(h.data(), x.data());
  uint16_t halves[2];
  std::memcpy(halves, x.data_as<float>() + 5, sizeof(float));  // element [1, 1]
  EXPECT_EQ(std::memcmp(&h.at<uint16_t>({1, 2}), &halves[0], 2), 0);
  Tensor wide = pto::bitcast_view(x, DType::INT64);
  ASSERT_EQ(wide.shape(), (Shape{3, 2}));
  EXPECT_EQ(std::memcmp(&wide.at<int64_t>({2, 1}), x.data_as<float>() + 10, 8), 0);
  EXPECT_EQ(pto::bitcast_view(x, DType::INT32).shape(), (Shape{3, 4}));
  expect_error<pto::ArgumentError>([&] { pto::bitcast_view(arange_f32({2, 3}), DType::INT64); }, "view: viewing",
                                   {"multiple of 8"});
}

TEST(KernelModelAssemble, WritesOnlyTheSourcesValidPart) {
  Tensor x = arange_f32({4, 4});
  Tensor tail = pto::view(x, {4, 4}, {3, 0});  // one valid row
  Tensor out = Tensor::zeros({4, 4}, DType::FP32);
  std::fill(out.data_as<float>(), out.data_as<float>() + 16, -1.0f);
  pto::assemble(tail, {1, 0}, out);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(out.at<float>({1, j}), x.at<float>({3, j}));
    EXPECT_EQ(out.at<float>({2, j}), -1.0f);
  }
  // The valid part must fit: a 1-row part at row 3 fits even though the block's shape would not.
  pto::assemble(tail, {3, 0}, out);
  EXPECT_EQ(out.at<float>({3, 3}), x.at<float>({3, 3}));
}

TEST(KernelModelAssemble, SingleAndListFormsLikePyPTOsDocExample) {
  Tensor out = Tensor::zeros({4, 4}, DType::FP32);
  Tensor ones = Tensor::empty({2, 2}, DType::FP32);
  std::fill(ones.data_as<float>(), ones.data_as<float>() + 4, 1.0f);
  pto::assemble(ones, {0, 0}, out);
  Tensor twos = Tensor::empty({2, 2}, DType::FP32);
  std::fill(twos.data_as<float>(), twos.data_as<float>() + 4, 2.0f);
  pto::assemble({{ones, {0, 2}}, {twos, {2, 2}}}, out);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const float want = i < 2 ? 1.0f : (j >= 2 ? 2.0f : 0.0f);
      EXPECT_EQ(out.at<float>({i, j}), want) << i << "," << j;
    }
}

TEST(KernelModelAssemble, IntoAStridedOutputAndFromAnOverlappingSource) {
  Tensor base = Tensor::zeros({6, 6}, DType::FP32);
  Tensor every_other = base.as_strided({3, 3}, {12, 2}, 0);
  pto::assemble(arange_f32({2, 2}), {1, 1}, every_other);
  EXPECT_EQ(base.at<float>({2, 2}), 0.0f);
  EXPECT_EQ(base.at<float>({2, 4}), 1.0f);
  EXPECT_EQ(base.at<float>({4, 2}), 2.0f);
  EXPECT_EQ(base.at<float>({4, 4}), 3.0f);

  Tensor x = arange_f32({4, 4});
  pto::assemble(pto::view(x, {3, 3}, {0, 0}), {1, 1}, x);  // as if the source were read first
  for (int i = 1; i < 4; ++i)
    for (int j = 1; j < 4; ++j) EXPECT_EQ(x.at<float>({i, j}), float((i - 1) * 4 + (j - 1)));
}

TEST(KernelModelAssemble, ErrorsWriteNothing) {
  for (const char* platform : kPlatforms) {
    SCOPED_TRACE(platform);
    pto::PlatformScope scope(platform);
    Tensor out = Tensor::zeros({4, 4}, DType::FP32);
    Tensor src = Tensor::zeros({2, 2}, DType::FP32);
    std::fill(src.data_as<float>(), src.data_as<float>() + 4, 5.0f);
    expect_error<pto::DTypeError>([&] { pto::assemble(Tensor::zeros({2, 2}, DType::FP16), {0, 0}, out); },
                                  "assemble: src dtype DT_FP16 must match out dtype DT_FP32");
    expect_error<pto::ArgumentError>([&] { pto::assemble(Tensor::zeros({2}, DType::FP32), {0}, out); },
                                     "assemble: src rank 1 (shape [2]) must match out rank 2 (shape [4, 4])");
    expect_error<pto::ArgumentError>([&] { pto::assemble(src, {0}, out); },
                                     "assemble: offsets [0] has 1 entries but out has rank 2");
    expect_error<pto::TileError>([&] { pto::assemble(src, {3, 0}, out); },
                                 "assemble: offsets [3, 0] + src shape [2, 2] = [5, 2] is outside out shape [4, 4] at dim 0");
    expect_error<pto::TileError>([&] { pto::assemble(src, {0, -2}, out); }, "assemble: offsets [0, -2]",
                                 {"negative offset"});
    expect_error<pto::TileError>([&] { pto::assemble({{src, {0, 0}}, {src, {2, 2}}, {src, {2, 3}}}, out); },
                                 "assemble: inputs[2]: offsets [2, 3] + src shape [2, 2]");
    expect_error<pto::DTypeError>([&] { pto::assemble({{src, {0, 0}}, {Tensor::zeros({2, 2}, DType::INT32), {0, 0}}}, out); },
                                  "assemble: inputs[1]: src dtype DT_INT32");
    EXPECT_TRUE(all_zero(out));
  }
  pto::PlatformScope scope("atlas_a2");
  Tensor out = Tensor::zeros({4, 4}, DType::FP32);
  expect_error<pto::ArgumentError>([&] { pto::assemble(Tensor::zeros({0, 4}, DType::FP32), {0, 0}, out); },
                                   "assemble: src shape [0, 4] is empty");
}

// ---- loop and jit ----------------------------------------------------------------------

TEST(KernelModelLoop, TripCounts) {
  EXPECT_EQ(pto::loop_trip_count(0, 4, 1), 4);
  EXPECT_EQ(pto::loop_trip_count(2, 9, 3), 3);
  EXPECT_EQ(pto::loop_trip_count(5, 0, -2), 3);
  EXPECT_EQ(pto::loop_trip_count(3, 3, 1), 0);
  EXPECT_EQ(pto::loop_trip_count(4, 0, 1), 0);
  EXPECT_EQ(pto::loop_trip_count(INT64_MIN, INT64_MAX, INT64_MAX), 3);
  expect_error<pto::ArgumentError>([] { pto::loop_trip_count(0, 3, 0); }, "loop: step must not be 0");
}

// ---- seed 000's kernel pattern -----------------------------------------------------------

// set_vec_tile_shapes(tile); loop over blocks of the output rows; index_select the block's index
// rows; assemble into out. Tile shape and platform end with the call (as with frontend.jit).
void gather_kernel(const char* platform, const Tensor& input, const Tensor& index, const Tensor& out,
                   const Shape& tile, int64_t block) {
  pto::PlatformScope platform_scope(platform);
  pto::TileShapeScope tile_scope(tile);
  const int64_t n = index.shape(0);
  for (int64_t i = 0; i < n; i += block) {
    const int64_t valid = std::min(block, n - i);
    Tensor idx = pto::view(index, {block}, {i}, Shape{valid});
    Tensor result = pto::index_select(input, 0, idx);
    pto::assemble(result, {i, 0}, out);
  }
}

TEST(KernelModelSeedKernel, MatchesAGatherWithATailBlock) {
  Tensor input = arange_f32({10, 6});
  Tensor index = index_i64({9, 0, 3, 3, 7, 1, 2});
  for (const char* platform : kPlatforms) {
    Tensor out = Tensor::zeros({7, 6}, DType::FP32);
    gather_kernel(platform, input, index, out, {3, 6}, 3);
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 6; ++j)
        EXPECT_EQ(out.at<float>({i, j}), input.at<float>({index.at<int64_t>({i}), j})) << platform;
  }
  EXPECT_EQ(pto::current_platform().name, "cpu");
  EXPECT_TRUE(pto::get_vec_tile_shapes().empty());
}

TEST(KernelModelSeedKernel, UBBetweenTheTwoLimitsPassesOnAscend950Only) {
  // Output tile [56, 1024] fp32 = 229376 bytes: <= 253952 (ascend950), > 196608 (atlas_a2).
  Tensor input = arange_f32({64, 1024});
  Tensor index = Tensor::empty({56}, DType::INT64);
  std::iota(index.data_as<int64_t>(), index.data_as<int64_t>() + 56, int64_t(3));
  Tensor out = Tensor::zeros({56, 1024}, DType::FP32);
  gather_kernel("ascend950", input, index, out, {56, 1024}, 56);
  EXPECT_EQ(out.at<float>({55, 1023}), input.at<float>({58, 1023}));

  Tensor out2 = Tensor::zeros({56, 1024}, DType::FP32);
  expect_error<pto::TileError>([&] { gather_kernel("atlas_a2", input, index, out2, {56, 1024}, 56); },
                               "index_select: tile shape [56, 1024] needs 229376 UB bytes",
                               {"atlas_a2", "196608"});
  EXPECT_TRUE(all_zero(out2));
  EXPECT_TRUE(pto::get_vec_tile_shapes().empty());
  EXPECT_EQ(pto::current_platform().name, "cpu");
}

TEST(KernelModelSeedKernel, Fp8InputPassesOnAscend950Only) {
  Tensor input = Tensor::empty({8, 32}, DType::FP8E4M3);
  auto* bytes = static_cast<uint8_t*>(input.data());
  for (int i = 0; i < 8 * 32; ++i) bytes[i] = static_cast<uint8_t>(i % 0x7f);
  Tensor index = index_i64({7, 0, 2});
  Tensor out = Tensor::zeros({3, 32}, DType::FP8E4M3);
  gather_kernel("ascend950", input, index, out, {3, 32}, 3);
  EXPECT_EQ(std::memcmp(out.data(), bytes + 7 * 32, 32), 0);
  Tensor out2 = Tensor::zeros({3, 32}, DType::FP8E4M3);
  expect_error<pto::DTypeError>([&] { gather_kernel("atlas_a2", input, index, out2, {3, 32}, 3); },
                                "index_select: input dtype DT_FP8E4M3 is not supported on platform atlas_a2");
  EXPECT_TRUE(all_zero(out2));
}

// An interleave kernel over row blocks (view + interleave + assemble).
void interleave_kernel(const char* platform, const Tensor& a, const Tensor& b, const Tensor& out0,
                       const Tensor& out1, int64_t block) {
  pto::PlatformScope platform_scope(platform);
  const int64_t rows = a.shape(0), cols = a.shape(1);
  pto::TileShapeScope tile_scope({block, cols});
  for (int64_t i = 0; i < rows; i += block) {
    const Shape valid{std::min(block, rows - i), cols};
    // interleave reads only the views' valid parts, so the tail block's padding never reaches out.
    auto [lo, hi] = pto::interleave(pto::view(a, {block, cols}, {i, 0}, valid), pto::view(b, {block, cols}, {i, 0}, valid));
    pto::assemble(lo, {i, 0}, out0);
    pto::assemble(hi, {i, 0}, out1);
  }
}

TEST(KernelModelInterleaveKernel, PassesOnAscend950AndIsNotOfferedOnAtlasA2) {
  Tensor a = arange_f32({7, 8});
  Tensor b = arange_f32({7, 8});
  std::for_each(b.data_as<float>(), b.data_as<float>() + 56, [](float& v) { v += 100.0f; });
  Tensor out0 = Tensor::zeros({7, 8}, DType::FP32), out1 = Tensor::zeros({7, 8}, DType::FP32);
  interleave_kernel("ascend950", a, b, out0, out1, 3);
  for (int i = 0; i < 7; ++i)
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(out0.at<float>({i, 2 * k}), a.at<float>({i, k}));
      EXPECT_EQ(out0.at<float>({i, 2 * k + 1}), b.at<float>({i, k}));
      EXPECT_EQ(out1.at<float>({i, 2 * k}), a.at<float>({i, 4 + k}));
      EXPECT_EQ(out1.at<float>({i, 2 * k + 1}), b.at<float>({i, 4 + k}));
    }
  Tensor z0 = Tensor::zeros({7, 8}, DType::FP32), z1 = Tensor::zeros({7, 8}, DType::FP32);
  expect_error<pto::UnsupportedError>([&] { interleave_kernel("atlas_a2", a, b, z0, z1, 3); },
                                      "interleave: not offered on platform atlas_a2", {"ascend950"});
  EXPECT_TRUE(all_zero(z0) && all_zero(z1));
}

// ---- the UB use record tracing reads (docs/tracing.md) ------------------------------------

TEST(UbUse, RecordsTheLastCheckedOpsBuffers) {
  Tensor input = arange_f32({32, 64});
  Tensor index = index_i64({3, 1});
  pto::clear_ub_use();
  {
    pto::PlatformScope platform("ascend950");
    pto::TileShapeScope tile({8, 64});
    pto::index_select(input, 0, index);
  }
  const pto::UbUse& use = pto::last_ub_use();
  ASSERT_NE(use.op, nullptr);
  EXPECT_STREQ(use.op, "index_select");
  EXPECT_EQ(use.limit, 253952);
  EXPECT_EQ(use.total, 2 * 256);  // output tile [8, 64] clipped to [2, 64]: 2 * roundup(64 * 4, 32)
  ASSERT_EQ(use.buffers.size(), 1u);
  EXPECT_STREQ(use.buffers[0].what, "output tile");

  pto::clear_ub_use();
  pto::TileShapeScope tile({8, 64});
  pto::index_select(input, 0, index);  // cpu: no UB limit, no check, nothing recorded
  EXPECT_EQ(pto::last_ub_use().op, nullptr);
}

}  // namespace
