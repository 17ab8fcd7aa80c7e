// quant_mx (kernels/quant.h, docs/ops/quant_mx.md): per group of 32 values, the shared E8M0
// exponent from the group's largest magnitude, then each value times 2^(127 - exponent) encoded
// as fp8 E4M3 (nearest even, saturating at +-448). The largest magnitude is an integer maximum of
// the values' bits without sign (order-preserving, and a NaN's bits exceed infinity's), and the
// encoding is branch-free bit arithmetic: both loops vectorise.
#include "kernels/quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "copy/simd.h"
#include "core/half.h"
#include "kernels/elementwise.h"
#include "kernels/row_walk.h"
#include "ptocpu/parallel.h"

namespace pto::kernels::quant {
namespace {

constexpr int64_t kGroup = 32;
constexpr int kE4m3MaxExponent = 8;  // 448 = 1.75 * 2^8
constexpr double kE4m3Max = 448.0;
constexpr uint32_t kInfBits = 0x7F800000u;
constexpr uint8_t kScaleNan = 0xFF;

inline uint32_t magnitude_bits(float v) { return std::bit_cast<uint32_t>(v) & 0x7FFFFFFFu; }

// The group's E8M0 exponent from the bits of its largest magnitude (a NaN's when it holds one).
// ROUND_DOWN (OCP): the biased exponent of amax minus E4M3's largest exponent, in [0, 254].
// ROUND_UP (NV): the least k with amax <= 448 * 2^k, biased, in [0, 254]; an infinity gives 254.
uint8_t shared_exponent(uint32_t amax_bits, DequantScaleRoundingMode mode) {
  if (amax_bits > kInfBits) return kScaleNan;
  if (mode == DequantScaleRoundingMode::ROUND_DOWN)
    return static_cast<uint8_t>(std::clamp(static_cast<int>(amax_bits >> 23) - kE4m3MaxExponent, 0, 254));
  if (amax_bits == kInfBits) return 254;
  if (amax_bits == 0) return 0;
  const double amax = std::bit_cast<float>(amax_bits);
  int k = std::ilogb(amax) - kE4m3MaxExponent;
  if (amax > std::ldexp(kE4m3Max, k)) ++k;
  return static_cast<uint8_t>(std::clamp(k + 127, 0, 254));
}

// 2^(127 - e): the factor that brings the group into E4M3's range (NaN for the NaN exponent).
float scaling_of(uint8_t e) {
  return e == kScaleNan ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, 127 - e);
}

// E4M3 code of v = x * scaling: nearest even, +-448 and beyond (inf included) saturate to 0x7E;
// NaN gives 0x7F with x's sign when x itself is NaN (else +).
inline uint8_t e4m3_code(float v, float x) {
  const uint32_t u = std::bit_cast<uint32_t>(v), a = u & 0x7FFFFFFFu;
  // below 2^-6 (subnormal codes): adding 2^14 rounds to a multiple of 2^-9, E4M3's subnormal step
  const uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(a) + 0x1p14f) - 0x46800000u;
  // normal: rebias the exponent (7 - 127) and round the mantissa at bit 20 to nearest even
  const uint32_t normal = ((a + 0xC407FFFFu + ((a >> 20) & 1u)) >> 20) & 0x7Fu;
  uint32_t code = a < 0x3C800000u ? subnormal : normal;
  code = a >= 0x43E00000u ? 0x7Eu : code;
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t nan_sign = x != x ? (std::bit_cast<uint32_t>(x) >> 24) & 0x80u : 0u;
  return static_cast<uint8_t>(a > kInfBits ? 0x7Fu | nan_sign : code | sign);
}

// The scaled value, rounded to bf16 first for NV scales of a bf16 input.
inline float scaled(float x, float scaling, bool round_to_bf16) {
  const float v = x * scaling;
  return round_to_bf16 ? half::widen(half::to_bf16(v)) : v;
}

