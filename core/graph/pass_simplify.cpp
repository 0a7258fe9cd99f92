// Algebraic simplification of the patterns the bprops produce (the sens of 1 multiplied in, a reshape back to
// the shape it came from, ...). Only rewrites that keep every bit: x * 1 and x / 1 are exact, x - 0 is, but
// x + 0 turns -0 into +0, so only x + (-0) is removed for floats. A value is replaced by another only when the
// other has its shape and dtype, and never where the function's output would become an argument or a
// captured tensor (a result must not alias them).
#include <cmath>

#include "graph/passes.h"

namespace bprop::graph {
namespace {

// Every element of t equals v (for v == 0, with the sign of v's zero when `signed_zero`).
bool all_equal(const Tensor& device_or_host, double v, bool signed_zero = false) {
  const Tensor t = device_or_host.cpu();  // (a constant on a device is read through a copy)
  bool ok = true;
  visit_storage_dtype(t.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      ok = false;
    } else {
      const T* p = t.data<T>();
      for (int64_t i = 0; i < t.numel() && ok; ++i) {
        const double e = convert_element<double>(p[i]);
        ok = e == v && (!signed_zero || !is_floating_type_v<T> || std::signbit(e) == std::signbit(v));
      }
    }
  });
  return ok;
}

// A transpose's permutation, normalised: no attribute reverses the axes, negative axes count from the end.
IntList perm_of(const GraphNode& n, size_t rank) {
  IntList p;
  if (n.attrs.has("perm")) {
    try {
      p = n.attrs.get_ints("perm");
    } catch (const Error&) {  // null: the default
    }
  }
  if (p.empty()) {
    for (size_t i = rank; i-- > 0;) p.push_back(static_cast<int64_t>(i));
  }
  for (int64_t& v : p) {
    if (v < 0) v += static_cast<int64_t>(rank);
  }
  return p;
}

bool is_identity_perm(const IntList& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

struct Simplifier {
  Graph& g;
  std::vector<const Tensor*> constant;
  std::vector<int> producer;  // node index of each value, -1 for arguments and constants
  std::vector<bool> is_output;

  explicit Simplifier(Graph& graph) : g(graph) {
    const size_t n = static_cast<size_t>(g.num_values);
    constant.assign(n, nullptr);
    producer.assign(n, -1);
    is_output.assign(n, false);
    for (const auto& [id, t] : g.constants) {
      if (!t.impl()->is_parameter) constant[static_cast<size_t>(id)] = &t;
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) producer[static_cast<size_t>(g.nodes[i].out)] = static_cast<int>(i);
    for (int v : g.outputs) is_output[static_cast<size_t>(v)] = true;
  }

  const Tensor* const_of(int v) const { return v >= 0 ? constant[static_cast<size_t>(v)] : nullptr; }
  const GraphNode* node_of(int v) const {
    const int p = v >= 0 ? producer[static_cast<size_t>(v)] : -1;
    return p >= 0 ? &g.nodes[static_cast<size_t>(p)] : nullptr;
  }
  const ValueType& type(int v) const { return g.types[static_cast<size_t>(v)]; }

  // Whether n's value may be replaced by value v.
  bool can_become(const GraphNode& n, int v) const {
    if (v < 0 || type(v).shape != n.shape || type(v).dtype != n.dtype) return false;
    return !is_output[static_cast<size_t>(n.out)] || producer[static_cast<size_t>(v)] >= 0;
  }

  // The value n computes, when an identity makes it one of its inputs; -1 otherwise.
  int identity_of(const GraphNode& n) const {
    const std::string& op = n.op->name;
    const auto in = [&](size_t i) { return i < n.inputs.size() ? n.inputs[i] : -1; };
    auto when = [&](int v) { return can_become(n, v) ? v : -1; };
    if (op == "mul") {
      if (const Tensor* c = const_of(in(1)); c && all_equal(*c, 1.0)) return when(in(0));
      if (const Tensor* c = const_of(in(0)); c && all_equal(*c, 1.0)) return when(in(1));
    } else if (op == "div") {
      if (const Tensor* c = const_of(in(1)); c && all_equal(*c, 1.0)) return when(in(0));
    } else if (op == "sub") {
      if (const Tensor* c = const_of(in(1)); c && all_equal(*c, 0.0, true)) return when(in(0));
    } else if (op == "add") {
      const bool ints = !is_float(n.dtype);
      if (const Tensor* c = const_of(in(1)); c && all_equal(*c, ints ? 0.0 : -0.0, !ints)) return when(in(0));
      if (const Tensor* c = const_of(in(0)); c && all_equal(*c, ints ? 0.0 : -0.0, !ints)) return when(in(1));
    } else if (op == "neg") {
      if (const GraphNode* p = node_of(in(0)); p && p->op->name == "neg") return when(p->inputs[0]);
    } else if (op == "reshape" || op == "broadcast_to" || op == "cast") {
      return when(in(0));  // (when it changes neither shape nor dtype)
    } else if (op == "transpose") {
      if (is_identity_perm(perm_of(n, n.shape.size()))) return when(in(0));
    }
    return -1;
  }

  // Rewrites n in place when it reads a chain that collapses; true when it did.
  bool collapse_chain(GraphNode& n) const {
    const std::string& op = n.op->name;
    const GraphNode* p = node_of(n.inputs.empty() ? -1 : n.inputs[0]);
    if (!p || p->op != n.op) return false;
    if (op == "reshape") {  // reshape(reshape(x)) = reshape(x): only the final shape matters
      n.inputs[0] = p->inputs[0];
      return true;
    }
    if (op == "transpose") {  // transpose(transpose(x, p), q) = transpose(x, p[q])
      const IntList inner = perm_of(*p, n.shape.size()), outer = perm_of(n, n.shape.size());
      if (inner.size() != outer.size() || inner.size() != n.shape.size()) return false;
      IntList composed(outer.size());
      for (size_t i = 0; i < outer.size(); ++i) composed[i] = inner[static_cast<size_t>(outer[i])];
      n.inputs[0] = p->inputs[0];
      n.attrs.set("perm", composed);
      return true;
    }
    return false;
  }
};

}  // namespace

bool simplify(Graph& g) {
  Simplifier s(g);
  std::vector<int> remap(static_cast<size_t>(g.num_values));
  for (int v = 0; v < g.num_values; ++v) remap[static_cast<size_t>(v)] = v;
  bool changed = false;
  for (GraphNode& n : g.nodes) {
    for (int& v : n.inputs) {
      if (v >= 0) v = remap[static_cast<size_t>(v)];
    }
    if (s.collapse_chain(n)) changed = true;
    const int same = s.identity_of(n);
    if (same >= 0) {
      remap[static_cast<size_t>(n.out)] = same;
      changed = true;
    }
  }
  if (!changed) return false;
  for (int& v : g.outputs) v = remap[static_cast<size_t>(v)];
  for (auto& u : g.updates) u.second = remap[static_cast<size_t>(u.second)];
  eliminate_dead_code(g);
  g.recompute_uses();
  return true;
}

}  // namespace bprop::graph
