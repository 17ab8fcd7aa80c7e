// The thread pool every kernel runs on. Thread count: set_num_threads(), or the
// PTOCPU_NUM_THREADS environment variable, else the number of cores.
#pragma once
#include <cstdint>
#include <functional>

namespace pto {

constexpr int kMaxThreads = 1024;

void set_num_threads(int64_t n);  // 1 <= n <= kMaxThreads, else ArgumentError
int get_num_threads();

// Runs body(begin, end) over disjoint chunks covering [0, n). Work of fewer than
// min_chunk items per thread runs on the calling thread. Chunks are contiguous and
// ordered by thread, so a partition by output rows is deterministic. body must not throw.
void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& body);

// Sends the pool's idle workers to sleep now instead of after their spin (docs/kernels.md#threads):
// for benchmarks, so that a spinning worker does not take a core from another library's timed call.
void park_workers();

}  // namespace pto
