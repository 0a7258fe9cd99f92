#include "bprop/dtype.h"

#include "bprop/errors.h"
#include "tensor/half_simd.h"

namespace bprop {

const char* dtype_name(DType dt) {
  switch (dt) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
  }
  return "?";
}

DType parse_dtype(const std::string& name, const std::string& context) {
  if (name == "float32") return DType::Float32;
  if (name == "float64") return DType::Float64;
  if (name == "int32") return DType::Int32;
  if (name == "bool") return DType::Bool;
  if (name == "float16") return DType::Float16;
  if (name == "bfloat16") return DType::BFloat16;
  throw ValueError(context + ": unknown dtype '" + name +
                   "' (expected float32, float64, float16, bfloat16, int32 or bool)");
}

DType promote_types(DType a, DType b) {
  if (is_half(a) && is_half(b) && a != b) return DType::Float32;
  auto rank = [](DType d) {
    switch (d) {
      case DType::Bool: return 0;
      case DType::Int32: return 1;
      case DType::Float16:
      case DType::BFloat16: return 2;
      case DType::Float32: return 3;
      case DType::Float64: return 4;
    }
    return 0;
  };
  return rank(a) >= rank(b) ? a : b;
}

void half_reached_kernel(DType dt) {
  throw DTypeError(std::string("a kernel was given ") + dtype_name(dt) +
                   " data it does not compute in (half-precision values are computed in float32)");
}

void half_to_float(const Half* in, float* out, int64_t n) {
  half_to_float_simd(in, out, n);  // the same bits; F16C where the CPU has it
}
void float_to_half(const float* in, Half* out, int64_t n) {
  float_to_half_simd(in, out, n);
}
void bfloat16_to_float(const BFloat16* in, float* out, int64_t n) {
  bfloat16_to_float_simd(in, out, n);  // exact; AVX2 / SIMD128 where present
}
void float_to_bfloat16(const float* in, BFloat16* out, int64_t n) {
  float_to_bfloat16_simd(in, out, n);  // the same bits; AVX512-BF16 where the CPU has it
}

}  // namespace bprop
