// Errors of docs/errors.md. Every message starts with the op name and names the parameter,
// the offending value and what was allowed.
#pragma once
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

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

// Memory for a tensor could not be allocated: a std::bad_alloc (code that catches that still
// does, and Python sees a MemoryError) whose message says how many bytes (0: unknown) and, once
// an op's call passed it on (with_op_named), which op asked.
class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(size_t bytes, std::string op = {})
      : bytes_(bytes),
        op_(std::move(op)),
        message_((op_.empty() ? "" : op_ + ": ") + "out of memory" +
                 (bytes ? ": cannot allocate " + std::to_string(bytes) + " bytes" : std::string())) {}
  const char* what() const noexcept override { return message_.c_str(); }
  size_t bytes() const { return bytes_; }
  const std::string& op() const { return op_; }

 private:
  size_t bytes_;
  std::string op_;
  std::string message_;
};

// f(), with a failed allocation inside it reported as an OutOfMemory naming `op` (unless an op
// inside f named itself already).
template <class F>
decltype(auto) with_op_named(const std::string& op, F&& f) {
  try {
    return f();
  } catch (const OutOfMemory& e) {
    if (!e.op().empty()) throw;
    throw OutOfMemory(e.bytes(), op);
  } catch (const std::bad_alloc&) {
    throw OutOfMemory(0, op);
  }
}

// Builds a message from streamable parts: fail<ArgumentError>("op: ", x, " must be ...").
template <class E, class... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw E(os.str());
}

}  // namespace pto
