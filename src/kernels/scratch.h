// Per-thread scratch buffers for kernels that run inside parallel_for, allocated before any work
// starts: an allocation failure then throws before anything is written (parallel_for bodies must
// not throw). Each parallel_for chunk takes one slot; pages never touched cost nothing. The slots
// come from tensor storage's block cache, so a kernel called again reuses pages already mapped
// instead of faulting in (and zeroing) megabytes of fresh scratch every call. Up to 1 KiB of slots
// live in the object itself.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/allocator.h"
#include "ptocpu/parallel.h"

namespace pto::kernels {

template <class E>
class Scratch {
 public:
  Scratch(int64_t per_slot, bool needed) : per_(padded(per_slot)), slots_(needed ? get_num_threads() + 1 : 0) {
    const size_t bytes = static_cast<size_t>(per_ * slots_) * sizeof(E);
    if (!needed) return;
    if (bytes <= sizeof(inline_)) {
      base_ = reinterpret_cast<E*>(inline_);
      return;
    }
    data_ = allocate_storage(bytes, false);
    base_ = static_cast<E*>(data_.get());
  }
  E* take() {  // a chunk's buffer (more chunks than threads only if the thread count changed meanwhile)
    if (!base_) return nullptr;
    const int i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i < slots_) return base_ + per_ * i;
    std::lock_guard<std::mutex> lock(mutex_);
    extra_.push_back(allocate_storage(static_cast<size_t>(per_) * sizeof(E), false));
    return static_cast<E*>(extra_.back().get());
  }

 private:
  // Slots start on cache lines of their own: threads updating neighbouring slots would otherwise
  // share the line between them and pass it back and forth on every update.
  static constexpr int64_t kLine = 64;
  static_assert(kLine % sizeof(E) == 0);
  static int64_t padded(int64_t n) {
    const int64_t per_line = kLine / static_cast<int64_t>(sizeof(E));
    return (n + per_line - 1) / per_line * per_line;
  }

  int64_t per_;
  int slots_;
  E* base_ = nullptr;            // the slots: in inline_ or in data_
  std::shared_ptr<void> data_;  // allocate_storage: 64-byte aligned
  // Slots this small are kept in the object, on the caller's stack: a tiny call's allocations cost
  // more than its work.
  alignas(64) std::byte inline_[1024];
  std::atomic<int> next_{0};
  std::mutex mutex_;
  std::vector<std::shared_ptr<void>> extra_;
};

}  // namespace pto::kernels
