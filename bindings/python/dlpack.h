// The DLPack ABI (dlpack.h, v1.1), the parts ptocpu exchanges tensors through.
#pragma once
#include "ptocpu/dtype.h"
#include <cstdint>

namespace dlpack {

enum DeviceType : int32_t { kDLCPU = 1, kDLCUDAHost = 3 };
enum TypeCode : uint8_t {
  kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6,
  kDLFloat8_e4m3fn = 10, kDLFloat8_e5m2 = 12, kDLFloat8_e8m0fnu = 14,
};

struct Device { int32_t device_type; int32_t device_id; };
struct DataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; nullptr means compact row-major
  uint64_t byte_offset;
};
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor*);
};
struct Version { uint32_t major; uint32_t minor; };
struct ManagedTensorVersioned {
  Version version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned*);
  uint64_t flags;
  Tensor dl_tensor;
};

}  // namespace dlpack

namespace ptobind {
// DLPack's code / bits for a dtype (bf16 is kDLBfloat; fp8 types are exported as their bytes).
dlpack::DataType to_dl(pto::DType dt);
}  // namespace ptobind
