// DLPack both ways: exporting a ptocpu.Tensor as a (legacy or versioned) capsule, importing
// anything with __dlpack__ zero-copy (docs/tensors.md).
#include <Python.h>

#include <cstring>
#include <iterator>
#include <optional>

#include "bind.h"
#include "dlpack.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {

using pto::DType;
constexpr uint64_t kReadOnly = 1;   // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr uint64_t kIsCopied = 2;   // DLPACK_FLAG_BITMASK_IS_COPIED
constexpr uint32_t kMajorVersion = 1;

// DLPack's type codes by name, for messages (complex64 is code 5, 64 bits).
std::string dl_name(dlpack::DataType t) {
  static const char* const names[] = {"int", "uint", "float", "opaque_handle", "bfloat", "complex", "bool"};
  if (t.code >= std::size(names)) return "";
  return names[t.code] + std::to_string(t.bits) + (t.lanes == 1 ? "" : "x" + std::to_string(t.lanes)) + " ";
}

DType from_dl(dlpack::DataType t) {
  if (t.lanes == 1) {
    for (int i = 0; i < pto::kNumDTypes; ++i) {
      const auto dt = static_cast<DType>(i);
      const dlpack::DataType d = to_dl(dt);
      if (d.code == t.code && d.bits == t.bits) return dt;
    }
  }
  pto::fail<pto::DTypeError>("from_dlpack: DLPack dtype ", dl_name(t), "(code ", int(t.code), ", bits ", int(t.bits),
                             ", lanes ", t.lanes, ") has no ptocpu dtype");
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

// The capsule's tensor as a pto::Tensor, after checking what a producer could get wrong.
pto::Tensor wrap_dl(const dlpack::Tensor& dl, std::shared_ptr<void> keep_alive) {
  if (dl.device.device_type != dlpack::kDLCPU && dl.device.device_type != dlpack::kDLCUDAHost)
    pto::fail<pto::ArgumentError>("from_dlpack: device type ", dl.device.device_type,
                                  " is not the CPU; move the tensor to the CPU first");
  const DType dt = from_dl(dl.dtype);
  if (dl.ndim < 0 || (dl.ndim > 0 && !dl.shape))
    pto::fail<pto::ArgumentError>("from_dlpack: malformed capsule: ndim ", dl.ndim,
                                  dl.ndim > 0 ? " with no shape array" : " is negative");
  pto::Shape shape(dl.shape, dl.shape + dl.ndim);
  pto::checked_nbytes(shape, pto::dtype_size(dt), "from_dlpack");  // negative dims, sizes past int64
  if (!dl.data && pto::shape_numel(shape) > 0)
    pto::fail<pto::ArgumentError>("from_dlpack: malformed capsule: a null data pointer for shape ",
                                  pto::shape_to_string(shape));
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

// An import of a torch producer also owns the producer's storage (own_torch_storage): the capsule
// keeps only the torch tensor, which a later x.set_(other) would move off the memory.
pto::Tensor with_torch_storage(const pto::Tensor& t, nb::handle producer) {
  if (!is_torch_tensor(producer)) return t;
  return pto::Tensor::from_blob(t.data(), t.shape(), t.strides(), t.dtype(),
                                own_torch_storage(producer.attr("untyped_storage")(), t.owner()));
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
    case DType::INT4: case DType::HF8: case DType::HF4: case DType::FP4_E2M1: case DType::FP4_E1M2:
    case DType::FP4_E2M1X2: case DType::FP4_E1M2X2:
      return {dlpack::kDLUInt, 8, 1};  // DLPack has none of these as one element per byte: their codes
    default: return {dlpack::kDLFloat, bits, 1};
  }
}

namespace {

constexpr const char* kExport = "Tensor.__dlpack__";

// max_version: None (the legacy protocol) or a (major, minor) pair of ints.
bool wants_versioned(nb::handle max_version) {
  if (max_version.is_none()) return false;
  if (!PyTuple_Check(max_version.ptr()) || PyTuple_GET_SIZE(max_version.ptr()) != 2)
    pto::fail<pto::DTypeError>(kExport, ": max_version must be a (major, minor) tuple of ints, got ",
                               nb::repr(max_version).c_str());
  to_int(max_version[1], kExport, "max_version minor");
  return to_int(max_version[0], kExport, "max_version major") >= 1;
}

// dl_device: None or the CPU, (kDLCPU, 0).
void check_device(nb::handle dl_device) {
  if (dl_device.is_none()) return;
  if (!PyTuple_Check(dl_device.ptr()) || PyTuple_GET_SIZE(dl_device.ptr()) != 2)
    pto::fail<pto::DTypeError>(kExport, ": dl_device must be a (device_type, device_id) tuple of ints, got ",
                               nb::repr(dl_device).c_str());
  const int64_t type = to_int(dl_device[0], kExport, "dl_device type"), id = to_int(dl_device[1], kExport, "dl_device id");
  if (type != dlpack::kDLCPU || id != 0)
    pto::fail<pto::ArgumentError>(kExport, ": dl_device (", type, ", ", id, ") is not the CPU (", int(dlpack::kDLCPU),
                                  ", 0); ptocpu tensors live in CPU memory");
}

// copy: None (copy only if needed), True or False.
std::optional<bool> copy_request(nb::handle copy) {
  if (copy.is_none()) return std::nullopt;
  if (!PyBool_Check(copy.ptr()))
    pto::fail<pto::DTypeError>(kExport, ": copy must be None, True or False, got ", nb::repr(copy).c_str());
  return copy.ptr() == Py_True;
}

}  // namespace

// A read-only tensor leaves only as a copy flagged read-only: consumers such as torch ignore
// DLPack's read-only flag, so its memory itself is never exported, and the legacy protocol,
// which has no such flag, refuses it (docs/tensors.md).
nb::object to_dlpack(const pto::Tensor& t, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
  require_storage(t, kExport);
  trace_taint("a tensor left through DLPack (torch.from_dlpack and the like)");
  const bool versioned = wants_versioned(max_version);
  check_device(dl_device);
  const std::optional<bool> want_copy = copy_request(copy);
  if (t.read_only() && want_copy != true) {
    if (!versioned)
      pto::fail<pto::ArgumentError>(kExport, ": the tensor is read-only and the legacy DLPack protocol cannot say so; "
                                    "ask for max_version=(1, 0) or a copy (copy=True)");
    if (want_copy == false)
      pto::fail<pto::ArgumentError>(kExport, ": the tensor is read-only and is exported only as a copy (consumers may "
                                    "ignore DLPack's read-only flag); use copy=None, or numpy() for a read-only view");
  }
  pto::Tensor exported = t;
  const bool copied = want_copy == true || t.read_only();
  if (copied) {
    exported = pto::Tensor::empty(t.shape(), t.dtype());
    pto::copy_into(exported, t);
  }
  auto* e = new Export{exported, exported.shape(), exported.strides()};
  if (versioned) {
    auto* m = new dlpack::ManagedTensorVersioned{};
    m->version = {kMajorVersion, 1};
    m->flags = (t.read_only() ? kReadOnly : 0) | (copied ? kIsCopied : 0);
    fill(m, e);
    return nb::steal(PyCapsule_New(m, "dltensor_versioned", capsule_destructor<dlpack::ManagedTensorVersioned>));
  }
  auto* m = new dlpack::ManagedTensor{};
  fill(m, e);
  return nb::steal(PyCapsule_New(m, "dltensor", capsule_destructor<dlpack::ManagedTensor>));
}

pto::Tensor from_dlpack(nb::handle producer) {
  pto::Tensor* t = nullptr;
  if (nb::try_cast<pto::Tensor*>(producer, t) && t) return require_storage(*t, "from_dlpack");
  if (!nb::hasattr(producer, "__dlpack__"))
    pto::fail<pto::DTypeError>("from_dlpack: ", nb::type_name(producer.type()).c_str(), " has no __dlpack__ method");
  // A torch tensor that requires grad refuses to export itself; its detached alias is imported
  // read-only, since a write would bypass autograd (docs/tensors.md).
  nb::object obj = nb::borrow(producer);
  const bool requires_grad = nb::hasattr(obj, "requires_grad") && nb::hasattr(obj, "detach") &&
                             PyObject_IsTrue(obj.attr("requires_grad").ptr()) == 1;
  if (requires_grad) obj = obj.attr("detach")();
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
  if (!r) {
    // The producer's own refusal (BufferError, ...) as a ptocpu error naming from_dlpack.
    nb::python_error e;
    if (is_ptocpu_error(e.value())) throw e;
    pto::fail<pto::ArgumentError>("from_dlpack: ", nb::type_name(obj.type()).c_str(), ".__dlpack__ failed: ",
                                  nb::type_name(e.type()).c_str(), ": ", nb::str(e.value()).c_str());
  }
  cap = nb::steal(r);
  const char* name = PyCapsule_CheckExact(cap.ptr()) ? PyCapsule_GetName(cap.ptr()) : nullptr;
  void* managed = name ? PyCapsule_GetPointer(cap.ptr(), name) : nullptr;
  PyErr_Clear();  // a capsule without a name or pointer is refused below
  if (name && managed && std::strcmp(name, "dltensor_versioned") == 0) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(managed);
    // Only the version is read before the capsule is taken: a refused capsule stays the producer's.
    if (m->version.major != kMajorVersion)
      pto::fail<pto::ArgumentError>("from_dlpack: DLPack version ", m->version.major, ".", m->version.minor,
                                    " is not supported; ptocpu reads major version ", kMajorVersion);
    PyCapsule_SetName(cap.ptr(), "used_dltensor_versioned");
    pto::Tensor t = with_torch_storage(wrap_dl(m->dl_tensor, own_managed(m)), obj);
    return (m->flags & kReadOnly) || requires_grad ? t.as_read_only() : t;
  }
  if (name && managed && std::strcmp(name, "dltensor") == 0) {
    auto* m = static_cast<dlpack::ManagedTensor*>(managed);
    PyCapsule_SetName(cap.ptr(), "used_dltensor");
    pto::Tensor t = with_torch_storage(wrap_dl(m->dl_tensor, own_managed(m)), obj);
    return requires_grad ? t.as_read_only() : t;
  }
  pto::fail<pto::ArgumentError>("from_dlpack: __dlpack__ returned ", nb::type_name(cap.type()).c_str(),
                                name ? std::string(" named '") + name + "'" : std::string(),
                                ", not a DLPack capsule (dltensor or dltensor_versioned)");
}

}  // namespace ptobind
