// topk / argsort (kernels/sort.h): per row, a 64-bit key per element -- the value's order key in
// the high half, the complement of its index in the low half -- so that the largest key comes
// first in the wanted order and ties go to the smaller index. topk selects the k largest keys and
// sorts them; argsort sorts the row.
#include "kernels/sort.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "copy/simd.h"
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
// in value order, -0 as +0. Integers: value order. `flip` (all ones) reverses the order of numbers
// (ascending). Branch-free, so that a row's keys vectorise.
template <class S>
inline uint32_t order_key(S v, uint32_t flip) {
  if constexpr (kFloatLike<S>) {
    float f;
    if constexpr (std::is_same_v<S, float>) f = v;
    else f = half::widen(v);
    uint32_t u = std::bit_cast<uint32_t>(f);
    const uint32_t magnitude = u & 0x7FFFFFFFu;
    u = magnitude == 0 ? 0 : u;
    const uint32_t key = u ^ (static_cast<uint32_t>(static_cast<int32_t>(u) >> 31) | 0x80000000u);
    return magnitude > 0x7F800000u ? 0 : key ^ flip;  // a number's key is never 0 nor 2^32 - 1
  } else if constexpr (std::is_signed_v<S>) {
    return (static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u) ^ flip;
  } else {
    return static_cast<uint32_t>(v) ^ flip;
  }
}

// keys[i] = the value's key, then the complement of i: distinct, ties to the smaller index.
template <class S>
PTO_SIMD_CLONES void make_keys(const S* __restrict row, int64_t n, uint32_t flip, uint64_t* __restrict keys) {
  for (int64_t i = 0; i < n; ++i)
    keys[i] = uint64_t(order_key(row[i], flip)) << 32 | (0xFFFFFFFFu - static_cast<uint32_t>(i));
}

// Runs fn(keys, row, step, r) per row r along dim: keys holds each element's 64-bit key in index order.
template <class S, class Fn>
void for_each_row_keys(const Tensor& in, int dim, bool descending, Fn fn) {
  const int64_t n = in.shape(dim);
  const RowWalk walk(in.shape(), dim);
  const auto* base = static_cast<const std::byte*>(in.data());
  const int64_t step = in.stride(dim) * static_cast<int64_t>(sizeof(S));
  const uint32_t flip = descending ? 0u : 0xFFFFFFFFu;
  parallel_for(walk.count(), rows_per_chunk(n), [&](int64_t begin, int64_t end) {
    std::vector<uint64_t> keys(static_cast<size_t>(n));
    std::vector<S> gathered(step == sizeof(S) ? 0 : static_cast<size_t>(n));
    for (int64_t r = begin; r < end; ++r) {
      const std::byte* row = base + walk.offset(r, in.strides()) * static_cast<int64_t>(sizeof(S));
      const S* values = reinterpret_cast<const S*>(row);
      if (step != sizeof(S)) {
        for (int64_t i = 0; i < n; ++i) std::memcpy(&gathered[i], row + i * step, sizeof(S));
        values = gathered.data();
      }
      make_keys(values, n, flip, keys.data());
      fn(keys, row, step, r);
    }
  });
}

// Puts the k largest keys first, in descending order. Few of many: one pass with a min-heap of the
// k largest so far, skipping blocks with no key above its root; otherwise nth_element.
void select_largest(std::vector<uint64_t>& keys, int64_t k) {
  const auto first = keys.begin(), top = keys.begin() + k;
  const int64_t n = static_cast<int64_t>(keys.size());
  if (k * 8 < n) {
    constexpr int64_t kBlock = 64;
    std::make_heap(first, top, std::greater<>());
    for (int64_t i = k; i < n; i += kBlock) {
      const int64_t end = std::min(n, i + kBlock);
      const uint64_t root = keys[0];
      bool above = false;
      for (int64_t j = i; j < end; ++j) above |= keys[j] > root;
      if (!above) continue;
      for (int64_t j = i; j < end; ++j)
        if (keys[j] > keys[0]) {
          std::pop_heap(first, top, std::greater<>());
          *(top - 1) = keys[j];
          std::push_heap(first, top, std::greater<>());
        }
    }
  } else if (top != keys.end()) {
    std::nth_element(first, top, keys.end(), std::greater<>());
  }
  std::sort(first, top, std::greater<>());
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
      select_largest(keys, k);
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
