// docs/ops/index_select.md's seed example through the C++ API.
#include <cstdio>
#include <cstring>

#include <ptocpu/ptocpu.h>

int main() {
  const float x[3][4] = {{0.1427f, 0.0231f, -0.5414f, -1.0009f},
                         {-0.4664f, 0.2647f, -0.1228f, -1.1068f},
                         {-1.1734f, -0.6571f, 0.7230f, -0.6004f}};
  pto::Tensor input = pto::Tensor::empty({3, 4}, pto::DType::FP32);
  std::memcpy(input.data(), x, sizeof(x));
  pto::Tensor index = pto::Tensor::empty({2}, pto::DType::INT32);
  index.data_as<int32_t>()[0] = 0;
  index.data_as<int32_t>()[1] = 2;

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
