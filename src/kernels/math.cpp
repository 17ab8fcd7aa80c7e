// SLEEF's functions a block at a time, in the build kernel_tuning().isa picks (docs/ops/exp.md#numerics),
// and the roundings to integral values written per instruction set.
#include "kernels/math.h"

#include <sleef.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "copy/simd.h"
#include "core/half_lanes.h"
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
  // v with its NaN lanes the canonical NaN; the NaN in a register, not a masked read of memory
  // (see in_register).
  template <class V>
  PTO_TARGET_AVX512 static V canonical(V v) {
    if constexpr (kF32) return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), in_register(splat(kNaN<T>)));
    else return _mm512_mask_mov_pd(v, _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q), in_register(splat(kNaN<T>)));
  }
  template <class V>
  PTO_TARGET_AVX512 static void store(T* p, V v, int64_t n) {
    if constexpr (kF32) _mm512_mask_storeu_ps(p, lanes(n), canonical(v));
    else _mm512_mask_storeu_pd(p, lanes(n), canonical(v));
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
  // Whole registers move plainly, only a tail through the masked instructions: AMD's masked store is
  // microcoded (exp of 16M fp32 on an AMD EPYC, 2 threads: 13.7 ms, a third of it in the masked moves).
  PTO_TARGET_AVX2 static auto load(const T* p, int64_t n) {
    if constexpr (kF32) return n >= kLanes ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, lanes(n));
    else return n >= kLanes ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, lanes(n));
  }
  PTO_TARGET_AVX2 static auto splat(T x) {
    if constexpr (kF32) return _mm256_set1_ps(x);
    else return _mm256_set1_pd(x);
  }
  template <class V>
  PTO_TARGET_AVX2 static V canonical(V v) {
    if constexpr (kF32) return _mm256_blendv_ps(v, splat(kNaN<T>), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    else return _mm256_blendv_pd(v, splat(kNaN<T>), _mm256_cmp_pd(v, v, _CMP_UNORD_Q));
  }
  template <class V>
  PTO_TARGET_AVX2 static void store(T* p, V v, int64_t n) {
    if constexpr (kF32) {
      if (n >= kLanes) _mm256_storeu_ps(p, canonical(v));
      else _mm256_maskstore_ps(p, lanes(n), canonical(v));
    } else {
      if (n >= kLanes) _mm256_storeu_pd(p, canonical(v));
      else _mm256_maskstore_pd(p, lanes(n), canonical(v));
    }
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
// With FMA: run() takes it only where the CPU has FMA, and a functor may use it (the build never
// contracts a * b + c by itself: -ffp-contract=off).
template <class T, class F, class... Splat>
PTO_TARGET_AVX2_FMA void blocks_avx2(F f, T* out, const T* in, int64_t n, Splat... s) {
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
// SSE4.1 / AVX-512 rounding instructions: toward -inf, +inf, zero, to nearest even, each without the
// inexact exception.
constexpr int kRoundingMode[] = {0x09, 0x0A, 0x0B, 0x08};

template <int Mode, class T>
T round_scalar(T x) {
  if constexpr (Mode == kRoundingMode[0]) return std::floor(x);
  else if constexpr (Mode == kRoundingMode[1]) return std::ceil(x);
  else if constexpr (Mode == kRoundingMode[2]) return std::trunc(x);
  else return std::nearbyint(x);  // the default rounding mode: to nearest even
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
    case Rounding::NearestEven: return round_to_integral<kRoundingMode[3], T>(out, in, n);
  }
}

// fp32 erf and tanh (docs/ops/erf.md#semantics, docs/ops/hyperbolic.md#semantics), two odd functions
// that reach +-1: one polynomial per interval of |x|, its coefficients looked up per lane from
// 16-entry tables (a register-wide permute on AVX-512, two on AVX2), so that a lane does one
// polynomial's work. Interval 0, |x| < small_end: x + x Q(x^2) with Q a fit of f(x) / x - 1
// (relative error for tiny x); intervals 1..15 split [small_end, end) evenly: f(c) rounded +
// R(x - c) about each midpoint c; from `end` on, +-1 (f(end) rounds to 1). Least-squares fits far
// below fp32's error, every step an fp32 multiply or add in the same order on every build (no
// FMA), so every build gives the same bits; checked once over every fp32 value below `end`: within
// 1 ulp of the correctly rounded result. SLEEF 3.5's fp32 erf and tanh cost 2 and 1.4 ns an
// element on AVX-512, compositions around its exp about 1.3 ns.
struct alignas(64) Lanes16 {
  float v[16];
};
template <int Degree>
struct OddTable {
  static constexpr int kDegree = Degree;
  float small_end, end, inverse_width;  // inverse_width: 15 / (end - small_end), rounded
  Lanes16 center, value, coefficient[Degree + 1];

  // The interval of 0 <= ax < end.
  int interval(float ax) const {
    if (ax < small_end) return 0;
    return std::min(static_cast<int>((ax - small_end) * inverse_width) + 1, 15);
  }
};

constexpr OddTable<5> kErf = {
    0.84375f, 3.92000008f, 4.87606668f,
    {{0.0f, 0.946291685f, 1.15137506f, 1.35645831f, 1.56154168f, 1.76662505f, 1.97170842f, 2.17679167f,
      2.38187504f, 2.58695841f, 2.79204178f, 2.99712515f, 3.20220828f, 3.40729165f, 3.61237502f, 3.81745839f}},
    {{0.0f, 0.81918782f, 0.896536648f, 0.944929779f, 0.972780347f, 0.987523913f, 0.994703352f, 0.997919202f,
      0.999244153f, 0.999746323f, 0.999921381f, 0.999977529f, 0.99999404f, 0.999998569f, 0.999999702f,
      0.99999994f}},
    {{{0.128379166f, 6.36273301e-09f, -1.01141406e-08f, -5.95436722e-09f, 7.4689126e-09f, 2.90144211e-08f,
       1.22962964e-08f, -1.82657054e-08f, 7.52096785e-09f, -6.92590607e-09f, -9.71270442e-09f, -2.33798527e-08f,
       2.30523778e-08f, -1.49085562e-08f, -2.64133835e-08f, -7.52086216e-09f}},
     {{-0.376125753f, 0.4608486f, 0.299727291f, 0.179210007f, 0.0985067561f, 0.0497780144f, 0.0231247488f,
       0.00987607893f, 0.00387757062f, 0.00139959622f, 0.000464422948f, 0.000141674769f, 3.97319491e-05f,
       1.02436461e-05f, 2.4279359e-06f, 5.29039198e-07f}},
     {{0.112827651f, -0.436097085f, -0.345099658f, -0.243092403f, -0.153823555f, -0.0879396498f, -0.0455953442f,
       -0.0214980058f, -0.0092356801f, -0.00362053374f, -0.0012965888f, -0.000424566475f, -0.000127207852f,
       -3.48945869e-05f, -8.76771901e-06f, -2.01870444e-06f}},
     {{-0.0268046949f, 0.121498793f, 0.164981917f, 0.160091862f, 0.1272984f, 0.0869782194f, 0.0522258505f,
       0.0279061329f, 0.0133732827f, 0.00577779394f, 0.00225873315f, 0.000801153714f, 0.000258345739f,
       7.58593596e-05f, 2.03089421e-05f, 4.9622472e-06f}},
     {{0.00505496981f, 0.087853767f, 0.0203351546f, -0.02718357f, -0.0478365533f, -0.0473795831f, -0.0362688303f,
       -0.0232458152f, -0.012899003f, -0.00630643638f, -0.00274527702f, -0.00107137032f, -0.000376629294f,
       -0.00011967805f, -3.4464927e-05f, -9.01330895e-06f}},
     {{-0.000633927237f, -0.0693889856f, -0.0585714392f, -0.0330944061f, -0.00824335776f, 0.00736971153f,
       0.0128807295f, 0.0118091973f, 0.00823195465f, 0.0047638854f, 0.00237303367f, 0.00103688648f,
       0.000401934201f, 0.000139249547f, 4.33405476e-05f, 1.21646644e-05f}}}};

// tanh: degree 6 (degree 5 misses by 4 ulps about 1.14); the small interval ends where the device
// switches from its polynomial to its exp form.
constexpr OddTable<6> kTanh = {
    0.550000012f, 9.01091385f, 1.77285814f,
    {{0.0f, 0.832030475f, 1.39609134f, 1.96015227f, 2.52421331f, 3.08827424f, 3.65233517f, 4.21639585f,
      4.78045702f, 5.34451771f, 5.90857887f, 6.47263956f, 7.03670073f, 7.60076141f, 8.16482258f, 8.72888374f}},
    {{0.0f, 0.681564748f, 0.884503841f, 0.961101472f, 0.987243056f, 0.995853424f, 0.998656094f, 0.999564886f,
      0.999859154f, 0.999954402f, 0.999985218f, 0.999995232f, 0.99999845f, 0.999999523f, 0.999999821f, 0.99999994f}},
    {{{-1.46867969e-17f, 2.42266083e-08f, 1.10535661e-08f, -2.43520972e-08f, -1.52575783e-08f, 1.81193904e-08f,
       2.72613612e-08f, -1.7659584e-08f, -1.09423259e-09f, 1.16045156e-08f, 2.82708612e-08f, -6.54367849e-09f,
       4.3628976e-09f, -2.3303782e-08f, 1.69481051e-08f, 7.21832416e-09f}},
     {{-0.333333343f, 0.535470366f, 0.217652649f, 0.0762839541f, 0.0253511835f, 0.00827592611f, 0.00268595316f,
       0.000870074495f, 0.000281674118f, 9.11698953e-05f, 2.95071677e-05f, 9.54981533e-06f, 3.09071584e-06f,
       1.0002824e-06f, 3.23731882e-07f, 1.04772724e-07f}},
     {{0.133333236f, -0.364958555f, -0.192514777f, -0.0733165964f, -0.0250277687f, -0.00824160688f,
       -0.00268234266f, -0.000869695563f, -0.000281634362f, -9.11657044e-05f, -2.95067221e-05f, -9.54976622e-06f,
       -3.09070992e-06f, -1.0002816e-06f, -3.2373174e-07f, -1.04772681e-07f}},
     {{-0.0539646521f, 0.0701638684f, 0.0977566317f, 0.0450417064f, 0.0162576102f, 0.00544831995f, 0.00178323162f,
       0.000579227286f, 0.000187681857f, 6.07645961e-05f, 1.96682977e-05f, 6.36571531e-06f, 2.06022901e-06f,
       6.66776714e-07f, 2.15796163e-07f, 6.98403824e-08f}},
     {{0.0218180064f, 0.0738586858f, -0.0222748797f, -0.018850252f, -0.0077083963f, -0.00267888419f,
       -0.000886848371f, -0.000289119227f, -9.37911827e-05f, -3.03777633e-05f, -9.83389327e-06f, -3.18290176e-06f,
       -1.03014213e-06f, -3.33398674e-07f, -1.07901549e-07f, -3.49213316e-08f}},
     {{-0.00852467306f, -0.059669394f, -0.00870911777f, 0.00467713363f, 0.00276580895f, 0.00104689365f,
       0.000355476543f, 0.000116818235f, 3.79935664e-05f, 1.2315827e-05f, 3.98794873e-06f, 1.29087732e-06f,
       4.17802511e-07f, 1.35220247e-07f, 4.37629737e-08f, 1.41634997e-08f}},
     {{0.00252420432f, 0.00770540629f, 0.0103522493f, 0.000125420658f, -0.000699944852f, -0.000323531771f,
       -0.000115607982f, -3.85831663e-05f, -1.26102832e-05f, -4.09413451e-06f, -1.32638377e-06f, -4.29413632e-07f,
       -1.38990458e-07f, -4.49844926e-08f, -1.4559105e-08f, -4.71189443e-09f}}}};

template <const auto& Table>
float odd_table_scalar(float x) {
  const float ax = std::fabs(x);
  if (!(ax < Table.end)) return ax == ax ? std::copysign(1.0f, x) : x;
  const int k = Table.interval(ax);
  const float u = k == 0 ? ax * ax : ax - Table.center.v[k];
  float p = Table.coefficient[Table.kDegree].v[k];
  for (int j = Table.kDegree - 1; j >= 0; --j) p = p * u + Table.coefficient[j].v[k];
  return std::copysign(k == 0 ? ax + ax * p : Table.value.v[k] + p, x);
}

#if PTO_X86
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own _mm512_undefined_*().
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
template <const auto& Table>
struct OddTableZmm {
  PTO_TARGET_AVX512 static __m512 at(const Lanes16& t, __m512i k) { return _mm512_permutexvar_ps(k, _mm512_load_ps(t.v)); }
  PTO_TARGET_AVX512 __m512 operator()(__m512 x) const {
    const __m512 ax = _mm512_abs_ps(x);
    const __mmask16 small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(Table.small_end), _CMP_LT_OQ);
    const __m512 scaled = _mm512_mul_ps(_mm512_sub_ps(ax, _mm512_set1_ps(Table.small_end)), _mm512_set1_ps(Table.inverse_width));
    const __m512i one = _mm512_set1_epi32(1);
    __m512i k = _mm512_add_epi32(_mm512_cvttps_epi32(scaled), one);  // (lanes past `end` or NaN: any, unused)
    k = _mm512_min_epi32(_mm512_max_epi32(k, one), _mm512_set1_epi32(15));
    k = _mm512_mask_mov_epi32(k, small, _mm512_setzero_si512());
    const __m512 u = _mm512_mask_blend_ps(small, _mm512_sub_ps(ax, at(Table.center, k)), _mm512_mul_ps(ax, ax));
    __m512 p = at(Table.coefficient[Table.kDegree], k);
    for (int j = Table.kDegree - 1; j >= 0; --j) p = _mm512_add_ps(_mm512_mul_ps(p, u), at(Table.coefficient[j], k));
    __m512 r = _mm512_mask_blend_ps(small, _mm512_add_ps(at(Table.value, k), p), _mm512_add_ps(ax, _mm512_mul_ps(ax, p)));
    r = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(ax, _mm512_set1_ps(Table.end), _CMP_LT_OQ), _mm512_set1_ps(1.0f), r);
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
    r = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(r), sign));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), r, x);
  }
};
#pragma GCC diagnostic pop
template <const auto& Table>
struct OddTableYmm {
  // t.v[k] per lane: entries 0..7 and 8..15 permuted, the upper picked where k > 7
  PTO_TARGET_AVX2 static __m256 at(const Lanes16& t, __m256i k, __m256 upper) {
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(_mm256_load_ps(t.v), k),
                            _mm256_permutevar8x32_ps(_mm256_load_ps(t.v + 8), k), upper);
  }
  PTO_TARGET_AVX2 __m256 operator()(__m256 x) const {
    const __m256 sign_bit = _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN));
    const __m256 ax = _mm256_andnot_ps(sign_bit, x);
    const __m256 small = _mm256_cmp_ps(ax, _mm256_set1_ps(Table.small_end), _CMP_LT_OQ);
    const __m256 scaled = _mm256_mul_ps(_mm256_sub_ps(ax, _mm256_set1_ps(Table.small_end)), _mm256_set1_ps(Table.inverse_width));
    const __m256i one = _mm256_set1_epi32(1);
    __m256i k = _mm256_add_epi32(_mm256_cvttps_epi32(scaled), one);
    k = _mm256_min_epi32(_mm256_max_epi32(k, one), _mm256_set1_epi32(15));
    k = _mm256_andnot_si256(_mm256_castps_si256(small), k);
    const __m256 upper = _mm256_castsi256_ps(_mm256_cmpgt_epi32(k, _mm256_set1_epi32(7)));
    const __m256 u = _mm256_blendv_ps(_mm256_sub_ps(ax, at(Table.center, k, upper)), _mm256_mul_ps(ax, ax), small);
    __m256 p = at(Table.coefficient[Table.kDegree], k, upper);
    for (int j = Table.kDegree - 1; j >= 0; --j) p = _mm256_add_ps(_mm256_mul_ps(p, u), at(Table.coefficient[j], k, upper));
    __m256 r = _mm256_blendv_ps(_mm256_add_ps(at(Table.value, k, upper), p), _mm256_add_ps(ax, _mm256_mul_ps(ax, p)), small);
    r = _mm256_blendv_ps(_mm256_set1_ps(1.0f), r, _mm256_cmp_ps(ax, _mm256_set1_ps(Table.end), _CMP_LT_OQ));
    r = _mm256_or_ps(r, _mm256_and_ps(x, sign_bit));
    return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
};
#endif

