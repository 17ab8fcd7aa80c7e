// deinterleave (one input and two inputs) on the docs/benchmarks.md DI cases and sweep shape classes
// through the C++ API, next to a parallel contiguous copy (the limit). Bytes per docs/benchmarks.md:
// 2 * inputs. Run: build/bench/bench_deinterleave [--benchmark_filter=DI1]
#include "helpers.h"

namespace {

using namespace bench;

void one_input(benchmark::State& state, const pto::Shape& shape, DType dt) {
  const Tensor x = filled(shape, dt);
  time_calls(state, [&] { return pto::deinterleave(x); });
  report(state, 2 * nbytes(x));
}

void pair_input(benchmark::State& state, const pto::Shape& shape, DType dt) {
  two_inputs(state, shape, dt, [](const Tensor& a, const Tensor& b) { return pto::deinterleave(a, b); });
}

void DI1(benchmark::State& s) { one_input(s, {4096, 16384}, DType::FP32); }
void DI2(benchmark::State& s) { pair_input(s, {4096, 8192}, DType::BF16); }
void ROWS2(benchmark::State& s) { one_input(s, {int64_t(1) << 21, 2}, DType::FP32); }
void ONE_D(benchmark::State& s) { one_input(s, {int64_t(1) << 22}, DType::FP32); }
void TINY(benchmark::State& s) { one_input(s, {8, 16}, DType::FP32); }

[[maybe_unused]] const bool kRegistered = register_cases({{"DI1", DI1}, {"DI2", DI2}, {"ROWS2", ROWS2},
                                                          {"ONE_D", ONE_D}, {"TINY", TINY}});

}  // namespace
