// Per-thread scratch buffers for kernels that run inside parallel_for, allocated before any work
// starts: an allocation failure then throws before anything is written (parallel_for bodies must
// not throw). Each parallel_for chunk takes one slot; pages never touched cost nothing.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "ptocpu/parallel.h"

namespace pto::kernels {

template <class E>
class Scratch {
 public:
  Scratch(int64_t per_slot, bool needed)
      : per_(per_slot), slots_(needed ? get_num_threads() + 1 : 0), data_(needed ? new E[per_ * slots_] : nullptr) {}
  E* take() {  // a chunk's buffer (more chunks than threads only if the thread count changed meanwhile)
    if (!data_) return nullptr;
    const int i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i < slots_) return data_.get() + per_ * i;
    std::lock_guard<std::mutex> lock(mutex_);
    extra_.emplace_back(new E[per_]);
    return extra_.back().get();
  }

 private:
  int64_t per_;
  int slots_;
  std::unique_ptr<E[]> data_;
  std::atomic<int> next_{0};
  std::mutex mutex_;
  std::vector<std::unique_ptr<E[]>> extra_;
};

}  // namespace pto::kernels
