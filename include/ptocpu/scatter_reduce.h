// scatter_'s reduce argument, parsed once from its name (docs/ops/scatter.md).
#pragma once
#include <string_view>

namespace pto {

enum class ScatterReduce { None, Add, Multiply };
// "add" / "multiply"; any other name is an ArgumentError naming op and the value.
ScatterReduce scatter_reduce_from_name(std::string_view name, const char* op = "scatter_");

}  // namespace pto
