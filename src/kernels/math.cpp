// SLEEF's functions a block at a time, in the build kernel_tuning().isa picks (docs/ops/exp.md#numerics),
// and the roundings to integral values written per instruction set.
#include "kernels/math.h"

#include <sleef.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <type_traits>

#include "copy/simd.h"
#include "kernels/arithmetic.h"

#if PTO_X86
#include <immintrin.h>
#endif

// The deterministic builds (Sleef_finz_* / Sleef_cinz_*) came with SLEEF 3.4.
static_assert(SLEEF_VERSION_MAJOR > 3 || (SLEEF_VERSION_MAJOR == 3 && SLEEF_VERSION_MINOR >= 4),
              "ptocpu needs SLEEF 3.4 or newer (apt-get install libsleef-dev)");

// The functions of kernels::math::Fn: SLEEF's name and its accuracy suffix.
#define PTO_MATH_FUNCTIONS(X)                                                                        \
  X(Exp, exp, u10) X(Exp2, exp2, u10) X(Log, log, u10) X(Sin, sin, u10) X(Cos, cos, u10) X(Tan, tan, u10)     \
  X(Asin, asin, u10) X(Acos, acos, u10) X(Atan, atan, u10) X(Sinh, sinh, u10) X(Cosh, cosh, u10)              \
  X(Tanh, tanh, u10) X(Asinh, asinh, u10) X(Acosh, acosh, u10) X(Atanh, atanh, u10) X(Erf, erf, u10)          \
  X(Erfc, erfc, u15)

// sleef.h declares a build's functions only to translation units compiled for its instruction set;
// ptocpu compiles for the baseline and calls them from functions built for the target (PTO_TARGET_*).
// finz: the FMA builds, cinz: the plain C one (CPUs without FMA); all deterministic. Declared as
// sleef.h declares them (CONST), so where it does declare one the two are the same declaration.
extern "C" {
#define PTO_DECLARE_SCALAR(name, ulp, params)                                       \
  CONST float Sleef_finz_##name##f1_##ulp##purecfma params(float);                  \
  CONST float Sleef_cinz_##name##f1_##ulp##purec params(float);                     \
  CONST double Sleef_finz_##name##d1_##ulp##purecfma params(double);                \
  CONST double Sleef_cinz_##name##d1_##ulp##purec params(double);
#define PTO_PARAMS_1(T) (T)
#define PTO_PARAMS_2(T) (T, T)
#define PTO_DECLARE_1(Name, name, ulp) PTO_DECLARE_SCALAR(name, ulp, PTO_PARAMS_1)
PTO_MATH_FUNCTIONS(PTO_DECLARE_1)
PTO_DECLARE_SCALAR(pow, u10, PTO_PARAMS_2)
#if PTO_X86
#define PTO_DECLARE_VECTOR(name, ulp, params)                                       \
  CONST __m512 Sleef_finz_##name##f16_##ulp##avx512f params(__m512);                \
  CONST __m512d Sleef_finz_##name##d8_##ulp##avx512f params(__m512d);               \
  CONST __m256 Sleef_finz_##name##f8_##ulp##avx2 params(__m256);                    \
  CONST __m256d Sleef_finz_##name##d4_##ulp##avx2 params(__m256d);
#define PTO_DECLARE_VECTOR_1(Name, name, ulp) PTO_DECLARE_VECTOR(name, ulp, PTO_PARAMS_1)
PTO_MATH_FUNCTIONS(PTO_DECLARE_VECTOR_1)
PTO_DECLARE_VECTOR(pow, u10, PTO_PARAMS_2)
#endif
}

