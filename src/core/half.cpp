// fp16 blocks with the CPU's conversion instructions (vcvtph2ps / vcvtps2ph, round to nearest
// even); the compiler does not vectorise _Float16 conversions itself.
#include "core/half.h"

#include <type_traits>

#include "copy/simd.h"
#include "core/half_lanes.h"

namespace pto::half {
namespace {

void scalar(const fp16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = widen(src[i]);
}
void scalar(const float* src, fp16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = to_fp16(src[i]);
}

#if PTO_X86
// Whole blocks with one build's instructions (inlined into the functions compiled for that
// build), the tail element by element.
template <class Build, class From, class To>
[[gnu::always_inline]] inline void blocks(const From* src, To* dst, int64_t n) {
  int64_t i = 0;
  for (; i + Build::kLanes <= n; i += Build::kLanes) {
    if constexpr (std::is_same_v<From, fp16_t>) Build::widen(src + i, dst + i);
    else Build::narrow(src + i, dst + i);
  }
  scalar(src + i, dst + i, n - i);
}
template <class From, class To>
PTO_TARGET_F16C void blocks_f16c(const From* src, To* dst, int64_t n) {
  blocks<lanes::F16c>(src, dst, n);
}
template <class From, class To>
PTO_TARGET_AVX512 void blocks_avx512(const From* src, To* dst, int64_t n) {
  blocks<lanes::Avx512>(src, dst, n);
}
#endif

// In the best build the CPU runs (kernel_tuning().isa; AVX2 machines need F16C too).
template <class From, class To>
void convert(const From* src, To* dst, int64_t n) {
#if PTO_X86
  switch (kernels::kernel_tuning().isa) {
    case kernels::Isa::Avx512: return blocks_avx512(src, dst, n);
    case kernels::Isa::Avx2: if (__builtin_cpu_supports("f16c")) return blocks_f16c(src, dst, n); break;
    default: break;
  }
#endif
  scalar(src, dst, n);
}

}  // namespace

void widen(const fp16_t* src, float* dst, int64_t n) { convert(src, dst, n); }

void narrow(const float* src, fp16_t* dst, int64_t n) { convert(src, dst, n); }

}  // namespace pto::half
