// Platforms (docs/platforms.md): one row of chip facts per platform, and a thread-local current one.
// Each op's own limits per platform are rows of its op-table entry (ptocpu/op_table.h); no op
// branches on a platform name.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ptocpu/op_table.h"

namespace pto {

struct Platform {
  PlatformId id;
  std::string name;                  // canonical: cpu, ascend950, atlas_a3, atlas_a2
  std::string arch;                  // DAV_3510, DAV_2201, host
  std::vector<std::string> aliases;  // other accepted names
  int64_t ub_bytes;                  // unified-buffer bytes for tile checks; 0 = no limit
  int64_t max_extent;                // largest numel and dim of any input or output
  bool empty_inputs_allowed;
  bool scatter_scalar_must_be_finite;  // scatter_'s scalar src finite after conversion
  // The cube unit's buffers (docs/ops/matmul.md#tiles); 0 = no limit. The fixpipe buffer holds
  // a per-channel scale_tensor's tile (8 bytes per column).
  int64_t l0a_bytes = 0, l0b_bytes = 0, l0c_bytes = 0, l1_bytes = 0, bias_table_bytes = 0, fixpipe_bytes = 0;
};

const std::vector<Platform>& all_platforms();
// Accepts the canonical names and the aliases; ArgumentError listing them otherwise.
const Platform& find_platform(std::string_view name);
const Platform& current_platform();
void set_platform(std::string_view name);

// Sets the platform for the current scope and restores the previous one.
class PlatformScope {
 public:
  explicit PlatformScope(std::string_view name) : previous_(current_platform().name) { set_platform(name); }
  ~PlatformScope() { set_platform(previous_); }
  PlatformScope(const PlatformScope&) = delete;
  PlatformScope& operator=(const PlatformScope&) = delete;

 private:
  std::string previous_;
};

}  // namespace pto
