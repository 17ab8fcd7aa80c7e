// gather (docs/ops/gather.md) and the Tensor.gather method.
#include "bind.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

pto::Tensor gather(nb::handle input, nb::handle dim, nb::handle index) {
  pto::require_offered(pto::Op::Gather);
  const pto::Tensor x = to_tensor(input, "gather", "input"), idx = to_tensor(index, "gather", "index");
  const int64_t d = to_int(dim, "gather", "dim");
  nb::gil_scoped_release release;
  return pto::gather(x, d, idx);
}

}  // namespace

void bind_gather(nb::module_& m) {
  const char* doc = "torch.gather with checks: out has index's shape, out[p] = input[p with p[dim] := index[p]].";
  m.def("gather", &gather, nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(), doc);
  nb::handle cls = nb::type<pto::Tensor>();
  cls.attr("gather") = nb::cpp_function(&gather, nb::is_method(), nb::scope(cls), nb::name("gather"),
                                        nb::arg("dim").none(), nb::arg("index").none(), doc);
}

}  // namespace ptobind
