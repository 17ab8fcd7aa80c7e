// The one engine behind every elementwise op (docs/kernels.md#elementwise): broadcasting by
// strides, dims coalesced, rows split across threads in contiguous ranges, and each row worked in
// blocks that fit L1. Per block, each operand is loaded into a buffer of the compute type (fp16 /
// bf16 / fp8 widened to fp32, broadcast operands filled), the op's functor runs over the buffers
// (a plain loop the compiler vectorises, one clone per ISA), and the result is stored with one
// rounding to the output dtype. Operands already of the compute type and contiguous are used in
// place. A functor whose work the compiler cannot vectorise per element (a call into a vector
// math library) may instead give a block form, `static void apply_block(Tout* out, const Tin* in0,
// ..., int64_t n)`, which the engine calls once per block in place of the per-element loop.
// Kernels never throw: the op checked everything before.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "copy/simd.h"
#include "copy/stream.h"
#include "core/half_lanes.h"
#include "ptocpu/tensor.h"

namespace pto::kernels::ew {

// Elements per block: 2 KiB of fp32 per operand, so a block's operands stay in L1.
inline constexpr int64_t kBlock = 512;
inline constexpr int64_t kPrefetchFromBytes = int64_t(1) << 20;  // Rows::prefetch: outputs from here up
inline constexpr int kMaxOperands = 8;  // inputs + outputs (a compiled program's fused loops have several)
inline constexpr int kMaxDims = 16;     // op ranks stop at 8; broadcasting adds none
// Rows up to this many elements go kBlock / n whole rows at a time to a batch or run call when the
// row function has one.
inline constexpr int64_t kBatchedRow = 64;
inline constexpr int64_t kFewElements = 8;  // rows this short are not worked in place one span each

// A loop over `shape` (dims coalesced, the innermost last). Operand 0 is the output; strides are
// in bytes per loop dim (0: broadcast along that dim). Fixed arrays: planning a call allocates nothing.
struct Loop {
  int dims = 0;
  int operands = 0;
  int64_t shape[kMaxDims];
  std::byte* data[kMaxOperands];
  int64_t strides[kMaxOperands][kMaxDims];
  DType dtypes[kMaxOperands];
  // Elements per thread below which a thread's start-up costs more than the work: the default
  // suits a few instructions an element; a vector math function's dozens take threads sooner.
  int64_t min_chunk = int64_t(1) << 15;
  // Whether short rows that do not follow each other have rows ahead prefetched (elementwise.cpp's
  // kShortRowBytes; docs/kernels.md#elementwise).
  bool short_rows_ahead = true;
};

// out and the inputs; each input broadcasts to out's shape numpy-style (right-aligned, dims of
// size 1 repeat), so inputs may have fewer dims than out. out's rank is at most kMaxDims (the ops
// checked it).
Loop make_loop(const Tensor& out, const Tensor* const* inputs, int count);

// Loads n elements of `dtype` at src (byte stride) into dst as T; returns dst, or src itself when
// it is already n contiguous elements of T (then dst is untouched). Any dtype loads as any T
// (small floats through fp32; ops ask only for conversions whose values fit).
template <class T>
using LoadFn = const T* (*)(const std::byte* src, int64_t stride, int64_t n, T* dst);
template <class T>
using StoreFn = void (*)(const T* src, std::byte* dst, int64_t stride, int64_t n);
template <class T>
LoadFn<T> loader(DType dtype);
// Stores T into the dtypes whose compute type T is (fp32 into fp16 / bf16 / fp8 with one rounding
// to nearest even; each integer type into the integer dtypes of its width, bit for bit); nullptr for
// any other pair.
template <class T>
StoreFn<T> storer(DType dtype);

// The compute type of each storage dtype: fp32 for fp16 / bf16 / fp8 / fp32, fp64 for fp64,
// the type itself for integers and bool.
template <class S>
using compute_t = std::conditional_t<std::is_same_v<S, double>, double,
                                     std::conditional_t<std::is_integral_v<S>, S, float>>;

// Whether storage type S holds compute type T's values bit for bit: the same type, or integers of one
// width (C++ converts those by their bits), which load and store as they lie.
template <class T, class S>
inline constexpr bool kSameBits =
    std::is_same_v<S, T> || (std::is_integral_v<S> && std::is_integral_v<T> && !std::is_same_v<S, bool> &&
                             !std::is_same_v<T, bool> && sizeof(S) == sizeof(T));

// The type a functor runs in for compute type T. A functor whose integer results depend only on its
// operands' bits (wrapping arithmetic, bitwise ops, equality) says `static constexpr bool kSignless =
// true`: its signed integers run as the unsigned type of their width, one build for both.
template <class F, class T>
struct kernel_type {
  using type = T;
};
template <class F, class T>
  requires(requires { requires F::kSignless; } && std::is_integral_v<T> && std::is_signed_v<T>)
struct kernel_type<F, T> {
  using type = std::make_unsigned_t<T>;
};
template <class F, class T>
using kernel_t = typename kernel_type<F, T>::type;

// Runs rows(ptrs, n) over every row segment of the loop, in parallel over contiguous ranges of
// the flattened index (deterministic: each output element is written by exactly one call).
// ptrs[k] points at the segment's first element of operand k; the segment's elements are
// `inner_stride(k)` bytes apart.
// data: the operands' first elements when not loop.data (a compiled program's planned loop).
using RowFn = void (*)(void* ctx, std::byte* const* ptrs, const int64_t* inner_strides, int64_t n);
// Short whole rows at once (optional): ptrs[r * kMaxOperands + k] is row r's first element of
// operand k, for r < rows, each row n elements long; rows * n <= kBlock.
using RowBatchFn = void (*)(void* ctx, std::byte* const* ptrs, const int64_t* inner_strides, int64_t n, int64_t rows);
// Longer whole rows along one outer dim at once (optional): operand k of row r at
// ptrs[k] + r * steps[k], for r < rows, each row n elements long.
using RowRunFn = void (*)(void* ctx, std::byte* const* ptrs, const int64_t* inner_strides, const int64_t* steps,
                          int64_t n, int64_t rows);
void run_rows(const Loop& loop, RowFn row, void* ctx, std::byte* const* data = nullptr, RowBatchFn batch = nullptr,
              RowRunFn run = nullptr);

// out[i] = table[in[i]] for i < n, on the threads (run_by_table's lookups of 16-bit codes).
void look_up(uint16_t* out, const uint16_t* in, const uint16_t* table, int64_t n);

// Does F give a block form over these types: F::apply_block(Tout* out, const Tin* in0, ..., int64_t n)?
template <class F, class Tout, class Tin, size_t... K>
constexpr bool has_block_form(std::index_sequence<K...>) {
  return requires(Tout* out, const Tin* in, int64_t n) { F::apply_block(out, (static_cast<void>(K), in)..., n); };
}

// Where the value of row r of a column lies: rows[r * kMaxOperands] (a batch's rows, one pointer
// each), or else first + r * step.
struct ColumnAt {
  const std::byte* const* rows = nullptr;
  const std::byte* first = nullptr;
  int64_t step = 0;
  const std::byte* operator()(int64_t r) const { return rows ? rows[r * kMaxOperands] : first + r * step; }
};

// A column's value in each of m rows, stored `size` bytes each, converted to T by `load`: the stored
// values side by side, then one conversion (a call per value cost more than the row: add of [300000, 3]
// fp16 by a column 2.4 -> 0.3 ms). Out of line: its buffer in the callers' frames slowed the native rows.
template <class T>
[[gnu::noinline]] const T* converted_column(LoadFn<T> load, int64_t size, ColumnAt at, int64_t m, T* value) {
  alignas(64) std::byte stored[kBlock * 8];
  if (with_constant<1, 2, 4, 8>(size, [&](auto bytes) {
        for (int64_t r = 0; r < m; ++r) std::memcpy(stored + r * bytes(), at(r), bytes());
      }))
    return load(stored, size, m, value);
  for (int64_t r = 0; r < m; ++r) value[r] = *load(at(r), 0, 1, value + r);
  return value;
}

// out[r * n + i] = value[r] for i < n, r < rows. Known lengths become vector shuffles; a fill per
// row through the loader cost more than the row (add of [400000, 3] fp32 by a column: 2.5 ms,
// torch 0.55). Free of the functor, so one build per type serves every op.
template <int kN, class T>
PTO_SIMD_CLONES void repeat_each(T* __restrict out, const T* __restrict value, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r)
    for (int i = 0; i < kN; ++i) out[r * kN + i] = value[r];
}
template <class T>
void repeat_each(T* __restrict out, const T* __restrict value, int64_t rows, int64_t n) {
  if (!with_constant<2, 3, 4, 5, 6, 7, 8>(n, [&](auto len) { repeat_each<len()>(out, value, rows); }))
    for (int64_t r = 0; r < rows; ++r) std::fill_n(out + r * n, n, value[r]);
}

