// The pass pipeline: dead code, simplification, folding and common subexpressions to a fixed point, then
// elementwise fusion.
#include <algorithm>
#include <memory>

#include "graph/executor.h"
#include "graph/fusion.h"
#include "graph/passes.h"

namespace bprop::graph {

namespace {

// A sum of every element of a value a run computes (a loss's sum, say) joins the run: it moves up to right after
// the run's last node (nothing in between can read it: it comes later) and adds up the value's tiles as they are
// computed, so the value need not be written out for it. Keeps `runs` the node indices of the new order.
void take_in_sums(Graph& g, std::vector<std::vector<int>>& runs) {
  std::vector<int> run_of(static_cast<size_t>(g.num_values), -1);  // the run computing each value
  for (size_t r = 0; r < runs.size(); ++r) {
    for (int i : runs[r]) run_of[static_cast<size_t>(g.nodes[static_cast<size_t>(i)].out)] = static_cast<int>(r);
  }
  std::vector<std::vector<int>> taken(runs.size());  // per run, the sums it takes in (old indices, in order)
  std::vector<bool> moved(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (n.inputs.size() != 1 || n.inputs[0] < 0) continue;
    const int r = run_of[static_cast<size_t>(n.inputs[0])];
    if (r < 0) continue;
    const GraphNode& head = g.nodes[static_cast<size_t>(runs[static_cast<size_t>(r)].front())];
    if (!fusible_sum(g, n, head.shape) || head.dtype != DType::Float32) continue;
    taken[static_cast<size_t>(r)].push_back(static_cast<int>(i));
    moved[i] = true;
  }
  if (std::none_of(moved.begin(), moved.end(), [](bool m) { return m; })) return;
  std::vector<int> run_ending(g.nodes.size(), -1);
  for (size_t r = 0; r < runs.size(); ++r) run_ending[static_cast<size_t>(runs[r].back())] = static_cast<int>(r);
  std::vector<int> new_index(g.nodes.size(), -1);
  std::vector<GraphNode> order;
  order.reserve(g.nodes.size());
  auto emit = [&](size_t i) {
    new_index[i] = static_cast<int>(order.size());
    order.push_back(std::move(g.nodes[i]));
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (moved[i]) continue;
    emit(i);
    if (const int r = run_ending[i]; r >= 0) {
      for (int j : taken[static_cast<size_t>(r)]) emit(static_cast<size_t>(j));
    }
  }
  g.nodes = std::move(order);
  for (size_t r = 0; r < runs.size(); ++r) {
    for (int& i : runs[r]) i = new_index[static_cast<size_t>(i)];
    for (int j : taken[r]) runs[r].push_back(new_index[static_cast<size_t>(j)]);
  }
}

}  // namespace

void fuse_elementwise(Graph& g) {
  cluster_elementwise(g);
  g.groups.clear();
  for (GraphNode& n : g.nodes) n.group = -1;
  std::vector<std::vector<int>> runs;
  std::vector<int> run;
  auto close = [&] {
    if (!run.empty()) runs.push_back(run);
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
  take_in_sums(g, runs);
  std::erase_if(runs, [](const std::vector<int>& r) { return r.size() < 2; });  // one node: its own kernel
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
