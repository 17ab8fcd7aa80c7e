#include "ptocpu/dtype.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#include "core/minifloat.h"
#include "ptocpu/error.h"

namespace pto {
namespace {

// Every per-dtype fact in one table; the Python package reads it through _core.dtype_table().
struct DTypeInfo {
  const char* name;
  size_t size;
  // The numpy dtype the tensor's memory is seen as (Tensor.numpy()); ml_dtypes provides it when
  // ml_dtypes is true. Formats neither has are seen as their codes, uint8.
  const char* numpy;
  bool ml_dtypes;
  // Spellings dtype_from_name accepts besides the DT_* name (numpy / ml_dtypes / torch / short forms).
  std::initializer_list<std::string_view> aliases;
};

const DTypeInfo& info(DType dt) {
  static const DTypeInfo table[kNumDTypes] = {
      {"DT_INT8", 1, "int8", false, {"int8", "i8"}},
      {"DT_INT16", 2, "int16", false, {"int16", "i16", "short"}},
      {"DT_INT32", 4, "int32", false, {"int32", "i32", "int"}},
      {"DT_INT64", 8, "int64", false, {"int64", "i64", "long"}},
      {"DT_UINT8", 1, "uint8", false, {"uint8", "u8"}},
      {"DT_UINT16", 2, "uint16", false, {"uint16", "u16"}},
      {"DT_UINT32", 4, "uint32", false, {"uint32", "u32"}},
      {"DT_UINT64", 8, "uint64", false, {"uint64", "u64"}},
      {"DT_BOOL", 1, "bool", false, {"bool", "bool_"}},
      {"DT_FP16", 2, "float16", false, {"float16", "fp16", "half", "f16"}},
      {"DT_BF16", 2, "bfloat16", true, {"bfloat16", "bf16"}},
      {"DT_FP32", 4, "float32", false, {"float32", "fp32", "float", "f32"}},
      {"DT_FP64", 8, "float64", false, {"float64", "fp64", "double", "f64", "DT_DOUBLE"}},
      {"DT_FP8E4M3", 1, "float8_e4m3fn", true, {"float8_e4m3fn", "fp8e4m3", "fp8_e4m3", "e4m3", "float8_e4m3", "DT_FP8", "fp8"}},
      {"DT_FP8E5M2", 1, "float8_e5m2", true, {"float8_e5m2", "fp8e5m2", "fp8_e5m2", "e5m2"}},
      {"DT_FP8E8M0", 1, "float8_e8m0fnu", true, {"float8_e8m0fnu", "fp8e8m0", "fp8_e8m0", "e8m0", "float8_e8m0"}},
      {"DT_INT4", 1, "int4", true, {"int4", "s4"}},
      {"DT_HF8", 1, "uint8", false, {"hifloat8", "hf8", "hif8"}},
      {"DT_HF4", 1, "uint8", false, {"hifloat4", "hf4", "hif4"}},
      {"DT_FP4_E2M1", 1, "float4_e2m1fn", true, {"float4_e2m1fn", "fp4_e2m1", "fp4e2m1", "e2m1"}},
      {"DT_FP4_E1M2", 1, "uint8", false, {"fp4_e1m2", "fp4e1m2", "e1m2"}},
      {"DT_FP4_E2M1X2", 1, "uint8", false, {"float4_e2m1fn_x2", "fp4_e2m1x2", "e2m1x2"}},
      {"DT_FP4_E1M2X2", 1, "uint8", false, {"fp4_e1m2x2", "e1m2x2"}},
  };
  return table[static_cast<int>(dt)];
}

uint32_t float_bits(float f) { return std::bit_cast<uint32_t>(f); }
float bits_float(uint32_t b) { return std::bit_cast<float>(b); }

// A code of the sign / exponent / mantissa format F as float32, exactly.
float decode(const minifloat::Format& F, uint32_t code) {
  const bool neg = (code >> (F.E + F.M)) & 1;
  const uint32_t ex = (code >> F.M) & ((1u << F.E) - 1), man = code & ((1u << F.M) - 1);
  const uint32_t top = (1u << F.E) - 1;
  float v;
  if (F.specials == minifloat::Specials::Ieee && ex == top)
    v = man ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else if (F.specials == minifloat::Specials::Fn && ex == top && man == (1u << F.M) - 1)
    v = std::numeric_limits<float>::quiet_NaN();
  else if (ex == 0)
    v = std::ldexp(static_cast<float>(man), 1 - F.bias - F.M);
  else
    v = std::ldexp(static_cast<float>((1u << F.M) | man), static_cast<int>(ex) - F.bias - F.M);
  return neg ? -v : v;
}

// HiFloat8 (core/minifloat.h): the dot field is read as a prefix code from the top.
float decode_hf8(uint32_t code) {
  const bool neg = code & 0x80;
  const uint32_t c = code & 0x7F;
  float v;
  if (c == 0) {
    v = neg ? std::numeric_limits<float>::quiet_NaN() : 0.0f;  // 0x80 is NaN: there is no -0
    return v;
  }
  if (c == minifloat::kHf8Inf) {
    v = std::numeric_limits<float>::infinity();
  } else if (c < 0x08) {  // dot 0000: 2^(m - 23)
    v = std::ldexp(1.0f, static_cast<int>(c) - 23);
  } else {
    // dot 0001 / 001 / 01 / 10 / 11: exponent width 0 / 1 / 2 / 3 / 4, mantissa 3 / 3 / 3 / 2 / 1 bits.
    const int width = c >= 0x60 ? 4 : c >= 0x40 ? 3 : c >= 0x20 ? 2 : c >= 0x10 ? 1 : 0;
    const int mbits = width == 4 ? 1 : width == 3 ? 2 : 3;
    const uint32_t man = c & ((1u << mbits) - 1);
    int exponent = 0;
    if (width > 0) {
      const uint32_t field = (c >> mbits) & ((1u << width) - 1);  // sign bit, then the magnitude's lower bits
      const int magnitude = (1 << (width - 1)) | static_cast<int>(field & ((1u << (width - 1)) - 1));
      exponent = (field >> (width - 1)) ? -magnitude : magnitude;
    }
    v = std::ldexp(static_cast<float>((1u << mbits) | man), exponent - mbits);
  }
  return neg ? -v : v;
}

// The float32 values of a one-byte dtype's 256 codes (an X2 pair's: its low value).
using ByteTable = std::array<float, 256>;
ByteTable make_byte_table(DType dt) {
  ByteTable t{};
  for (uint32_t c = 0; c < 256; ++c) {
    switch (dt) {
      case DType::FP8E4M3: t[c] = decode(minifloat::kFp8E4M3, c); break;
      case DType::FP8E5M2: t[c] = decode(minifloat::kFp8E5M2, c); break;
      case DType::FP8E8M0: t[c] = c == 0xFF ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, static_cast<int>(c) - 127); break;
      case DType::HF8: t[c] = decode_hf8(c); break;
      case DType::INT4: t[c] = static_cast<float>(static_cast<int>(c & 0xF) - static_cast<int>((c & 0x8) << 1)); break;
      case DType::FP4_E2M1: case DType::FP4_E2M1X2: t[c] = decode(minifloat::kFp4E2M1, c & 0xF); break;
      default: t[c] = decode(minifloat::kFp4E1M2, c & 0xF); break;  // FP4_E1M2, HF4, FP4_E1M2X2
    }
  }
  return t;
}

const ByteTable& byte_table(DType dt) {
  static const auto tables = [] {
    std::array<ByteTable, kNumDTypes> all{};
    for (DType dt : {DType::FP8E4M3, DType::FP8E5M2, DType::FP8E8M0, DType::INT4, DType::HF8, DType::HF4,
                     DType::FP4_E2M1, DType::FP4_E1M2, DType::FP4_E2M1X2, DType::FP4_E1M2X2})
      all[static_cast<int>(dt)] = make_byte_table(dt);
    return all;
  }();
  return tables[static_cast<int>(dt)];
}

template <Round R, bool Sat>
uint32_t encode_as(DType dt, uint32_t bits) {
  using namespace minifloat;
  switch (dt) {
    case DType::FP16: return encode<kFp16, R, Sat>(bits);
    case DType::BF16: return encode<kBf16, R, Sat>(bits);
    case DType::FP8E4M3: return encode<kFp8E4M3, R, Sat>(bits);
    case DType::FP8E5M2: return encode<kFp8E5M2, R, Sat>(bits);
    case DType::HF8: return encode_hf8<Sat>(bits);
    case DType::FP4_E2M1: return encode<kFp4E2M1, R, Sat>(bits);
    default: return encode<kFp4E1M2, R, Sat>(bits);  // FP4_E1M2, HF4
  }
}

template <bool Sat>
uint32_t encode_rounded(DType dt, uint32_t bits, Round round) {
  switch (round) {
    case Round::NearestEven: return encode_as<Round::NearestEven, Sat>(dt, bits);
    case Round::NearestAway: return encode_as<Round::NearestAway, Sat>(dt, bits);
    case Round::Down: return encode_as<Round::Down, Sat>(dt, bits);
    case Round::Up: return encode_as<Round::Up, Sat>(dt, bits);
    case Round::TowardZero: return encode_as<Round::TowardZero, Sat>(dt, bits);
    case Round::ToOdd: return encode_as<Round::ToOdd, Sat>(dt, bits);
  }
  __builtin_unreachable();
}

}  // namespace

