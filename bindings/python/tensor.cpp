// ptocpu.Tensor: SPEC 3's interface over pto::Tensor, DLPack both ways, numpy views.
#include <Python.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstring>

#include "bind.h"
#include "dlpack.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {

using pto::DType;

// Tensor() is only an annotation placeholder for jit kernels: using it as data is a DTypeError
// (a non-tensor where a tensor is needed), never a read through a null pointer.
const pto::Tensor& require_storage(const pto::Tensor& t, const char* what) {
  if (!t.defined())
    pto::fail<pto::DTypeError>(what, ": Tensor() is an annotation placeholder without storage; create a tensor "
                               "with ptocpu.tensor(shape, dtype) or ptocpu.asarray(data)");
  return t;
}

dlpack::DataType to_dl(DType dt) {
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

// A numpy array over the tensor's memory (bf16 / fp8 as ml_dtypes arrays), owned by `self`.
nb::object to_numpy(nb::handle self, const pto::Tensor& t) {
  require_storage(t, "Tensor.numpy");
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  dlpack::DataType d = to_dl(t.dtype());
  nb::dlpack::dtype nd{d.code, d.bits, 1};
  const char* ml_name = nullptr;
  switch (t.dtype()) {
    case DType::BF16: ml_name = "bfloat16"; break;
    case DType::FP8E4M3: ml_name = "float8_e4m3fn"; break;
    case DType::FP8E5M2: ml_name = "float8_e5m2"; break;
    case DType::FP8E8M0: ml_name = "float8_e8m0fnu"; break;
    default: break;
  }
  if (ml_name) nd = {static_cast<uint8_t>(nb::dlpack::dtype_code::UInt), d.bits, 1};
  nb::ndarray<nb::numpy> arr(t.data(), shape.size(), shape.data(), self, t.strides().data(), nd);
  nb::object out = arr.cast();
  if (ml_name) out = out.attr("view")(nb::module_::import_("ml_dtypes").attr(ml_name));
  if (t.read_only()) out.attr("flags").attr("writeable") = false;
  return out;
}

// Basic indexing (ints, slices, Ellipsis, None) as a view.
pto::Tensor basic_index(const pto::Tensor& t, nb::handle key) {
  require_storage(t, "Tensor index");
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(h);
  } else {
    items.push_back(key);
  }
  int consumed = 0, ellipses = 0;
  for (nb::handle h : items) {
    if (h.ptr() == Py_Ellipsis) ++ellipses;
    else if (!h.is_none()) ++consumed;
  }
  if (ellipses > 1) pto::fail<pto::ArgumentError>("Tensor index: at most one Ellipsis, got ", ellipses);
  if (consumed > t.ndim())
    pto::fail<pto::IndexError>("Tensor index: ", consumed, " indices for a tensor of rank ", t.ndim());
  pto::Shape shape;
  pto::Strides strides;
  int64_t offset = 0;
  int dim = 0;
  for (nb::handle h : items) {
    PyObject* p = h.ptr();
    if (p == Py_Ellipsis) {
      for (int k = 0; k < t.ndim() - consumed; ++k, ++dim) {
        shape.push_back(t.shape(dim));
        strides.push_back(t.stride(dim));
      }
    } else if (h.is_none()) {
      shape.push_back(1);
      strides.push_back(0);
    } else if (PySlice_Check(p)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(p, &start, &stop, &step) < 0) throw nb::python_error();
      const Py_ssize_t len = PySlice_AdjustIndices(t.shape(dim), &start, &stop, step);
      shape.push_back(len);
      strides.push_back(t.stride(dim) * step);
      if (len > 0) offset += start * t.stride(dim);
      ++dim;
    } else if (!PyBool_Check(p) && PyIndex_Check(p)) {
      int64_t i = to_int(h, "Tensor index", "index");
      const int64_t n = t.shape(dim);
      if (i < -n || i >= n)
        pto::fail<pto::IndexError>("Tensor index: index ", i, " is out of range [", -n, ", ", n, ") for dim ", dim,
                                   " of shape ", pto::shape_to_string(t.shape()));
      offset += (i < 0 ? i + n : i) * t.stride(dim);
      ++dim;
    } else {
      pto::fail<pto::DTypeError>("Tensor index: only ints, slices, Ellipsis and None are supported, got ",
                                 nb::type_name(h.type()).c_str());
    }
  }
  for (; dim < t.ndim(); ++dim) {
    shape.push_back(t.shape(dim));
    strides.push_back(t.stride(dim));
  }
  return t.as_strided(shape, strides, offset);
}

