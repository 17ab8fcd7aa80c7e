#include "kernels/simd.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

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

Isa best_isa(const char* cap) {
  Isa best = Isa::Baseline;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) best = Isa::Avx2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    best = Isa::Avx512;
#endif
  if (!cap) return best;
  const Isa want = std::strcmp(cap, "avx512") == 0 ? Isa::Avx512
                   : std::strcmp(cap, "avx2") == 0 ? Isa::Avx2
                                                   : Isa::Baseline;
  return std::min(want, best);
}

int64_t stream_threshold_bytes() {
  static const int64_t bytes = [] {
    if (const char* env = std::getenv("PTOCPU_STREAM_BYTES")) return static_cast<int64_t>(std::atoll(env));
    // sysfs first: sysconf may report a whole socket's L3 (384 MiB on this project's VMs).
    int64_t llc = 0;
    if (std::FILE* f = std::fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r")) {
      long long v = 0;
      char unit = 0;
      if (std::fscanf(f, "%lld%c", &v, &unit) >= 1) llc = v * (unit == 'K' ? 1024 : unit == 'M' ? 1 << 20 : 1);
      std::fclose(f);
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    if (llc <= 0) llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (llc <= 0) llc = int64_t(32) << 20;
    return std::clamp<int64_t>(llc / 2, int64_t(4) << 20, int64_t(128) << 20);
  }();
  return bytes;
}

}  // namespace pto::kernels