size_t dtype_size(DType dt) { return info(dt).size; }
const char* dtype_name(DType dt) { return info(dt).name; }
const char* dtype_numpy_name(DType dt) { return info(dt).numpy; }
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
  return DTypeSet{DType::FP16, DType::BF16, DType::FP32, DType::FP64, DType::FP8E4M3, DType::FP8E5M2, DType::FP8E8M0,
                  DType::HF8, DType::HF4, DType::FP4_E2M1, DType::FP4_E1M2}
      .contains(dt);
}
bool is_signed_integer(DType dt) {
  return DTypeSet{DType::INT8, DType::INT16, DType::INT32, DType::INT64, DType::INT4}.contains(dt);
}
bool is_packed_pair(DType dt) { return dt == DType::FP4_E2M1X2 || dt == DType::FP4_E1M2X2; }
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

uint32_t float_to_code(DType dt, float f, Round round, bool saturate) {
  if (dt == DType::FP8E8M0) return float_to_fp8e8m0_bits(f);
  const uint32_t bits = float_bits(f);
  return saturate ? encode_rounded<true>(dt, bits, round) : encode_rounded<false>(dt, bits, round);
}

const float* byte_code_values(DType dt) { return byte_table(dt).data(); }

float code_to_float(DType dt, uint32_t code) {
  if (dt == DType::FP16) return decode(minifloat::kFp16, code);
  if (dt == DType::BF16) return bits_float(code << 16);
  return byte_table(dt)[code & 0xFF];
}