// t[key] = value: a scalar, or a tensor of t's dtype broadcast like numpy.
void assign(const pto::Tensor& t, nb::handle key, nb::handle value) {
  const pto::Tensor view = basic_index(t, key);
  alignas(8) unsigned char element[8];
  pto::Tensor src;
  if (auto s = to_scalar(value)) {
    pto::encode_scalar(*s, view.dtype(), element, "Tensor assignment", "value");
    src = pto::Tensor::from_blob(element, view.shape(), pto::Strides(view.ndim(), 0), view.dtype(), nullptr);
  } else {
    pto::Tensor v = to_tensor(value, "Tensor assignment", "value");
    if (v.dtype() != view.dtype())
      pto::fail<pto::DTypeError>("Tensor assignment: value dtype ", pto::dtype_name(v.dtype()),
                                 " must match the tensor dtype ", pto::dtype_name(view.dtype()));
    if (v.ndim() > view.ndim())
      pto::fail<pto::ArgumentError>("Tensor assignment: value shape ", pto::shape_to_string(v.shape()),
                                    " cannot broadcast to ", pto::shape_to_string(view.shape()));
    if (v.may_overlap(view)) {
      pto::Tensor copy = pto::Tensor::empty(v.shape(), v.dtype());
      pto::copy_into(copy, v);
      v = copy;
    }
    pto::Strides strides(view.ndim(), 0);
    const int lead = view.ndim() - v.ndim();
    for (int i = 0; i < v.ndim(); ++i) {
      const int64_t n = v.shape(i), want = view.shape(lead + i);
      if (n == want) strides[lead + i] = v.stride(i);
      else if (n != 1)
        pto::fail<pto::ArgumentError>("Tensor assignment: value shape ", pto::shape_to_string(v.shape()),
                                      " cannot broadcast to ", pto::shape_to_string(view.shape()));
    }
    src = v.as_strided(view.shape(), strides, 0);
  }
  nb::gil_scoped_release release;
  pto::copy_into(view, src, "Tensor assignment");
}

// A jit annotation's shape written with PyPTO's markers, e.g. [pypto.STATIC, pypto.DYNAMIC].
bool is_marker_shape(nb::handle shape) {
  if (!PyList_Check(shape.ptr()) && !PyTuple_Check(shape.ptr())) return false;
  for (nb::handle item : nb::iter(shape))
    if (!PyNumber_Check(item.ptr()) && !PyUnicode_Check(item.ptr())) return true;  // an enum member, Ellipsis
  return false;
}

}  // namespace

