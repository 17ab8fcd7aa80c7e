#include <nanobind/stl/pair.h>

#include "bind.h"
#include "docstrings.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {

void bind_interleave(nb::module_& m) {
  // require_offered first: on a platform without the op, UnsupportedError wins over any
  // argument that would fail to convert (docs/errors.md).
  m.def("interleave",
        [](nb::handle input, nb::handle other) {
          pto::require_offered(pto::Op::Interleave);
          const pto::Tensor a = to_tensor(input, "interleave", "input"), b = to_tensor(other, "interleave", "other");
          ReleaseGil release;
          return pto::interleave(a, b);
        },
        nb::arg("input").none(), nb::arg("other").none(),
        nb::sig(docs::interleave.sig), docs::interleave.text);
  m.def("deinterleave",
        [](nb::handle input, nb::handle other) {
          pto::require_offered(pto::Op::Deinterleave);
          const pto::Tensor a = to_tensor(input, "deinterleave", "input");
          const pto::Tensor b = other.is_none() ? pto::Tensor() : to_tensor(other, "deinterleave", "other");
          ReleaseGil release;
          return pto::deinterleave(a, b);
        },
        nb::arg("input").none(), nb::arg("other").none() = nb::none(),
        nb::sig(docs::deinterleave.sig), docs::deinterleave.text);
  m.def("_interleave_shape",
        [](nb::handle input, nb::handle other) {
          return to_tuple(pto::output_shape::interleave(to_metadata(input, "interleave", "input"),
                                                        to_metadata(other, "interleave", "other")));
        },
        nb::arg("input").none(), nb::arg("other").none(),
        "The shape of each output from shapes and dtypes alone, under every platform's rules (see docs/torch.md)");
  m.def("_deinterleave_shape",
        [](nb::handle input, nb::handle other) {
          const pto::Tensor b = other.is_none() ? pto::Tensor() : to_metadata(other, "deinterleave", "other");
          return to_tuple(pto::output_shape::deinterleave(to_metadata(input, "deinterleave", "input"), b));
        },
        nb::arg("input").none(), nb::arg("other").none() = nb::none(),
        "The shape of each output from shapes and dtypes alone, under every platform's rules (see docs/torch.md)");
}

}  // namespace ptobind
