// DLPack both ways: exporting a ptocpu.Tensor as a (legacy or versioned) capsule, importing
// anything with __dlpack__ zero-copy (docs/tensors.md).
#include <Python.h>

#include <cstring>

#include "bind.h"
#include "dlpack.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {

using pto::DType;


DType from_dl(dlpack::DataType t) {
  if (t.lanes == 1) {
    for (int i = 0; i < pto::kNumDTypes; ++i) {
      const auto dt = static_cast<DType>(i);
      const dlpack::DataType d = to_dl(dt);
      if (d.code == t.code && d.bits == t.bits) return dt;
    }
  }
  pto::fail<pto::DTypeError>("from_dlpack: DLPack dtype (code ", int(t.code), ", bits ", int(t.bits), ", lanes ",
                             t.lanes, ") has no ptocpu dtype");
}

// What an exported capsule owns: the tensor (keeping its storage alive) and the arrays
// DLPack points at.
struct Export {
  pto::Tensor tensor;
  std::vector<int64_t> shape, strides;
};

template <class Managed>
void fill(Managed* m, Export* e) {
  std::memset(&m->dl_tensor, 0, sizeof(m->dl_tensor));
  m->dl_tensor.data = e->tensor.data();
  m->dl_tensor.device = {dlpack::kDLCPU, 0};
  m->dl_tensor.ndim = e->tensor.ndim();
  m->dl_tensor.dtype = to_dl(e->tensor.dtype());
  m->dl_tensor.shape = e->shape.data();
  m->dl_tensor.strides = e->strides.data();
  m->manager_ctx = e;
  m->deleter = [](Managed* self) {
    delete static_cast<Export*>(self->manager_ctx);
    delete self;
  };
}

template <class Managed>
void capsule_destructor(PyObject* cap) {
  const char* name = PyCapsule_GetName(cap);
  if (name && std::strncmp(name, "used_", 5) == 0) return;  // a consumer took ownership
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(cap, name));
  if (m && m->deleter) m->deleter(m);
  else PyErr_Clear();
}

pto::Tensor wrap_dl(const dlpack::Tensor& dl, std::shared_ptr<void> keep_alive) {
  if (dl.device.device_type != dlpack::kDLCPU && dl.device.device_type != dlpack::kDLCUDAHost)
    pto::fail<pto::ArgumentError>("from_dlpack: device type ", dl.device.device_type,
                                  " is not the CPU; move the tensor to the CPU first");
  const DType dt = from_dl(dl.dtype);
  pto::Shape shape(dl.shape, dl.shape + dl.ndim);
  pto::Strides strides = dl.strides ? pto::Strides(dl.strides, dl.strides + dl.ndim) : pto::contiguous_strides(shape);
  return pto::Tensor::from_blob(static_cast<std::byte*>(dl.data) + dl.byte_offset, shape, strides, dt,
                                std::move(keep_alive));
}

template <class Managed>
std::shared_ptr<void> own_managed(Managed* m) {
  return std::shared_ptr<void>(m, [](void* p) {
    auto* mm = static_cast<Managed*>(p);
    if (!mm->deleter) return;
    PyGILState_STATE s = PyGILState_Ensure();
    mm->deleter(mm);
    PyGILState_Release(s);
  });
}

}  // namespace

dlpack::DataType to_dl(pto::DType dt) {
  const uint8_t bits = static_cast<uint8_t>(pto::dtype_size(dt) * 8);
  switch (dt) {
    case DType::INT8: case DType::INT16: case DType::INT32: case DType::INT64: return {dlpack::kDLInt, bits, 1};
    case DType::UINT8: case DType::UINT16: case DType::UINT32: case DType::UINT64: return {dlpack::kDLUInt, bits, 1};
    case DType::BOOL: return {dlpack::kDLBool, 8, 1};
    case DType::BF16: return {dlpack::kDLBfloat, 16, 1};
    case DType::FP8E4M3: return {dlpack::kDLFloat8_e4m3fn, 8, 1};
    case DType::FP8E5M2: return {dlpack::kDLFloat8_e5m2, 8, 1};
    case DType::FP8E8M0: return {dlpack::kDLFloat8_e8m0fnu, 8, 1};
    default: return {dlpack::kDLFloat, bits, 1};
  }
}

nb::object to_dlpack(const pto::Tensor& t, nb::handle max_version, nb::handle copy) {
  require_storage(t, "Tensor.__dlpack__");
  pto::Tensor exported = t;
  if (copy.is_valid() && !copy.is_none() && PyObject_IsTrue(copy.ptr()) == 1) {
    exported = pto::Tensor::empty(t.shape(), t.dtype());
    pto::copy_into(exported, t);
  }
  auto* e = new Export{exported, exported.shape(), exported.strides()};
  bool versioned = false;
  if (max_version.is_valid() && !max_version.is_none()) versioned = nb::cast<int>(max_version[0]) >= 1;
  if (versioned) {
    auto* m = new dlpack::ManagedTensorVersioned{};
    m->version = {1, 1};
    fill(m, e);
    return nb::steal(PyCapsule_New(m, "dltensor_versioned", capsule_destructor<dlpack::ManagedTensorVersioned>));
  }
  auto* m = new dlpack::ManagedTensor{};
  fill(m, e);
  return nb::steal(PyCapsule_New(m, "dltensor", capsule_destructor<dlpack::ManagedTensor>));
}

pto::Tensor from_dlpack(nb::handle obj) {
  pto::Tensor* t = nullptr;
  if (nb::try_cast<pto::Tensor*>(obj, t) && t) return require_storage(*t, "from_dlpack");
  if (!nb::hasattr(obj, "__dlpack__"))
    pto::fail<pto::DTypeError>("from_dlpack: ", nb::type_name(obj.type()).c_str(), " has no __dlpack__ method");
  nb::object cap;
  PyObject* version = Py_BuildValue("(ii)", 1, 1);
  PyObject* kwargs = Py_BuildValue("{sN}", "max_version", version);
  PyObject* method = PyObject_GetAttrString(obj.ptr(), "__dlpack__");
  PyObject* empty = PyTuple_New(0);
  PyObject* r = PyObject_Call(method, empty, kwargs);
  Py_DECREF(kwargs);
  if (!r && PyErr_ExceptionMatches(PyExc_TypeError)) {  // producers that predate max_version
    PyErr_Clear();
    r = PyObject_Call(method, empty, nullptr);
  }
  Py_DECREF(empty);
  Py_DECREF(method);
  if (!r) throw nb::python_error();
  cap = nb::steal(r);
  const char* name = PyCapsule_GetName(cap.ptr());
  if (name && std::strcmp(name, "dltensor_versioned") == 0) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), name));
    PyCapsule_SetName(cap.ptr(), "used_dltensor_versioned");
    auto keep = own_managed(m);
    constexpr uint64_t kReadOnly = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
    const bool read_only = m->flags & kReadOnly;
    pto::Tensor t = wrap_dl(m->dl_tensor, std::move(keep));
    return read_only ? t.as_read_only() : t;
  }
  if (name && std::strcmp(name, "dltensor") == 0) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), name));
    PyCapsule_SetName(cap.ptr(), "used_dltensor");
    auto keep = own_managed(m);
    return wrap_dl(m->dl_tensor, std::move(keep));
  }
  pto::fail<pto::ArgumentError>("from_dlpack: __dlpack__ returned a capsule named '", name ? name : "", "'");
}

}  // namespace ptobind
