// Common-subexpression elimination: the second node computing op(attrs) on the same values reads the first's
// result instead. Ops defined by the user (register_primitive) are left alone: their kernels may have effects.
// Equal small constants become one value first.
#include <string>
#include <unordered_map>

#include "graph/passes.h"

namespace bprop::graph {

namespace {
constexpr size_t kMaxMergedConstantBytes = 64;  // scalars and tiny vectors: cheap to compare, and what repeats
}

bool eliminate_common_subexpressions(Graph& g) {
  std::unordered_map<std::string, int> seen;  // key -> value id
  std::vector<int> remap(static_cast<size_t>(g.num_values));
  for (int v = 0; v < g.num_values; ++v) remap[static_cast<size_t>(v)] = v;
  bool changed = false;
  std::string key;
  // Small constants with the same dtype, shape and bits are one value (constants are values of the trace: work
  // on them is done once). A chain written with numbers, x.mul(1.0001).add(0.1) in a loop, makes new scalar
  // tensors at every step; merged, the replay reads two constants instead of one per op.
  for (const auto& [id, t] : g.constants) {
    if (t.impl()->is_parameter || !t.on_host() || t.nbytes() > kMaxMergedConstantBytes) continue;
    key.assign("constant ");
    key += shape_str(t.shape());
    key += dtype_name(t.dtype());
    key += '|';
    key.append(static_cast<const char*>(t.raw_data()), t.nbytes());
    auto [it, inserted] = seen.emplace(key, id);
    if (!inserted) {
      remap[static_cast<size_t>(id)] = it->second;
      changed = true;
    }
  }
  for (GraphNode& n : g.nodes) {
    for (int& v : n.inputs) {
      if (v >= 0) v = remap[static_cast<size_t>(v)];
    }
    if (n.op->family == "user") continue;
    key = n.op->name + "(";
    for (int v : n.inputs) key += std::to_string(v) + ",";
    key += ')';
    key += attrs_text(n.attrs);
    key += '|';
    key += shape_str(n.shape);
    key += dtype_name(n.dtype);
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
