// interleave on the docs/benchmarks.md IL cases and sweep shape classes through the C++ API (no Python),
// next to a parallel contiguous copy (the limit). Bytes per docs/benchmarks.md: 2 * (a + b).
// Run: build/bench/bench_interleave [--benchmark_filter=IL1]
#include "helpers.h"

namespace {

using namespace bench;

void run_case(benchmark::State& state, const pto::Shape& shape, DType dt) {
  const Tensor a = filled(shape, dt), b = filled(shape, dt);
  for (auto _ : state) {
    auto [x, y] = pto::interleave(a, b);
    benchmark::DoNotOptimize(x.data());
    benchmark::DoNotOptimize(y.data());
  }
  report(state, 2 * (nbytes(a) + nbytes(b)));
}

void IL1(benchmark::State& s) { run_case(s, {4096, 8192}, DType::FP32); }
void IL2(benchmark::State& s) { run_case(s, {16384, 4096}, DType::BF16); }
void ROWS4(benchmark::State& s) { run_case(s, {524288, 4}, DType::FP32); }
void ONE_D(benchmark::State& s) { run_case(s, {int64_t(1) << 21}, DType::FP32); }
void TINY(benchmark::State& s) { run_case(s, {8, 16}, DType::FP32); }

}  // namespace

BENCHMARK(bench::COPY)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(IL1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(IL2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ROWS4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ONE_D)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(TINY)->Unit(benchmark::kMicrosecond)->UseRealTime();
