#include "ptocpu/tiling.h"

#include <algorithm>
#include <sstream>

#include "ptocpu/error.h"
#include "ptocpu/platform.h"
#include "tiling/tile_rules.h"

namespace pto {
namespace {
thread_local std::vector<int64_t> t_tile;
thread_local UbUse t_ub_use;
}

void set_vec_tile_shapes(const std::vector<int64_t>& dims) {
  if (dims.empty()) fail<TileError>("set_vec_tile_shapes: needs at least one dim, got none");
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] <= 0)
      fail<TileError>("set_vec_tile_shapes: dim ", i, " is ", dims[i], " in ", shape_to_string(dims),
                      "; every dim must be > 0");
  t_tile = dims;
}

const std::vector<int64_t>& get_vec_tile_shapes() { return t_tile; }
void reset_vec_tile_shapes() { t_tile.clear(); }

const UbUse& last_ub_use() { return t_ub_use; }
void clear_ub_use() { t_ub_use.op = nullptr; }

namespace tiling {

int64_t buffer_bytes(const Shape& tile, const Buffer& buffer) {
  const size_t n = tile.size();
  if (n == 0) return 0;
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < n; ++i) rows *= std::min(tile[i], buffer.extent[i]);
  const int64_t last = std::min(tile[n - 1], buffer.extent[n - 1]) * static_cast<int64_t>(buffer.elem_bytes);
  return rows * ((last + 31) / 32 * 32) * buffer.copies;
}

void begin_ub_use(const char* op, int64_t limit) {
  t_ub_use.op = op;
  t_ub_use.limit = limit;
  t_ub_use.total = 0;
  t_ub_use.buffers.clear();  // keeps its capacity: no allocation per call
}

void note_ub_buffer(const char* what, int64_t bytes) {
  t_ub_use.buffers.push_back({what, bytes});
  t_ub_use.total += bytes;
}

void check_rank(const char* op, const Shape& tile, int rank, const char* of_what) {
  if (static_cast<int>(tile.size()) != rank)
    fail<TileError>(op, ": tile shape ", shape_to_string(tile), " has rank ", tile.size(), " but the ", of_what,
                    " has rank ", rank, "; set_vec_tile_shapes needs one dim per ", of_what, " dim");
}

void check_min_rank(const char* op, const Shape& tile, int rank, const char* of_what) {
  if (static_cast<int>(tile.size()) < rank)
    fail<TileError>(op, ": tile shape ", shape_to_string(tile), " has rank ", tile.size(), " but the ", of_what,
                    " has rank ", rank, "; set_vec_tile_shapes needs at least one dim per ", of_what, " dim");
}

Shape leading_tile(const char* op, const Shape& tile, int rank, const char* of_what) {
  check_min_rank(op, tile, rank, of_what);
  return Shape(tile.begin(), tile.begin() + rank);
}

void check_ub(const char* op, const Shape& tile, std::span<const Buffer> buffers) {
  const Platform& platform = current_platform();
  if (platform.ub_bytes == 0) return;
  begin_ub_use(op, platform.ub_bytes);
  int64_t total = 0;
  std::ostringstream parts;
  for (const Buffer& b : buffers) {
    const int64_t bytes = buffer_bytes(b.tile.empty() ? tile : b.tile, b);
    parts << (total || parts.tellp() > 0 ? " + " : "") << b.what << ' ' << bytes;
    total += bytes;
    note_ub_buffer(b.what, bytes);
  }
  if (total > platform.ub_bytes)
    fail<TileError>(op, ": tile shape ", shape_to_string(tile), " needs ", total, " UB bytes (", parts.str(),
                    ") but platform ", platform.name, " has ", platform.ub_bytes,
                    " UB bytes; choose a smaller tile with set_vec_tile_shapes");
}

}  // namespace tiling
}  // namespace pto
