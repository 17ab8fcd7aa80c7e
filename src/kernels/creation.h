// The creation family's kernels (docs/ops/full.md, arange.md, one_hot.md, random.md): constant
// fills, the device's tiled range, one-hot rows and the Philox4x32-10 random stream. Outputs are
// new contiguous tensors written in L1-sized chunks by every thread, with streaming stores when
// they are large. No checks, no exceptions: the ops checked everything.
#pragma once
#include <array>
#include <cstdint>

#include "ptocpu/tensor.h"

namespace pto::kernels::creation {

// Every element of out (contiguous) becomes the element at `value` (out.itemsize() bytes).
void fill(const Tensor& out, const void* value);

// out (1-D contiguous FP32) = the device's range in tiles of `tile` elements (the last one may be
// shorter). In a tile of N elements starting at element t0, with base = start + step * t0:
// e[j] = base + step * j for j < 8; e[j] = e[j - 8] + 8 * step for 8 <= j < 64;
// e[j] = e[j - 64] + 64 * step from j = 64 on. Every operation rounds to fp32.
void arange_f32(const Tensor& out, float start, float step, int64_t tile);
// out (1-D contiguous INT32) = start + i * step (exact: every value lies between start and end).
void arange_i32(const Tensor& out, int64_t start, int64_t step);

// The flat position of the first value of the contiguous integer tensor `index` outside
// [0, bound), or -1 when there is none.
int64_t first_outside(const Tensor& index, int64_t bound);
// out (contiguous INT64, index.shape + [classes]): 1 at out[p, index[p]], 0 elsewhere. index is
// contiguous, integer, every value in [0, classes).
void one_hot(const Tensor& index, const Tensor& out);

// Philox4x32-10 (Salmon et al., SC'11): the four 32-bit words of one block for counter
// (c0, c1, c2, c3) and key (k0, k1).
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// The stream uniform and normal draw from: word i is word i % 4 of the block with counter
// (i / 4 as 64 bits, offset as 64 bits) and key (low, high) words of `key`.
struct Stream {
  uint64_t key;
  uint64_t offset;
};
// words[j] = word first + j of the stream, j < n; first a multiple of 4.
void philox_words(const Stream& stream, int64_t first, int64_t n, uint32_t* words);

// out (contiguous FP32 / FP16 / BF16): element i from word i, in [0, 1): fp32 (w & 0x7FFFFF) * 2^-23,
// fp16 (w & 0x3FF) * 2^-10, bf16 (w & 0x7F) * 2^-7 (the device's mantissa fill minus one).
void uniform(const Tensor& out, const Stream& stream);
// out (contiguous FP32 / FP16 / BF16): Box-Muller on the fp32 uniform stream, pair k = (u[2k], u[2k+1])
// giving r sin t and r cos t, r = sqrt(-2 ln max(u[2k], 1e-7)), t = 2 pi u[2k+1]; each step one
// fp32 rounding, then one rounding to fp16 / bf16. An odd count drops the last cosine.
void normal(const Tensor& out, const Stream& stream);
// The transform alone, for n pairs (the tests reach it with chosen uniforms).
void box_muller(const float* uniforms, float* out, int64_t pairs);

}  // namespace pto::kernels::creation
