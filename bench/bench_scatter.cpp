// scatter_ on the docs/benchmarks.md SC cases and the sweep's shape classes (dim 0 with random targets on
// narrow rows, dim 1 with one index column, 1-D) through the C++ API, next to a parallel
// contiguous copy (the limit). Bytes per docs/benchmarks.md: index + src + 2 * written (add / multiply)
// or 1 * written (None). Run: build/bench/bench_scatter [--benchmark_filter=SC2]
#include "helpers.h"

namespace {

using namespace bench;
using pto::ScatterReduce;

void run_case(benchmark::State& state, const pto::Shape& xshape, DType dt, int64_t dim, const pto::Shape& ishape,
              DType idt, ScatterReduce reduce, bool scalar = false) {
  const Tensor x0 = filled(xshape, dt);
  Tensor x = Tensor::empty(xshape, dt);
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(xshape.size()) : dim;
  const Tensor index = random_index(ishape, idt, xshape[d], 42);
  const Tensor src = filled(ishape, dt);
  for (auto _ : state) {
    state.PauseTiming();  // in place: every run starts from the same input
    pto::copy_into(x, x0);
    state.ResumeTiming();
    if (scalar) pto::scatter_(x, dim, index, pto::Scalar::of_float(2.0), reduce);
    else pto::scatter_(x, dim, index, src, reduce);
    benchmark::DoNotOptimize(x.data());
  }
  const int64_t written = index.numel() * static_cast<int64_t>(x.itemsize());
  report(state, nbytes(index) + (scalar ? 0 : written) + (reduce == ScatterReduce::None ? 1 : 2) * written);
}

void SC1(benchmark::State& s) { run_case(s, {4096, 4096}, DType::FP32, 1, {4096, 2048}, DType::INT64, ScatterReduce::None); }
void SC2(benchmark::State& s) { run_case(s, {4096, 4096}, DType::FP32, 0, {8192, 4096}, DType::INT64, ScatterReduce::Add); }
void SC3(benchmark::State& s) {
  run_case(s, {4096, 4096}, DType::FP16, 1, {4096, 1024}, DType::INT32, ScatterReduce::None, true);
}
void SC4(benchmark::State& s) {
  run_case(s, {2048, 8192}, DType::BF16, -1, {2048, 4096}, DType::INT64, ScatterReduce::Multiply);
}
// dim 0, random targets, rows of 64: x [100000, 64], index [50000, 64]
void D0_ROWS64(benchmark::State& s) {
  run_case(s, {100000, 64}, DType::FP32, 0, {50000, 64}, DType::INT64, ScatterReduce::None);
}
// dim 1, narrow rows, one index column: x [1M, 8], index [1M, 1]
void D1_ROWS8_COL1(benchmark::State& s) {
  run_case(s, {1 << 20, 8}, DType::FP32, 1, {1 << 20, 1}, DType::INT64, ScatterReduce::None);
}
void ONE_D_ADD(benchmark::State& s) {
  run_case(s, {1 << 22}, DType::FP32, 0, {1 << 21}, DType::INT64, ScatterReduce::Add);
}
void TINY(benchmark::State& s) { run_case(s, {8, 16}, DType::FP32, 1, {8, 4}, DType::INT64, ScatterReduce::None); }

[[maybe_unused]] const bool kRegistered = register_cases({{"SC1", SC1}, {"SC2", SC2}, {"SC3", SC3}, {"SC4", SC4},
                                                          {"D0_ROWS64", D0_ROWS64}, {"D1_ROWS8_COL1", D1_ROWS8_COL1},
                                                          {"ONE_D_ADD", ONE_D_ADD}, {"TINY", TINY}});

}  // namespace
