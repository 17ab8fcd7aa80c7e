// The PyPTO kernel model (docs/kernel_model.md) beyond its ops (view and assemble are in the op
// table): loop and kernel scopes.
#include <Python.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "bind.h"
#include "docstrings.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"

namespace ptobind {
namespace {

// loop(stop) / loop(start, stop, step=1, /, name=..., idx_name=..., unroll_list=...,
// submit_before_loop=...): a range of ints (the keywords only name or schedule device loops).
// PyPTO's loop reads the keywords it knows and ignores the rest (its own tests pass unroll_List=):
// so does this one, with a warning.
nb::object loop(nb::args args, nb::kwargs kwargs) {
  nb::handle step_kw;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::str(key).c_str();
    if (name == "step") step_kw = value;
    else if (name != "name" && name != "idx_name" && name != "unroll_list" && name != "submit_before_loop" &&
             name != "parallel") {
      const std::string text = "loop: keyword '" + name + "' is not one PyPTO's loop reads (name, idx_name, "
                               "unroll_list, submit_before_loop, parallel); it is ignored, as PyPTO ignores it";
      if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) < 0) throw nb::python_error();
    }
  }
  const size_t n = args.size();
  if (n < 1 || n > 3 || (n == 3 && step_kw.is_valid()) || (n == 1 && step_kw.is_valid()))
    throw nb::type_error("loop() takes loop(stop) or loop(start, stop, step=1)");
  int64_t start = 0, stop, step = 1;
  if (n == 1) {
    stop = to_int(args[0], "loop", "stop");
  } else {
    start = to_int(args[0], "loop", "start");
    stop = to_int(args[1], "loop", "stop");
    if (n == 3) step = to_int(args[2], "loop", "step");
    else if (step_kw.is_valid()) step = to_int(step_kw, "loop", "step");
  }
  pto::loop_trip_count(start, stop, step);  // checks step
  return nb::module_::import_("builtins").attr("range")(start, stop, step);
}

}  // namespace

void bind_kernel_model(nb::module_& m) {
  m.def("loop", &loop, nb::sig(docs::loop.sig), docs::loop.text);
  m.def("_is_placeholder", [](const pto::Tensor& t) { return !t.defined(); },
        "True for a tensor without storage: Tensor(), an annotation, a declaration with dynamic dims");
  // jit kernels and pypto.function bodies run inside a kernel scope (PyPTO's indexing forms).
  m.def("_enter_kernel", &pto::enter_kernel, "A jit kernel or a pypto.function body starts on this thread");
  m.def("_exit_kernel", &pto::exit_kernel, "... and ends");
  m.def("_in_kernel", &pto::in_kernel, "True while a jit kernel or a pypto.function body runs on this thread");
}

}  // namespace ptobind
