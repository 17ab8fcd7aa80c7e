// A vector of trivially copyable items whose first N live inside it: no allocation for the usual
// few (a product's batch offsets, its operand views), where a small call's allocations cost about as
// much as its arithmetic. Beyond N the items move to the heap, all of them.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace pto {

template <class T, size_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  InlineVector() = default;
  InlineVector(size_t n, const T& value) { resize(n, value); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return size_ <= N ? inline_.data() : heap_.data(); }
  const T* data() const { return size_ <= N ? inline_.data() : heap_.data(); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }

  void resize(size_t n, const T& value = T{}) {
    if (n <= N) {
      if (size_ > N) std::copy_n(heap_.begin(), n, inline_.begin());  // back inside
      else if (n > size_) std::fill(inline_.begin() + size_, inline_.begin() + n, value);
      heap_.clear();
    } else {
      if (size_ <= N) heap_.assign(inline_.begin(), inline_.begin() + size_);
      heap_.resize(n, value);
    }
    size_ = n;
  }

  void push_back(const T& value) {
    const T copy = value;  // value may be one of the items, which the growth moves
    resize(size_ + 1);
    data()[size_ - 1] = copy;
  }

  void assign(size_t n, const T& value) {
    resize(0);
    resize(n, value);
  }

  template <class It>
    requires(!std::is_integral_v<It>)
  void assign(It first, It last) {
    resize(0);
    for (; first != last; ++first) push_back(*first);
  }

 private:
  std::array<T, N> inline_{};
  std::vector<T> heap_;
  size_t size_ = 0;
};

}  // namespace pto
