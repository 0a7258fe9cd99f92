// A jitted graph as data (format "bprop-jit-graph/1", docs/graph.md): what the graph viewer draws, fused groups
// included.
#include <algorithm>
#include <cmath>

#include "graph/ir.h"
#include "registry/attr_json.h"

namespace bprop::graph {
namespace {

using json = OrderedJson;

constexpr int64_t kConstantValues = 8;  // values shown per constant (the first ones, row-major)

json value_entry(int id, const ValueType& type) {
  return {{"id", id}, {"shape", type.shape}, {"dtype", dtype_name(type.dtype)}};
}

/// The first values of a host constant (non-finite ones as "nan", "inf", "-inf", as in bprop-graph/1).
json constant_values(const Tensor& t) {
  json values = json::array();
  if (!t.on_host()) return values;  // a device constant: reading it would copy it over
  const std::vector<double> all = t.to_vector<double>();
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), kConstantValues); ++i) {
    const double x = all[static_cast<size_t>(i)];
    if (std::isfinite(x)) values.push_back(x);
    else values.push_back(std::isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf"));
  }
  return values;
}

}  // namespace

std::string Graph::to_json() const {
  json values = json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    json v = value_entry(inputs[i], types[static_cast<size_t>(inputs[i])]);
    v["kind"] = "argument";
    v["argument"] = i;
    values.push_back(std::move(v));
  }
  for (const auto& [id, t] : constants) {
    json v = value_entry(id, types[static_cast<size_t>(id)]);
    if (t.impl()->is_parameter) {
      v["kind"] = "parameter";
      v["name"] = t.impl()->param_name();
    } else {
      v["kind"] = "constant";
      v["values"] = constant_values(t);
      v["truncated"] = t.numel() > kConstantValues;
    }
    values.push_back(std::move(v));
  }
  json node_list = json::array();
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    const GraphNode& n = nodes[ni];
    json v = value_entry(n.out, {n.shape, n.dtype});
    v["kind"] = "node";
    v["node"] = ni;
    values.push_back(std::move(v));
    json ins = json::array();
    for (int in : n.inputs) ins.push_back(in < 0 ? json(nullptr) : json(in));
    json attrs = json::object();
    for (const auto& [k, a] : n.attrs.items()) attrs[k] = attr_json(a);
    node_list.push_back({{"index", ni},
                         {"op", n.op->name},
                         {"inputs", std::move(ins)},
                         {"output", n.out},
                         {"attrs", std::move(attrs)},
                         {"group", n.group < 0 ? json(nullptr) : json(n.group)},
                         {"where", n.where}});
  }
  json group_list = json::array();
  for (size_t g = 0; g < groups.size(); ++g) group_list.push_back({{"id", g}, {"nodes", groups[g].nodes}});
  json update_list = json::array();
  for (const auto& [p, v] : updates) update_list.push_back({{"parameter", p.impl()->param_name()}, {"value", v}});
  json pass_list = json::array();
  for (const PassRecord& p : passes) pass_list.push_back({{"pass", p.pass}, {"before", p.before}, {"after", p.after}});
  const json out = {{"format", "bprop-jit-graph/1"}, {"values", std::move(values)},   {"nodes", std::move(node_list)},
                    {"groups", std::move(group_list)},  {"updates", std::move(update_list)},
                    {"outputs", outputs},               {"passes", std::move(pass_list)}};
  return out.dump();
}

}  // namespace bprop::graph
