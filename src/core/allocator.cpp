#include "core/allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "ptocpu/error.h"
#include "ptocpu/parallel.h"

namespace pto {
namespace {

constexpr size_t kLargeBlock = size_t(1) << 20;  // cached from here up
constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kCacheLimit = size_t(1) << 30;  // bytes kept mapped while unused

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

// Freed large blocks, most recently freed last. When the cache would exceed its limit the
// oldest blocks are released first, so a program whose sizes change keeps caching its current
// ones instead of holding on to the first gigabyte forever.
class BlockCache {
 public:
  static BlockCache& instance() {
    static BlockCache* cache = new BlockCache();  // outlives every tensor freed at exit
    return *cache;
  }

  // A cached block of at least `bytes` (and not much more), or nullptr; its size in *bytes.
  void* take(size_t& bytes) {
    std::lock_guard lock(mutex_);
    auto it = by_size_.lower_bound(bytes);
    if (it == by_size_.end() || it->first > bytes + bytes / 4) return nullptr;
    const auto entry = it->second;
    void* p = entry->p;
    bytes = entry->bytes;
    cached_ -= bytes;
    by_size_.erase(it);
    lru_.erase(entry);
    return p;
  }

  void put(void* p, size_t bytes) {
    std::vector<void*> release;
    {
      std::lock_guard lock(mutex_);
      if (bytes > kCacheLimit) {
        release.push_back(p);
      } else {
        while (cached_ + bytes > kCacheLimit) release.push_back(evict_oldest());
        lru_.push_back({p, bytes, {}});
        auto entry = std::prev(lru_.end());
        entry->pos = by_size_.emplace(bytes, entry);
        cached_ += bytes;
      }
    }
    for (void* q : release) std::free(q);  // outside the lock
  }

  // Gives every cached block back (an allocation failed: memory is short).
  void clear() {
    std::vector<void*> release;
    {
      std::lock_guard lock(mutex_);
      while (!lru_.empty()) release.push_back(evict_oldest());
    }
    for (void* q : release) std::free(q);
  }

 private:
  struct Entry;
  using List = std::list<Entry>;
  using BySize = std::multimap<size_t, List::iterator>;
  struct Entry {
    void* p;
    size_t bytes;
    BySize::iterator pos;
  };

  void* evict_oldest() {
    Entry& e = lru_.front();
    void* p = e.p;
    cached_ -= e.bytes;
    by_size_.erase(e.pos);
    lru_.pop_front();
    return p;
  }

  std::mutex mutex_;
  List lru_;
  BySize by_size_;
  size_t cached_ = 0;
};

// The small blocks (up to 64 KiB) this thread freed last, reused for requests of the same size: a
// loop of small ops allocates the same sizes over and over, glibc's malloc of a block past its
// small-object range first consolidates its fast bins (a 4K-element add spent ~11% of its call in
// malloc / free), and its 64-byte aligned allocation of any size splits a larger chunk (~500
// instructions of a 1-element add's ~11,000). At most kRecent blocks per thread; they are freed
// when the thread ends.
constexpr size_t kRecentMax = size_t(64) << 10;
#ifdef __SANITIZE_ADDRESS__
constexpr int kRecent = 0;  // AddressSanitizer sees every free: a use after free stays detectable
#else
constexpr int kRecent = 8;
#endif

// Readable while the thread ends (trivially destructible): true once its cache is gone.
thread_local bool t_recent_gone = false;

class RecentBlocks {
 public:
  void* take(size_t bytes) {
    for (int i = count_ - 1; i >= 0; --i)
      if (blocks_[i].bytes == bytes) {
        void* p = blocks_[i].p;
        blocks_[i] = blocks_[--count_];
        return p;
      }
    return nullptr;
  }
  bool put(void* p, size_t bytes) {
    if (count_ == kRecent) return false;
    blocks_[count_++] = {p, bytes};
    return true;
  }
  ~RecentBlocks() {
    for (int i = 0; i < count_; ++i) std::free(blocks_[i].p);
    t_recent_gone = true;
  }

 private:
  struct Block {
    void* p;
    size_t bytes;
  };
  Block blocks_[kRecent > 0 ? kRecent : 1] = {};
  int count_ = 0;
};

thread_local RecentBlocks t_recent;

void free_small(void* p, size_t bytes) {
  if (t_recent_gone || !t_recent.put(p, bytes)) std::free(p);
}

// memset of a large block on all threads (each touches its own part first).
void zero_fill(void* p, size_t bytes) {
  constexpr size_t kChunk = size_t(2) << 20;
  if (bytes < 4 * kChunk) {
    std::memset(p, 0, bytes);
    return;
  }
  const int64_t chunks = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    const size_t lo = static_cast<size_t>(b) * kChunk, hi = std::min(bytes, static_cast<size_t>(e) * kChunk);
    std::memset(static_cast<char*>(p) + lo, 0, hi - lo);
  });
}

}  // namespace

std::shared_ptr<void> allocate_storage(size_t bytes, bool zero) {
  if (bytes < kLargeBlock) {
    const size_t size = round_up(std::max<size_t>(bytes, 64), 64);
    const bool recent = size <= kRecentMax;
    void* p = recent && !t_recent_gone ? t_recent.take(size) : nullptr;
    if (!p) p = std::aligned_alloc(64, size);
    if (!p) throw OutOfMemory(bytes);
    if (zero) std::memset(p, 0, bytes);
    if (recent) return std::shared_ptr<void>(p, [size](void* q) { free_small(q, size); });
    return std::shared_ptr<void>(p, std::free);
  }
  size_t block = round_up(bytes, kHugePage);
  void* p = BlockCache::instance().take(block);
  if (!p) {
    p = std::aligned_alloc(kHugePage, block);
    if (!p) {  // give the cached blocks back and try once more
      BlockCache::instance().clear();
      p = std::aligned_alloc(kHugePage, block);
      if (!p) throw OutOfMemory(bytes);
    }
    madvise(p, block, MADV_HUGEPAGE);
  }
  if (zero) zero_fill(p, bytes);
  return std::shared_ptr<void>(p, [block](void* q) { BlockCache::instance().put(q, block); });
}

}  // namespace pto
