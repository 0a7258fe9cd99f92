// Constant folding: a node reading only constants is computed once, here, and becomes a constant. Tracing
// already computes work on captured constants eagerly; what is left to fold appears after simplification.
// A result much larger than its inputs (a broadcast of a scalar to a big shape) is left to compute per call,
// so that the graph does not hold it.
#include <algorithm>

#include "graph/executor.h"
#include "graph/passes.h"

namespace bprop::graph {
namespace {
constexpr int64_t kMaxFoldedElements = 1 << 16;
}

bool fold_constants(Graph& g) {
  std::vector<const Tensor*> constant(static_cast<size_t>(g.num_values), nullptr);
  for (const auto& [id, t] : g.constants) {  // (host values only: folding runs CPU kernels)
    if (!t.impl()->is_parameter && t.on_host()) constant[static_cast<size_t>(id)] = &t;
  }
  std::vector<std::pair<int, Tensor>> folded;
  folded.reserve(g.nodes.size());  // pointers into it stay valid
  for (const GraphNode& n : g.nodes) {
    if (n.op->family == "user") continue;
    std::vector<Tensor> in;
    int64_t largest = 0;
    bool all_constant = true;
    for (int v : n.inputs) {
      if (v < 0) {
        in.emplace_back();
        continue;
      }
      const Tensor* c = constant[static_cast<size_t>(v)];
      if (!c) {
        all_constant = false;
        break;
      }
      in.push_back(*c);
      largest = std::max(largest, c->numel());
    }
    if (!all_constant) continue;
    if (shape_numel(n.shape) > std::max(largest, kMaxFoldedElements)) continue;
    folded.emplace_back(n.out, run_node(n, in));
    constant[static_cast<size_t>(n.out)] = &folded.back().second;
  }
  if (folded.empty()) return false;
  std::vector<bool> is_folded(static_cast<size_t>(g.num_values), false);
  for (auto& [id, t] : folded) {
    is_folded[static_cast<size_t>(id)] = true;
    g.constants.emplace_back(id, std::move(t));
  }
  std::erase_if(g.nodes, [&](const GraphNode& n) { return is_folded[static_cast<size_t>(n.out)]; });
  eliminate_dead_code(g);
  g.recompute_uses();
  return true;
}

}  // namespace bprop::graph