// The part of a functor's rows that does not depend on the functor: loads and stores, block
// buffers, streaming, batches of short rows. Tout is the compute type of the output (bool for
// predicates), Tin the inputs'. The functor's own loops enter through the function pointers that
// Rows (below) sets, so one build of this serves every functor of the same types
// (docs/kernels.md#compile-time).
template <class Tout, class Tin, int N>
struct Engine {
  // The functor's loops (Rows sets them): F over rows in place (Rows::rows_in_place, which also
  // takes a block of buffers as one row); a block form's call over a block (Rows::block), nullptr
  // for the others; and per mask of inputs held as one value each, F over rows a step apart
  // (Rows::run_in_place; none for a block form).
  using BlockFn = void (*)(Tout* out, const Tin* const* in, int64_t m);
  using RowsInPlaceFn = void (*)(std::byte* const* ptrs, int64_t n, int64_t rows);
  using RunInPlaceFn = void (*)(std::byte* const* ptrs, const int64_t* steps, int64_t n, int64_t rows);
  RowsInPlaceFn rows_in_place_fn = nullptr;
  BlockFn block_form_fn = nullptr;
  std::array<RunInPlaceFn, (1u << N) - 1> runs_in_place{};
  bool streams = false;  // Rows::kStreams

  std::array<LoadFn<Tin>, N> load;
  StoreFn<Tout> store;
  bool out_native = false;  // the output's storage holds Tout as it is (kSameBits): rows are written in place
  std::array<bool, N> in_native{};  // input k's storage holds Tin as it is: its contiguous rows are read in place
  std::array<int, N> in_size{};     // input k's bytes per element
  bool updates_input = false;       // the output is one of the inputs (an update in place)

