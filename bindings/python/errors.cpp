// The docs/errors.md exceptions: each ptocpu error is also the builtin exception docs/errors.md names.
#include <Python.h>

#include "bind.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {
// The Python class of each ptocpu error class (bind_errors makes them).
template <class E>
PyObject* g_class = nullptr;
PyObject*& g_error = g_class<pto::Error>;

// The Python class of a ptocpu error: that of the first of Es it is, else ptocpu.Error.
template <class... Es>
PyObject* class_of(const pto::Error& e) {
  PyObject* cls = g_error;
  static_cast<void>(((dynamic_cast<const Es*>(&e) ? (cls = g_class<Es>, true) : false) || ...));
  return cls;
}

// ptocpu.Error's base: pypto.error.CoreError (a PyptoError) when the package has imported that
// module before the core (python/ptocpu/__init__.py does), else Exception. Looked up, never
// imported: importing the package from here would load the core a second time.
PyObject* error_base() {
  PyObject* name = PyUnicode_FromString("ptocpu.error");
  PyObject* module = name ? PyImport_GetModule(name) : nullptr;
  Py_XDECREF(name);
  PyObject* base = module ? PyObject_GetAttrString(module, "CoreError") : nullptr;
  Py_XDECREF(module);
  if (base) return base;
  PyErr_Clear();
  Py_INCREF(PyExc_Exception);
  return PyExc_Exception;
}

PyObject* make(nb::module_& m, const char* name, PyObject* builtin) {
  const std::string qualified = std::string("ptocpu.") + name;
  PyObject* root = builtin ? nullptr : error_base();
  PyObject* bases = builtin ? PyTuple_Pack(2, g_error, builtin) : PyTuple_Pack(1, root);
  Py_XDECREF(root);
  PyObject* cls = PyErr_NewException(qualified.c_str(), bases, nullptr);
  Py_DECREF(bases);
  m.attr(name) = nb::handle(cls);
  return cls;
}

// A ptocpu error as the Python class docs/errors.md gives it.
void set_error(const pto::Error& e) {
  PyErr_SetString(class_of<pto::DTypeError, pto::ArgumentError, pto::IndexError, pto::TileError, pto::UnsupportedError>(e),
                  e.what());
}

// A nanobind cast of an argument that is not of the type it must be.
void set_cast_error() {
  PyErr_SetString(g_class<pto::DTypeError>, "an argument has the wrong Python type (nanobind could not convert it)");
}

// The Python class of nanobind's nb::type_error, nb::index_error, ...
PyObject* builtin_class(nb::exception_type type) {
  using T = nb::exception_type;
  switch (type) {
    case T::stop_iteration: return PyExc_StopIteration;
    case T::index_error: return PyExc_IndexError;
    case T::key_error: return PyExc_KeyError;
    case T::value_error: return PyExc_ValueError;
    case T::type_error: return PyExc_TypeError;
    case T::buffer_error: return PyExc_BufferError;
    case T::import_error: return PyExc_ImportError;
    case T::attribute_error: return PyExc_AttributeError;
    default: return PyExc_RuntimeError;
  }
}
}  // namespace

bool is_ptocpu_error(nb::handle exception) { return PyObject_IsInstance(exception.ptr(), g_error) == 1; }

void bind_errors(nb::module_& m) {
  g_error = make(m, "Error", nullptr);
  g_class<pto::DTypeError> = make(m, "DTypeError", PyExc_TypeError);
  g_class<pto::ArgumentError> = make(m, "ArgumentError", PyExc_ValueError);
  g_class<pto::IndexError> = make(m, "IndexOutOfRange", PyExc_IndexError);
  g_class<pto::TileError> = make(m, "TileError", PyExc_ValueError);
  g_class<pto::UnsupportedError> = make(m, "UnsupportedError", PyExc_NotImplementedError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const pto::Error& e) {
      set_error(e);
    } catch (const nb::cast_error&) {
      set_cast_error();
    }
  });
}

void set_python_error() noexcept {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    PyErr_SetString(builtin_class(e.type()), e.what());
  } catch (const pto::Error& e) {
    set_error(e);
  } catch (const nb::cast_error&) {
    set_cast_error();
  } catch (const std::bad_alloc& e) {  // (ptocpu's name the op and the bytes)
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (const std::out_of_range& e) {  // as nanobind's default translator maps the standard ones
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const std::overflow_error& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const std::logic_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::range_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_SystemError, "an unknown C++ exception");
  }
}

}  // namespace ptobind
