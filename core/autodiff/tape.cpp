#include "autodiff/tape.h"

#include <algorithm>
#include <optional>

#include "autodiff/observer.h"
#include "bprop/device.h"
#include "bprop/ops.h"
#include "bprop/pool.h"
#include "graph/trace.h"
#include "registry/arg_lists.h"

namespace bprop::autodiff {
namespace {

// Open levels, oldest first. Level ids are never reused, so a stale entry can never match an open level.
thread_local std::vector<int> t_active;
thread_local int t_next_level = 1;
thread_local uint64_t t_epoch = 0;

const TraceEntry* find_entry(const TensorImpl* impl, int level) {
  for (const auto& e : impl->trace) {
    if (e.level == level) return &e;
  }
  return nullptr;
}

// `save_out`: whether the node's bprop reads the output (OpDef::bprop_reads_out).
std::shared_ptr<Node> new_node(int level, size_t n_inputs, const Tensor& out, bool save_out) {
  auto node = pool::make_shared<Node>();
  node->level = level;
  if (save_out) {
    // The saved output keeps only the entries of outer levels recorded so far (this loop runs oldest first).
    Tensor saved = out.detach();
    saved.impl()->trace = out.impl()->trace;
    node->out = std::move(saved);
  }
  node->edges.resize(n_inputs);
  return node;
}

template <typename Fill>
void record_at_levels(const std::vector<Tensor>& inputs, Tensor& out, std::vector<Tensor>* movable, bool save_out,
                      Fill fill) {
  SmallVector<Node*, 2> made;
  for (int level : t_active) {
    std::shared_ptr<Node> node;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) continue;
      const TraceEntry* e = find_entry(inputs[i].impl(), level);
      if (!e) continue;
      if (!node) node = new_node(level, inputs.size(), out, save_out);
      node->edges[i] = e->node;
    }
    if (node) {
      fill(*node);
      made.push_back(node.get());
      out.impl()->trace.push_back({level, std::move(node)});
    }
  }
  // Inputs last: `movable` aliases `inputs`, so it can only be taken once nothing reads `inputs` any more.
  for (size_t k = 0; k < made.size(); ++k) {
    if (movable && k + 1 == made.size()) {
      made[k]->inputs = std::move(*movable);
    } else {
      made[k]->inputs = inputs;
    }
  }
}

// Tensors and nodes whose release was deferred by ~Node, freed one at a time by the outermost ~Node.
struct Graveyard {
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Node>> nodes;
  bool draining = false;
};
thread_local Graveyard t_graveyard;

}  // namespace

Node::~Node() {
  Graveyard& g = t_graveyard;
  // Everything that may hold further nodes is deferred (a use count checked now can drop later in the drain, so
  // it cannot tell what is safe to release here); tensors without a trace hold only a buffer.
  for (auto& t : inputs) {
    if (t.defined() && !t.impl()->trace.empty()) g.tensors.push_back(std::move(t));
  }
  detail::recycle_arg_list(inputs);  // the rest hold only buffers
  if (out.defined() && !out.impl()->trace.empty()) g.tensors.push_back(std::move(out));
  for (auto& e : edges) {
    if (e) g.nodes.push_back(std::move(e));
  }
  if (g.draining) return;
  g.draining = true;
  while (!g.tensors.empty() || !g.nodes.empty()) {
    if (!g.nodes.empty()) {
      std::shared_ptr<Node> n = std::move(g.nodes.back());
      g.nodes.pop_back();
    } else {
      Tensor t = std::move(g.tensors.back());
      g.tensors.pop_back();
    }
  }
  g.draining = false;
}

std::string Node::name() const {
  if (op) return op->name;
  if (is_leaf) return "leaf";
  return custom ? custom->name : std::string();
}

int open_level() {
  const int id = t_next_level++;
  t_active.push_back(id);
  return id;
}

void close_level(int level) {
  auto it = std::find(t_active.begin(), t_active.end(), level);
  if (it != t_active.end()) t_active.erase(it);
}

