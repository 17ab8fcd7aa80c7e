// ptocpu.Tensor: the Python class over pto::Tensor (docs/tensors.md); DLPack is in dlpack.cpp,
// indexing in indexing.cpp.
#include <nanobind/ndarray.h>

#include <atomic>
#include <nanobind/stl/string.h>

#include "bind.h"
#include "docstrings.h"
#include "dlpack.h"
#include "ptocpu/error.h"

namespace ptobind {

// Tensor() is only an annotation placeholder for jit kernels: using it as data is a DTypeError
// (a non-tensor where a tensor is needed), never a read through a null pointer.
const pto::Tensor& require_storage(const pto::Tensor& t, const char* what) {
  if (!t.defined())
    pto::fail<pto::DTypeError>(what, ": Tensor() is an annotation placeholder without storage; create a tensor "
                               "with ptocpu.tensor(shape, dtype) or ptocpu.asarray(data)");
  return t;
}

namespace {

// numpy's limit on a shape: the product of its nonzero dims times the itemsize fits intp
// (an empty shape with a huge dim is still too big for numpy).
bool numpy_can_hold(const pto::Tensor& t) {
  int64_t bytes = static_cast<int64_t>(t.itemsize());
  for (int64_t d : t.shape())
    if (d != 0 && __builtin_mul_overflow(bytes, d, &bytes)) return false;
  return true;
}

// A numpy array over the tensor's memory (bf16 / fp8 as ml_dtypes arrays), owned by `self`.
nb::object to_numpy(nb::handle self, const pto::Tensor& t) {
  require_storage(t, "Tensor.numpy");
  if (!numpy_can_hold(t))
    pto::fail<pto::ArgumentError>("Tensor.numpy: shape ", pto::shape_to_string(t.shape()),
                                  " is too large for a numpy array (its nonzero dims times the itemsize exceed int64)");
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  dlpack::DataType d = to_dl(t.dtype());
  nb::dlpack::dtype nd{d.code, d.bits, 1};
  // bf16 / fp8: numpy has no such type, so the bytes are viewed as ml_dtypes' type of that name.
  const char* ml_name = pto::dtype_from_ml_dtypes(t.dtype()) ? pto::dtype_numpy_name(t.dtype()) : nullptr;
  if (ml_name) nd = {static_cast<uint8_t>(nb::dlpack::dtype_code::UInt), d.bits, 1};
  nb::ndarray<nb::numpy> arr(t.data(), shape.size(), shape.data(), self, t.strides().data(), nd);
  nb::object out = arr.cast();
  if (ml_name) out = out.attr("view")(nb::module_::import_("ml_dtypes").attr(ml_name));
  if (t.read_only()) out.attr("flags").attr("writeable") = false;
  return out;
}

// A jit annotation's shape written with PyPTO's markers, e.g. [pypto.STATIC, pypto.DYNAMIC].
bool is_marker_shape(nb::handle shape) {
  // Only PyPTO's markers (enum members such as pypto.DYNAMIC, or Ellipsis) make a placeholder;
  // None or a nested list in a shape is a bad shape, refused by the int conversion.
  if (!PyList_Check(shape.ptr()) && !PyTuple_Check(shape.ptr())) return false;
  nb::object enum_type = nb::module_::import_("enum").attr("Enum");
  for (nb::handle item : nb::iter(shape))
    if (item.is(Py_Ellipsis) || PyObject_IsInstance(item.ptr(), enum_type.ptr()) == 1) return true;
  return false;
}
// How many pypto.function recordings are open (all threads); ptocpu._graph counts them.
std::atomic<int> g_recordings{0};

}  // namespace

void bind_tensor(nb::module_& m) {
  m.def("_count_recording", [](int delta) { g_recordings.fetch_add(delta); }, nb::arg("delta"),
        nb::sig("def _count_recording(delta: int) -> None"),
        "pypto.function recordings opened (+1) and closed (-1): Tensor() reports new tensors only while one is open");
  // dynamic_attr: PyPTO tensors carry a name (and user attributes) next to the data.
  nb::class_<pto::Tensor> cls(m, "Tensor", nb::dynamic_attr(), "A strided view over shared storage (docs/tensors.md)");
  cls.def("__init__",
           [](pto::Tensor* self, nb::handle shape, nb::handle dtype, nb::handle name, nb::handle format, nb::handle,
              nb::handle, nb::handle) {
             // PyPTO's Tensor(shape=None, dtype=None, name="", format=None, data_ptr=None, device=None,
             // ori_shape=None). No shape, or a shape of PyPTO markers (STATIC, DYNAMIC, ...) instead of
             // ints, is an annotation placeholder that accepts any shape.
             if (shape.is_none() || is_marker_shape(shape)) new (self) pto::Tensor();
             else new (self) pto::Tensor(pto::Tensor::zeros(to_int_list(shape, "Tensor", "shape"),
                                                           dtype.is_none() ? pto::DType::FP32 : to_dtype(dtype)));
             nb::handle obj = nb::find(self);
             nb::setattr(obj, "name", name);
             if (!format.is_none()) nb::setattr(obj, "format", format);  // kept; the CPU stores every tensor ND
             // A tensor made while a pypto.function records is part of the recording: a run starts
             // it zero-filled again (docs/running_pypto_programs.md).
             // Only while some thread records: no call back into Python otherwise (a daemon thread
             // ended by the interpreter's exit inside that call would unwind through this binding).
             if (self->defined() && g_recordings.load(std::memory_order_relaxed) > 0)
               nb::module_::import_("ptocpu._graph").attr("tensor_created")(obj, to_tuple(self->shape()),
                                                                           self->dtype());
           },
           nb::arg("shape").none() = nb::none(), nb::arg("dtype").none() = nb::none(), nb::arg("name").none() = "",
           nb::arg("format").none() = nb::none(), nb::arg("data_ptr").none() = nb::none(),
           nb::arg("device").none() = nb::none(), nb::arg("ori_shape").none() = nb::none(),
           "A zero-filled tensor; Tensor() is an annotation placeholder")
      .def_prop_ro("shape", [](const pto::Tensor& t) { return to_tuple(t.shape()); })
      .def_prop_ro("valid_shape", [](const pto::Tensor& t) { return to_tuple(t.valid_shape()); },
                   "The leading part of each dim that holds data: the shape unless a view set less")
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
             ReleaseGil release;
             return t.contiguous();
           })
      .def("astype",
           [](const pto::Tensor& t, nb::handle dtype) {
             require_storage(t, "Tensor.astype");
             const pto::DType dt = to_dtype(dtype);
             ReleaseGil release;
             return pto::astype(t, dt);
           },
           nb::arg("dtype").none())
      .def("numpy", [](nb::handle self) { return to_numpy(self, nb::cast<const pto::Tensor&>(self)); },
           "A numpy array over the same memory (bf16 / fp8 as ml_dtypes arrays)")
      // numpy's protocol: copy=True always copies, None copies only for a dtype change, False
      // never does (a ValueError, here an ArgumentError, when a dtype change needs a copy).
      .def("__array__",
           [](nb::handle self, nb::handle dtype, nb::handle copy) {
             nb::object a = to_numpy(self, nb::cast<const pto::Tensor&>(self));
             const bool always = PyObject_IsTrue(copy.ptr()) == 1;
             const nb::object have = a.attr("dtype");
             if (copy.ptr() == Py_False && !dtype.is_none() && !have.equal(nb::module_::import_("numpy").attr("dtype")(dtype)))
               pto::fail<pto::ArgumentError>("Tensor.__array__: converting ", nb::str(nb::handle(have)).c_str(), " to ",
                                             nb::str(dtype).c_str(), " needs a copy, but copy=False");
             if (dtype.is_none()) return always ? a.attr("copy")() : a;
             return a.attr("astype")(dtype, nb::arg("copy") = always);
           },
           nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def("tolist", [](nb::handle self) { return to_numpy(self, nb::cast<const pto::Tensor&>(self)).attr("tolist")(); })
      .def("__len__",
           [](const pto::Tensor& t) {
             require_storage(t, "len");
             if (t.ndim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.shape(0);
           })
      .def("__getitem__", [](const pto::Tensor& t, nb::handle key) { return get_item(t, key); },
           nb::arg("key").none())
      .def("__setitem__", [](const pto::Tensor& t, nb::handle key, nb::handle value) { assign(t, key, value); },
           nb::arg("key").none(), nb::arg("value").none())
      .def("__dlpack__",
           [](const pto::Tensor& t, nb::handle stream, nb::handle max_version, nb::handle dl_device, nb::handle copy) {
             (void)stream;  // CPU memory: nothing to synchronise
             return to_dlpack(t, max_version, dl_device, copy);
           },
           nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
           nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def("__dlpack_device__", [](const pto::Tensor&) { return nb::make_tuple(int(dlpack::kDLCPU), 0); })
      .def("__repr__", [](nb::handle self) {
        const auto& t = nb::cast<const pto::Tensor&>(self);
        if (!t.defined()) return std::string("Tensor()");
        if (!numpy_can_hold(t))  // only empty tensors get here: there is no memory that large
          return "Tensor([], shape=" + pto::shape_to_string(t.shape()) + ", dtype=" + pto::dtype_name(t.dtype()) + ")";
        nb::object np = nb::module_::import_("numpy");
        nb::object body = np.attr("array2string")(to_numpy(self, t), nb::arg("separator") = ", ",
                                                  nb::arg("prefix") = "Tensor(");
        return "Tensor(" + std::string(nb::str(body).c_str()) + ", dtype=" + pto::dtype_name(t.dtype()) + ")";
      });

  m.def("tensor",
        [](nb::handle shape, nb::handle dtype) {
          return pto::Tensor::zeros(to_int_list(shape, "tensor", "shape"), to_dtype(dtype));
        },
        nb::arg("shape").none(), nb::arg("dtype").none(), nb::sig(docs::tensor.sig), docs::tensor.text);
  m.def("from_dlpack", &from_dlpack, nb::arg("x").none(), nb::sig(docs::from_dlpack.sig), docs::from_dlpack.text);
  m.def("_from_torch",
        [](nb::handle obj, bool write) -> nb::object {
          pto::Tensor t;
          return torch_fast_path(obj, write ? Access::Write : Access::Read, t) ? nb::cast(std::move(t)) : nb::none();
        },
        nb::arg("obj").none(), nb::arg("write") = false,
        "A torch CPU tensor over its memory (used by asarray), or None for what takes the DLPack path");
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
