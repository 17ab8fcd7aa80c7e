// scatter_update kernel (docs/ops/scatter_update.md). Each (i, j) copies one row (2-D: d
// elements; 4-D: an [n, d] slice) into its slot. So that threads never write one slot twice
// and duplicates keep "the last write wins", a serial pass first marks the last position that
// names each slot; the copies then run in parallel, each position copying only where it is that
// last writer. Large caches are written with streaming stores.
#include "kernels/scatter_update.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "copy/simd.h"
#include "copy/stream.h"
#include "copy/strided_copy.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {
namespace {

// Element offsets of a slot's row in input and of position (i, j)'s row in src, and the layout
// of one row (1 or 2 axes).
struct Geometry {
  bool four_d = false;
  int64_t s = 0, block_size = 1;
  int64_t in_s0 = 0, in_s1 = 0, src_s0 = 0, src_s1 = 0;
  int row_ndim = 1;
  int64_t row_shape[2] = {0, 1}, in_row_strides[2] = {0, 0}, src_row_strides[2] = {0, 0};
  bool row_contiguous = false;  // both rows are dense runs of row_elems elements
  int64_t row_elems = 0;

  int64_t input_offset(int64_t slot) const {
    return four_d ? slot / block_size * in_s0 + slot % block_size * in_s1 : slot * in_s0;
  }
  int64_t src_offset(int64_t k) const {  // k = i * s + j
    return four_d ? k / s * src_s0 + k % s * src_s1 : k * src_s0;
  }
};

Geometry geometry(const ScatterUpdateArgs& a) {
  Geometry g;
  g.four_d = a.input.ndim() == 4;
  g.s = a.index.shape(1);
  g.in_s0 = a.input.stride(0);
  g.src_s0 = a.src.stride(0);
  if (g.four_d) {
    g.block_size = a.input.shape(1);
    g.in_s1 = a.input.stride(1);
    g.src_s1 = a.src.stride(1);
    g.row_ndim = 2;
    for (int k = 0; k < 2; ++k) {
      g.row_shape[k] = a.input.shape(2 + k);
      g.in_row_strides[k] = a.input.stride(2 + k);
      g.src_row_strides[k] = a.src.stride(2 + k);
    }
  } else {
    g.row_shape[0] = a.input.shape(1);
    g.in_row_strides[0] = a.input.stride(1);
    g.src_row_strides[0] = a.src.stride(1);
  }
  g.row_elems = g.row_shape[0] * g.row_shape[1];
  auto dense = [&](const int64_t* strides) {
    int64_t expected = 1;
    for (int k = g.row_ndim - 1; k >= 0; --k) {
      if (g.row_shape[k] != 1 && strides[k] != expected) return false;
      expected *= g.row_shape[k];
    }
    return true;
  };
  g.row_contiguous = dense(g.in_row_strides) && dense(g.src_row_strides);
  return g;
}

// Rows of at least kStreamRow bytes written to a cache of at least the streaming threshold go
// with streaming stores: the cache lines are not read first and the rest of the cache (and src)
// stays in the CPU caches.
constexpr int64_t kStreamRow = 256;
// Rows up to kShortRow bytes go by fixed-size moves (copy_short), not a memcpy call each. The slots
// lie at random, where no hardware prefetcher looks: the one kSlotsAhead positions on is asked for
// (its first kAheadBytes; a longer row's later lines follow in order).
constexpr int64_t kShortRow = 256, kSlotsAhead = 8, kAheadBytes = 1024;

inline void prefetch_for_write(const std::byte* p, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off, 1);
  __builtin_prefetch(p + bytes - 1, 1);  // a row that ends in the next line
}