  // Set for a contiguous output of at least kernel_tuning().stream_bytes (docs/kernels.md#streaming-stores);
  // where `streams` too, each block is computed (and stored to its dtype) in L1, then streamed out; the
  // first block of a row ends at a cache line of the output, so the blocks after it write whole lines.
  // run_rows fences each thread's streaming stores once, at the end of its range (a fence per row
  // cost about 100 ns a row of 64 fp32).
  bool stream = false;
  // Whether rows that begin or end inside a cache line stream too (docs/kernels.md#streaming-stores):
  // set for outputs past the last-level cache. Below it such rows are stored: the line they share with
  // the next row, written partly streamed, partly stored, cost more than the row (add of [17760, 1000]
  // int8 by a column, 17 MB: 1.3-1.6 ms streamed, 0.95-1.15 stored, torch 0.78).
  bool stream_split_lines = false;

  // Whether row() asks for the next block's input lines ahead: set where
  // kernel_tuning().prefetch_streams (docs/kernels.md#prefetching), for outputs of at least
  // kPrefetchFromBytes. A smaller call's data sits in the caches, where a prefetch per line cost more
  // than the add it served (a 4K-element fp32 add spent 12 % of its call on them); a larger one's comes
  // from memory, where they pay even on rows as short as 16 KiB (atan2 of [4096, 4096] by a broadcast
  // row: 8.1 ms with them, 25 ms without).
  bool prefetch = true;

  // Fused rows (docs/kernels.md#fused-half-rows): where the output is an fp16 or bf16 row and every
  // input is either of the output's dtype and contiguous or broadcast along the row, a register of
  // lanes at a time is widened, computed and narrowed. fused[mask] by the inputs broadcast along the
  // row (bit k: input k has stride 0); nullptr: the buffered path. Set by fuse().
  using FusedFn = int64_t (*)(std::byte* out, std::byte* const* in, const Tin* const* broadcast, int64_t m);
  static constexpr int64_t kFusedLanes = 16;  // a fused function's lanes; it leaves fewer to the buffers
  std::array<FusedFn, (1u << N)> fused{};
  unsigned half_inputs = 0;  // bit k: input k has the output's dtype

  // The ctx of the functions below.
  void* context() { return this; }

  // F over one block of buffers.
  void compute(Tout* out, const Tin* const* in, int64_t m) const {
    if (block_form_fn) block_form_fn(out, in, m);
    else as_one_row(rows_in_place_fn, out, in, m);
  }
  // rows_in_place's one row over a block of buffers.
  static void as_one_row(RowsInPlaceFn rows_in_place, Tout* out, const Tin* const* in, int64_t m) {
    std::byte* ptrs[kMaxOperands] = {reinterpret_cast<std::byte*>(out)};
    for (int k = 0; k < N; ++k)  // inputs are only read through these
      ptrs[k + 1] = const_cast<std::byte*>(reinterpret_cast<const std::byte*>(in[k]));
    rows_in_place(ptrs, m, 1);
  }

