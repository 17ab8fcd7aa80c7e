// What this build compiled, what the running CPU dispatches to, and the kernel tuning knobs
// that tests and benchmarks turn (docs/kernels.md).
#pragma once
#include <cstdint>

namespace pto {

const char* simd_targets_compiled();
const char* simd_target_dispatched();

// Dense outputs of at least `stream_bytes` are written with streaming stores, the hand-written
// kernels use at most `isa` ("baseline", "avx2", "avx512"), and kernels ask for lines of data
// they read in order ahead in software when `prefetch_streams` is 1 (0: not). A negative size / a null isa / a
// negative prefetch_streams restores that default. For tests: not safe while kernels run on other threads.
void set_kernel_tuning(int64_t stream_bytes, const char* isa, int prefetch_streams = -1);

}  // namespace pto
