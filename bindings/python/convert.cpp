// Argument conversion shared by every binding.
#include <Python.h>
#include <nanobind/stl/string.h>

#include <bit>
#include <cmath>

#include "bind.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {

// Attributes of third-party modules (numpy, ml_dtypes, torch) looked up once and kept for the
// life of the process.
nb::handle cached(PyObject*& slot, const char* module, const char* attr) {
  if (!slot) slot = nb::object(nb::module_::import_(module).attr(attr)).release().ptr();
  return slot;
}
PyObject* g_np_generic = nullptr;
PyObject* g_np_asarray = nullptr;
PyObject* g_np_dtype = nullptr;

std::string python_type_name(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

// The fast path of asarray for a numpy.ndarray of a standard dtype (the buffer protocol, no
// Python code) or of an ml_dtypes dtype (through a view as unsigned integers of its width): the same
// zero-copy view as from_numpy. Anything it does not cover (byte-swapped data, byte strides that are
// not whole elements, subclasses) returns false and takes from_numpy's path.
PyObject* g_ndarray = nullptr;

bool dtype_of_format(const char* f, Py_ssize_t itemsize, pto::DType& dt) {
  if (*f == '@' || *f == '=' || (*f == '<' && std::endian::native == std::endian::little)) ++f;
  if (!f[0] || f[1]) return false;
  switch (f[0]) {
    case '?': dt = pto::DType::BOOL; break;
    case 'b': dt = pto::DType::INT8; break;
    case 'B': dt = pto::DType::UINT8; break;
    case 'h': dt = pto::DType::INT16; break;
    case 'H': dt = pto::DType::UINT16; break;
    case 'i': case 'l': case 'q': dt = itemsize == 4 ? pto::DType::INT32 : pto::DType::INT64; break;
    case 'I': case 'L': case 'Q': dt = itemsize == 4 ? pto::DType::UINT32 : pto::DType::UINT64; break;
    case 'e': dt = pto::DType::FP16; break;
    case 'f': dt = pto::DType::FP32; break;
    case 'd': dt = pto::DType::FP64; break;
    default: return false;
  }
  return static_cast<Py_ssize_t>(pto::dtype_size(dt)) == itemsize;
}

// `array`'s memory by the buffer protocol as a tensor of dtype `as` (nullopt: the buffer's own
// format), keeping `owner` alive; false (no error set) where the buffer does not fit.
bool from_buffer(nb::handle array, nb::handle owner, std::optional<pto::DType> as, pto::Tensor& out) {
  Py_buffer view;
  if (PyObject_GetBuffer(array.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();  // e.g. an ml_dtypes dtype
    return false;
  }
  pto::DType dt;
  bool ok = view.format && dtype_of_format(view.format, view.itemsize, dt);
  if (ok && as) {
    ok = static_cast<Py_ssize_t>(pto::dtype_size(*as)) == view.itemsize;
    dt = *as;
  }
  pto::Shape shape(view.shape, view.shape + view.ndim);
  pto::Strides strides(view.ndim);
  for (int i = 0; ok && i < view.ndim; ++i) {
    ok = view.strides[i] % view.itemsize == 0;
    strides[i] = view.strides[i] / view.itemsize;
  }
  void* ptr = view.buf;
  const bool read_only = view.readonly;
  PyBuffer_Release(&view);
  if (!ok) return false;
  out = pto::Tensor::from_blob(ptr, shape, strides, dt, keep_python_alive(owner));
  if (read_only) out = out.as_read_only();
  return true;
}

// ml_dtypes' dtypes that ptocpu has, each as numpy's one dtype object for it (a byte-swapped
// variant is another object) -> (DType, the unsigned integer dtype of its width). from_numpy's walk
// of the array's attributes cost ~2.7 us an array (a 16-element bf16 mul: 7.3 us against fp32's 1.8).
PyObject* g_ml_dtypes_views = nullptr;

bool ml_dtypes_fast_path(nb::handle obj, pto::Tensor& out) {
  if (!g_ml_dtypes_views) {
    if (!PyDict_GetItemString(PyImport_GetModuleDict(), "ml_dtypes")) return false;  // no such arrays yet
    nb::dict views;
    for (int i = 0; i < pto::kNumDTypes; ++i) {
      const auto dt = static_cast<pto::DType>(i);
      if (!pto::dtype_from_ml_dtypes(dt)) continue;
      const char* unsigned_name = pto::dtype_size(dt) == 1 ? "uint8" : "uint16";
      views[cached(g_np_dtype, "numpy", "dtype")(numpy_dtype(dt))] =
          nb::make_tuple(dt, cached(g_np_dtype, "numpy", "dtype")(unsigned_name));
    }
    g_ml_dtypes_views = views.release().ptr();
  }
  static PyObject* const dtype_name = PyUnicode_InternFromString("dtype");
  static PyObject* const view_name = PyUnicode_InternFromString("view");
  nb::object dtype = nb::steal(PyObject_GetAttr(obj.ptr(), dtype_name));
  if (!dtype.is_valid()) {
    PyErr_Clear();
    return false;
  }
  PyObject* entry = PyDict_GetItemWithError(g_ml_dtypes_views, dtype.ptr());
  if (!entry) {
    PyErr_Clear();
    return false;
  }
  nb::object as_unsigned = nb::steal(PyObject_CallMethodOneArg(obj.ptr(), view_name, PyTuple_GET_ITEM(entry, 1)));
  if (!as_unsigned.is_valid()) {
    PyErr_Clear();
    return false;
  }
  return from_buffer(as_unsigned, as_unsigned, nb::cast<pto::DType>(nb::handle(PyTuple_GET_ITEM(entry, 0))), out);
}

bool numpy_fast_path(nb::handle obj, pto::Tensor& out) {
  if (!g_ndarray) {
    if (!PyDict_GetItemString(PyImport_GetModuleDict(), "numpy")) return false;  // numpy not loaded yet
    cached(g_ndarray, "numpy", "ndarray");
  }
  if (Py_TYPE(obj.ptr()) != reinterpret_cast<PyTypeObject*>(g_ndarray)) return false;
  return from_buffer(obj, obj, std::nullopt, out) || ml_dtypes_fast_path(obj, out);
}

// The fast path of asarray for a torch CPU tensor (attributes read from C, no DLPack round
// trip): the same zero-copy view that torch's DLPack export gives, read-only when the tensor
// requires grad (docs/tensors.md). Anything else returns false and takes the Python path, which
// raises today's errors or handles the rare case: subclasses, other devices and layouts, dtypes
// without a ptocpu dtype (complex, so also conjugate views), negated views, write targets that
// require grad, null data (torch's zero tensors), attributes that raise.
PyObject* g_torch_tensor = nullptr;
PyObject* g_torch_parameter = nullptr;
PyObject* g_torch_strided = nullptr;
PyObject* g_torch_dtypes = nullptr;  // {torch.dtype: ptocpu DType}

struct TorchNames {
  PyObject *dtype, *is_cpu, *layout, *requires_grad, *is_neg, *shape, *stride, *data_ptr, *untyped_storage;
};
const TorchNames& torch_names() {
  static const TorchNames names{
      PyUnicode_InternFromString("dtype"),         PyUnicode_InternFromString("is_cpu"),
      PyUnicode_InternFromString("layout"),        PyUnicode_InternFromString("requires_grad"),
      PyUnicode_InternFromString("is_neg"),        PyUnicode_InternFromString("shape"),
      PyUnicode_InternFromString("stride"),        PyUnicode_InternFromString("data_ptr"),
      PyUnicode_InternFromString("untyped_storage")};
  return names;
}

bool int_tuple(PyObject* seq, std::vector<int64_t>& out) {
  if (!seq || !PyTuple_Check(seq)) return false;  // torch.Size is a tuple, stride() returns one
  out.resize(PyTuple_GET_SIZE(seq));
  for (size_t i = 0; i < out.size(); ++i) out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, i));
  return !PyErr_Occurred();
}

