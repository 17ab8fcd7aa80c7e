#include <nanobind/stl/pair.h>

#include "bind.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {

void bind_interleave(nb::module_& m) {
  // require_offered first: on a platform without the op, UnsupportedError wins over any
  // argument that would fail to convert (SPEC 4).
  m.def("interleave",
        [](nb::handle input, nb::handle other) {
          pto::require_offered(pto::Op::Interleave);
          const pto::Tensor a = to_tensor(input, "interleave", "input"), b = to_tensor(other, "interleave", "other");
          nb::gil_scoped_release release;
          return pto::interleave(a, b);
        },
        nb::arg("input").none(), nb::arg("other").none(),
        "SPEC 5.2: along the last axis s[2k] = input[k], s[2k+1] = other[k]; returns (s[:n], s[n:]), "
        "each of input's shape");
  m.def("deinterleave",
        [](nb::handle input, nb::handle other) {
          pto::require_offered(pto::Op::Deinterleave);
          const pto::Tensor a = to_tensor(input, "deinterleave", "input");
          const pto::Tensor b = other.is_none() ? pto::Tensor() : to_tensor(other, "deinterleave", "other");
          nb::gil_scoped_release release;
          return pto::deinterleave(a, b);
        },
        nb::arg("input").none(), nb::arg("other").none() = nb::none(),
        "SPEC 5.3: (c[..., 0::2], c[..., 1::2]) with c = concat(input, other) on the last axis, "
        "or c = input when other is None");
}

}  // namespace ptobind
