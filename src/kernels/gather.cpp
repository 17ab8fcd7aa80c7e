// gather kernel (docs/ops/gather.md). index and out are walked as [rows, width] (width = the
// last axis); a row's input base is fixed by its coordinates on the other axes, so the inner
// loop is one indexed load per element:
//   dim == last axis:  out[j] = base[index[j] * dim_stride]   (a row of input, read at random)
//   dim  < last axis:  out[j] = base[index[j] * dim_stride + j * last_stride]
// Both loops are plain so that the compiler vectorises them into hardware gathers (runtime
// dispatched clones). Threads own disjoint blocks of the output.
#include "kernels/gather.h"

#include <algorithm>

#include "copy/simd.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

constexpr int kMaxDims = 16;

struct Geometry {
  int n_axes = 0;                                  // the axes before the last one
  int64_t shape[kMaxDims], in_strides[kMaxDims];  // index extents; input strides (0 on the dim axis)
  int64_t rows = 1, width = 0;
  int64_t dim_stride = 0, last_stride = 0, dim_extent = 0;
  bool dim_is_last = false;

  int64_t base_offset(const int64_t* pos) const {
    int64_t off = 0;
    for (int a = 0; a < n_axes; ++a) off += pos[a] * in_strides[a];
    return off;
  }
};

Geometry geometry(const Tensor& input, int dim, const Tensor& index) {
  Geometry g;
  const int r = index.ndim();
  g.n_axes = r - 1;
  for (int a = 0; a + 1 < r; ++a) {
    g.shape[a] = index.shape(a);
    g.in_strides[a] = a == dim ? 0 : input.stride(a);
    g.rows *= index.shape(a);
  }
  g.width = index.shape(r - 1);
  g.dim_stride = input.stride(dim);
  g.dim_extent = input.shape(dim);
  g.last_stride = input.stride(r - 1);
  g.dim_is_last = dim == r - 1;
  return g;
}

template <class T, class I>
PTO_SIMD_CLONES void gather_in_row(T* out, const T* base, const I* idx, int64_t n, int64_t dim_stride) {
  if (dim_stride == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = base[idx[j]];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = base[idx[j] * dim_stride];
  }
}

template <class T, class I>
PTO_SIMD_CLONES void gather_across_rows(T* out, const T* base, const I* idx, int64_t n, int64_t dim_stride,
                                        int64_t last_stride) {
  if (last_stride == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = base[idx[j] * dim_stride + j];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = base[idx[j] * dim_stride + j * last_stride];
  }
}

// Work items: (block of columns, chunk of rows). When dim is not the last axis, every element
// of a row reads another line of input; a block of columns narrow enough that its slab of input
// ([dim extent, block]) stays in L2 turns those reads into cache hits. Consecutive items share
// a column block, so each thread mostly stays in one slab.
template <class T, class I>
void run(const Geometry& g, const T* in, const I* idx, T* out) {
  constexpr int64_t kSlabBytes = 1 << 20;
  int64_t cols = g.width;
  if (!g.dim_is_last)
    cols = std::clamp<int64_t>(kSlabBytes / std::max<int64_t>(1, g.dim_extent * int64_t(sizeof(T))) / 64 * 64, 64,
                               g.width);
  const int64_t col_blocks = (g.width + cols - 1) / cols;
  const int64_t min_rows = std::max<int64_t>(1, 16384 / cols);
  const int64_t row_chunks =
      std::clamp<int64_t>(4 * get_num_threads() / col_blocks, 1, std::max<int64_t>(1, g.rows / min_rows));
  const int64_t rows_per_chunk = (g.rows + row_chunks - 1) / row_chunks;
  parallel_for(col_blocks * row_chunks, 1, [&](int64_t first, int64_t last) {
    for (int64_t item = first; item < last; ++item) {
      const int64_t c0 = item / row_chunks * cols, n = std::min(cols, g.width - c0);
      const int64_t begin = item % row_chunks * rows_per_chunk, end = std::min(g.rows, begin + rows_per_chunk);
      int64_t pos[kMaxDims];
      int64_t flat = begin;
      for (int a = g.n_axes - 1; a >= 0; --a) {
        pos[a] = flat % g.shape[a];
        flat /= g.shape[a];
      }
      int64_t base = g.base_offset(pos);
      for (int64_t row = begin; row < end; ++row) {
        const int64_t at = row * g.width + c0;
        if (g.dim_is_last) gather_in_row<T, I>(out + at, in + base, idx + at, n, g.dim_stride);
        else gather_across_rows<T, I>(out + at, in + base + c0 * g.last_stride, idx + at, n, g.dim_stride, g.last_stride);
        for (int a = g.n_axes - 1; a >= 0; --a) {  // the next row's coordinates
          base += g.in_strides[a];
          if (++pos[a] < g.shape[a]) break;
          base -= g.shape[a] * g.in_strides[a];
          pos[a] = 0;
        }
      }
    }
  });
}

}  // namespace

void gather(const Tensor& input, int dim, const Tensor& index, const Tensor& out) {
  if (index.numel() == 0) return;
  const Geometry g = geometry(input, dim, index);
  visit_index_dtype(index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    visit_width(input.itemsize(), [&](auto wtag) {
      using T = typename decltype(wtag)::type;
      run<T, I>(g, input.data_as<const T>(), index.data_as<I>(), out.data_as<T>());
    });
  });
}

}  // namespace pto::kernels
