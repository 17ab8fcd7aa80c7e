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
          nb::gil_scoped_release release;
          return pto::interleave(a, b);
        },
        nb::arg("input").none(), nb::arg("other").none(),
        nb::sig(docs::interleave.sig), docs::interleave.text);
  m.def("deinterleave",
        [](nb::handle input, nb::handle other) {
          pto::require_offered(pto::Op::Deinterleave);
          const pto::Tensor a = to_tensor(input, "deinterleave", "input");
          const pto::Tensor b = other.is_none() ? pto::Tensor() : to_tensor(other, "deinterleave", "other");
          nb::gil_scoped_release release;
          return pto::deinterleave(a, b);
        },
        nb::arg("input").none(), nb::arg("other").none() = nb::none(),
        nb::sig(docs::deinterleave.sig), docs::deinterleave.text);
}

}  // namespace ptobind