template <const auto& Table>
void odd_table(float* out, const float* in, int64_t n) {
#if PTO_X86
  run(OddTableZmm<Table>{}, OddTableYmm<Table>{}, odd_table_scalar<Table>, odd_table_scalar<Table>, out, in, n);
#else
  run(nullptr, nullptr, odd_table_scalar<Table>, odd_table_scalar<Table>, out, in, n);
#endif
}

// fp32 erfc (docs/ops/erf.md#semantics) in fp32 arithmetic, exp(-x^2) erfcx(|x|) with the rounding
// errors of both factors carried: x^2 = hi + lo exactly (an FMA); exp(-hi - lo) = 2^-(k/32) e^-s with
// k = round(hi 32 / ln 2) and s = hi - k ln2/32 (two constants) + lo (exp_parts, the exp steps'
// reduction), e^-s - 1 a cubic, 2^-(j/32) a 32-entry table of fp32 pairs (value, its error); erfcx(a)
// a degree-5 polynomial in a - c on one of 32 intervals of a picked from the bits of a + 1 (eighths of
// [0, 1), quarters of [1, 3), halves of [3, 7), ones up to the clamp at 10.1, where fp32's erfc is 0),
// c chosen near each midpoint so that erfcx(c) is an fp32 number to 1e-10 (least-squares fits of erfcx
// from a 40-digit reference, within 4e-9 relative). The product of the two factors is formed with its error (an FMA) and rounded once;
// x < 0 gives 2 minus it by the same steps. Every step is an fp32 FMA, multiply or add (table lookups
// aside) in the same order on AVX-512, AVX2 and the scalar build, so all give the same bits; checked
// over every fp32 value below 10.2 in magnitude against fp64 erfc rounded once: never more than 1 ulp
// from it, 0.16 % of them off by one. SLEEF 3.5's fp32 erfc (1.5 ulp) costs 2.7 ns an element on
// AVX-512, the fp64 form ptocpu used before 2.2, this one 0.65 (Intel Xeon, one thread).
struct alignas(64) Lanes32 {
  float v[32];
};
struct ErfcTables {
  Lanes32 center, value, q[5], exp2_hi, exp2_lo;  // q: erfcx(c + t) = value + t (q0 + q1 t + ... + q4 t^4)
};
constexpr float kErfcEnd = 10.1f;
constexpr float kErfcStepsPerLn2 = 46.1662407f, kLn2Step = 0.0216608495f, kLn2StepLow = -5.95204441e-11f;  // 32 / ln2; ln2 / 32 in two parts
constexpr ErfcTables kErfc = {
    {{
      1.12518108f, 1.37500381f, 1.62506902f, 1.8752296f, 2.12528253f, 2.37487221f, 2.62493372f, 2.87487006f,
      3.24979615f, 3.75013113f, 4.25023603f, 4.74984598f, 5.24981165f, 5.75007582f, 6.25012875f, 6.74871683f,
      7.50097179f, 8.50246716f, 9.50018406f, 10.0625639f, 10.0625639f, 10.0625639f, 10.0625639f, 10.0625639f, 0.0f,
      0.187500417f, 0.31243673f, 0.437557697f, 0.562500536f, 0.687411487f, 0.812482059f, 0.937524855f}},
    {{
      0.395654976f, 0.343295187f, 0.30225113f, 0.269402891f, 0.242642954f, 0.220516041f, 0.201892093f, 0.186062545f,
      0.16634497f, 0.145584941f, 0.129338443f, 0.116306327f, 0.105616398f, 0.0966975391f, 0.0891548395f,
      0.0827104524f, 0.0745641962f, 0.065906249f, 0.0590635464f, 0.0557953119f, 0.0557953119f, 0.0557953119f,
      0.0557953119f, 0.0557953119f, 1.0f, 0.819180965f, 0.726128638f, 0.649160922f, 0.584998369f, 0.530906141f,
      0.484816939f, 0.445274979f}},
    {{{
      -0.23801218f, -0.184314787f, -0.146021262f, -0.117994614f, -0.0970095098f, -0.0809843317f, -0.068472445f,
      -0.058567889f, -0.047204677f, -0.0364539288f, -0.0289413426f, -0.0235048849f, -0.0194467716f, -0.0163428057f,
      -0.0139207169f, -0.0120003233f, -0.00977130234f, -0.00764773227f, -0.00615004404f, -0.00549138431f,
      -0.00549138431f, -0.00549138431f, -0.00549138431f, -0.00549138431f, -1.12837911f, -0.821185648f, -0.674640656f,
      -0.560288429f, -0.470255375f, -0.398477197f, -0.340569049f, -0.293466449f}},
     {{
      0.127847597f, 0.0898613557f, 0.0649563298f, 0.0481358059f, 0.036470294f, 0.0281885676f, 0.022156449f,
      0.0176874623f, 0.0129392911f, 0.00887788087f, 0.00633088406f, 0.00466173468f, 0.00352450041f, 0.00272516836f,
      0.00214856723f, 0.0017236697f, 0.00126992201f, 0.000881651184f, 0.000636995246f, 0.000537906366f,
      0.000537906366f, 0.000537906366f, 0.000537906366f, 0.000537906366f, 0.999990702f, 0.665207684f, 0.515345693f,
      0.40400213f, 0.320479274f, 0.256988198f, 0.208110616f, 0.170142829f}},
     {{
      -0.0627732426f, -0.0405024514f, -0.0269764513f, -0.0184862353f, -0.0129991947f, -0.00936031435f,
      -0.00687499763f, -0.00514578214f, -0.00343618891f, -0.00210703351f, -0.00135565863f, -0.000908185437f,
      -0.000629218644f, -0.000448534178f, -0.000327899732f, -0.000245154311f, -0.000163719189f, -0.000100990852f,
      -6.56327757e-05f, -5.24515781e-05f, -5.24515781e-05f, -5.24515781e-05f, -5.24515781e-05f, -5.24515781e-05f,
      -0.751862109f, -0.46428448f, -0.342416555f, -0.255693138f, -0.193322971f, -0.147888884f, -0.114313103f,
      -0.089300707f}},
     {{
      0.028721584f, 0.0171436705f, 0.0105917426f, 0.00675306609f, 0.0044312044f, 0.00298602786f, 0.00205826922f,
      0.00144934154f, 0.000891202071f, 0.000490391918f, 0.000285590388f, 0.000174508881f, 0.00011100078f,
      7.30893735e-05f, 4.96059292e-05f, 3.46034685e-05f, 2.10631006e-05f, 1.15488619e-05f, 6.75373121e-06f,
      5.09705978e-06f, 5.09705978e-06f, 5.09705978e-06f, 5.09705978e-06f, 5.09705978e-06f, 0.49318701f, 0.28956908f,
      0.204507396f, 0.146277204f, 0.106014743f, 0.0777672976f, 0.057681907f, 0.043257568f}},
     {{
      -0.0122657204f, -0.00684895553f, -0.00386962178f, -0.00232936791f, -0.00147128897f, -0.00090106891f,
      -0.000613858108f, -0.00039554949f, -0.000223359399f, -0.000110853864f, -5.88087678e-05f, -3.30815383e-05f,
      -1.88734812e-05f, -1.21645589e-05f, -7.64910146e-06f, -5.0043177e-06f, -2.66913389e-06f, -1.30347064e-06f,
      -6.93238519e-07f, 7.37009998e-07f, 7.37009998e-07f, 7.37009998e-07f, 7.37009998e-07f, 7.37009998e-07f,
      -0.247324795f, -0.167968839f, -0.111877061f, -0.0737780705f, -0.0536788329f, -0.036320053f, -0.0285683051f,
      -0.0197887067f}}},
    {{
      1.0f, 0.978572071f, 0.957603276f, 0.93708384f, 0.917004049f, 0.897354543f, 0.878126085f, 0.859309673f,
      0.840896428f, 0.822877765f, 0.805245161f, 0.787990451f, 0.771105409f, 0.754582226f, 0.738413095f, 0.722590387f,
      0.707106769f, 0.69195497f, 0.677127779f, 0.662618339f, 0.648419797f, 0.634525478f, 0.620928884f, 0.607623696f,
      0.594603539f, 0.58186245f, 0.56939429f, 0.557193398f, 0.545253873f, 0.53357023f, 0.522136867f, 0.510948598f}},
    {{
      0.0f, -8.51090221e-09f, 4.92266405e-09f, -2.33150281e-08f, -5.61963898e-09f, -5.70752245e-09f,
      -4.61788519e-09f, -2.4248088e-08f, -1.23776633e-08f, -2.56248605e-08f, 4.91810859e-09f, -2.83051271e-08f,
      4.03545242e-09f, -1.24796866e-08f, -2.25044943e-08f, 1.66209997e-08f, 1.21016175e-08f, -2.93778868e-08f,
      -5.06167463e-09f, -1.74818666e-08f, -2.00949977e-08f, 7.09666659e-10f, 2.24841905e-08f, -1.63369744e-08f,
      1.89881764e-08f, -2.02572075e-08f, 2.69311116e-08f, -2.71777001e-08f, -6.53876997e-09f, -2.96687599e-08f,
      2.41673508e-08f, -2.40577993e-08f}}};

