// index_add_ / index_add (docs/ops/index_add.md) and the Tensor.index_add_ / Tensor.index_add
// methods.
#include "bind.h"
#include "docstrings.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

pto::Tensor call(bool in_place, nb::handle input, nb::handle dim, nb::handle index, nb::handle source,
                 nb::handle alpha) {
  const char* op = in_place ? "index_add_" : "index_add";
  pto::require_offered(pto::Op::IndexAdd);
  const pto::Tensor x = to_tensor(input, op, "input", in_place ? Access::Write : Access::Read);
  const int64_t d = to_int(dim, op, "dim");
  const pto::Tensor idx = to_tensor(index, op, "index"), src = to_tensor(source, op, "source");
  const std::optional<pto::Scalar> a = to_scalar(alpha);
  if (!a)
    pto::fail<pto::DTypeError>(op, ": alpha must be an int or a float, got ", nb::type_name(alpha.type()).c_str(),
                               " ", nb::repr(alpha).c_str());
  ReleaseGil release;
  return in_place ? pto::index_add_(x, d, idx, src, *a) : pto::index_add(x, d, idx, src, *a);
}

nb::object index_add_inplace(nb::handle input, nb::handle dim, nb::handle index, nb::handle source,
                             nb::handle alpha) {
  return in_place_result(input, call(true, input, dim, index, source, alpha));
}

pto::Tensor index_add_new(nb::handle input, nb::handle dim, nb::handle index, nb::handle source, nb::handle alpha) {
  return call(false, input, dim, index, source, alpha);
}

}  // namespace

void bind_index_add(nb::module_& m) {
  m.def("index_add_", &index_add_inplace, nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::arg("source").none(), nb::kw_only(), nb::arg("alpha").none() = 1, nb::sig(docs::index_add_inplace.sig),
        docs::index_add_inplace.text);
  m.def("index_add", &index_add_new, nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::arg("source").none(), nb::kw_only(), nb::arg("alpha").none() = 1, nb::sig(docs::index_add.sig),
        docs::index_add.text);
  nb::handle cls = nb::type<pto::Tensor>();
  cls.attr("index_add_") = nb::cpp_function(&index_add_inplace, nb::is_method(), nb::scope(cls),
                                            nb::name("index_add_"), nb::arg("dim").none(), nb::arg("index").none(),
                                            nb::arg("source").none(), nb::kw_only(), nb::arg("alpha").none() = 1,
                                            nb::sig(docs::tensor_index_add_inplace.sig),
                                            docs::tensor_index_add_inplace.text);
  cls.attr("index_add") = nb::cpp_function(&index_add_new, nb::is_method(), nb::scope(cls), nb::name("index_add"),
                                           nb::arg("dim").none(), nb::arg("index").none(), nb::arg("source").none(),
                                           nb::kw_only(), nb::arg("alpha").none() = 1,
                                           nb::sig(docs::tensor_index_add.sig), docs::tensor_index_add.text);
}

}  // namespace ptobind
