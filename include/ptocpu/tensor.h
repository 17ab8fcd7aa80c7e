// A tensor (docs/tensors.md): shape, strides in elements (may be negative or zero), an element
// offset and a dtype over shared storage. Views share storage; writes through a view are
// visible in the base.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ptocpu/dtype.h"

namespace pto {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

std::string shape_to_string(const Shape& s);  // "[3, 4]"
int64_t shape_numel(const Shape& s);
// Bytes of a contiguous tensor of this shape; ArgumentError naming `op` when a dim is negative
// or the element count or byte size does not fit int64.
int64_t checked_nbytes(const Shape& s, size_t itemsize, const char* op);
Strides contiguous_strides(const Shape& s);

class Tensor {
 public:
  Tensor() = default;  // undefined (no storage); defined() is false

  // Uninitialised contiguous storage (64-byte aligned).
  static Tensor empty(Shape shape, DType dtype);
  static Tensor zeros(Shape shape, DType dtype);
  // Wraps foreign memory without copying; keep_alive owns it for as long as any view lives.
  // ptr points at element [0, ..., 0]; strides are in elements.
  static Tensor from_blob(void* ptr, Shape shape, Strides strides, DType dtype,
                          std::shared_ptr<void> keep_alive);

  bool defined() const { return defined_; }
  const Shape& shape() const { return layout_->shape; }
  const Strides& strides() const { return layout_->strides; }
  int64_t shape(int d) const { return layout_->shape[d]; }
  int64_t stride(int d) const { return layout_->strides[d]; }
  int ndim() const { return static_cast<int>(layout_->shape.size()); }
  int64_t numel() const { return layout_->numel; }
  DType dtype() const { return dtype_; }
  size_t itemsize() const { return dtype_size(dtype_); }
  int64_t offset() const { return offset_; }  // elements from the storage base

  // Address of element [0, ..., 0].
  void* data() const { return base_ + offset_ * static_cast<int64_t>(itemsize()); }
  template <class T>
  T* data_as() const { return static_cast<T*>(data()); }
  // Typed element access (tests, small helpers): t.at<float>({1, 2}).
  template <class T>
  T& at(std::initializer_list<int64_t> idx) const {
    int64_t off = 0, d = 0;
    for (int64_t i : idx) off += i * layout_->strides[d++];
    return data_as<T>()[off];
  }

  // Memory imported read-only (a read-only numpy array, a DLPack read-only capsule): ops that
  // write in place refuse it. Views inherit the flag.
  bool read_only() const { return read_only_; }
  Tensor as_read_only() const;
  // PyPTO's format TILEOP_NZ (the device's fractal layout) rather than TILEOP_ND: metadata that
  // views keep. The CPU stores every tensor row-major; only the cube's ops read it (their NZ rules).
  bool nz_format() const { return nz_format_; }
  Tensor with_nz_format(bool nz) const;

  bool is_contiguous() const;
  // This tensor when contiguous, else a contiguous copy.
  Tensor contiguous() const;
  // A view over the same storage; offset in elements relative to element [0, ..., 0].
  Tensor as_strided(Shape shape, Strides strides, int64_t element_offset) const;
  // The same bytes seen as another dtype of the same width.
  Tensor reinterpret(DType dtype) const;

  // The valid shape (docs/kernel_model.md): the leading part of each dim that holds data; the
  // shape unless a view set a smaller one. Ops read only the valid part; elements past it are 0.
  const Shape& valid_shape() const { return layout_->has_valid ? layout_->valid : layout_->shape; }
  bool partially_valid() const { return layout_->has_valid; }
  // This tensor with valid shape `valid` (one entry per dim, each <= the dim; equal clears it).
  Tensor with_valid_shape(const Shape& valid) const;
  // A view of only the valid part (this tensor when it is all valid).
  Tensor valid_part() const;
  // Byte range [lo, hi) that the elements occupy (empty tensors: lo == hi).
  std::pair<const std::byte*, const std::byte*> byte_span() const;
  bool may_overlap(const Tensor& other) const;
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  // Shape, strides and valid shape, immutable and shared between copies: copying a tensor (which
  // every op call does several times) is two reference counts, not three vector copies.
  struct Layout {
    Shape shape;
    Strides strides;
    Shape valid;  // when has_valid
    bool has_valid = false;
    int64_t numel = 1;
  };
  static std::shared_ptr<const Layout> make_layout(Shape shape, Strides strides, Shape valid = {});
  static const std::shared_ptr<const Layout>& empty_layout();  // of Tensor(): shared, never freed

  std::shared_ptr<void> owner_;
  std::byte* base_ = nullptr;
  std::shared_ptr<const Layout> layout_ = empty_layout();
  int64_t offset_ = 0;
  DType dtype_ = DType::FP32;
  bool defined_ = false;
  bool read_only_ = false;
  bool nz_format_ = false;
};

// Copies src into dst elementwise (same shape, same element width; any strides, src strides
// may be 0 for broadcasting). The one strided-copy engine: contiguous(), assignment and
// the kernels' general paths go through it. `op` names the caller in errors (a read-only dst
// is an ArgumentError).
void copy_into(const Tensor& dst, const Tensor& src, const char* op = "copy");

}  // namespace pto
