// The modes PyPTO's ops take as enums (docs/ops/elementwise.md, docs/ops/cast.md, docs/ops/matmul.md),
// with upstream's member values.
#pragma once

namespace pto {

enum class PrecisionType : int { INTRINSIC = 0, HIGH_PRECISION = 1 };
// cast's rounding: nearest-even, nearest-away, down, up, toward zero, to odd; NONE picks the pair's default.
enum class CastMode : int { CAST_NONE = 0, CAST_RINT = 1, CAST_ROUND = 2, CAST_FLOOR = 3, CAST_CEIL = 4, CAST_TRUNC = 5, CAST_ODD = 6 };
// What a cast does with a value outside the target's range: clamp (ON) or keep the low bits (OFF).
enum class SaturationMode : int { ON = 0, OFF = 1 };
enum class ReLuType : int { NO_RELU = 0, RELU = 1 };
enum class ConvReLuType : int { NO_RELU = 0, RELU = 1 };  // conv's (pypto.ConvReLuType)
// matmul's TF32 rounding of fp32 operands.
enum class TransMode : int { CAST_NONE = 0, CAST_RINT = 1, CAST_ROUND = 2 };
enum class TopKAlgo : int { MERGE_SORT = 0, RADIX_SELECT = 1 };
enum class LogBaseType : int { LOG_E = 0, LOG_2 = 1, LOG_10 = 2 };
enum class OpType : int { EQ = 0, NE = 1, LT = 2, LE = 3, GT = 4, GE = 5 };
enum class OutType : int { BOOL = 0, BIT = 1 };
enum class ReduceMode : int { ATOMIC_ADD = 0 };
enum class ScatterMode : int { NONE = 0, ADD = 1, MULTIPLY = 2 };
enum class CachePolicy : int { PREFETCH = 0, NONE_CACHEABLE = 1 };
enum class DequantScaleRoundingMode : int { ROUND_UP = 0, ROUND_DOWN = 1 };

}  // namespace pto