bool torch_tensor_attributes(PyObject* obj, Access access, pto::Tensor& out) {
  const TorchNames& n = torch_names();
  nb::object dtype = nb::steal(PyObject_GetAttr(obj, n.dtype));
  PyObject* ptodtype = dtype.is_valid() ? PyDict_GetItemWithError(g_torch_dtypes, dtype.ptr()) : nullptr;
  if (!ptodtype) return false;
  nb::object is_cpu = nb::steal(PyObject_GetAttr(obj, n.is_cpu)), layout = nb::steal(PyObject_GetAttr(obj, n.layout));
  if (is_cpu.ptr() != Py_True || layout.ptr() != g_torch_strided) return false;
  nb::object requires_grad = nb::steal(PyObject_GetAttr(obj, n.requires_grad));
  if (!requires_grad.is_valid() || (requires_grad.ptr() == Py_True && access == Access::Write)) return false;
  nb::object is_neg = nb::steal(PyObject_CallMethodNoArgs(obj, n.is_neg));
  if (is_neg.ptr() != Py_False) return false;
  nb::object shape = nb::steal(PyObject_GetAttr(obj, n.shape)), stride = nb::steal(PyObject_CallMethodNoArgs(obj, n.stride)),
             data_ptr = nb::steal(PyObject_CallMethodNoArgs(obj, n.data_ptr));
  // The storage is kept alive, not the tensor: as with a DLPack export, the import then outlives
  // a later x.set_(other) that points the tensor at other memory.
  nb::object storage = nb::steal(PyObject_CallMethodNoArgs(obj, n.untyped_storage));
  pto::Shape dims;
  pto::Strides strides;
  if (!int_tuple(shape.ptr(), dims) || !int_tuple(stride.ptr(), strides) || !data_ptr.is_valid() ||
      !storage.is_valid())
    return false;
  void* ptr = PyLong_AsVoidPtr(data_ptr.ptr());
  if (PyErr_Occurred() || (!ptr && pto::shape_numel(dims) > 0)) return false;
  out = pto::Tensor::from_blob(ptr, dims, strides, nb::cast<pto::DType>(nb::handle(ptodtype)),
                              own_torch_storage(storage));
  if (requires_grad.ptr() == Py_True) out = out.as_read_only();  // a write would bypass autograd
  return true;
}