constexpr float kExpShifter = 0x1.8p23f;  // 1.5 2^23: a sum with it rounds to an integer, kept in its low bits
// exp(x [+ x_low]) 2^(k >> 5) = hi + lo, unrounded (|lo| < 0.012 hi), k = round(-x 32/ln2) by the shifter
// (k_bits: kExpShifter's bits + k); x_low: a low part of the argument (erfc's -x^2 as an exact pair).
template <class Ops, class V>
[[gnu::always_inline]] inline void exp_parts(V x, V& hi, V& lo, decltype(Ops::bits(x))& k_bits, const V* x_low = nullptr) {
  const V t = Ops::fma(x, Ops::splat(-kErfcStepsPerLn2), Ops::splat(kExpShifter));
  const V kf = t - Ops::splat(kExpShifter);
  k_bits = Ops::bits(t);  // 2^22 + k in the low 23 bits
  V s = Ops::fma(-kf, Ops::splat(kLn2StepLow), Ops::fma(-kf, Ops::splat(kLn2Step), -x));
  if (x_low) s = s - *x_low;
  const V p = Ops::fma(Ops::fma(s, Ops::splat(-1.0f / 6), Ops::splat(0.5f)), s, Ops::splat(-1.0f)) * s;  // e^-s - 1
  hi = Ops::lookup(kErfc.exp2_hi, k_bits);
  lo = Ops::fma(hi, p, Ops::lookup(kErfc.exp2_lo, k_bits));
}

// The steps over V (float, an AVX2 or an AVX-512 register of floats), with Ops' primitives; every
// arithmetic step is written once, so every build takes the same ones. NaN lanes stay NaN (minps
// gives its second operand where one is NaN); the scalar build returns before it.
template <class Ops, class V>
[[gnu::always_inline]] inline V erfc_steps(V x) {
  const V a = Ops::min(Ops::splat(kErfcEnd), Ops::abs(x));
  const V hi = a * a, lo = Ops::fma(a, a, -hi);
  V e_hi, e_lo;
  decltype(Ops::bits(x)) k_bits;
  const V minus_lo = -lo;
  exp_parts<Ops>(-hi, e_hi, e_lo, k_bits, &minus_lo);
  const auto k = Ops::bits_to_k(k_bits);
  const auto i = Ops::interval(a + Ops::splat(1.0f));
  const V t = a - Ops::lookup(kErfc.center, i);
  V q = Ops::lookup(kErfc.q[4], i);
  for (int d = 3; d >= 0; --d) q = Ops::fma(q, t, Ops::lookup(kErfc.q[d], i));
  const V c_hi = Ops::lookup(kErfc.value, i), c_lo = q * t;
  const V product = e_hi * c_hi, error = Ops::fma(e_hi, c_hi, -product);
  const V rest = error + Ops::fma(e_lo, c_hi + c_lo, e_hi * c_lo);
  // x >= 0: the sum rounded, then scaled (a second rounding where the result is subnormal: a prototype
  // measured 0.83 ulp of the exact value at worst, against 1.04 for the scaled parts added)
  const V positive = Ops::times_pow2(product + rest, k);
  const V f = Ops::times_pow2(product, k), w = Ops::times_pow2(rest, k);
  const V two = Ops::splat(2.0f), two_minus = two - f, error_2 = (two - two_minus) - f;  // exact (|f| <= 2)
  return Ops::select_negative(x, positive, two_minus + (error_2 - w));
}

// fp32 exp (docs/ops/exp.md#numerics) in fp32 arithmetic, by erfc's exp steps: exp(x) = 2^-(k/32)
// e^-s with k = round(-x 32/ln2) (an FMA with a shifter, whose low bits then hold k), s = -x - k ln2/32
// (two constants), e^-s - 1 a cubic, 2^-(j/32) from kErfc's 32 pairs (value, its error); their
// product formed with its error and rounded once, then scaled by 2^-(k >> 5): through the exponent
// bits where every lane's |x| <= 87 (the results normal), else by times_pow2 (one rounding into the
// subnormals, inf past fp32's range: x is capped at 90). Below x = -104, where exp rounds to 0, the
// steps run on 0 and the result is set to 0: a step that underflows costs a microcode assist on
// Intel (softmax's rows of 12, whose padding lanes are -inf, took 7x as long). Within 0.537 ulp of
// the exact value for normal results (checked over every fp32 input), the same bits on every build;
// SLEEF 3.5's fp32 exp (0.97 ulp) took 1.35x its time on AVX-512 and is an out-of-line call.
constexpr float kExpNearEnd = 87.0f, kExpZeroBelow = -104.0f, kExpHigh = 90.0f;
// exp(x) 2^(k >> 5) rounded once.
template <class Ops, class V>
[[gnu::always_inline]] inline V exp_reduced(V x, decltype(Ops::bits(x))& k_bits) {
  V hi, lo;
  exp_parts<Ops>(x, hi, lo, k_bits);
  return hi + lo;
}
template <class Ops, class V>
[[gnu::always_inline]] inline V exp_steps(V x) {
  decltype(Ops::bits(x)) k_bits;
  if (Ops::all_below(Ops::abs(x), kExpNearEnd)) {
    const V v = exp_reduced<Ops>(x, k_bits);
    return Ops::minus_exponent(v, k_bits);
  }
  const V capped = Ops::min(Ops::splat(kExpHigh), x);  // NaN stays
  const V zero = Ops::splat(0.0f), xs = Ops::select_below(capped, kExpZeroBelow, zero, capped);
  const V v = exp_reduced<Ops>(xs, k_bits);
  return Ops::select_below(capped, kExpZeroBelow, zero, Ops::times_pow2(v, Ops::bits_to_k(k_bits)));
}