namespace pto::kernels::math {
namespace {

template <class T>
constexpr T kNaN = std::numeric_limits<T>::quiet_NaN();

#if PTO_X86
// The registers of each build: a block's lanes loaded and stored (masked at the tail), NaN made
// canonical on the way out (SLEEF's builds differ in the sign of some NaNs they make); block:
// out = f(in[, splat(exponent)]) for the kLanes (or, at the tail, fewer) elements from in.
template <class T>
struct Zmm {
  static constexpr bool kF32 = std::is_same_v<T, float>;
  using Mask = std::conditional_t<kF32, __mmask16, __mmask8>;
  static constexpr int64_t kLanes = 64 / sizeof(T);
  PTO_TARGET_AVX512 static Mask lanes(int64_t n) { return n >= kLanes ? Mask(~0u) : Mask((1u << n) - 1); }
  PTO_TARGET_AVX512 static auto load(const T* p, int64_t n) {
    if constexpr (kF32) return _mm512_maskz_loadu_ps(lanes(n), p);
    else return _mm512_maskz_loadu_pd(lanes(n), p);
  }
  PTO_TARGET_AVX512 static auto splat(T x) {
    if constexpr (kF32) return _mm512_set1_ps(x);
    else return _mm512_set1_pd(x);
  }
  template <class V>
  PTO_TARGET_AVX512 static void store(T* p, V v, int64_t n) {
    if constexpr (kF32) _mm512_mask_storeu_ps(p, lanes(n), _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), splat(kNaN<T>)));
    else _mm512_mask_storeu_pd(p, lanes(n), _mm512_mask_mov_pd(v, _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), splat(kNaN<T>)));
  }
  template <class F, class... Splat>
  PTO_TARGET_AVX512 static void block(F f, T* out, const T* in, int64_t n, Splat... s) {
    store(out, f(load(in, n), splat(s)...), n);
  }
};

