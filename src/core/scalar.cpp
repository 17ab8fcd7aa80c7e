#include "ptocpu/scalar.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "ptocpu/error.h"
#include "ptocpu/parallel.h"

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

// double -> a floating dtype, round to nearest even.
void encode_float(double d, DType dt, void* out) {
  switch (dt) {
    case DType::FP64: return store(out, d);
    case DType::FP32: return store(out, static_cast<float>(d));
    case DType::FP16: return store(out, float_to_fp16_bits(double_to_float_round_odd(d)));
    case DType::BF16: return store(out, float_to_bf16_bits(double_to_float_round_odd(d)));
    case DType::FP8E4M3: return store(out, float_to_fp8e4m3_bits(double_to_float_round_odd(d)));
    case DType::FP8E5M2: return store(out, float_to_fp8e5m2_bits(double_to_float_round_odd(d)));
    case DType::FP8E8M0: return store(out, float_to_fp8e8m0_bits(double_to_float_round_odd(d)));
    default: __builtin_unreachable();
  }
}

// An integer -> double that rounds to odd (exact below 2^53), so that the float32 and
// small-float roundings that follow round the integer once, not twice.
double int_to_double_round_odd(__int128 v) {
  double d = static_cast<double>(v);
  const __int128 back = static_cast<__int128>(d);
  if (back != v && (std::bit_cast<uint64_t>(d) & 1) == 0) d = std::nextafter(d, back < v ? INFINITY : -INFINITY);
  return d;
}

// An integer -> a floating dtype, rounded once to nearest even.
void encode_int_as_float(__int128 v, DType dt, void* out) {
  if (dt == DType::FP64) return store(out, static_cast<double>(v));
  encode_float(int_to_double_round_odd(v), dt, out);
}

__int128 element_to_int(DType dt, const void* element) {
  return visit_dtype(dt, [&](auto tag) -> __int128 {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      T v;
      std::memcpy(&v, element, sizeof(T));
      return v;
    }
    return 0;
  });
}

__int128 int_min(DType dt) {
  return visit_dtype(dt, [](auto tag) -> __int128 {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::min();
    return 0;
  });
}
__int128 int_max(DType dt) {
  return visit_dtype(dt, [](auto tag) -> __int128 {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
    return 0;
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
    fail<ArgumentError>(op, ": ", param, " value ", s.to_string(), " is out of range [", int128_to_string(int_min(dt)),
                        ", ", int128_to_string(int_max(dt)), "] of ", dtype_name(dt));
  visit_dtype(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) store(out, static_cast<T>(v));
  });
}

double element_to_double(DType dt, const void* element) {
  return visit_dtype(dt, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, element, sizeof(T));
    if constexpr (std::is_same_v<T, fp16_t>) return fp16_bits_to_float(v.bits);
    else if constexpr (std::is_same_v<T, bf16_t>) return bf16_bits_to_float(v.bits);
    else if constexpr (std::is_same_v<T, fp8e4m3_t>) return fp8e4m3_bits_to_float(v.bits);
    else if constexpr (std::is_same_v<T, fp8e5m2_t>) return fp8e5m2_bits_to_float(v.bits);
    else if constexpr (std::is_same_v<T, fp8e8m0_t>) return fp8e8m0_bits_to_float(v.bits);
    else return static_cast<double>(v);
  });
}

Tensor astype(const Tensor& t, DType to) {
  if (!is_floating(t.dtype()) && !is_floating(to))
    fail<DTypeError>("astype: ", dtype_name(t.dtype()), " to ", dtype_name(to),
                     " is not supported; one of the two dtypes must be floating");
  const Tensor src = t.contiguous();
  Tensor out = Tensor::empty(t.shape(), to);
  const auto* in = static_cast<const std::byte*>(src.data());
  auto* dst = static_cast<std::byte*>(out.data());
  const size_t isz = src.itemsize(), osz = out.itemsize();
  const bool from_int = is_integer(src.dtype());
  parallel_for(src.numel(), 4096, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      if (from_int) {  // integer -> floating: exact integer, one rounding
        encode_int_as_float(element_to_int(src.dtype(), in + i * isz), to, dst + i * osz);
        continue;
      }
      const double v = element_to_double(src.dtype(), in + i * isz);
      if (is_floating(to)) {
        encode_float(v, to, dst + i * osz);
      } else if (to == DType::BOOL) {
        store<uint8_t>(dst + i * osz, v != 0.0);
      } else {
        // Float to integer: truncate toward zero, saturating NaN to 0 (numpy leaves it undefined).
        const double c = std::isnan(v) ? 0.0 : std::trunc(v);
        const __int128 lo = int_min(to), hi = int_max(to);
        const __int128 q = c <= static_cast<double>(lo) ? lo : c >= static_cast<double>(hi) ? hi : static_cast<__int128>(c);
        visit_dtype(to, [&](auto tag) {
          using T = typename decltype(tag)::type;
          if constexpr (std::is_integral_v<T>) store(dst + i * osz, static_cast<T>(q));
        });
      }
    }
  });
  return out;
}

}  // namespace pto
