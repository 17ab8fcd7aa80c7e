// The functors of the arithmetic ops (docs/ops/elementwise.md): one static apply per op over the
// compute types, run by the elementwise engine. Integer arithmetic wraps (two's complement, done in
// unsigned types: no undefined behaviour); floats follow IEEE in the compute type.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace pto::kernels::arith {

template <class T>
inline constexpr bool kNumber = !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kFloat = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool kInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Wrapping integer arithmetic: computed in an unsigned type at least as wide as unsigned int.
template <class T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
template <class T>
T wrap_add(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b)); }
template <class T>
T wrap_sub(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) - static_cast<Wide<T>>(b)); }
template <class T>
T wrap_mul(T a, T b) { return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b)); }

// c ? a : b on the bits: the compiler keeps computing both sides (with a branch it may move one
// side's floating-point work under the branch, which it then cannot vectorise)
template <class F>
F pick(bool c, F a, F b) {
  using Bits = std::conditional_t<sizeof(F) == 1, uint8_t,
               std::conditional_t<sizeof(F) == 2, uint16_t, std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>>>;
  const Bits mask = static_cast<Bits>(Bits(0) - static_cast<Bits>(c));
  return std::bit_cast<F>(static_cast<Bits>((std::bit_cast<Bits>(a) & mask) | (std::bit_cast<Bits>(b) & ~mask)));
}

// maximum's and minimum's rule: NaN where either is NaN (a + b carries it), else the larger / the
// smaller. One unordered compare tests both: GCC 12 made `a != a || b != b` two self-compares and
// three mask steps, a third of maximum's fused bf16 loop.
template <class T>
T max_or_nan(T a, T b) {
  if constexpr (kFloat<T>) return pick(__builtin_isunordered(a, b), a + b, a > b ? a : b);
  else return a > b ? a : b;
}
template <class T>
T min_or_nan(T a, T b) {
  if constexpr (kFloat<T>) return pick(__builtin_isunordered(a, b), a + b, a < b ? a : b);
  else return a < b ? a : b;
}

// A functor whose result has the compute type of its inputs.
struct SameType {
  template <class T>
  using out = T;
};
// A predicate: bool results.
struct Predicate {
  template <class T>
  using out = bool;
};

struct Add : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a, T b) {
    if constexpr (kInteger<T>) return wrap_add(a, b);
    else return a + b;
  }
};

struct Sub : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a, T b) {
    if constexpr (kInteger<T>) return wrap_sub(a, b);
    else return a - b;
  }
};

struct Mul : SameType {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a, T b) {
    if constexpr (kInteger<T>) return wrap_mul(a, b);
    else return a * b;
  }
};

// True division in a float compute type (integer inputs are loaded as fp32 by the op).
struct Div : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T a, T b) { return a / b; }
};

// maximum / minimum: a NaN in either operand gives NaN (as torch.maximum).
struct Maximum : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a, T b) { return max_or_nan(a, b); }
};
struct Minimum : SameType {
  template <class T> static constexpr bool takes = kNumber<T>;
  template <class T> static T apply(T a, T b) { return min_or_nan(a, b); }
};

// A sign op says what it does to a float's sign bit, kSignFlip (neg) or not (abs: cleared): fp16 /
// bf16 rows apply it to their codes directly (half::lanes::sign_codes), without the fp32 round trip,
// which would give the same bits.
struct Neg : SameType {
  static constexpr bool kSignFlip = true;
  template <class T> static constexpr bool takes = kNumber<T> && std::is_signed_v<T>;
  template <class T> static T apply(T a) {
    if constexpr (kInteger<T>) return wrap_sub(T(0), a);
    else return -a;
  }
};

struct Abs : SameType {
  static constexpr bool kSignFlip = false;
  template <class T> static constexpr bool takes = kNumber<T> && std::is_signed_v<T>;
  template <class T> static T apply(T a) {
    if constexpr (kInteger<T>) return a < 0 ? wrap_sub(T(0), a) : a;
    else return std::fabs(a);
  }
};

struct Reciprocal : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T a) { return T(1) / a; }
};

struct Sqrt : SameType {
  template <class T> static constexpr bool takes = kFloat<T>;
  template <class T> static T apply(T a) { return std::sqrt(a); }
};

// Comparisons: NaN compares unequal to everything (IEEE).
struct Eq : Predicate {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a, T b) { return a == b; }
};
struct Ne : Predicate {
  static constexpr bool kSignless = true;
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a, T b) { return a != b; }
};
struct Lt : Predicate {
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a, T b) { return a < b; }
};
struct Le : Predicate {
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a, T b) { return a <= b; }
};
struct Gt : Predicate {
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a, T b) { return a > b; }
};
struct Ge : Predicate {
  template <class T> static constexpr bool takes = true;
  template <class T> static bool apply(T a, T b) { return a >= b; }
};

}  // namespace pto::kernels::arith
