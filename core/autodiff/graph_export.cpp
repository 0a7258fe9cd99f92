#include "bprop/graph_export.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "autodiff/observer.h"
#include "autodiff/tape.h"
#include "registry/attr_json.h"

namespace bprop {
namespace {

using json = OrderedJson;

class Exporter final : public autodiff::GraphObserver {
 public:
  Exporter(int level, int max_values) : level_(level), max_values_(max_values) {}

  int tensor_id(const Tensor& t) {
    if (!t.defined()) return -1;
    auto it = ids_.find(t.impl());
    if (it != ids_.end()) return it->second;
    const int id = static_cast<int>(keep_.size());
    keep_.push_back(t);  // keeps the impl alive, so its address is never reused for another tensor
    ids_.emplace(t.impl(), id);
    json values = json::array();
    const int64_t n = std::min<int64_t>(t.numel(), max_values_);
    visit_storage_dtype(t.dtype(), [&]<typename T>() {
      const T* p = t.data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (is_floating_type_v<T>) {
          const double v = convert_element<double>(p[i]);
          if (std::isfinite(v)) values.push_back(v);
          else values.push_back(std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
        } else {
          values.push_back(p[i]);
        }
      }
    });
    tensors_.push_back({{"id", id}, {"shape", t.shape()}, {"dtype", dtype_name(t.dtype())}, {"values", values},
                        {"truncated", t.numel() > max_values_}});
    return id;
  }

  void name_input(const Tensor& t, const std::string& name) {
    tensors_[static_cast<size_t>(tensor_id(t))]["name"] = name;
  }

  void on_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, const Tensor& out) override {
    json entry = {{"op", op.name}, {"inputs", json::array()}, {"output", tensor_id(out)}, {"attrs", json::object()}};
    for (const auto& t : inputs) {
      const int id = tensor_id(t);
      entry["inputs"].push_back(id < 0 ? json(nullptr) : json(id));
    }
    for (const auto& [k, v] : attrs.items()) entry["attrs"][k] = attr_json(v);
    if (!in_backward_) {
      entry["index"] = forward_.size();
      if (auto node = autodiff::node_at(out, level_)) node_index_[node.get()] = static_cast<int>(forward_.size());
      entry["differentiated"] = autodiff::node_at(out, level_) != nullptr;
      forward_.push_back(std::move(entry));
    } else if (current_step_ >= 0) {
      backward_[static_cast<size_t>(current_step_)]["ops"].push_back(std::move(entry));
    } else if (!backward_.empty()) {
      backward_.back()["accumulate"].push_back(std::move(entry));  // summing gradients of a reused value
    }
  }

  void on_bprop_begin(const autodiff::Node& node, const Tensor& dout) override {
    if (node.level != level_) return;  // a nested grad inside the function: not this graph's backward
    auto it = node_index_.find(&node);
    current_step_ = static_cast<int>(backward_.size());
    backward_.push_back({{"step", current_step_},
                         {"forward", it == node_index_.end() ? json(nullptr) : json(it->second)},
                         {"op", node.name()},
                         {"dout", tensor_id(dout)},
                         {"ops", json::array()},
                         {"accumulate", json::array()},
                         {"grads", json::array()}});
  }

  void on_bprop_end(const autodiff::Node& node, const std::vector<Tensor>& dx) override {
    if (node.level != level_ || current_step_ < 0) return;
    json& grads = backward_[static_cast<size_t>(current_step_)]["grads"];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const bool wanted = i < node.edges.size() && node.edges[i] != nullptr && i < dx.size() && dx[i].defined();
      grads.push_back(wanted ? json(tensor_id(dx[i])) : json(nullptr));
    }
    current_step_ = -1;
  }

  void start_backward() { in_backward_ = true; }

  json result(const json& inputs, int output, const json& grads) const {
    return {{"format", "bprop-graph/1"}, {"inputs", inputs}, {"output", output}, {"tensors", tensors_},
            {"forward", forward_}, {"backward", backward_}, {"grads", grads}};
  }

 private:
  int level_;
  int max_values_;
  bool in_backward_ = false;
  int current_step_ = -1;
  std::vector<Tensor> keep_;
  std::unordered_map<const TensorImpl*, int> ids_;
  std::unordered_map<const autodiff::Node*, int> node_index_;
  json tensors_ = json::array(), forward_ = json::array(), backward_ = json::array();
};

// Installs an observer for its lifetime and closes the level however the export ends.
struct ExportScope {
  autodiff::GraphObserver* previous;
  int level;
  bool closed = false;
  ExportScope(autodiff::GraphObserver* obs, int l) : previous(autodiff::graph_observer()), level(l) {
    autodiff::graph_observer() = obs;
  }
  void close() {
    if (!closed) autodiff::close_level(level);
    closed = true;
  }
  ~ExportScope() {
    close();
    autodiff::graph_observer() = previous;
  }
};

}  // namespace

std::string export_grad_graph(const Fn& fn, const std::vector<Tensor>& inputs, const GraphExportOptions& opts) {
  const int level = autodiff::open_level();
  Exporter exporter(level, std::max(0, opts.max_values));
  ExportScope scope(&exporter, level);

  std::vector<Tensor> args = inputs;
  std::vector<std::shared_ptr<autodiff::Node>> leaves;
  std::vector<size_t> differentiated;
  json input_list = json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string name = i < opts.input_names.size() ? opts.input_names[i] : std::string("x");
    if (i >= opts.input_names.size()) name += std::to_string(i);  // x0, x1, ...
    if (inputs[i].defined() && is_float(inputs[i].dtype())) {
      leaves.emplace_back();
      args[i] = autodiff::make_leaf(inputs[i], level, leaves.back());
      differentiated.push_back(i);
    }
    if (!args[i].defined()) continue;
    exporter.name_input(args[i], name);
    input_list.push_back({{"name", name}, {"tensor", exporter.tensor_id(args[i])}});
  }

  const Value v = fn(args);
  const Tensor out = v.is_tensor() ? v.tensor() : v[0].tensor();
  if (!is_float(out.dtype())) {
    throw DTypeError(std::string("For 'export_grad_graph', the function's output has dtype ") + dtype_name(out.dtype()));
  }
  const int out_id = exporter.tensor_id(out);
  scope.close();
  exporter.start_backward();
  const std::vector<Tensor> g = autodiff::backward(level, out, ones(out.shape(), out.dtype()), leaves);

  json grads = json::array();
  for (size_t k = 0; k < differentiated.size(); ++k) {
    const Tensor& x = inputs[differentiated[k]];
    const Tensor gk = g[k].defined() ? g[k] : zeros(x.shape(), x.dtype());
    grads.push_back({{"input", differentiated[k]}, {"tensor", exporter.tensor_id(gk)}});
  }
  return exporter.result(input_list, out_id, grads).dump();
}

}  // namespace bprop
