// Shape and dtype rules and bprop helpers shared by the op files.
#pragma once
#include <string>
#include <vector>

#include "bprop/limits.h"
#include "bprop/ops.h"
#include "bprop/registry.h"
#include "kernels/cpu/element_fn.h"
#include "kernels/cpu/elementwise.h"

namespace bprop::opdef {

// ---- shape rules ----
Shape same_shape(const InferCtx& c);       // output shaped like input 0
Shape broadcast_shape(const InferCtx& c);  // NumPy broadcast of all defined inputs

// ---- dtype rules ----
DType same_dtype(const InferCtx& c);      // input 0's dtype
DType float_dtype(const InferCtx& c);     // input 0's dtype made float (int32/bool -> float32)
DType promote_dtype(const InferCtx& c);   // NumPy promotion of the inputs (bool+bool -> int32 for arithmetic)
DType numeric_dtype(const InferCtx& c);   // input 0's dtype, bool -> int32
DType bool_dtype(const InferCtx& c);
DType float_inputs_dtype(const InferCtx& c);  // every present input must be float; their promoted type

/// Fails unless input i is float (for ops that only make sense on floats, e.g. losses).
void require_float(const InferCtx& c, size_t i);
/// Fails unless input i is int32 (indices, labels).
void require_int(const InferCtx& c, size_t i);

/// The axes an "axis" attribute names, normalised to [0, rank), sorted, unique (null = all).
std::vector<int64_t> reduce_axes(const InferCtx& c, const AttrValue& axis, int64_t rank);
std::vector<int64_t> reduce_axes(const std::string& op, const AttrValue& axis, int64_t rank);

// ---- kernels ----
/// An op's eager kernel and, for elementwise ops without attributes, the array functions it runs.
struct OpImpl {
  OpImpl(KernelFn k) : kernel(std::move(k)) {}  // NOLINT: an op with no array functions
  OpImpl(KernelFn k, ElementwiseDef e) : kernel(std::move(k)), elementwise(e) {}
  KernelFn kernel;
  ElementwiseDef elementwise;
};
/// The array functions of `def` where the operands suit them (cpu::run_elementwise), `general` otherwise.
inline OpImpl with_elementwise(ElementwiseDef def, KernelFn general) {
  return {[def, general = std::move(general)](KernelCtx& c) {
            if (!cpu::run_elementwise(def, c)) general(c);
          },
          def};
}

/// A unary op with attributes: f(v, p) (captureless) with the P numbers `params` reads from the attributes, as the
/// op's array functions (float32, float64) and as the kernel for the other dtypes, so the two give the same bits.
/// (kVectorizes: false when f calls libm, cpu::elementwise_loop)
template <int P, bool kVectorizes = true, typename F>
OpImpl param_kernel(F, void (*params)(const Attrs&, double*)) {
  static_assert(P >= 1 && P <= kMaxElementParams);
  const ElementwiseDef def{&cpu::unary_param_array<F, float, P, kVectorizes>,
                           &cpu::unary_param_array<F, double, P, kVectorizes>, P, params};
  return with_elementwise(def, [params](KernelCtx& c) {
    double p[P];
    params(c.attrs, p);
    const Tensor x = cpu::as_dtype(c.inputs[0], c.out_dtype);
    const F f{};
    visit_dtype(c.out_dtype, [&]<typename T>() {
      if constexpr (!std::is_same_v<T, bool>) {
        cpu::map_unary(x.data<T>(), c.out.data<T>(), x.numel(), [&](T v) { return convert_element<T>(f(v, p)); });
      }
    });
  });
}

// ---- bprop helpers ----
/// One gradient per input, each summed down to its input's shape (undoing broadcasting); undefined kept.
std::vector<Tensor> sum_to_inputs(const BpropCtx& c, std::vector<Tensor> grads);
/// A 0-d constant of x's dtype.
inline Tensor like(double v, const Tensor& x) { return scalar(v, is_float(x.dtype()) ? x.dtype() : DType::Float32); }
/// A 0/1 float tensor of `mask` in x's dtype.
inline Tensor mask_as(const Tensor& mask, const Tensor& x) { return ops::cast(mask, x.dtype()); }

}  // namespace bprop::opdef
