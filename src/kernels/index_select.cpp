#include "kernels/index_select.h"

#include <cstring>
#include <vector>

#include "kernels/simd.h"
#include "kernels/strided_copy.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

// Last-dim gather (inner block of one element): out[j] = row[idx[j] * stride].
template <class T, class I>
PTO_SIMD_CLONES void gather_elements(T* out, const T* row, int64_t stride, const I* idx, int64_t n) {
  if (stride == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = row[idx[j]];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = row[idx[j] * stride];
  }
}

// Contiguous inner blocks of a fixed size: the copy inlines to a few moves.
template <size_t Bytes, class I>
void gather_fixed_blocks(std::byte* out, const std::byte* base, int64_t stride_bytes, const I* idx, int64_t n) {
  for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * Bytes, base + idx[j] * stride_bytes, Bytes);
}

template <class I>
void gather_blocks(std::byte* out, const std::byte* base, int64_t stride_bytes, const I* idx, int64_t n,
                   int64_t block) {
  switch (block) {
    case 1: return gather_fixed_blocks<1>(out, base, stride_bytes, idx, n);
    case 2: return gather_fixed_blocks<2>(out, base, stride_bytes, idx, n);
    case 4: return gather_fixed_blocks<4>(out, base, stride_bytes, idx, n);
    case 8: return gather_fixed_blocks<8>(out, base, stride_bytes, idx, n);
    case 16: return gather_fixed_blocks<16>(out, base, stride_bytes, idx, n);
    case 32: return gather_fixed_blocks<32>(out, base, stride_bytes, idx, n);
    case 64: return gather_fixed_blocks<64>(out, base, stride_bytes, idx, n);
    default: break;
  }
  constexpr int64_t kAhead = 8;  // rows are random: fetch the next ones early
  for (int64_t j = 0; j < n; ++j) {
    if (j + kAhead < n) __builtin_prefetch(base + idx[j + kAhead] * stride_bytes);
    std::memcpy(out + j * block, base + idx[j] * stride_bytes, block);
  }
}

// Geometry of input seen as [outer dims..., dim, inner dims...].
struct Geometry {
  Shape outer_shape;
  Strides outer_strides;
  int64_t outer = 1, rows_per_outer = 0;  // rows_per_outer = index.numel()
  int64_t dim_stride = 0;
  Shape inner_shape;
  Strides inner_strides;
  int64_t inner = 1;
  bool inner_contiguous = true;

  int64_t outer_offset(int64_t o) const {
    int64_t off = 0;
    for (int i = static_cast<int>(outer_shape.size()) - 1; i >= 0; --i) {
      off += (o % outer_shape[i]) * outer_strides[i];
      o /= outer_shape[i];
    }
    return off;
  }
};

Geometry geometry(const Tensor& input, int dim, const Tensor& index) {
  Geometry g;
  for (int i = 0; i < dim; ++i) {
    g.outer_shape.push_back(input.shape(i));
    g.outer_strides.push_back(input.stride(i));
    g.outer *= input.shape(i);
  }
  g.rows_per_outer = index.numel();
  g.dim_stride = input.stride(dim);
  int64_t expected = 1;
  for (int i = input.ndim() - 1; i > dim; --i) {
    g.inner_shape.insert(g.inner_shape.begin(), input.shape(i));
    g.inner_strides.insert(g.inner_strides.begin(), input.stride(i));
    if (input.shape(i) != 1 && input.stride(i) != expected) g.inner_contiguous = false;
    expected *= input.shape(i);
    g.inner *= input.shape(i);
  }
  return g;
}

}  // namespace

void index_select(const Tensor& input, int dim, const Tensor& index, const Tensor& out) {
  const Geometry g = geometry(input, dim, index);
  const int64_t rows = g.outer * g.rows_per_outer;
  if (rows == 0 || g.inner == 0) return;
  const int64_t item = static_cast<int64_t>(input.itemsize());
  const int64_t block_bytes = g.inner * item;
  const auto* in = static_cast<const std::byte*>(input.data());
  auto* dst = static_cast<std::byte*>(out.data());
  const Strides dst_inner_strides = contiguous_strides(g.inner_shape);
  const int64_t min_rows = std::max<int64_t>(1, (int64_t(1) << 16) / block_bytes);

  visit_index_dtype(index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = index.data_as<I>();
    parallel_for(rows, min_rows, [&](int64_t begin, int64_t end) {
      // Walk [begin, end) as runs of index positions within one outer slice.
      for (int64_t r = begin; r < end;) {
        const int64_t o = r / g.rows_per_outer, k = r % g.rows_per_outer;
        const int64_t run = std::min(end - r, g.rows_per_outer - k);
        const std::byte* base = in + g.outer_offset(o) * item;
        std::byte* out_run = dst + r * block_bytes;
        if (g.inner == 1) {
          visit_width(input.itemsize(), [&](auto wtag) {
            using T = typename decltype(wtag)::type;
            gather_elements<T, I>(reinterpret_cast<T*>(out_run), reinterpret_cast<const T*>(base), g.dim_stride,
                                  idx + k, run);
          });
        } else if (g.inner_contiguous) {
          gather_blocks<I>(out_run, base, g.dim_stride * item, idx + k, run, block_bytes);
        } else {
          for (int64_t j = 0; j < run; ++j)
            strided_copy(out_run + j * block_bytes, dst_inner_strides.data(), base + idx[k + j] * g.dim_stride * item,
                         g.inner_strides.data(), g.inner_shape.data(), static_cast<int>(g.inner_shape.size()),
                         input.itemsize());
        }
        r += run;
      }
    });
  });
}

}  // namespace pto::kernels
