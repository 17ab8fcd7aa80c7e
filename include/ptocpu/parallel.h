// The thread pool every kernel runs on. Thread count: set_num_threads(), or the
// PTOCPU_NUM_THREADS environment variable, else the number of cores.
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>

namespace pto {

constexpr int kMaxThreads = 1024;

void set_num_threads(int64_t n);  // 1 <= n <= kMaxThreads, else ArgumentError
int get_num_threads();

// A callable taking (begin, end), by reference: parallel_for's body without std::function's copy (an
// allocation when a lambda captures more than two words). Valid while the callable lives.
class RangeBody {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, RangeBody>)
  RangeBody(F&& f)  // NOLINT: implicit, as std::function's
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* c, int64_t begin, int64_t end) { (*static_cast<std::remove_reference_t<F>*>(c))(begin, end); }) {}
  void operator()(int64_t begin, int64_t end) const { call_(callable_, begin, end); }

 private:
  void* callable_;
  void (*call_)(void*, int64_t, int64_t);
};

// Runs body(begin, end) over disjoint chunks covering [0, n). Work of fewer than
// min_chunk items per thread runs on the calling thread. Chunks are contiguous and
// ordered by thread, so a partition by output rows is deterministic. body must not throw.
void parallel_for(int64_t n, int64_t min_chunk, RangeBody body);

// Sends the pool's idle workers to sleep now instead of after their spin (docs/kernels.md#threads):
// for benchmarks, so that a spinning worker does not take a core from another library's timed call.
void park_workers();

}  // namespace pto
