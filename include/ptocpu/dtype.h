// The element types of docs/dtypes.md, their traits, bit-exact float conversions and the
// dtype visitors every op dispatches through (written once, here).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace pto {

enum class DType : uint8_t {
  INT8, INT16, INT32, INT64,
  UINT8, UINT16, UINT32, UINT64,
  BOOL,
  FP16, BF16, FP32, FP64,
  FP8E4M3, FP8E5M2, FP8E8M0,
  // The narrow storage formats (docs/dtypes.md#narrow-storage-formats): cast converts them and
  // data movement moves them; no arithmetic op takes them. One byte each in memory: a 4-bit
  // value in the low nibble (INT4, HF4, FP4_E2M1, FP4_E1M2), an 8-bit code (HF8), or two 4-bit
  // codes (the X2 pairs: element 2i of the values in the low nibble, 2i + 1 in the high one).
  INT4, HF8, HF4, FP4_E2M1, FP4_E1M2, FP4_E2M1X2, FP4_E1M2X2,
};
inline constexpr int kNumDTypes = 23;
inline constexpr int kNumComputeDTypes = 16;  // INT8 .. FP8E8M0

size_t dtype_size(DType dt);
// Canonical name as in docs/dtypes.md: "DT_FP32", ...
const char* dtype_name(DType dt);
// The numpy spelling ("float16", "bfloat16", "float8_e4m3fn", ...); for the dtypes numpy lacks
// (bf16 and the fp8 types) dtype_from_ml_dtypes is true and the name is ml_dtypes'.
const char* dtype_numpy_name(DType dt);
bool dtype_from_ml_dtypes(DType dt);
// Accepts DT_* names and numpy / torch / common spellings ("float16", "bf16", "float8_e4m3fn", ...).
// Throws ArgumentError listing the accepted names.
DType dtype_from_name(std::string_view name);
bool is_floating(DType dt);  // one floating value per element (the X2 pairs are not)
bool is_integer(DType dt);  // signed or unsigned integer (INT4 too), not BOOL
bool is_signed_integer(DType dt);
// Two 4-bit values per element (FP4_E2M1X2, FP4_E1M2X2).
bool is_packed_pair(DType dt);

