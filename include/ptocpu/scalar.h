// Python-style scalars and their conversion to an element of a dtype (docs/ops/scatter.md):
// floats round to nearest even (overflow gives +-inf); integers truncate toward zero and a
// value outside the integer dtype's range is an ArgumentError; BOOL takes 0 / 1 / True / False.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "ptocpu/dtype.h"
#include "ptocpu/tensor.h"

namespace pto {

struct Scalar {
  enum class Kind { Bool, Int, Float };
  Kind kind = Kind::Int;
  __int128 i = 0;  // Bool and Int (covers int64 and uint64)
  double f = 0;    // Float
  // PyPTO's Element(dtype, value): a scalar of that dtype, which must then agree with the tensor
  // it meets (docs/ops/elementwise.md#scalars); nullopt for a plain Python number.
  std::optional<DType> dtype = std::nullopt;

  static Scalar of_bool(bool v) { return {Kind::Bool, v, 0}; }
  static Scalar of_int(__int128 v) { return {Kind::Int, v, 0}; }
  static Scalar of_float(double v) { return {Kind::Float, 0, v}; }
  std::string to_string() const;
};

// Writes the element (dtype_size(dt) bytes) to out; `op` and `param` name the error.
void encode_scalar(const Scalar& s, DType dt, void* out, const char* op, const char* param);
// Reads one element as double (NaN / inf kept).
double element_to_double(DType dt, const void* element);

// A copy of t converted to `to` (src/ops/cast.cpp, with cast's conversions). Supported when either
// dtype is floating: floats round to nearest even (HF8 ties away), once; a float to an integer
// truncates and saturates (NaN gives 0).
Tensor astype(const Tensor& t, DType to);

}  // namespace pto