// fp32 sinh and cosh (docs/ops/hyperbolic.md#semantics) from exp_parts' unrounded e^a and e^-a (a = |x|,
// clamped to 90, past both overflows): each part halved and scaled by times_pow2 (H = e^a / 2 and
// G = e^-a / 2 as hi + lo pairs, halved before the scaling); cosh = H + G, sinh = H - G, the leading
// parts summed with their error (H >= G), rounded once; from a = 60 G is far below H's last bit (and
// not computed: its parts would reach the subnormals, where a step costs a microcode assist) and H
// is rounded before its scaling (its leading part alone would overflow first; inf past 89.4). sinh
// below a = 0.25 is a + a^3 (1/6 + a^2 / 120 + a^4 / 5040) (its next term below 2^-33 of a), its
// sign x's. The same fp32 steps on every build.
constexpr float kSeriesEnd = 0.25f, kOnlyLargeExp = 60.0f, kHyperbolicClamp = 90.0f;
template <bool Sinh, class Ops, class V>
[[gnu::always_inline]] inline V hyperbolic_steps(V x) {
  const V a = Ops::min(Ops::splat(kHyperbolicClamp), Ops::abs(x)), half = Ops::splat(0.5f);
  V e_hi, e_lo, f_hi, f_lo;
  decltype(Ops::bits(x)) e_k, f_k;
  exp_parts<Ops>(a, e_hi, e_lo, e_k);
  exp_parts<Ops>(-Ops::min(Ops::splat(kOnlyLargeExp), a), f_hi, f_lo, f_k);  // (capped: no step underflows)
  const auto ek = Ops::bits_to_k(e_k), fk = Ops::bits_to_k(f_k);
  const V h = Ops::times_pow2(e_hi * half, ek), h_lo = Ops::times_pow2(e_lo * half, ek);
  const V g = Ops::times_pow2(f_hi * half, fk), g_lo = Ops::times_pow2(f_lo * half, fk);
  V both;
  if constexpr (Sinh) {
    const V t = h - g, error = (h - t) - g;
    both = t + ((error + h_lo) - g_lo);
  } else {
    const V t = h + g, error = g - (t - h);
    both = t + ((error + h_lo) + g_lo);
  }
  const V large = Ops::select_below(a, kOnlyLargeExp, both, Ops::times_pow2((e_hi + e_lo) * half, ek));
  if constexpr (!Sinh) return large;
  const V z = a * a;
  const V series = Ops::fma(Ops::fma(z, Ops::splat(1.0f / 5040), Ops::splat(1.0f / 120)), z, Ops::splat(1.0f / 6));
  const V small = Ops::fma(a * z, series, a);
  return Ops::copy_sign(Ops::select_below(a, kSeriesEnd, small, large), x);
}

// fp32 ln (docs/ops/log.md#semantics) in fp32 arithmetic: x = 2^k z with z in [0.75, 1.5) (from the bits;
// a subnormal x scaled by 2^23 first), z's interval i of 32 (sixteenths of [1, 1.5), of [0.75, 1): the
// five leading fraction bits), ln x = k ln2 + L_i + ln(1 + r) with r = z c_i - 1 (one FMA; c_i an fp32
// near 1 / the interval's midpoint, 1 on the two intervals that touch 1, where r = z - 1 exactly), L_i =
// -ln c_i as an fp32 pair, ln(1 + r) - r = r^2 q(r) with q a cubic (relative error 2^-33 for r in
// [-1/64, 1/32]). k ln2 (ln 2 in two parts, the first of 16 bits, so k times it is exact), L_i and r
// are summed with their errors (fast two-sums: each first term is the larger or 0), the low parts
// added, then one rounding. The same fp32 steps on every build.
struct LogTables {
  Lanes32 inverse, ln_hi, ln_lo;  // c_i, -ln c_i = ln_hi + ln_lo
};
constexpr LogTables kLog = {
    {{1.0f, 0.955223858f, 0.927536249f, 0.901408434f, 0.876712322f, 0.853333354f, 0.83116883f, 0.810126603f,
      0.790123463f, 0.771084309f, 0.752941191f, 0.735632181f, 0.719101131f, 0.703296721f, 0.688172042f,
      0.673684239f, 1.31958759f, 1.29292929f, 1.26732671f, 1.24271846f, 1.21904767f, 1.19626164f, 1.17431188f,
      1.15315318f, 1.13274336f, 1.11304343f, 1.09401715f, 1.07563031f, 1.0578512f, 1.04065037f, 1.02400005f, 1.0f}},
    {{0.0f, 0.0458095595f, 0.0752234012f, 0.10379681f, 0.131576359f, 0.158605009f, 0.184922338f, 0.210564747f,
      0.235566065f, 0.259957552f, 0.283768147f, 0.307025045f, 0.32975328f, 0.351976395f, 0.373716414f,
      0.394993752f, -0.277319252f, -0.256910414f, -0.236909732f, -0.217301279f, -0.198069945f, -0.179201394f,
      -0.160682335f, -0.142500088f, -0.124642439f, -0.107098088f, -0.0898563787f, -0.072906822f, -0.0562396757f,
      -0.0398458727f, -0.0237165745f, 0.0f}},
    {{0.0f, -2.09700451e-10f, 1.42228584e-09f, 2.39636733e-09f, 5.96729688e-09f, -3.35514616e-09f, 1.89329108e-09f,
      -3.49109541e-09f, -8.53199122e-10f, 9.73365299e-09f, 6.34272235e-09f, -6.13627682e-09f, -3.55805452e-09f,
      3.35814865e-09f, -3.24985527e-09f, 1.31588971e-08f, -2.19159157e-09f, 6.49942211e-10f, 9.7668329e-10f,
      -5.69679548e-09f, -6.96855817e-09f, -3.47320861e-09f, -3.35368533e-09f, 7.97158117e-10f, -2.29541319e-09f,
      -2.25314101e-09f, 2.52155491e-10f, -6.46568077e-11f, -6.8289252e-10f, 1.37611611e-09f, 4.20007612e-10f,
      0.0f}}};
constexpr float kLn2High = 0.693145751953125f, kLn2Low = 1.42860677e-06f;
constexpr float kLogQ[] = {-0.5f, 0.333334774f, -0.250014514f, 0.19404839f};
constexpr float kMinNormal = 0x1p-126f;

// ln x for normal positive x, plus *k_offset in the exponent when given.
template <class Ops, class V>
[[gnu::always_inline]] inline V log_normal(V x, const V* k_offset = nullptr) {
  V z;
  decltype(Ops::bits(x)) i;
  V k = Ops::exponent_split(x, z, i);
  if (k_offset) k = k + *k_offset;
  const V r = Ops::fma(z, Ops::lookup(kLog.inverse, i), Ops::splat(-1.0f));
  V q = Ops::splat(kLogQ[3]);
  for (int d = 2; d >= 0; --d) q = Ops::fma(q, r, Ops::splat(kLogQ[d]));
  const V p = (r * r) * q;
  const V a = k * Ops::splat(kLn2High), l = Ops::lookup(kLog.ln_hi, i);
  const V s = a + l, s_error = (a - s) + l;
  const V t = s + r, t_error = (s - t) + r;
  return t + (p + ((s_error + t_error) + Ops::fma(k, Ops::splat(kLn2Low), Ops::lookup(kLog.ln_lo, i))));
}

template <class Ops, class V>
[[gnu::always_inline]] inline V log_steps(V x) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (Ops::all_normal_positive(x)) return log_normal<Ops>(x);
  // Subnormals scaled into the normals; zeros, negatives, inf and NaN set after.
  const V scaled = Ops::select_below(x, kMinNormal, x * Ops::splat(0x1p23f), x);
  const V offset = Ops::select_below(x, kMinNormal, Ops::splat(-23.0f), Ops::splat(0.0f));
  const V v = log_normal<Ops>(scaled, &offset);
  const V nonpositive = Ops::select_below(Ops::abs(x), std::numeric_limits<float>::denorm_min(), Ops::splat(-kInf),
                                          Ops::splat(kNaN<float>));
  return Ops::select_below(x, std::numeric_limits<float>::denorm_min(), nonpositive, Ops::select_below(x, kInf, v, x));
}

// fp32 atan (docs/ops/inverse_trig.md#semantics) in fp32 arithmetic: a = |x| (capped at 2^30, where atan
// rounds to pi/2), q = min(a, 1) / max(a, 1) (one division; q = a where a <= 1, which skips it when every
// lane has), atan(q) = q + q^3 P(q^2) with P of degree 8 (fitted with fp32 coefficients: relative error
// 2^-28.5 on [0, 1]), q^3 formed with its error (two exact products) so that the correction and its low
// part are both known; where a > 1, atan(a) = pi/2 - atan(q) - d / (1 + q^2) with d = q (1 - q a) (the
// division's error, from one FMA; 1 / (1 + q^2) approximated by 1 - q^2 / 2 is ample for a term below
// 2^-25). The leading terms are summed with their errors (fast two-sums), the low parts added, then one
// rounding; the sign is x's. The same fp32 steps on every build.
constexpr float kAtanP[] = {-0.333332986f,  0.199985340f,   -0.142641023f, 0.109515063f,  -0.0840158090f,
                            0.0579271875f, -0.0311488528f, 0.0108996211f, -0.00179038069f};
constexpr float kHalfPiHigh = 1.57079637f, kHalfPiLow = -4.37113883e-08f, kAtanCap = 0x1p30f;

// q + c + c_low = atan(q) for q in [0, 1], |c| <= 0.215 q; z = q^2 (rounded).
template <class Ops, class V>
[[gnu::always_inline]] inline void atan_parts(V q, V& c, V& c_low, V& z) {
  z = q * q;
  const V z_low = Ops::fma(q, q, -z);
  V p = Ops::splat(kAtanP[8]);
  for (int d = 7; d >= 0; --d) p = Ops::fma(p, z, Ops::splat(kAtanP[d]));
  const V w = q * z, w_low = Ops::fma(q, z_low, Ops::fma(q, z, -w));  // q^3 = w + w_low
  c = w * p;
  c_low = Ops::fma(w_low, p, Ops::fma(w, p, -c));
}

template <class Ops, class V>
[[gnu::always_inline]] inline V atan_steps(V x) {
  const V a = Ops::min(Ops::splat(kAtanCap), Ops::abs(x)), one = Ops::splat(1.0f);  // NaN stays
  V c, c_low, z;
  if (Ops::all_below(a, 1.0f)) {
    atan_parts<Ops>(a, c, c_low, z);
    const V s = a + c, s_error = (a - s) + c;
    return Ops::copy_sign(s + (s_error + c_low), x);
  }
  const V num = Ops::min(one, a), den = Ops::max(one, a), q = num / den;
  const V d = Ops::fma(-q, den, num) * q;  // 1 / a - q where a > 1, 0 where a <= 1
  atan_parts<Ops>(q, c, c_low, z);
  const V v = q + c, low = ((q - v) + c) + (c_low + Ops::fma(d * Ops::splat(-0.5f), z, d));  // atan(q) = v + low
  const V half_pi = Ops::splat(kHalfPiHigh), h = half_pi - v, h_error = (half_pi - h) - v;
  const V above = h + ((h_error + Ops::splat(kHalfPiLow)) - low);  // where a > 1: pi/2 - atan(q)
  // a <= 1 (below the next fp32 after 1) as the one-sided path decides, so that 1 rounds alike in either
  return Ops::copy_sign(Ops::select_below(a, 0x1.000002p0f, v + low, above), x);
}

