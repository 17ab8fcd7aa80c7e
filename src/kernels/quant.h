// The quantisation kernels (docs/ops/quantize.md, dequantize.md, quant_mx.md). quantize and
// dequantize are functors of the elementwise engine (fp32 compute, the scale and zero point
// broadcast along the quantised axis); quant_mx is a kernel over 32-element groups. No checks, no
// exceptions: the ops checked everything.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ptocpu/modes.h"
#include "ptocpu/tensor.h"

namespace pto::kernels::quant {

// v rounded to nearest even and saturated to T's range; NaN gives 0. Clamping to the (integer)
// bounds first gives the same result and keeps the rounding inside fp32's exact range.
template <class T>
inline T round_saturate(float v) {
  constexpr float lo = static_cast<float>(std::numeric_limits<T>::min());
  constexpr float hi = static_cast<float>(std::numeric_limits<T>::max());
  const float clamped = v != v ? 0.0f : v < lo ? lo : v > hi ? hi : v;
  constexpr float kRound = 0x1.8p23f;  // adding and removing it rounds |x| < 2^22 to nearest even
  return static_cast<T>(static_cast<int32_t>((clamped + kRound) - kRound));
}

// quantize: x * scale (+ zero_point), each step rounded to fp32, then round_saturate to T (int8 /
// uint8) -- the device's fp32 -> int32 (RINT) -> fp16 -> int8 / uint8 (saturating) chain.
template <class T>
struct Quantize {
  template <class U> using out = T;
  template <class U> static constexpr bool takes = std::is_same_v<U, float>;
  static T apply(float x, float scale) { return round_saturate<T>(x * scale); }
  static T apply(float x, float scale, float zero_point) {
    const float scaled = x * scale;
    return round_saturate<T>(scaled + zero_point);
  }
};

// dequantize: (x - zero_point) * scale in fp32 (x exact in fp32), each step rounded.
struct Dequantize {
  template <class U> using out = float;
  template <class U> static constexpr bool takes = std::is_same_v<U, float>;
  static float apply(float x, float scale) { return x * scale; }
  static float apply(float x, float scale, float zero_point) {
    const float shifted = x - zero_point;
    return shifted * scale;
  }
};

// quant_mx to fp8 E4M3 or fp4 E2M1 (quantized's dtype DT_FP8E4M3 or DT_FP4_E2M1X2) with E8M0
// scales, one per 32 elements along the last axis (along_rows false) or the second-last (true). in:
// fp16 / bf16 / fp32 (fp4: fp16 / bf16), any strides. quantized: contiguous, in's shape (fp4: the
// last dim halved, pairs); scale: contiguous, [..., n / 64, 2] or [..., m / 64, n, 2].
void quant_mx(const Tensor& in, bool along_rows, DequantScaleRoundingMode mode, const Tensor& quantized,
              const Tensor& scale);

}  // namespace pto::kernels::quant