  static void row(void* ctx, std::byte* const* ptrs, const int64_t* strides, int64_t n) {
    const auto& self = *static_cast<const Engine*>(ctx);
    if (self.values_in_place(strides) >= 0) {
      static constexpr int64_t kOneRow[kMaxOperands] = {};
      return run(ctx, ptrs, strides, kOneRow, n, 1);
    }
    alignas(64) Tin buffers[N][kBlock];
    alignas(64) Tout out_buffer[kBlock];
    alignas(64) std::byte stage[kBlock * 8];  // a streamed block in the output's dtype
    const int64_t out_size = strides[0];
    // A row that begins or ends inside a cache line only where stream_split_lines allows.
    const bool stream = self.streams && self.stream && out_size > 0 && 64 % out_size == 0 &&
                        (n * out_size % 64 == 0 || self.stream_split_lines);
    const int64_t lead = stream ? ((64 - (reinterpret_cast<uintptr_t>(ptrs[0]) & 63)) & 63) / out_size : 0;
    const bool direct = !stream && self.out_native && out_size == static_cast<int64_t>(sizeof(Tout));
    // An operand with stride 0 (a scalar, a broadcast along the row) is the same in every block:
    // it is filled once per row, as far as a block's buffered part reaches (a fused row's is shorter
    // than its lanes: filling a block there cost a quarter of a row of 256 fp16 by a column).
    const FusedFn fused = self.fused_for(strides);
    const int64_t filled = std::min(n, fused ? kFusedLanes : kBlock);
    const Tin* in[N] = {};
    for (int k = 0; k < N; ++k)
      if (strides[k + 1] == 0) in[k] = self.load[k](ptrs[k + 1], 0, filled, buffers[k]);
    for (int64_t j = 0, m; j < n; j += m) {
      m = j == 0 && lead ? lead : kBlock;
      if (m > n - j) m = n - j;
      // The next block's input lines, asked for while this one is worked: the hardware prefetchers
      // alone keep too few lines in flight, most of all under a slow functor (sin of 16M fp32 from
      // memory: 10.3 -> 5.5 ms; add 7.0 -> 6.7 ms). Inputs only: prefetching the output's lines as
      // well slowed bf16, and so did an input updated in place (axpy_'s y; 16M fp32: 4.3 -> 5.2 ms).
      // Dense rows only (element strides up to 8 bytes); a broadcast (stride 0) stays in L1.
      if (self.prefetch && j + m + kBlock <= n)
        for (int k = 1; k <= N; ++k)
          if (ptrs[k] != ptrs[0] && strides[k] > 0 && strides[k] <= 8)
            prefetch_bytes(ptrs[k] + (j + m) * strides[k], kBlock * strides[k]);
      std::byte* const dst = ptrs[0] + j * out_size;
      // The fused path takes the block's first lanes-multiple (into the stage when streamed), the
      // buffered one the rest.
      int64_t done = 0;
      if (fused) {
        std::byte* from[N];
        for (int k = 0; k < N; ++k) from[k] = strides[k + 1] != 0 ? ptrs[k + 1] + j * strides[k + 1] : nullptr;
        done = fused(stream ? stage : dst, from, in, m);
      }
      if (done < m) {
        const int64_t at = j + done, count = m - done;
        for (int k = 0; k < N; ++k)
          if (strides[k + 1] != 0) in[k] = self.load[k](ptrs[k + 1] + at * strides[k + 1], strides[k + 1], count, buffers[k]);
        Tout* out = direct ? reinterpret_cast<Tout*>(dst + done * out_size) : out_buffer;
        self.compute(out, in, count);
        if (stream && !self.out_native) self.store(out_buffer, stage + done * out_size, out_size, count);
        else if (!stream && !direct) self.store(out, dst + done * out_size, out_size, count);
      }
      if (stream) {
        const bool staged = !self.out_native;  // fused lanes are always staged (their output is not Tout)
        stream_copy_tuned(dst, staged ? stage : reinterpret_cast<const std::byte*>(out_buffer), m * out_size);
      }
    }
  }

  // The fused function for a row with these strides, nullptr when the row does not qualify.
  FusedFn fused_for(const int64_t* strides) const {
    if (!fused[0] || strides[0] != 2) return nullptr;
    unsigned mask = 0;
    for (int k = 0; k < N; ++k) {
      if (strides[k + 1] == 0) mask |= 1u << k;
      else if (strides[k + 1] != 2 || !(half_inputs >> k & 1u)) return nullptr;
    }
    return fused[mask];
  }