template <Isa isa, class I>
void run(const ScatterUpdateArgs& a, const Geometry& g) {
  const I* idx = a.index.data_as<I>();
  const int64_t n = a.index.numel();
  const size_t item = a.input.itemsize();
  auto* in = static_cast<std::byte*>(a.input.data());
  const auto* src = static_cast<const std::byte*>(a.src.data());
  const int64_t row_bytes = g.row_elems * static_cast<int64_t>(item);
  const int64_t cache_bytes = a.input.numel() * static_cast<int64_t>(item);
  const bool stream = g.row_contiguous && row_bytes >= kStreamRow && cache_bytes >= kernel_tuning().stream_bytes;
  const bool short_rows = g.row_contiguous && row_bytes <= kShortRow;
  auto copy_row = [&](int64_t k, int64_t slot) {
    std::byte* dst = in + g.input_offset(slot) * static_cast<int64_t>(item);
    const std::byte* from = src + g.src_offset(k) * static_cast<int64_t>(item);
    if (stream) stream_copy<isa>(dst, from, row_bytes);
    else if (short_rows) copy_short(dst, from, static_cast<size_t>(row_bytes));
    else if (g.row_contiguous) std::memcpy(dst, from, row_bytes);
    else strided_copy(dst, g.in_row_strides, from, g.src_row_strides, g.row_shape, g.row_ndim, item);
  };
  // Positions [begin, end) in order, each copied where writes(k, slot); the slot kSlotsAhead
  // positions on is asked for meanwhile (not when streamed: those stores bypass the caches).
  const bool ask_ahead = g.row_contiguous && !stream;
  const int64_t ahead_bytes = std::min(row_bytes, kAheadBytes);
  auto copy_range = [&](int64_t begin, int64_t end, auto&& writes) {
    for (int64_t k = begin; k < end; ++k) {
      if (ask_ahead && k + kSlotsAhead < end && idx[k + kSlotsAhead] >= 0)
        prefetch_for_write(in + g.input_offset(idx[k + kSlotsAhead]) * static_cast<int64_t>(item), ahead_bytes);
      const int64_t slot = idx[k];
      if (slot >= 0 && writes(k, slot)) copy_row(k, slot);
    }
    if (stream) stream_fence();
  };
  const int64_t min_rows = std::max<int64_t>(1, (int64_t(64) << 10) / std::max<int64_t>(1, row_bytes));
  if (get_num_threads() == 1 || n <= min_rows)  // one thread: row-major order is the rule itself
    return copy_range(0, n, [](int64_t, int64_t) { return true; });
  // The last position naming each slot is its writer: one pass from the end marks them, with a bit
  // per slot seen and a bit per position (a 16 MB cache of 32-byte rows: 64 KiB of slot bits, in L2;
  // an array of last positions was 4 MB written at random, and took longer than the copies).
  const int64_t slots = g.four_d ? a.input.shape(0) * g.block_size : a.input.shape(0);
  std::vector<uint64_t> seen(static_cast<size_t>((slots + 63) / 64)), writer(static_cast<size_t>((n + 63) / 64));
  for (int64_t k = n; k-- > 0;) {
    const int64_t slot = idx[k];
    if (slot < 0) continue;
    const uint64_t bit = uint64_t(1) << (slot & 63);
    if (!(seen[slot >> 6] & bit)) {
      seen[slot >> 6] |= bit;
      writer[k >> 6] |= uint64_t(1) << (k & 63);
    }
  }
  parallel_for(n, min_rows, [&](int64_t begin, int64_t end) {
    copy_range(begin, end, [&](int64_t k, int64_t) { return (writer[k >> 6] >> (k & 63)) & 1; });
  });
}

}  // namespace

void scatter_update(const ScatterUpdateArgs& args) {
  if (args.index.numel() == 0) return;
  const Geometry g = geometry(args);
  if (g.row_elems == 0) return;
  visit_index_dtype(args.index.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    switch (kernel_tuning().isa) {
#if PTO_X86
      case Isa::Avx512: return run<Isa::Avx512, I>(args, g);
      case Isa::Avx2: return run<Isa::Avx2, I>(args, g);
#endif
      default: return run<Isa::Baseline, I>(args, g);
    }
  });
}

}  // namespace pto::kernels
