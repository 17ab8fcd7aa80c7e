#include <nanobind/stl/string.h>

#include "bind.h"
#include "docstrings.h"

namespace ptobind {

void bind_dtype(nb::module_& m) {
  // Named as upstream's enum (str(DT_FP32) is "DataType.DT_FP32"); DType is the same class.
  nb::enum_<pto::DType> dtype(m, "DataType", "Element types of docs/dtypes.md");
  m.attr("DType") = dtype;
  for (int i = 0; i < pto::kNumDTypes; ++i) {
    const auto dt = static_cast<pto::DType>(i);
    dtype.value(pto::dtype_name(dt), dt);
    m.attr(pto::dtype_name(dt)) = dt;
  }
  m.def("dtype_from_name", [](const std::string& name) { return pto::dtype_from_name(name); },
        nb::sig(docs::dtype_from_name.sig), docs::dtype_from_name.text);
  m.def("dtype_table", [] {
    nb::list out;
    for (int i = 0; i < pto::kNumDTypes; ++i) {
      const auto dt = static_cast<pto::DType>(i);
      nb::dict d;
      d["dtype"] = dt;
      d["itemsize"] = pto::dtype_size(dt);
      d["numpy"] = pto::dtype_numpy_name(dt);
      d["ml_dtypes"] = pto::dtype_from_ml_dtypes(dt);
      d["storage_format"] = pto::DTypeSet::storage_formats().contains(dt);
      out.append(d);
    }
    return out;
  }, nb::sig(docs::dtype_table.sig), docs::dtype_table.text);
  m.def("dtype", &to_dtype, nb::arg("obj").none(), nb::sig(docs::to_dtype.sig), docs::to_dtype.text);
  m.def("numpy_dtype", [](nb::handle dt) { return nb::module_::import_("numpy").attr("dtype")(numpy_dtype(to_dtype(dt))); }, nb::arg("dtype").none(),
        nb::sig(docs::numpy_dtype.sig), docs::numpy_dtype.text);
  m.def("itemsize", [](nb::handle dt) { return pto::dtype_size(to_dtype(dt)); }, nb::arg("dtype").none(),
        nb::sig(docs::itemsize.sig), docs::itemsize.text);
}

}  // namespace ptobind