// fp32 asin and acos (docs/ops/inverse_trig.md#semantics) in fp32 arithmetic: with a = |x|, asin(t) = t + c,
// c = t z P(z) for z = t^2 <= 1/4 (P of degree 5, fp32 coefficients fitted to a relative error of 2^-31.7),
// taken at t = a where a <= 1/2, else at t = sqrt(z), z = (1 - a) / 2 (exact), with asin(a) = pi/2 - 2 asin(t)
// and t's rounding error t_low = (z - t^2) / 2t carried (an FMA and a division). Then asin(x) = sign(x) (o + u
// + low) and acos(x) = o + u + low with a leading offset o (0, pi/2 or pi, as an fp32 pair), u = +-a, +-x or
// +-2t, and the low parts; o + u is summed with its error (a fast two-sum: |o| >= |u| or o = 0), the low
// parts added, then one rounding. |x| > 1 gives NaN (the square root of a negative z). A register whose lanes
// are all within [-1/2, 1/2] skips the square root and the division. The same fp32 steps on every build.
constexpr float kAsinP[] = {0.166666597f, 0.0750052184f, 0.0445133522f, 0.0318395235f, 0.0143121732f, 0.0377021208f};
constexpr float kPiHigh = 3.14159274f, kPiLow = -8.74227766e-08f;
constexpr float kAboveHalf = 0x1.000002p-1f;  // the next fp32 after 1/2: a < it is a <= 1/2, as all_below decides

// c = t z P(z): asin(t) = t + c for t in [0, 1/2].
template <class Ops, class V>
[[gnu::always_inline]] inline V asin_correction(V t, V z) {
  V p = Ops::splat(kAsinP[5]);
  for (int d = 4; d >= 0; --d) p = Ops::fma(p, z, Ops::splat(kAsinP[d]));
  return (t * z) * p;
}

// o + u + low, o + u summed with its error.
template <class V>
[[gnu::always_inline]] inline V sum_once(V o, V o_low, V u, V low) {
  const V h = o + u, h_error = (o - h) + u;
  return h + (h_error + (o_low + low));
}

template <bool Acos, class Ops, class V>
[[gnu::always_inline]] inline V inverse_sine_steps(V x) {
  const V a = Ops::abs(x), zero = Ops::splat(0.0f);
  const V half_pi = Ops::splat(kHalfPiHigh), half_pi_low = Ops::splat(kHalfPiLow);
  if (Ops::all_below(a, 0.5f)) {
    const V c = asin_correction<Ops>(a, a * a);
    if constexpr (!Acos) return Ops::copy_sign(a + c, x);
    else return sum_once(half_pi, half_pi_low, -x, -Ops::copy_sign(c, x));  // pi/2 - asin(x)
  }
  // where a > 1/2: t = r = sqrt(z_far) + r_low, asin(a) = pi/2 - 2r - twice
  const V z_far = (Ops::splat(1.0f) - a) * Ops::splat(0.5f), r = Ops::sqrt(z_far);
  const V r_low = Ops::fma(-r, r, z_far) / Ops::max(Ops::splat(0x1p-100f), r + r);  // a = 1: r = 0, r_low = 0
  const V t = Ops::select_below(a, kAboveHalf, a, r), z = Ops::select_below(a, kAboveHalf, a * a, z_far);
  const V c = asin_correction<Ops>(t, z);
  const V twice = Ops::splat(2.0f) * (r_low + c);
  if constexpr (!Acos) {
    const V o = Ops::select_below(a, kAboveHalf, zero, half_pi), o_low = Ops::select_below(a, kAboveHalf, zero, half_pi_low);
    const V u = Ops::select_below(a, kAboveHalf, a, Ops::splat(-2.0f) * r);
    return Ops::copy_sign(sum_once(o, o_low, u, Ops::select_below(a, kAboveHalf, c, -twice)), x);
  } else {
    // a <= 1/2: pi/2 - x - sign(x) c; x > 1/2: 2r + twice; x < -1/2: pi - 2r - twice
    const V o = Ops::select_below(a, kAboveHalf, half_pi, Ops::select_negative(x, zero, Ops::splat(kPiHigh)));
    const V o_low = Ops::select_below(a, kAboveHalf, half_pi_low, Ops::select_negative(x, zero, Ops::splat(kPiLow)));
    const V u = Ops::select_below(a, kAboveHalf, -x, Ops::copy_sign(r + r, x));
    const V low = Ops::select_below(a, kAboveHalf, -Ops::copy_sign(c, x), Ops::copy_sign(twice, x));
    return sum_once(o, o_low, u, low);
  }
}

constexpr uint32_t kThreeQuarterBits = 0x3F400000;  // 0.75f
// A positive normal fp32's bits minus kMinNormalBits are below kNormalRange (one unsigned compare).
constexpr uint32_t kMinNormalBits = 0x00800000, kNormalRange = 0x7F800000 - kMinNormalBits;

// v 2^-(k >> 5) with one rounding (k >> 5 <= 147): two exact steps of at most 2^-74, as AVX-512's scalef
inline float pow2_step(int e) { return std::bit_cast<float>(static_cast<uint32_t>(127 - e) << 23); }

struct ErfcScalar {
  static float splat(float v) { return v; }
  static float abs(float v) { return std::fabs(v); }
  static float min(float end, float a) { return std::min(end, a); }
  static float max(float end, float a) { return std::max(end, a); }
  static float sqrt(float v) { return std::sqrt(v); }
  static float fma(float a, float b, float c) { return std::fma(a, b, c); }
  static float lookup(const Lanes32& t, int i) { return t.v[i & 31]; }
  static int interval(float a_plus_one) { return static_cast<int>(std::bit_cast<uint32_t>(a_plus_one) >> 20); }
  static float times_pow2(float v, int k) {
    const int m = k >> 5;
    return v * pow2_step(m >> 1) * pow2_step(m - (m >> 1));
  }
  static float select_negative(float x, float positive, float negative) { return x < 0 ? negative : positive; }
  static int bits(float v) { return std::bit_cast<int>(v); }
  static bool all_below(float a, float end) { return a <= end; }
  static int bits_to_k(int k_bits) { return k_bits - std::bit_cast<int>(kExpShifter); }
  static float select_below(float a, float end, float below, float above) { return a < end ? below : above; }
  static float copy_sign(float magnitude, float x) { return std::copysign(magnitude, x); }
  static float minus_exponent(float v, int k_bits) {
    return std::bit_cast<float>(static_cast<int>(static_cast<uint32_t>(std::bit_cast<int>(v)) -
                                                 (static_cast<uint32_t>(k_bits) >> 5 << 23)));
  }
  static bool all_normal_positive(float x) { return std::bit_cast<uint32_t>(x) - kMinNormalBits < kNormalRange; }
  // x (normal, positive) = 2^k z with z in [0.75, 1.5); returns k; i: z's bits >> 18, whose low five
  // bits are its leading fraction bits.
  static float exponent_split(float x, float& z, int& i) {
    const uint32_t ix = std::bit_cast<uint32_t>(x);
    const int32_t k = static_cast<int32_t>(ix - kThreeQuarterBits) >> 23;
    const uint32_t iz = ix - (static_cast<uint32_t>(k) << 23);
    z = std::bit_cast<float>(iz);
    i = static_cast<int>(iz >> 18);
    return static_cast<float>(k);
  }
};

// The own fp32 forms' steps as types: one functor per build (OwnZmm, OwnYmm) and one scalar form serve
// them all.
struct ErfcSteps {
  template <class Ops, class V> [[gnu::always_inline]] static V apply(V x) { return erfc_steps<Ops>(x); }
};
struct ExpSteps {
  template <class Ops, class V> [[gnu::always_inline]] static V apply(V x) { return exp_steps<Ops>(x); }
};
struct LogSteps {
  template <class Ops, class V> [[gnu::always_inline]] static V apply(V x) { return log_steps<Ops>(x); }
};
struct AtanSteps {
  template <class Ops, class V> [[gnu::always_inline]] static V apply(V x) { return atan_steps<Ops>(x); }
};
template <bool Acos>
struct InverseSineSteps {
  template <class Ops, class V> [[gnu::always_inline]] static V apply(V x) { return inverse_sine_steps<Acos, Ops>(x); }
};
template <bool Sinh>
struct HyperbolicSteps {
  template <class Ops, class V> [[gnu::always_inline]] static V apply(V x) { return hyperbolic_steps<Sinh, Ops>(x); }
};

template <class Steps>
float own_scalar(float x) { return x != x ? x + x : Steps::template apply<ErfcScalar>(x); }

#if PTO_X86
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own _mm512_undefined_*().
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
struct ErfcZmm {
  PTO_TARGET_AVX512 static __m512 splat(float v) { return _mm512_set1_ps(v); }
  PTO_TARGET_AVX512 static __m512 abs(__m512 v) { return _mm512_abs_ps(v); }
  PTO_TARGET_AVX512 static __m512 min(__m512 end, __m512 a) { return _mm512_min_ps(end, a); }
  PTO_TARGET_AVX512 static __m512 max(__m512 end, __m512 a) { return _mm512_max_ps(end, a); }
  PTO_TARGET_AVX512 static __m512 sqrt(__m512 v) { return _mm512_sqrt_ps(v); }
  PTO_TARGET_AVX512 static __m512 fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
  PTO_TARGET_AVX512 static __m512 lookup(const Lanes32& t, __m512i i) {  // the index's low five bits
    return _mm512_permutex2var_ps(_mm512_load_ps(t.v), i, _mm512_load_ps(t.v + 16));
  }
  PTO_TARGET_AVX512 static __m512i interval(__m512 a_plus_one) {
    return _mm512_srli_epi32(_mm512_castps_si512(a_plus_one), 20);
  }
  PTO_TARGET_AVX512 static __m512 times_pow2(__m512 v, __m512i k) {
    return _mm512_scalef_ps(v, _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_setzero_si512(), _mm512_srai_epi32(k, 5))));
  }
  PTO_TARGET_AVX512 static __m512 select_negative(__m512 x, __m512 positive, __m512 negative) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), positive, negative);
  }
  PTO_TARGET_AVX512 static __m512 select_below(__m512 a, float end, __m512 below, __m512 above) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, _mm512_set1_ps(end), _CMP_LT_OQ), above, below);
  }
  PTO_TARGET_AVX512 static __m512 copy_sign(__m512 magnitude, __m512 x) {  // magnitude >= +0
    return _mm512_or_ps(magnitude, _mm512_and_ps(x, _mm512_set1_ps(-0.0f)));
  }
  PTO_TARGET_AVX512 static __m512i bits(__m512 v) { return _mm512_castps_si512(v); }
  PTO_TARGET_AVX512 static __m512i bits_to_k(__m512i b) { return _mm512_sub_epi32(b, _mm512_set1_epi32(std::bit_cast<int>(kExpShifter))); }
  PTO_TARGET_AVX512 static bool all_below(__m512 a, float end) { return !_mm512_cmp_ps_mask(a, _mm512_set1_ps(end), _CMP_NLE_UQ); }
  PTO_TARGET_AVX512 static __m512 minus_exponent(__m512 v, __m512i k_bits) {
    return _mm512_castsi512_ps(_mm512_sub_epi32(_mm512_castps_si512(v), _mm512_slli_epi32(_mm512_srli_epi32(k_bits, 5), 23)));
  }
  PTO_TARGET_AVX512 static bool all_normal_positive(__m512 x) {
    const __m512i shifted = _mm512_sub_epi32(_mm512_castps_si512(x), _mm512_set1_epi32(kMinNormalBits));
    return _mm512_cmpge_epu32_mask(shifted, _mm512_set1_epi32(kNormalRange)) == 0;
  }
  PTO_TARGET_AVX512 static __m512 exponent_split(__m512 x, __m512& z, __m512i& i) {
    const __m512i ix = _mm512_castps_si512(x);
    const __m512i k = _mm512_srai_epi32(_mm512_sub_epi32(ix, _mm512_set1_epi32(kThreeQuarterBits)), 23);
    const __m512i iz = _mm512_sub_epi32(ix, _mm512_slli_epi32(k, 23));
    z = _mm512_castsi512_ps(iz);
    i = _mm512_srli_epi32(iz, 18);
    return _mm512_cvtepi32_ps(k);
  }
};
template <class Steps>
struct OwnZmm {
  PTO_TARGET_AVX512 __m512 operator()(__m512 x) const { return Steps::template apply<ErfcZmm>(x); }
};
#pragma GCC diagnostic pop

