// Runtime CPU dispatch: a function marked PTO_SIMD_CLONES is compiled for each target
// below and the best one for the running CPU is picked at load time (GCC target_clones).
// The default build thus runs on any x86-64.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(PTOCPU_NO_CLONES)
#define PTO_SIMD_CLONES __attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
#define PTO_SIMD_TARGETS "x86-64 (SSE2), avx2, x86-64-v4 (AVX-512)"
#else
#define PTO_SIMD_CLONES
#define PTO_SIMD_TARGETS "baseline"
#endif

#include <cstdint>

namespace pto::kernels {
// The target the dispatcher picks on this CPU (for `ptocpu info`).
const char* simd_target_dispatched();
const char* simd_targets_compiled();

// Instruction sets of the hand-written (intrinsics) kernels, chosen at run time.
enum class Isa { Baseline, Avx2, Avx512 };
// The best of them this CPU runs, capped by `cap` ("baseline" / "sse2", "avx2", "avx512";
// nullptr: no cap). Tests cap it to reach the lower paths.
Isa best_isa(const char* cap = nullptr);

// Dense outputs of at least this many bytes are written with streaming (non-temporal) stores:
// half the last-level cache this CPU sees, clamped to [4, 128] MiB, or PTOCPU_STREAM_BYTES.
int64_t stream_threshold_bytes();
}  // namespace pto::kernels
