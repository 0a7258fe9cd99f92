// Element types and NumPy-style promotion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace bprop {

enum class DType : uint8_t { Float32, Float64, Int32, Bool };

const char* dtype_name(DType dt);
/// Parses "float32" | "float64" | "int32" | "bool"; throws ValueError naming `context` otherwise.
DType parse_dtype(const std::string& name, const std::string& context = "dtype");
/// Bytes per element (inline: every tensor allocation asks).
inline size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Bool: return 1;
  }
  return 1;
}
inline bool is_float(DType dt) { return dt == DType::Float32 || dt == DType::Float64; }

/// NumPy promotion over our four types: bool < int32 < float32 < float64.
DType promote_types(DType a, DType b);
/// The float type an op computes in: floats stay, int32 and bool become float32.
inline DType to_float(DType dt) { return is_float(dt) ? dt : DType::Float32; }

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };

/// Calls fn.template operator()<T>() with the C++ type of `dt`.
template <typename Fn>
decltype(auto) visit_dtype(DType dt, Fn&& fn) {
  switch (dt) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Int32: return fn.template operator()<int32_t>();
    case DType::Bool: break;
  }
  return fn.template operator()<bool>();
}

/// One element converted to type D. A floating value becomes an int32 by truncation toward zero, saturating at the
/// int32 range, NaN becoming 0 (WebAssembly's trunc_sat, Rust's `as`): C++ leaves out-of-range conversions
/// undefined, and x86 and WebAssembly would answer differently.
template <typename D, typename S>
constexpr D convert_element(S v) {
  if constexpr (std::is_same_v<D, int32_t> && std::is_floating_point_v<S>) {
    if (!(v == v)) return 0;
    if (v <= static_cast<S>(-2147483648.0)) return INT32_MIN;
    if (v >= static_cast<S>(2147483647.0)) return INT32_MAX;
    return static_cast<int32_t>(v);
  } else {
    return static_cast<D>(v);
  }
}

/// Like visit_dtype but only for float types (callers check is_float first).
template <typename Fn>
decltype(auto) visit_float(DType dt, Fn&& fn) {
  if (dt == DType::Float64) return fn.template operator()<double>();
  return fn.template operator()<float>();
}

}  // namespace bprop
