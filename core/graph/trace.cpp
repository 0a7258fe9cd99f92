#include "graph/trace.h"

#include <string>

namespace bprop::graph {
namespace {
thread_local Tracer* t_tracer = nullptr;
}  // namespace

Tracer* current_tracer() { return t_tracer; }

Tracer& current_tracer_or_throw(const std::string& op) {
  if (!t_tracer) {
    throw ValueError("For '" + op + "', an input is a traced tensor of a jitted function that has finished "
                     "tracing (it escaped the function, e.g. through a captured variable)");
  }
  return *t_tracer;
}

void throw_no_value(const char* what) {
  throw ValueError(std::string("For 'jit', ") + what +
                   " needs the value of a traced tensor, which is not known while tracing: pass the value as an "
                   "argument instead, or compute with ops (where() instead of branching on a value)");
}

Tracer::Tracer() : graph_(nullptr), owned_(std::make_shared<Graph>()), outer_(t_tracer) {
  graph_ = owned_.get();
  t_tracer = this;
}

Tracer::~Tracer() { t_tracer = outer_; }

Tensor Tracer::add_input(const Shape& shape, DType dtype) {
  Tensor t = Tensor::abstract(shape, dtype);
  const int id = graph_->num_values++;
  abstract_ids_.emplace(t.impl()->storage.get(), id);
  alive_.push_back(t);
  graph_->inputs.push_back(id);
  graph_->types.push_back({shape, dtype});
  return t;
}

int Tracer::value_of(const Tensor& t) {
  if (t.is_abstract()) {
    auto it = abstract_ids_.find(t.impl()->storage.get());
    if (it == abstract_ids_.end()) {
      throw ValueError("For 'jit', a traced tensor of another trace was used (a tensor escaped a jitted function "
                       "while it was being traced)");
    }
    return it->second;
  }
  if (t.impl()->is_parameter) {
    if (auto it = assigned_.find(t.impl()->storage.get()); it != assigned_.end()) return it->second;
  }
  if (auto it = constant_ids_.find(t.impl()); it != constant_ids_.end()) return it->second;
  const int id = graph_->num_values++;
  constant_ids_.emplace(t.impl(), id);
  alive_.push_back(t);
  graph_->constants.emplace_back(id, t);
  graph_->types.push_back({t.shape(), t.dtype()});
  return id;
}

Tensor Tracer::add_node(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, const Shape& shape,
                        DType dtype) {
  GraphNode n;
  n.op = &op;
  n.attrs = attrs;
  for (const Tensor& t : inputs) n.inputs.push_back(t.defined() ? value_of(t) : -1);
  n.shape = shape;
  n.dtype = dtype;
  n.where = location_;
  Tensor out = Tensor::abstract(shape, dtype, op.name);
  n.out = graph_->num_values++;
  graph_->types.push_back({shape, dtype});
  abstract_ids_.emplace(out.impl()->storage.get(), n.out);
  alive_.push_back(out);
  graph_->nodes.push_back(std::move(n));
  return out;
}

void Tracer::note_origins(const Tensor& out) {
  if (location_.empty()) return;
  for (const autodiff::TraceEntry& e : out.impl()->trace) origins_[e.node.get()] = {e.node, location_};
}

const std::string* Tracer::origin_of(const autodiff::Node* node) const {
  const auto it = origins_.find(node);
  if (it == origins_.end() || it->second.first.lock().get() != node) return nullptr;
  return &it->second.second;
}

void Tracer::assign(const Tensor& param, const Tensor& value) {
  const int v = value_of(value);
  alive_.push_back(param);
  assigned_[param.impl()->storage.get()] = v;
  for (auto& u : graph_->updates) {
    if (u.first.impl()->storage == param.impl()->storage) {
      u.second = v;  // assigned again: the last value wins
      return;
    }
  }
  graph_->updates.emplace_back(param, v);
}

std::shared_ptr<Graph> Tracer::finish(const Value& result) {
  graph_->output_template = result;
  for (const Tensor& t : result.flatten()) graph_->outputs.push_back(value_of(t));
  graph_->recompute_uses();
  return owned_;
}

}  // namespace bprop::graph
