// deinterleave (one input and two inputs) on the docs/benchmarks.md DI cases and sweep shape classes
// through the C++ API, next to a parallel contiguous copy (the limit). Bytes per docs/benchmarks.md:
// 2 * inputs. Run: build/bench/bench_deinterleave [--benchmark_filter=DI1]
#include "helpers.h"

namespace {

using namespace bench;

void one_input(benchmark::State& state, const pto::Shape& shape, DType dt) {
  const Tensor x = filled(shape, dt);
  for (auto _ : state) {
    auto [even, odd] = pto::deinterleave(x);
    benchmark::DoNotOptimize(even.data());
    benchmark::DoNotOptimize(odd.data());
  }
  report(state, 2 * nbytes(x));
}

void two_inputs(benchmark::State& state, const pto::Shape& shape, DType dt) {
  const Tensor a = filled(shape, dt), b = filled(shape, dt);
  for (auto _ : state) {
    auto [even, odd] = pto::deinterleave(a, b);
    benchmark::DoNotOptimize(even.data());
    benchmark::DoNotOptimize(odd.data());
  }
  report(state, 2 * (nbytes(a) + nbytes(b)));
}

void DI1(benchmark::State& s) { one_input(s, {4096, 16384}, DType::FP32); }
void DI2(benchmark::State& s) { two_inputs(s, {4096, 8192}, DType::BF16); }
void ROWS2(benchmark::State& s) { one_input(s, {int64_t(1) << 21, 2}, DType::FP32); }
void ONE_D(benchmark::State& s) { one_input(s, {int64_t(1) << 22}, DType::FP32); }
void TINY(benchmark::State& s) { one_input(s, {8, 16}, DType::FP32); }

}  // namespace

BENCHMARK(bench::COPY)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(DI1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(DI2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ROWS2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(ONE_D)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(TINY)->Unit(benchmark::kMicrosecond)->UseRealTime();
