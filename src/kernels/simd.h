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

namespace pto::kernels {
// The target the dispatcher picks on this CPU (for `ptocpu info`).
const char* simd_target_dispatched();
const char* simd_targets_compiled();
}  // namespace pto::kernels
