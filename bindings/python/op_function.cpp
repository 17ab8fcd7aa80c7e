// The Python objects of the op table's functions and Tensor methods: called by Python's vectorcall
// protocol with the arguments where the caller has them (no tuple or dict made for *args, **kwargs,
// which nanobind's functions of that form make on every call: about 0.1 us of a 1 us op call).
#include <Python.h>
#include <structmember.h>

#include <cstddef>

#include "bind.h"

namespace ptobind {
namespace {

struct OpFunction {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  const pto::OpDef* op;
  OpEntry entry;
  // As the nanobind function made from the same signature and docstring has them.
  PyObject* name;
  PyObject* qualname;
  PyObject* module;
  PyObject* doc;
  PyObject* nb_signature;
};

OpFunction* as_op_function(PyObject* self) { return reinterpret_cast<OpFunction*>(self); }

PyObject* call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  const OpFunction* f = as_op_function(self);
  return f->entry(*f->op, args, static_cast<size_t>(PyVectorcall_NARGS(nargsf)), kwnames);
}

void dealloc(PyObject* self) {
  OpFunction* f = as_op_function(self);
  PyTypeObject* type = Py_TYPE(self);
  for (PyObject* o : {f->name, f->qualname, f->module, f->doc, f->nb_signature}) Py_XDECREF(o);
  type->tp_free(self);
  Py_DECREF(type);
}

// The function's own module, looked up before the type's: the type keeps its own __module__ in its
// dict, the one tools read from the type, so it cannot be a member below.
PyObject* getattro(PyObject* self, PyObject* attr) {
  if (PyUnicode_CompareWithASCIIString(attr, "__module__") == 0) return Py_NewRef(as_op_function(self)->module);
  return PyObject_GenericGetAttr(self, attr);
}

// A method looked up on an instance: bound to it (Python's own method object); on the class, itself.
PyObject* bind_method(PyObject* self, PyObject* instance, PyObject*) {
  if (!instance || instance == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, instance);
}

// Pickled (and copied) by name, as Python's own functions are: ptocpu._core.add, ..._core.Tensor.add.
PyObject* reduce(PyObject* self, PyObject*) { return Py_NewRef(as_op_function(self)->qualname); }

PyMethodDef methods[] = {
    {"__reduce__", reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

// The name and docs as members, descriptors of the type: pydoc reads __doc__ past getattro
// (object.__getattribute__), as nanobind's functions have it.
PyMemberDef members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(OpFunction, vectorcall), READONLY, nullptr},
    {"__name__", T_OBJECT, offsetof(OpFunction, name), READONLY, nullptr},
    {"__qualname__", T_OBJECT, offsetof(OpFunction, qualname), READONLY, nullptr},
    {"__doc__", T_OBJECT, offsetof(OpFunction, doc), READONLY, nullptr},
    {"__nb_signature__", T_OBJECT, offsetof(OpFunction, nb_signature), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

// Named as nanobind's own function types: nanobind's stub generator recognises functions by these
// names and renders them from __nb_signature__, which these objects carry as nanobind's do, so
// _core.pyi stays what it was.
// Methods: all of these; functions: all but the first (they do not bind to an instance).
PyType_Slot slots[] = {
    {Py_tp_descr_get, reinterpret_cast<void*>(bind_method)},
    {Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
    {Py_tp_dealloc, reinterpret_cast<void*>(dealloc)},
    {Py_tp_getattro, reinterpret_cast<void*>(getattro)},
    {Py_tp_members, members},
    {Py_tp_methods, methods},
    {0, nullptr},
};
PyType_Spec function_spec{"nanobind.nb_func", sizeof(OpFunction), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL, slots + 1};
// METHOD_DESCRIPTOR: x.add(y) calls add(x, y) without making a bound method first.
PyType_Spec method_spec{"nanobind.nb_method", sizeof(OpFunction), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR, slots};

PyTypeObject* type_of(bool method) {
  static PyTypeObject* function_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&function_spec));
  static PyTypeObject* method_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&method_spec));
  PyTypeObject* type = method ? method_type : function_type;
  if (!type) throw nb::python_error();
  return type;
}

}  // namespace

nb::object make_op_function(const pto::OpDef& op, OpEntry entry, nb::handle described_by, bool method) {
  PyTypeObject* type = type_of(method);
  nb::object self = nb::steal(type->tp_alloc(type, 0));
  if (!self.is_valid()) throw nb::python_error();
  OpFunction* f = as_op_function(self.ptr());
  f->vectorcall = call;
  f->op = &op;
  f->entry = entry;
  f->name = nb::object(described_by.attr("__name__")).release().ptr();
  f->qualname = nb::object(described_by.attr("__qualname__")).release().ptr();
  f->module = nb::object(described_by.attr("__module__")).release().ptr();
  f->doc = nb::object(described_by.attr("__doc__")).release().ptr();
  f->nb_signature = nb::object(described_by.attr("__nb_signature__")).release().ptr();
  return self;
}

}  // namespace ptobind