bool recording() { return !t_active.empty(); }

SuspendRecording::SuspendRecording() : saved_(std::move(t_active)) { t_active.clear(); }
SuspendRecording::~SuspendRecording() { t_active = std::move(saved_); }

void record(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, Tensor& out,
            std::vector<Tensor>* movable) {
  record_at_levels(inputs, out, movable, op.bprop_reads_out, [&](Node& n) {
    n.op = &op;
    if (!attrs.empty()) n.attrs = attrs;
  });
}

void record_custom(const std::string& name, const std::vector<Tensor>& inputs, Tensor& out, const CustomBprop& bprop) {
  record_at_levels(inputs, out, nullptr, true, [&](Node& n) {
    n.custom = std::make_unique<Node::Custom>(Node::Custom{bprop, name});
  });
}

std::shared_ptr<Node> node_at(const Tensor& t, int level) {
  const TraceEntry* e = find_entry(t.impl(), level);
  return e ? e->node : nullptr;
}

Tensor make_leaf(const Tensor& x, int level, std::shared_ptr<Node>& leaf) {
  leaf = pool::make_shared<Node>();
  leaf->level = level;
  leaf->is_leaf = true;
  Tensor alias = x.detach();
  alias.impl()->trace = x.impl()->trace;
  alias.impl()->trace.push_back({level, leaf});
  return alias;
}

Tensor strip_levels(const Tensor& x, int level) {
  if (!x.defined()) return x;
  const auto& trace = x.impl()->trace;
  if (std::none_of(trace.begin(), trace.end(), [&](const TraceEntry& e) { return e.level >= level; })) return x;
  Tensor out = x.detach();
  for (const auto& e : trace) {
    if (e.level < level) out.impl()->trace.push_back(e);
  }
  return out;
}

namespace {

// Post-order DFS from root over this level's nodes: children before parents.
std::vector<Node*> topo_order(Node* root, uint64_t epoch) {
  std::vector<Node*> order;
  std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
  root->epoch = epoch;
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->edges.size()) {
      Node* child = node->edges[next++].get();
      if (child && child->epoch != epoch) {
        child->epoch = epoch;
        stack.emplace_back(child, 0);
      }
      continue;
    }
    node->topo_index = static_cast<int64_t>(order.size());
    order.push_back(node);
    stack.pop_back();
  }
  return order;
}

// Casts and checks one bprop result against the input it is the gradient of.
Tensor conform_grad(const Node& node, size_t i, Tensor g) {
  const Tensor& x = node.inputs[i];
  if (g.shape() != x.shape()) {
    throw ShapeError("For '" + node.name() + "', the bprop returned a gradient of shape " + shape_str(g.shape()) +
                     " for input " + std::to_string(i) + " of shape " + shape_str(x.shape()));
  }
  if (g.dtype() != x.dtype()) g = ops::cast(g, x.dtype());
  return g;
}

}  // namespace

