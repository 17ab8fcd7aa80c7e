// The elementwise engine's loop planning, row walking and conversions (docs/kernels.md#elementwise).
#include "kernels/elementwise.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "copy/simd.h"
#include "core/half.h"
#include "core/unaligned.h"
#include "ptocpu/parallel.h"

namespace pto::kernels::ew {

Loop make_loop(const Tensor& out, const Tensor* const* inputs, int count) {
  Loop loop;
  loop.operands = 1 + count;
  const int rank = out.ndim();
  // Byte stride of operand k along out's dim d (0 where the operand broadcasts).
  const auto stride = [&](int k, int d) -> int64_t {
    if (k == 0) return out.stride(d) * static_cast<int64_t>(out.itemsize());
    const Tensor& t = *inputs[k - 1];
    const int td = d - (rank - t.ndim());
    if (td < 0 || t.shape(td) == 1) return 0;
    return t.stride(td) * static_cast<int64_t>(t.itemsize());
  };
  loop.data[0] = static_cast<std::byte*>(out.data());
  loop.dtypes[0] = out.dtype();
  for (int k = 1; k < loop.operands; ++k) {
    loop.data[k] = static_cast<std::byte*>(inputs[k - 1]->data());
    loop.dtypes[k] = inputs[k - 1]->dtype();
  }
  // Dims of size 1 go; a dim merges into the previous one when every operand steps over both as
  // over one longer dim.
  for (int d = 0; d < rank; ++d) {
    const int64_t n = out.shape(d);
    if (n == 1) continue;
    bool merge = loop.dims > 0;
    for (int k = 0; merge && k < loop.operands; ++k) merge = loop.strides[k][loop.dims - 1] == stride(k, d) * n;
    if (merge) {
      loop.shape[loop.dims - 1] *= n;
      for (int k = 0; k < loop.operands; ++k) loop.strides[k][loop.dims - 1] = stride(k, d);
      continue;
    }
    loop.shape[loop.dims] = n;
    for (int k = 0; k < loop.operands; ++k) loop.strides[k][loop.dims] = stride(k, d);
    ++loop.dims;
  }
  if (loop.dims == 0) {  // a single element
    loop.shape[0] = 1;
    for (int k = 0; k < loop.operands; ++k) loop.strides[k][0] = 0;
    loop.dims = 1;
  }
  return loop;
}

namespace {

// Where kernel_tuning().prefetch_streams (docs/kernels.md#prefetching): rows of a cache line up
// to this many bytes (in the operand with the widest step) have the rows kRowsAhead on prefetched.
// On the Ice Lake Xeon where this was measured the hardware prefetchers lost track of short rows
// that do not follow each other (atomic_add of [262144, 64] fp32 into every other 256-byte run,
// from memory: 9.5 -> 7.1 ms). Shorter rows share lines with their neighbours: the prefetchers
// follow them. Only for loops whose operands come from memory (at least
// kernel_tuning().stream_bytes of them): on rows in the caches the prefetches cost more than the
// adds ([8192, 64]: 90 -> 45 us). On an Intel Xeon with AVX-512 FP16 (2026-12-05) the prefetchers
// keep up with rows worked by a few instructions an element and the prefetches cost (atomic_add as
// above 6.8 ms without, 7.5 with; add of x[:, :32] of [524288, 64] 9.5 / 12.0 ms), while a vector
// math function still gains (exp of x[:, 16:48]: 12.3 -> 10.3 ms): ops set Loop::short_rows_ahead.
// Callers other than the elementwise ops keep the read-ahead.
constexpr int64_t kShortRowBytes = 1024, kRowsAhead = 4;

// Walks the flattened range [begin, end) of the loop, a row segment, a batch of short rows or a run of
// whole rows at a time.
void walk(const Loop& loop, std::byte* const* data, RowFn row, RowBatchFn batch, RowRunFn run, void* ctx,
          int64_t begin, int64_t end, bool from_memory) {
  const int dims = loop.dims;
  const int64_t len = loop.shape[dims - 1];
  int64_t inner[kMaxOperands], idx[kMaxDims] = {}, ahead[kMaxDims] = {};
  int64_t widest = 0;
  for (int k = 0; k < loop.operands; ++k) {
    inner[k] = loop.strides[k][dims - 1];
    widest = std::max(widest, inner[k] < 0 ? -inner[k] : inner[k]);
  }
  int64_t rest = begin / len;
  for (int d = dims - 2; d >= 0; --d) {
    idx[d] = rest % loop.shape[d];
    rest /= loop.shape[d];
  }
  const auto next_row = [&](int64_t* at) {
    for (int d = dims - 2; d >= 0 && ++at[d] == loop.shape[d]; --d) at[d] = 0;
  };
  const auto offset = [&](const int64_t* at, int k) {
    int64_t off = 0;
    for (int d = 0; d < dims - 1; ++d) off += at[d] * loop.strides[k][d];
    return off;
  };
  const bool prefetch = kernel_tuning().prefetch_streams && loop.short_rows_ahead && from_memory && dims > 1 &&
                        len * widest >= 64 && len * widest <= kShortRowBytes && widest <= 8;
  if (prefetch) {
    std::copy(idx, idx + dims, ahead);
    for (int i = 0; i < kRowsAhead; ++i) next_row(ahead);
  }
  // The row kRowsAhead on from the one at `at` asked for (rows advance one at a time).
  const auto prefetch_ahead = [&](int64_t at) {
    if (!prefetch || at + (kRowsAhead + 1) * len > end) return;
    for (int k = 0; k < loop.operands; ++k)  // an input updated in place once, as the output
      if (inner[k] > 0 && (k == 0 || data[k] != data[0])) prefetch_bytes(data[k] + offset(ahead, k), len * inner[k]);
    next_row(ahead);
  };
  int64_t col = begin % len;
  const int64_t per_batch = batch && dims > 1 && len <= kBatchedRow ? kBlock / len : 0;
  std::byte* ptrs[kMaxOperands];
  for (int64_t at = begin; at < end;) {
    // Short rows along the innermost outer dim, a batch's worth or more of them: one run call, which
    // steps through them (no row pointers gathered: the batch's bookkeeping cost more than rows of
    // 3 fp32, add by a column of [400000, 3] 1.06 -> 0.42 ms, torch 0.52).
    const bool stepped = col == 0 && per_batch > 1 && run && !prefetch && dims > 1 &&
                         std::min(end - at, (loop.shape[dims - 2] - idx[dims - 2]) * len) >= per_batch * len;
    if (col == 0 && per_batch > 1 && end - at >= 2 * len && !stepped) {  // whole short rows
      std::byte* batch_ptrs[kBlock * kMaxOperands];
      int64_t rows = 0;
      // Runs of rows along the innermost outer dim, each operand's rows a fixed step apart.
      const int outer = dims - 2;
      while (rows < per_batch && end - at >= len) {
        const int64_t run = std::min({per_batch - rows, (end - at) / len, loop.shape[outer] - idx[outer]});
        for (int k = 0; k < loop.operands; ++k) {
          std::byte* p = data[k] + offset(idx, k);
          const int64_t step = loop.strides[k][outer];
          for (int64_t r = 0; r < run; ++r, p += step) batch_ptrs[(rows + r) * kMaxOperands + k] = p;
        }
        for (int64_t r = 0; r < run; ++r) prefetch_ahead(at + r * len);
        rows += run;
        at += run * len;
        idx[outer] += run - 1;
        next_row(idx);
      }
      batch(ctx, batch_ptrs, inner, len, rows);
      continue;
    }
    // Whole rows to the end of the innermost outer dim (or of the range) in one call; not where each
    // row asks for the rows ahead.
    const int64_t rows = col == 0 && run && dims > 1 && !prefetch
                             ? std::min((end - at) / len, loop.shape[dims - 2] - idx[dims - 2])
                             : 0;
    if (rows > 1) {
      int64_t steps[kMaxOperands];
      for (int k = 0; k < loop.operands; ++k) {
        ptrs[k] = data[k] + offset(idx, k);
        steps[k] = loop.strides[k][dims - 2];
      }
      run(ctx, ptrs, inner, steps, len, rows);
      at += rows * len;
      idx[dims - 2] += rows - 1;
      next_row(idx);
      continue;
    }
    const int64_t n = std::min(len - col, end - at);
    for (int k = 0; k < loop.operands; ++k) ptrs[k] = data[k] + col * inner[k] + offset(idx, k);
    prefetch_ahead(at);
    row(ctx, ptrs, inner, n);
    at += n;
    col = 0;
    next_row(idx);
  }
}

}  // namespace

void run_rows(const Loop& loop, RowFn row, void* ctx, std::byte* const* data, RowBatchFn batch, RowRunFn run) {
  if (!data) data = loop.data;
  int64_t total = 1;
  for (int d = 0; d < loop.dims; ++d) total *= loop.shape[d];
  if (total == 0) return;
  int64_t bytes = 0;
  for (int k = 0; k < loop.operands; ++k) bytes += total * static_cast<int64_t>(dtype_size(loop.dtypes[k]));
  const bool from_memory = bytes >= kernel_tuning().stream_bytes;
  // Each range ends with a fence: its streamed stores (Rows::stream) are ordered before the caller reads.
  if (total < 2 * loop.min_chunk || get_num_threads() == 1) {
    walk(loop, data, row, batch, run, ctx, 0, total, from_memory);
    stream_fence();
    return;
  }
  // Threads take contiguous ranges of the flattened index; a range may start and end inside a row.
  parallel_for(total, loop.min_chunk, [&](int64_t begin, int64_t end) {
    walk(loop, data, row, batch, run, ctx, begin, end, from_memory);
    stream_fence();
  });
}

// ---- conversions --------------------------------------------------------------------------------

namespace {

// One element of storage dtype `dt` as T: small floats (and the narrow storage formats) widen
// through fp32, anything else converts as C++ converts numbers (ops only ask for conversions whose
// values fit, e.g. bool -> float).
template <class T>
T element(DType dt, const std::byte* p) {
  return visit_dtype(dt, [&](auto tag) -> T {
    using S = typename decltype(tag)::type;
    if constexpr (std::is_same_v<S, fp16_t> || std::is_same_v<S, bf16_t>) return static_cast<T>(half::widen(load_unaligned<S>(p)));
    else if constexpr (kByteCoded<S> || kPackedPair<S>) return static_cast<T>(code_to_float(dt, load_unaligned<uint8_t>(p)));
    else return static_cast<T>(load_unaligned<S>(p));
  });
}

template <class T>
PTO_SIMD_CLONES void widen_run(const bf16_t* __restrict src, T* __restrict dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(half::widen(src[i]));
}

// A broadcast operand (stride 0) is filled per row: in the widest registers, as a column broadcast
// fills a block for every row of a few thousand elements.
template <class T>
PTO_SIMD_CLONES void fill_run(T* __restrict dst, T value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}

template <class T, DType D>
const T* load(const std::byte* src, int64_t stride, int64_t n, T* dst) {
  using S = typename dtype_storage<D>::type;
  if (stride == 0) {
    fill_run(dst, element<T>(D, src), n);
    return dst;
  }
  if (stride == static_cast<int64_t>(sizeof(S))) {
    if constexpr (kSameBits<T, S>) return reinterpret_cast<const T*>(src);
    else if constexpr (std::is_same_v<S, fp16_t> && std::is_same_v<T, float>) {
      half::widen(reinterpret_cast<const fp16_t*>(src), dst, n);
      return dst;
    } else if constexpr (std::is_same_v<S, bf16_t>) {
      widen_run(reinterpret_cast<const S*>(src), dst, n);
      return dst;
    }
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = element<T>(D, src + i * stride);
  return dst;
}

PTO_SIMD_CLONES void narrow_run(const float* __restrict src, bf16_t* __restrict dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = half::to_bf16(src[i]);
}

template <class T, DType D>
void store(const T* src, std::byte* dst, int64_t stride, int64_t n) {
  if constexpr (kSameBits<T, typename dtype_storage<D>::type>) {
    if (stride == static_cast<int64_t>(sizeof(T))) {  // a compiled chain's contiguous output
      std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
      return;
    }
  } else if constexpr (std::is_same_v<T, float> && D == DType::FP16) {
    if (stride == 2) return half::narrow(src, reinterpret_cast<fp16_t*>(dst), n);
  } else if constexpr (std::is_same_v<T, float> && D == DType::BF16) {
    if (stride == 2) return narrow_run(src, reinterpret_cast<bf16_t*>(dst), n);
  }
  for (int64_t i = 0; i < n; ++i) {
    std::byte* p = dst + i * stride;
    if constexpr (std::is_same_v<T, float> && D != DType::FP32) {
      uint16_t h;
      uint8_t b;
      switch (D) {
        case DType::FP16: h = half::to_fp16(src[i]).bits; std::memcpy(p, &h, 2); break;
        case DType::BF16: h = half::to_bf16(src[i]).bits; std::memcpy(p, &h, 2); break;
        default: b = static_cast<uint8_t>(float_to_code(D, src[i], Round::NearestEven, false)); std::memcpy(p, &b, 1); break;
      }
    } else {
      std::memcpy(p, &src[i], sizeof(T));
    }
  }
}

// Does a storage type compute as T?
template <class T, class S>
constexpr bool computes_as() {
  return std::is_same_v<compute_t<S>, T>;
}

}  // namespace

template <class T>
LoadFn<T> loader(DType dtype) {
  return visit_dtype(dtype, [](auto tag) -> LoadFn<T> {
    using S = typename decltype(tag)::type;
    return &load<T, dtype_of<S>()>;
  });
}

template <class T>
StoreFn<T> storer(DType dtype) {
  StoreFn<T> fn = nullptr;
  visit_dtype(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    // INT4 and the X2 pairs are no op's result: their values are written by cast alone.
    if constexpr ((computes_as<T, S>() || kSameBits<T, S>) && !std::is_same_v<S, int4_t> && !kPackedPair<S>)
      fn = &store<T, dtype_of<S>()>;
  });
  return fn;
}

#define PTO_EW_CONVERSIONS(T) \
  template LoadFn<T> loader<T>(DType); \
  template StoreFn<T> storer<T>(DType);
PTO_EW_CONVERSIONS(float)
PTO_EW_CONVERSIONS(double)
PTO_EW_CONVERSIONS(int8_t)
PTO_EW_CONVERSIONS(int16_t)
PTO_EW_CONVERSIONS(int32_t)
PTO_EW_CONVERSIONS(int64_t)
PTO_EW_CONVERSIONS(uint8_t)
PTO_EW_CONVERSIONS(uint16_t)
PTO_EW_CONVERSIONS(uint32_t)
PTO_EW_CONVERSIONS(uint64_t)
PTO_EW_CONVERSIONS(bool)
#undef PTO_EW_CONVERSIONS

namespace {
// Four codes a step, read and written as one 64-bit word: GCC vectorised the plain loop into
// element-by-element vector inserts, twice as slow as scalar loads (bf16 exp of 16M: 10 ms).
void look_up_range(uint16_t* __restrict out, const uint16_t* __restrict in, const uint16_t* __restrict table, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint64_t codes, results = 0;
    std::memcpy(&codes, in + i, sizeof codes);
    for (int k = 0; k < 4; ++k) results |= uint64_t{table[(codes >> (16 * k)) & 0xFFFF]} << (16 * k);
    std::memcpy(out + i, &results, sizeof results);
  }
  for (; i < n; ++i) out[i] = table[in[i]];
}
}  // namespace

void look_up(uint16_t* out, const uint16_t* in, const uint16_t* table, int64_t n) {
  parallel_for(n, int64_t(1) << 16, [&](int64_t b, int64_t e) { look_up_range(out + b, in + b, table, e - b); });
}

}  // namespace pto::kernels::ew
