// quant_mx (kernels/quant.h, docs/ops/quant_mx.md): per group of 32 values, the shared E8M0
// exponent from the group's largest magnitude, then each value times 2^(127 - exponent) encoded
// as fp8 E4M3 (nearest even, saturating at +-448) or fp4 E2M1 (likewise at +-6, two codes per
// byte). The largest magnitude is an integer maximum of the values' bits without sign
// (order-preserving, and a NaN's bits exceed infinity's), and the encoding is branch-free bit
// arithmetic: both loops vectorise.
#include "kernels/quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "copy/simd.h"
#include "core/half.h"
#include "core/minifloat.h"
#include "kernels/elementwise.h"
#include "kernels/row_walk.h"
#include "ptocpu/parallel.h"

namespace pto::kernels::quant {
namespace {

constexpr int64_t kGroup = 32;
constexpr uint32_t kInfBits = 0x7F800000u;
constexpr uint8_t kScaleNan = 0xFF;

inline uint32_t magnitude_bits(float v) { return std::bit_cast<uint32_t>(v) & 0x7FFFFFFFu; }

// The element formats: their codes (cast's encoders), the largest value's exponent and the value
// (448 = 1.75 * 2^8, 6 = 1.5 * 2^2).
struct E4m3 {
  static constexpr const minifloat::Format& kCodes = minifloat::kFp8E4M3;
  static constexpr int kMaxExponent = 8;
  static constexpr double kMax = 448.0;
};
struct E2m1 {
  static constexpr const minifloat::Format& kCodes = minifloat::kFp4E2M1;
  static constexpr int kMaxExponent = 2;
  static constexpr double kMax = 6.0;
};

// The group's E8M0 exponent from the bits of its largest magnitude (a NaN's when it holds one).
// ROUND_DOWN (OCP): the biased exponent of amax minus the format's largest exponent, in [0, 254].
// ROUND_UP (NV): the least k with amax <= max * 2^k, biased, in [0, 254]; an infinity gives 254.
template <class F>
uint8_t shared_exponent(uint32_t amax_bits, DequantScaleRoundingMode mode) {
  if (amax_bits > kInfBits) return kScaleNan;
  if (mode == DequantScaleRoundingMode::ROUND_DOWN)
    return static_cast<uint8_t>(std::clamp(static_cast<int>(amax_bits >> 23) - F::kMaxExponent, 0, 254));
  if (amax_bits == kInfBits) return 254;
  if (amax_bits == 0) return 0;
  const double amax = std::bit_cast<float>(amax_bits);
  int k = std::ilogb(amax) - F::kMaxExponent;
  if (amax > std::ldexp(F::kMax, k)) ++k;
  return static_cast<uint8_t>(std::clamp(k + 127, 0, 254));
}

// 2^(127 - e): the factor that brings the group into E4M3's range (NaN for the NaN exponent).
float scaling_of(uint8_t e) {
  return e == kScaleNan ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, 127 - e);
}

// The scaled value, rounded to bf16 first where the device computes it in bf16 (quant.h).
inline float scaled(float x, float scaling, bool round_to_bf16) {
  const float v = x * scaling;
  return round_to_bf16 ? half::widen(half::to_bf16(v)) : v;
}

// The code of x scaled by s, a byte (E4M3) or a nibble (E2M1): nearest even, saturating (inf too)
// with the sign. NaN: E4M3 0x7F with the NaN's sign (a NaN x is encoded as itself: x * s may take
// s's NaN instead), E2M1 0x7 without a sign.
template <class F>
[[gnu::always_inline]] inline uint8_t code_of(float x, float s, bool round_to_bf16) {
  const float v = x != x ? x : scaled(x, s, round_to_bf16);
  return static_cast<uint8_t>(minifloat::encode<F::kCodes, Round::NearestEven, true>(std::bit_cast<uint32_t>(v)));
}
template <class F>
constexpr int64_t kPerByte = std::is_same_v<F, E2m1> ? 2 : 1;

// E2M1 codes of a row (count even) two per byte, the first in the low nibble. The codes are made in
// one loop and packed in another: each loop vectorises, the pairs' loop over floats did not.
[[gnu::always_inline]] inline void pack_pairs(const uint8_t* __restrict nibbles, int64_t count, uint8_t* __restrict out) {
  for (int64_t j = 0; j < count / 2; ++j) out[j] = static_cast<uint8_t>(nibbles[2 * j] | nibbles[2 * j + 1] << 4);
}

// Axis -1: the row's groups of 32 consecutive values.
template <class F>
[[gnu::always_inline]] inline void encode_row(const float* __restrict x, int64_t n, DequantScaleRoundingMode mode,
                                              bool round_to_bf16, uint8_t* __restrict codes,
                                              uint8_t* __restrict exponents) {
  for (int64_t g = 0; g < n; g += kGroup) {
    uint32_t amax = 0;
    for (int64_t i = g; i < g + kGroup; ++i) amax = std::max(amax, magnitude_bits(x[i]));
    const uint8_t e = shared_exponent<F>(amax, mode);
    const float scaling = scaling_of(e);
    exponents[g / kGroup] = e;
    if constexpr (std::is_same_v<F, E2m1>) {
      uint8_t nibbles[kGroup];
      for (int64_t i = 0; i < kGroup; ++i) nibbles[i] = code_of<F>(x[g + i], scaling, round_to_bf16);
      pack_pairs(nibbles, kGroup, codes + g / 2);
    } else {
      for (int64_t i = g; i < g + kGroup; ++i) codes[i] = code_of<F>(x[i], scaling, round_to_bf16);
    }
  }
}
PTO_SIMD_CLONES void encode_row_e4m3(const float* __restrict x, int64_t n, DequantScaleRoundingMode mode,
                                     bool round_to_bf16, uint8_t* __restrict codes, uint8_t* __restrict exponents) {
  encode_row<E4m3>(x, n, mode, round_to_bf16, codes, exponents);
}
PTO_SIMD_CLONES void encode_row_e2m1(const float* __restrict x, int64_t n, DequantScaleRoundingMode mode,
                                     bool round_to_bf16, uint8_t* __restrict codes, uint8_t* __restrict exponents) {
  encode_row<E2m1>(x, n, mode, round_to_bf16, codes, exponents);
}

// Axis -2: 32 rows of n values (rows[i * n + c]); column c is a group. E2M1: columns c and c + 1
// share a byte of the packed row; nibbles holds a row's n codes before they are packed.
template <class F>
[[gnu::always_inline]] inline void encode_column_groups(const float* __restrict rows, int64_t n,
                                                        DequantScaleRoundingMode mode, bool round_to_bf16,
                                                        uint32_t* __restrict amax, float* __restrict scaling,
                                                        uint8_t* __restrict nibbles, uint8_t* __restrict codes,
                                                        uint8_t* __restrict exponents) {
  std::fill(amax, amax + n, 0u);
  for (int64_t i = 0; i < kGroup; ++i)
    for (int64_t c = 0; c < n; ++c) amax[c] = std::max(amax[c], magnitude_bits(rows[i * n + c]));
  for (int64_t c = 0; c < n; ++c) {
    exponents[c * 2] = shared_exponent<F>(amax[c], mode);  // scale [..., m/64, n, 2]: pairs per column
    scaling[c] = scaling_of(exponents[c * 2]);
  }
  const int64_t row_bytes = n / kPerByte<F>;
  for (int64_t i = 0; i < kGroup; ++i) {
    uint8_t* row_codes = codes + i * row_bytes;
    uint8_t* row_out = std::is_same_v<F, E2m1> ? nibbles : row_codes;  // E2M1: packed after
    for (int64_t c = 0; c < n; ++c) row_out[c] = code_of<F>(rows[i * n + c], scaling[c], round_to_bf16);
    if constexpr (std::is_same_v<F, E2m1>) pack_pairs(nibbles, n, row_codes);
  }
}
PTO_SIMD_CLONES void encode_column_groups_e4m3(const float* __restrict rows, int64_t n, DequantScaleRoundingMode mode,
                                               bool round_to_bf16, uint32_t* __restrict amax, float* __restrict scaling,
                                               uint8_t* __restrict nibbles, uint8_t* __restrict codes,
                                               uint8_t* __restrict exponents) {
  encode_column_groups<E4m3>(rows, n, mode, round_to_bf16, amax, scaling, nibbles, codes, exponents);
}
PTO_SIMD_CLONES void encode_column_groups_e2m1(const float* __restrict rows, int64_t n, DequantScaleRoundingMode mode,
                                               bool round_to_bf16, uint32_t* __restrict amax, float* __restrict scaling,
                                               uint8_t* __restrict nibbles, uint8_t* __restrict codes,
                                               uint8_t* __restrict exponents) {
  encode_column_groups<E2m1>(rows, n, mode, round_to_bf16, amax, scaling, nibbles, codes, exponents);
}

}  // namespace

