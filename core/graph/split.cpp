#include "graph/split.h"

#include <algorithm>

#include "graph/executor.h"
#include "graph/passes.h"

namespace bprop::graph {
namespace {

// A result structure of n tensors (the replay fills it in order).
Value flat_template(size_t n) {
  std::vector<Value> items;
  for (size_t i = 0; i < n; ++i) items.emplace_back(Tensor());
  return Value(std::move(items));
}

// A part of `joint`: its value ids, types and the constants its nodes or outputs read.
std::shared_ptr<const Executable> part(const Graph& joint, std::vector<GraphNode> nodes, std::vector<int> inputs,
                                      std::vector<int> outputs, Device device, bool fuse) {
  auto g = std::make_shared<Graph>();
  g->num_values = joint.num_values;
  g->types = joint.types;
  g->inputs = std::move(inputs);
  g->nodes = std::move(nodes);
  g->outputs = std::move(outputs);
  g->output_template = flat_template(g->outputs.size());
  std::vector<bool> read(static_cast<size_t>(joint.num_values), false);
  for (const GraphNode& n : g->nodes) {
    for (int v : n.inputs) {
      if (v >= 0) read[static_cast<size_t>(v)] = true;
    }
  }
  for (int v : g->outputs) read[static_cast<size_t>(v)] = true;
  for (int v : g->inputs) read[static_cast<size_t>(v)] = false;  // (an input is never also a constant)
  for (const auto& [id, t] : joint.constants) {
    if (read[static_cast<size_t>(id)]) {
      g->constants.emplace_back(id, t);
      g->device_constants = g->device_constants || t.on_device();
    }
  }
  g->recompute_uses();
  OptimizeOptions options;
  options.passes = false;  // (the joint graph was optimised whole)
  options.fusion = fuse && device.is_cpu();
  optimize(*g, options);
  return compile(std::move(g), device);
}

}  // namespace

SplitGraphs split_at_cotangent(const Graph& joint, Device device, bool fuse) {
  const size_t nv = static_cast<size_t>(joint.num_values);
  std::vector<bool> late(nv, false);  // depends on the cotangent
  late[static_cast<size_t>(joint.inputs.back())] = true;
  std::vector<bool> early_value(nv, false);  // computed by a forward-part node
  std::vector<GraphNode> forward_nodes, backward_nodes;
  for (const GraphNode& n : joint.nodes) {
    const bool reads_late = std::any_of(n.inputs.begin(), n.inputs.end(), [&](int v) {
      return v >= 0 && late[static_cast<size_t>(v)];
    });
    late[static_cast<size_t>(n.out)] = reads_late;
    early_value[static_cast<size_t>(n.out)] = !reads_late;
    (reads_late ? backward_nodes : forward_nodes).push_back(n);
  }
  // The residuals: forward-part values that the backward part reads or returns, in first-use order.
  std::vector<int> residuals;
  std::vector<bool> taken(nv, false);
  auto keep = [&](int v) {
    if (v >= 0 && early_value[static_cast<size_t>(v)] && !taken[static_cast<size_t>(v)]) {
      taken[static_cast<size_t>(v)] = true;
      residuals.push_back(v);
    }
  };
  for (const GraphNode& n : backward_nodes) {
    for (int v : n.inputs) keep(v);
  }
  for (size_t i = 1; i < joint.outputs.size(); ++i) keep(joint.outputs[i]);

  std::vector<int> args(joint.inputs.begin(), joint.inputs.end() - 1);
  std::vector<int> forward_outputs{joint.outputs[0]};
  forward_outputs.insert(forward_outputs.end(), residuals.begin(), residuals.end());
  std::vector<int> backward_inputs = joint.inputs;
  backward_inputs.insert(backward_inputs.end(), residuals.begin(), residuals.end());
  std::vector<int> grads(joint.outputs.begin() + 1, joint.outputs.end());

  SplitGraphs out;
  out.residuals = residuals.size();
  out.forward = part(joint, std::move(forward_nodes), std::move(args), std::move(forward_outputs), device, fuse);
  out.backward = part(joint, std::move(backward_nodes), std::move(backward_inputs), std::move(grads), device, fuse);
  return out;
}

}  // namespace bprop::graph