// AVX2 has no mask registers: a lane takes part when its index is below n.
template <class T>
struct Ymm {
  static constexpr bool kF32 = std::is_same_v<T, float>;
  static constexpr int64_t kLanes = 32 / sizeof(T);
  PTO_TARGET_AVX2 static __m256i lanes(int64_t n) {
    if constexpr (kF32) return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::min(n, kLanes))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    else return _mm256_cmpgt_epi64(_mm256_set1_epi64x(std::min(n, kLanes)), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  PTO_TARGET_AVX2 static auto load(const T* p, int64_t n) {
    if constexpr (kF32) return _mm256_maskload_ps(p, lanes(n));
    else return _mm256_maskload_pd(p, lanes(n));
  }
  PTO_TARGET_AVX2 static auto splat(T x) {
    if constexpr (kF32) return _mm256_set1_ps(x);
    else return _mm256_set1_pd(x);
  }
  template <class V>
  PTO_TARGET_AVX2 static void store(T* p, V v, int64_t n) {
    if constexpr (kF32) _mm256_maskstore_ps(p, lanes(n), _mm256_blendv_ps(v, splat(kNaN<T>), _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    else _mm256_maskstore_pd(p, lanes(n), _mm256_blendv_pd(v, splat(kNaN<T>), _mm256_cmp_pd(v, v, _CMP_UNORD_Q)));
  }
  template <class F, class... Splat>
  PTO_TARGET_AVX2 static void block(F f, T* out, const T* in, int64_t n, Splat... s) {
    store(out, f(load(in, n), splat(s)...), n);
  }
};

// out = f(in[, splat(exponent)]) over n elements, a register R at a time (inlined into the
// functions compiled for R's build, which inline R's blocks).
template <template <class> class R, class T, class F, class... Splat>
[[gnu::always_inline]] inline void blocks(F f, T* out, const T* in, int64_t n, Splat... s) {
  for (int64_t i = 0; i < n; i += R<T>::kLanes) R<T>::block(f, out + i, in + i, n - i, s...);
}
template <class T, class F, class... Splat>
PTO_TARGET_AVX512 void blocks_avx512(F f, T* out, const T* in, int64_t n, Splat... s) {
  blocks<Zmm>(f, out, in, n, s...);
}
template <class T, class F, class... Splat>
PTO_TARGET_AVX2 void blocks_avx2(F f, T* out, const T* in, int64_t n, Splat... s) {
  blocks<Ymm>(f, out, in, n, s...);
}
#endif

template <class T, class F, class... Splat>
void blocks_scalar(F f, T* out, const T* in, int64_t n, Splat... s) {
  for (int64_t i = 0; i < n; ++i) {
    const T r = f(in[i], s...);
    out[i] = r != r ? kNaN<T> : r;
  }
}

bool has_fma() {
#if PTO_X86
  static const bool fma = __builtin_cpu_supports("fma");
  return fma;
#else
  return true;
#endif
}

// out = f(in[, s]) with one SLEEF function given in each of its builds ptocpu calls.
template <class T, class Avx512, class Avx2, class Scalar, class... Splat>
void run(Avx512 avx512, Avx2 avx2, Scalar fma, Scalar plain, T* out, const T* in, int64_t n, Splat... s) {
  if (!has_fma()) return blocks_scalar(plain, out, in, n, s...);
#if PTO_X86
  switch (kernel_tuning().isa) {
    case Isa::Avx512: return blocks_avx512(avx512, out, in, n, s...);
    case Isa::Avx2: return blocks_avx2(avx2, out, in, n, s...);
    default: break;
  }
#else
  static_cast<void>(avx512), static_cast<void>(avx2);
#endif
  blocks_scalar(fma, out, in, n, s...);
}

#if PTO_X86
#define PTO_BUILDS(name, ulp, f, v16, v8)                                                   \
  Sleef_finz_##name##v16##_##ulp##avx512f, Sleef_finz_##name##v8##_##ulp##avx2,             \
      Sleef_finz_##name##f##1_##ulp##purecfma, Sleef_cinz_##name##f##1_##ulp##purec
#else
#define PTO_BUILDS(name, ulp, f, v16, v8) \
  nullptr, nullptr, Sleef_finz_##name##f##1_##ulp##purecfma, Sleef_cinz_##name##f##1_##ulp##purec
#endif
#define PTO_FLOAT_CASE(Name, name, ulp) \
  case Fn::Name: return run(PTO_BUILDS(name, ulp, f, f16, f8), out, in, n);
#define PTO_DOUBLE_CASE(Name, name, ulp) \
  case Fn::Name: return run(PTO_BUILDS(name, ulp, d, d8, d4), out, in, n);

// Rounding to an integral value in each build (the scalar one is libm's). The immediates of the
// SSE4.1 / AVX-512 rounding instructions: toward -inf, +inf, zero, each without the inexact exception.
constexpr int kRoundingMode[] = {0x09, 0x0A, 0x0B};

template <int Mode, class T>
T round_scalar(T x) {
  if constexpr (Mode == kRoundingMode[0]) return std::floor(x);
  else if constexpr (Mode == kRoundingMode[1]) return std::ceil(x);
  else return std::trunc(x);
}

#if PTO_X86
// As callable types (not function pointers) so that the register loops inline them.
template <int Mode>
struct RoundZmm {  // the masked forms: GCC 12 warns on the plain ones' undefined source
  PTO_TARGET_AVX512 __m512 operator()(__m512 x) const { return _mm512_mask_roundscale_ps(x, 0xFFFF, x, Mode); }
  PTO_TARGET_AVX512 __m512d operator()(__m512d x) const { return _mm512_mask_roundscale_pd(x, 0xFF, x, Mode); }
};
template <int Mode>
struct RoundYmm {
  PTO_TARGET_AVX2 __m256 operator()(__m256 x) const { return _mm256_round_ps(x, Mode); }
  PTO_TARGET_AVX2 __m256d operator()(__m256d x) const { return _mm256_round_pd(x, Mode); }
};
#endif

template <int Mode, class T>
void round_to_integral(T* out, const T* in, int64_t n) {
#if PTO_X86
  run(RoundZmm<Mode>{}, RoundYmm<Mode>{}, round_scalar<Mode, T>, round_scalar<Mode, T>, out, in, n);
#else
  run(nullptr, nullptr, round_scalar<Mode, T>, round_scalar<Mode, T>, out, in, n);
#endif
}

template <class T>
void round_to_integral(Rounding r, T* out, const T* in, int64_t n) {
  switch (r) {
    case Rounding::Floor: return round_to_integral<kRoundingMode[0], T>(out, in, n);
    case Rounding::Ceil: return round_to_integral<kRoundingMode[1], T>(out, in, n);
    case Rounding::Trunc: return round_to_integral<kRoundingMode[2], T>(out, in, n);
  }
}

// c[First] + c[First + 1] u + ... over Count coefficients by Estrin's scheme: the lower half plus
// the upper half times u^half (half a power of two, powers[k] = u^(2^k)), so that the chain of
// dependent steps is log2(Count) multiply-adds long instead of Horner's Count (the vectorised
// loops below waited on Horner's latency).
template <size_t First, size_t Count, class T, size_t N>
[[gnu::always_inline]] inline T estrin(const T (&c)[N], const T (&powers)[4]) {
  static_assert(First + Count <= N && Count <= 16);
  if constexpr (Count == 1) {
    return c[First];
  } else {
    constexpr size_t half = std::bit_ceil(Count) / 2;
    return estrin<First, half>(c, powers) + estrin<First + half, Count - half>(c, powers) * powers[std::countr_zero(half)];
  }
}
template <class T, size_t N>
[[gnu::always_inline]] inline T estrin(const T (&c)[N], T u) {
  const T u2 = u * u, u4 = u2 * u2;
  const T powers[4] = {u, u2, u4, u4 * u4};
  return estrin<0, N>(c, powers);
}

// fp32 tanh (docs/ops/hyperbolic.md#semantics). SLEEF 3.5's fp32 tanh costs 1.4 ns an element on
// AVX-512, its exp 0.3 ns (torch's tanh 0.3 ns): tanh is composed from that exp, split where the
// device splits it, each side within 1 ulp of the correctly rounded result (checked once over
// every fp32 value; tests/python/test_math.py checks every value around the split):
//  * |x| >= 0.55: 1 - 2 / (e^2|x| + 1) in fp64 from the fp32 exp, whose 1-ulp error moves the
//    result by at most 0.75 ulp there (the factor is 1 / sinh(2|x|)), then one rounding;
//  * |x| < 0.55: x + x (x^2 P(x^2)) in fp32, P a least-squares fit of (tanh(x) / x - 1) / x^2
//    (relative error 3.4e-12); the correction is under a tenth of x, so its few ulps of rounding
//    stay below 0.7 ulp of the result.
constexpr float kTanhSplit = 0.55f;
// e^2|x| is taken at |x| <= 10: tanh(10) rounds to 1 in fp32, and e^20 is far from overflow.
constexpr float kTanhClamp = 10.0f;
constexpr float kTanhPoly[] = {-0.3333333333225722f,  0.1333333298151855f,    -0.0539680655971624f,
                               0.021865687340102774f, -0.008826386061006674f, 0.0034054938403152942f,
                               -0.000966381033585401f};

PTO_SIMD_CLONES void tanh_exp_arguments(float* __restrict arg, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float ax = std::fabs(in[i]);
    arg[i] = 2.0f * arith::pick(ax < kTanhClamp, ax, kTanhClamp);  // NaN: the clamp (its result is NaN)
  }
}

// out from in and e = e^2|in|; out may be in. Both forms are computed and one picked (vectorised).
PTO_SIMD_CLONES void tanh_from_exp(float* out, const float* in, const float* __restrict e, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = in[i], ax = std::fabs(x), t = x * x;
    float p = kTanhPoly[6];
    for (int j = 5; j >= 0; --j) p = p * t + kTanhPoly[j];
    const float small = arith::pick(x == 0.0f, x, x + x * (t * p));  // tanh(-0) = -0
    // 1 / (e + 1) in fp64 from the fp32 quotient and one Newton step (fp64 division is slow)
    const double d = static_cast<double>(e[i]) + 1.0, r0 = 1.0f / (e[i] + 1.0f), r = r0 * (2.0 - d * r0);
    const float large = static_cast<float>(std::copysign(1.0 - 2.0 * r, double(x)));
    out[i] = arith::pick(ax < kTanhSplit, small, arith::pick(ax >= kTanhSplit, large, kNaN<float>));
  }
}

// fp32 erf (docs/ops/erf.md#semantics). SLEEF 3.5's fp32 erf costs 2 ns an element on AVX-512;
// composed from its fp32 exp, each piece within 1 ulp of the correctly rounded result (checked
// once over every fp32 value; tests/python/test_math.py checks the values around each boundary):
//  * |x| < 0.84375: x + x Q(x^2) in fp64, Q a least-squares fit of erf(x) / x - 1 (relative
//    error 1.3e-10), one rounding;
//  * |x| >= 0.84375: 1 - e^-x^2 G(|x|) in fp64 with G a fit of erfc(x) e^x^2 (relative error
//    3.9e-9; x - 2.421875 as its variable) and x^2 = hi + lo split exactly, e^-hi from the fp32
//    exp: its 1-ulp error moves the result by at most 0.47 ulp (erfc / erf is at most 0.3 there);
//  * |x| >= 4: +-1 (erf(3.92) already rounds to 1).
constexpr float kErfSplit = 0.84375f, kErfClamp = 4.0f;
constexpr double kErfSmall[] = {0.12837916696923185,  -0.37612637154253903,  0.11283752043957575,
                                -0.026862792581752358, 0.005210185714977401, -0.0008255934831965051,
                                8.893430921134231e-05};
constexpr double kErfcCenter = 2.421875;
constexpr double kErfcScaled[] = {0.21677087013028074,    -0.07839526895556956,   0.02690730630035308,
                                  -0.008819368972940894,  0.002774092075554791,   -0.0008405677807654821,
                                  0.00024576198206118334, -6.970729821106596e-05, 1.9644428771670604e-05,
                                  -5.284704279546129e-06, 1.125194454664985e-06,  -2.8242376271051463e-07,
                                  1.454277225935428e-07,  -3.6021323538201534e-08};

// |x| clamped to [kErfSplit, kErfClamp] (NaN: the clamp): where the erfc form is evaluated.
inline float erfc_argument(float ax) {
  return arith::pick(ax < kErfClamp, arith::pick(ax > kErfSplit, ax, kErfSplit), kErfClamp);
}

// -hi, hi = fl(c^2) with c = erfc_argument(|x|).
PTO_SIMD_CLONES void erf_exp_arguments(float* __restrict arg, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float c = erfc_argument(std::fabs(in[i]));
    arg[i] = -(c * c);
  }
}

