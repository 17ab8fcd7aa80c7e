// scatter_update (docs/ops/scatter_update.md) and the Tensor.scatter_update method.
#include "bind.h"
#include "docstrings.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

// Writes input in place; returns the very object when it is a ptocpu.Tensor (as scatter_).
nb::object scatter_update(nb::handle input, nb::handle dim, nb::handle index, nb::handle src) {
  const char* op = "scatter_update";
  pto::require_offered(pto::Op::ScatterUpdate);
  const pto::Tensor x = to_tensor(input, op, "input", Access::Write);
  const int64_t d = to_int(dim, op, "dim");
  const pto::Tensor idx = to_tensor(index, op, "index"), s = to_tensor(src, op, "src");
  pto::Tensor out;
  {
    ReleaseGil release;
    out = pto::scatter_update(x, d, idx, s);
  }
  return in_place_result(input, std::move(out));
}

}  // namespace

void bind_scatter_update(nb::module_& m) {
  m.def("scatter_update", &scatter_update, nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::arg("src").none(), nb::sig(docs::scatter_update.sig), docs::scatter_update.text);
  nb::handle cls = nb::type<pto::Tensor>();
  cls.attr("scatter_update") =
      nb::cpp_function(&scatter_update, nb::is_method(), nb::scope(cls), nb::name("scatter_update"),
                       nb::arg("dim").none(), nb::arg("index").none(), nb::arg("src").none(),
                       nb::sig(docs::tensor_scatter_update.sig), docs::tensor_scatter_update.text);
}

}  // namespace ptobind
