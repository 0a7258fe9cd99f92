#include "ops/composite.h"

#include "autodiff/functional.h"
#include "autodiff/tape.h"
#include "bprop/ops.h"

namespace bprop::opdef {

Tensor eval_composite(const Decomposition& decomp, const std::vector<Tensor>& inputs, const Attrs& attrs,
                      DType dtype) {
  Tensor out;
  {
    autodiff::SuspendRecording unrecorded;
    out = decomp(inputs, attrs);
    if (out.dtype() != dtype) out = ops::cast(out, dtype);
  }
  // A decomposition may end in a view (reshape); the op's output must own its buffer.
  for (const Tensor& in : inputs) {
    if (in.defined() && in.impl()->storage == out.impl()->storage) return out.clone();
  }
  return out.detach();
}

KernelFn composite_kernel(Decomposition decomp) {
  return [decomp = std::move(decomp)](KernelCtx& c) { c.out = eval_composite(decomp, c.inputs, c.attrs, c.out_dtype); };
}

BpropFn composite_bprop(std::string op_name, Decomposition decomp) {
  return [name = std::move(op_name), decomp = std::move(decomp)](const BpropCtx& c) {
    std::vector<int> positions;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (c.needs(i) && c.inputs[i].defined() && is_float(c.inputs[i].dtype())) {
        positions.push_back(static_cast<int>(i));
      }
    }
    std::vector<Tensor> grads(c.inputs.size());
    if (positions.empty()) return grads;
    const Attrs& attrs = c.attrs;
    const Fn fn = [&decomp, &attrs](const std::vector<Tensor>& in) -> Value { return decomp(in, attrs); };
    // d out / d inputs . dout, through the decomposition rerun at a level of its own.
    const autodiff::Pullback pb = autodiff::forward_for_vjp(fn, c.inputs, positions, name.c_str());
    const std::vector<Tensor> g = pb(c.dout);
    for (size_t k = 0; k < positions.size(); ++k) grads[static_cast<size_t>(positions[k])] = g[k];
    return grads;
  };
}

}  // namespace bprop::opdef
