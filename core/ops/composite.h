// Composite ops: an op defined by a decomposition into other ops. The forward kernel evaluates the
// decomposition with recording suspended (one node on the tape, not dozens), and the bprop differentiates
// the same decomposition: it reruns it under a private grad level and pulls dout back through it. The
// pullback's ops are recorded at every outer level, so the gradient differentiates again to any order.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "bprop/registry.h"

namespace bprop::opdef {

/// The op's output as a function of its inputs (undefined where an optional input is omitted) and its
/// normalised attributes, written with public ops.
using Decomposition = std::function<Tensor(const std::vector<Tensor>& inputs, const Attrs& attrs)>;

/// A CPU kernel that evaluates `decomp` unrecorded. Ops using it set `allocates_output = false`.
KernelFn composite_kernel(Decomposition decomp);

/// The output of `decomp`, evaluated unrecorded and converted to `dtype` (for kernels that also have a fast
/// path): a fresh tensor that shares storage with none of the inputs.
Tensor eval_composite(const Decomposition& decomp, const std::vector<Tensor>& inputs, const Attrs& attrs,
                      DType dtype);

/// A bprop that returns v . d decomp / d input for every float input whose gradient is needed.
BpropFn composite_bprop(std::string op_name, Decomposition decomp);

}  // namespace bprop::opdef
