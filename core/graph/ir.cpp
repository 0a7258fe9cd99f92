#include "graph/ir.h"

#include <algorithm>

namespace bprop::graph {
namespace {

std::string value_name(int id) {
  if (id < 0) return "null";
  std::string name = "%";  // (built in place: GCC 12 warns wrongly about "%" + std::string)
  name += std::to_string(id);
  return name;
}

std::string type_str(const Shape& s, DType dt) { return shape_str(s) + " " + dtype_name(dt); }

}  // namespace

std::string attrs_text(const Attrs& attrs) {
  std::string out;
  for (const auto& [k, v] : attrs.items()) out += (out.empty() ? "" : ", ") + k + ": " + attr_value_str(v);
  return out;
}

void Graph::recompute_uses() {
  last_use.assign(static_cast<size_t>(num_values), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int g = nodes[i].group;
    const int at = g >= 0 ? groups[static_cast<size_t>(g)].nodes.back() : static_cast<int>(i);
    for (int v : nodes[i].inputs) {
      if (v >= 0) last_use[static_cast<size_t>(v)] = std::max(last_use[static_cast<size_t>(v)], at);
    }
  }
}

const Tensor* Graph::constant(int id) const {
  for (const auto& [cid, t] : constants) {
    if (cid == id) return t.impl()->is_parameter ? nullptr : &t;
  }
  return nullptr;
}

bool Graph::is_argument(int id) const {
  for (int a : inputs) {
    if (a == id) return true;
  }
  return false;
}

std::string Graph::to_text() const {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += value_name(inputs[i]) + " = argument " + std::to_string(i) + "\n";
  }
  for (const auto& [id, t] : constants) {
    out += value_name(id) + " = " + (t.impl()->is_parameter ? "parameter '" + t.impl()->param_name() + "'" : "constant") +
           " : " + type_str(t.shape(), t.dtype()) + "\n";
  }
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    const GraphNode& n = nodes[ni];
    const bool grouped = n.group >= 0;
    const FusedGroup* g = grouped ? &groups[static_cast<size_t>(n.group)] : nullptr;
    if (g && g->nodes.front() == static_cast<int>(ni)) {
      out += "fused #" + std::to_string(n.group) + " {\n";
    }
    out += std::string(grouped ? "  " : "") + value_name(n.out) + " = " + n.op->name + "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) out += (i ? ", " : "") + value_name(n.inputs[i]);
    out += ")";
    if (!n.attrs.empty()) out += " {" + attrs_text(n.attrs) + "}";
    out += " : " + type_str(n.shape, n.dtype);
    if (!n.where.empty()) out += "  # " + n.where;
    out += "\n";
    if (g && g->nodes.back() == static_cast<int>(ni)) out += "}\n";
  }
  for (const auto& [p, v] : updates) out += "parameter '" + p.impl()->param_name() + "' <- " + value_name(v) + "\n";
  out += "return";
  for (size_t i = 0; i < outputs.size(); ++i) out += (i ? ", " : " ") + value_name(outputs[i]);
  return out + "\n";
}

}  // namespace bprop::graph
