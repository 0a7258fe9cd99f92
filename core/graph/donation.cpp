// Buffer donation: a training step's new weights computed straight into the Parameters' storage (MindSpore and JAX
// donate the old buffers likewise), instead of into a buffer that is copied in once every node has run.
#include <algorithm>

#include "graph/executor.h"
#include "graph/fusion.h"

namespace bprop::graph {
namespace {

// The values an instruction reads.
std::vector<int> reads(const Graph& g, const Instruction& ins) {
  if (ins.group >= 0) return g.groups[static_cast<size_t>(ins.group)].loop->outside;
  std::vector<int> out;
  for (int v : g.nodes[static_cast<size_t>(ins.node)].inputs) {
    if (v >= 0) out.push_back(v);
  }
  return out;
}

bool can_donate(const Executable& exe, size_t u, const std::vector<int>& producer) {
  const Graph& g = *exe.graph;
  const Tensor& param = g.updates[u].first;
  const int value = g.updates[u].second;
  const Storage* storage = param.impl()->storage.get();
  for (size_t k = 0; k < g.updates.size(); ++k) {
    if (k != u && g.updates[k].first.impl()->storage.get() == storage) return false;  // assigned twice
  }
  if (std::find(g.outputs.begin(), g.outputs.end(), value) != g.outputs.end()) return false;  // returned too
  const int at = producer[static_cast<size_t>(value)];
  if (at < 0) return false;  // an argument or a constant
  const ValueType& type = g.types[static_cast<size_t>(value)];
  if (type.shape != param.shape() || type.dtype != param.dtype()) return false;
  // The Parameter's values in the graph, and the views of them (ops that do not allocate their output).
  std::vector<bool> alias(static_cast<size_t>(g.num_values), false);
  int own = -1;  // the Parameter's own value id
  for (const auto& [id, t] : g.constants) {
    if (t.impl()->storage.get() == storage) {
      alias[static_cast<size_t>(id)] = true;
      if (t.shape() == param.shape() && t.impl()->offset == param.impl()->offset) own = id;
    }
  }
  for (const GraphNode& n : g.nodes) {
    if (n.op->allocates_output) continue;
    for (int v : n.inputs) {
      if (v >= 0 && alias[static_cast<size_t>(v)]) alias[static_cast<size_t>(n.out)] = true;
    }
  }
  // Nothing after the producer reads the old values.
  for (size_t j = static_cast<size_t>(at) + 1; j < exe.program.size(); ++j) {
    for (int v : reads(g, exe.program[j])) {
      if (alias[static_cast<size_t>(v)]) return false;
    }
  }
  const Instruction& ins = exe.program[static_cast<size_t>(at)];
  if (ins.group < 0) {
    const GraphNode& n = g.nodes[static_cast<size_t>(ins.node)];
    if (!n.op->allocates_output) return false;
    for (int v : n.inputs) {
      if (v < 0 || !alias[static_cast<size_t>(v)]) continue;
      // element i of the output from element i of the Parameter only
      if (v != own || !n.op->elementwise.any()) return false;
    }
    return true;
  }
  // A fused loop: the Parameter may be read by the steps up to the one that writes the value, not after it.
  const FusedLoop& loop = *g.groups[static_cast<size_t>(ins.group)].loop;
  const auto r = std::find(loop.results.begin(), loop.results.end(), value);
  if (r == loop.results.end()) return false;  // a sum, written after the loop: nothing to gain
  const int writer = loop.result_steps[static_cast<size_t>(r - loop.results.begin())];
  for (size_t k = 0; k < loop.outside.size(); ++k) {
    const int v = loop.outside[k];
    if (!alias[static_cast<size_t>(v)]) continue;
    if (v != own || loop.row_slot[k] >= 0 || reads_outside_after(loop, k, writer)) return false;
  }
  return true;
}

}  // namespace

void plan_donations(Executable& exe) {
  const Graph& g = *exe.graph;
  exe.donations.clear();
  if (g.updates.empty()) return;
  std::vector<int> producer(static_cast<size_t>(g.num_values), -1);  // the instruction computing each value
  for (size_t i = 0; i < exe.program.size(); ++i) {
    const Instruction& ins = exe.program[i];
    if (ins.group >= 0) {
      const FusedLoop& loop = *g.groups[static_cast<size_t>(ins.group)].loop;
      for (int v : loop.results) producer[static_cast<size_t>(v)] = static_cast<int>(i);
      for (const FusedLoop::Sum& sum : loop.sums) producer[static_cast<size_t>(sum.out)] = static_cast<int>(i);
    } else {
      producer[static_cast<size_t>(g.nodes[static_cast<size_t>(ins.node)].out)] = static_cast<int>(i);
    }
  }
  for (size_t u = 0; u < g.updates.size(); ++u) {
    if (can_donate(exe, u, producer)) exe.donations.emplace_back(producer[static_cast<size_t>(g.updates[u].second)], static_cast<int>(u));
  }
  std::sort(exe.donations.begin(), exe.donations.end());
}

}  // namespace bprop::graph
