// interleave on the docs/benchmarks.md IL cases and sweep shape classes through the C++ API (no Python),
// next to a parallel contiguous copy (the limit). Bytes per docs/benchmarks.md: 2 * (a + b).
// Run: build/bench/bench_interleave [--benchmark_filter=IL1]
#include "helpers.h"

namespace {

using namespace bench;

void run_case(benchmark::State& state, const pto::Shape& shape, DType dt) {
  two_inputs(state, shape, dt, [](const Tensor& a, const Tensor& b) { return pto::interleave(a, b); });
}

void IL1(benchmark::State& s) { run_case(s, {4096, 8192}, DType::FP32); }
void IL2(benchmark::State& s) { run_case(s, {16384, 4096}, DType::BF16); }
void ROWS4(benchmark::State& s) { run_case(s, {524288, 4}, DType::FP32); }
void ONE_D(benchmark::State& s) { run_case(s, {int64_t(1) << 21}, DType::FP32); }
void TINY(benchmark::State& s) { run_case(s, {8, 16}, DType::FP32); }

[[maybe_unused]] const bool kRegistered = register_cases({{"IL1", IL1}, {"IL2", IL2}, {"ROWS4", ROWS4},
                                                          {"ONE_D", ONE_D}, {"TINY", TINY}});

}  // namespace
