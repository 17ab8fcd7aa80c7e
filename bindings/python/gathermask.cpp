// gathermask (docs/ops/gathermask.md) and the Tensor.gathermask method.
#include "bind.h"
#include "docstrings.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

pto::Tensor gathermask(nb::handle x, nb::handle pattern_mode) {
  pto::require_offered(pto::Op::GatherMask);
  const pto::Tensor t = to_tensor(x, "gathermask", "x");
  const int64_t mode = to_int(pattern_mode, "gathermask", "pattern_mode");
  ReleaseGil release;
  return pto::gathermask(t, mode);
}

}  // namespace

void bind_gathermask(nb::module_& m) {
  m.def("gathermask", &gathermask, nb::arg("x").none(), nb::arg("pattern_mode").none(), nb::sig(docs::gathermask.sig),
        docs::gathermask.text);
  nb::handle cls = nb::type<pto::Tensor>();
  cls.attr("gathermask") = nb::cpp_function(&gathermask, nb::is_method(), nb::scope(cls), nb::name("gathermask"),
                                            nb::arg("pattern_mode").none(), nb::sig(docs::tensor_gathermask.sig),
                                            docs::tensor_gathermask.text);
  m.def("_gathermask_shape",
        [](nb::handle x, nb::handle pattern_mode) {
          return to_tuple(pto::output_shape::gathermask(to_metadata(x, "gathermask", "x"),
                                                        to_int(pattern_mode, "gathermask", "pattern_mode")));
        },
        nb::arg("x").none(), nb::arg("pattern_mode").none(),
        "The output shape from shapes and dtypes alone, under every platform's rules (see docs/torch.md)");
}

}  // namespace ptobind
