// A value read from or written to bytes of any alignment (std::memcpy, one plain move once inlined).
#pragma once
#include <cstring>

namespace pto {

template <class T>
inline T load_unaligned(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
inline void store_unaligned(void* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace pto
