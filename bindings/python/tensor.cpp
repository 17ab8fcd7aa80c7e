// ptocpu.Tensor: the Python class over pto::Tensor (docs/tensors.md); DLPack is in dlpack.cpp,
// indexing in indexing.cpp.
#include <nanobind/ndarray.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bind.h"
#include "docstrings.h"
#include "dlpack.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"

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
  trace_taint("its values were read into Python (Tensor.numpy / tolist / __array__)");
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

// The tensor's values as a numpy array: its memory (to_numpy), except for the formats numpy and
// ml_dtypes lack (HF8, HF4, FP4_E1M2, the X2 pairs), whose memory holds codes: their float32
// values then, an X2 pair's two values along a new last dim.
nb::object values_of(nb::handle self, const pto::Tensor& t) {
  nb::object a = to_numpy(self, t);
  const pto::DType dt = t.dtype();
  if (!pto::DTypeSet::storage_formats().contains(dt) || pto::dtype_from_ml_dtypes(dt)) return a;
  nb::object np = nb::module_::import_("numpy");
  const float* values = pto::byte_code_values(dt);
  nb::object table = np.attr("array")(nb::list(nb::cast(std::vector<float>(values, values + 256))), "float32");
  if (!pto::is_packed_pair(dt)) return table.attr("__getitem__")(a);
  nb::object low = table.attr("__getitem__")(a.attr("__and__")(15)), high = table.attr("__getitem__")(a.attr("__rshift__")(4));
  return np.attr("stack")(nb::make_tuple(low, high), nb::arg("axis") = -1);
}

// PyPTO's tensors without storage (lang/tensor_spec.py): no shape, a shape of markers (STATIC,
// DYNAMIC, ...) or with dynamic dims (-1, an unknown symbolic scalar). Shapes of plain ints do not
// need Python; anything else is that module's to read (or the int conversion's to refuse).
// The binding imports no ptocpu module: the package registers that module and the type of a
// valid shape's entries (lang/symbolic.py KnownDim) when it is imported (_register_tensor_hooks),
// and PyPTO's Element class, which the argument conversion reads as a typed scalar (convert.cpp).
PyObject* g_tensor_spec = nullptr;
PyObject* g_known_dim = nullptr;

nb::handle registered(PyObject* hook) {
  if (!hook) throw std::runtime_error("ptocpu._core: the tensor hooks are not registered; import ptocpu first");
  return hook;
}
nb::handle tensor_spec() { return registered(g_tensor_spec); }

bool plain_shape(nb::handle shape) {
  if (!PyList_Check(shape.ptr()) && !PyTuple_Check(shape.ptr())) return !shape.is_none();
  for (nb::handle item : nb::iter(shape)) {
    if (!PyLong_CheckExact(item.ptr())) return false;
    const long long v = PyLong_AsLongLong(item.ptr());
    if (v == -1 && PyErr_Occurred()) PyErr_Clear();  // too large: the int conversion says so
    else if (v == -1) return false;
  }
  return true;
}
enum class TileOpFormat { ND = 0, NZ = 1 };

// ptocpu.Shape: a tuple that also equals the list PyPTO's Tensor.shape returns.
PyObject* g_shape_type = nullptr;

PyObject* shape_richcompare(PyObject* self, PyObject* other, int op) {
  if ((op == Py_EQ || op == Py_NE) && PyList_Check(other)) {
    nb::object as_tuple = nb::steal(PyList_AsTuple(other));
    return PyTuple_Type.tp_richcompare(self, as_tuple.ptr(), op);
  }
  return PyTuple_Type.tp_richcompare(self, other, op);
}

void make_shape_type(nb::module_& m) {
  static PyType_Slot slots[] = {
      {Py_tp_richcompare, reinterpret_cast<void*>(shape_richcompare)},
      {Py_tp_hash, reinterpret_cast<void*>(PyTuple_Type.tp_hash)},
      {Py_tp_doc, const_cast<char*>("A tensor's shape: a tuple that also equals the list form (t.shape == [4, 8])")},
      {0, nullptr}};
  static PyType_Spec spec = {"ptocpu.Shape", 0, 0, Py_TPFLAGS_DEFAULT, slots};
  nb::object bases = nb::make_tuple(nb::handle(reinterpret_cast<PyObject*>(&PyTuple_Type)));
  g_shape_type = PyType_FromSpecWithBases(&spec, bases.ptr());
  if (!g_shape_type) throw nb::python_error();
  m.attr("Shape") = nb::handle(g_shape_type);
}

}  // namespace

nb::object to_shape(const std::vector<int64_t>& dims) {
  return nb::steal(PyObject_CallOneArg(g_shape_type, to_tuple(dims).ptr()));
}

