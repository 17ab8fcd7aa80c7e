// The cube tile shape, the conv tile shape and the matrix size (ptocpu/tiling.h), per thread.
#include "ptocpu/error.h"
#include "ptocpu/tiling.h"

namespace pto {
namespace {
thread_local CubeTile t_cube_tile;
thread_local ConvTile t_conv_tile;
thread_local std::vector<int64_t> t_matrix_size;
}  // namespace

void set_cube_tile_shapes(const std::vector<int64_t>& m, const std::vector<int64_t>& k, const std::vector<int64_t>& n,
                          bool enable_split_k) {
  if (m.size() != 2) fail<TileError>("set_cube_tile_shapes: m must have exactly 2 elements, got ", m.size());
  if (n.size() != 2) fail<TileError>("set_cube_tile_shapes: n must have exactly 2 elements, got ", n.size());
  if (k.size() != 2 && k.size() != 3) fail<TileError>("set_cube_tile_shapes: k must have 2 or 3 elements, got ", k.size());
  CubeTile tile{m, k, n, enable_split_k};
  if (tile.k.size() == 2) tile.k.push_back(tile.k[1]);
  t_cube_tile = std::move(tile);
}

const CubeTile& get_cube_tile_shapes() { return t_cube_tile; }
void reset_cube_tile_shapes() { t_cube_tile = {}; }
void restore_cube_tile_shapes(const CubeTile& tile) { t_cube_tile = tile; }

void set_conv_tile_shapes(const std::vector<int64_t>& l1, const std::vector<int64_t>& l0) {
  if (l1.size() != 8)
    fail<TileError>("set_conv_tile_shapes: tile_l1_info must have 8 values (tileHin, tileHout, tileWin, tileWout, "
                    "tileCinFmap, tileCinWeight, tileN, tileBatch), got ", l1.size());
  if (!l0.empty() && l0.size() != 4)
    fail<TileError>("set_conv_tile_shapes: tile_l0_info must have 4 values (tileH, tileW, tileK, tileN), got ",
                    l0.size());
  t_conv_tile = {l1, l0, !l0.empty()};
}

const ConvTile& get_conv_tile_shapes() { return t_conv_tile; }
void reset_conv_tile_shapes() { t_conv_tile = {}; }
void restore_conv_tile_shapes(const ConvTile& tile) { t_conv_tile = tile; }

void set_matrix_size(const std::vector<int64_t>& size) { t_matrix_size = size; }
const std::vector<int64_t>& get_matrix_size() { return t_matrix_size; }

}  // namespace pto