  // Rows too short to be worth a call each (a strided view's rows of a few elements): loaded one
  // after another into the block buffers, worked as one block, stored back row by row. An operand
  // whose rows lie back to back (a contiguous one beside a strided one) is loaded or stored as one run.
  static void batch(void* ctx, std::byte* const* ptrs, const int64_t* strides, int64_t n, int64_t rows) {
    const auto& self = *static_cast<const Engine*>(ctx);
    if (self.in_place(strides)) return self.rows_in_place_fn(ptrs, n, rows);
    alignas(64) Tin buffers[N][kBlock];
    alignas(64) Tout out_buffer[kBlock];
    const auto back_to_back = [&](int k) {
      const int64_t row_bytes = n * strides[k];
      for (int64_t r = 1; r < rows; ++r)
        if (ptrs[r * kMaxOperands + k] != ptrs[k] + r * row_bytes) return false;
      return true;
    };
    const Tin* in[N];
    for (int k = 0; k < N; ++k) {
      if (back_to_back(k + 1)) {
        in[k] = self.load[k](ptrs[k + 1], strides[k + 1], n * rows, buffers[k]);
        continue;
      }
      in[k] = buffers[k];
      if (strides[k + 1] == 0) {  // a column broadcast along the short rows: each row's value, repeated
        alignas(64) Tin value[kBlock];
        const Tin* values = value;
        if (self.in_native[k])
          for (int64_t r = 0; r < rows; ++r) std::memcpy(value + r, ptrs[r * kMaxOperands + k + 1], sizeof(Tin));
        else
          values = converted_column(self.load[k], self.in_size[k], ColumnAt{.rows = ptrs + k + 1}, rows, value);
        repeat_each(buffers[k], values, rows, n);
        continue;
      }
      // Rows of Tin are copied with inline moves: a library call per row cost more than its bytes.
      const bool copied = self.in_native[k] && strides[k + 1] == static_cast<int64_t>(sizeof(Tin));
      for (int64_t r = 0; r < rows; ++r) {
        Tin* at = buffers[k] + r * n;
        const std::byte* row = ptrs[r * kMaxOperands + k + 1];
        const Tin* got = copied ? reinterpret_cast<const Tin*>(row) : self.load[k](row, strides[k + 1], n, at);
        if (got != at) copy_short(at, got, n * sizeof(Tin));
      }
    }
    self.compute(out_buffer, in, n * rows);
    const bool out_rows = self.out_native && strides[0] == static_cast<int64_t>(sizeof(Tout));
    if (back_to_back(0)) {
      if (out_rows && self.streams && self.stream)
        stream_copy_tuned(ptrs[0], reinterpret_cast<const std::byte*>(out_buffer), n * rows * strides[0]);
      else
        self.store(out_buffer, ptrs[0], strides[0], n * rows);
    } else if (out_rows) {
      for (int64_t r = 0; r < rows; ++r) copy_short(ptrs[r * kMaxOperands], out_buffer + r * n, n * sizeof(Tout));
    } else {
      for (int64_t r = 0; r < rows; ++r) self.store(out_buffer + r * n, ptrs[r * kMaxOperands], strides[0], n);
    }
  }

  // Every operand stored as its compute type with rows of contiguous elements, and the output not
  // streamed: batch() works the rows where they are. Copying rows of 64 fp32 into the block buffers
  // and back cost more than the adds (atomic_add of [8192, 64] fp32 into wider rows, in the caches:
  // 100-150 -> 60-90 us).
  bool in_place(const int64_t* strides) const {
    if (stream || !out_native || strides[0] != static_cast<int64_t>(sizeof(Tout))) return false;
    for (int k = 0; k < N; ++k)
      if (!in_native[k] || strides[k + 1] != static_cast<int64_t>(sizeof(Tin))) return false;
    return true;
  }

  // A row is worked where it lies in one call, with no per-block calls, buffers or fills, where its
  // operands are stored as their compute types and each input is dense along the row or broadcast
  // along it (a column, a scalar: held as one value in a register). Not where something is converted,
  // streamed or asked for ahead, nor for a block form (it takes at most kBlock elements and costs more
  // than the calls). Per row of 1024 fp32 in the caches the blocks' calls and fills cost ~15 ns
  // (add of [1024, 1024] on one thread: same shape 175 -> 160 us, by a row 131 -> 121, by a column
  // 144 -> 118).
  // The mask of the inputs held as values (bit k: input k), or -1 where the row is not worked so (every
  // input a value too: a rare constant row, left to the blocks).
  int values_in_place(const int64_t* strides) const {
    if (block_form_fn || prefetch || stream || !out_native || strides[0] != static_cast<int64_t>(sizeof(Tout))) return -1;
    unsigned mask = 0;
    for (int k = 0; k < N; ++k) {
      if (!in_native[k]) return -1;
      if (strides[k + 1] == 0) mask |= 1u << k;
      else if (strides[k + 1] != static_cast<int64_t>(sizeof(Tin))) return -1;
    }
    return mask == (1u << N) - 1 ? -1 : static_cast<int>(mask);
  }

  // Rows of n elements one after another along an outer dim: operand k of row r at
  // ptrs[k] + r * steps[k]. In one call where values_in_place allows, else a row() each.
  static void run(void* ctx, std::byte* const* ptrs, const int64_t* strides, const int64_t* steps, int64_t n,
                  int64_t rows) {
    const auto& self = *static_cast<const Engine*>(ctx);
    // Rows of a few elements: a span each costs more than the batches' buffers (add of [8192, 3]
    // fp32 by a column, in the caches: 22-27 -> 7 us).
    const int mask = n > kFewElements ? self.values_in_place(strides) : -1;
    if (mask >= 0) return self.runs_in_place[mask](ptrs, steps, n, rows);
    if (n <= kBatchedRow) return stepped_batches(self, ptrs, strides, steps, n, rows);
    std::byte* at[kMaxOperands];
    for (int64_t r = 0; r < rows; ++r) {
      for (int k = 0; k <= N; ++k) at[k] = ptrs[k] + r * steps[k];
      row(ctx, at, strides, n);
    }
  }

