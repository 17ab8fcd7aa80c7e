// Argument conversion shared by every binding.
#include <Python.h>
#include <nanobind/stl/string.h>

#include <bit>
#include <cmath>

#include "bind.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {

// Attributes of Python modules looked up once and kept for the life of the process.
nb::handle cached(PyObject*& slot, const char* module, const char* attr) {
  if (!slot) slot = nb::object(nb::module_::import_(module).attr(attr)).release().ptr();
  return slot;
}
PyObject* g_asarray = nullptr;
PyObject* g_to_dtype = nullptr;
PyObject* g_np_generic = nullptr;

std::string python_type_name(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

// The fast path of asarray for a numpy.ndarray of a standard dtype (the buffer protocol, no
// Python code): the same zero-copy view as _convert.from_numpy. Anything it does not cover
// (ml_dtypes dtypes, byte-swapped data, byte strides that are not whole elements, subclasses)
// returns false and takes the Python path.
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

bool numpy_fast_path(nb::handle obj, pto::Tensor& out) {
  if (!g_ndarray) {
    if (!PyDict_GetItemString(PyImport_GetModuleDict(), "numpy")) return false;  // numpy not loaded yet
    cached(g_ndarray, "numpy", "ndarray");
  }
  if (Py_TYPE(obj.ptr()) != reinterpret_cast<PyTypeObject*>(g_ndarray)) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();  // e.g. an ml_dtypes dtype: the Python path knows it
    return false;
  }
  pto::DType dt;
  bool ok = view.format && dtype_of_format(view.format, view.itemsize, dt);
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
  out = pto::Tensor::from_blob(ptr, shape, strides, dt, keep_python_alive(obj));
  if (read_only) out = out.as_read_only();
  return true;
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
                              keep_python_alive(storage));
  if (requires_grad.ptr() == Py_True) out = out.as_read_only();  // a write would bypass autograd
  return true;
}

}  // namespace

bool torch_fast_path(nb::handle obj, Access access, pto::Tensor& out) {
  if (!g_torch_tensor) {
    if (!PyDict_GetItemString(PyImport_GetModuleDict(), "torch")) return false;  // torch not loaded
    cached(g_torch_parameter, "torch.nn", "Parameter");
    cached(g_torch_strided, "torch", "strided");
    g_torch_dtypes = nb::module_::import_("ptocpu._convert").attr("torch_dtypes")().release().ptr();
    cached(g_torch_tensor, "torch", "Tensor");
  }
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr()));
  if (type != g_torch_tensor && type != g_torch_parameter) return false;
  if (torch_tensor_attributes(obj.ptr(), access, out)) return true;
  PyErr_Clear();  // an attribute that raised: the Python path reports it
  return false;
}

std::shared_ptr<void> keep_python_alive(nb::handle owner) {
  PyObject* p = owner.ptr();
  Py_XINCREF(p);
  return std::shared_ptr<void>(p, [](void* q) {
    if (!q || !Py_IsInitialized()) return;
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(static_cast<PyObject*>(q));
    PyGILState_Release(s);
  });
}

pto::Tensor to_tensor(nb::handle obj, const char* op, const char* param, Access access) {
  pto::Tensor* t = nullptr;
  if (nb::try_cast<pto::Tensor*>(obj, t) && t) {
    if (!t->defined())
      pto::fail<pto::DTypeError>(op, ": ", param, " is Tensor(), an annotation placeholder without storage; "
                                 "create a tensor with ptocpu.tensor(shape, dtype) or ptocpu.asarray(data)");
    // An op reads only an input's valid part (docs/kernel_model.md); in-place targets are whole.
    return access == Access::Read ? t->valid_part() : *t;
  }
  pto::Tensor fast;
  if (numpy_fast_path(obj, fast) || torch_fast_path(obj, access, fast)) return fast;
  if (obj.is_none() || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr()))
    pto::fail<pto::DTypeError>(op, ": ", param, " must be a tensor, got ", python_type_name(obj), " ",
                               nb::repr(obj).c_str());
  try {
    nb::object copy = access == Access::Write ? nb::object(nb::bool_(false)) : nb::none();
    return nb::cast<pto::Tensor>(cached(g_asarray, "ptocpu._convert", "asarray")(obj, nb::arg("copy") = copy));
  } catch (nb::python_error& e) {
    // The message led by the op and the parameter; the class a ptocpu one (docs/errors.md):
    // kept when it is one, else a wrong type is a DTypeError and a wrong value an ArgumentError.
    const std::string message = std::string(op) + ": " + param + ": " + nb::str(e.value()).c_str();
    if (!is_ptocpu_error(e.value())) {
      if (e.matches(PyExc_TypeError)) pto::fail<pto::DTypeError>(message);
      if (e.matches(PyExc_ValueError) || e.matches(PyExc_BufferError)) pto::fail<pto::ArgumentError>(message);
    }
    PyErr_SetString(e.type().ptr(), message.c_str());
    throw nb::python_error();
  }
}

pto::DType to_dtype(nb::handle obj) {
  // Strictly a DType member here: nanobind would also cast a plain int to the enum.
  if (PyObject_IsInstance(obj.ptr(), nb::type<pto::DType>().ptr()) == 1) return nb::cast<pto::DType>(obj);
  return nb::cast<pto::DType>(cached(g_to_dtype, "ptocpu._convert", "to_dtype")(obj));
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

int64_t to_dim(nb::handle obj, const char* op) {
  try {
    return to_int(obj, op, "dim");
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

std::optional<pto::Scalar> to_scalar(nb::handle obj) {
  PyObject* p = obj.ptr();
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

nb::object in_place_result(nb::handle input, pto::Tensor written) {
  if (nb::isinstance<pto::Tensor>(input)) return nb::borrow(input);
  return nb::cast(std::move(written));
}

}  // namespace ptobind
