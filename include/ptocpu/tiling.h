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
