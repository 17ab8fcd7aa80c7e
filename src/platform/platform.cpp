#include "ptocpu/platform.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include "ptocpu/error.h"

namespace pto {
namespace {

using D = DType;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// docs/platforms.md, one entry per platform. Ops are listed in the order of the Op enum.
std::vector<Platform> build_tables() {
  const DTypeSet index_select_950{D::INT8, D::INT16, D::INT32, D::UINT8, D::UINT16, D::UINT32, D::FP16,
                                  D::FP32, D::BF16, D::BOOL, D::FP8E4M3, D::FP8E5M2, D::FP8E8M0};
  const DTypeSet index_select_a2{D::INT8, D::INT16, D::INT32, D::UINT8, D::UINT16, D::UINT32,
                                 D::FP16, D::FP32, D::BF16};
  const DTypeSet interleave_950{D::INT8, D::UINT8, D::INT16, D::UINT16, D::INT32, D::UINT32,
                                D::FP16, D::FP32, D::BF16};
  const DTypeSet scatter_ascend{D::FP32, D::FP16, D::BF16, D::INT8, D::UINT8, D::INT16, D::INT32};
  const DTypeSet strided_slice_ascend{D::INT8, D::UINT8, D::INT32, D::INT64, D::FP16, D::FP32, D::BF16};
  const DTypeSet gather_ascend{D::FP32, D::FP16, D::BF16, D::INT32, D::UINT32, D::INT16, D::UINT16};
  const DTypeSet scatter_update_ascend{D::INT8, D::INT16, D::INT32, D::FP16, D::FP32, D::BF16};
  const DTypeSet index_add_ascend{D::FP32, D::FP16, D::BF16, D::INT32, D::INT16, D::INT8};
  const DTypeSet gathermask_ascend{D::FP32, D::FP16, D::BF16, D::INT32, D::INT16, D::UINT16, D::UINT32};
  // index_add_ adds: no BOOL, no fp8 anywhere.
  const DTypeSet index_add_cpu = DTypeSet::all().without({D::BOOL, D::FP8E4M3, D::FP8E5M2, D::FP8E8M0});

  Platform cpu{"cpu", "host", {"host"}, 0, std::numeric_limits<int64_t>::max(), true, false, {}};
  cpu.ops[int(Op::StridedSlice)].min_rank = 0;
  cpu.ops[int(Op::ScatterUpdate)] = {true, DTypeSet::all(), 2, 4};  // rank 2 or 4 (3 is refused by the op)
  cpu.ops[int(Op::IndexAdd)].dtypes = index_add_cpu;

  Platform a5{"ascend950", "DAV_3510", {"950", "DAV_3510", "ascend_950"}, 253952, kInt32Max, false, true, {}};
  a5.ops[int(Op::IndexSelect)] = {true, index_select_950, 1, 4, 2, 8};
  a5.ops[int(Op::Interleave)] = {true, interleave_950, 1, 4};
  a5.ops[int(Op::Deinterleave)] = {true, interleave_950, 1, 4};
  a5.ops[int(Op::Scatter)] = {true, scatter_ascend, 1, 4};
  a5.ops[int(Op::StridedSlice)] = {true, strided_slice_ascend, 0, 8};
  a5.ops[int(Op::Gather)] = {true, gather_ascend, 1, 5};
  a5.ops[int(Op::ScatterUpdate)] = {true, scatter_update_ascend, 2, 4};
  a5.ops[int(Op::IndexAdd)] = {true, index_add_ascend, 1, 5};
  a5.ops[int(Op::GatherMask)] = {true, gathermask_ascend, 1, 4};

  Platform a3{"atlas_a3", "DAV_2201", {"a3", "atlas-a3"}, 196608, kInt32Max, false, true, {}};
  a3.ops[int(Op::IndexSelect)] = {true, index_select_a2, 1, 4, 2, 8};
  a3.ops[int(Op::Interleave)] = {false, {}, 1, 4};
  a3.ops[int(Op::Deinterleave)] = {false, {}, 1, 4};
  a3.ops[int(Op::Scatter)] = {true, scatter_ascend, 1, 4};
  a3.ops[int(Op::StridedSlice)] = {true, strided_slice_ascend, 0, 8};
  a3.ops[int(Op::Gather)] = {true, gather_ascend, 1, 5};
  a3.ops[int(Op::ScatterUpdate)] = {true, scatter_update_ascend, 2, 4};
  a3.ops[int(Op::IndexAdd)] = {true, index_add_ascend, 1, 5};
  a3.ops[int(Op::GatherMask)] = {true, gathermask_ascend, 1, 4};

  Platform a2 = a3;
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

const char* op_name(Op op) {
  static const char* names[kNumOps] = {"index_select", "interleave", "deinterleave", "scatter_", "strided_slice",
                                       "gather", "scatter_update", "index_add_", "gathermask"};
  return names[static_cast<int>(op)];
}

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

const OpLimits& require_offered(Op op) {
  const Platform& platform = current_platform();
  const OpLimits& limits = platform.limits(op);
  if (!limits.offered) {
    std::string where;
    for (const Platform& p : all_platforms())
      if (p.limits(op).offered) where += (where.empty() ? "" : ", ") + p.name + " (" + p.arch + ")";
    fail<UnsupportedError>(op_name(op), ": not offered on platform ", platform.name, " (", platform.arch,
                           "); it is offered on ", where);
  }
  return limits;
}

}  // namespace pto