  // As batch(), for short rows a fixed step apart: kBlock / n rows at a time through the buffers. An
  // operand whose rows lie back to back (a column too: step and stride 0 for a scalar) is one run.
  static void stepped_batches(const Engine& self, std::byte* const* ptrs, const int64_t* strides, const int64_t* steps,
                              int64_t n, int64_t rows) {
    alignas(64) Tin buffers[N][kBlock];
    alignas(64) Tout out_buffer[kBlock];
    const int64_t per = kBlock / n;
    const auto back_to_back = [&](int k) { return steps[k] == n * strides[k]; };
    const bool out_rows = self.out_native && strides[0] == static_cast<int64_t>(sizeof(Tout));
    // A row broadcast down the rows (step 0): the same buffer for every batch, filled once.
    for (int k = 0; k < N; ++k) {
      if (steps[k + 1] != 0 || strides[k + 1] == 0) continue;
      const Tin* row = self.load[k](ptrs[k + 1], strides[k + 1], n, buffers[k]);
      if (row != buffers[k]) copy_short(buffers[k], row, n * sizeof(Tin));
      for (int64_t r = 1; r < std::min(per, rows); ++r) copy_short(buffers[k] + r * n, buffers[k], n * sizeof(Tin));
    }
    for (int64_t r0 = 0; r0 < rows; r0 += per) {
      const int64_t m = std::min(per, rows - r0);
      const Tin* in[N];
      for (int k = 0; k < N; ++k) {
        const std::byte* first = ptrs[k + 1] + r0 * steps[k + 1];
        if (steps[k + 1] == 0 && strides[k + 1] != 0) {
          in[k] = buffers[k];
          continue;
        }
        if (back_to_back(k + 1)) {
          in[k] = self.load[k](first, strides[k + 1], n * m, buffers[k]);
          continue;
        }
        in[k] = buffers[k];
        if (strides[k + 1] == 0) {  // a column: each row's value, repeated
          alignas(64) Tin value[kBlock];
          const Tin* values = value;
          if (self.in_native[k]) {
            for (int64_t r = 0; r < m; ++r) std::memcpy(value + r, first + r * steps[k + 1], sizeof(Tin));
          } else {
            const ColumnAt at{.first = first, .step = steps[k + 1]};
            values = converted_column(self.load[k], self.in_size[k], at, m, value);
          }
          repeat_each(buffers[k], values, m, n);
          continue;
        }
        const bool copied = self.in_native[k] && strides[k + 1] == static_cast<int64_t>(sizeof(Tin));  // inline moves
        for (int64_t r = 0; r < m; ++r) {
          Tin* at = buffers[k] + r * n;
          const std::byte* row = first + r * steps[k + 1];
          const Tin* got = copied ? reinterpret_cast<const Tin*>(row) : self.load[k](row, strides[k + 1], n, at);
          if (got != at) copy_short(at, got, n * sizeof(Tin));
        }
      }
      std::byte* dst = ptrs[0] + r0 * steps[0];
      Tout* out = out_rows && !self.stream && back_to_back(0) ? reinterpret_cast<Tout*>(dst) : out_buffer;
      self.compute(out, in, n * m);
      if (out != out_buffer) continue;
      if (back_to_back(0)) {
        if (out_rows && self.streams && self.stream)
          stream_copy_tuned(dst, reinterpret_cast<const std::byte*>(out_buffer), n * m * strides[0]);
        else
          self.store(out_buffer, dst, strides[0], n * m);
      } else {
        for (int64_t r = 0; r < m; ++r) self.store(out_buffer + r * n, dst + r * steps[0], strides[0], n);
      }
    }
  }
};

// A row of a functor over buffers of compute types: out[i] = F::apply(in0[i], ...), blocked, on
// the Engine of its types.
template <class F, class Tout, class Tin, int N>
struct Rows : Engine<Tout, Tin, N> {
  using Engine<Tout, Tin, N>::fused;
  using Engine<Tout, Tin, N>::half_inputs;
  using typename Engine<Tout, Tin, N>::FusedFn;
  using Engine<Tout, Tin, N>::kFusedLanes;

  Rows() {
    this->rows_in_place_fn = &Rows::rows_in_place;
    if constexpr (kBlockForm)
      this->block_form_fn = &Rows::block;
    else
      this->runs_in_place = runs_in_place_by_mask(std::make_integer_sequence<unsigned, (1u << N) - 1>{});
    this->streams = kStreams;
  }
  template <unsigned... M>
  static constexpr auto runs_in_place_by_mask(std::integer_sequence<unsigned, M...>) {
    return std::array<typename Engine<Tout, Tin, N>::RunInPlaceFn, sizeof...(M)>{&run_in_place<M>...};
  }

