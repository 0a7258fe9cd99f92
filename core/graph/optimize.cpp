// The pass pipeline: the rewrite passes (a table: dead code, simplification, folding, common subexpressions) to a
// fixed point, then elementwise fusion; the IR verifier between passes, and dumps by pass name.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

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

const std::vector<Pass>& rewrite_passes() {
  static const std::vector<Pass> passes = {
      {"dead-code", eliminate_dead_code},
      {"simplify", simplify},
      {"fold-constants", fold_constants},
      {"common-subexpressions", eliminate_common_subexpressions},
  };
  return passes;
}

bool OptimizeOptions::verify_by_default() {
  static const bool on = std::getenv("BPROP_JIT_VERIFY") != nullptr;
  return on;
}

void verify(const Graph& g, const std::string& after) {
  const auto fail = [&](const std::string& what) {
    throw std::logic_error("jit IR invalid after pass '" + after + "': " + what);
  };
  if (static_cast<int>(g.types.size()) != g.num_values) {
    fail(std::to_string(g.types.size()) + " value types for " + std::to_string(g.num_values) + " values");
  }
  std::vector<char> defined(static_cast<size_t>(g.num_values), 0);
  const auto define = [&](int v, const std::string& by) {
    if (v < 0 || v >= g.num_values) fail(by + " defines %" + std::to_string(v) + ", not a value of the graph");
    if (defined[static_cast<size_t>(v)]) fail(by + " defines %" + std::to_string(v) + " a second time");
    defined[static_cast<size_t>(v)] = 1;
  };
  const auto read = [&](int v, const std::string& by) {
    if (v >= g.num_values || (v >= 0 && !defined[static_cast<size_t>(v)])) {
      fail(by + " reads %" + std::to_string(v) + " before it is defined");
    }
  };
  for (int v : g.inputs) define(v, "an argument");
  for (const auto& [v, t] : g.constants) define(v, "a constant");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    const std::string by = "node " + std::to_string(i) + " (" + (n.op ? n.op->name : std::string("no op")) + ")";
    if (!n.op) fail(by + " has no op");
    for (int v : n.inputs) read(v, by);
    define(n.out, by);
  }
  for (int v : g.outputs) read(v, "an output");
  for (const auto& u : g.updates) read(u.second, "a Parameter update");
}

namespace {

// BPROP_JIT_DUMP's pass names ("all": every pass).
bool dumps(const char* pass) {
  const char* env = std::getenv("BPROP_JIT_DUMP");
  if (!env) return false;
  std::string list = ",", needle = ",";  // (appended, not concatenated: GCC 12 misreads the latter, -Wrestrict)
  list.append(env).append(",");
  needle.append(pass).append(",");
  return list == ",all," || list.find(needle) != std::string::npos;
}

}  // namespace

void optimize(Graph& g, const OptimizeOptions& options) {
  const auto after = [&](const char* pass, int64_t before, int64_t after_count) {
    g.passes.push_back({pass, before, after_count});
    if (options.verify) verify(g, pass);
    if (dumps(pass)) std::fprintf(stderr, "bprop: jit graph after %s:\n%s\n", pass, g.to_text().c_str());
  };
  if (options.verify) verify(g, "trace");
  if (options.passes) {
    // Each pass may expose work for another; a handful of rounds reaches the fixed point on real graphs.
    for (int round = 0; round < 16; ++round) {
      bool changed = false;
      for (const Pass& pass : rewrite_passes()) {
        if (std::find(options.disabled.begin(), options.disabled.end(), pass.name) != options.disabled.end()) continue;
        const int64_t before = static_cast<int64_t>(g.nodes.size());
        if (!pass.run(g)) continue;
        after(pass.name, before, static_cast<int64_t>(g.nodes.size()));
        changed = true;
      }
      if (!changed) break;
    }
  }
  if (options.fusion) {
    // (counted in kernels run: a fused group is one)
    const int64_t before = static_cast<int64_t>(g.nodes.size());
    fuse_elementwise(g);
    int64_t kernels = static_cast<int64_t>(g.groups.size());
    for (const GraphNode& n : g.nodes) kernels += n.group < 0 ? 1 : 0;
    after("fuse-elementwise", before, kernels);
  }
}

}  // namespace bprop::graph