struct ErfcYmm {
  PTO_TARGET_AVX2_FMA static __m256 splat(float v) { return _mm256_set1_ps(v); }
  PTO_TARGET_AVX2_FMA static __m256 abs(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
  PTO_TARGET_AVX2_FMA static __m256 min(__m256 end, __m256 a) { return _mm256_min_ps(end, a); }
  PTO_TARGET_AVX2_FMA static __m256 max(__m256 end, __m256 a) { return _mm256_max_ps(end, a); }
  PTO_TARGET_AVX2_FMA static __m256 sqrt(__m256 v) { return _mm256_sqrt_ps(v); }
  PTO_TARGET_AVX2_FMA static __m256 fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  PTO_TARGET_AVX2_FMA static __m256 lookup(const Lanes32& t, __m256i i) {
    return _mm256_i32gather_ps(t.v, _mm256_and_si256(i, _mm256_set1_epi32(31)), 4);
  }
  PTO_TARGET_AVX2_FMA static __m256i interval(__m256 a_plus_one) {
    return _mm256_srli_epi32(_mm256_castps_si256(a_plus_one), 20);
  }
  PTO_TARGET_AVX2_FMA static __m256 pow2_step(__m256i e) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(127), e), 23));
  }
  PTO_TARGET_AVX2_FMA static __m256 times_pow2(__m256 v, __m256i k) {
    const __m256i m = _mm256_srai_epi32(k, 5), half = _mm256_srai_epi32(m, 1);
    return _mm256_mul_ps(_mm256_mul_ps(v, pow2_step(half)), pow2_step(_mm256_sub_epi32(m, half)));
  }
  PTO_TARGET_AVX2_FMA static __m256 select_negative(__m256 x, __m256 positive, __m256 negative) {
    return _mm256_blendv_ps(positive, negative, _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  PTO_TARGET_AVX2_FMA static __m256 select_below(__m256 a, float end, __m256 below, __m256 above) {
    return _mm256_blendv_ps(above, below, _mm256_cmp_ps(a, _mm256_set1_ps(end), _CMP_LT_OQ));
  }
  PTO_TARGET_AVX2_FMA static __m256 copy_sign(__m256 magnitude, __m256 x) {  // magnitude >= +0
    return _mm256_or_ps(magnitude, _mm256_and_ps(x, _mm256_set1_ps(-0.0f)));
  }
  PTO_TARGET_AVX2_FMA static __m256i bits(__m256 v) { return _mm256_castps_si256(v); }
  PTO_TARGET_AVX2_FMA static __m256i bits_to_k(__m256i b) { return _mm256_sub_epi32(b, _mm256_set1_epi32(std::bit_cast<int>(kExpShifter))); }
  PTO_TARGET_AVX2_FMA static bool all_below(__m256 a, float end) {
    return !_mm256_movemask_ps(_mm256_cmp_ps(a, _mm256_set1_ps(end), _CMP_NLE_UQ));
  }
  PTO_TARGET_AVX2_FMA static __m256 minus_exponent(__m256 v, __m256i k_bits) {
    return _mm256_castsi256_ps(_mm256_sub_epi32(_mm256_castps_si256(v), _mm256_slli_epi32(_mm256_srli_epi32(k_bits, 5), 23)));
  }
  PTO_TARGET_AVX2_FMA static bool all_normal_positive(__m256 x) {  // unsigned below: signed after flipping the top bit
    const __m256i shifted = _mm256_sub_epi32(_mm256_castps_si256(x), _mm256_set1_epi32(kMinNormalBits - 0x80000000u));
    return !_mm256_movemask_epi8(_mm256_cmpgt_epi32(shifted, _mm256_set1_epi32(static_cast<int>(kNormalRange - 0x80000000u - 1))));
  }
  PTO_TARGET_AVX2_FMA static __m256 exponent_split(__m256 x, __m256& z, __m256i& i) {
    const __m256i ix = _mm256_castps_si256(x);
    const __m256i k = _mm256_srai_epi32(_mm256_sub_epi32(ix, _mm256_set1_epi32(kThreeQuarterBits)), 23);
    const __m256i iz = _mm256_sub_epi32(ix, _mm256_slli_epi32(k, 23));
    z = _mm256_castsi256_ps(iz);
    i = _mm256_srli_epi32(iz, 18);
    return _mm256_cvtepi32_ps(k);
  }
};
template <class Steps>
struct OwnYmm {
  PTO_TARGET_AVX2_FMA __m256 operator()(__m256 x) const { return Steps::template apply<ErfcYmm>(x); }
};
#endif

// Without FMA the scalar steps' std::fma runs in software: slower, the same bits.
template <class Steps>
void own_fp32(float* out, const float* in, int64_t n) {
#if PTO_X86
  run(OwnZmm<Steps>{}, OwnYmm<Steps>{}, own_scalar<Steps>, own_scalar<Steps>, out, in, n);
#else
  run(nullptr, nullptr, own_scalar<Steps>, own_scalar<Steps>, out, in, n);
#endif
}

}  // namespace