  template <unsigned Values>  // the inputs held as one value each
  PTO_SIMD_CLONES static void run_in_place(std::byte* const* ptrs, const int64_t* steps, int64_t n, int64_t rows) {
    for (int64_t r = 0; r < rows; ++r) {
      const Tin* in[N];
      Tin value[N] = {};
      for (int k = 0; k < N; ++k) {
        in[k] = reinterpret_cast<const Tin*>(ptrs[k + 1] + r * steps[k + 1]);
        if (Values >> k & 1u) value[k] = *in[k];
      }
      span<Values>(reinterpret_cast<Tout*>(ptrs[0] + r * steps[0]), in, value, n);
    }
  }

  static constexpr bool kBlockForm = has_block_form<F, Tout, Tin>(std::make_index_sequence<N>{});
  // Streaming pays where memory bounds the op. A functor that costs more than its traffic (a vector
  // math library call, or one whose compute_bound<Tin> is true) gains nothing from it, and its bursts of
  // streaming stores and prefetches wait for line-fill buffers (measured on 16M fp32 from memory:
  // sqrt 4.6 -> 3.1 ms, mul 6.5 -> 5.0, but sin 5.6 -> 6.8, pow 19.6 -> 21.6).
  static constexpr bool kStreams = !kBlockForm && !requires { requires F::template compute_bound<Tin>; };

  // A unary functor may give its own step over the 16 fp32 lanes of a fused row,
  // F::apply_lanes(float* out, const float* in) (floor's rounding instruction).
  static constexpr bool kLanesForm = N == 1 && requires(float* out, const float* in) { F::apply_lanes(out, in); };
  // Functors over fp32 fuse where they have an element or a lanes form (a block form alone does
  // not) and do not cost more than their conversions (compute_bound: atan2, pow; their many selects
  // also kept some lanes scalar); integer and predicate results do not.
  static constexpr bool kFuses = PTO_X86 && std::is_same_v<Tin, float> && std::is_same_v<Tout, float> &&
                                 (!kBlockForm || kLanesForm) &&
                                 !requires { requires F::template compute_bound<Tin>; };

  // Sets fused[] for an fp16 or bf16 output and inputs of dtypes `in` where kernel_tuning() allows
  // AVX-512, or AVX2 (with F16C for fp16; 16 lanes in two registers); leaves it empty otherwise.
  void fuse(DType out, const std::array<DType, N>& in) {
#if PTO_X86
    if constexpr (kFuses) {
      const Isa isa = kernel_tuning().isa;
      const bool avx2 = isa == Isa::Avx2 && (out == DType::BF16 || __builtin_cpu_supports("f16c"));
      if ((out != DType::FP16 && out != DType::BF16) || (isa != Isa::Avx512 && !avx2)) return;
      for (int k = 0; k < N; ++k)
        if (in[k] == out) half_inputs |= 1u << k;
      const auto set = [&]<class L, unsigned... M>(L, std::integer_sequence<unsigned, M...>) {
        if (avx2) ((fused[M] = &fused_avx2<L, M>), ...);
        else ((fused[M] = &fused_avx512<L, M>), ...);
      };
      constexpr auto masks = std::make_integer_sequence<unsigned, (1u << N)>{};
      if (avx2 && out == DType::FP16) set(half::lanes::F16cPair{}, masks);
      else if (avx2) set(half::lanes::Bf16Avx2{}, masks);
      else if (out == DType::FP16) set(half::lanes::Avx512{}, masks);
      else set(half::lanes::Bf16Avx512{}, masks);
    }
#else
    (void)out, (void)in;
#endif
  }

#if PTO_X86
  // The first lanes-multiple of m elements of a fused row (see fused): inputs in Mask are
  // broadcast buffers, the others rows of L::Storage, as is out. The arrays stay in registers.
  template <class L, unsigned Mask>
  [[gnu::always_inline]] static int64_t fused_lanes(std::byte* out, std::byte* const* in, const Tin* const* broadcast,
                                                    int64_t m) {
    using S = typename L::Storage;
    constexpr int W = L::kLanes;
    if constexpr (requires { F::kSignFlip; }) {
      if constexpr (Mask == 0) {  // a sign op on a row of codes: no conversions
        int64_t i = 0;
        for (; i + W <= m; i += W)
          half::lanes::sign_codes(F::kSignFlip, reinterpret_cast<const S*>(in[0]) + i, reinterpret_cast<S*>(out) + i);
        return i;
      }
    }
    float value[N];  // the broadcast inputs' one value each (their buffers hold it repeated)
    for (int k = 0; k < N; ++k) value[k] = Mask >> k & 1u ? broadcast[k][0] : 0.0f;
    int64_t i = 0;
    for (; i + W <= m; i += W) {
      alignas(64) float v[N][W];
      alignas(64) float o[W];
      for (int k = 0; k < N; ++k)
        if (!(Mask >> k & 1u)) L::widen(reinterpret_cast<const S*>(in[k]) + i, v[k]);
        else if constexpr (kLanesForm) std::fill_n(v[k], W, value[k]);
      const auto arg = [&](int k, int l) { return Mask >> k & 1u ? value[k] : v[k][l]; };
      if constexpr (kLanesForm) {
        if constexpr (L::kZmm) F::apply_lanes_zmm(o, v[0]);
        else F::apply_lanes(o, v[0]);
      }
      else {
        // Kept a loop for the vectoriser: unrolled first, a functor with selects (clip's NaN rule)
        // became W scalar steps (clip of [4096, 4096] fp16: 51 ms against 3).
#pragma GCC unroll 0
        for (int l = 0; l < W; ++l) {
          if constexpr (N == 1) o[l] = F::apply(arg(0, l));
          else if constexpr (N == 2) o[l] = F::apply(arg(0, l), arg(1, l));
          else o[l] = F::apply(arg(0, l), arg(1, l), arg(2, l));
        }
      }
      L::narrow(o, reinterpret_cast<S*>(out) + i);
    }
    return i;
  }
  template <class L, unsigned Mask>
  PTO_TARGET_AVX512 static int64_t fused_avx512(std::byte* out, std::byte* const* in, const Tin* const* broadcast, int64_t m) {
    static_assert(L::kLanes == kFusedLanes);
    return fused_lanes<L, Mask>(out, in, broadcast, m);
  }
  template <class L, unsigned Mask>
  PTO_TARGET_F16C static int64_t fused_avx2(std::byte* out, std::byte* const* in, const Tin* const* broadcast, int64_t m) {
    static_assert(L::kLanes == kFusedLanes);
    return fused_lanes<L, Mask>(out, in, broadcast, m);
  }
#endif

