#include "ops/index_bounds.h"

#include <algorithm>
#include <atomic>
#include <sstream>
#include <vector>

#include "copy/simd.h"
#include "ptocpu/parallel.h"

namespace pto::index_bounds {
namespace {

// OR of "value out of [0, bound)" over v[0, n), one unsigned compare per value (negative values
// wrap to huge ones); branch-free so that it vectorises (runtime-dispatched clones). With
// `narrow`, the values are also stored as uint16 (meaningful when every value is below 65536).
template <class U>
PTO_SIMD_CLONES bool any_out_of_bounds(const U* v, int64_t n, U bound) {
  U any = 0;
  for (int64_t i = 0; i < n; ++i) any |= static_cast<U>(v[i] >= bound);
  return any != 0;
}
template <class U>
PTO_SIMD_CLONES bool any_out_of_bounds_narrowed(const U* v, uint16_t* narrow, int64_t n, U bound) {
  U any = 0;
  for (int64_t i = 0; i < n; ++i) {
    any |= static_cast<U>(v[i] >= bound);
    narrow[i] = static_cast<uint16_t>(v[i]);
  }
  return any != 0;
}

std::string position(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  std::ostringstream os;
  os << '(';
  for (size_t i = 0; i < idx.size(); ++i) os << (i ? ", " : "") << idx[i];
  os << (idx.size() == 1 ? ",)" : ")");
  return os.str();
}

}  // namespace

bool all_in_bounds(const Tensor& index, int64_t bound, uint16_t* narrow) {
  std::atomic<bool> bad{false};
  visit_index_dtype(index.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    using U = std::make_unsigned_t<I>;
    const U* v = reinterpret_cast<const U*>(index.data_as<I>());
    // int32 with a bound above 2^31: only negative values (>= 2^31 unsigned) are out
    const U b = static_cast<U>(std::min<uint64_t>(static_cast<uint64_t>(bound), uint64_t(1) << (8 * sizeof(I) - 1)));
    parallel_for(index.numel(), int64_t(1) << 16, [&](int64_t begin, int64_t end) {
      const bool out = narrow ? any_out_of_bounds_narrowed(v + begin, narrow + begin, end - begin, b)
                              : any_out_of_bounds(v + begin, end - begin, b);
      if (out) bad.store(true, std::memory_order_relaxed);
    });
  });
  return !bad.load();
}

void fail_first_out_of_bounds(const char* op, const Tensor& index, int64_t bound, const std::string& context) {
  visit_index_dtype(index.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* v = index.data_as<I>();
    for (int64_t i = 0, n = index.numel(); i < n; ++i)
      if (v[i] < 0 || v[i] >= bound)
        fail<IndexError>(op, ": index value ", static_cast<int64_t>(v[i]), " at index position ",
                         position(i, index.shape()), " is out of range [0, ", bound, ") ", context);
  });
  fail<IndexError>(op, ": an index value is out of range [0, ", bound, ") ", context);  // not reached
}

}  // namespace pto::index_bounds
