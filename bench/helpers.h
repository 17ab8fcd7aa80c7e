// Inputs shared by the Google Benchmark files: deterministic data, random indices, the
// docs/benchmarks.md byte count reported as bytes/s, the copy-bandwidth reference, the timing
// loop and the registration of a file's cases.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string_view>
#include <utility>

#include "ptocpu/ops.h"
#include "ptocpu/parallel.h"
#include "ptocpu/tensor.h"

namespace bench {

using pto::DType;
using pto::Tensor;

// Index values in [0, bound), int32 or int64.
inline Tensor random_index(const pto::Shape& shape, DType dt, int64_t bound, uint64_t seed) {
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

// Any dtype, bytes in a fixed pattern (finite for the float dtypes that scatter's reduces use).
inline Tensor filled(const pto::Shape& shape, DType dt) {
  Tensor t = Tensor::empty(shape, dt);
  auto* p = static_cast<unsigned char*>(t.data());
  const size_t bytes = static_cast<size_t>(t.numel()) * t.itemsize();
  for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>((i * 131 + 7) & 0x3f);
  return t;
}

inline int64_t nbytes(const Tensor& t) { return t.numel() * static_cast<int64_t>(t.itemsize()); }

// Reports `bytes` per iteration (docs/benchmarks.md's count) and the thread count.
inline void report(benchmark::State& state, int64_t bytes) {
  state.SetBytesProcessed(state.iterations() * bytes);
  state.counters["threads"] = pto::get_num_threads();
}

// Keeps a result's data from being optimised away.
inline void keep(const Tensor& t) { benchmark::DoNotOptimize(t.data()); }
inline void keep(const std::pair<Tensor, Tensor>& two) {
  keep(two.first);
  keep(two.second);
}

// The timing loop: call() once per iteration, its result kept.
template <class Call>
void time_calls(benchmark::State& state, Call&& call) {
  for (auto _ : state) keep(call());
}

// An op of two inputs of one shape and dtype (interleave, deinterleave's two-input form); bytes
// per docs/benchmarks.md: 2 * (a + b).
template <class Op>
void two_inputs(benchmark::State& state, const pto::Shape& shape, DType dt, Op op) {
  const Tensor a = filled(shape, dt), b = filled(shape, dt);
  time_calls(state, [&] { return op(a, b); });
  report(state, 2 * (nbytes(a) + nbytes(b)));
}

// The limit: a contiguous copy of 256 MiB (read + write counted), all threads.
inline void COPY(benchmark::State& state) {
  const Tensor src = filled({int64_t(64) << 20}, DType::FP32);
  for (auto _ : state) {
    Tensor dst = Tensor::empty(src.shape(), src.dtype());
    pto::copy_into(dst, src);
    benchmark::DoNotOptimize(dst.data());
  }
  report(state, 2 * nbytes(src));
}

using Case = void (*)(benchmark::State&);

// Registers COPY (as "bench::COPY") and then a file's cases in order, timed in real time: in
// milliseconds, TINY (one call's fixed cost) in microseconds. Returns true, for a static.
inline bool register_cases(std::initializer_list<std::pair<const char*, Case>> cases) {
  benchmark::RegisterBenchmark("bench::COPY", COPY)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const auto& [name, run] : cases)
    benchmark::RegisterBenchmark(name, run)
        ->Unit(std::string_view(name) == "TINY" ? benchmark::kMicrosecond : benchmark::kMillisecond)
        ->UseRealTime();
  return true;
}

}  // namespace bench