std::vector<Tensor> backward(int level, const Tensor& root, const Tensor& sens,
                             const std::vector<std::shared_ptr<Node>>& leaves, const LeafFinalHook& on_final,
                             SavedTensors saved) {
  std::vector<Tensor> result(leaves.size());
  std::shared_ptr<Node> root_node = node_at(root, level);
  if (root_node) {
    const uint64_t epoch = ++t_epoch;
    std::vector<Node*> order = topo_order(root_node.get(), epoch);
    std::vector<Tensor> grads(order.size());
    grads.back() = sens;
    // A leaf's gradient is final once its lowest-placed consumer has run (consumers come after it in the
    // order and the walk goes downwards): final_at[k] lists the leaves that are final after node k.
    std::vector<std::vector<size_t>> final_at;
    std::vector<size_t> final_at_end;  // reached leaves no node consumes (the root itself)
    if (on_final) {
      final_at.resize(order.size());
      std::vector<int64_t> first_consumer(order.size(), -1);
      for (size_t k = 0; k < order.size(); ++k) {
        for (const auto& e : order[k]->edges) {
          if (e && e->is_leaf && e->epoch == epoch && first_consumer[static_cast<size_t>(e->topo_index)] < 0) {
            first_consumer[static_cast<size_t>(e->topo_index)] = static_cast<int64_t>(k);
          }
        }
      }
      for (size_t j = 0; j < leaves.size(); ++j) {
        const Node* leaf = leaves[j].get();
        if (leaf->epoch != epoch) continue;
        const int64_t at = first_consumer[static_cast<size_t>(leaf->topo_index)];
        if (at < 0) final_at_end.push_back(j);
        else final_at[static_cast<size_t>(at)].push_back(j);
      }
    }
    auto fire = [&](const std::vector<size_t>& js) {
      for (size_t j : js) {
        const Tensor& g = grads[static_cast<size_t>(leaves[j]->topo_index)];
        if (g.defined()) on_final(j, g);
      }
    };
    std::vector<bool> needs;
    for (size_t k = order.size(); k-- > 0;) {
      Node* node = order[k];
      if (node->is_leaf || !grads[k].defined()) {
        if (on_final) fire(final_at[k]);
        continue;
      }
      Tensor dout = std::move(grads[k]);
      // While tracing, the backward of an op is marked with the forward op's source location.
      std::optional<graph::LocationScope> at;
      if (graph::Tracer* tracer = graph::current_tracer()) {
        if (const std::string* where = tracer->origin_of(node)) at.emplace(*tracer, *where);
      }
      needs.assign(node->edges.size(), false);
      for (size_t i = 0; i < node->edges.size(); ++i) needs[i] = node->edges[i] != nullptr;
      std::vector<Tensor> dx;
      GraphObserver* obs = graph_observer();
      if (obs) obs->on_bprop_begin(*node, dout);
      {
        // A bprop's host constants go to the device of the value it differentiates: its output or, when the node
        // keeps none (bprop_reads_out), the device among its inputs (the op ran there), else dout's.
        std::optional<detail::PreferDevice> on_device;
        if (detail::devices_in_use()) {
          auto on_a_device = [](const Tensor& t) {
            return t.defined() && t.backend() != Backend::CPU && t.backend() != Backend::Graph;
          };
          const Tensor* value = node->out.defined() ? &node->out : nullptr;
          for (size_t i = 0; !value && i < node->inputs.size(); ++i) {
            if (on_a_device(node->inputs[i])) value = &node->inputs[i];
          }
          if (!value) value = &dout;
          if (on_a_device(*value)) on_device.emplace(value->device());
        }
        if (node->op) {
          const BpropCtx ctx{node->inputs, node->out, dout, node->attrs, needs};
          dx = node->op->bprop(ctx);
        } else {
          dx = node->custom->bprop(node->inputs, node->out, dout);
        }
      }
      if (obs) obs->on_bprop_end(*node, dx);
      if (dx.size() > node->edges.size()) {
        throw ValueError("For '" + node->name() + "', the bprop returned " + std::to_string(dx.size()) +
                         " gradients for " + std::to_string(node->edges.size()) + " inputs");
      }
      for (size_t i = 0; i < dx.size(); ++i) {
        Node* child = node->edges[i].get();
        if (!child || !dx[i].defined()) continue;
        Tensor g = conform_grad(*node, i, std::move(dx[i]));
        Tensor& slot = grads[static_cast<size_t>(child->topo_index)];
        slot = slot.defined() ? ops::add(slot, g) : std::move(g);
      }
      if (saved == SavedTensors::ReleaseAsWalked) {
        detail::recycle_arg_list(node->inputs);
        node->out = Tensor();
      }
      if (on_final) fire(final_at[k]);
    }
    if (on_final) fire(final_at_end);
    for (size_t j = 0; j < leaves.size(); ++j) {
      Node* leaf = leaves[j].get();
      if (leaf->epoch == epoch) result[j] = std::move(grads[static_cast<size_t>(leaf->topo_index)]);
    }
  }
  return result;
}

}  // namespace bprop::autodiff
