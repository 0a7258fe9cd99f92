// Dead-code elimination: a node is live when an output, or a live node, reads its value.
#include <algorithm>

#include "graph/passes.h"

namespace bprop::graph {

bool eliminate_dead_code(Graph& g) {
  std::vector<bool> live(static_cast<size_t>(g.num_values), false);
  for (int v : g.outputs) live[static_cast<size_t>(v)] = true;
  for (const auto& u : g.updates) live[static_cast<size_t>(u.second)] = true;
  std::vector<GraphNode> kept;
  kept.reserve(g.nodes.size());
  bool changed = false;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    GraphNode& n = g.nodes[i];
    if (!live[static_cast<size_t>(n.out)]) {
      changed = true;
      continue;
    }
    for (int v : n.inputs) {
      if (v >= 0) live[static_cast<size_t>(v)] = true;
    }
    kept.push_back(std::move(n));
  }
  std::reverse(kept.begin(), kept.end());
  g.nodes = std::move(kept);
  const size_t constants = g.constants.size();
  std::erase_if(g.constants, [&](const auto& c) { return !live[static_cast<size_t>(c.first)]; });
  changed = changed || g.constants.size() != constants;
  if (changed) g.recompute_uses();
  return changed;
}

void apply_remap(Graph& g, const std::vector<int>& remap) {
  auto at = [&](int v) { return v < 0 ? v : remap[static_cast<size_t>(v)]; };
  for (GraphNode& n : g.nodes) {
    for (int& v : n.inputs) v = at(v);
  }
  for (int& v : g.outputs) v = at(v);
  for (auto& u : g.updates) u.second = at(u.second);
}

}  // namespace bprop::graph
