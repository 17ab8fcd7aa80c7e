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

#include "copy/simd.h"
#include "kernels/arithmetic.h"
#include "ptocpu/dtype.h"

#if PTO_X86
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // as in core/half_lanes.h
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace pto::kernels::math {

// fp32 sinh, cosh, asinh and acosh are computed in fp64 (SLEEF's fp32 ones fall short of fp32's
// range there): asinh and acosh by SLEEF's fp64 forms, sinh and cosh around its fp64 exp (math.cpp,
// from_wide_exp); fp32 erf, tanh and erfc are ptocpu's own fp32 forms (math.cpp). fp64: erfc is
// within 1.5 ulp; sinh / cosh overflow from
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
// out[i] = 1 / (1 + e^-in[i]), each step rounded (upstream's composition); out may be in.
void sigmoid(float* out, const float* in, int64_t n);
void sigmoid(double* out, const double* in, int64_t n);

// `rows` rows of n, one after another: out[i] = exp(in[i] - shifts[r]) for row r as evaluate(Fn::Exp)
// gives it on the fp32 difference, and out[i] added to sums[32 r + i % 32] in the order of i
// (softmax's lane sums, docs/ops/softmax.md); out may not overlap in.
void exp_shifted_lane_sums(float* out, const float* in, const float* shifts, int64_t rows, int64_t n, float* sums);

// softmax (docs/ops/softmax.md) of `rows` rows of n elements one after another, each row worked in
// AVX-512 registers while it is in L1 (9 <= n < 4096) or in AVX2 registers while it is in L1 or L2
// (9 <= n <= 65536); false, with nothing done, for other rows and the baseline build.
bool softmax_register_rows(float* out, const float* in, int64_t rows, int64_t n);
// Whether softmax_register_rows below takes rows of n elements of `dtype`: fp16 / bf16 rows that the
// AVX-512 build works in registers.
bool softmax_half_register_rows(DType dtype, int64_t n);
// The same for fp16 / bf16 rows read and written in their dtype: each element widened exactly, the
// fp32 rows' arithmetic, the result rounded once (the bits of widening, the fp32 kernel, narrowing).
void softmax_register_rows(uint16_t* out, const uint16_t* in, DType dtype, int64_t rows, int64_t n);

// out[i] = in[i] rounded to an integral value as `r` says (GCC does not vectorise floor / ceil /
// trunc in its ISA clones: these are written per instruction set); out may be in.
enum class Rounding : uint8_t { Floor, Ceil, Trunc, NearestEven };
void integral(Rounding r, float* out, const float* in, int64_t n);
void integral(Rounding r, double* out, const double* in, int64_t n);

// ---- the functors ------------------------------------------------------------------------------

using arith::kFloat;
using arith::kInteger;
using arith::kNumber;
using arith::Predicate;
using arith::SameType;

// out[i] = Step::apply(out[i], in[i]) over a block: the element steps around a library call,
// vectorised by the compiler (one clone per ISA). out and in do not overlap.
template <class Step, class T>
PTO_SIMD_CLONES void each(T* __restrict out, const T* __restrict in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = Step::apply(out[i], in[i]);
}

// Elements per thread of the engine's split for the cheapest functions (docs/kernels.md#elementwise):
// exp, exp2 and sigmoid cost 0.15-0.3 ns an element, fp32 erf 0.8, and a second thread's wake-up more than
// a few thousand of the cheap ones (exp of 4K fp32: 1.9 us on one thread, 2.3 us on two).
inline constexpr int64_t kCheapMinChunk = int64_t(1) << 13;
constexpr int64_t min_chunk_of(Fn f) { return f == Fn::Exp || f == Fn::Exp2 ? kCheapMinChunk : 0; }  // 0: the engine's

// One SLEEF function.
template <Fn F>
struct Library : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  static constexpr int64_t kMinChunk = min_chunk_of(F);
  template <class T> static void apply_block(T* out, const T* in, int64_t n) { evaluate(F, out, in, n); }
};

// Element steps around one SLEEF function F: out = Post(F(Pre(in)), in), a block at a time (no
// Pre: F reads in itself).
template <class Pre, Fn F, class Post>
struct AroundLibrary : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  static constexpr int64_t kMinChunk = min_chunk_of(F);
  template <class T> static void apply_block(T* out, const T* in, int64_t n) {
    if constexpr (std::is_void_v<Pre>) {
      evaluate(F, out, in, n);
    } else {
      each<Pre>(out, in, n);
      evaluate(F, out, out, n);
    }
    each<Post>(out, in, n);
  }
};

