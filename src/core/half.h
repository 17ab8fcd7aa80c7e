// fp16 / bf16 <-> fp32 in one place (docs/dtypes.md#conversions): inline, branch-free where it
// matters, so that loops over them vectorise (vcvtph2ps / vcvtps2ph under F16C, integer shifts
// for bf16). Round to nearest even; NaN stays a quiet NaN; fp16 overflow gives +-inf.
#pragma once
#include <bit>
#include <cstdint>

#include "ptocpu/dtype.h"

namespace pto::half {

inline float widen(fp16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h.bits)); }
inline float widen(bf16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b.bits) << 16); }

inline fp16_t to_fp16(float f) { return {std::bit_cast<uint16_t>(static_cast<_Float16>(f))}; }
inline bf16_t to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t rounded = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  const uint16_t quiet_nan = static_cast<uint16_t>((u >> 16) | 0x40u);
  return {(u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded};
}

}  // namespace pto::half

namespace pto::half {

// Blocks of n values, vectorised with the best instructions the CPU has (F16C, AVX-512) that
// kernel_tuning() allows; bit-identical to the element functions above.
void widen(const fp16_t* src, float* dst, int64_t n);
void narrow(const float* src, fp16_t* dst, int64_t n);

}  // namespace pto::half
