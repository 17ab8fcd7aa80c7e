// A Python indexing key as the core's IndexKey (docs/tensors.md#indexing): the semantics of
// t[key] and t[key] = value live in src/ops/indexing.cpp.
#include "bind.h"
#include "ptocpu/error.h"

namespace ptobind {
namespace {

constexpr const char* kOp = "Tensor index";

// A slice stop that is an index tensor (a ptocpu.Tensor, an array of rank >= 1, a list), not an
// integer (0-d arrays included, as numpy reads them).
bool is_index_tensor(nb::handle stop) {
  if (nb::isinstance<pto::Tensor>(stop) || PyList_Check(stop.ptr())) return true;
  return nb::hasattr(stop, "ndim") && nb::hasattr(stop, "__dlpack__") && nb::cast<int64_t>(stop.attr("ndim")) > 0;
}

// A slice bound: None, or an integer (numpy ints and symbolic scalars included).
bool slice_bound(nb::handle v, int64_t& out) {
  if (v.is_none()) return false;
  if (PyBool_Check(v.ptr()) || !PyIndex_Check(v.ptr()))
    pto::fail<pto::DTypeError>(kOp, ": slice bounds must be integers or None, got ", nb::repr(v).c_str());
  nb::object i = nb::steal(PyNumber_Index(v.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  // Bounds beyond int64 clamp, as Python's slices do.
  out = PyLong_AsSsize_t(i.ptr());
  if (out == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    out = nb::cast<bool>(nb::handle(i) > nb::int_(0)) ? INT64_MAX : INT64_MIN + 1;
  }
  return true;
}

pto::IndexItem to_item(nb::handle h) {
  using Kind = pto::IndexItem::Kind;
  PyObject* p = h.ptr();
  pto::IndexItem item;
  if (p == Py_Ellipsis) {
    item.kind = Kind::Ellipsis;
  } else if (h.is_none()) {
    item.kind = Kind::NewAxis;
  } else if (PySlice_Check(p)) {
    item.kind = Kind::Slice;
    item.has_start = slice_bound(h.attr("start"), item.start);
    item.has_stop = slice_bound(h.attr("stop"), item.stop);
    int64_t step = 1;
    if (slice_bound(h.attr("step"), step) && step == 0)
      pto::fail<pto::ArgumentError>(kOp, ": slice step cannot be zero, got ", nb::repr(h).c_str());
    item.step = step;
  } else if (!PyBool_Check(p) && PyIndex_Check(p)) {
    item.kind = Kind::Int;
    item.value = to_int(h, kOp, "index");
  } else {
    pto::fail<pto::DTypeError>(kOp, ": only ints, slices, Ellipsis and None are supported, got ",
                               nb::type_name(h.type()).c_str());
  }
  return item;
}

}  // namespace

pto::IndexKey to_index_key(nb::handle key) {
  pto::IndexKey out;
  // t[dim:index]: gather / scatter_ along dim (upstream's Tensor indexing, docs/ops/gather.md).
  if (PySlice_Check(key.ptr()) && is_index_tensor(key.attr("stop"))) {
    const nb::object step = key.attr("step");
    if (!step.is_none())
      pto::fail<pto::ArgumentError>("gather: t[dim:index] takes no step, got ", nb::repr(step).c_str());
    out.by_index_tensor = true;
    out.dim = to_dim(key.attr("start"), "gather", "dim (the slice start of t[dim:index])");
    out.index = to_tensor(key.attr("stop"), "gather", "index");
    return out;
  }
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) out.items.push_back(to_item(h));
  } else {
    out.items.push_back(to_item(key));
  }
  return out;
}

}  // namespace ptobind