// The steps (Step::apply(out, in)) of the functions composed around a library call.
namespace step {
struct MinusOne {
  template <class T> static T apply(T e, T) { return e - T(1); }
};
// ln / fp32(ln base), correctly rounded. fp32: fma(ln, h, ln * l) with h + l the divisor's reciprocal
// (h = fp32(1 / divisor), l = fp32(the rest)), a multiply's cost instead of a division's; checked over every
// fp32 of magnitude 2^-26 to 128 (every nonzero finite fp32 ln lies there), with 0, inf and NaN: the same
// bits as the division (src/kernels/math.cpp's log_steps; docs/ops/log.md#semantics).
template <int Base>
struct DivideByLnBase {
  template <class T> static T apply(T ln, T) {
    if constexpr (std::is_same_v<T, float>) {
      constexpr float kHigh = Base == 2 ? 0x1.715476p+0f : 0x1.bcb7b0p-2f;
      constexpr float kLow = Base == 2 ? 0x1.06c5a0p-26f : 0x1.d5a3eap-27f;
      return std::fma(ln, kHigh, ln * kLow);
    } else {
      return ln / (Base == 2 ? T(0.693147180559945309417232121458L) : T(2.302585092994045684017991454684L));
    }
  }
};
struct OnePlus {
  template <class T> static T apply(T, T x) { return x + T(1); }
};
struct Log1pCompensate {
  template <class T> static T apply(T ln_u, T x) {
    const T u = x + T(1);
    // Selects on the bits (arith::pick): GCC leaves `?:` around the division a branch per element.
    const T compensated = ln_u * (x / (u - T(1)));
    return arith::pick(u == T(1), x, arith::pick(u == std::numeric_limits<T>::infinity(), u, compensated));
  }
};
}  // namespace step

// expm1 as the device computes it: exp(x) - 1, no correction for small |x|.
struct Expm1 : AroundLibrary<void, Fn::Exp, step::MinusOne> {};

// log2 / log10 as the device computes them: ln(x) divided by ln(base) rounded to the compute type.
template <int Base>
struct LogBase : AroundLibrary<void, Fn::Log, step::DivideByLnBase<Base>> {};

// log1p as the device computes it: u = x + 1, ln(u) * (x / (u - 1)); x itself where u == 1, +inf
// where u is +inf.
struct Log1p : AroundLibrary<step::OnePlus, Fn::Log, step::Log1pCompensate> {};

// sigmoid as upstream composes it: 1 / (1 + exp(-x)), each step rounded.
struct Sigmoid : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  static constexpr int64_t kMinChunk = kCheapMinChunk;
  template <class T> static void apply_block(T* out, const T* in, int64_t n) { sigmoid(out, in, n); }
};

// cbrt as upstream composes it: copysign(pow(|x|, 1/3 rounded to the compute type), x).
struct Cbrt : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  struct Magnitude {
    template <class T> static T apply(T, T x) { return std::fabs(x); }
  };
  struct SignOf {
    template <class T> static T apply(T root, T x) { return std::copysign(root, x); }
  };
  template <class T> static void apply_block(T* out, const T* in, int64_t n) {
    each<Magnitude>(out, in, n);
    power(out, out, T(1) / T(3), n);
    each<SignOf>(out, in, n);
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

// floor / ceil / trunc / rint: to an integral value of the float type; integers are their own.
template <Rounding R>
struct Integral : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  static constexpr bool kTabulated = false;  // one rounding instruction beats a table lookup
  template <class T>
    requires kFloat<T>
  static void apply_block(T* out, const T* in, int64_t n) { integral(R, out, in, n); }
  template <class T>
    requires(!kFloat<T>)
  static T apply(T a) { return a; }
#if PTO_X86
  // The 16 fp32 lanes of an fp16 / bf16 row fused in registers (docs/kernels.md#fused-half-rows),
  // one rounding instruction per 8: GCC leaves floorf and its kin scalar under -ftrapping-math.
  static constexpr int kMode = (R == Rounding::Floor   ? _MM_FROUND_TO_NEG_INF
                                : R == Rounding::Ceil  ? _MM_FROUND_TO_POS_INF
                                : R == Rounding::Trunc ? _MM_FROUND_TO_ZERO
                                                       : _MM_FROUND_TO_NEAREST_INT) |
                               _MM_FROUND_NO_EXC;
  PTO_TARGET_AVX2 static inline void apply_lanes(float* out, const float* in) {
    _mm256_storeu_ps(out, _mm256_round_ps(_mm256_loadu_ps(in), kMode));
    _mm256_storeu_ps(out + 8, _mm256_round_ps(_mm256_loadu_ps(in + 8), kMode));
  }
  // The same in one AVX-512 register, for the rows narrowed from one: apply_lanes' two halves, read
  // back whole by the narrowing, could not be forwarded to that load, which stalled (an Intel Xeon,
  // one thread, floor of 1M bf16: 622-636 -> 183-187 us, torch 274-301; fp16 608 -> 166-172, torch 176-183).
  PTO_TARGET_AVX512 static inline void apply_lanes_zmm(float* out, const float* in) {
    _mm512_storeu_ps(out, _mm512_roundscale_ps(_mm512_loadu_ps(in), kMode));
  }
#endif
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
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a) {
    if constexpr (kFloat<T>) return std::isfinite(a);
    else return true;
  }
};

struct Isnan : Predicate {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a) { return a != a; }
};

// True where the value is zero (-0.0 included; NaN is not zero).
struct LogicalNot : Predicate {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a) { return a == T(0); }
};

// ~x of an integer; not of a bool.
struct BitwiseNot : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = !kFloat<T>;
  template <class T> static T apply(T a) {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return static_cast<T>(~a);
  }
};

}  // namespace pto::kernels::math
