#include "ptocpu/parallel.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>

#include "ptocpu/error.h"

namespace pto {
namespace {

int default_threads() {
  if (const char* env = std::getenv("PTOCPU_NUM_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= kMaxThreads) return static_cast<int>(v);
  }
  cpu_set_t set;
  const int cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                                 : static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(cores, 1, kMaxThreads);
}

std::atomic<int> g_num_threads{0};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// How long an idle worker spins for the next job before it sleeps (docs/kernels.md#threads). Waking a
// sleeping worker costs tens of microseconds, more than half of a mid-sized op (an add of 64K fp32 from
// memory: 47 us on one thread, 55 on two with sleeping workers, 36 with spinning ones), so workers spin
// about as long as libgomp's default wait policy does (GOMP_SPINCOUNT, a few milliseconds) unless
// PTOCPU_WAIT_POLICY=passive asks them to sleep at once.
std::chrono::nanoseconds idle_spin() {
  const char* policy = std::getenv("PTOCPU_WAIT_POLICY");
  if (policy && std::strcmp(policy, "passive") == 0) return std::chrono::nanoseconds(0);
  return std::chrono::milliseconds(5);
}

// Workers sleep on a generation counter; a job wakes them. The job's chunks (a fixed,
// deterministic partition of [0, n)) are claimed one at a time from a word that also carries the
// job's generation, so whoever is awake runs them: the caller never waits for a worker that the
// OS has not scheduled yet (on a loaded machine that wait is a whole time slice), it runs that
// worker's chunk itself. A worker that wakes late finds the job's chunks all claimed (or a newer
// generation) and touches nothing. One job at a time: a call that finds the pool busy (another
// Python thread, or a nested call) runs on its own thread instead, which is always correct.
class Pool {
 public:
  static Pool& instance() {
    static Pool* pool = new Pool();  // never destroyed: workers may outlive static teardown
    return *pool;
  }

  void park() { parked_.store(generation_.load(std::memory_order_acquire), std::memory_order_relaxed); }

  bool try_run(int chunks, int64_t n, const RangeBody& body) {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    grow(chunks - 1);
    const uint64_t gen = (generation_.load(std::memory_order_relaxed) + 1) & kGenMask;
    body_ = &body;
    n_ = n;
    done_.store(0, std::memory_order_relaxed);
    // Chunk 0 is the caller's; the others go to whoever claims them first.
    claim_.store(pack(gen, chunks, 1), std::memory_order_release);
    generation_.store(gen, std::memory_order_release);
    generation_.notify_all();
    body(0, n / chunks);
    int finished = 1;
    for (int c; (c = claim(gen)) >= 0; ++finished) body(n * c / chunks, n * (c + 1) / chunks);
    // Chunks claimed by workers: wait for them to finish (they are running, not asleep).
    if (finished < chunks) {
      const int target = chunks - finished;
      for (int spin = 0;; ++spin) {
        const int d = done_.load(std::memory_order_acquire);
        if (d == target) break;
        if (spin < kSpin) cpu_relax();
        else done_.wait(d, std::memory_order_acquire);
      }
    }
    return true;
  }

 private:
  static constexpr uint64_t kGenMask = (uint64_t(1) << 32) - 1;
  static constexpr int kSpin = 4000;  // pauses before sleeping (tens of microseconds)

  static uint64_t pack(uint64_t gen, int chunks, int next) {
    return gen << 32 | static_cast<uint64_t>(chunks) << 16 | static_cast<uint64_t>(next);
  }

  // The next unclaimed chunk of job `gen`, or -1 when there is none (or the job is over).
  int claim(uint64_t gen) {
    uint64_t v = claim_.load(std::memory_order_acquire);
    for (;;) {
      const int chunks = static_cast<int>((v >> 16) & 0xffff), next = static_cast<int>(v & 0xffff);
      if ((v >> 32) != gen || next >= chunks) return -1;
      if (claim_.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return next;
    }
  }

  // Starts workers up to `workers`. A thread the system cannot start (a memory or process
  // limit) is not an error: the caller runs the chunks no worker claims, so fewer workers
  // only mean less parallelism.
  void grow(int workers) {
    while (workers_ < workers) {
      const uint64_t seen = generation_.load(std::memory_order_relaxed);  // before this job's bump
      try {
        std::thread([this, seen] {
#if defined(__linux__)
          pthread_setname_np(pthread_self(), "ptocpu-worker");  // named in top, perf and /proc
#endif
          work(seen);
        }).detach();
      } catch (const std::system_error&) {
        return;
      }
      ++workers_;
    }
  }

  void work(uint64_t seen) {
    const std::chrono::nanoseconds spin_for = idle_spin();
    for (;;) {
      // Spins kSpin pauses at least, then until spin_for has passed (the clock read every 256 pauses).
      // park() asks the workers idle after job `seen` to sleep at once.
      const auto deadline = std::chrono::steady_clock::now() + spin_for;
      for (int spin = 0; generation_.load(std::memory_order_acquire) == seen; ++spin) {
        const bool spinning = spin < kSpin || spin % 256 != 0 || std::chrono::steady_clock::now() < deadline;
        if (spinning && parked_.load(std::memory_order_relaxed) != seen) cpu_relax();
        else generation_.wait(seen, std::memory_order_acquire);
      }
      seen = generation_.load(std::memory_order_acquire);
      // A successful claim proves the caller is still waiting for this job: body_ and n_ are its.
      for (int c; (c = claim(seen)) >= 0;) {
        const int chunks = static_cast<int>((claim_.load(std::memory_order_relaxed) >> 16) & 0xffff);
        (*body_)(n_ * c / chunks, n_ * (c + 1) / chunks);
        done_.fetch_add(1, std::memory_order_acq_rel);
        done_.notify_one();
      }
    }
  }

  std::mutex mutex_;
  int workers_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> claim_{0};  // generation (32 bits) | chunks (16) | next chunk (16)
  std::atomic<int> done_{0};        // chunks finished by workers in the current job
  std::atomic<uint64_t> parked_{~uint64_t(0)};  // the job after which idle workers sleep at once
  const RangeBody* body_ = nullptr;
  int64_t n_ = 0;
};

}  // namespace

void set_num_threads(int64_t n) {
  if (n < 1 || n > kMaxThreads)
    fail<ArgumentError>("set_num_threads: num_threads must be in [1, ", kMaxThreads, "], got ", n);
  g_num_threads.store(static_cast<int>(n));
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

void park_workers() { Pool::instance().park(); }

void parallel_for(int64_t n, int64_t min_chunk, RangeBody body) {
  if (n <= 0) return;
  const int64_t by_size = n / std::max<int64_t>(1, min_chunk);
  const int chunks = static_cast<int>(std::min<int64_t>({get_num_threads(), by_size, kMaxThreads}));
  if (chunks <= 1 || !Pool::instance().try_run(chunks, n, body)) body(0, n);
}

}  // namespace pto
