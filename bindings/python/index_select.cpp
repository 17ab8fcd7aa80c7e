#include "bind.h"
#include "docstrings.h"
#include "ptocpu/ops.h"

namespace ptobind {

void bind_index_select(nb::module_& m) {
  m.def("index_select",
        [](nb::handle input, nb::handle dim, nb::handle index) {
          const pto::Tensor x = to_tensor(input, "index_select", "input"),
                            idx = to_tensor(index, "index_select", "index");
          const int64_t d = to_int(dim, "index_select", "dim");
          // The output has at most index.numel() * input.numel() elements: below a few thousand
          // the call takes well under a microsecond, less than releasing the GIL costs.
          if (idx.numel() < 4096 && x.numel() < 4096 && idx.numel() * x.numel() < 4096) return pto::index_select(x, d, idx);
          nb::gil_scoped_release release;
          return pto::index_select(x, d, idx);
        },
        nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::sig(docs::index_select.sig), docs::index_select.text);
}

}  // namespace ptobind
