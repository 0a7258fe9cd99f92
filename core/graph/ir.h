// The graph a traced function becomes: a typed SSA list of values (the arguments, constants and live
// Parameters, then one value per node), the nodes in execution order, and the outputs. This is the IR the tracer
// writes and the passes rewrite; compile() (graph/executor.h) makes the program that runs it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "bprop/registry.h"
#include "bprop/value.h"

namespace bprop::graph {

struct FusedLoop;  // graph/fusion.h

struct ValueType {
  Shape shape;
  DType dtype = DType::Float32;
};

struct GraphNode {
  const OpDef* op = nullptr;
  Attrs attrs;              // normalised: the replay passes them to the kernel as they are
  std::vector<int> inputs;  // value ids
  int out = -1;             // value id
  Shape shape;
  DType dtype = DType::Float32;
  int group = -1;  // the fused group this node runs in (-1: its own kernel)
  std::string where;  // the source location that created it ("train.js:12:7"), when the tracer knew one
};

/// Consecutive elementwise nodes of one shape and dtype run as one loop over the data (graph/fusion.h).
struct FusedGroup {
  std::vector<int> nodes;  // indices into Graph::nodes, consecutive, in order
  std::shared_ptr<const FusedLoop> loop;
};

/// Nodes before and after one run of a pass.
struct PassRecord {
  std::string pass;
  int64_t before = 0, after = 0;
};

struct Graph {
  int num_values = 0;
  std::vector<int> inputs;  // the arguments' value ids, in argument order
  /// Tensors the function captured: values computed while tracing, and Parameters, which are read at every
  /// replay (they share storage with the Parameter, so an in-place update is seen).
  std::vector<std::pair<int, Tensor>> constants;
  bool device_constants = false;  // a constant (a Parameter the function reads) lives on a device
  std::vector<GraphNode> nodes;
  Value output_template;  // the function's result with each tensor standing for its value (outputs below)
  std::vector<int> outputs;  // the value id of each tensor of output_template, depth first
  /// Parameters the function assigns (state such as BatchNorm's moving statistics, or a training step's new
  /// weights): after the nodes, each Parameter's storage receives the value (in trace order).
  std::vector<std::pair<Tensor, int>> updates;
  std::vector<int> last_use;  // per value: the index of the last node reading it (-1: none)
  std::vector<ValueType> types;  // per value id
  std::vector<FusedGroup> groups;
  std::vector<PassRecord> passes;  // what optimisation did, in order

  /// One line per value: "%3 = mul(%1, %2) : (2, 3) float32", arguments and constants first; fused groups
  /// as "fused #k {" ... "}" around their nodes.
  std::string to_text() const;
  /// The graph as JSON (format "bprop-jit-graph/1", docs/graph.md): values, nodes with their fused group, groups,
  /// Parameter updates, outputs and the passes' node counts.
  std::string to_json() const;
  /// Recomputes last_use after the node list changed (a group's values live to its last node).
  void recompute_uses();
  /// The constant tensor of value `id`, or null when it is not a constant (Parameters are not constants here).
  const Tensor* constant(int id) const;
  bool is_argument(int id) const;
};

/// "axis: 1, keepdims: false"
std::string attrs_text(const Attrs& attrs);

}  // namespace bprop::graph
