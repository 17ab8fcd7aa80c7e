// The cube unit's products on the CPU (docs/ops/matmul.md): fp16 / bf16 / fp8 / fp32 operands
// widened to fp32 and multiplied by oneDNN's sgemm (fp32 accumulation), int8 operands by its
// s8s8s32 GEMM (exact int32 accumulation), then the fixpipe's steps on write-out: ReLU, the
// 19-bit dequant / quant scale, one rounding to the output dtype. No checks, no exceptions.
//
// Thread-count invariance: floating outputs are cut into blocks whose size depends on the problem's
// shape only; each block is one single-threaded library call over the whole K (or over the same
// split-K pieces), so every output element is summed in the same order whichever thread computes
// its block and however many threads there are. int8 sums are exact in any order: their blocks are
// one per thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/inline_vector.h"
#include "ptocpu/dtype.h"
#include "ptocpu/modes.h"

namespace pto::kernels::matmul {

// Byte offsets, one per output batch (inline for a few: most products have one batch).
using Offsets = InlineVector<int64_t, 4>;

// A matrix operand [rows, cols] as the product reads it (a transpose flag is folded into the
// strides): element (r, c) of batch i is at data + offsets[i] + (r * row_stride + c * col_stride)
// * itemsize. offsets are in bytes, one per output batch (broadcast batches repeat an offset).
struct Operand {
  const std::byte* data = nullptr;
  DType dtype = DType::FP32;
  Offsets offsets;
  int64_t row_stride = 0, col_stride = 0;
  // scaled_mm's MX scales (E8M0, one per 32 elements along K, shared by every batch): element
  // (r, c) of A is multiplied by 2^(e - 127), e at scale + r * scale_row + (c / 32) * scale_k
  // bytes; for B, whose K runs along its rows, element (k, n) by the e at
  // scale + n * scale_row + (k / 32) * scale_k. nullptr: none.
  const std::byte* scale = nullptr;
  int64_t scale_row = 0, scale_k = 0;
};

// A per-column vector (bias, per-channel scale): element n of batch i at data + offsets[i] +
// n * stride * itemsize. data == nullptr: none.
struct Column {
  const std::byte* data = nullptr;
  DType dtype = DType::FP32;
  Offsets offsets;
  int64_t stride = 0;
};

struct Problem {
  int64_t batches = 1, m = 0, n = 0, k = 0;
  Operand a, b;         // a: [m, k], b: [k, n]
  Column bias;          // the accumulator's starting value (fp32, int32 for int8 operands)
  bool bias_by_row = false;  // bias element r starts every column of row r (conv: channels are rows)
  bool relu = false;
  float scale = 0;      // per-tensor fixpipe scale, already cut to 19 bits (0: none)
  Column scale_tensor;  // per-channel: the low 32 bits of each int64 / uint64 are the fp32 scale
  TransMode tf32 = TransMode::CAST_NONE;  // fp32 operands rounded to TF32 first
  int64_t split_k = 0;  // > 0: K in pieces of this length, fp32 partials added left to right
  // The output: element (r, c) of batch i at out + i * out_batch_stride + r * out_row_stride + c
  // (elements).
  std::byte* out = nullptr;
  DType out_dtype = DType::FP32;
  int64_t out_batch_stride = 0, out_row_stride = 0;
};

void run(const Problem& p);

// fp32 -> TF32 (1 sign, 8 exponent, 10 mantissa bits): CAST_RINT ties to even, CAST_ROUND ties
// away from zero; inf and NaN unchanged.
float to_tf32(float x, TransMode mode);
// The fixpipe's 19-bit scale: sign, exponent and the top 10 mantissa bits of the fp32 value.
float scale_19bit(float x);

// Which library routine computes int8 products: oneDNN's s8s8s32 GEMM where the CPU has VNNI
// (no intermediate saturation) and the kernel tuning allows AVX-512, else fp32 GEMMs over K pieces
// whose sums are exact integers.
bool int8_uses_vnni_gemm();

}  // namespace pto::kernels::matmul
