// The 16 element types of docs/dtypes.md, their traits, bit-exact float conversions and the
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
};
inline constexpr int kNumDTypes = 16;

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
bool is_floating(DType dt);
bool is_integer(DType dt);  // signed or unsigned integer, not BOOL
bool is_signed_integer(DType dt);

// A set of dtypes as a bit mask: the platform tables are written with it.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> dts) {
    for (DType d : dts) bits_ |= bit(d);
  }
  static constexpr DTypeSet all() {
    DTypeSet s;
    s.bits_ = (1u << kNumDTypes) - 1;
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