// {torch.dtype: DType} for every dtype both have (torch is imported already).
nb::dict torch_dtype_map() {
  nb::dict found;
  nb::object torch = nb::module_::import_("torch");
  nb::handle dtype_type = torch.attr("dtype");
  for (auto [name, value] : nb::borrow<nb::dict>(torch.attr("__dict__"))) {
    (void)name;
    if (!PyObject_IsInstance(value.ptr(), dtype_type.ptr())) continue;
    try {
      found[value] = to_dtype(value);
    } catch (const pto::Error&) {
    }
  }
  return found;
}

}  // namespace

bool torch_fast_path(nb::handle obj, Access access, pto::Tensor& out) {
  if (!g_torch_tensor) {
    if (!PyDict_GetItemString(PyImport_GetModuleDict(), "torch")) return false;  // torch not loaded
    cached(g_torch_parameter, "torch.nn", "Parameter");
    cached(g_torch_strided, "torch", "strided");
    g_torch_dtypes = torch_dtype_map().release().ptr();
    cached(g_torch_tensor, "torch", "Tensor");
  }
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  if (type != g_torch_tensor && type != g_torch_parameter) return false;
  if (torch_tensor_attributes(obj.ptr(), access, out)) return true;
  PyErr_Clear();  // an attribute that raised: the Python path reports it
  return false;
}

namespace {

void release_python(void* owner) {
  if (!owner || !Py_IsInitialized()) return;
  PyGILState_STATE s = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(owner));
  PyGILState_Release(s);
}

