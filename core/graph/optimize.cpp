// The pass pipeline: dead code, simplification, folding and common subexpressions to a fixed point, then
// elementwise fusion.
#include <memory>

#include "graph/executor.h"
#include "graph/fusion.h"
#include "graph/passes.h"

namespace bprop::graph {

void fuse_elementwise(Graph& g) {
  cluster_elementwise(g);
  g.groups.clear();
  for (GraphNode& n : g.nodes) n.group = -1;
  std::vector<std::vector<int>> runs;
  std::vector<int> run;
  auto close = [&] {
    if (run.size() >= 2) runs.push_back(run);
    run.clear();
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (!fusible(g, n)) {
      close();
      continue;
    }
    if (!run.empty()) {
      const GraphNode& head = g.nodes[static_cast<size_t>(run.front())];
      if (head.shape != n.shape || head.dtype != n.dtype) close();
    }
    run.push_back(static_cast<int>(i));
  }
  close();
  for (const std::vector<int>& r : runs) {
    const int id = static_cast<int>(g.groups.size());
    for (int i : r) g.nodes[static_cast<size_t>(i)].group = id;
    g.groups.push_back({r, nullptr});
  }
  // A value must be written out when it is returned or read outside the group computing it.
  std::vector<int> group_of(static_cast<size_t>(g.num_values), -1);
  for (const GraphNode& n : g.nodes) group_of[static_cast<size_t>(n.out)] = n.group;
  std::vector<bool> needed(static_cast<size_t>(g.num_values), false);
  for (int v : g.outputs) needed[static_cast<size_t>(v)] = true;
  for (const auto& u : g.updates) needed[static_cast<size_t>(u.second)] = true;
  for (const GraphNode& n : g.nodes) {
    for (int v : n.inputs) {
      if (v >= 0 && n.group != group_of[static_cast<size_t>(v)]) needed[static_cast<size_t>(v)] = true;
    }
  }
  for (FusedGroup& fg : g.groups) fg.loop = std::make_shared<const FusedLoop>(build_fused_loop(g, fg.nodes, needed));
  g.recompute_uses();
}

void optimize(Graph& g, const OptimizeOptions& options) {
  auto record = [&](const char* pass, int64_t before) {
    const int64_t after = static_cast<int64_t>(g.nodes.size());
    g.passes.push_back({pass, before, after});
  };
  if (options.passes) {
    // Each pass may expose work for another; a handful of rounds reaches the fixed point on real graphs.
    for (int round = 0; round < 16; ++round) {
      bool changed = false;
      int64_t before = static_cast<int64_t>(g.nodes.size());
      if (eliminate_dead_code(g)) record("dead-code", before), changed = true;
      before = static_cast<int64_t>(g.nodes.size());
      if (simplify(g)) record("simplify", before), changed = true;
      before = static_cast<int64_t>(g.nodes.size());
      if (fold_constants(g)) record("fold-constants", before), changed = true;
      before = static_cast<int64_t>(g.nodes.size());
      if (eliminate_common_subexpressions(g)) record("common-subexpressions", before), changed = true;
      if (!changed) break;
    }
  }
  if (options.fusion) {
    // (counted in kernels run: a fused group is one)
    const int64_t before = static_cast<int64_t>(g.nodes.size());
    fuse_elementwise(g);
    int64_t kernels = static_cast<int64_t>(g.groups.size());
    for (const GraphNode& n : g.nodes) kernels += n.group < 0 ? 1 : 0;
    g.passes.push_back({"fuse-elementwise", before, kernels});
  }
  prepare_program(g);
}

}  // namespace bprop::graph
