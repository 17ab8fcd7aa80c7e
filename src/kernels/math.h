// The functors of the unary math ops (docs/ops/exp.md and the pages beside it), run by the
// elementwise engine, and the vector math library behind the transcendentals: SLEEF's
// deterministic 1-ulp functions (Sleef_finz_*: the AVX-512, AVX2 and scalar FMA builds give the
// same bits), called a block at a time (the functors' apply_block), the build picked with
// kernel_tuning().isa. NaN results are the one quiet NaN whatever the build, so no bit of a result
// depends on the instruction set, the thread count or the neighbouring elements.
//
// Where the device composes an op from others (expm1 = exp - 1, log2 = ln / fp32(ln 2), sigmoid,
// log1p, rsqrt, cbrt, round), the functor computes that composition in the compute type, each
// step rounded as the device rounds it.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/arithmetic.h"

namespace pto::kernels::math {

// fp32 sinh, cosh, asinh, acosh and erfc go through SLEEF's fp64 forms (its fp32 ones fall short
// of fp32's range or of 1 ulp there). fp64: erfc is within 1.5 ulp; sinh / cosh overflow from
// |x| > 709.78 (fp64's own limit is 710.47), asinh / acosh give inf past 1.3e154.
enum class Fn : uint8_t {
  Exp, Exp2, Log, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh, Asinh, Acosh, Atanh, Erf, Erfc,
};

// out[i] = fn(in[i]) for i < n; out may be in.
void evaluate(Fn fn, float* out, const float* in, int64_t n);
void evaluate(Fn fn, double* out, const double* in, int64_t n);
// out[i] = pow(base[i], exponent); out may be base.
void power(float* out, const float* base, float exponent, int64_t n);
void power(double* out, const double* base, double exponent, int64_t n);

// ---- the functors ------------------------------------------------------------------------------

using arith::kFloat;
using arith::kInteger;
using arith::kNumber;
using arith::Predicate;
using arith::SameType;

// One SLEEF function.
template <Fn F>
struct Library : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static void apply_block(T* out, const T* in, int64_t n) { evaluate(F, out, in, n); }
};

// expm1 as the device computes it: exp(x) - 1, no correction for small |x|.
struct Expm1 : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static void apply_block(T* out, const T* in, int64_t n) {
    evaluate(Fn::Exp, out, in, n);
    for (int64_t i = 0; i < n; ++i) out[i] = out[i] - T(1);
  }
};

// log2 / log10 as the device computes them: ln(x) divided by ln(base) rounded to the compute type.
template <int Base>
struct LogBase : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static constexpr T kLnBase = Base == 2 ? T(0.693147180559945309417232121458L)
                                                            : T(2.302585092994045684017991454684L);
  template <class T> static void apply_block(T* out, const T* in, int64_t n) {
    evaluate(Fn::Log, out, in, n);
    for (int64_t i = 0; i < n; ++i) out[i] = out[i] / kLnBase<T>;
  }
};

// log1p as the device computes it: u = x + 1, ln(u) * (x / (u - 1)); x itself where u == 1, +inf
// where u is +inf.
struct Log1p : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static void apply_block(T* out, const T* in, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] + T(1);
    evaluate(Fn::Log, out, out, n);
    for (int64_t i = 0; i < n; ++i) {
      const T u = in[i] + T(1);
      out[i] = u == T(1) ? in[i] : u == std::numeric_limits<T>::infinity() ? u : out[i] * (in[i] / (u - T(1)));
    }
  }
};

// sigmoid as upstream composes it: 1 / (1 + exp(-x)), each step rounded.
struct Sigmoid : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static void apply_block(T* out, const T* in, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = -in[i];
    evaluate(Fn::Exp, out, out, n);
    for (int64_t i = 0; i < n; ++i) out[i] = T(1) / (out[i] + T(1));
  }
};

// cbrt as upstream composes it: copysign(pow(|x|, 1/3 rounded to the compute type), x).
struct Cbrt : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static void apply_block(T* out, const T* in, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = std::fabs(in[i]);
    power(out, out, T(1) / T(3), n);
    for (int64_t i = 0; i < n; ++i) out[i] = std::copysign(out[i], in[i]);
  }
};

// rsqrt as the device computes it: the square root, then its reciprocal (two roundings).
struct Rsqrt : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T a) { return T(1) / std::sqrt(a); }
};

// relu: max(x, 0) as maximum computes it (NaN stays NaN, -0.0 gives +0.0).
struct Relu : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a) { return arith::Maximum::apply(a, T(0)); }
};

// sign as the device computes it: (x > 0) - (x < 0), so NaN and -0.0 give +0.0.
struct Sign : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a) {
    if constexpr (std::is_unsigned_v<T>) return a > T(0);
    else return static_cast<T>((a > T(0)) - (a < T(0)));
  }
};

// The sign bit (set for -0.0 and for a NaN that carries it, as the device's bit test reads it).
struct Signbit : Predicate {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static bool apply(T a) {
    if constexpr (kFloat<T>) return std::signbit(a);
    else if constexpr (std::is_signed_v<T>) return a < T(0);
    else return false;
  }
};

// floor / ceil / trunc: to an integral value of the float type; integers are their own.
enum class Rounding { Floor, Ceil, Trunc };
template <Rounding R>
struct Integral : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a) {
    if constexpr (!kFloat<T>) return a;
    else if constexpr (R == Rounding::Floor) return std::floor(a);
    else if constexpr (R == Rounding::Ceil) return std::ceil(a);
    else return std::trunc(a);
  }
};

// round(x, decimals) over (x, scale = 10^decimals, 1 / scale), ties to even, as the device: fp32
// (and fp64) x * scale, rint, / scale ...
struct RoundDividing : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x, T scale, T) { return std::rint(x * scale) / scale; }
};
// ... fp16 / bf16 (and fp8) in fp32: x * scale, rint, * (1 / scale), rounded once to the dtype.
struct RoundByReciprocal : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T x, T scale, T reciprocal) { return std::rint(x * scale) * reciprocal; }
};
// ... an integer dtype S with decimals < 0: in fp32 (fp64 for 64-bit S) the fp16 way, then back to S
// rounding to nearest and saturating (NaN, from a zero scale, gives 0).
template <class S>
struct RoundIntegers {
  using Compute = std::conditional_t<sizeof(S) == 8, double, float>;
  template <class T> using out = S;
  template <class T> static constexpr bool takes = std::is_same_v<T, Compute>;
  static S apply(Compute x, Compute scale, Compute reciprocal) {
    const Compute r = std::rint(std::rint(x * scale) * reciprocal);
    if (r != r) return S(0);
    if (r <= static_cast<Compute>(std::numeric_limits<S>::min())) return std::numeric_limits<S>::min();
    if (r >= static_cast<Compute>(std::numeric_limits<S>::max())) return std::numeric_limits<S>::max();
    return static_cast<S>(r);
  }
};

struct Isfinite : Predicate {
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a) {
    if constexpr (kFloat<T>) return std::isfinite(a);
    else return true;
  }
};

struct Isnan : Predicate {
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a) { return a != a; }
};

// True where the value is zero (-0.0 included; NaN is not zero).
struct LogicalNot : Predicate {
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a) { return a == T(0); }
};

// ~x of an integer; not of a bool.
struct BitwiseNot : SameType {
  template <class T> static constexpr bool takes = !kFloat<T>;
  template <class T> static T apply(T a) {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return static_cast<T>(~a);
  }
};

}  // namespace pto::kernels::math
