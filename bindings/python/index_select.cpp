#include "bind.h"
#include "docstrings.h"
#include "ptocpu/ops.h"

namespace ptobind {

void bind_index_select(nb::module_& m) {
  m.def("index_select",
        [](nb::handle input, nb::handle dim, nb::handle index) {
          const pto::Tensor x = to_tensor(input, "index_select", "input"),
                            idx = to_tensor(index, "index_select", "index");
          const int64_t d = to_dim(dim, "index_select");
          // The output has at most index.numel() * input.numel() elements: below a few thousand
          // the call takes well under a microsecond, less than releasing the GIL costs.
          if (idx.numel() < 4096 && x.numel() < 4096 && idx.numel() * x.numel() < 4096) return pto::index_select(x, d, idx);
          ReleaseGil release;
          return pto::index_select(x, d, idx);
        },
        nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        nb::sig(docs::index_select.sig), docs::index_select.text);
  m.def("_index_select_shape",
        [](nb::handle input, nb::handle dim, nb::handle index) {
          return to_tuple(pto::output_shape::index_select(to_metadata(input, "index_select", "input"),
                                                          to_dim(dim, "index_select"),
                                                          to_metadata(index, "index_select", "index")));
        },
        nb::arg("input").none(), nb::arg("dim").none(), nb::arg("index").none(),
        "The output shape from shapes and dtypes alone, under every platform's rules (see docs/torch.md)");
}

}  // namespace ptobind
