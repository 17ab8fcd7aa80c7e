// docs/ops/index_select.md's seed example through the C++ API.
#include <cstdio>

#include <ptocpu/ptocpu.h>

#include "seed_index_select.h"

int main() {
  const pto::Tensor input = seed::input();
  const pto::Tensor index = seed::index();

  pto::Tensor cols = pto::index_select(input, 1, index);  // shape [3, 2]
  for (int i = 0; i < 3; ++i) std::printf("%8.4f %8.4f\n", cols.at<float>({i, 0}), cols.at<float>({i, 1}));

  try {
    pto::PlatformScope a2("atlas_a2");
    pto::index_select(pto::Tensor::zeros({4}, pto::DType::FP8E4M3), 0, index);
  } catch (const pto::DTypeError& e) {
    std::printf("%s\n", e.what());
  }
  return 0;
}
