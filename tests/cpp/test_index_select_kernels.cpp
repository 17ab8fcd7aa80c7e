// index_select's kernel paths against a plain reference, bit for bit: every instruction set
// this CPU offers (capped through pto::set_kernel_tuning), streamed and cached stores,
// row blocks of every shape (multiples of 64 bytes, long unaligned ones, small ones staged),
// the last-dim element gather, non-contiguous inputs, int32 / int64 and 2-D indices.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "ptocpu/build.h"
#include "helpers.h"
#include "ptocpu/ptocpu.h"

namespace {

using namespace test_helpers;

using pto::DType;
using pto::Shape;
using pto::Tensor;

// out[a.., i.., b..] = x[a.., index[i..], b..], element by element through x's strides.
void expect_matches_reference(const Tensor& x, int dim, const Tensor& index, const Tensor& out, const std::string& what) {
  const int r = x.ndim();
  const int64_t n_idx = index.numel();
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < dim; ++i) outer *= x.shape(i);
  for (int i = dim + 1; i < r; ++i) inner *= x.shape(i);
  ASSERT_TRUE(out.is_contiguous());
  ASSERT_EQ(out.numel(), outer * n_idx * inner) << what;
  const size_t item = x.itemsize();
  const auto* src = static_cast<const unsigned char*>(x.data());
  const auto* got = static_cast<const unsigned char*>(out.data());
  int64_t bad = 0;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t off_o = 0;
    for (int64_t i = dim - 1, q = o; i >= 0; --i) {
      off_o += (q % x.shape(static_cast<int>(i))) * x.stride(static_cast<int>(i));
      q /= x.shape(static_cast<int>(i));
    }
    for (int64_t k = 0; k < n_idx; ++k) {
      const int64_t v = index.dtype() == DType::INT64 ? index.data_as<int64_t>()[k] : index.data_as<int32_t>()[k];
      for (int64_t b = 0; b < inner; ++b) {
        int64_t off = off_o + v * x.stride(dim);
        int64_t q = b;
        for (int i = r - 1; i > dim; --i) {
          off += (q % x.shape(i)) * x.stride(i);
          q /= x.shape(i);
        }
        const int64_t flat = (o * n_idx + k) * inner + b;
        if (std::memcmp(got + flat * item, src + off * static_cast<int64_t>(item), item) != 0 && bad++ < 3)
          ADD_FAILURE() << what << ": element " << flat << " differs";
      }
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

struct Case {
  Shape shape;
  DType dtype;
  int dim;
  Shape index_shape;
  int layout;  // 0 contiguous, 1 last two dims transposed, 2 every other element of dim 0, 3 offset by one row
};

Tensor with_layout(const Tensor& base, int layout) {
  const int r = base.ndim();
  if (layout == 1 && r >= 2) {
    Shape s = base.shape();
    pto::Strides st = base.strides();
    std::swap(s[r - 1], s[r - 2]);
    std::swap(st[r - 1], st[r - 2]);
    return base.as_strided(s, st, 0);
  }
  if (layout == 2) {
    Shape s = base.shape();
    pto::Strides st = base.strides();
    s[0] = (s[0] + 1) / 2;
    st[0] *= 2;
    return base.as_strided(s, st, 0);
  }
  if (layout == 3) {  // one element in: rows no longer start on a line boundary
    Shape s = base.shape();
    s[0] -= 1;
    return base.as_strided(s, base.strides(), 1);
  }
  return base;
}

TEST(IndexSelectKernels, EveryPathMatchesTheReference) {
  const Case cases[] = {
      {{300, 64}, DType::FP32, 0, {700}, 0},          // 256-byte rows
      {{100, 256}, DType::FP32, 0, {333}, 3},         // 1 KiB rows, misaligned
      {{200, 75}, DType::FP32, 0, {257}, 0},          // 300-byte rows
      {{200, 75}, DType::FP32, 0, {257}, 3},
      {{500, 3}, DType::FP16, 0, {4099}, 0},          // 6-byte rows: staged
      {{500, 3}, DType::FP16, 0, {4099}, 2},
      {{999, 4}, DType::FP32, 0, {5000}, 0},          // 16-byte rows
      {{64, 2}, DType::INT8, 0, {9000}, 0},           // 2-byte rows
      {{37, 1000}, DType::FP32, 1, {1531}, 0},        // last-dim gather
      {{37, 1000}, DType::FP64, -1, {777}, 3},
      {{37, 1000}, DType::FP16, 1, {1531}, 0},
      {{37, 1000}, DType::UINT8, 1, {2049}, 0},
      {{40, 30}, DType::FP32, 1, {500}, 1},           // last-dim gather with a strided dim
      {{1000}, DType::INT32, 0, {70000}, 0},          // 1-D, many tiles
      {{3, 50, 40}, DType::BF16, 1, {61}, 0},         // outer x rows
      {{3, 50, 40}, DType::BF16, 1, {7, 9}, 3},       // 2-D index
      {{6, 50, 40}, DType::FP32, 1, {61}, 2},         // strided outer
      {{5, 20, 33}, DType::FP32, 0, {40}, 1},         // non-contiguous inner block
      {{2, 3, 200, 16}, DType::BOOL, 2, {300}, 0},
  };
  const char* isas[] = {"sse2", "avx2", "avx512"};
  for (const char* isa : isas) {
    for (int64_t stream : {int64_t(0), int64_t(-1)}) {
      pto::set_kernel_tuning(stream, isa);
      uint64_t seed = 1;
      for (const Case& c : cases) {
        for (DType idt : {DType::INT32, DType::INT64}) {
          const Tensor base = random_bytes(c.shape, c.dtype, seed++);
          const Tensor x = with_layout(base, c.layout);
          const int d = c.dim < 0 ? c.dim + x.ndim() : c.dim;
          const Tensor index = random_index(c.index_shape, idt, x.shape(d), seed++);
          const Tensor out = pto::index_select(x, c.dim, index);
          const std::string what = std::string(isa) + (stream == 0 ? " streamed" : " cached") + " shape " +
                                   pto::shape_to_string(x.shape()) + " " + pto::dtype_name(c.dtype) + " dim " +
                                   std::to_string(c.dim) + " index " + pto::shape_to_string(c.index_shape) + " " +
                                   pto::dtype_name(idt) + " layout " + std::to_string(c.layout);
          expect_matches_reference(x, d, index, out, what);
        }
      }
    }
  }
  pto::set_kernel_tuning(-1, nullptr);
}

TEST(IndexSelectKernels, ThreadCountsGiveTheSameResult) {
  const Tensor x = random_bytes({4096, 64}, DType::FP32, 7);
  const Tensor index = random_index({20000}, DType::INT64, 4096, 8);
  const Tensor columns = random_index({20000}, DType::INT32, 64, 9);
  pto::set_kernel_tuning(0, nullptr);
  const int saved = pto::get_num_threads();
  for (int threads : {1, 2, 3, 8}) {
    pto::set_num_threads(threads);
    expect_matches_reference(x, 0, index, pto::index_select(x, 0, index), "threads " + std::to_string(threads));
    expect_matches_reference(x, 1, columns, pto::index_select(x, 1, columns), "dim 1, threads " + std::to_string(threads));
  }
  pto::set_num_threads(saved);
  pto::set_kernel_tuning(-1, nullptr);
}

}  // namespace