// The deleter of an import of torch memory: it releases the torch storage (and `also`, e.g. the
// DLPack capsule the import came through). Its type marks such imports (pin_torch_memory).
struct TorchStorageOwner {
  std::shared_ptr<void> also;
  void operator()(void* storage) const { release_python(storage); }
};

PyObject* g_torch_empty = nullptr;
PyObject* g_torch_uint8 = nullptr;

}  // namespace

std::shared_ptr<void> keep_python_alive(nb::handle owner) {
  PyObject* p = owner.ptr();
  Py_XINCREF(p);
  return std::shared_ptr<void>(p, release_python);
}

std::shared_ptr<void> own_torch_storage(nb::handle storage, std::shared_ptr<void> also) {
  return std::shared_ptr<void>(storage.inc_ref().ptr(), TorchStorageOwner{std::move(also)});
}

// torch grows a storage (x.resize_(n), x.untyped_storage().resize_(n)) by moving it to new memory
// and freeing the old, which an import over it would go on using. torch's own x.numpy() makes
// the storage non-resizable for that reason; this does the same through that very call on a byte
// tensor over the storage (torch offers no other way, and no way back: the flag stays, as it does
// after x.numpy()). Shrinking, which moves nothing, still works (docs/tensors.md).
void pin_torch_memory(const pto::Tensor& t) {
  if (!std::get_deleter<TorchStorageOwner>(t.owner())) return;
  nb::handle storage(static_cast<PyObject*>(t.owner().get()));
  if (storage.attr("resizable")().ptr() == Py_False) return;
  nb::object bytes = cached(g_torch_empty, "torch", "empty")(0, nb::arg("dtype") = cached(g_torch_uint8, "torch", "uint8"));
  bytes.attr("set_")(storage).attr("numpy")();
}

pto::Tensor to_tensor(nb::handle obj, const char* op, const char* param, Access access) {
  pto::Tensor* t = nullptr;
  if (nb::try_cast<pto::Tensor*>(obj, t) && t) {
    if (!t->defined())
      pto::fail<pto::DTypeError>(op, ": ", param, " is Tensor(), an annotation placeholder without storage; "
                                 "create a tensor with ptocpu.tensor(shape, dtype) or ptocpu.asarray(data)");
    return *t;
  }
  pto::Tensor fast;
  if (numpy_fast_path(obj, fast) || torch_fast_path(obj, access, fast)) return fast;
  if (obj.is_none() || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr()))
    pto::fail<pto::DTypeError>(op, ": ", param, " must be a tensor, got ", python_type_name(obj), " ",
                               nb::repr(obj).c_str());
  try {
    return asarray(obj, access == Access::Write ? std::optional<bool>(false) : std::nullopt);
  } catch (const pto::Error& e) {
    // The message led by the op and the parameter; the class kept (docs/errors.md).
    const std::string message = std::string(op) + ": " + param + ": " + e.what();
    if (dynamic_cast<const pto::DTypeError*>(&e)) pto::fail<pto::DTypeError>(message);
    if (dynamic_cast<const pto::IndexError*>(&e)) pto::fail<pto::IndexError>(message);
    pto::fail<pto::ArgumentError>(message);
  }
}

