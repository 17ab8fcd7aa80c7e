#include "bind.h"
#include "docstrings.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

constexpr const char* kOp = "strided_slice";
using SliceOp = pto::Tensor (*)(const pto::Tensor&, const std::vector<int64_t>&, const std::vector<int64_t>&,
                                const std::vector<int64_t>&, int64_t, int64_t, int64_t, int64_t, int64_t);

// The copy and the view: same arguments; a view must share the caller's memory.
struct Form {
  const char* name;
  SliceOp op;
  Access access;
  const docs::Doc& doc;
};

// Converts the arguments (DTypeError for non-integers, naming the parameter) and forwards.
pto::Tensor call(const Form& form, nb::handle x, nb::handle begin, nb::handle end, nb::handle strides,
                 nb::handle begin_mask, nb::handle end_mask, nb::handle ellipsis_mask, nb::handle shrink_axis_mask,
                 nb::handle new_axis_mask) {
  pto::require_offered(pto::Op::StridedSlice);
  const pto::Tensor t = to_tensor(x, form.name, "x", form.access);
  const std::vector<int64_t> b = to_int_list(begin, kOp, "begin"), e = to_int_list(end, kOp, "end"),
                             s = to_int_list(strides, kOp, "strides");
  const int64_t bm = to_int(begin_mask, kOp, "begin_mask"), em = to_int(end_mask, kOp, "end_mask"),
                elm = to_int(ellipsis_mask, kOp, "ellipsis_mask"), sm = to_int(shrink_axis_mask, kOp, "shrink_axis_mask"),
                nm = to_int(new_axis_mask, kOp, "new_axis_mask");
  nb::gil_scoped_release release;
  return form.op(t, b, e, s, bm, em, elm, sm, nm);
}

}  // namespace

void bind_strided_slice(nb::module_& m) {
  static const Form forms[] = {
      {"strided_slice", pto::strided_slice, Access::Read, docs::strided_slice},
      {"strided_slice_view", pto::strided_slice_view, Access::Write, docs::strided_slice_view},
  };
  for (const Form& form : forms)
    m.def(form.name,
          [&form](nb::handle x, nb::handle begin, nb::handle end, nb::handle strides, nb::handle begin_mask,
                  nb::handle end_mask, nb::handle ellipsis_mask, nb::handle shrink_axis_mask, nb::handle new_axis_mask) {
            return call(form, x, begin, end, strides, begin_mask, end_mask, ellipsis_mask, shrink_axis_mask,
                        new_axis_mask);
          },
          nb::arg("x"), nb::arg("begin"), nb::arg("end"), nb::arg("strides"), nb::arg("begin_mask") = 0,
          nb::arg("end_mask") = 0, nb::arg("ellipsis_mask") = 0, nb::arg("shrink_axis_mask") = 0,
          nb::arg("new_axis_mask") = 0, nb::sig(form.doc.sig), form.doc.text);
}

}  // namespace ptobind
