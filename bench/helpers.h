// Inputs shared by the Google Benchmark files: deterministic data, random indices, the
// docs/benchmarks.md byte count reported as bytes/s, and the copy-bandwidth reference.
#pragma once
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>

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

}  // namespace bench