namespace {

// dtype objects seen before -> DType (numpy dtypes and types, torch dtypes, ml_dtypes types).
PyObject* g_dtype_cache = nullptr;

pto::DType dtype_by_name(const std::string& name, const char* what) {
  try {
    return pto::dtype_from_name(name);
  } catch (const pto::ArgumentError&) {
    pto::fail<pto::DTypeError>("dtype: ", what, " ", name, " has no ptocpu dtype");
  }
}

pto::DType uncached_dtype(nb::handle obj) {
  if (obj.is_none()) pto::fail<pto::DTypeError>("dtype: None is not a dtype");
  PyObject* p = obj.ptr();
  if (PyBool_Check(p) || PyLong_Check(p) || PyFloat_Check(p) || PyComplex_Check(p) ||
      PyObject_IsInstance(p, cached(g_np_generic, "numpy", "generic").ptr()) == 1)
    pto::fail<pto::DTypeError>("dtype: ", nb::repr(obj).c_str(), " is a number, not a dtype; use a DT_* constant, a "
                               "numpy / torch dtype or a name such as 'float16'");
  const std::string module = nb::cast<std::string>(nb::getattr(obj.type(), "__module__", nb::str("")));
  if (module.rfind("torch", 0) == 0) {
    std::string name = nb::str(obj).c_str();
    if (name.rfind("torch.", 0) == 0) name = name.substr(6);
    return dtype_by_name(name, "torch dtype");
  }
  nb::object npdt;
  try {
    npdt = cached(g_np_dtype, "numpy", "dtype")(obj);
  } catch (nb::python_error&) {
    pto::fail<pto::DTypeError>("dtype: cannot interpret ", nb::repr(obj).c_str(), " as a dtype");
  }
  try {
    return pto::dtype_from_name(nb::cast<std::string>(npdt.attr("name")));
  } catch (const pto::ArgumentError&) {
    pto::fail<pto::DTypeError>("dtype: numpy dtype ", nb::str(npdt).c_str(), " has no ptocpu dtype");
  }
}

}  // namespace

pto::DType to_dtype(nb::handle obj) {
  // Strictly a DType member here: nanobind would also cast a plain int to the enum.
  if (PyObject_IsInstance(obj.ptr(), nb::type<pto::DType>().ptr()) == 1) return nb::cast<pto::DType>(obj);
  if (PyUnicode_Check(obj.ptr())) return pto::dtype_from_name(nb::cast<std::string>(obj));
  if (!g_dtype_cache) g_dtype_cache = PyDict_New();
  if (PyObject_Hash(obj.ptr()) == -1) {
    PyErr_Clear();
    return uncached_dtype(obj);
  }
  if (PyObject* hit = PyDict_GetItemWithError(g_dtype_cache, obj.ptr())) return nb::cast<pto::DType>(nb::handle(hit));
  PyErr_Clear();
  const pto::DType dt = uncached_dtype(obj);
  PyDict_SetItem(g_dtype_cache, obj.ptr(), nb::cast(dt).ptr());
  return dt;
}

nb::object numpy_dtype(pto::DType dt) {
  const char* name = pto::dtype_numpy_name(dt);
  if (pto::dtype_from_ml_dtypes(dt)) return nb::module_::import_("ml_dtypes").attr(name);
  return cached(g_np_dtype, "numpy", "dtype")(name);
}

// A numpy array (any dtype numpy or ml_dtypes has) as a tensor over its memory. Byte-swapped data
// and byte strides that are not whole elements need a copy: made unless copy is false.
pto::Tensor from_numpy(nb::handle a, std::optional<bool> copy) {
  nb::object dtype = a.attr("dtype");
  const pto::DType dt = to_dtype(dtype);
  nb::object arr = nb::borrow(a);
  const int64_t item = static_cast<int64_t>(pto::dtype_size(dt));
  const bool byte_swapped = !nb::cast<bool>(dtype.attr("isnative"));
  std::vector<int64_t> byte_strides;
  for (nb::handle s : nb::iter(arr.attr("strides"))) byte_strides.push_back(nb::cast<int64_t>(s));
  bool odd_strides = false;
  for (int64_t s : byte_strides) odd_strides = odd_strides || s % item != 0;
  if (byte_swapped || odd_strides) {
    if (copy == false)
      pto::fail<pto::ArgumentError>("from_numpy: this array (", pto::dtype_name(dt),
                                    byte_swapped ? ", byte-swapped" : "", ", byte strides ",
                                    pto::shape_to_string(byte_strides), ") can only be used through a copy "
                                    "(byte-swapped data or byte strides that are not whole elements), so writes would "
                                    "not reach it");
    arr = arr.attr("astype")(dtype.attr("newbyteorder")("="), nb::arg("order") = "C");
  }
  nb::tuple data = nb::borrow<nb::tuple>(arr.attr("__array_interface__")["data"]);
  const uintptr_t ptr = nb::cast<uintptr_t>(data[0]);
  pto::Shape shape = to_int_list(arr.attr("shape"), "from_numpy", "shape");
  pto::Strides strides;
  for (nb::handle s : nb::iter(arr.attr("strides"))) strides.push_back(nb::cast<int64_t>(s) / item);
  pto::Tensor t = pto::Tensor::from_blob(reinterpret_cast<void*>(ptr), shape, strides, dt, keep_python_alive(arr));
  const bool writeable = nb::cast<bool>(arr.attr("flags").attr("writeable"));
  return writeable ? t : t.as_read_only();
}

