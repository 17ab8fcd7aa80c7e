#include "ptocpu/platform.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "ptocpu/error.h"

namespace pto {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// docs/platforms.md, one row per platform, in PlatformId order. Buffer sizes are the chips'
// documented capacities (docs/platforms.md#chip-facts): UB, then the cube's L0A, L0B, L0C, L1,
// bias table and fixpipe buffer, as upstream's simulation configs give them (A2A3.ini,
// 950PR_958x.ini; 950DT has the same values).
std::vector<Platform> build_tables() {
  Platform cpu{PlatformId::Cpu, "cpu", "host", {"host"}, 0, std::numeric_limits<int64_t>::max(), true, false};
  Platform a5{PlatformId::Ascend950, "ascend950", "DAV_3510", {"950", "DAV_3510", "ascend_950"}, 253952, kInt32Max,
              false, true, 65536, 65536, 262144, 524288, 4096, 4096};
  Platform a3{PlatformId::AtlasA3, "atlas_a3", "DAV_2201", {"a3", "atlas-a3"}, 196608, kInt32Max, false, true,
              65536, 65536, 131072, 524288, 1024, 2048};
  Platform a2 = a3;
  a2.id = PlatformId::AtlasA2;
  a2.name = "atlas_a2";
  a2.aliases = {"a2", "atlas-a2"};
  return {cpu, a5, a3, a2};
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

thread_local const Platform* t_current = nullptr;

}  // namespace

const std::vector<Platform>& all_platforms() {
  static const std::vector<Platform> tables = build_tables();
  return tables;
}

const Platform& find_platform(std::string_view name) {
  const std::string key = lower(name);
  std::string names;
  for (const Platform& p : all_platforms()) {
    if (key == p.name) return p;
    for (const std::string& a : p.aliases)
      if (key == lower(a)) return p;
    names += (names.empty() ? "" : ", ") + p.name;
    for (const std::string& a : p.aliases) names += " (" + a + ")";
  }
  fail<ArgumentError>("set_platform: unknown platform '", name, "'; expected one of ", names);
}

const Platform& current_platform() {
  if (!t_current) t_current = &all_platforms().front();
  return *t_current;
}

void set_platform(std::string_view name) { t_current = &find_platform(name); }

}  // namespace pto