uint16_t float_to_fp16_bits(float f) { return minifloat::encode<minifloat::kFp16, Round::NearestEven, false>(float_bits(f)); }
uint16_t float_to_bf16_bits(float f) { return minifloat::encode<minifloat::kBf16, Round::NearestEven, false>(float_bits(f)); }
uint8_t float_to_fp8e4m3_bits(float f) { return minifloat::encode<minifloat::kFp8E4M3, Round::NearestEven, false>(float_bits(f)); }
uint8_t float_to_fp8e5m2_bits(float f) { return minifloat::encode<minifloat::kFp8E5M2, Round::NearestEven, false>(float_bits(f)); }

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

float fp16_bits_to_float(uint16_t b) { return code_to_float(DType::FP16, b); }
float fp8e4m3_bits_to_float(uint8_t b) { return code_to_float(DType::FP8E4M3, b); }
float fp8e5m2_bits_to_float(uint8_t b) { return code_to_float(DType::FP8E5M2, b); }
float bf16_bits_to_float(uint16_t b) { return code_to_float(DType::BF16, b); }
float fp8e8m0_bits_to_float(uint8_t b) { return code_to_float(DType::FP8E8M0, b); }

double int_to_double_round_odd(__int128 v) {
  double d = static_cast<double>(v);
  const __int128 back = static_cast<__int128>(d);
  if (back != v && (std::bit_cast<uint64_t>(d) & 1) == 0) d = std::nextafter(d, back < v ? INFINITY : -INFINITY);
  return d;
}

float double_to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d && (float_bits(f) & 1) == 0)
    f = std::nextafter(f, static_cast<float>(d > static_cast<double>(f) ? INFINITY : -INFINITY));
  return f;
}

}  // namespace pto