  // F over one block of buffers (a compiled program's fused loops call it too): for an element
  // form, rows_in_place's one row, so that one vector loop per ISA serves both.
  static void block(Tout* out, const Tin* const* in, int64_t m) {
    if constexpr (kBlockForm) apply_block(out, in, m, std::make_index_sequence<N>{});
    else Rows::as_one_row(&rows_in_place, out, in, m);
  }

  template <size_t... K>
  static void apply_block(Tout* out, const Tin* const* in, int64_t m, std::index_sequence<K...>) {
    F::apply_block(out, in[K]..., m);
  }

  // Rows of n elements in place, operand k of row r at ptrs[r * kMaxOperands + k] (the output k = 0).
  PTO_SIMD_CLONES static void rows_in_place(std::byte* const* ptrs, int64_t n, int64_t rows) {
    for (int64_t r = 0; r < rows; ++r, ptrs += kMaxOperands) {
      const Tin* in[N];
      for (int k = 0; k < N; ++k) in[k] = reinterpret_cast<const Tin*>(ptrs[k + 1]);
      Tout* out = reinterpret_cast<Tout*>(ptrs[0]);
      if constexpr (kBlockForm) {
        apply_block(out, in, n, std::make_index_sequence<N>{});
      } else {
        const Tin none[N] = {};
        span<0>(out, in, none, n);
      }
    }
  }

  // F over m elements, input k read from in[k] or, where bit k of Values is set, the one value[k].
  template <unsigned Values>
  [[gnu::always_inline]] static void span(Tout* __restrict out, const Tin* const* in, const Tin* value, int64_t m) {
    if constexpr (N == 1) {
      const Tin* __restrict a = in[0];
      for (int64_t i = 0; i < m; ++i) out[i] = F::apply(a[i]);
    } else if constexpr (N == 2) {
      const Tin* __restrict a = in[0];
      const Tin* __restrict b = in[1];
      const Tin va = value[0], vb = value[1];
      for (int64_t i = 0; i < m; ++i) out[i] = F::apply(operand<Values, 0>(a, va, i), operand<Values, 1>(b, vb, i));
    } else {
      const Tin* __restrict a = in[0];
      const Tin* __restrict b = in[1];
      const Tin* __restrict c = in[2];
      const Tin va = value[0], vb = value[1], vc = value[2];
      for (int64_t i = 0; i < m; ++i)
        out[i] = F::apply(operand<Values, 0>(a, va, i), operand<Values, 1>(b, vb, i), operand<Values, 2>(c, vc, i));
    }
  }
  template <unsigned Values, int K>
  [[gnu::always_inline]] static Tin operand(const Tin* __restrict p, Tin v, int64_t i) {
    if constexpr (Values >> K & 1u) return v;
    else return p[i];
  }
};

}  // namespace pto::kernels::ew
