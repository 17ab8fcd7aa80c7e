// scatter_ / scatter (docs/ops/scatter.md) and the Tensor.scatter_ / Tensor.scatter methods.
#include <Python.h>
#include <nanobind/stl/string_view.h>

#include "bind.h"
#include "docstrings.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

pto::ScatterReduce to_reduce(nb::handle reduce, const char* op) {
  if (reduce.is_none()) return pto::ScatterReduce::None;
  if (!PyUnicode_Check(reduce.ptr()))
    pto::fail<pto::ArgumentError>(op, ": reduce ", nb::repr(reduce).c_str(),
                                  " is not supported; allowed: None, 'add', 'multiply'");
  return pto::scatter_reduce_from_name(nb::cast<std::string_view>(reduce), op);
}

// Converts the arguments and runs scatter_ (in_place) or scatter; returns the result tensor.
pto::Tensor call(bool in_place, nb::handle input, nb::handle dim, nb::handle index, nb::handle src,
                 nb::handle reduce) {
  const char* op = in_place ? "scatter_" : "scatter";
  pto::require_offered(pto::Op::Scatter);
  const pto::Tensor x = to_tensor(input, op, "input", in_place ? Access::Write : Access::Read);
  const int64_t d = to_dim(dim, op);
  const pto::Tensor idx = to_tensor(index, op, "index");
  const pto::ScatterReduce r = to_reduce(reduce, op);
  if (const std::optional<pto::Scalar> s = to_scalar(src)) {
    ReleaseGil release;
    return in_place ? pto::scatter_(x, d, idx, *s, r) : pto::scatter(x, d, idx, *s, r);
  }
  const pto::Tensor v = to_tensor(src, op, "src");
  ReleaseGil release;
  return in_place ? pto::scatter_(x, d, idx, v, r) : pto::scatter(x, d, idx, v, r);
}

nb::object scatter_inplace(nb::handle input, nb::handle dim, nb::handle index, nb::handle src, nb::handle reduce) {
  return in_place_result(input, call(true, input, dim, index, src, reduce));
}

pto::Tensor scatter_new(nb::handle input, nb::handle dim, nb::handle index, nb::handle src, nb::handle reduce) {
  return call(false, input, dim, index, src, reduce);
}

}  // namespace

void bind_scatter(nb::module_& m) {
  // None passes conversion so that the op's own message names the parameter
  m.def("scatter_", &scatter_inplace, nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::arg("src").none(), nb::kw_only(), nb::arg("reduce") = nb::none(), nb::sig(docs::scatter_inplace.sig), docs::scatter_inplace.text);
  m.def("scatter", &scatter_new, nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::arg("src").none(), nb::kw_only(), nb::arg("reduce") = nb::none(), nb::sig(docs::scatter.sig), docs::scatter.text);

  nb::handle cls = nb::type<pto::Tensor>();
  cls.attr("scatter_") = nb::cpp_function(&scatter_inplace, nb::is_method(), nb::scope(cls), nb::name("scatter_"),
                                          nb::arg("dim").none(), nb::arg("index").none(), nb::arg("src").none(),
                                          nb::kw_only(), nb::arg("reduce") = nb::none(), nb::sig(docs::tensor_scatter_inplace.sig), docs::tensor_scatter_inplace.text);
  cls.attr("scatter") = nb::cpp_function(&scatter_new, nb::is_method(), nb::scope(cls), nb::name("scatter"),
                                         nb::arg("dim").none(), nb::arg("index").none(), nb::arg("src").none(),
                                         nb::kw_only(), nb::arg("reduce") = nb::none(), nb::sig(docs::tensor_scatter.sig), docs::tensor_scatter.text);
}

}  // namespace ptobind
