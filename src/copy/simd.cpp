#include "copy/simd.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "ptocpu/build.h"

namespace pto {
namespace kernels {
namespace {

Isa best_isa_of_cpu() {
#if PTO_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2")) return Isa::Avx2;
#endif
  return Isa::Baseline;
}

// Half the last-level cache, at most 64 MiB: an output that large cannot stay cached beside its
// input anyway, and streaming saves the write-allocate read of every line (measured: 32 MiB
// outputs gain, 8 MiB ones lose on a 32 MiB L3; on a 2-core VM whose sysfs reports the socket's
// 480 MiB L3, a chain of casts over 64 MiB outputs ran faster streamed even when nothing was
// evicted between the ops, over 32 MiB ones slower: the share a VM keeps is far below the socket's).
int64_t default_stream_bytes() {
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
  return std::clamp<int64_t>(llc / 2, int64_t(4) << 20, int64_t(64) << 20);
}

// docs/kernels.md#prefetching: software prefetches of data read in order paid on an Ice Lake Xeon
// (16M fp32 sin from memory 10.3 -> 5.5 ms) and cost on an AMD Zen 4 (maximum 5.0 -> 6.0 ms, amax of
// [4096, 4096] by rows 0.93 -> 1.31).
bool default_prefetch_streams() {
#if PTO_X86
  __builtin_cpu_init();
  return __builtin_cpu_is("intel");
#else
  return false;
#endif
}

KernelTuning& mutable_tuning() {
  static KernelTuning tuning{default_stream_bytes(), best_isa_of_cpu(), default_prefetch_streams()};
  return tuning;
}

}  // namespace

const KernelTuning& kernel_tuning() { return mutable_tuning(); }

}  // namespace kernels

const char* simd_targets_compiled() { return PTO_SIMD_TARGETS; }

const char* simd_target_dispatched() {
#if PTO_X86 && !defined(__clang__) && !defined(PTOCPU_NO_CLONES)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4 (AVX-512)";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3 (AVX2, FMA, F16C)";
  return "x86-64 (SSE2)";
#else
  return "baseline";
#endif
}

void set_kernel_tuning(int64_t stream_bytes, const char* isa, int prefetch_streams) {
  using kernels::Isa;
  kernels::KernelTuning& t = kernels::mutable_tuning();
  t.stream_bytes = stream_bytes < 0 ? kernels::default_stream_bytes() : stream_bytes;
  const Isa best = kernels::best_isa_of_cpu();
  const Isa want = !isa                              ? best
                   : std::strcmp(isa, "avx512") == 0 ? Isa::Avx512
                   : std::strcmp(isa, "avx2") == 0   ? Isa::Avx2
                                                     : Isa::Baseline;
  t.isa = std::min(want, best);
  t.prefetch_streams = prefetch_streams < 0 ? kernels::default_prefetch_streams() : prefetch_streams != 0;
}

}  // namespace pto
