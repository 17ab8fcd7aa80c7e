// Platforms (docs/platforms.md): one table of limits per platform, and a thread-local current one.
// Validation reads these tables; no op branches on a platform name.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ptocpu/dtype.h"

namespace pto {

enum class Op { IndexSelect, Interleave, Deinterleave, Scatter, StridedSlice, Gather, ScatterUpdate, IndexAdd, GatherMask };
inline constexpr int kNumOps = 9;
const char* op_name(Op op);

struct OpLimits {
  bool offered = true;
  DTypeSet dtypes = DTypeSet::all();  // input dtypes
  int min_rank = 1, max_rank = 8;     // input rank
  int index_max_rank = 8;             // index_select: index rank
  int output_max_rank = 8;            // index_select: output rank
};

struct Platform {
  std::string name;                  // canonical: cpu, ascend950, atlas_a3, atlas_a2
  std::string arch;                  // DAV_3510, DAV_2201, host
  std::vector<std::string> aliases;  // other accepted names
  int64_t ub_bytes;                  // unified-buffer bytes for tile checks; 0 = no limit
  int64_t max_extent;                // largest numel and dim of any input or output
  bool empty_inputs_allowed;
  bool scatter_scalar_must_be_finite;  // scalar src finite after conversion
  OpLimits ops[kNumOps];

  const OpLimits& limits(Op op) const { return ops[static_cast<int>(op)]; }
};

const std::vector<Platform>& all_platforms();
// Accepts the canonical names and the aliases; ArgumentError listing them otherwise.
const Platform& find_platform(std::string_view name);
const Platform& current_platform();
void set_platform(std::string_view name);
// UnsupportedError (naming the platforms that offer it) unless the current platform offers
// op; else its limits. Every op calls this before it looks at any argument.
const OpLimits& require_offered(Op op);

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
