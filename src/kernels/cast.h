// The conversions of cast and Tensor.astype (docs/ops/cast.md, docs/dtypes.md#conversions): every
// dtype to every dtype, with a rounding and a saturation rule. Common pairs run vectorised (fp16
// through F16C, the narrow floats through core/minifloat.h's branch-free encoders, integers through
// plain loops the compiler vectorises, one clone per ISA); every other pair takes an exact path
// through double / 128-bit integers. Both give the same bits (tests/cpp/test_cast.cpp), on every
// ISA and thread count. No checks, no exceptions: the ops checked everything.
#pragma once
#include "ptocpu/dtype.h"
#include "ptocpu/tensor.h"

namespace pto::kernels::cast {

struct Rule {
  Round round = Round::NearestEven;
  // Float -> integer and integer -> integer: a value beyond the target's range clamps to it
  // (NaN gives 0); without, the value rounded to an integer (clamped to +-2^127, NaN 0) keeps
  // its low bits. Float -> a float narrower than fp32: overflow and inf give the largest finite
  // value. A NaN stays a NaN with its sign (fp16 / bf16 / fp32 / fp64: and its top payload bits,
  // quieted as the CPU's conversions do).
  bool saturate = false;
  // Float -> the same float dtype: round to an integral value (fp32 -> fp32 with a mode).
  bool to_integral = false;
};

// out (new, contiguous, in's shape) = in converted element by element. Neither is an X2 pair.
void convert(const Tensor& in, const Tensor& out, Rule rule);

// out [..., 2n] (a float dtype, new, contiguous) = the values of the X2 pairs in [..., n]:
// element 2i is the low nibble's.
void unpack_pairs(const Tensor& in, const Tensor& out);
// out [..., n] (an X2 dtype, new, contiguous) = the pairs of in's values [..., 2n] (a float
// dtype), each rounded to the nearest 4-bit value (ties to even, saturating; NaN gives 0x7).
void pack_pairs(const Tensor& in, const Tensor& out);

// The exact conversion of one element (the vectorised paths are checked against it): src and
// dst point at one element of `from` / `to`.
void convert_element(DType from, const std::byte* src, DType to, std::byte* dst, Rule rule);

}  // namespace pto::kernels::cast
