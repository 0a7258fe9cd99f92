#include "bprop/errors.h"

namespace bprop {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Shape: return "shape";
    case ErrorKind::DType: return "dtype";
    case ErrorKind::Value: return "value";
    case ErrorKind::UnknownOp: return "unknown_op";
    case ErrorKind::Memory: return "memory";
  }
  return "value";
}

void throw_error(ErrorKind kind, const std::string& msg) {
  switch (kind) {
    case ErrorKind::Shape: throw ShapeError(msg);
    case ErrorKind::DType: throw DTypeError(msg);
    case ErrorKind::UnknownOp: throw UnknownOpError(msg);
    case ErrorKind::Memory: throw MemoryError(msg);
    case ErrorKind::Value: break;
  }
  throw ValueError(msg);
}

}  // namespace bprop
