#include "bprop/dtype.h"

#include "bprop/errors.h"

namespace bprop {

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Bool: return "bool";
  }
  return "?";
}

DType parse_dtype(const std::string& name, const std::string& context) {
  if (name == "float32") return DType::Float32;
  if (name == "float64") return DType::Float64;
  if (name == "int32") return DType::Int32;
  if (name == "bool") return DType::Bool;
  throw ValueError(context + ": unknown dtype '" + name + "' (expected float32, float64, int32 or bool)");
}

DType promote_types(DType a, DType b) {
  auto rank = [](DType d) {
    switch (d) {
      case DType::Bool: return 0;
      case DType::Int32: return 1;
      case DType::Float32: return 2;
      case DType::Float64: return 3;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace bprop
