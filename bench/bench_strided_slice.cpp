// strided_slice on the docs/benchmarks.md SS cases and sweep shape classes (outer-dim steps on narrow
// rows, 1-D) through the C++ API, next to a parallel contiguous copy (the limit). Bytes per
// docs/benchmarks.md: 2 * out. Run: build/bench/bench_strided_slice [--benchmark_filter=SS1]
#include "helpers.h"

namespace {

using namespace bench;

void run_case(benchmark::State& state, const pto::Shape& shape, DType dt, std::vector<int64_t> begin,
              std::vector<int64_t> end, std::vector<int64_t> strides, int64_t begin_mask = 0, int64_t end_mask = 0,
              int64_t ellipsis_mask = 0) {
  const Tensor x = filled(shape, dt);
  int64_t out_bytes = 0;
  time_calls(state, [&] {
    Tensor out = pto::strided_slice(x, begin, end, strides, begin_mask, end_mask, ellipsis_mask);
    out_bytes = nbytes(out);
    return out;
  });
  report(state, 2 * out_bytes);
}

void SS1(benchmark::State& s) { run_case(s, {8192, 8192}, DType::INT32, {0, 0}, {-1, -1}, {1, 2}); }
void SS2(benchmark::State& s) {
  run_case(s, {32, 128, 128, 128}, DType::BF16, {0, 0, 0, 0}, {32, -1, -1, -1}, {1, 1, 1, 1}, 0, 0, 1);
}
void SS3(benchmark::State& s) { run_case(s, {4096, 4096}, DType::FP32, {0, 0}, {4096, 4096}, {3, 3}); }
void SS4(benchmark::State& s) { run_case(s, {4096, 4096}, DType::FP16, {0, 0}, {0, 0}, {-1, -1}, 3, 3); }
// narrow rows, a step on the outer dim: x [1M, 16] [::3, :]
void OUTER3_ROWS16(benchmark::State& s) { run_case(s, {1 << 20, 16}, DType::FP32, {0, 0}, {0, 0}, {3, 1}, 3, 3); }
void TINY(benchmark::State& s) { run_case(s, {8, 16}, DType::FP32, {0, 0}, {8, 16}, {1, 2}); }

[[maybe_unused]] const bool kRegistered = register_cases({{"SS1", SS1}, {"SS2", SS2}, {"SS3", SS3}, {"SS4", SS4},
                                                          {"OUTER3_ROWS16", OUTER3_ROWS16}, {"TINY", TINY}});

}  // namespace
