#include "ptocpu/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "ptocpu/error.h"

namespace pto {
namespace {

// Every per-dtype fact in one table; the Python package reads it through _core.dtype_table().
struct DTypeInfo {
  const char* name;
  size_t size;
  // Other spellings accepted by dtype_from_name (numpy / torch / short forms); the first is the
  // numpy / ml_dtypes name.
  std::initializer_list<std::string_view> aliases;
  bool ml_dtypes;  // numpy has no such type: ml_dtypes provides it
};

const DTypeInfo& info(DType dt) {
  static const DTypeInfo table[kNumDTypes] = {
      {"DT_INT8", 1, {"int8", "i8"}, false},
      {"DT_INT16", 2, {"int16", "i16", "short"}, false},
      {"DT_INT32", 4, {"int32", "i32", "int"}, false},
      {"DT_INT64", 8, {"int64", "i64", "long"}, false},
      {"DT_UINT8", 1, {"uint8", "u8"}, false},
      {"DT_UINT16", 2, {"uint16", "u16"}, false},
      {"DT_UINT32", 4, {"uint32", "u32"}, false},
      {"DT_UINT64", 8, {"uint64", "u64"}, false},
      {"DT_BOOL", 1, {"bool", "bool_"}, false},
      {"DT_FP16", 2, {"float16", "fp16", "half", "f16"}, false},
      {"DT_BF16", 2, {"bfloat16", "bf16"}, true},
      {"DT_FP32", 4, {"float32", "fp32", "float", "f32"}, false},
      {"DT_FP64", 8, {"float64", "fp64", "double", "f64"}, false},
      {"DT_FP8E4M3", 1, {"float8_e4m3fn", "fp8e4m3", "fp8_e4m3", "e4m3", "float8_e4m3"}, true},
      {"DT_FP8E5M2", 1, {"float8_e5m2", "fp8e5m2", "fp8_e5m2", "e5m2"}, true},
      {"DT_FP8E8M0", 1, {"float8_e8m0fnu", "fp8e8m0", "fp8_e8m0", "e8m0", "float8_e8m0"}, true},
  };
  return table[static_cast<int>(dt)];
}

uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }
float bits_float(uint32_t b) { return std::bit_cast<float>(b); }

// Round-to-nearest-even right shift of a non-negative integer.
uint32_t shift_right_rne(uint32_t v, int shift) {
  if (shift <= 0) return v << -shift;
  if (shift >= 32) return 0;
  uint32_t kept = v >> shift;
  uint32_t rest = v & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  return kept;
}

// float32 -> a sign/exponent/mantissa format with E exponent bits and M mantissa bits.
// overflow_code is what a finite value too large becomes (inf for IEEE-like formats,
// NaN for E4M3FN); max_finite is the largest finite magnitude code.
template <int E, int M>
uint32_t encode_minifloat(float f, uint32_t nan_code, uint32_t overflow_code, uint32_t max_finite) {
  const uint32_t bits = float_bits(f);
  const uint32_t sign = (bits >> 31) << (E + M);
  const uint32_t abs = bits & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return sign | nan_code;
  if (abs == 0x7F800000u) return sign | overflow_code;
  constexpr int bias = (1 << (E - 1)) - 1;
  const int exp = static_cast<int>(abs >> 23) - 127;  // unbiased, -127 for float32 subnormals
  uint32_t code;
  if (exp >= 1 - bias) {
    // Normal in the target: rebias, then round away the extra mantissa bits (carry into the exponent is right).
    const uint32_t rebiased = abs - (static_cast<uint32_t>(127 - bias) << 23);
    code = shift_right_rne(rebiased, 23 - M);
  } else {
    // Subnormal in the target: value = mant * 2^(e-23), quantum 2^(1-bias-M).
    uint32_t mant = abs & 0x7FFFFFu;
    int e = exp;
    if (e == -127) e = -126; else mant |= 0x800000u;
    code = shift_right_rne(mant, (1 - bias - M) - (e - 23));
  }
  if (code > max_finite) code = overflow_code;
  return sign | code;
}

template <int E, int M>
float decode_minifloat(uint32_t code, bool fn_nan /* E4M3FN: only S.1111.111 is NaN */) {
  constexpr int bias = (1 << (E - 1)) - 1;
  const bool neg = (code >> (E + M)) & 1;
  const uint32_t ex = (code >> M) & ((1u << E) - 1);
  const uint32_t man = code & ((1u << M) - 1);
  float v;
  if (fn_nan) {
    if (ex == (1u << E) - 1 && man == (1u << M) - 1) {
      v = std::numeric_limits<float>::quiet_NaN();
      return neg ? -v : v;
    }
  } else if (ex == (1u << E) - 1) {
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    return neg ? -v : v;
  }
  if (ex == 0)
    v = std::ldexp(static_cast<float>(man), 1 - bias - M);
  else
    v = bits_float(((ex - bias + 127) << 23) | (man << (23 - M)));
  return neg ? -v : v;
}

}  // namespace

