// Tile rules shared by every op (docs/kernel_model.md): rank checks and the UB budget.
#pragma once
#include <initializer_list>
#include <span>
#include <string>

#include "ptocpu/tensor.h"

namespace pto::tiling {

// One UB buffer of an op: a tile over a tensor of extent `extent`, `elem_bytes` per element.
struct Buffer {
  const char* what;  // "output tile", "index tile", ...
  Shape extent;      // the tensor the tile is clipped to (tile dims past it are clipped)
  size_t elem_bytes;
  int64_t copies = 1;
  Shape tile = {};  // this buffer's own tile when it is not the op's (e.g. an axis read whole)
};

// prod(t[:-1]) * roundup(t[-1] * elem_bytes, 32), t = tile clipped to extent per dim.
int64_t buffer_bytes(const Shape& tile, const Buffer& buffer);

// TileError unless rank(tile) == rank.
void check_rank(const char* op, const Shape& tile, int rank, const char* of_what);
// TileError unless rank(tile) >= rank (ops that tile with the first `rank` dims).
void check_min_rank(const char* op, const Shape& tile, int rank, const char* of_what);
// As the device's tiling loops read a tile shape: one dim per output dim from the front, the rest
// ignored. The first `rank` dims of `tile` (a TileError, as check_min_rank, when it has fewer).
Shape leading_tile(const char* op, const Shape& tile, int rank, const char* of_what);

// Starts this thread's record of an op's UB use (last_ub_use); add each buffer with note_ub_buffer.
void begin_ub_use(const char* op, int64_t limit);
void note_ub_buffer(const char* what, int64_t bytes);

// TileError unless the buffers fit the current platform's UB; the message names the op,
// the tile, each buffer's bytes, the total and the limit.
void check_ub(const char* op, const Shape& tile, std::span<const Buffer> buffers);
inline void check_ub(const char* op, const Shape& tile, std::initializer_list<Buffer> buffers) {
  check_ub(op, tile, std::span<const Buffer>(buffers.begin(), buffers.size()));
}

}  // namespace pto::tiling
