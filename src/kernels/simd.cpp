#include "kernels/simd.h"

namespace pto::kernels {

const char* simd_targets_compiled() { return PTO_SIMD_TARGETS; }

const char* simd_target_dispatched() {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(PTOCPU_NO_CLONES)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4 (AVX-512)";
  if (__builtin_cpu_supports("avx2")) return "avx2";
  return "x86-64 (SSE2)";
#else
  return "baseline";
#endif
}

}  // namespace pto::kernels
