// Argument checks shared by the ops' validate functions. Each throws the docs/errors.md error with
// a message naming the op, the parameter, the value and what is allowed.
#pragma once
#include <cstdint>
#include <string>

#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"
#include "ptocpu/tensor.h"

namespace pto::checks {

// The rules every platform shares: the cpu platform (every other table only narrows it) with
// no tile shape. A shape computed inside this scope holds on every platform and tile shape.
class EveryPlatformScope {
  PlatformScope platform_{"cpu"};
  TileShapeScope tiles_{{}};
  NoCubeTileScope cube_tiles_;
  NoConvTileScope conv_tiles_;
};

void check_dtype(const char* op, const char* param, DType dt, DTypeSet allowed);
void check_same_dtype(const char* op, const char* param, DType got, const char* other_param, DType expected);
void check_index_dtype(const char* op, const char* param, DType dt);  // int32 / int64
void check_rank(const char* op, const char* param, int rank, int min_rank, int max_rank);
// The platform's extent limit on every dim and the numel; its empty-input rule when is_input.
void check_extent(const char* op, const char* param, const Shape& shape, bool is_input);
// ArgumentError unless `input`, which op writes in place, is writable memory whose elements
// all have distinct addresses; `alternative` ends the message, e.g. "use scatter".
void check_writable_in_place(const char* op, const Tensor& input, const char* alternative);
// The tensor an op writes: input itself (in place) or a new copy of it.
Tensor written_tensor(const Tensor& input, bool in_place);
// t, or a copy of it when it shares memory with `written`: an op that reads t and writes
// `written` then sees t as it was before the first write.
Tensor unaliased(const Tensor& t, const Tensor& written);
// dim in [-rank, rank) (IndexError), normalised to [0, rank).
int normalize_dim(const char* op, int64_t dim, int rank);

// v rounded up to a multiple of `to` (> 0): tile and buffer alignment.
constexpr int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }
// The cube unit's fractal edge in elements (16; 32 for 1-byte dtypes): L0 / L1 tiles pad each
// axis to it (docs/ops/matmul.md#tiles).
constexpr int64_t cube_fractal(int64_t itemsize) { return itemsize == 1 ? 32 : 16; }
// The current platform is a chip (its tables and layout rules apply), not ptocpu's cpu.
bool on_chip();
// The current platform is atlas_a2 or atlas_a3 (DAV_2201), whose cube rules differ from ascend950's.
bool on_a2a3();

}  // namespace pto::checks
