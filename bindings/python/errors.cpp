// The docs/errors.md exceptions: each ptocpu error is also the builtin exception docs/errors.md names.
#include <Python.h>

#include "bind.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {
PyObject* g_error = nullptr;
PyObject* g_dtype = nullptr;
PyObject* g_argument = nullptr;
PyObject* g_index = nullptr;
PyObject* g_tile = nullptr;
PyObject* g_unsupported = nullptr;

PyObject* make(nb::module_& m, const char* name, PyObject* builtin) {
  const std::string qualified = std::string("ptocpu.") + name;
  PyObject* bases = builtin ? PyTuple_Pack(2, g_error, builtin) : PyTuple_Pack(1, PyExc_Exception);
  PyObject* cls = PyErr_NewException(qualified.c_str(), bases, nullptr);
  Py_DECREF(bases);
  m.attr(name) = nb::handle(cls);
  return cls;
}
}  // namespace

bool is_ptocpu_error(nb::handle exception) { return PyObject_IsInstance(exception.ptr(), g_error) == 1; }

void bind_errors(nb::module_& m) {
  g_error = make(m, "Error", nullptr);
  g_dtype = make(m, "DTypeError", PyExc_TypeError);
  g_argument = make(m, "ArgumentError", PyExc_ValueError);
  g_index = make(m, "IndexOutOfRange", PyExc_IndexError);
  g_tile = make(m, "TileError", PyExc_ValueError);
  g_unsupported = make(m, "UnsupportedError", PyExc_NotImplementedError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const pto::DTypeError& e) {
      PyErr_SetString(g_dtype, e.what());
    } catch (const pto::ArgumentError& e) {
      PyErr_SetString(g_argument, e.what());
    } catch (const pto::IndexError& e) {
      PyErr_SetString(g_index, e.what());
    } catch (const pto::TileError& e) {
      PyErr_SetString(g_tile, e.what());
    } catch (const pto::UnsupportedError& e) {
      PyErr_SetString(g_unsupported, e.what());
    } catch (const pto::Error& e) {
      PyErr_SetString(g_error, e.what());
    } catch (const nb::cast_error&) {
      // A nanobind cast of an argument that is not of the type it must be.
      PyErr_SetString(g_dtype, "an argument has the wrong Python type (nanobind could not convert it)");
    }
  });
}

}  // namespace ptobind
