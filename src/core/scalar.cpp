#include "ptocpu/scalar.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "ptocpu/error.h"

namespace pto {
namespace {

std::string int128_to_string(__int128 v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

template <class T>
void store(void* out, T v) { std::memcpy(out, &v, sizeof(T)); }

// double -> a floating dtype with the format's own rounding (to nearest even; HF8 ties away).
void encode_float(double d, DType dt, void* out) {
  switch (dt) {
    case DType::FP64: return store(out, d);
    case DType::FP32: return store(out, static_cast<float>(d));
    case DType::FP16: case DType::BF16:
      return store(out, static_cast<uint16_t>(float_to_code(dt, double_to_float_round_odd(d), Round::NearestEven, false)));
    default:
      return store(out, static_cast<uint8_t>(float_to_code(dt, double_to_float_round_odd(d), Round::NearestEven, false)));
  }
}

// An integer -> a floating dtype, rounded once to nearest even.
void encode_int_as_float(__int128 v, DType dt, void* out) {
  if (dt == DType::FP64) return store(out, static_cast<double>(v));
  encode_float(int_to_double_round_odd(v), dt, out);
}

__int128 int_min(DType dt) {
  return visit_dtype(dt, [](auto tag) -> __int128 {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::min();
    return std::is_same_v<T, int4_t> ? -8 : 0;
  });
}
__int128 int_max(DType dt) {
  return visit_dtype(dt, [](auto tag) -> __int128 {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
    return std::is_same_v<T, int4_t> ? 7 : 0;
  });
}

}  // namespace

std::string Scalar::to_string() const {
  switch (kind) {
    case Kind::Bool: return i ? "True" : "False";
    case Kind::Int: return int128_to_string(i);
    case Kind::Float: {
      std::ostringstream os;
      os.precision(17);
      os << f;
      return os.str();
    }
  }
  return "";
}

void encode_scalar(const Scalar& s, DType dt, void* out, const char* op, const char* param) {
  if (is_packed_pair(dt))
    fail<ArgumentError>(op, ": ", param, " value ", s.to_string(), " cannot be stored in ", dtype_name(dt),
                        ", whose elements are pairs of 4-bit codes; write the pair's byte as DT_UINT8 through view(t, dtype=DT_UINT8)");
  if (is_floating(dt)) {
    if (s.kind == Scalar::Kind::Float) encode_float(s.f, dt, out);
    else encode_int_as_float(s.i, dt, out);
    return;
  }
  if (dt == DType::BOOL) {
    const bool ok = s.kind == Scalar::Kind::Float ? (s.f == 0.0 || s.f == 1.0) : (s.i == 0 || s.i == 1);
    if (!ok) fail<ArgumentError>(op, ": ", param, " value ", s.to_string(), " cannot be stored in DT_BOOL; allowed: 0, 1, True, False");
    return store<uint8_t>(out, s.kind == Scalar::Kind::Float ? s.f != 0.0 : s.i != 0);
  }
  __int128 v;
  if (s.kind == Scalar::Kind::Float) {
    if (!std::isfinite(s.f))
      fail<ArgumentError>(op, ": ", param, " value ", s.to_string(), " cannot be stored in ", dtype_name(dt));
    const double t = std::trunc(s.f);
    if (std::fabs(t) >= 0x1p100)
      fail<ArgumentError>(op, ": ", param, " value ", s.to_string(), " is out of range [",
                          int128_to_string(int_min(dt)), ", ", int128_to_string(int_max(dt)), "] of ", dtype_name(dt));
    v = static_cast<__int128>(t);
  } else {
    v = s.i;
  }
  if (v < int_min(dt) || v > int_max(dt))
    fail<ArgumentError>(op, ": ", param, " value ", s.to_string(), v < 0 && int_min(dt) == 0 ? " is negative," : " is",
                        " out of range [", int128_to_string(int_min(dt)), ", ", int128_to_string(int_max(dt)), "] of ",
                        dtype_name(dt));
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) store(out, static_cast<T>(v));
    else if constexpr (std::is_same_v<T, int4_t>) store(out, static_cast<uint8_t>(v & 0xF));
  });
}

double element_to_double(DType dt, const void* element) {
  return visit_dtype(dt, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, element, sizeof(T));
    if constexpr (std::is_same_v<T, fp16_t> || std::is_same_v<T, bf16_t> || kByteCoded<T> || kPackedPair<T>)
      return code_to_float(dt, v.bits);
    else return static_cast<double>(v);
  });
}

}  // namespace pto
