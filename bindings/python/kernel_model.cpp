// The PyPTO kernel model (docs/kernel_model.md): view, assemble, loop, and the jit argument check that
// ptocpu.frontend.jit calls. Conversion and forwarding only; the rules live in src/ops/kernel_model.cpp.
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

std::string python_type(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

// A kernel's tensor argument: a ptocpu.Tensor (jit has already converted arrays).
pto::Tensor tensor_argument(nb::handle obj, const std::string& kernel, const std::string& param) {
  pto::Tensor* t = nullptr;
  if (nb::try_cast<pto::Tensor*>(obj, t) && t) return *t;
  pto::fail<pto::DTypeError>("jit: kernel ", kernel, " parameter '", param,
                             "' is annotated as a pypto.Tensor but got ", python_type(obj), " ",
                             nb::repr(obj).c_str(), "; pass a numpy array, a torch CPU tensor or a ptocpu.Tensor");
}

// assemble's two forms (PyPTO): assemble(input, offsets, out) and
// assemble(inputs, out, parallel=False) with inputs a list of (tensor, offsets) pairs.
void assemble(nb::args args, nb::kwargs kwargs) {
  nb::handle input, inputs, offsets, out;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::str(key).c_str();
    if (name == "input") input = value;
    else if (name == "inputs") inputs = value;
    else if (name == "offsets") offsets = value;
    else if (name == "out") out = value;
    else if (name == "parallel") continue;  // a scheduling hint on the device; copies here are serial
    else throw nb::type_error(("assemble() got an unexpected keyword argument '" + name + "'").c_str());
  }
  if (args.size() == 3 && PyBool_Check(args[2].ptr()) && !out.is_valid() && !offsets.is_valid()) {
    // assemble(inputs, out, parallel) with parallel given by position
    nb::tuple two = nb::make_tuple(args[0], args[1]);
    nb::kwargs none;
    assemble(nb::borrow<nb::args>(two), none);
    return;
  }
  const size_t given = args.size() + (input.is_valid() ? 1 : 0) + (inputs.is_valid() ? 1 : 0) +
                       (offsets.is_valid() ? 1 : 0) + (out.is_valid() ? 1 : 0);
  const bool list_form = inputs.is_valid() || (!input.is_valid() && !offsets.is_valid() && given == 2);
  nb::handle* slots[3] = {list_form ? &inputs : &input, list_form ? &out : &offsets, list_form ? nullptr : &out};
  const size_t wanted = list_form ? 2 : 3;
  if (given != wanted || args.size() > wanted)
    throw nb::type_error("assemble() takes (input, offsets, out) or (inputs, out, parallel=False) where inputs "
                         "is a list of (tensor, offsets) pairs");
  for (size_t i = 0; i < args.size(); ++i) {
    if (slots[i]->is_valid())
      throw nb::type_error("assemble() got multiple values for one argument");
    *slots[i] = args[i];
  }
  const pto::Tensor dst = to_tensor(out, "assemble", "out", Access::Write);
  if (!list_form) {
    const pto::Tensor src = to_tensor(input, "assemble", "src");
    const pto::Shape off = to_int_list(offsets, "assemble", "offsets");
    ReleaseGil release;
    pto::assemble(src, off, dst);
    return;
  }
  if (!PySequence_Check(inputs.ptr()) || PyUnicode_Check(inputs.ptr()))
    pto::fail<pto::DTypeError>("assemble: inputs must be a list of (tensor, offsets) pairs, got ", python_type(inputs));
  std::vector<pto::AssemblePart> parts;
  size_t i = 0;
  for (nb::handle item : nb::iter(inputs)) {
    const std::string where = "inputs[" + std::to_string(i++) + "]";
    if (!PySequence_Check(item.ptr()) || PySequence_Size(item.ptr()) != 2)
      pto::fail<pto::ArgumentError>("assemble: ", where, " must be a (tensor, offsets) pair, got ", python_type(item),
                                    " ", nb::repr(item).c_str());
    nb::object src = nb::steal(PySequence_GetItem(item.ptr(), 0));
    nb::object off = nb::steal(PySequence_GetItem(item.ptr(), 1));
    parts.push_back({to_tensor(src, "assemble", (where + " src").c_str()), to_int_list(off, "assemble", (where + " offsets").c_str())});
  }
  ReleaseGil release;
  pto::assemble(parts, dst);
}

// loop(stop) / loop(start, stop, step=1, /, name=..., idx_name=..., unroll_list=...,
// submit_before_loop=...): a range of ints (the keywords only name or schedule device loops).
nb::object loop(nb::args args, nb::kwargs kwargs) {
  nb::handle step_kw;
  for (auto [key, value] : kwargs) {
    const std::string name = nb::str(key).c_str();
    if (name == "step") step_kw = value;
    else if (name != "name" && name != "idx_name" && name != "unroll_list" && name != "submit_before_loop")
      throw nb::type_error(("loop() got an unexpected keyword argument '" + name + "'").c_str());
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
  m.def("view",
        [](nb::handle input, nb::handle shape, nb::handle offsets, nb::handle valid_shape) {
          const pto::Tensor t = to_tensor(input, "view", "input", Access::Write);  // a view shares memory
          const pto::Shape s = to_int_list(shape, "view", "shape");
          const pto::Shape o = to_int_list(offsets, "view", "offsets");
          std::optional<pto::Shape> v;
          if (!valid_shape.is_none()) v = to_int_list(valid_shape, "view", "valid_shape");
          return pto::view(t, s, o, v);
        },
        nb::arg("input").none(), nb::arg("shape").none(), nb::arg("offsets").none(), nb::kw_only(),
        nb::arg("valid_shape") = nb::none(),
        nb::sig(docs::view.sig), docs::view.text);
  m.def("assemble", &assemble, nb::sig(docs::assemble.sig), docs::assemble.text);
  m.def("loop", &loop, nb::sig(docs::loop.sig), docs::loop.text);
  m.def("_check_kernel_argument",
        [](const std::string& kernel, const std::string& param, nb::handle arg, nb::handle annotation) {
          const pto::Tensor a = tensor_argument(arg, kernel, param);
          pto::Tensor* ann = nullptr;
          if (annotation.is_none() || !nb::try_cast<pto::Tensor*>(annotation, ann) || !ann || !ann->defined()) return;
          pto::check_kernel_argument(kernel, param, a, ann->shape(), ann->dtype());
        },
        nb::arg("kernel"), nb::arg("param"), nb::arg("arg").none(), nb::arg("annotation").none(),
        "jit: DTypeError unless arg is a tensor; with a pypto.Tensor(shape, dtype) annotation, its shape "
        "(ArgumentError) and dtype (DTypeError)");
}

}  // namespace ptobind
