// Tensor storage. Large blocks are kept in a small cache when freed, so a repeated op
// reuses memory that is already mapped instead of page-faulting a fresh output every call.
#pragma once
#include <cstddef>
#include <memory>

namespace pto {

// 64-byte aligned (2 MiB aligned, transparent-huge-page advised, for large blocks).
std::shared_ptr<void> allocate_storage(size_t bytes, bool zero);

}  // namespace pto