// out from in and e = e^-hi; out may be in. The forms are computed and one picked (vectorised).
PTO_SIMD_CLONES void erf_from_exp(float* out, const float* in, const float* __restrict e, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float xf = in[i], ax = std::fabs(xf);
    const double x = xf, t = x * x;
    const double q = estrin(kErfSmall, t);
    const float small = static_cast<float>(x + x * q);
    // the same c again (cheaper than storing it): c^2 - hi is exact in fp64
    const float cf = erfc_argument(ax);
    const double c = cf, lo = c * c - static_cast<double>(cf * cf), u = c - kErfcCenter;
    const double g = estrin(kErfcScaled, u);
    const double erfc = static_cast<double>(e[i]) * (1.0 - lo) * g;
    const float large = static_cast<float>(std::copysign(1.0 - erfc, x));
    const float one = std::copysign(1.0f, xf);
    out[i] = arith::pick(ax < kErfSplit, small,
                         arith::pick(ax < kErfClamp, large, arith::pick(ax >= kErfClamp, one, kNaN<float>)));
  }
}

// The fp32 compositions around SLEEF's fp32 exp: args(arg, in, m), then e^arg, then finish(out,
// in, e, m), a chunk at a time.
template <class Args, class Finish>
void around_exp(Args args, Finish finish, float* out, const float* in, int64_t n) {
  constexpr int64_t kChunk = 256;
  alignas(64) float e[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t m = std::min(kChunk, n - i);
    args(e, in + i, m);
    evaluate(Fn::Exp, e, e, m);
    finish(out + i, in + i, e, m);
  }
}

}  // namespace