void evaluate(Fn fn, float* out, const float* in, int64_t n) {
  if (fn == Fn::Tanh) return odd_table<kTanh>(out, in, n);
  if (fn == Fn::Erf) return odd_table<kErf>(out, in, n);
  // SLEEF's fp32 sinh / cosh overflow from |x| > 88.7 (fp32's own limit is 89.4) and its erfc is a
  // 1.5-ulp function: ptocpu's own fp32 forms, within 1 ulp. Its fp32 asinh / acosh give inf past
  // 1.8e19: these compute in fp64 and round once.
  if (fn == Fn::Sinh) return own_fp32<HyperbolicSteps<true>>(out, in, n);
  if (fn == Fn::Cosh) return own_fp32<HyperbolicSteps<false>>(out, in, n);
  if (fn == Fn::Erfc) return own_fp32<ErfcSteps>(out, in, n);
  if (fn == Fn::Exp) return own_fp32<ExpSteps>(out, in, n);  // ptocpu's own (within 0.537 ulp), erfc's exp steps
  if (fn == Fn::Log) return own_fp32<LogSteps>(out, in, n);
  if (fn == Fn::Atan) return own_fp32<AtanSteps>(out, in, n);
  if (fn == Fn::Asin) return own_fp32<InverseSineSteps<false>>(out, in, n);
  if (fn == Fn::Acos) return own_fp32<InverseSineSteps<true>>(out, in, n);
  if (fn == Fn::Asinh || fn == Fn::Acosh) {
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
// composition rounds it, through the same exp (fp32: exp_steps; fp64: SLEEF's build), so the bits
// are the same (4K fp32 on one thread: 2.5 -> 1.9 us; the three passes over each block cost more
// than the exp).
namespace {
#if PTO_X86
struct SigmoidZmm {
  PTO_TARGET_AVX512 __m512 operator()(__m512 x) const { return 1.0f / (exp_steps<ErfcZmm>(-x) + 1.0f); }
  PTO_TARGET_AVX512 __m512d operator()(__m512d x) const { return 1.0 / (Sleef_finz_expd8_u10avx512f(-x) + 1.0); }
};
struct SigmoidYmm {
  PTO_TARGET_AVX2_FMA __m256 operator()(__m256 x) const { return 1.0f / (exp_steps<ErfcYmm>(-x) + 1.0f); }
  PTO_TARGET_AVX2_FMA __m256d operator()(__m256d x) const { return 1.0 / (Sleef_finz_expd4_u10avx2(-x) + 1.0); }
};
#endif
template <class T, bool Fma>
T sigmoid_scalar(T x) {
  T e;
  if constexpr (std::is_same_v<T, float>) e = own_scalar<ExpSteps>(-x);  // without FMA, std::fma in software
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

// softmax's exp and lane sums over a piece of a row while it is in L1: the exps first (the same exp
// build evaluate(Fn::Exp) picks, on the same fp32 difference, NaN made canonical), stored, then the
// stored exps added into the lanes, so the bits are those of the three passes. Two loops, not one:
// with the sums live across SLEEF's out-of-line calls GCC spills and reloads them around every call,
// and that one-loop form measured slower ([64, 65536] fp32, one thread: 3.5-4.3 against 2.9-3.5 ms).
namespace {
constexpr int64_t kSumLanes = 32;

#if PTO_X86
// exp(x - m) in the k lanes (NaN canonical, +0 in the others).
PTO_TARGET_AVX512 inline __m512 shifted_exp(__m512 x, __mmask16 k, __m512 m) {
  return _mm512_maskz_mov_ps(k, Zmm<float>::canonical(exp_steps<ErfcZmm>(_mm512_sub_ps(x, m))));
}

// Lanes past n take +0 (the zero-masked loads), which leaves a sum of exps as it is.
PTO_TARGET_AVX512 void exp_shifted_avx512(float* out, const float* in, float shift, int64_t n, float* sums) {
  using R = Zmm<float>;
  const __m512 m = _mm512_set1_ps(shift);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 k = R::lanes(n - i);
    _mm512_mask_storeu_ps(out + i, k, shifted_exp(_mm512_maskz_loadu_ps(k, in + i), k, m));
  }
  __m512 low = _mm512_loadu_ps(sums), high = _mm512_loadu_ps(sums + 16);
  for (int64_t i = 0; i < n; i += kSumLanes) {
    low = _mm512_add_ps(low, _mm512_maskz_loadu_ps(R::lanes(n - i), out + i));
    high = _mm512_add_ps(high, _mm512_maskz_loadu_ps(n - i > 16 ? R::lanes(n - i - 16) : 0, out + i + 16));
  }
  _mm512_storeu_ps(sums, low);
  _mm512_storeu_ps(sums + 16, high);
}

PTO_TARGET_AVX2_FMA void exp_shifted_avx2(float* out, const float* in, float shift, int64_t n, float* sums) {
  using R = Ymm<float>;
  const __m256 m = _mm256_set1_ps(shift);
  for (int64_t i = 0; i < n; i += 8)  // (R's plain moves for whole registers; its store makes NaN canonical)
    R::store(out + i, exp_steps<ErfcYmm>(_mm256_sub_ps(R::load(in + i, n - i), m)), n - i);
  __m256 acc[4];
  for (int j = 0; j < 4; ++j) acc[j] = _mm256_loadu_ps(sums + 8 * j);
  for (int64_t i = 0; i < n; i += kSumLanes)
    for (int j = 0; j < 4; ++j) {
      const int64_t left = n - i - 8 * j;
      acc[j] = _mm256_add_ps(acc[j], _mm256_maskload_ps(out + i + 8 * j, R::lanes(std::max<int64_t>(left, 0))));
    }
  for (int j = 0; j < 4; ++j) _mm256_storeu_ps(sums + 8 * j, acc[j]);
}
#endif

template <class Row>
void each_row(Row row, float* out, const float* in, const float* shifts, int64_t rows, int64_t n, float* sums) {
  for (int64_t r = 0; r < rows; ++r) row(out + r * n, in + r * n, shifts[r], n, sums + r * kSumLanes);
}

void exp_shifted_scalar(float* out, const float* in, float shift, int64_t n, float* sums) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] - shift;
  evaluate(Fn::Exp, out, out, n);
  for (int64_t i = 0; i < n; ++i) sums[i % kSumLanes] += out[i];
}
}  // namespace

void exp_shifted_lane_sums(float* out, const float* in, const float* shifts, int64_t rows, int64_t n, float* sums) {
#if PTO_X86
  if (has_fma()) {
    switch (kernel_tuning().isa) {
      case Isa::Avx512: return each_row(exp_shifted_avx512, out, in, shifts, rows, n, sums);
      case Isa::Avx2: return each_row(exp_shifted_avx2, out, in, shifts, rows, n, sums);
      default: break;
    }
  }
#endif
  each_row(exp_shifted_scalar, out, in, shifts, rows, n, sums);
}

// The longest rows each build works in registers: on AVX-512 up to L1's reach (longer rows go in
// pieces, kernels/composite.cpp); on AVX2 also rows of up to 256 KiB, in L2 (one thread of an AMD EPYC:
// [64, 65536] fp32 6.1-6.4 -> 5.5 ms, [1024, 4096] 6.2-6.3 -> 5.7-5.8 ms).
constexpr int64_t kLongestRowAvx512 = 4095, kLongestRowAvx2 = 65536;

// softmax of rows in AVX-512 registers, a row at a time while it is in L1: the max (any NaN makes it
// NaN, and the row then NaN whatever the NaN); x - max, exp (evaluate(Fn::Exp)'s AVX-512 build, NaN
// canonical) and the 32 lane sums of docs/ops/softmax.md (element i into lane i % 32: registers 0, 2,
// 4, ... of the row into lanes 0-15, the odd ones into lanes 16-31; lanes past n take +0, which adds
// nothing to a sum of exps); the lane tree (lane j += lane j + w for w = 16, 8, 4, 2, 1) and the
// division. The bits are those of the passes of kernels/composite.cpp.
namespace {
#if PTO_X86
// The row max as m: NaN if any lane is NaN, else the largest lane of top.
PTO_TARGET_AVX512 inline __m512 row_max(__m512 top, __mmask16 unordered) {
  return unordered ? _mm512_set1_ps(kNaN<float>) : _mm512_set1_ps(_mm512_reduce_max_ps(top));
}

// The lane tree over the 32 lane sums (lanes 0-15 in even, 16-31 in odd), in every lane.
PTO_TARGET_AVX512 inline __m512 lane_tree(__m512 even, __m512 odd) {
  __m512 s = _mm512_add_ps(even, odd);                                         // j += j + 16
  s = _mm512_add_ps(s, _mm512_shuffle_f32x4(s, s, _MM_SHUFFLE(3, 2, 3, 2)));  // j += j + 8
  s = _mm512_add_ps(s, _mm512_shuffle_f32x4(s, s, _MM_SHUFFLE(1, 1, 1, 1)));  // j += j + 4
  s = _mm512_add_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(3, 2, 3, 2)));        // j += j + 2
  s = _mm512_add_ps(s, _mm512_permute_ps(s, _MM_SHUFFLE(1, 1, 1, 1)));        // j += j + 1
  return _mm512_broadcastss_ps(_mm512_castps512_ps128(s));
}

// A row's storage in AVX-512 registers: fp32 as it is; fp16 / bf16 widened exactly on load and rounded
// once (to nearest even) on store, in place of fp32 copies around the kernel: the bits of widening, the
// fp32 kernel and narrowing.
struct F32Lanes {
  using Storage = float;
  static constexpr bool kWide = true;
  PTO_TARGET_AVX512 static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  PTO_TARGET_AVX512 static __m512 load(const float* p, __mmask16 k, __m512 fill) { return _mm512_mask_loadu_ps(fill, k, p); }
  PTO_TARGET_AVX512 static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  PTO_TARGET_AVX512 static void store(float* p, __mmask16 k, __m512 v) { _mm512_mask_storeu_ps(p, k, v); }
};
template <class Convert>
struct HalfLanes {
  using Storage = uint16_t;
  static constexpr bool kWide = false;
  PTO_TARGET_AVX512 static __m512 load(const uint16_t* p) {
    return Convert::widened(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  PTO_TARGET_AVX512 static __m512 load(const uint16_t* p, __mmask16 k, __m512 fill) {
    return _mm512_mask_mov_ps(fill, k, Convert::widened(_mm256_maskz_loadu_epi16(k, p)));
  }
  PTO_TARGET_AVX512 static void store(uint16_t* p, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), Convert::narrowed(v));
  }
  PTO_TARGET_AVX512 static void store(uint16_t* p, __mmask16 k, __m512 v) { _mm256_mask_storeu_epi16(p, k, Convert::narrowed(v)); }
};
// softmax's results are in [0, 1] or the canonical NaN, whose code plus 0x7FFF is its own quieted code:
// half::to_bf16's nearest-even rounding needs no NaN case here, and one permute picks the codes (with
// the whole rounding a bf16 row took 1.4x an fp32 one, now 1.07x: [32768, 128], one thread).
struct Bf16UnitCodes {
  PTO_TARGET_AVX512 static __m512 widened(__m256i codes) { return half::lanes::Bf16Avx512::widened(codes); }
  PTO_TARGET_AVX512 static __m256i narrowed(__m512 v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i biased = _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), odd);
    const __m512i high_halves = _mm512_set_epi16(63, 61, 59, 57, 55, 53, 51, 49, 47, 45, 43, 41, 39, 37, 35, 33, 31, 29,
                                                 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_castsi512_si256(_mm512_permutexvar_epi16(high_halves, biased));
  }
};

// Rows of up to 32 elements (Two: more than 16): the row, its exps and the quotients in registers.
template <class IO, bool Two>
PTO_TARGET_AVX512 void softmax_short_rows_avx512(typename IO::Storage* out, const typename IO::Storage* in, int64_t rows,
                                                 int64_t n) {
  using R = Zmm<float>;
  const __m512 low = _mm512_set1_ps(-std::numeric_limits<float>::infinity()), zero = _mm512_setzero_ps();
  const __mmask16 k0 = R::lanes(n), k1 = R::lanes(std::max<int64_t>(n - 16, 0));
  for (int64_t r = 0; r < rows; ++r, in += n, out += n) {
    const __m512 x0 = IO::load(in, k0, low), x1 = Two ? IO::load(in + 16, k1, low) : low;
    const __mmask16 unordered = _mm512_cmp_ps_mask(x0, x0, _CMP_UNORD_Q) | (Two ? _mm512_cmp_ps_mask(x1, x1, _CMP_UNORD_Q) : 0);
    const __m512 m = row_max(Two ? _mm512_max_ps(x0, x1) : x0, unordered);
    const __m512 e0 = shifted_exp(x0, k0, m), e1 = Two ? shifted_exp(x1, k1, m) : zero;
    const __m512 s = lane_tree(e0, e1);
    IO::store(out, k0, _mm512_div_ps(e0, s));
    if (Two) IO::store(out + 16, k1, _mm512_div_ps(e1, s));
  }
}

// Longer rows in four passes while the row is in L1 (whole registers with plain moves, which issue
// and forward faster than masked ones): the max; the exps, stored (in the output, or for a 16-bit
// output in an fp32 row of their own); their lane sums; the division.
// The sums are taken from the stored exps, not in the exp loop, for the reason of exp_shifted_avx512.
template <class IO>
PTO_TARGET_AVX512 void softmax_rows_avx512(typename IO::Storage* out, const typename IO::Storage* in, int64_t rows,
                                           int64_t n) {
  using R = Zmm<float>;
  const __m512 low = _mm512_set1_ps(-std::numeric_limits<float>::infinity()), zero = _mm512_setzero_ps();
  const int64_t whole = n / 16 * 16;
  const __mmask16 tail = R::lanes(n - whole);
  alignas(64) float own_exps[IO::kWide ? 1 : kLongestRowAvx512 + 1];
  for (int64_t r = 0; r < rows; ++r, in += n, out += n) {
    float* exps;
    if constexpr (IO::kWide) exps = out;
    else exps = own_exps;
    __m512 top = IO::load(in + whole, tail, low);
    __mmask16 unordered = _mm512_cmp_ps_mask(top, top, _CMP_UNORD_Q);
    for (int64_t i = 0; i < whole; i += 16) {
      const __m512 x = IO::load(in + i);
      top = _mm512_max_ps(top, x);
      unordered |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    }
    const __m512 m = row_max(top, unordered);
    for (int64_t i = 0; i < whole; i += 16) _mm512_storeu_ps(exps + i, shifted_exp(IO::load(in + i), 0xFFFF, m));
    if (tail) _mm512_mask_storeu_ps(exps + whole, tail, shifted_exp(IO::load(in + whole, tail, zero), tail, m));
    __m512 even = _mm512_setzero_ps(), odd = _mm512_setzero_ps();  // the registers i / 16 even, odd
    int64_t i = 0;
    for (; i + 32 <= whole; i += 32) {
      even = _mm512_add_ps(even, _mm512_loadu_ps(exps + i));
      odd = _mm512_add_ps(odd, _mm512_loadu_ps(exps + i + 16));
    }
    if (i < whole) even = _mm512_add_ps(even, _mm512_loadu_ps(exps + i));
    if (tail) {
      __m512& sums = whole / 16 % 2 ? odd : even;
      sums = _mm512_add_ps(sums, _mm512_maskz_loadu_ps(tail, exps + whole));
    }
    const __m512 s = lane_tree(even, odd);
    for (int64_t j = 0; j < whole; j += 16) IO::store(out + j, _mm512_div_ps(_mm512_loadu_ps(exps + j), s));
    if (tail) IO::store(out + whole, tail, _mm512_div_ps(_mm512_maskz_loadu_ps(tail, exps + whole), s));
  }
}

