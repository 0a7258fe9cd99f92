// Scheduling for fusion: elementwise nodes move up past other nodes they do not depend on, so that a run of one
// shape is not cut in two by, say, the sum of a loss sitting between the forward's elementwise chain and the
// backward's. (W5's value and gradient was two loops, with the tanh and sigmoid of the forward written out and
// read back by the backward; with the sum moved after the backward it is one loop, and those stay in cache.)
//
// One pass in order: when a node that cannot fuse follows a fusible one, it is held back, and the fusible nodes
// after it that continue the run (same shape and dtype) and read nothing held back go first. The first node that
// cannot go first releases the held-back nodes, in their order. Nodes that cannot fuse keep their order among
// themselves (random draws, host calls), and no node moves when nothing can join a run.
#include "graph/fusion.h"
#include "graph/passes.h"

namespace bprop::graph {

bool cluster_elementwise(Graph& g) {
  const size_t count = g.nodes.size();
  std::vector<GraphNode> order;
  order.reserve(count);
  std::vector<size_t> held;                                           // node indices, in order
  std::vector<bool> held_value(static_cast<size_t>(g.num_values), false);
  // The last fusible node placed, while its run is open (`order` never reallocates: reserved for every node).
  const GraphNode* run = nullptr;
  bool changed = false;
  auto reads_held = [&](const GraphNode& n) {
    for (int v : n.inputs) {
      if (v >= 0 && held_value[static_cast<size_t>(v)]) return true;
    }
    return false;
  };
  auto release = [&] {
    for (size_t h : held) {
      held_value[static_cast<size_t>(g.nodes[h].out)] = false;
      order.push_back(std::move(g.nodes[h]));
    }
    held.clear();
    run = nullptr;
  };
  for (size_t i = 0; i < count;) {
    GraphNode& n = g.nodes[i];
    const bool fuses = fusible(g, n);
    const bool continues_run = fuses && run && run->shape == n.shape && run->dtype == n.dtype;
    if (!fuses && run) {  // hold it back while the run may go on
      held.push_back(i++);
      held_value[static_cast<size_t>(n.out)] = true;
      continue;
    }
    if (!held.empty()) {
      if (!continues_run || reads_held(n)) {
        release();
        continue;  // n again, after the held-back nodes
      }
      changed = true;
    }
    if (!fuses) run = nullptr;
    order.push_back(std::move(n));
    if (fuses) run = &order.back();
    ++i;
  }
  release();
  g.nodes = std::move(order);
  if (changed) g.recompute_uses();
  return changed;
}

}  // namespace bprop::graph