// A set of dtypes as a bit mask: the platform tables are written with it.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dts) {
    for (DType d : dts) bits_ |= bit(d);
  }
  // Every dtype ops compute with: all but the narrow storage formats (INT4 .. FP4_E1M2X2).
  static constexpr DTypeSet all() {
    DTypeSet s;
    s.bits_ = (1u << kNumComputeDTypes) - 1;
    return s;
  }
  static constexpr DTypeSet storage_formats() {
    DTypeSet s;
    s.bits_ = ((1u << kNumDTypes) - 1) & ~all().bits_;
    return s;
  }
  constexpr DTypeSet with(DTypeSet other) const {
    DTypeSet s;
    s.bits_ = bits_ | other.bits_;
    return s;
  }
  constexpr bool contains(DType d) const { return (bits_ & bit(d)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet without(DTypeSet other) const {
    DTypeSet s;
    s.bits_ = bits_ & ~other.bits_;
    return s;
  }
  std::string to_string() const;  // "DT_INT8, DT_FP16, ..."

 private:
  static constexpr uint32_t bit(DType d) { return 1u << static_cast<unsigned>(d); }
  uint32_t bits_ = 0;
};

// Storage types of the non-native floats: raw bits, no arithmetic.
struct fp16_t { uint16_t bits; };
struct bf16_t { uint16_t bits; };
struct fp8e4m3_t { uint8_t bits; };
struct fp8e5m2_t { uint8_t bits; };
struct fp8e8m0_t { uint8_t bits; };
struct int4_t { uint8_t bits; };       // two's complement in the low nibble
struct hif8_t { uint8_t bits; };
struct hif4_t { uint8_t bits; };       // low nibble
struct fp4e2m1_t { uint8_t bits; };    // low nibble
struct fp4e1m2_t { uint8_t bits; };    // low nibble
struct fp4e2m1x2_t { uint8_t bits; };  // two codes
struct fp4e1m2x2_t { uint8_t bits; };

// The one-byte formats whose values are read through a 256-entry table (fp8, the 4-bit values,
// HF8, INT4): what element loaders widen to float and storers encode.
template <class S>
inline constexpr bool kByteCoded = std::is_same_v<S, fp8e4m3_t> || std::is_same_v<S, fp8e5m2_t> ||
                                   std::is_same_v<S, fp8e8m0_t> || std::is_same_v<S, int4_t> ||
                                   std::is_same_v<S, hif8_t> || std::is_same_v<S, hif4_t> ||
                                   std::is_same_v<S, fp4e2m1_t> || std::is_same_v<S, fp4e1m2_t>;
template <class S>
inline constexpr bool kPackedPair = std::is_same_v<S, fp4e2m1x2_t> || std::is_same_v<S, fp4e1m2x2_t>;

// float32 <-> small floats (docs/dtypes.md#conversions): round to nearest by value, ties to even
// (E8M0: ties up); decoding is exact. Tested against the formats' definitions, every float32.
uint16_t float_to_fp16_bits(float f);
uint16_t float_to_bf16_bits(float f);
uint8_t float_to_fp8e4m3_bits(float f);
uint8_t float_to_fp8e5m2_bits(float f);
uint8_t float_to_fp8e8m0_bits(float f);
float fp16_bits_to_float(uint16_t b);
float bf16_bits_to_float(uint16_t b);
float fp8e4m3_bits_to_float(uint8_t b);
float fp8e5m2_bits_to_float(uint8_t b);
float fp8e8m0_bits_to_float(uint8_t b);
// float64 -> float32 rounding to odd: a following float32 -> small-float RNE step then
// equals a direct float64 -> small-float RNE (no double rounding).
float double_to_float_round_odd(double d);
// An integer -> double rounding to odd (exact below 2^53): float32 and narrower roundings after it
// round the integer once.
double int_to_double_round_odd(__int128 v);

// How a conversion rounds a value between two of the target's (cast's CastMode, docs/ops/cast.md):
// to the nearest with ties to even / away from zero, down, up, toward zero, or to odd.
enum class Round : uint8_t { NearestEven, NearestAway, Down, Up, TowardZero, ToOdd };
// float32 -> the code of a narrow float (FP16, BF16, FP8E4M3, FP8E5M2, HF8, HF4, FP4_E2M1,
// FP4_E1M2) with `round` (HF8 always rounds to nearest, ties away: its only rounding). A
// magnitude beyond the largest finite value gives the largest finite value when `saturate`, when
// the format has no inf / NaN (HF4, FP4), or when `round` goes toward zero there; else inf (NaN
// for E4M3FN). docs/dtypes.md#conversions has the special values.
uint32_t float_to_code(DType dt, float f, Round round, bool saturate);
// A code of fp16, bf16, the 8- and 4-bit formats or INT4 (an X2 pair: its low value) as
// float32, exactly.
float code_to_float(DType dt, uint32_t code);
// The float32 values of a one-byte dtype's 256 codes (FP8E4M3 .. FP8E8M0, INT4 .. FP4_E1M2X2; a
// 4-bit dtype's code is its low nibble, an X2 pair's entry its low value).
const float* byte_code_values(DType dt);

// DType -> storage type, and back (dtype_of<float>() == DType::FP32).
template <DType D> struct dtype_storage;
template <class T> struct storage_dtype;
template <class T> constexpr DType dtype_of() { return storage_dtype<T>::value; }
#define PTO_DTYPE_STORAGE(D, T) \
  template <> struct dtype_storage<DType::D> { using type = T; }; \
  template <> struct storage_dtype<T> { static constexpr DType value = DType::D; };
PTO_DTYPE_STORAGE(INT8, int8_t)
PTO_DTYPE_STORAGE(INT16, int16_t)
PTO_DTYPE_STORAGE(INT32, int32_t)
PTO_DTYPE_STORAGE(INT64, int64_t)
PTO_DTYPE_STORAGE(UINT8, uint8_t)
PTO_DTYPE_STORAGE(UINT16, uint16_t)
PTO_DTYPE_STORAGE(UINT32, uint32_t)
PTO_DTYPE_STORAGE(UINT64, uint64_t)
PTO_DTYPE_STORAGE(BOOL, bool)
PTO_DTYPE_STORAGE(FP16, fp16_t)
PTO_DTYPE_STORAGE(BF16, bf16_t)
PTO_DTYPE_STORAGE(FP32, float)
PTO_DTYPE_STORAGE(FP64, double)
PTO_DTYPE_STORAGE(FP8E4M3, fp8e4m3_t)
PTO_DTYPE_STORAGE(FP8E5M2, fp8e5m2_t)
PTO_DTYPE_STORAGE(FP8E8M0, fp8e8m0_t)
PTO_DTYPE_STORAGE(INT4, int4_t)
PTO_DTYPE_STORAGE(HF8, hif8_t)
PTO_DTYPE_STORAGE(HF4, hif4_t)
PTO_DTYPE_STORAGE(FP4_E2M1, fp4e2m1_t)
PTO_DTYPE_STORAGE(FP4_E1M2, fp4e1m2_t)
PTO_DTYPE_STORAGE(FP4_E2M1X2, fp4e2m1x2_t)
PTO_DTYPE_STORAGE(FP4_E1M2X2, fp4e1m2x2_t)
#undef PTO_DTYPE_STORAGE

template <class T> struct type_tag { using type = T; };

// Calls f(type_tag<T>{}) with T the storage type of dt. The one dtype switch of the project.
template <class F>
decltype(auto) visit_dtype(DType dt, F&& f) {
  switch (dt) {
#define PTO_CASE(D) \
  case DType::D:    \
    return f(type_tag<typename dtype_storage<DType::D>::type>{});
    PTO_CASE(INT8) PTO_CASE(INT16) PTO_CASE(INT32) PTO_CASE(INT64)
    PTO_CASE(UINT8) PTO_CASE(UINT16) PTO_CASE(UINT32) PTO_CASE(UINT64)
    PTO_CASE(BOOL) PTO_CASE(FP16) PTO_CASE(BF16) PTO_CASE(FP32) PTO_CASE(FP64)
    PTO_CASE(FP8E4M3) PTO_CASE(FP8E5M2) PTO_CASE(FP8E8M0)
    PTO_CASE(INT4) PTO_CASE(HF8) PTO_CASE(HF4) PTO_CASE(FP4_E2M1) PTO_CASE(FP4_E1M2)
    PTO_CASE(FP4_E2M1X2) PTO_CASE(FP4_E1M2X2)
#undef PTO_CASE
  }
  __builtin_unreachable();
}

// Pure data movement is dispatched on element width only (fp16, bf16, int16 share a kernel).
template <class F>
decltype(auto) visit_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f(type_tag<uint8_t>{});
    case 2: return f(type_tag<uint16_t>{});
    case 4: return f(type_tag<uint32_t>{});
    default: return f(type_tag<uint64_t>{});
  }
}

// Index tensors are int32 or int64 (validated before dispatch).
template <class F>
decltype(auto) visit_index_dtype(DType dt, F&& f) {
  if (dt == DType::INT32) return f(type_tag<int32_t>{});
  return f(type_tag<int64_t>{});
}

}  // namespace pto
