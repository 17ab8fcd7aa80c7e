#include "ptocpu/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "ptocpu/error.h"

namespace pto {
namespace {

int default_threads() {
  if (const char* env = std::getenv("PTOCPU_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= 1024) return static_cast<int>(v);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int> g_num_threads{0};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Workers sleep on a generation counter; a job wakes them, each runs one chunk. One job at
// a time: a call that finds the pool busy (another Python thread, or a nested call) runs
// on its own thread instead, which is always correct.
class Pool {
 public:
  static Pool& instance() {
    static Pool* pool = new Pool();  // never destroyed: workers may outlive static teardown
    return *pool;
  }

  bool try_run(int chunks, int64_t n, const std::function<void(int64_t, int64_t)>& body) {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    grow(chunks - 1);
    body_ = &body;
    n_ = n;
    chunks_ = chunks;
    // Every worker acknowledges every job (idle ones too), so none can see a half-published one.
    remaining_.store(static_cast<int>(threads_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    body(0, n / chunks);
    for (int spin = 0; remaining_.load(std::memory_order_acquire) != 0; ++spin) {
      if (spin < 20000) {
        cpu_relax();
      } else {
        int r = remaining_.load(std::memory_order_acquire);
        if (r != 0) remaining_.wait(r, std::memory_order_acquire);
      }
    }
    return true;
  }

 private:
  void grow(int workers) {
    while (static_cast<int>(threads_.size()) < workers) {
      int id = static_cast<int>(threads_.size()) + 1;
      const uint64_t seen = generation_.load(std::memory_order_relaxed);  // before this job's bump
      threads_.emplace_back([this, id, seen] { work(id, seen); });
      threads_.back().detach();
    }
  }

  void work(int id, uint64_t seen) {
    for (;;) {
      for (int spin = 0; generation_.load(std::memory_order_acquire) == seen; ++spin) {
        if (spin < 20000) cpu_relax();
        else generation_.wait(seen, std::memory_order_acquire);
      }
      seen = generation_.load(std::memory_order_acquire);
      if (id < chunks_) (*body_)(n_ * id / chunks_, n_ * (id + 1) / chunks_);
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
    }
  }

  std::mutex mutex_;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> remaining_{0};
  const std::function<void(int64_t, int64_t)>* body_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
};

}  // namespace

void set_num_threads(int n) {
  if (n < 1) fail<ArgumentError>("set_num_threads: num_threads must be >= 1, got ", n);
  g_num_threads.store(n);
}

int get_num_threads() {
  int n = g_num_threads.load(std::memory_order_relaxed);
  if (n == 0) {
    int expected = 0;
    g_num_threads.compare_exchange_strong(expected, default_threads());
    n = g_num_threads.load();
  }
  return n;
}

void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  const int64_t by_size = n / std::max<int64_t>(1, min_chunk);
  const int chunks = static_cast<int>(std::min<int64_t>(get_num_threads(), by_size));
  if (chunks <= 1 || !Pool::instance().try_run(chunks, n, body)) body(0, n);
}

}  // namespace pto