size_t dtype_size(DType dt) { return info(dt).size; }
const char* dtype_name(DType dt) { return info(dt).name; }
const char* dtype_numpy_name(DType dt) { return info(dt).aliases.begin()->data(); }
bool dtype_from_ml_dtypes(DType dt) { return info(dt).ml_dtypes; }

DType dtype_from_name(std::string_view name) {
  std::string accepted;
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dt = static_cast<DType>(i);
    const DTypeInfo& di = info(dt);
    std::string_view canonical = di.name;
    if (name == canonical || name == canonical.substr(3)) return dt;
    for (std::string_view a : di.aliases)
      if (name == a) return dt;
    accepted += (i ? ", " : "") + std::string(canonical);
  }
  fail<ArgumentError>("dtype: unknown dtype name '", name, "'; expected one of ", accepted,
                      " or a numpy / torch dtype name such as float16, bfloat16, float8_e4m3fn");
}

bool is_floating(DType dt) {
  return DTypeSet{DType::FP16, DType::BF16, DType::FP32, DType::FP64, DType::FP8E4M3,
                  DType::FP8E5M2, DType::FP8E8M0}
      .contains(dt);
}
bool is_signed_integer(DType dt) {
  return DTypeSet{DType::INT8, DType::INT16, DType::INT32, DType::INT64}.contains(dt);
}
bool is_integer(DType dt) {
  return is_signed_integer(dt) ||
         DTypeSet{DType::UINT8, DType::UINT16, DType::UINT32, DType::UINT64}.contains(dt);
}

std::string DTypeSet::to_string() const {
  std::string s;
  for (int i = 0; i < kNumDTypes; ++i)
    if (contains(static_cast<DType>(i))) s += (s.empty() ? "" : ", ") + std::string(dtype_name(static_cast<DType>(i)));
  return s;
}

uint16_t float_to_fp16_bits(float f) { return encode_minifloat<5, 10>(f, 0x7E00, 0x7C00, 0x7BFF); }
uint8_t float_to_fp8e4m3_bits(float f) { return encode_minifloat<4, 3>(f, 0x7F, 0x7F, 0x7E); }
uint8_t float_to_fp8e5m2_bits(float f) { return encode_minifloat<5, 2>(f, 0x7E, 0x7C, 0x7B); }

uint16_t float_to_bf16_bits(float f) {
  const uint32_t bits = float_bits(f);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16);
}

uint8_t float_to_fp8e8m0_bits(float f) {
  // Unsigned powers of two 2^(c-127), c in [0, 254]; 0xFF is NaN (docs/dtypes.md#conversions).
  // Round to the nearest power of two by value; a tie (1.5 * 2^k, halfway between 2^k and
  // 2^(k+1)) goes up. Positive values below 2^-127 give 2^-127 (nothing lies below it); a value
  // that rounds to 2^128 (from 1.5 * 2^127 up) gives NaN, and so do zero, negatives, inf and NaN.
  const uint32_t bits = float_bits(f);
  if (bits == 0 || bits >= 0x7F800000u) return 0xFF;  // +0; the sign bit (-0 too), inf, NaN
  // float32 subnormals are bits * 2^-149: 2^-127 is 0x400000, 2^-126 is 0x800000, the tie 0x600000.
  if (bits < 0x00800000u) return bits >= 0x00600000u ? 1 : 0;
  // Normal: the mantissa field from 0x400000 (a significand of at least 1.5) carries into the exponent.
  const uint32_t code = (bits + 0x00400000u) >> 23;
  return code > 0xFE ? 0xFF : static_cast<uint8_t>(code);
}

float fp16_bits_to_float(uint16_t b) { return decode_minifloat<5, 10>(b, false); }
float fp8e4m3_bits_to_float(uint8_t b) { return decode_minifloat<4, 3>(b, true); }
float fp8e5m2_bits_to_float(uint8_t b) { return decode_minifloat<5, 2>(b, false); }
float bf16_bits_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }
float fp8e8m0_bits_to_float(uint8_t b) {
  if (b == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  if (b == 0) return bits_float(0x00400000u);  // 2^-127, a float32 subnormal
  return bits_float(static_cast<uint32_t>(b) << 23);
}

float double_to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d && (float_bits(f) & 1) == 0)
    f = std::nextafter(f, static_cast<float>(d > static_cast<double>(f) ? INFINITY : -INFINITY));
  return f;
}

}  // namespace pto
