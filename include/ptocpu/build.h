// What this build compiled, what the running CPU dispatches to, and the kernel tuning knobs
// that tests and benchmarks turn (docs/kernels.md).
#pragma once
#include <cstdint>

namespace pto {

const char* simd_targets_compiled();
const char* simd_target_dispatched();

// Dense outputs of at least `stream_bytes` are written with streaming stores, the hand-written
// kernels use at most `isa` ("baseline", "avx2", "avx512"), and the elementwise engine asks for
// lines ahead in software when `elementwise_prefetch` is 1 (0: not). A negative size / a null isa / a
// negative elementwise_prefetch restores that default. For tests: not safe while kernels run on other threads.
void set_kernel_tuning(int64_t stream_bytes, const char* isa, int elementwise_prefetch = -1);

}  // namespace pto
