// Element types and NumPy-style promotion.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "bprop/half.h"

namespace bprop {

/// Element types. float16 and bfloat16 are storage formats: ops compute on them in float32 and round once.
enum class DType : uint8_t { Float32, Float64, Int32, Bool, Float16, BFloat16 };

const char* dtype_name(DType dt);
/// Parses "float32" | "float64" | "float16" | "bfloat16" | "int32" | "bool"; throws ValueError naming `context`
/// otherwise.
DType parse_dtype(const std::string& name, const std::string& context = "dtype");
/// Bytes per element (inline: every tensor allocation asks).
inline size_t dtype_size(DType dt) {
  switch (dt) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Bool: return 1;
    case DType::Float16:
    case DType::BFloat16: return 2;
  }
  return 1;
}
inline bool is_half(DType dt) { return dt == DType::Float16 || dt == DType::BFloat16; }
inline bool is_float(DType dt) { return dt == DType::Float32 || dt == DType::Float64 || is_half(dt); }

/// PyTorch's promotion between two tensors: bool < int32 < the half types < float32 < float64, and float16 with
/// bfloat16 gives float32 (neither holds the other).
DType promote_types(DType a, DType b);
/// The float type an op computes in: floats stay, int32 and bool become float32.
inline DType to_float(DType dt) { return is_float(dt) ? dt : DType::Float32; }

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::Float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::Float64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<Half> { static constexpr DType value = DType::Float16; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = DType::BFloat16; };

template <typename T>
inline constexpr bool is_half_type_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool is_floating_type_v = std::is_floating_point_v<T> || is_half_type_v<T>;

/// A kernel met a half dtype it does not compute in (the op registry runs such kernels in float32: see
/// Registry::add); a DTypeError naming it.
[[noreturn]] void half_reached_kernel(DType dt);

/// Calls fn.template operator()<T>() with the C++ type of `dt`, for the kernels' compute types: float32, float64,
/// int32 and bool. (A half dtype is a DTypeError: kernels see float32 in its place.)
template <typename Fn>
decltype(auto) visit_dtype(DType dt, Fn&& fn) {
  switch (dt) {
    case DType::Float32: return fn.template operator()<float>();
    case DType::Float64: return fn.template operator()<double>();
    case DType::Int32: return fn.template operator()<int32_t>();
    case DType::Bool: break;
    case DType::Float16:
    case DType::BFloat16: half_reached_kernel(dt);
  }
  return fn.template operator()<bool>();
}

/// As visit_dtype, over every storage type (Half and BFloat16 too): copies, conversions, creation, printing.
template <typename Fn>
decltype(auto) visit_storage_dtype(DType dt, Fn&& fn) {
  switch (dt) {
    case DType::Float16: return fn.template operator()<Half>();
    case DType::BFloat16: return fn.template operator()<BFloat16>();
    default: return visit_dtype(dt, std::forward<Fn>(fn));
  }
}

/// One element converted to type D. A floating value becomes an int32 by truncation toward zero, saturating at the
/// int32 range, NaN becoming 0 (WebAssembly's trunc_sat, Rust's `as`): C++ leaves out-of-range conversions
/// undefined, and x86 and WebAssembly would answer differently. To and from the half types the value passes
/// through float32, as PyTorch converts (float64 -> float16 rounds twice: to float32, then to float16).
template <typename D, typename S>
constexpr D convert_element(S v) {
  if constexpr (is_half_type_v<S>) {
    return convert_element<D>(static_cast<float>(v));
  } else if constexpr (is_half_type_v<D>) {
    return D(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, int32_t> && std::is_floating_point_v<S>) {
    if (!(v == v)) return 0;
    if (v <= static_cast<S>(-2147483648.0)) return INT32_MIN;
    if (v >= static_cast<S>(2147483647.0)) return INT32_MAX;
    return static_cast<int32_t>(v);
  } else {
    return static_cast<D>(v);
  }
}

/// Like visit_dtype but only for float types (callers check is_float first); a half dtype is a DTypeError.
template <typename Fn>
decltype(auto) visit_float(DType dt, Fn&& fn) {
  if (dt == DType::Float64) return fn.template operator()<double>();
  if (is_half(dt)) half_reached_kernel(dt);
  return fn.template operator()<float>();
}

}  // namespace bprop