namespace {

bool is_numpy_array(nb::handle obj) {
  if (!PyDict_GetItemString(PyImport_GetModuleDict(), "numpy")) return false;
  return PyObject_IsInstance(obj.ptr(), cached(g_ndarray, "numpy", "ndarray").ptr()) == 1;
}

// np.asarray(obj), numpy's refusals raised as ptocpu errors (ragged lists, odd objects).
nb::object numpy_asarray(nb::handle obj) {
  try {
    return cached(g_np_asarray, "numpy", "asarray")(obj);
  } catch (nb::python_error& e) {
    const std::string why = std::string("asarray: cannot make an array of this ") + python_type_name(obj) + ": " +
                            nb::str(e.value()).c_str();
    if (e.matches(PyExc_TypeError)) pto::fail<pto::DTypeError>(why);
    if (e.matches(PyExc_ValueError) || e.matches(PyExc_OverflowError)) pto::fail<pto::ArgumentError>(why);
    throw;
  }
}

}  // namespace

bool exactly_tensor(nb::handle obj) {
  static PyTypeObject* const tensor_type = reinterpret_cast<PyTypeObject*>(nb::type<pto::Tensor>().ptr());
  return Py_TYPE(obj.ptr()) == tensor_type;
}

bool is_torch_tensor(nb::handle obj) {
  if (exactly_tensor(obj)) return false;  // (torch's isinstance is a call into its metaclass)
  PyObject* torch = PyDict_GetItemString(PyImport_GetModuleDict(), "torch");
  if (!torch) return false;
  return PyObject_IsInstance(obj.ptr(), nb::handle(torch).attr("Tensor").ptr()) == 1;
}

