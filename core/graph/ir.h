// The graph a traced function becomes: a typed SSA list of values (the arguments, constants and live
// Parameters, then one value per node), the nodes in execution order, and the outputs.
#pragma once
#include <string>
#include <vector>

#include "bprop/registry.h"
#include "bprop/value.h"

namespace bprop::graph {

struct GraphNode {
  const OpDef* op = nullptr;
  Attrs attrs;              // normalised: the replay passes them to the kernel as they are
  std::vector<int> inputs;  // value ids
  int out = -1;             // value id
  Shape shape;
  DType dtype = DType::Float32;
};

struct Graph {
  int num_values = 0;
  std::vector<int> inputs;  // the arguments' value ids, in argument order
  /// Tensors the function captured: values computed while tracing, and Parameters, which are read at every
  /// replay (they share storage with the Parameter, so an in-place update is seen).
  std::vector<std::pair<int, Tensor>> constants;
  std::vector<GraphNode> nodes;
  Value output_template;  // the function's result with each tensor standing for its value (outputs below)
  std::vector<int> outputs;  // the value id of each tensor of output_template, depth first
  std::vector<int> last_use;  // per value: the index of the last node reading it (-1: none)

  /// One line per value: "%3 = mul(%1, %2) : (2, 3) float32", arguments and constants first.
  std::string to_text() const;
};

}  // namespace bprop::graph