template <class IO>
void softmax_rows_in_zmm(typename IO::Storage* out, const typename IO::Storage* in, int64_t rows, int64_t n) {
  (n <= 16   ? softmax_short_rows_avx512<IO, false>
   : n <= 32 ? softmax_short_rows_avx512<IO, true>
             : softmax_rows_avx512<IO>)(out, in, rows, n);
}

// The same in AVX2 registers: element i of a row into lane i % 32 is register k = i / 8 into the sums
// k % 4 (lanes 8 (k % 4) to 8 (k % 4) + 7). Registers move plainly, but for the tail of a call's last
// row (load_last, store_last).
// exp(x - m) in the lanes below `left` (NaN canonical), +0 in the others.
PTO_TARGET_AVX2_FMA inline __m256 shifted_exp(__m256 x, int64_t left, __m256 m) {
  const __m256 e = Ymm<float>::canonical(exp_steps<ErfcYmm>(_mm256_sub_ps(x, m)));
  return left >= 8 ? e : _mm256_and_ps(e, _mm256_castsi256_ps(Ymm<float>::lanes(left)));
}

// The row max as m in every lane: NaN if any lane of `unordered` is set, else the largest lane of top.
PTO_TARGET_AVX2 inline __m256 row_max(__m256 top, __m256 unordered) {
  top = _mm256_max_ps(top, _mm256_permute2f128_ps(top, top, 1));
  top = _mm256_max_ps(top, _mm256_permute_ps(top, _MM_SHUFFLE(1, 0, 3, 2)));
  top = _mm256_max_ps(top, _mm256_permute_ps(top, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm256_movemask_ps(unordered) ? _mm256_set1_ps(kNaN<float>) : top;
}

// The lane tree over the 32 lane sums s[0..3] (lanes 8 j to 8 j + 7 in s[j]), its total in every lane
// (a + b and b + a are the same bits, so each step may add both ways round).
PTO_TARGET_AVX2 inline __m256 lane_tree(const __m256* s) {
  __m256 t = _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));  // j += j + 16, j += j + 8
  t = _mm256_add_ps(t, _mm256_permute2f128_ps(t, t, 1));                          // j += j + 4
  t = _mm256_add_ps(t, _mm256_permute_ps(t, _MM_SHUFFLE(1, 0, 3, 2)));            // j += j + 2
  return _mm256_add_ps(t, _mm256_permute_ps(t, _MM_SHUFFLE(2, 3, 0, 1)));         // j += j + 1
}

// A row's last register, the lanes past the row included where the next row follows it: that row,
// stored after, overwrites them. Only the last row of a call loads and stores it masked (AMD
// microcodes the masked store: rows of 12, 2 threads, 3.9-5.4 ms masked, 3.1 whole).
PTO_TARGET_AVX2 inline __m256 load_last(const float* p, int64_t left, bool followed) {
  return followed ? _mm256_loadu_ps(p) : Ymm<float>::load(p, left);
}
PTO_TARGET_AVX2 inline void store_last(float* p, __m256 v, int64_t left, bool followed) {
  Ymm<float>::store(p, v, followed ? 8 : left);
}

// Rows of 9 up to 8 Regs elements: the row, its exps and the quotients in Regs registers. Rows go
// in pairs, so that one row's max and lane tree (chains of dependent shuffles) overlap the other's.
template <int Regs, int Rows>
PTO_TARGET_AVX2_FMA inline void softmax_short_rows_avx2(float* out, const float* in, int64_t n, __m256 tail_lanes, bool followed) {
  const __m256 low = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t tail = n - 8 * (Regs - 1);
  __m256 x[Rows][Regs], m[Rows], e[Rows][4];
  for (int r = 0; r < Rows; ++r) {
    for (int k = 0; k < Regs - 1; ++k) x[r][k] = _mm256_loadu_ps(in + r * n + 8 * k);
    const __m256 last = load_last(in + r * n + 8 * (Regs - 1), tail, followed || r + 1 < Rows);
    x[r][Regs - 1] = _mm256_blendv_ps(low, last, tail_lanes);
    __m256 top = x[r][0], unordered = _mm256_cmp_ps(x[r][0], x[r][0], _CMP_UNORD_Q);
    for (int k = 1; k < Regs; ++k) {
      top = _mm256_max_ps(top, x[r][k]);
      unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(x[r][k], x[r][k], _CMP_UNORD_Q));
    }
    m[r] = row_max(top, unordered);
  }
  for (int r = 0; r < Rows; ++r)
    for (int k = 0; k < 4; ++k) e[r][k] = k < Regs ? shifted_exp(x[r][k], n - 8 * k, m[r]) : _mm256_setzero_ps();
  for (int r = 0; r < Rows; ++r) {
    const __m256 s = lane_tree(e[r]);
    for (int k = 0; k < Regs - 1; ++k) Ymm<float>::store(out + r * n + 8 * k, _mm256_div_ps(e[r][k], s), 8);
    store_last(out + r * n + 8 * (Regs - 1), _mm256_div_ps(e[r][Regs - 1], s), tail, followed || r + 1 < Rows);
  }
}

template <int Regs>
PTO_TARGET_AVX2_FMA void softmax_short_rows_avx2(float* out, const float* in, int64_t rows, int64_t n) {
  const __m256 tail_lanes = _mm256_castsi256_ps(Ymm<float>::lanes(n - 8 * (Regs - 1)));
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) softmax_short_rows_avx2<Regs, 2>(out + r * n, in + r * n, n, tail_lanes, r + 2 < rows);
  if (r < rows) softmax_short_rows_avx2<Regs, 1>(out + r * n, in + r * n, n, tail_lanes, false);
}

// Longer rows in four passes while the row is in L1 or L2, as softmax_rows_avx512.
PTO_TARGET_AVX2_FMA void softmax_rows_avx2(float* out, const float* in, int64_t rows, int64_t n) {
  using R = Ymm<float>;
  const __m256 low = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const int64_t whole = n / 8 * 8, tail = n - whole;
  const __m256 tail_lanes = _mm256_castsi256_ps(R::lanes(tail));
  for (int64_t r = 0; r < rows; ++r, in += n, out += n) {
    const bool followed = r + 1 < rows;
    __m256 top = _mm256_blendv_ps(low, tail ? load_last(in + whole, tail, followed) : low, tail_lanes);
    __m256 unordered = _mm256_cmp_ps(top, top, _CMP_UNORD_Q);
    for (int64_t i = 0; i < whole; i += 8) {
      const __m256 x = _mm256_loadu_ps(in + i);
      top = _mm256_max_ps(top, x);
      unordered = _mm256_or_ps(unordered, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    }
    const __m256 m = row_max(top, unordered);
    for (int64_t i = 0; i < whole; i += 8) _mm256_storeu_ps(out + i, shifted_exp(_mm256_loadu_ps(in + i), 8, m));
    const __m256 tail_exp = tail ? shifted_exp(load_last(in + whole, tail, followed), tail, m) : _mm256_setzero_ps();
    __m256 sums[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= whole; i += 32)
      for (int j = 0; j < 4; ++j) sums[j] = _mm256_add_ps(sums[j], _mm256_loadu_ps(out + i + 8 * j));
    for (int j = 0; i < n; i += 8, ++j) sums[j] = _mm256_add_ps(sums[j], i < whole ? _mm256_loadu_ps(out + i) : tail_exp);
    const __m256 s = lane_tree(sums);
    for (int64_t j = 0; j < whole; j += 8) _mm256_storeu_ps(out + j, _mm256_div_ps(_mm256_loadu_ps(out + j), s));
    if (tail) store_last(out + whole, _mm256_div_ps(tail_exp, s), tail, followed);
  }
}
#endif
}  // namespace

bool softmax_register_rows(float* out, const float* in, int64_t rows, int64_t n) {
#if PTO_X86
  if (n > 8 && has_fma()) {
    switch (kernel_tuning().isa) {
      case Isa::Avx512:
        if (n > kLongestRowAvx512) return false;
        softmax_rows_in_zmm<F32Lanes>(out, in, rows, n);
        return true;
      case Isa::Avx2:
        if (n > kLongestRowAvx2) return false;
        (n <= 16 ? softmax_short_rows_avx2<2> : n <= 24 ? softmax_short_rows_avx2<3> : n <= 32 ? softmax_short_rows_avx2<4> : softmax_rows_avx2)(out, in, rows, n);
        return true;
      default: break;
    }
  }
#endif
  return false;
}

bool softmax_half_register_rows(DType dtype, int64_t n) {
#if PTO_X86
  return (dtype == DType::FP16 || dtype == DType::BF16) && n > 8 && n <= kLongestRowAvx512 && has_fma() &&
         kernel_tuning().isa == Isa::Avx512;
#else
  return false;
#endif
}

void softmax_register_rows(uint16_t* out, const uint16_t* in, DType dtype, int64_t rows, int64_t n) {
#if PTO_X86
  if (dtype == DType::FP16) softmax_rows_in_zmm<HalfLanes<half::lanes::Avx512>>(out, in, rows, n);
  else softmax_rows_in_zmm<HalfLanes<Bf16UnitCodes>>(out, in, rows, n);
#endif
}

void integral(Rounding r, float* out, const float* in, int64_t n) { round_to_integral(r, out, in, n); }

void integral(Rounding r, double* out, const double* in, int64_t n) { round_to_integral(r, out, in, n); }

}  // namespace pto::kernels::math
