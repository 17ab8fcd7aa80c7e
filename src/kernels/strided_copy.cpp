#include "kernels/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/simd.h"
#include "ptocpu/dtype.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

struct Dim {
  int64_t size, dst_stride, src_stride;
};

// Drops size-1 dims and merges each dim into its inner neighbour when both tensors
// step over it contiguously.
std::vector<Dim> coalesce(const int64_t* dst_strides, const int64_t* src_strides, const int64_t* shape,
                          int ndim) {
  std::vector<Dim> dims;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 1) continue;
    dims.push_back({shape[i], dst_strides[i], src_strides[i]});
  }
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (!out.empty()) {
      Dim& outer = out.back();
      if (outer.dst_stride == d.dst_stride * d.size && outer.src_stride == d.src_stride * d.size) {
        outer = {outer.size * d.size, d.dst_stride, d.src_stride};
        continue;
      }
    }
    out.push_back(d);
  }
  return out;
}

template <class T>
PTO_SIMD_CLONES void copy_row(T* dst, int64_t ds, const T* src, int64_t ss, int64_t n) {
  if (ds == 1 && ss == 1) {
    std::memcpy(dst, src, n * sizeof(T));
  } else if (ds == 1 && ss == -1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[-i];
  } else if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * ss];
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i * ds] = src[i * ss];
  }
}

}  // namespace

void strided_copy(void* dst, const int64_t* dst_strides, const void* src, const int64_t* src_strides,
                  const int64_t* shape, int ndim, size_t itemsize) {
  for (int i = 0; i < ndim; ++i)
    if (shape[i] == 0) return;
  std::vector<Dim> dims = coalesce(dst_strides, src_strides, shape, ndim);
  if (dims.empty()) dims.push_back({1, 1, 1});
  // A long innermost run with few rows is split into row blocks so that threads share it.
  constexpr int64_t kBlock = 16384;
  if (dims.size() == 1 && dims[0].size > 2 * kBlock) {
    const Dim d = dims[0];
    const int64_t rows = d.size / kBlock;
    dims = {{rows, d.dst_stride * kBlock, d.src_stride * kBlock}, {kBlock, d.dst_stride, d.src_stride}};
    if (d.size % kBlock) {  // the tail, then the block rows
      const int64_t done = rows * kBlock;
      int64_t tail_shape = d.size - done, one = d.dst_stride, src_one = d.src_stride;
      strided_copy(static_cast<std::byte*>(dst) + done * d.dst_stride * static_cast<int64_t>(itemsize), &one,
                   static_cast<const std::byte*>(src) + done * d.src_stride * static_cast<int64_t>(itemsize),
                   &src_one, &tail_shape, 1, itemsize);
    }
  }
  const Dim inner = dims.back();
  dims.pop_back();
  int64_t rows = 1;
  for (const Dim& d : dims) rows *= d.size;
  const int64_t row_bytes = inner.size * static_cast<int64_t>(itemsize);
  const int64_t min_rows = std::max<int64_t>(1, (int64_t(1) << 17) / std::max<int64_t>(row_bytes, 1));

  visit_width(itemsize, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d0 = static_cast<T*>(dst);
    const T* s0 = static_cast<const T*>(src);
    parallel_for(rows, min_rows, [&](int64_t begin, int64_t end) {
      // Odometer over the outer dims, started at row `begin`.
      const int nd = static_cast<int>(dims.size());
      std::vector<int64_t> idx(nd);
      int64_t doff = 0, soff = 0;
      for (int64_t r = begin, i = nd - 1; i >= 0; --i) {
        idx[i] = r % dims[i].size;
        r /= dims[i].size;
        doff += idx[i] * dims[i].dst_stride;
        soff += idx[i] * dims[i].src_stride;
      }
      for (int64_t r = begin; r < end; ++r) {
        copy_row<T>(d0 + doff, inner.dst_stride, s0 + soff, inner.src_stride, inner.size);
        for (int i = nd - 1; i >= 0; --i) {
          doff += dims[i].dst_stride;
          soff += dims[i].src_stride;
          if (++idx[i] < dims[i].size) break;
          doff -= dims[i].dst_stride * dims[i].size;
          soff -= dims[i].src_stride * dims[i].size;
          idx[i] = 0;
        }
      }
    });
  });
}

}  // namespace pto::kernels