void quant_mx(const Tensor& in, bool along_rows, DequantScaleRoundingMode mode, const Tensor& quantized,
              const Tensor& scale) {
  if (in.numel() == 0) return;
  const bool fp4 = quantized.dtype() == DType::FP4_E2M1X2;
  // bf16 inputs: the device scales them in bf16 for fp4 and for NV scales of fp8.
  const bool round_to_bf16 = in.dtype() == DType::BF16 && (fp4 || mode == DequantScaleRoundingMode::ROUND_UP);
  const ew::LoadFn<float> load = ew::loader<float>(in.dtype());
  const int r = in.ndim();
  const auto* base = static_cast<const std::byte*>(in.data());
  const int64_t item = static_cast<int64_t>(in.itemsize());
  const int64_t n = in.shape(r - 1), step = in.stride(r - 1) * item;
  const RowWalk walk(in.shape(), r - 1);  // every row of the last axis, row-major
  const int64_t row_bytes = fp4 ? n / 2 : n;
  uint8_t* codes = quantized.data_as<uint8_t>();
  uint8_t* scales = scale.data_as<uint8_t>();
  if (!along_rows) {
    parallel_for(walk.count(), rows_per_chunk(n), [&](int64_t begin, int64_t end) {
      std::vector<float> buffer(static_cast<size_t>(n));
      for (int64_t w = begin; w < end; ++w) {
        const float* x = load(base + walk.offset(w, in.strides()) * item, step, n, buffer.data());
        (fp4 ? encode_row_e2m1 : encode_row_e4m3)(x, n, mode, round_to_bf16, codes + w * row_bytes,
                                                  scales + w * (n / kGroup));
      }
    });
    return;
  }
  // Blocks of 32 rows of the last two axes; block b's scales are entry b % 2 of pair b / 2 per column.
  const int64_t blocks = walk.count() / kGroup;
  parallel_for(blocks, std::max<int64_t>(1, 16384 / (kGroup * n + 1)), [&](int64_t begin, int64_t end) {
    std::vector<float> rows(static_cast<size_t>(kGroup * n)), scaling(static_cast<size_t>(n));
    std::vector<uint32_t> amax(static_cast<size_t>(n));
    std::vector<uint8_t> nibbles(fp4 ? static_cast<size_t>(n) : 0);
    for (int64_t b = begin; b < end; ++b) {
      for (int64_t i = 0; i < kGroup; ++i) {
        float* row = rows.data() + i * n;
        const float* x = load(base + walk.offset(b * kGroup + i, in.strides()) * item, step, n, row);
        if (x != row) std::copy(x, x + n, row);
      }
      (fp4 ? encode_column_groups_e2m1 : encode_column_groups_e4m3)(rows.data(), n, mode, round_to_bf16, amax.data(),
                                                                    scaling.data(), nibbles.data(),
                                                                    codes + b * kGroup * row_bytes,
                                                                    scales + (b / 2) * n * 2 + b % 2);
    }
  });
}

}  // namespace pto::kernels::quant
