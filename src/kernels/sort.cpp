// topk / argsort (kernels/sort.h): per row, a 64-bit key per element -- the value's order key in
// the high half, the complement of its index in the low half -- so that the largest key comes
// first in the wanted order and ties go to the smaller index. topk selects the k largest keys
// (nth_element) and sorts them; argsort sorts the row.
#include "kernels/sort.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "core/half.h"
#include "kernels/row_walk.h"
#include "ptocpu/parallel.h"

namespace pto::kernels::sort {
namespace {

template <class S>
constexpr bool kFloatLike = std::is_same_v<S, float> || std::is_same_v<S, fp16_t> || std::is_same_v<S, bf16_t>;
template <class S>
constexpr bool kSortable = kFloatLike<S> || (std::is_integral_v<S> && !std::is_same_v<S, bool> && sizeof(S) <= 4);

// A value's key: a larger key comes first. Floats: NaN 0 (last either way), numbers in [1, 2^32)
// in value order (reversed when ascending), -0 as +0. Integers: value order (reversed when ascending).
template <class S>
uint32_t order_key(S v, bool descending) {
  uint32_t key;
  if constexpr (kFloatLike<S>) {
    float f;
    if constexpr (std::is_same_v<S, float>) f = v;
    else f = half::widen(v);
    if (f != f) return 0;
    const uint32_t u = std::bit_cast<uint32_t>(f == 0.0f ? 0.0f : f);
    key = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // never 0 nor 2^32 - 1 for a number
  } else if constexpr (std::is_signed_v<S>) {
    key = static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u;
  } else {
    key = static_cast<uint32_t>(v);
  }
  return descending ? key : ~key;
}

// Runs fn(keys, row, step, r) per row r along dim: keys holds each element's 64-bit key in index order.
template <class S, class Fn>
void for_each_row_keys(const Tensor& in, int dim, bool descending, Fn fn) {
  const int64_t n = in.shape(dim);
  const RowWalk walk(in.shape(), dim);
  const auto* base = static_cast<const std::byte*>(in.data());
  const int64_t step = in.stride(dim) * static_cast<int64_t>(sizeof(S));
  parallel_for(walk.count(), rows_per_chunk(n), [&](int64_t begin, int64_t end) {
    std::vector<uint64_t> keys(static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      const std::byte* row = base + walk.offset(r, in.strides()) * static_cast<int64_t>(sizeof(S));
      for (int64_t i = 0; i < n; ++i) {
        S v;
        std::memcpy(&v, row + i * step, sizeof(S));
        keys[i] = uint64_t(order_key(v, descending)) << 32 | (0xFFFFFFFFu - static_cast<uint32_t>(i));
      }
      fn(keys, row, step, r);
    }
  });
}

inline int32_t index_of(uint64_t key) { return static_cast<int32_t>(0xFFFFFFFFu - static_cast<uint32_t>(key)); }

template <class F>
void visit_sortable(DType dt, F&& f) {
  visit_dtype(dt, [&](auto tag) {
    using S = typename decltype(tag)::type;
    if constexpr (kSortable<S>) f(tag);
  });
}

}  // namespace

void topk(const Tensor& in, int dim, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  const RowWalk out_walk(values.shape(), dim);
  const int64_t out_step = values.stride(dim);
  visit_sortable(in.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    S* vals = values.data_as<S>();
    int32_t* idx = indices.data_as<int32_t>();
    for_each_row_keys<S>(in, dim, largest, [&](std::vector<uint64_t>& keys, const std::byte* row,
                                                                int64_t step, int64_t r) {
      const auto top = keys.begin() + k;
      if (top != keys.end()) std::nth_element(keys.begin(), top, keys.end(), std::greater<>());
      std::sort(keys.begin(), top, std::greater<>());
      const int64_t out = out_walk.offset(r, values.strides());
      for (int64_t j = 0; j < k; ++j) {
        const int32_t i = index_of(keys[j]);
        std::memcpy(&vals[out + j * out_step], row + i * step, sizeof(S));
        idx[out + j * out_step] = i;
      }
    });
  });
}

void argsort(const Tensor& in, int dim, bool descending, const Tensor& indices) {
  const RowWalk out_walk(indices.shape(), dim);
  const int64_t out_step = indices.stride(dim);
  int32_t* idx = indices.data_as<int32_t>();
  visit_sortable(in.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    for_each_row_keys<S>(in, dim, descending,
                         [&](std::vector<uint64_t>& keys, const std::byte*, int64_t, int64_t r) {
                           std::sort(keys.begin(), keys.end(), std::greater<>());
                           const int64_t out = out_walk.offset(r, indices.strides());
                           for (size_t j = 0; j < keys.size(); ++j) idx[out + static_cast<int64_t>(j) * out_step] = index_of(keys[j]);
                         });
  });
}

}  // namespace pto::kernels::sort