void evaluate(Fn fn, float* out, const float* in, int64_t n) {
  if (fn == Fn::Tanh) return around_exp(tanh_exp_arguments, tanh_from_exp, out, in, n);
  if (fn == Fn::Erf) return around_exp(erf_exp_arguments, erf_from_exp, out, in, n);
  if (fn == Fn::Sinh || fn == Fn::Cosh || fn == Fn::Asinh || fn == Fn::Acosh || fn == Fn::Erfc) {
    // SLEEF's fp32 forms of these miss part of fp32's range (sinh / cosh overflow from |x| > 88.7,
    // fp32's own limit is 89.4; asinh / acosh give inf past 1.8e19) or its accuracy (erfc is a
    // 1.5-ulp function): fp32 takes their fp64 form, rounded once, which is within 1 ulp.
    constexpr int64_t kChunk = 256;
    double wide[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t m = std::min(kChunk, n - i);
      std::copy(in + i, in + i + m, wide);
      evaluate(fn, wide, wide, m);
      std::copy(wide, wide + m, out + i);
    }
    return;
  }
  switch (fn) { PTO_MATH_FUNCTIONS(PTO_FLOAT_CASE) }
}

void evaluate(Fn fn, double* out, const double* in, int64_t n) {
  switch (fn) { PTO_MATH_FUNCTIONS(PTO_DOUBLE_CASE) }
}

