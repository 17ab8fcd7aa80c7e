// The reductions and scans (docs/ops/reduction.md): one axis of a tensor of any strides is
// reduced (sum, prod, max, min, argmax, argmin) or scanned (cumsum, cumprod) in an order that is a
// fixed function of the shape and the layout, never of the thread count or the instruction set.
// Kernels never throw: the op checked everything before.
#pragma once
#include <cstdint>

#include "ptocpu/tensor.h"

namespace pto::kernels::reduction {

enum class Op : uint8_t { Sum, Prod, Max, Min, ArgMax, ArgMin };

// What a sum adds instead of the input's values: var's two steps, in the compute type.
enum class Transform : uint8_t {
  None,
  Scaled,             // x / divisor
  SquaredDeviation,   // ((x - center) * (x - center)) / divisor
};

struct Reduce {
  Tensor input;  // any strides
  int dim = 0;
  // input's shape with shape[dim] = 1, contiguous. Its dtype: the input's (sum, prod, max, min;
  // one rounding from the fp32 / fp64 accumulator), DT_INT32 (argmax, argmin), or, for a sum with a
  // transform, any float dtype whose compute type is the input's.
  Tensor out;
  Op op = Op::Sum;
  Transform transform = Transform::None;  // Sum of a float input only
  double divisor = 1;                     // rounded to the compute type
  Tensor center;  // SquaredDeviation: the compute type's dtype, viewed at out's shape
};
void reduce(const Reduce& r);

struct Scan {
  Tensor input;  // any strides
  int dim = 0;
  // input's shape, contiguous: the input's dtype for floats (one rounding from fp32 / fp64), DT_INT64
  // for integers (accumulated in int32 with wrap-around, then widened; int64 in int64).
  Tensor out;
  bool product = false;
};
void scan(const Scan& s);

// The fixed blocking of the reduced / scanned axis (docs/ops/reduction.md#order).
inline constexpr int64_t kLanes = 32;       // lanes of a contiguous axis
inline constexpr int64_t kChunk = 4096;     // elements of a contiguous axis per chunk
inline constexpr int64_t kRowBlock = 128;   // rows of a strided axis per block
inline constexpr int64_t kScanBlock = 4096; // elements per scan block

}  // namespace pto::kernels::reduction
