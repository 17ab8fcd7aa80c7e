#include "ptocpu/tensor.h"

#include <algorithm>
#include <sstream>

#include "core/allocator.h"
#include "copy/strided_copy.h"
#include "ptocpu/error.h"

namespace pto {

std::string shape_to_string(const Shape& s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

// Wraps (no UB) for shapes past int64; every op and allocation checks with checked_nbytes first.
int64_t shape_numel(const Shape& s) {
  uint64_t n = 1;
  for (int64_t d : s) n *= static_cast<uint64_t>(d);
  return static_cast<int64_t>(n);
}

int64_t checked_nbytes(const Shape& s, size_t itemsize, const char* op) {
  int64_t n = static_cast<int64_t>(itemsize);
  bool overflow = false, empty = false;
  for (int64_t d : s) {
    if (d < 0) fail<ArgumentError>(op, ": shape ", shape_to_string(s), " has a negative dim");
    overflow |= __builtin_mul_overflow(n, d, &n);
    empty |= d == 0;
  }
  if (overflow && !empty)  // an empty shape needs no bytes, however large its other dims
    fail<ArgumentError>(op, ": shape ", shape_to_string(s), " has more elements than fit in memory (int64 bytes)");
  return overflow ? 0 : n;
}

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  uint64_t acc = 1;  // wraps only for empty tensors with huge dims, whose strides are never used
  for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i) {
    st[i] = static_cast<int64_t>(acc);
    acc *= static_cast<uint64_t>(std::max<int64_t>(s[i], 1));
  }
  return st;
}

namespace {
Tensor allocate(Shape shape, DType dtype, bool zero) {
  auto storage = allocate_storage(static_cast<size_t>(checked_nbytes(shape, dtype_size(dtype), "tensor")), zero);
  void* p = storage.get();
  Strides strides = contiguous_strides(shape);
  return Tensor::from_blob(p, std::move(shape), std::move(strides), dtype, std::move(storage));
}
}  // namespace

std::shared_ptr<const Tensor::Layout> Tensor::make_layout(Shape shape, Strides strides, Shape valid) {
  auto layout = std::make_shared<Layout>();
  layout->numel = shape_numel(shape);
  layout->has_valid = !valid.empty() && valid != shape;
  if (layout->has_valid) layout->valid = std::move(valid);
  layout->shape = std::move(shape);
  layout->strides = std::move(strides);
  return layout;
}

// Owned by no one (the aliasing constructor over an empty owner): copies of an undefined tensor,
// which every default-constructed Tensor is, then skip the atomic reference count.
const std::shared_ptr<const Tensor::Layout>& Tensor::empty_layout() {
  static const auto* layout = new std::shared_ptr<const Layout>(make_layout({}, {}));
  static const std::shared_ptr<const Layout> unowned(std::shared_ptr<void>(), layout->get());
  return unowned;
}

// Shapes and strides by value: a caller's temporary moves into the tensor's layout, where a copy
// would cost an allocation per vector on every op's output.
Tensor Tensor::empty(Shape shape, DType dtype) { return allocate(std::move(shape), dtype, false); }
Tensor Tensor::zeros(Shape shape, DType dtype) { return allocate(std::move(shape), dtype, true); }

Tensor Tensor::from_blob(void* ptr, Shape shape, Strides strides, DType dtype,
                         std::shared_ptr<void> keep_alive) {
  if (shape.size() != strides.size())
    fail<ArgumentError>("from_blob: shape ", shape_to_string(shape), " and strides ", shape_to_string(strides),
                        " differ in length");
  Tensor t;
  t.owner_ = std::move(keep_alive);
  t.base_ = static_cast<std::byte*>(ptr);
  t.layout_ = make_layout(std::move(shape), std::move(strides));
  t.offset_ = 0;
  t.dtype_ = dtype;
  t.defined_ = true;
  return t;
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;  // no element to place: any strides are row-major
  int64_t expected = 1;
  const Shape& sh = shape();
  const Strides& st = strides();
  for (int i = ndim() - 1; i >= 0; --i) {
    if (sh[i] != 1 && st[i] != expected) return false;
    expected *= sh[i];
  }
  return true;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  Tensor out = empty(shape(), dtype_);
  copy_into(out, *this);
  return out;
}

Tensor Tensor::as_strided(Shape shape, Strides strides, int64_t element_offset) const {
  Tensor t = *this;
  t.layout_ = make_layout(std::move(shape), std::move(strides));  // a new view: all of it is valid
  t.offset_ = offset_ + element_offset;
  return t;
}

Tensor Tensor::with_valid_shape(const Shape& valid) const {
  Tensor t = *this;
  if (valid != shape() || layout_->has_valid) t.layout_ = make_layout(shape(), strides(), valid);
  return t;
}

Tensor Tensor::valid_part() const {
  return layout_->has_valid ? as_strided(layout_->valid, strides(), 0) : *this;
}

Tensor Tensor::as_read_only() const {
  Tensor t = *this;
  t.read_only_ = true;
  return t;
}

Tensor Tensor::with_nz_format(bool nz) const {
  Tensor t = *this;
  t.nz_format_ = nz;
  return t;
}

Tensor Tensor::reinterpret(DType dtype) const {
  if (dtype_size(dtype) != itemsize())
    fail<DTypeError>("reinterpret: ", dtype_name(dtype_), " and ", dtype_name(dtype), " differ in width");
  Tensor t = *this;
  t.dtype_ = dtype;
  return t;
}

std::pair<const std::byte*, const std::byte*> Tensor::byte_span() const {
  const std::byte* p = static_cast<const std::byte*>(data());
  if (numel() == 0) return {p, p};
  int64_t lo = 0, hi = 0;
  for (int i = 0; i < ndim(); ++i) {
    const int64_t reach = (shape(i) - 1) * stride(i);
    (reach < 0 ? lo : hi) += reach;
  }
  const int64_t item = static_cast<int64_t>(itemsize());
  return {p + lo * item, p + (hi + 1) * item};
}

bool Tensor::may_overlap(const Tensor& other) const {
  auto [a0, a1] = byte_span();
  auto [b0, b1] = other.byte_span();
  return a0 < b1 && b0 < a1;
}

void copy_into(const Tensor& dst, const Tensor& src, const char* op) {
  if (dst.read_only())
    fail<ArgumentError>(op, ": the destination (shape ", shape_to_string(dst.shape()),
                        ") is read-only memory; it cannot be written");
  if (dst.shape() != src.shape())
    fail<ArgumentError>(op, ": shapes ", shape_to_string(dst.shape()), " and ", shape_to_string(src.shape()),
                        " differ");
  if (dst.itemsize() != src.itemsize())
    fail<DTypeError>(op, ": dtypes ", dtype_name(dst.dtype()), " and ", dtype_name(src.dtype()), " differ in width");
  kernels::strided_copy(dst.data(), dst.strides().data(), src.data(), src.strides().data(), dst.shape().data(),
                        dst.ndim(), dst.itemsize());
}

}  // namespace pto
