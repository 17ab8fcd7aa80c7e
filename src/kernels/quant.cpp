// quant_mx (kernels/quant.h, docs/ops/quant_mx.md): per group of 32 values, the shared E8M0
// exponent from the group's largest magnitude, then each value times 2^(127 - exponent) encoded
// as fp8 E4M3 (nearest even, saturating at +-448).
#include "kernels/quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "core/half.h"
#include "kernels/elementwise.h"
#include "kernels/row_walk.h"
#include "ptocpu/parallel.h"

namespace pto::kernels::quant {
namespace {

constexpr int kGroup = 32;
constexpr int kE4m3MaxExponent = 8;  // 448 = 1.75 * 2^8
constexpr double kE4m3Max = 448.0;
constexpr uint8_t kScaleNan = 0xFF;

// The group's E8M0 exponent from its largest magnitude (NaN when the group holds a NaN).
// ROUND_DOWN (OCP): the biased exponent of maxabs minus E4M3's largest exponent, in [0, 254].
// ROUND_UP (NV): the least k with maxabs <= 448 * 2^k, biased, in [0, 254]; an infinity gives 254.
uint8_t shared_exponent(float maxabs, DequantScaleRoundingMode mode) {
  if (maxabs != maxabs) return kScaleNan;
  if (mode == DequantScaleRoundingMode::ROUND_DOWN) {
    const int biased = static_cast<int>((std::bit_cast<uint32_t>(maxabs) >> 23) & 0xFF);
    return static_cast<uint8_t>(std::clamp(biased - kE4m3MaxExponent, 0, 254));
  }
  if (std::isinf(maxabs)) return 254;
  if (maxabs == 0.0f) return 0;
  const double m = maxabs;
  int k = std::ilogb(m) - kE4m3MaxExponent;
  if (m > std::ldexp(kE4m3Max, k)) ++k;
  return static_cast<uint8_t>(std::clamp(k + 127, 0, 254));
}

uint8_t sign_bit(float v) { return static_cast<uint8_t>((std::bit_cast<uint32_t>(v) >> 24) & 0x80u); }

uint8_t e4m3_saturating(float v) {
  if (std::fabs(v) >= 448.0f) return sign_bit(v) | 0x7E;
  return float_to_fp8e4m3_bits(v);
}

// Encodes one group: x[i * stride] for i < 32 into codes[i * code_stride]; returns its exponent.
struct GroupEncoder {
  DequantScaleRoundingMode mode;
  bool round_to_bf16;  // NV scales of bf16 input: the scaled value is rounded to bf16 first

  uint8_t operator()(const float* x, int64_t stride, uint8_t* codes, int64_t code_stride) const {
    float maxabs = 0.0f;
    for (int i = 0; i < kGroup; ++i) {
      const float a = std::fabs(x[i * stride]);
      maxabs = (a != a || a > maxabs) ? a : maxabs;
    }
    const uint8_t e = shared_exponent(maxabs, mode);
    if (e == kScaleNan) {  // NaN scale: every code is NaN, a NaN value keeps its sign
      for (int i = 0; i < kGroup; ++i) {
        const float v = x[i * stride];
        codes[i * code_stride] = v != v ? sign_bit(v) | 0x7F : 0x7F;
      }
      return e;
    }
    const float scaling = std::ldexp(1.0f, 127 - e);
    for (int i = 0; i < kGroup; ++i) {
      float v = x[i * stride] * scaling;
      if (round_to_bf16) v = half::widen(half::to_bf16(v));
      codes[i * code_stride] = e4m3_saturating(v);
    }
    return e;
  }
};

}  // namespace

void quant_mx(const Tensor& in, bool along_rows, DequantScaleRoundingMode mode, const Tensor& quantized,
              const Tensor& scale) {
  if (in.numel() == 0) return;
  const GroupEncoder encode{mode, mode == DequantScaleRoundingMode::ROUND_UP && in.dtype() == DType::BF16};
  const ew::LoadFn<float> load = ew::loader<float>(in.dtype());
  const int r = in.ndim();
  const auto* base = static_cast<const std::byte*>(in.data());
  const int64_t item = static_cast<int64_t>(in.itemsize());
  uint8_t* codes = quantized.data_as<uint8_t>();
  uint8_t* scales = scale.data_as<uint8_t>();
  const int64_t n = in.shape(r - 1);
  if (!along_rows) {
    // Rows of the last axis: row w's groups are its scales w * n/32 ...
    const RowWalk walk(in.shape(), r - 1);
    const int64_t step = in.stride(r - 1) * item, groups = n / kGroup;
    parallel_for(walk.count(), rows_per_chunk(n), [&](int64_t begin, int64_t end) {
      std::vector<float> buffer(static_cast<size_t>(n));
      for (int64_t w = begin; w < end; ++w) {
        const float* x = load(base + walk.offset(w, in.strides()) * item, step, n, buffer.data());
        for (int64_t g = 0; g < groups; ++g)
          scales[w * groups + g] = encode(x + g * kGroup, 1, codes + w * n + g * kGroup, 1);
      }
    });
    return;
  }
  // Blocks of 32 rows of the last two axes: each column's group; scale [..., m/64, n, 2].
  const int64_t m = in.shape(r - 2), blocks = m / kGroup;
  const Shape prefix(in.shape().begin(), in.shape().end() - 2);
  const RowWalk walk(in.shape(), r - 1);  // every row of the last axis, row-major
  const int64_t step = in.stride(r - 1) * item;
  parallel_for(shape_numel(prefix) * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> buffer(static_cast<size_t>(kGroup * n));
    for (int64_t b = begin; b < end; ++b) {
      const int64_t first_row = b * kGroup;  // rows of all prefixes, row-major
      for (int i = 0; i < kGroup; ++i) {
        float* row = buffer.data() + i * n;
        const float* x = load(base + walk.offset(first_row + i, in.strides()) * item, step, n, row);
        if (x != row) std::copy(x, x + n, row);
      }
      const int64_t p = b / blocks, block = b % blocks;
      uint8_t* scale_block = scales + ((p * (m / 64) + block / 2) * n) * 2 + block % 2;
      for (int64_t c = 0; c < n; ++c)
        scale_block[c * 2] = encode(buffer.data() + c, n, codes + first_row * n + c, n);
    }
  });
}

}  // namespace pto::kernels::quant
