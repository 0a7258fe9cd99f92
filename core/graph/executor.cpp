#include "graph/executor.h"

#include <new>

namespace bprop::graph {
namespace {

// The result's structure with each tensor replaced by the next of `values`, depth first.
Value rebuild(const Value& shape, const std::vector<Tensor>& values, size_t& next) {
  if (shape.is_tensor()) return Value(values[next++]);
  std::vector<Value> items;
  for (const Value& item : shape.items()) items.push_back(rebuild(item, values, next));
  return Value(std::move(items));
}

}  // namespace

Value run(const Graph& g, const std::vector<Tensor>& args) {
  std::vector<Tensor> env(static_cast<size_t>(g.num_values));
  for (size_t i = 0; i < g.inputs.size(); ++i) env[static_cast<size_t>(g.inputs[i])] = args[i];
  for (const auto& [id, t] : g.constants) env[static_cast<size_t>(id)] = t;
  std::vector<bool> is_output(static_cast<size_t>(g.num_values), false);
  for (int v : g.outputs) is_output[static_cast<size_t>(v)] = true;

  std::vector<Tensor> in;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    in.clear();
    for (int v : n.inputs) in.push_back(v < 0 ? Tensor() : env[static_cast<size_t>(v)]);
    Tensor out;
    if (n.op->allocates_output) out = Tensor::empty(n.shape, n.dtype, Backend::CPU, n.op->name);
    KernelCtx ctx{*n.op, in, n.attrs, n.shape, n.dtype, out};
    try {
      n.op->kernels[static_cast<int>(Backend::CPU)](ctx);
    } catch (const std::bad_alloc&) {
      throw MemoryError("For '" + n.op->name + "', out of memory while computing the output of shape " +
                        shape_str(n.shape) + " " + dtype_name(n.dtype));
    }
    env[static_cast<size_t>(n.out)] = std::move(out);
    // What no later node reads goes now (inputs of the call and outputs stay with their owners).
    for (int v : n.inputs) {
      if (v >= 0 && g.last_use[static_cast<size_t>(v)] == static_cast<int>(i) && !is_output[static_cast<size_t>(v)]) {
        env[static_cast<size_t>(v)] = Tensor();
      }
    }
  }
  std::vector<Tensor> results;
  for (int v : g.outputs) results.push_back(env[static_cast<size_t>(v)]);
  size_t next = 0;
  return rebuild(g.output_template, results, next);
}

}  // namespace bprop::graph
