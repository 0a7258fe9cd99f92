// Replaying a traced graph on concrete tensors: each node's CPU kernel, called directly with the shape, dtype
// and attributes the trace recorded (no inference, no attribute parsing, no tape); a value is released after
// the last node that reads it.
#pragma once
#include "graph/ir.h"

namespace bprop::graph {

/// The graph's result for these arguments (shaped and typed as the trace's); errors name the op.
Value run(const Graph& g, const std::vector<Tensor>& args);

}  // namespace bprop::graph
