#include "core/allocator.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace pto {
namespace {

constexpr size_t kLargeBlock = size_t(1) << 20;  // cached from here up
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kCacheLimit = size_t(1) << 30;  // bytes kept mapped while unused

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

class BlockCache {
 public:
  static BlockCache& instance() {
    static BlockCache* cache = new BlockCache();  // outlives every tensor freed at exit
    return *cache;
  }

  // A cached block of at least `bytes` (and not much more), or nullptr; its size in *bytes.
  void* take(size_t& bytes) {
    std::lock_guard lock(mutex_);
    auto it = free_.lower_bound(bytes);
    if (it == free_.end() || it->first > bytes + bytes / 4) return nullptr;
    void* p = it->second;
    bytes = it->first;
    cached_ -= it->first;
    free_.erase(it);
    return p;
  }

  void put(void* p, size_t bytes) {
    std::lock_guard lock(mutex_);
    if (cached_ + bytes > kCacheLimit) {
      std::free(p);
      return;
    }
    cached_ += bytes;
    free_.emplace(bytes, p);
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
};

}  // namespace

std::shared_ptr<void> allocate_storage(size_t bytes, bool zero) {
  if (bytes < kLargeBlock) {
    void* p = std::aligned_alloc(64, round_up(std::max<size_t>(bytes, 64), 64));
    if (!p) throw std::bad_alloc();
    if (zero) std::memset(p, 0, bytes);
    return std::shared_ptr<void>(p, std::free);
  }
  size_t block = round_up(bytes, kHugePage);
  void* p = BlockCache::instance().take(block);
  if (p) {
    if (zero) std::memset(p, 0, bytes);
  } else {
    p = std::aligned_alloc(kHugePage, block);
    if (!p) throw std::bad_alloc();
    madvise(p, block, MADV_HUGEPAGE);
    if (zero) std::memset(p, 0, bytes);
  }
  return std::shared_ptr<void>(p, [block](void* q) { BlockCache::instance().put(q, block); });
}

}  // namespace pto