void bind_tensor(nb::module_& m) {
  // dynamic_attr: PyPTO tensors carry a name (and user attributes) next to the data.
  nb::class_<pto::Tensor> cls(m, "Tensor", nb::dynamic_attr(), "A strided view over shared storage (SPEC 3)");
  cls.def("__init__",
           [](pto::Tensor* self, nb::handle shape, nb::handle dtype, nb::handle name, nb::handle, nb::handle,
              nb::handle, nb::handle) {
             // PyPTO's Tensor(shape=None, dtype=None, name="", format=None, data_ptr=None, device=None,
             // ori_shape=None). No shape, or a shape of PyPTO markers (STATIC, DYNAMIC, ...) instead of
             // ints, is an annotation placeholder that accepts any shape.
             if (shape.is_none() || is_marker_shape(shape)) new (self) pto::Tensor();
             else new (self) pto::Tensor(pto::Tensor::zeros(to_int_list(shape, "Tensor", "shape"),
                                                           dtype.is_none() ? pto::DType::FP32 : to_dtype(dtype)));
             nb::setattr(nb::find(self), "name", name);
           },
           nb::arg("shape") = nb::none(), nb::arg("dtype") = nb::none(), nb::arg("name") = "",
           nb::arg("format") = nb::none(), nb::arg("data_ptr") = nb::none(), nb::arg("device") = nb::none(),
           nb::arg("ori_shape") = nb::none(), "A zero-filled tensor; Tensor() is an annotation placeholder")
      .def_prop_ro("_shape", [](const pto::Tensor& t) { return to_tuple(t.shape()); })
      .def_prop_ro("_valid_shape", [](const pto::Tensor& t) { return to_tuple(t.valid_shape()); })
      .def_prop_ro("_whole", [](const pto::Tensor& t) { return t.with_valid_shape(t.shape()); },
                   "This tensor with its valid shape cleared (what a move into an output copies)")
      .def("_rebind", [](pto::Tensor& self, const pto::Tensor& other) { self = other; },
           "Tensor.move: this object now stands for other's value")
      .def_prop_ro("strides", [](const pto::Tensor& t) { return to_tuple(t.strides()); }, "Strides in elements")
      .def_prop_ro("dtype", &pto::Tensor::dtype)
      .def_prop_ro("ndim", &pto::Tensor::ndim)
      .def_prop_ro("numel", &pto::Tensor::numel)
      .def_prop_ro("itemsize", &pto::Tensor::itemsize)
      .def("is_contiguous", &pto::Tensor::is_contiguous)
      .def("contiguous",
           [](const pto::Tensor& t) {
             require_storage(t, "Tensor.contiguous");
             nb::gil_scoped_release release;
             return t.contiguous();
           })
      .def("astype",
           [](const pto::Tensor& t, nb::handle dtype) {
             require_storage(t, "Tensor.astype");
             const DType dt = to_dtype(dtype);
             nb::gil_scoped_release release;
             return pto::astype(t, dt);
           },
           nb::arg("dtype").none())
      .def("numpy", [](nb::handle self) { return to_numpy(self, nb::cast<const pto::Tensor&>(self)); },
           "A numpy array over the same memory (bf16 / fp8 as ml_dtypes arrays)")
      .def("__array__",
           [](nb::handle self, nb::handle dtype, nb::handle) {
             nb::object a = to_numpy(self, nb::cast<const pto::Tensor&>(self));
             return dtype.is_none() ? a : a.attr("astype")(dtype);
           },
           nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def("tolist", [](nb::handle self) { return to_numpy(self, nb::cast<const pto::Tensor&>(self)).attr("tolist")(); })
      .def("__len__",
           [](const pto::Tensor& t) {
             require_storage(t, "len");
             if (t.ndim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.shape(0);
           })
      .def("__getitem__", [](const pto::Tensor& t, nb::handle key) { return basic_index(t, key); },
           nb::arg("key").none())
      .def("__setitem__", [](const pto::Tensor& t, nb::handle key, nb::handle value) { assign(t, key, value); },
           nb::arg("key").none(), nb::arg("value").none())
      .def("__dlpack__",
           [](const pto::Tensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             (void)stream;
             (void)dl_device;
             return to_dlpack(t, max_version, copy);
           },
           nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
           nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__", [](const pto::Tensor&) { return nb::make_tuple(int(dlpack::kDLCPU), 0); })
      .def("__repr__", [](nb::handle self) {
        const auto& t = nb::cast<const pto::Tensor&>(self);
        if (!t.defined()) return std::string("Tensor()");
        nb::object np = nb::module_::import_("numpy");
        nb::object body = np.attr("array2string")(to_numpy(self, t), nb::arg("separator") = ", ",
                                                  nb::arg("prefix") = "Tensor(");
        return "Tensor(" + std::string(nb::str(body).c_str()) + ", dtype=" + pto::dtype_name(t.dtype()) + ")";
      });

  m.def("tensor",
        [](nb::handle shape, nb::handle dtype) {
          return pto::Tensor::zeros(to_int_list(shape, "tensor", "shape"), to_dtype(dtype));
        },
        nb::arg("shape"), nb::arg("dtype").none(), "A zero-filled tensor of shape and dtype");
  m.def("from_dlpack", &from_dlpack, nb::arg("x"), "Zero-copy import of anything with __dlpack__");
  m.def("_from_pointer",
        [](uintptr_t ptr, nb::handle shape, nb::handle strides, nb::handle dtype, nb::handle owner, bool read_only) {
          pto::Tensor t = pto::Tensor::from_blob(reinterpret_cast<void*>(ptr), to_int_list(shape, "from_numpy", "shape"),
                                                 to_int_list(strides, "from_numpy", "strides"), to_dtype(dtype),
                                                 keep_python_alive(owner));
          return read_only ? t.as_read_only() : t;
        },
        nb::arg("ptr"), nb::arg("shape"), nb::arg("strides"), nb::arg("dtype"), nb::arg("owner"),
        nb::arg("read_only") = false,
        "Wraps memory owned by `owner` (used by from_numpy)");
}

}  // namespace ptobind