void power(float* out, const float* base, float exponent, int64_t n) {
  run(PTO_BUILDS(pow, u10, f, f16, f8), out, base, n, exponent);
}

void power(double* out, const double* base, double exponent, int64_t n) {
  run(PTO_BUILDS(pow, u10, d, d8, d4), out, base, n, exponent);
}

// sigmoid in one pass over the registers: 1 / (1 + e^-x), each step rounded as the three-step
// composition rounds it, through the same SLEEF exp build, so the bits are the same (4K fp32 on one
// thread: 2.5 -> 1.9 us; the three passes over each block cost more than the exp).
namespace {
#if PTO_X86
struct SigmoidZmm {
  PTO_TARGET_AVX512 __m512 operator()(__m512 x) const { return 1.0f / (Sleef_finz_expf16_u10avx512f(-x) + 1.0f); }
  PTO_TARGET_AVX512 __m512d operator()(__m512d x) const { return 1.0 / (Sleef_finz_expd8_u10avx512f(-x) + 1.0); }
};
struct SigmoidYmm {
  PTO_TARGET_AVX2 __m256 operator()(__m256 x) const { return 1.0f / (Sleef_finz_expf8_u10avx2(-x) + 1.0f); }
  PTO_TARGET_AVX2 __m256d operator()(__m256d x) const { return 1.0 / (Sleef_finz_expd4_u10avx2(-x) + 1.0); }
};
#endif
template <class T, bool Fma>
T sigmoid_scalar(T x) {
  T e;
  if constexpr (std::is_same_v<T, float>) e = Fma ? Sleef_finz_expf1_u10purecfma(-x) : Sleef_cinz_expf1_u10purec(-x);
  else e = Fma ? Sleef_finz_expd1_u10purecfma(-x) : Sleef_cinz_expd1_u10purec(-x);
  return T(1) / (e + T(1));
}

template <class T>
void sigmoid_of(T* out, const T* in, int64_t n) {
#if PTO_X86
  run(SigmoidZmm{}, SigmoidYmm{}, sigmoid_scalar<T, true>, sigmoid_scalar<T, false>, out, in, n);
#else
  run(nullptr, nullptr, sigmoid_scalar<T, true>, sigmoid_scalar<T, false>, out, in, n);
#endif
}

}  // namespace

void sigmoid(float* out, const float* in, int64_t n) { sigmoid_of(out, in, n); }

void sigmoid(double* out, const double* in, int64_t n) { sigmoid_of(out, in, n); }

void integral(Rounding r, float* out, const float* in, int64_t n) { round_to_integral(r, out, in, n); }

void integral(Rounding r, double* out, const double* in, int64_t n) { round_to_integral(r, out, in, n); }

}  // namespace pto::kernels::math
