// index_select on the docs/benchmarks.md IS cases through the C++ API (no Python), with a parallel
// contiguous copy of the same output size as the reference. Bytes counted per docs/benchmarks.md:
// 2 * out + index. Run: build/bench/bench_index_select [--benchmark_filter=IS1]
#include "helpers.h"

namespace {

using namespace bench;

void run_case(benchmark::State& state, const pto::Shape& xshape, DType dt, int64_t dim,
              const pto::Shape& ishape, DType idt) {
  const Tensor x = filled(xshape, dt);
  const int64_t d = dim < 0 ? dim + static_cast<int64_t>(xshape.size()) : dim;
  const Tensor index = random_index(ishape, idt, xshape[d], 42);
  int64_t out_bytes = 0;
  time_calls(state, [&] {
    Tensor out = pto::index_select(x, dim, index);
    out_bytes = nbytes(out);
    return out;
  });
  report(state, 2 * out_bytes + nbytes(index));
}

void IS1(benchmark::State& s) { run_case(s, {262144, 256}, DType::FP32, 0, {131072}, DType::INT64); }
void IS2(benchmark::State& s) { run_case(s, {64, 4096, 128}, DType::FP16, 1, {2048}, DType::INT32); }
void IS3(benchmark::State& s) { run_case(s, {8192, 4096}, DType::FP32, -1, {2048}, DType::INT64); }
void IS4(benchmark::State& s) { run_case(s, {65536, 128}, DType::BF16, 0, {512, 256}, DType::INT64); }
void TINY(benchmark::State& s) { run_case(s, {8, 16}, DType::FP32, 0, {3}, DType::INT64); }
// Sweep shape classes: narrow rows (dim 0), 1-D.
void ROWS16(benchmark::State& s) { run_case(s, {262144, 16}, DType::FP32, 0, {131072}, DType::INT64); }
void ROWS1(benchmark::State& s) { run_case(s, {int64_t(1) << 22}, DType::FP32, 0, {int64_t(1) << 22}, DType::INT64); }

[[maybe_unused]] const bool kRegistered = register_cases({{"IS1", IS1}, {"IS2", IS2}, {"IS3", IS3}, {"IS4", IS4},
                                                          {"ROWS16", ROWS16}, {"ROWS1", ROWS1}, {"TINY", TINY}});

}  // namespace
