// index_select on the docs/benchmarks.md IS cases through the C++ API (no Python), with a parallel
// contiguous copy of the same output size as the reference. Bytes counted per docs/benchmarks.md:
// 2 * out + index. Run: build/bench/bench_index_select [--benchmark_filter=IS1]
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "ptocpu/ops.h"
#include "ptocpu/parallel.h"
#include "ptocpu/tensor.h"

namespace {

using pto::DType;
using pto::Tensor;

Tensor random_index(const pto::Shape& shape, DType dt, int64_t bound, uint64_t seed) {
  Tensor t = Tensor::empty(shape, dt);
  std::mt19937_64 rng(seed);
  const int64_t n = t.numel();
  if (dt == DType::INT64) {
    auto* p = t.data_as<int64_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int64_t>(rng() % bound);
  } else {
    auto* p = t.data_as<int32_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(rng() % bound);
  }
  return t;
}

Tensor filled(const pto::Shape& shape, DType dt) {
  Tensor t = Tensor::empty(shape, dt);
  auto* p = static_cast<unsigned char*>(t.data());
  const size_t bytes = static_cast<size_t>(t.numel()) * t.itemsize();
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(i * 131 + 7);
  return t;
}

void run_case(benchmark::State& state, const pto::Shape& xshape, DType dt, int64_t dim,
              const pto::Shape& ishape, DType idt) {
  const Tensor x = filled(xshape, dt);
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(xshape.size()) : dim;
  const Tensor index = random_index(ishape, idt, xshape[d], 42);
  int64_t out_bytes = 0;
  for (auto _ : state) {
    Tensor out = pto::index_select(x, dim, index);
    out_bytes = out.numel() * static_cast<int64_t>(out.itemsize());
    benchmark::DoNotOptimize(out.data());
  }
  const int64_t bytes = 2 * out_bytes + index.numel() * static_cast<int64_t>(index.itemsize());
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["threads"] = pto::get_num_threads();
}

void IS1(benchmark::State& s) { run_case(s, {262144, 256}, DType::FP32, 0, {131072}, DType::INT64); }
void IS2(benchmark::State& s) { run_case(s, {64, 4096, 128}, DType::FP16, 1, {2048}, DType::INT32); }
void IS3(benchmark::State& s) { run_case(s, {8192, 4096}, DType::FP32, -1, {2048}, DType::INT64); }
void IS4(benchmark::State& s) { run_case(s, {65536, 128}, DType::BF16, 0, {512, 256}, DType::INT64); }
void TINY(benchmark::State& s) { run_case(s, {8, 16}, DType::FP32, 0, {3}, DType::INT64); }

// The limit: a contiguous copy of 256 MiB (read + write counted), all threads.
void COPY(benchmark::State& state) {
  const Tensor src = filled({int64_t(64) << 20}, DType::FP32);
  for (auto _ : state) {
    Tensor dst = Tensor::empty(src.shape(), src.dtype());
    pto::copy_into(dst, src);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * src.numel() * 4);
}

}  // namespace

BENCHMARK(COPY)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(IS1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(IS2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(IS3)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(IS4)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(TINY)->Unit(benchmark::kMicrosecond)->UseRealTime();
