// numpy-style basic indexing of a ptocpu.Tensor: t[key] as a view, t[key] = value as a copy into
// it (docs/tensors.md).
#include "bind.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"

namespace ptobind {

// Basic indexing (ints, slices, Ellipsis, None) as a view.
pto::Tensor basic_index(const pto::Tensor& t, nb::handle key) {
  require_storage(t, "Tensor index");
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(key)) items.push_back(h);
  } else {
    items.push_back(key);
  }
  int consumed = 0, ellipses = 0;
  for (nb::handle h : items) {
    if (h.ptr() == Py_Ellipsis) ++ellipses;
    else if (!h.is_none()) ++consumed;
  }
  if (ellipses > 1) pto::fail<pto::ArgumentError>("Tensor index: at most one Ellipsis, got ", ellipses);
  if (consumed > t.ndim())
    pto::fail<pto::IndexError>("Tensor index: ", consumed, " indices for a tensor of rank ", t.ndim());
  pto::Shape shape;
  pto::Strides strides;
  int64_t offset = 0;
  int dim = 0;
  for (nb::handle h : items) {
    PyObject* p = h.ptr();
    if (p == Py_Ellipsis) {
      for (int k = 0; k < t.ndim() - consumed; ++k, ++dim) {
        shape.push_back(t.shape(dim));
        strides.push_back(t.stride(dim));
      }
    } else if (h.is_none()) {
      shape.push_back(1);
      strides.push_back(0);
    } else if (PySlice_Check(p)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(p, &start, &stop, &step) < 0) {
        nb::python_error e;  // a zero step (ValueError) or a bound that is not an integer (TypeError)
        if (e.matches(PyExc_ValueError))
          pto::fail<pto::ArgumentError>("Tensor index: slice step cannot be zero, got ", nb::repr(h).c_str());
        pto::fail<pto::DTypeError>("Tensor index: slice bounds must be integers or None, got ", nb::repr(h).c_str());
      }
      const Py_ssize_t len = PySlice_AdjustIndices(t.shape(dim), &start, &stop, step);
      shape.push_back(len);
      strides.push_back(t.stride(dim) * step);
      if (len > 0) offset += start * t.stride(dim);
      ++dim;
    } else if (!PyBool_Check(p) && PyIndex_Check(p)) {
      int64_t i = to_int(h, "Tensor index", "index");
      const int64_t n = t.shape(dim);
      if (i < -n || i >= n)
        pto::fail<pto::IndexError>("Tensor index: index ", i, " is out of range [", -n, ", ", n, ") for dim ", dim,
                                   " of shape ", pto::shape_to_string(t.shape()));
      offset += (i < 0 ? i + n : i) * t.stride(dim);
      ++dim;
    } else {
      pto::fail<pto::DTypeError>("Tensor index: only ints, slices, Ellipsis and None are supported, got ",
                                 nb::type_name(h.type()).c_str());
    }
  }
  for (; dim < t.ndim(); ++dim) {
    shape.push_back(t.shape(dim));
    strides.push_back(t.stride(dim));
  }
  return t.as_strided(shape, strides, offset);
}

// A slice stop that is an index tensor (a ptocpu.Tensor, an array of rank >= 1, a list), not an
// integer (0-d arrays included, as numpy reads them).
bool is_index_tensor(nb::handle stop) {
  if (nb::isinstance<pto::Tensor>(stop) || PyList_Check(stop.ptr())) return true;
  return nb::hasattr(stop, "ndim") && nb::hasattr(stop, "__dlpack__") && nb::cast<int64_t>(stop.attr("ndim")) > 0;
}

// t[key]: t[dim:index] (a slice whose stop is an index tensor) is gather(t, dim, index), as
// upstream's Tensor.__getitem__ has it (docs/ops/gather.md); anything else is basic indexing.
pto::Tensor get_item(const pto::Tensor& t, nb::handle key) {
  if (PySlice_Check(key.ptr())) {
    const nb::object stop = key.attr("stop");
    if (is_index_tensor(stop)) {
      const nb::object start = key.attr("start"), step = key.attr("step");
      if (!step.is_none())
        pto::fail<pto::ArgumentError>("gather: t[dim:index] takes no step, got ", nb::repr(step).c_str());
      const int64_t dim = to_int(start, "gather", "dim (the slice start of t[dim:index])");
      const pto::Tensor index = to_tensor(stop, "gather", "index");
      ReleaseGil release;
      return pto::gather(require_storage(t, "Tensor index"), dim, index);
    }
  }
  return basic_index(t, key);
}

// t[key] = value: a scalar, or a tensor of t's dtype broadcast like numpy.
void assign(const pto::Tensor& t, nb::handle key, nb::handle value) {
  const pto::Tensor view = basic_index(t, key);
  alignas(8) unsigned char element[8];
  pto::Tensor src;
  if (auto s = to_scalar(value)) {
    pto::encode_scalar(*s, view.dtype(), element, "Tensor assignment", "value");
    src = pto::Tensor::from_blob(element, view.shape(), pto::Strides(view.ndim(), 0), view.dtype(), nullptr);
  } else {
    pto::Tensor v = to_tensor(value, "Tensor assignment", "value");
    if (v.dtype() != view.dtype())
      pto::fail<pto::DTypeError>("Tensor assignment: value dtype ", pto::dtype_name(v.dtype()),
                                 " must match the tensor dtype ", pto::dtype_name(view.dtype()));
    if (v.ndim() > view.ndim())
      pto::fail<pto::ArgumentError>("Tensor assignment: value shape ", pto::shape_to_string(v.shape()),
                                    " cannot broadcast to ", pto::shape_to_string(view.shape()));
    if (v.may_overlap(view)) {
      pto::Tensor copy = pto::Tensor::empty(v.shape(), v.dtype());
      pto::copy_into(copy, v);
      v = copy;
    }
    pto::Strides strides(view.ndim(), 0);
    const int lead = view.ndim() - v.ndim();
    for (int i = 0; i < v.ndim(); ++i) {
      const int64_t n = v.shape(i), want = view.shape(lead + i);
      if (n == want) strides[lead + i] = v.stride(i);
      else if (n != 1)
        pto::fail<pto::ArgumentError>("Tensor assignment: value shape ", pto::shape_to_string(v.shape()),
                                      " cannot broadcast to ", pto::shape_to_string(view.shape()));
    }
    src = v.as_strided(view.shape(), strides, 0);
  }
  ReleaseGil release;
  pto::copy_into(view, src, "Tensor assignment");
}

}  // namespace ptobind
