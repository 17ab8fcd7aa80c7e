// Errors of docs/errors.md. Every message starts with the op name and names the parameter,
// the offending value and what was allowed.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace pto {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A dtype not allowed, mismatched dtypes, a non-integer where an integer is required.
class DTypeError : public Error {
 public:
  using Error::Error;
};
// Ranks, shapes, lengths, masks, strides, reduce names, scalar values, platform names.
class ArgumentError : public Error {
 public:
  using Error::Error;
};
// A dim outside [-rank, rank), an index value out of range, a shrink index out of range.
class IndexError : public Error {
 public:
  using Error::Error;
};
// Tile shape / view / UB rules (docs/kernel_model.md).
class TileError : public Error {
 public:
  using Error::Error;
};
// An op the current platform does not offer.
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

// Builds a message from streamable parts: fail<ArgumentError>("op: ", x, " must be ...").
template <class E, class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw E(os.str());
}

}  // namespace pto
