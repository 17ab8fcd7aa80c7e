// Runtime CPU dispatch and the kernels' tuning (docs/kernels.md). The default build runs on any
// x86-64; SIMD code is compiled for several targets with GCC's function multi-versioning:
// - PTO_SIMD_CLONES on a plain loop: the compiler vectorises a clone per target and the loader
//   picks the best one for the running CPU (target_clones);
// - PTO_TARGET_AVX2 / PTO_TARGET_AVX512 on hand-written intrinsics: the kernel picks the
//   variant with kernel_tuning().isa at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#define PTO_X86 1
#define PTO_TARGET_AVX2 __attribute__((target("avx2")))
#define PTO_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define PTO_TARGET_F16C __attribute__((target("avx2,f16c")))
#define PTO_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))  // FMA intrinsics (the build never contracts: -ffp-contract=off)
#else
#define PTO_X86 0
#define PTO_TARGET_AVX2
#define PTO_TARGET_AVX512
#define PTO_TARGET_F16C
#define PTO_TARGET_AVX2_FMA
#endif

#if PTO_X86 && !defined(__clang__) && !defined(PTOCPU_NO_CLONES)
#define PTO_SIMD_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#define PTO_SIMD_TARGETS "x86-64 (SSE2), x86-64-v3 (AVX2, FMA, F16C), x86-64-v4 (AVX-512)"
#else
#define PTO_SIMD_CLONES
#define PTO_SIMD_TARGETS "baseline"
#endif

namespace pto::kernels {

// fn(std::integral_constant<int, N>) for the N of Ns that equals n; false when none does. A loop
// whose sizes are compile-time constants is one the compiler can vectorise (short-row transposes).
template <int... Ns, class Fn>
inline bool with_constant(int64_t n, Fn&& fn) {
  return ((n == Ns && (fn(std::integral_constant<int, Ns>{}), true)) || ...);
}

// v, in a register where it is used. GCC folds a constant (or a value it spilled around a call)
// into the instruction that uses it, as a memory operand; in a masked instruction whose mask is
// empty (a NaN fixed up only where there is one) that read costs a microcode assist on every run
// once the kernel has cleared the accessed bit of its page (page aging, DAMON), until a plain read
// sets it again: exp ran 2-4x slower for as long (docs/kernels.md#masked-constants). The empty asm
// makes GCC load v with a plain move first; volatile keeps it at the use, not hoisted out of a loop.
template <class V>
[[gnu::always_inline]] inline V in_register(V v) {
  asm volatile("" : "+v"(v));
  return v;
}

// Instruction sets of the hand-written (intrinsics) kernels.
enum class Isa { Baseline, Avx2, Avx512 };

// The one set of tuning knobs every kernel reads.
struct KernelTuning {
  // Dense outputs of at least this many bytes are written with streaming (non-temporal) stores:
  // by default half the last-level cache this CPU sees, clamped to [4, 128] MiB.
  int64_t stream_bytes;
  // The best instruction set the hand-written kernels may use: by default the best this CPU runs.
  Isa isa;
  // Whether kernels ask in software for lines of data they read in order (the elementwise engine's
  // next block, a reduction's span ahead, scatter's rows ahead): by default on Intel CPUs, where
  // they paid, off on others, where they cost (docs/kernels.md#prefetching). Prefetches of data at
  // random places (index_select's rows, scatter's dim-0 targets) are always made.
  bool prefetch_streams;
};
const KernelTuning& kernel_tuning();

// Copies a run of up to a few hundred bytes with fixed-size moves instead of a library call, which
// costs more than the copy for a short row (8 fp32: 32 bytes): whole 32-byte moves and one last move
// overlapping the one before it; shorter runs the same way at 16, 8, 4 and 2 bytes. dst and src
// must not overlap.
[[gnu::always_inline]] inline void copy_short(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  const auto in_moves = [&](auto width) {
    constexpr size_t w = decltype(width)::value;
    for (size_t i = 0; i + w < bytes; i += w) std::memcpy(d + i, s + i, w);
    std::memcpy(d + bytes - w, s + bytes - w, w);
  };
  if (bytes >= 32) in_moves(std::integral_constant<size_t, 32>{});
  else if (bytes >= 16) in_moves(std::integral_constant<size_t, 16>{});
  else if (bytes >= 8) in_moves(std::integral_constant<size_t, 8>{});
  else if (bytes >= 4) in_moves(std::integral_constant<size_t, 4>{});
  else if (bytes >= 2) in_moves(std::integral_constant<size_t, 2>{});
  else if (bytes == 1) *d = *s;
}

// Asks for the cache lines at p, p + 64, ... below p + bytes (reads; the kernels' prefetch ahead).
inline void prefetch_bytes(const void* p, int64_t bytes) {
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(static_cast<const char*>(p) + off);
}

}  // namespace pto::kernels
