// gather (docs/ops/gather.md) and the Tensor.gather method.
#include "bind.h"
#include "docstrings.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

pto::Tensor gather(nb::handle input, nb::handle dim, nb::handle index) {
  pto::require_offered(pto::Op::Gather);
  const pto::Tensor x = to_tensor(input, "gather", "input"), idx = to_tensor(index, "gather", "index");
  const int64_t d = to_int(dim, "gather", "dim");
  ReleaseGil release;
  return pto::gather(x, d, idx);
}

}  // namespace

void bind_gather(nb::module_& m) {
  m.def("gather", &gather, nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::sig(docs::gather.sig), docs::gather.text);
  nb::handle cls = nb::type<pto::Tensor>();
  cls.attr("gather") = nb::cpp_function(&gather, nb::is_method(), nb::scope(cls), nb::name("gather"),
                                        nb::arg("dim").none(), nb::arg("index").none(),
                                        nb::sig(docs::tensor_gather.sig), docs::tensor_gather.text);
  m.def("_gather_shape",
        [](nb::handle input, nb::handle dim, nb::handle index) {
          return to_tuple(pto::output_shape::gather(to_metadata(input, "gather", "input"), to_int(dim, "gather", "dim"),
                                                    to_metadata(index, "gather", "index")));
        },
        nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        "The output shape from shapes and dtypes alone, under every platform's rules (see docs/torch.md)");
}

}  // namespace ptobind
