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

// A list / tuple of exact Python ints read directly (the common call, and the one whose call
// overhead shows on tiny tensors); anything else, or a value beyond int64, through
// to_int_list, which names the parameter in its errors.
std::vector<int64_t> int_list(nb::handle obj, const char* param) {
  PyObject* p = obj.ptr();
  const bool list = PyList_CheckExact(p);
  if (list || PyTuple_CheckExact(p)) {
    const Py_ssize_t n = list ? PyList_GET_SIZE(p) : PyTuple_GET_SIZE(p);
    std::vector<int64_t> out(static_cast<size_t>(n));
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = list ? PyList_GET_ITEM(p, i) : PyTuple_GET_ITEM(p, i);
      int overflow = 0;
      const long long v = PyLong_CheckExact(item) ? PyLong_AsLongLongAndOverflow(item, &overflow) : 0;
      if (!PyLong_CheckExact(item) || overflow) return to_int_list(obj, kOp, param);
      out[static_cast<size_t>(i)] = v;
    }
    return out;
  }
  return to_int_list(obj, kOp, param);
}

// Inputs up to this size are sliced without releasing the GIL: for them, releasing and
// retaking it would cost more than the copy.
constexpr int64_t kKeepGilBytes = int64_t(64) << 10;

// begin / end / strides and the masks (DTypeError for non-integers, naming the parameter).
struct SliceArgs {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask;
};

SliceArgs to_slice_args(nb::handle begin, nb::handle end, nb::handle strides, nb::handle begin_mask,
                        nb::handle end_mask, nb::handle ellipsis_mask, nb::handle shrink_axis_mask,
                        nb::handle new_axis_mask) {
  return {int_list(begin, "begin"),
          int_list(end, "end"),
          int_list(strides, "strides"),
          to_int(begin_mask, kOp, "begin_mask"),
          to_int(end_mask, kOp, "end_mask"),
          to_int(ellipsis_mask, kOp, "ellipsis_mask"),
          to_int(shrink_axis_mask, kOp, "shrink_axis_mask"),
          to_int(new_axis_mask, kOp, "new_axis_mask")};
}

// Converts the arguments and forwards.
pto::Tensor call(const Form& form, nb::handle x, nb::handle begin, nb::handle end, nb::handle strides,
                 nb::handle begin_mask, nb::handle end_mask, nb::handle ellipsis_mask, nb::handle shrink_axis_mask,
                 nb::handle new_axis_mask) {
  pto::require_offered(pto::Op::StridedSlice);
  const pto::Tensor t = to_tensor(x, form.name, "x", form.access);
  const SliceArgs a =
      to_slice_args(begin, end, strides, begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask);
  const auto slice = [&] {
    return form.op(t, a.begin, a.end, a.strides, a.begin_mask, a.end_mask, a.ellipsis_mask, a.shrink_axis_mask,
                   a.new_axis_mask);
  };
  if (t.numel() * static_cast<int64_t>(t.itemsize()) <= kKeepGilBytes) return slice();
  ReleaseGil release;
  return slice();
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
          nb::arg("x").none(), nb::arg("begin").none(), nb::arg("end").none(), nb::arg("strides").none(),
          nb::arg("begin_mask").none() = 0, nb::arg("end_mask").none() = 0, nb::arg("ellipsis_mask").none() = 0,
          nb::arg("shrink_axis_mask").none() = 0, nb::arg("new_axis_mask").none() = 0, nb::sig(form.doc.sig),
          form.doc.text);
  m.def("_strided_slice_shape",
        [](nb::handle x, nb::handle begin, nb::handle end, nb::handle strides, nb::handle begin_mask,
           nb::handle end_mask, nb::handle ellipsis_mask, nb::handle shrink_axis_mask, nb::handle new_axis_mask) {
          const pto::Tensor t = to_metadata(x, kOp, "x");
          const SliceArgs a =
              to_slice_args(begin, end, strides, begin_mask, end_mask, ellipsis_mask, shrink_axis_mask, new_axis_mask);
          return to_tuple(pto::output_shape::strided_slice(t, a.begin, a.end, a.strides, a.begin_mask, a.end_mask,
                                                           a.ellipsis_mask, a.shrink_axis_mask, a.new_axis_mask));
        },
        nb::arg("x"), nb::arg("begin"), nb::arg("end"), nb::arg("strides"), nb::arg("begin_mask") = 0,
        nb::arg("end_mask") = 0, nb::arg("ellipsis_mask") = 0, nb::arg("shrink_axis_mask") = 0,
        nb::arg("new_axis_mask") = 0,
        "The output shape from x's shape and dtype alone, under every platform's rules (see docs/torch.md)");
}

}  // namespace ptobind