void bind_tensor(nb::module_& m) {
  make_shape_type(m);
  m.def("_register_tensor_hooks",
        [](nb::object spec_module, nb::object known_dim, nb::type_object element) {
          Py_XDECREF(g_tensor_spec);
          g_tensor_spec = spec_module.release().ptr();
          Py_XDECREF(g_known_dim);
          g_known_dim = known_dim.release().ptr();
          Py_XDECREF(g_element_type);
          g_element_type = element.release().ptr();
        },
        nb::arg("tensor_spec"), nb::arg("known_dim"), nb::arg("element"),
        "ptocpu registers ptocpu.lang.tensor_spec, symbolic.KnownDim and element.Element here when it is imported");
  // dynamic_attr: PyPTO tensors carry a name (and user attributes) next to the data.
  nb::enum_<TileOpFormat>(m, "TileOpFormat", "A tensor's layout on the device; the CPU stores every tensor row-major (ND)")
      .value("TILEOP_ND", TileOpFormat::ND)
      .value("TILEOP_NZ", TileOpFormat::NZ);
  nb::class_<pto::Tensor> cls(m, "Tensor", nb::dynamic_attr(), "A strided view over shared storage (docs/tensors.md)");
  cls.attr("name") = "";  // instances made with a name keep their own
  cls.def_prop_rw(
      "format", [](const pto::Tensor& t) { return t.nz_format() ? TileOpFormat::NZ : TileOpFormat::ND; },
      [](pto::Tensor& t, TileOpFormat f) { t = t.with_nz_format(f == TileOpFormat::NZ); },
      "PyPTO's TileOpFormat: TILEOP_NZ marks the device's fractal layout (the cube's ops check its rules); "
      "the CPU stores every tensor row-major");
  cls.def("__init__",
           [](pto::Tensor* self, nb::handle shape, nb::handle dtype, nb::handle name, nb::handle format, nb::handle,
              nb::handle, nb::handle) {
             // PyPTO's Tensor(shape=None, dtype=None, name="", format=None, data_ptr=None, device=None,
             // ori_shape=None). No shape, a shape of PyPTO markers (STATIC, DYNAMIC, ...) or one with
             // dynamic dims makes a tensor without storage (a jit annotation or a declaration).
             nb::object spec = nb::none();
             if (!plain_shape(shape))
               spec = tensor_spec().attr("spec_of")(shape, dtype.is_none() ? nb::none() : nb::cast(to_dtype(dtype)));
             if (!spec.is_none()) new (self) pto::Tensor();
             else new (self) pto::Tensor(pto::with_op_named("Tensor", [&] {
               return pto::Tensor::zeros(to_int_list(shape, "Tensor", "shape"),
                                         dtype.is_none() ? pto::DType::FP32 : to_dtype(dtype));
             }));
             nb::handle obj = nb::find(self);
             if (!spec.is_none()) tensor_spec().attr("attach")(obj, spec);
             nb::setattr(obj, "name", name);
             // As a jit annotation, Tensor(shape) without a dtype takes any dtype (PyPTO checks the
             // dtype only when one is written); lang/tensor_spec.py reads the mark.
             if (dtype.is_none() && spec.is_none()) nb::setattr(obj, "_any_dtype", nb::bool_(true));
             if (!format.is_none())  // kept; the CPU stores every tensor ND
               *self = self->with_nz_format(nb::cast<TileOpFormat>(format) == TileOpFormat::NZ);
             // A tensor made inside a pypto.function is part of its program: a run starts it
             // zero-filled again (docs/kernel_model.md#pypto-function).
             if (self->defined()) {
               trace_created(*self);
               notify_handlers("created", nb::borrow<nb::args>(nb::make_tuple(obj, to_tuple(self->shape()), self->dtype())));
             }
           },
           nb::arg("shape").none() = nb::none(), nb::arg("dtype").none() = nb::none(), nb::arg("name").none() = "",
           nb::arg("format").none() = nb::none(), nb::arg("data_ptr").none() = nb::none(),
           nb::arg("device").none() = nb::none(), nb::arg("ori_shape").none() = nb::none(),
           "A zero-filled tensor; Tensor() is an annotation placeholder")
      .def_prop_ro("shape",
                   [](nb::handle self) -> nb::object {
                     const auto& t = nb::cast<const pto::Tensor&>(self);
                     return t.defined() ? to_shape(t.shape()) : tensor_spec().attr("shape_of")(self);
                   },
                   nb::for_getter(nb::sig("def shape(self, /) -> tuple[int, ...]")),
                   "The shape (a tuple that also equals the list form, as PyPTO's); without storage, the "
                   "shape as written, each dynamic dim an unknown symbolic scalar")
      .def_prop_ro("valid_shape",
                   [](const pto::Tensor& t) {
                     // PyPTO's entries are symbolic scalars (x.concrete()); known ones here, printed as ints.
                     PyObject* const dim = registered(g_known_dim).ptr();
                     nb::list dims;
                     for (int64_t d : t.valid_shape()) dims.append(nb::steal(PyObject_CallOneArg(dim, nb::int_(d).ptr())));
                     return nb::steal(PyObject_CallOneArg(g_shape_type, nb::tuple(dims).ptr()));
                   },
                   nb::for_getter(nb::sig("def valid_shape(self, /) -> tuple[int, ...]")),
                   "The leading part of each dim that holds data: the shape unless a view set less (its entries "
                   "are known symbolic scalars, ints with .concrete(), as PyPTO's)")
      .def_prop_ro("partially_valid", &pto::Tensor::partially_valid,
                   "True when the valid shape is smaller than the shape")
      .def_prop_ro("dim",
                   [](nb::handle self) {
                     const auto& t = nb::cast<const pto::Tensor&>(self);
                     return t.defined() ? t.ndim() : static_cast<int>(nb::len(nb::object(self.attr("shape"))));
                   },
                   "The rank (PyPTO's name for ndim)")
      .def_prop_ro("_whole", [](const pto::Tensor& t) { return t.with_valid_shape(t.shape()); },
                   "This tensor with its valid shape cleared (what a move into an output copies)")
      .def_prop_ro("_address", [](const pto::Tensor& t) { return reinterpret_cast<uintptr_t>(t.data()); },
                   "Where the first element is (0 without storage); reads no values")
      .def("_rebind", [](pto::Tensor& self, const pto::Tensor& other) { self = other; },
           "This object now stands for other's value (a pypto.function replay rebinds its tensors)")
      .def("move",
           [](nb::handle self, nb::handle other) {
             if (!nb::isinstance<pto::Tensor>(other))
               throw nb::type_error(("'" + std::string(nb::type_name(other.type()).c_str()) +
                                     "' type cannot be moved to Tensor").c_str());
             nb::cast<pto::Tensor&>(self) = nb::cast<const pto::Tensor&>(other);
             notify_handlers("moved", nb::borrow<nb::args>(nb::make_tuple(self, other)));
           },
           nb::arg("other").none(), "t.move(other): t now stands for other's value (PyPTO's rebinding, no copy)")
      .def("base", [](nb::handle self) { return nb::borrow(self); }, "The tensor itself (PyPTO's handle to its storage)")
      .def("to_tensor",
           [](nb::handle self, nb::handle name) {
             if (PyUnicode_Check(name.ptr()) && PyUnicode_GET_LENGTH(name.ptr()) > 0) nb::setattr(self, "name", name);
             return nb::borrow(self);
           },
           nb::arg("name") = "", "This tensor, named `name` when one is given")
      .def("is_empty", [](const pto::Tensor& t) { return !t.defined() || t.numel() == 0; },
           "True for Tensor() and for tensors without elements")
      .def_static("__class_getitem__",
                  [](nb::handle params) -> nb::object {
                    // PyPTO reads each item by its type, in any order: a list or tuple is the shape, a
                    // DataType the dtype, a TileOpFormat the format, a str the name, a dict any of
                    // those by key; anything else (Tensor[...]) says nothing: any shape, any dtype.
                    nb::object shape = nb::none(), dtype = nb::none(), name = nb::str(""), format = nb::none();
                    const nb::tuple items = PyTuple_Check(params.ptr()) ? nb::borrow<nb::tuple>(params)
                                                                         : nb::make_tuple(params);
                    for (nb::handle item : items) {
                      if (PyDict_Check(item.ptr())) {
                        const nb::dict d = nb::borrow<nb::dict>(item);
                        if (d.contains("shape")) shape = d["shape"];
                        if (d.contains("dtype")) dtype = d["dtype"];
                        if (d.contains("name")) name = d["name"];
                        if (d.contains("format")) format = d["format"];
                      } else if (PyList_Check(item.ptr()) || PyTuple_Check(item.ptr())) {
                        shape = nb::borrow(item);
                      } else if (nb::isinstance<pto::DType>(item)) {
                        dtype = nb::borrow(item);
                      } else if (nb::isinstance<TileOpFormat>(item)) {
                        format = nb::borrow(item);
                      } else if (PyUnicode_Check(item.ptr())) {
                        name = nb::borrow(item);
                      }
                    }
                    return nb::type<pto::Tensor>()(shape, dtype, name, format);
                  },
                  "Tensor[shape, dtype, ...]: PyPTO's annotation spelling of Tensor(shape, dtype, ...); "
                  "Tensor[...] takes any tensor")
      .def_prop_ro("strides", [](const pto::Tensor& t) { return to_tuple(t.strides()); }, "Strides in elements")
      .def_prop_ro("dtype",
                   [](nb::handle self) -> nb::object {
                     const auto& t = nb::cast<const pto::Tensor&>(self);
                     return t.defined() ? nb::cast(t.dtype()) : tensor_spec().attr("dtype_of")(self);
                   },
                   nb::for_getter(nb::sig("def dtype(self, /) -> DType")))
      .def_prop_ro("ndim", &pto::Tensor::ndim)
      .def_prop_ro("numel", &pto::Tensor::numel)
      .def_prop_ro("itemsize", &pto::Tensor::itemsize)
      .def("is_contiguous", &pto::Tensor::is_contiguous)
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
      .def("__iter__",
           [](nb::handle self) -> nb::object {
             // PyPTO's tensors are not iterable (unpacking one in a kernel is an error); outside
             // kernels a ptocpu tensor iterates its rows as an array does.
             if (pto::in_kernel())
               pto::fail<pto::DTypeError>("Tensor is not iterable inside a kernel (PyPTO's tensors are not); index or "
                                          "view it instead");
             return nb::steal(PySeqIter_New(self.ptr()));
           })
      .def("tolist", [](nb::handle self) { return values_of(self, nb::cast<const pto::Tensor&>(self)).attr("tolist")(); })
      .def("__len__",
           [](const pto::Tensor& t) {
             require_storage(t, "len");
             if (t.ndim() == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.shape(0);
           })
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
        nb::object body = np.attr("array2string")(values_of(self, t), nb::arg("separator") = ", ",
                                                  nb::arg("prefix") = "Tensor(");
        return "Tensor(" + std::string(nb::str(body).c_str()) + ", dtype=" + pto::dtype_name(t.dtype()) + ")";
      });

  m.def("from_dlpack",
        [](nb::handle x) {
          pto::Tensor t = from_dlpack(x);
          pin_torch_memory(t);
          return t;
        },
        nb::arg("x").none(), nb::sig(docs::from_dlpack.sig), docs::from_dlpack.text);
  // A jit kernel's argument: asarray(obj, copy=...) without pinning torch memory. The import lives
  // for the call: a compiled run keeps none of its tensors, and a body that runs pins them
  // (_pin_torch_memory) before it can keep one. Pinning costs several torch calls per argument.
  m.def("_kernel_argument",
        [](nb::handle obj, nb::handle copy) {
          return asarray(obj, copy.is_none() ? std::nullopt : std::optional<bool>(copy.ptr() == Py_True), std::nullopt);
        },
        nb::arg("obj"), nb::arg("copy").none());
  m.def("_pin_torch_memory", [](const pto::Tensor& t) { pin_torch_memory(t); },
        "Makes the torch storage under t non-resizable, as asarray does (docs/tensors.md)");
  m.def("asarray",
        [](nb::handle obj, nb::handle dtype, nb::handle copy) -> nb::object {
          if (!copy.is_none() && !PyBool_Check(copy.ptr()))
            pto::fail<pto::DTypeError>("asarray: copy must be None, True or False, got ", nb::repr(copy).c_str());
          std::optional<pto::DType> dt;
          if (!dtype.is_none()) dt = to_dtype(dtype);
          pto::Tensor* given = nullptr;
          const bool as_is = copy.ptr() != Py_True && nb::try_cast<pto::Tensor*>(obj, given) && given &&
                             given->defined() && (!dt || *dt == given->dtype());
          if (as_is) return nb::borrow(obj);  // already a tensor of that dtype: itself
          std::optional<bool> c;
          if (copy.ptr() == Py_False) c = false;
          pto::Tensor t = asarray(obj, c, dt);
          if (copy.ptr() == Py_True && !dt) {  // copy=True: always a new tensor
            pto::Tensor copied = pto::Tensor::empty(t.shape(), t.dtype());
            pto::copy_into(copied, t);
            return nb::cast(std::move(copied));
          }
          pin_torch_memory(t);
          return nb::cast(std::move(t));
        },
        nb::arg("obj").none(), nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("copy").none() = nb::none(),
        nb::sig(docs::asarray.sig), docs::asarray.text);
  m.def("from_numpy",
        [](nb::handle a, nb::handle copy) {
          if (!nb::hasattr(a, "__array_interface__") || !nb::hasattr(a, "dtype"))
            pto::fail<pto::DTypeError>("from_numpy: expected a numpy.ndarray, got ", nb::type_name(a.type()).c_str());
          return from_numpy(a, copy.is_none() ? std::nullopt : std::optional<bool>(copy.ptr() == Py_True));
        },
        nb::arg("a").none(), nb::kw_only(), nb::arg("copy").none() = nb::none(), nb::sig(docs::from_numpy.sig),
        docs::from_numpy.text);
}

}  // namespace ptobind
