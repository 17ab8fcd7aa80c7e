// docs/ops/index_select.md's seed input: a 3 x 4 fp32 tensor and the index [0, 2]. The example
// (seed_index_select.cpp) and ptocpu's own test of it (tests/cpp/test_index_select.cpp) start from it.
#pragma once
#include <cstdint>
#include <cstring>

#include <ptocpu/ptocpu.h>

namespace seed {

inline constexpr float kInput[3][4] = {{0.1427f, 0.0231f, -0.5414f, -1.0009f},
                                       {-0.4664f, 0.2647f, -0.1228f, -1.1068f},
                                       {-1.1734f, -0.6571f, 0.7230f, -0.6004f}};

inline pto::Tensor input() {
  pto::Tensor t = pto::Tensor::empty({3, 4}, pto::DType::FP32);
  std::memcpy(t.data(), kInput, sizeof(kInput));
  return t;
}

inline pto::Tensor index() {
  pto::Tensor t = pto::Tensor::empty({2}, pto::DType::INT32);
  t.data_as<int32_t>()[0] = 0;
  t.data_as<int32_t>()[1] = 2;
  return t;
}

}  // namespace seed
