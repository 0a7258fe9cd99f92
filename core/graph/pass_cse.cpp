// Common-subexpression elimination: the second node computing op(attrs) on the same values reads the first's
// result instead. Ops defined by the user (register_primitive) are left alone: their kernels may have effects.
#include <string>
#include <unordered_map>

#include "graph/passes.h"

namespace bprop::graph {

bool eliminate_common_subexpressions(Graph& g) {
  std::unordered_map<std::string, int> seen;  // key -> value id
  std::vector<int> remap(static_cast<size_t>(g.num_values));
  for (int v = 0; v < g.num_values; ++v) remap[static_cast<size_t>(v)] = v;
  bool changed = false;
  std::string key;
  for (GraphNode& n : g.nodes) {
    for (int& v : n.inputs) {
      if (v >= 0) v = remap[static_cast<size_t>(v)];
    }
    if (n.op->family == "user") continue;
    key = n.op->name + "(";
    for (int v : n.inputs) key += std::to_string(v) + ",";
    key += ")" + attrs_text(n.attrs) + "|" + shape_str(n.shape) + dtype_name(n.dtype);
    auto [it, inserted] = seen.emplace(key, n.out);
    if (!inserted) {
      remap[static_cast<size_t>(n.out)] = it->second;
      changed = true;
    }
  }
  if (!changed) return false;
  for (int& v : g.outputs) v = remap[static_cast<size_t>(v)];
  for (auto& u : g.updates) u.second = remap[static_cast<size_t>(u.second)];
  eliminate_dead_code(g);  // the duplicates are now dead
  return true;
}

}  // namespace bprop::graph
