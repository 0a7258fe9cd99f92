// Error kinds of bprop. Every failure is one of these, with a message that starts with the op's name
// ("For 'mul', ...") and names the argument and the shapes/dtypes involved.
#pragma once
#include <stdexcept>
#include <string>

namespace bprop {

enum class ErrorKind { Shape, DType, Value, UnknownOp, Memory };

/// Base of all bprop errors; `kind()` tells which of the five it is.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

class ShapeError : public Error {
 public:
  explicit ShapeError(const std::string& msg) : Error(ErrorKind::Shape, msg) {}
};
class DTypeError : public Error {
 public:
  explicit DTypeError(const std::string& msg) : Error(ErrorKind::DType, msg) {}
};
class ValueError : public Error {
 public:
  explicit ValueError(const std::string& msg) : Error(ErrorKind::Value, msg) {}
};
class UnknownOpError : public Error {
 public:
  explicit UnknownOpError(const std::string& msg) : Error(ErrorKind::UnknownOp, msg) {}
};
/// An allocation failed or would pass this build's size limits (core/include/bprop/limits.h); the message names
/// the op, the shape and dtype, and the bytes asked for. Nothing is left half-made: the next op works.
class MemoryError : public Error {
 public:
  explicit MemoryError(const std::string& msg) : Error(ErrorKind::Memory, msg) {}
};

/// "shape", "dtype", "value", "unknown_op", "memory": the names used by the vector format.
const char* error_kind_name(ErrorKind kind);

/// Throws the error of `kind` with `msg`.
[[noreturn]] void throw_error(ErrorKind kind, const std::string& msg);

}  // namespace bprop
