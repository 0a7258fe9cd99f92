#include "graph/ir.h"

namespace bprop::graph {
namespace {

std::string value_name(int id) { return id < 0 ? "null" : "%" + std::to_string(id); }

std::string type_str(const Shape& s, DType dt) { return shape_str(s) + " " + dtype_name(dt); }

}  // namespace

std::string Graph::to_text() const {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += value_name(inputs[i]) + " = argument " + std::to_string(i) + "\n";
  }
  for (const auto& [id, t] : constants) {
    out += value_name(id) + " = " + (t.impl()->is_parameter ? "parameter '" + t.impl()->name + "'" : "constant") +
           " : " + type_str(t.shape(), t.dtype()) + "\n";
  }
  for (const GraphNode& n : nodes) {
    out += value_name(n.out) + " = " + n.op->name + "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) out += (i ? ", " : "") + value_name(n.inputs[i]);
    out += ")";
    if (!n.attrs.empty()) {
      out += " {";
      bool first = true;
      for (const auto& [k, v] : n.attrs.items()) {
        out += (first ? "" : ", ") + k + ": " + attr_value_str(v);
        first = false;
      }
      out += "}";
    }
    out += " : " + type_str(n.shape, n.dtype) + "\n";
  }
  out += "return";
  for (size_t i = 0; i < outputs.size(); ++i) out += (i ? ", " : " ") + value_name(outputs[i]);
  return out + "\n";
}

}  // namespace bprop::graph