// Axis -1: the row's groups of 32 consecutive values.
PTO_SIMD_CLONES void encode_row(const float* __restrict x, int64_t n, DequantScaleRoundingMode mode, bool round_to_bf16,
                                uint8_t* __restrict codes, uint8_t* __restrict exponents) {
  for (int64_t g = 0; g < n; g += kGroup) {
    uint32_t amax = 0;
    for (int64_t i = g; i < g + kGroup; ++i) amax = std::max(amax, magnitude_bits(x[i]));
    const uint8_t e = shared_exponent(amax, mode);
    const float scaling = scaling_of(e);
    exponents[g / kGroup] = e;
    for (int64_t i = g; i < g + kGroup; ++i) codes[i] = e4m3_code(scaled(x[i], scaling, round_to_bf16), x[i]);
  }
}

// Axis -2: 32 rows of n values (rows[i * n + c]); column c is a group.
PTO_SIMD_CLONES void encode_column_groups(const float* __restrict rows, int64_t n, DequantScaleRoundingMode mode,
                                          bool round_to_bf16, uint32_t* __restrict amax, float* __restrict scaling,
                                          uint8_t* __restrict codes, uint8_t* __restrict exponents) {
  std::fill(amax, amax + n, 0u);
  for (int64_t i = 0; i < kGroup; ++i)
    for (int64_t c = 0; c < n; ++c) amax[c] = std::max(amax[c], magnitude_bits(rows[i * n + c]));
  for (int64_t c = 0; c < n; ++c) {
    exponents[c * 2] = shared_exponent(amax[c], mode);  // scale [..., m/64, n, 2]: pairs per column
    scaling[c] = scaling_of(exponents[c * 2]);
  }
  for (int64_t i = 0; i < kGroup; ++i)
    for (int64_t c = 0; c < n; ++c)
      codes[i * n + c] = e4m3_code(scaled(rows[i * n + c], scaling[c], round_to_bf16), rows[i * n + c]);
}

}  // namespace

void quant_mx(const Tensor& in, bool along_rows, DequantScaleRoundingMode mode, const Tensor& quantized,
              const Tensor& scale) {
  if (in.numel() == 0) return;
  const bool round_to_bf16 = mode == DequantScaleRoundingMode::ROUND_UP && in.dtype() == DType::BF16;
  const ew::LoadFn<float> load = ew::loader<float>(in.dtype());
  const int r = in.ndim();
  const auto* base = static_cast<const std::byte*>(in.data());
  const int64_t item = static_cast<int64_t>(in.itemsize());
  const int64_t n = in.shape(r - 1), step = in.stride(r - 1) * item;
  const RowWalk walk(in.shape(), r - 1);  // every row of the last axis, row-major
  uint8_t* codes = quantized.data_as<uint8_t>();
  uint8_t* scales = scale.data_as<uint8_t>();
  if (!along_rows) {
    parallel_for(walk.count(), rows_per_chunk(n), [&](int64_t begin, int64_t end) {
      std::vector<float> buffer(static_cast<size_t>(n));
      for (int64_t w = begin; w < end; ++w) {
        const float* x = load(base + walk.offset(w, in.strides()) * item, step, n, buffer.data());
        encode_row(x, n, mode, round_to_bf16, codes + w * n, scales + w * (n / kGroup));
      }
    });
    return;
  }
  // Blocks of 32 rows of the last two axes; block b's scales are entry b % 2 of pair b / 2 per column.
  const int64_t blocks = walk.count() / kGroup;
  parallel_for(blocks, std::max<int64_t>(1, 16384 / (kGroup * n + 1)), [&](int64_t begin, int64_t end) {
    std::vector<float> rows(static_cast<size_t>(kGroup * n)), scaling(static_cast<size_t>(n));
    std::vector<uint32_t> amax(static_cast<size_t>(n));
    for (int64_t b = begin; b < end; ++b) {
      for (int64_t i = 0; i < kGroup; ++i) {
        float* row = rows.data() + i * n;
        const float* x = load(base + walk.offset(b * kGroup + i, in.strides()) * item, step, n, row);
        if (x != row) std::copy(x, x + n, row);
      }
      encode_column_groups(rows.data(), n, mode, round_to_bf16, amax.data(), scaling.data(), codes + b * kGroup * n,
                           scales + (b / 2) * n * 2 + b % 2);
    }
  });
}

}  // namespace pto::kernels::quant
