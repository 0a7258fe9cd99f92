// Exports what autodiff did as data: the forward ops recorded for a function and, step by step, the backward
// operators their bprops ran — for teaching tools and debugging (format "bprop-graph/1", docs/graph.md).
#pragma once
#include <string>
#include <vector>

#include "bprop/grad.h"

namespace bprop {

struct GraphExportOptions {
  std::vector<std::string> input_names;  // defaults: x0, x1, ...
  int max_values = 64;                   // values stored per tensor (the first ones, row-major)
};

/// Runs fn on inputs, differentiates its output (ones as cotangent) w.r.t. every float input, and returns the
/// recorded forward graph and backward steps as JSON text.
std::string export_grad_graph(const Fn& fn, const std::vector<Tensor>& inputs, const GraphExportOptions& opts = {});

}  // namespace bprop