pto::Tensor asarray(nb::handle obj, std::optional<bool> copy, std::optional<pto::DType> dtype) {
  pto::Tensor t;
  pto::Tensor* given = nullptr;
  const bool has_dlpack = nb::hasattr(obj, "__dlpack__") &&
                          PyObject_IsInstance(obj.ptr(), cached(g_np_generic, "numpy", "generic").ptr()) != 1;
  if (nb::try_cast<pto::Tensor*>(obj, given) && given) {
    t = require_storage(*given, "asarray");
  } else if (numpy_fast_path(obj, t)) {
  } else if (is_numpy_array(obj)) {
    t = from_numpy(obj, copy);
  } else if (torch_fast_path(obj, copy == false ? Access::Write : Access::Read, t)) {
  } else if (copy == false && !has_dlpack) {
    from_numpy(numpy_asarray(obj), std::nullopt);  // what is not a tensor at all is refused as such first
    pto::fail<pto::ArgumentError>("asarray: a ", python_type_name(obj), " is not memory that can be written in "
                                  "place; pass a ptocpu.Tensor, a numpy array or a torch tensor");
  } else if (copy == false && nb::hasattr(obj, "requires_grad") && PyObject_IsTrue(obj.attr("requires_grad").ptr()) == 1) {
    pto::fail<pto::ArgumentError>("asarray: a torch tensor that requires grad cannot be written in place (torch "
                                  "refuses that too); pass tensor.detach() to write its memory");
  } else if (is_torch_tensor(obj) && PyObject_IsTrue(obj.attr("is_neg")().ptr()) == 1) {
    // A negated view (torch._neg_view): its DLPack export would drop the negation.
    if (copy == false)
      pto::fail<pto::ArgumentError>("asarray: a torch tensor with the negative bit set (a _neg_view) holds the "
                                    "values' negation, so writes cannot reach it; pass tensor.resolve_neg()");
    t = asarray(obj.attr("resolve_neg")(), std::nullopt);
  } else if (has_dlpack) {
    try {
      t = from_dlpack(obj);
    } catch (const pto::Error& e) {
      if (is_torch_tensor(obj)) {
        // A dtype ptocpu lacks, by torch's name (complex64) rather than by DLPack's type code.
        if (dynamic_cast<const pto::DTypeError*>(&e)) to_dtype(obj.attr("dtype"));
        throw;
      }
      std::exception_ptr refused = std::current_exception();
      try {  // other producers may still convert through numpy
        t = from_numpy(numpy_asarray(obj), std::nullopt);
      } catch (const pto::Error&) {
        std::rethrow_exception(refused);
      } catch (nb::python_error&) {
        std::rethrow_exception(refused);
      }
    }
  } else if (PyBytes_Check(obj.ptr()) || PyMemoryView_Check(obj.ptr())) {
    // The buffer protocol (numpy would read bytes as a string); immutable memory is copied.
    nb::object view = nb::steal(PyMemoryView_FromObject(obj.ptr()));
    if (!view.is_valid()) throw nb::python_error();
    nb::object a = numpy_asarray(view);
    t = from_numpy(PyMemoryView_GET_BUFFER(view.ptr())->readonly ? a.attr("copy")() : a, std::nullopt);
  } else {
    t = from_numpy(numpy_asarray(obj), std::nullopt);
  }
  if (dtype && t.dtype() != *dtype) {
    if (copy == false)
      pto::fail<pto::ArgumentError>("asarray: converting ", pto::dtype_name(t.dtype()), " to ", pto::dtype_name(*dtype),
                                    " needs a copy");
    nb::object a = cached(g_np_asarray, "numpy", "asarray")(nb::cast(t)).attr("astype")(numpy_dtype(*dtype));
    t = from_numpy(a, std::nullopt);
  }
  return t;
}

int64_t to_int(nb::handle obj, const char* op, const char* param) {
  // bool is an int subclass in Python, but True is not a dim, a length or an index.
  if (PyBool_Check(obj.ptr()) || !PyIndex_Check(obj.ptr()))
    pto::fail<pto::DTypeError>(op, ": ", param, " must be an integer, got ", python_type_name(obj), " ",
                               nb::repr(obj).c_str());
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) throw nb::python_error();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow) pto::fail<pto::ArgumentError>(op, ": ", param, " value ", nb::repr(obj).c_str(), " does not fit int64");
  return v;
}

int64_t to_dim(nb::handle obj, const char* op, const char* param) {
  try {
    return to_int(obj, op, param);
  } catch (const pto::ArgumentError& e) {
    pto::fail<pto::IndexError>(e.what(), ", so it is outside [-rank, rank) for every rank");
  }
}

std::vector<int64_t> to_int_list(nb::handle obj, const char* op, const char* param) {
  std::vector<int64_t> out;
  if (PyLong_Check(obj.ptr()) || (PyIndex_Check(obj.ptr()) && !PySequence_Check(obj.ptr()))) {  // numpy arrays are sequences
    out.push_back(to_int(obj, op, param));
    return out;
  }
  if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()))
    pto::fail<pto::DTypeError>(op, ": ", param, " must be a sequence of integers, got ", python_type_name(obj));
  for (nb::handle item : nb::iter(obj)) out.push_back(to_int(item, op, param));
  return out;
}

PyObject* g_element_type = nullptr;

