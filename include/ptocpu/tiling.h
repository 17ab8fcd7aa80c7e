// The vector tile shape of the PyPTO programming model (docs/kernel_model.md), stored per thread.
// With no tile shape set, ops choose their own tiling and no tile rule applies.
#pragma once
#include <cstdint>
#include <vector>

#include "ptocpu/tensor.h"

namespace pto {

void set_vec_tile_shapes(const std::vector<int64_t>& dims);  // >= 1 dim, each > 0, else TileError
const std::vector<int64_t>& get_vec_tile_shapes();          // empty when none is set
void reset_vec_tile_shapes();

// Sets the tile shape for the current scope (empty dims: none) and restores the previous one.
class TileShapeScope {
 public:
  explicit TileShapeScope(const std::vector<int64_t>& dims) : previous_(get_vec_tile_shapes()) {
    if (dims.empty()) reset_vec_tile_shapes();
    else set_vec_tile_shapes(dims);
  }
  ~TileShapeScope() {
    if (previous_.empty()) reset_vec_tile_shapes();
    else set_vec_tile_shapes(previous_);
  }
  TileShapeScope(const TileShapeScope&) = delete;
  TileShapeScope& operator=(const TileShapeScope&) = delete;

 private:
  std::vector<int64_t> previous_;
};

// The cube tile shape of matmul-like ops (docs/ops/matmul.md#tiles), stored per thread like the
// vector tile shape: m = [mL0, mL1], k = [kL0, kAL1, kBL1] (a 2-entry k means kBL1 = kAL1),
// n = [nL0, nL1]. Only the list lengths are checked when it is set (TileError); the values are
// checked by each op against its operands, as the device does.
struct CubeTile {
  std::vector<int64_t> m, k, n;  // k padded to 3 entries
  bool enable_split_k = false;
  bool operator==(const CubeTile&) const = default;
};
void set_cube_tile_shapes(const std::vector<int64_t>& m, const std::vector<int64_t>& k, const std::vector<int64_t>& n,
                          bool enable_split_k = false);
const CubeTile& get_cube_tile_shapes();  // empty lists when none is set
void reset_cube_tile_shapes();
// Puts back a cube tile as get_cube_tile_shapes returned it (empty lists: none); not checked again.
void restore_cube_tile_shapes(const CubeTile& tile);
// The conv tile of pypto.conv (docs/ops/conv.md#tiles), stored per thread like the cube tile:
// l1 = PyPTO's TileL1Info [tileHin, tileHout, tileWin, tileWout, tileCinFmap, tileCinWeight, tileN,
// tileBatch], l0 = its TileL0Info [tileH, tileW, tileK, tileN] (empty when set_l0 is false: the L0
// rules are then not checked). Only the list lengths are checked when it is set (TileError); conv
// checks the values against its operands, as the device does.
struct ConvTile {
  std::vector<int64_t> l1, l0;
  bool set_l0 = false;
  bool operator==(const ConvTile&) const = default;
};
// An empty l0 sets set_l0 false.
void set_conv_tile_shapes(const std::vector<int64_t>& l1, const std::vector<int64_t>& l0);
const ConvTile& get_conv_tile_shapes();  // empty lists when none is set
void reset_conv_tile_shapes();
// Puts back a conv tile as get_conv_tile_shapes returned it (empty lists: none); not checked again.
void restore_conv_tile_shapes(const ConvTile& tile);

// Clears a per-thread tile setting (the cube or the conv tile) for the current scope and restores
// the previous one.
template <class Tile, const Tile& (*get)(), void (*restore)(const Tile&)>
class ClearedTileScope {
 public:
  ClearedTileScope() : previous_(get()) { restore(Tile{}); }
  ~ClearedTileScope() { restore(previous_); }
  ClearedTileScope(const ClearedTileScope&) = delete;
  ClearedTileScope& operator=(const ClearedTileScope&) = delete;

 private:
  Tile previous_;
};
using NoCubeTileScope = ClearedTileScope<CubeTile, get_cube_tile_shapes, restore_cube_tile_shapes>;
using NoConvTileScope = ClearedTileScope<ConvTile, get_conv_tile_shapes, restore_conv_tile_shapes>;

// set_matrix_size([m, k, n]): the original sizes of NZ operands reshaped before a matmul. Kept for
// the current thread; the CPU stores every tensor ND, so nothing reads it.
void set_matrix_size(const std::vector<int64_t>& size);
const std::vector<int64_t>& get_matrix_size();

// The UB use of the last op call on this thread that checked its tile against a platform's UB
// (docs/tracing.md): the op, the limit, the total and each buffer. Tracing clears it before an op
// and reads it after; an op that ran no UB check leaves it cleared (op == nullptr).
struct UbBuffer {
  const char* what;
  int64_t bytes;
};
struct UbUse {
  const char* op = nullptr;
  int64_t limit = 0;
  int64_t total = 0;
  std::vector<UbBuffer> buffers;
};
const UbUse& last_ub_use();
void clear_ub_use();

}  // namespace pto
