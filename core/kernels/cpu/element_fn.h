// Elementwise array functions (ElementFn, registry.h) built from one per-element function, and the eager path
// that runs them. An op defines its per-element function once; its eager kernel and graph mode's fused loops
// both call the array function made from it, so their results are the same bits.
#pragma once
#include <cstdint>

#include "bprop/dtype.h"
#include "bprop/registry.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/loop_hints.h"

namespace bprop::cpu {

// kVectorizes: false for functions the compilers cannot vectorise (libm calls such as std::sin), whose loops then
// carry no in-place hint (kernels/cpu/loop_hints.h).

/// out[i] = F()(x[i]) in T (F a captureless lambda: its type alone names the function).
template <typename F, typename T, bool kVectorizes = true>
void unary_array(const ElementOperand* in, void* out, int64_t n) {
  const T* x = static_cast<const T*>(in[0].data);
  T* y = static_cast<T*>(out);
  const F f{};
  if (in[0].scalar) {
    const T v = convert_element<T>(f(x[0]));
    for (int64_t i = 0; i < n; ++i) y[i] = v;
    return;
  }
  elementwise_loop<kVectorizes>(n, [&](int64_t i) { y[i] = convert_element<T>(f(x[i])); });
}

/// out[i] = F()(a[i], b[i]) in T, stored as R (T's own type but for comparisons, whose results are bool).
template <typename F, typename T, bool kVectorizes = true, typename R = T>
void binary_array(const ElementOperand* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0].data);
  const T* b = static_cast<const T*>(in[1].data);
  R* y = static_cast<R*>(out);
  const F f{};
  if (in[0].scalar) {
    const T av = a[0];
    elementwise_loop<kVectorizes>(n, [&](int64_t i) { y[i] = convert_element<R>(f(av, b[i])); });
  } else if (in[1].scalar) {
    const T bv = b[0];
    elementwise_loop<kVectorizes>(n, [&](int64_t i) { y[i] = convert_element<R>(f(a[i], bv)); });
  } else {
    elementwise_loop<kVectorizes>(n, [&](int64_t i) { y[i] = convert_element<R>(f(a[i], b[i])); });
  }
}

/// out[i] = F()(x[i], p) in T, p the P numbers from the op's attributes (operands 1..P, doubles).
template <typename F, typename T, int P, bool kVectorizes = true>
void unary_param_array(const ElementOperand* in, void* out, int64_t n) {
  const T* x = static_cast<const T*>(in[0].data);
  T* y = static_cast<T*>(out);
  double p[P];
  for (int k = 0; k < P; ++k) p[k] = *static_cast<const double*>(in[1 + k].data);
  const F f{};
  if (in[0].scalar) {
    const T v = convert_element<T>(f(x[0], p));
    for (int64_t i = 0; i < n; ++i) y[i] = v;
    return;
  }
  elementwise_loop<kVectorizes>(n, [&](int64_t i) { y[i] = convert_element<T>(f(x[i], p)); });
}

/// float32 through a vectorised array function V (contiguous input); a repeated input through V on one element.
template <void (*V)(const float*, float*, int64_t)>
void unary_vec_array(const ElementOperand* in, void* out, int64_t n) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out);
  if (in[0].scalar) {
    float v;
    V(x, &v, 1);
    for (int64_t i = 0; i < n; ++i) y[i] = v;
    return;
  }
  V(x, y, n);
}

/// True (and done) when the kernel's operands suit `def`'s array function for the output dtype: each of that
/// dtype and of the output's shape or a single element. The work is split over threads as the other
/// elementwise kernels split it.
inline bool run_elementwise(const ElementwiseDef& def, KernelCtx& c) {
  const ElementFn fn = def.fn(c.out_dtype);
  if (!fn || c.inputs.size() > 3) return false;
  const int64_t n = c.out.numel();
  ElementOperand ops[3 + kMaxElementParams];
  const size_t arity = c.inputs.size();
  double params[kMaxElementParams];
  if (def.num_params > 0) def.params(c.attrs, params);
  for (int k = 0; k < def.num_params; ++k) ops[arity + static_cast<size_t>(k)] = {&params[k], true};
  for (size_t i = 0; i < arity; ++i) {
    const Tensor& t = c.inputs[i];
    if (!t.defined() || t.dtype() != c.out_dtype) return false;
    const bool full = t.shape() == c.out_shape;
    if (!full && t.numel() != 1) return false;
    ops[i] = {t.raw_data(), !full};
  }
  const size_t esize = dtype_size(c.out_dtype);
  char* out = static_cast<char*>(c.out.raw_data());
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    ElementOperand chunk[3 + kMaxElementParams];
    for (size_t i = 0; i < arity + static_cast<size_t>(def.num_params); ++i) {
      chunk[i] = ops[i];
      if (!ops[i].scalar) chunk[i].data = static_cast<const char*>(ops[i].data) + b * static_cast<int64_t>(esize);
    }
    fn(chunk, out + b * static_cast<int64_t>(esize), e - b);
  });
  return true;
}

}  // namespace bprop::cpu