std::optional<pto::Scalar> to_scalar(nb::handle obj) {
  PyObject* p = obj.ptr();
  // PyPTO's Element: its value (an int or a float) as a scalar of its dtype. One type check, as
  // every tensor argument passes here first.
  if (g_element_type && PyObject_TypeCheck(p, reinterpret_cast<PyTypeObject*>(g_element_type))) {
    std::optional<pto::Scalar> s = to_scalar(obj.attr("value"));
    s->dtype = nb::cast<pto::DType>(obj.attr("dtype"));
    return s;
  }
  if (PyBool_Check(p)) return pto::Scalar::of_bool(p == Py_True);
  if (PyFloat_Check(p)) return pto::Scalar::of_float(PyFloat_AsDouble(p));
  if (PyLong_Check(p)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (!overflow) return pto::Scalar::of_int(v);
    // Beyond 64 bits: exact as hi * 2^64 + lo while hi fits int64 (|v| < 2^127), so messages
    // name the real value; larger ones (out of every integer dtype's range) as a float.
    nb::object lo = nb::steal(PyNumber_And(p, nb::int_(~0ull).ptr()));
    nb::object hi = nb::steal(PyNumber_Rshift(p, nb::int_(64).ptr()));
    if (!lo.is_valid() || !hi.is_valid()) throw nb::python_error();
    int hi_overflow = 0;
    const long long h = PyLong_AsLongLongAndOverflow(hi.ptr(), &hi_overflow);
    if (!hi_overflow)
      return pto::Scalar::of_int(static_cast<__int128>(h) * (static_cast<__int128>(1) << 64) +
                                 static_cast<__int128>(PyLong_AsUnsignedLongLong(lo.ptr())));
    const double d = PyLong_AsDouble(p);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return pto::Scalar::of_float(overflow > 0 ? HUGE_VAL : -HUGE_VAL);
    }
    return pto::Scalar::of_float(d);
  }
  if (PyObject_IsInstance(p, cached(g_np_generic, "numpy", "generic").ptr()) == 1) {
    const std::string kind = nb::cast<std::string>(obj.attr("dtype").attr("kind"));
    if (kind == "b") return pto::Scalar::of_bool(PyObject_IsTrue(p) == 1);
    if (kind == "i" || kind == "u") return to_scalar(nb::steal(PyNumber_Index(p)));
    // Real floats only (numpy's, and ml_dtypes' bf16 / fp8 of kind 'V'): float() of a complex
    // drops its imaginary part, and of a numpy string parses it.
    if (kind != "f" && kind != "V") return std::nullopt;
    nb::object f = nb::steal(PyNumber_Float(p));
    if (f.is_valid()) return pto::Scalar::of_float(PyFloat_AsDouble(f.ptr()));
    PyErr_Clear();
  }
  return std::nullopt;
}

pto::Tensor to_metadata(nb::handle obj, const char* op, const char* param) {
  nb::object shape = nb::getattr(obj, "shape", nb::none()), dtype = nb::getattr(obj, "dtype", nb::none());
  if (shape.is_none() || dtype.is_none())
    pto::fail<pto::DTypeError>(op, ": ", param, " must be a tensor (an object with shape and dtype), got ",
                               python_type_name(obj));
  const pto::Shape dims = to_int_list(shape, op, param);
  return pto::Tensor::from_blob(nullptr, dims, pto::contiguous_strides(dims), to_dtype(dtype), nullptr);
}

nb::tuple to_tuple(const std::vector<int64_t>& v) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(v[i]));
  return nb::steal<nb::tuple>(t);
}

void note_written(nb::handle obj) {
  if (!is_torch_tensor(obj)) return;
  static PyObject* increment = nullptr;
  cached(increment, "torch.autograd.graph", "increment_version")(obj);
}

nb::object in_place_result(nb::handle input, pto::Tensor written) {
  if (nb::isinstance<pto::Tensor>(input)) return nb::borrow(input);
  return nb::cast(std::move(written));
}

}  // namespace ptobind
