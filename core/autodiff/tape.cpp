#include "autodiff/tape.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "autodiff/observer.h"
#include "bprop/device.h"
#include "bprop/ops.h"
#include "bprop/pool.h"
#include "graph/trace.h"
#include "registry/arg_lists.h"
#include "registry/autocast.h"

namespace bprop::autodiff {
namespace {

// Open levels, oldest first. Level ids are never reused, so a stale entry can never match an open level.
thread_local std::vector<int> t_active;
thread_local int t_next_level = 1;
thread_local uint64_t t_epoch = 0;
thread_local uint64_t t_next_seq = 1;

// Numbers a node in creation order, above its inputs' nodes (kept so even for a node made on another thread).
void number_node(Node& node) {
  uint64_t seq = t_next_seq;
  for (const auto& e : node.edges) {
    if (e && e->seq >= seq) seq = e->seq + 1;
  }
  node.seq = seq;
  t_next_seq = seq + 1;
}

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
    saved.impl()->residual = out.impl()->residual;  // what the kernel kept for its gradient op (attention's lse)
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
      number_node(*node);
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
  number_node(*leaf);
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

// For on_final: the leaves among `leaves` and how many edges into each the nodes reachable from root have, so a
// walk knows when the last consumer of a leaf has run (a depth-first pass, made only when someone listens).
struct LeafUses {
  int64_t edges_left = 0;
  std::vector<size_t> slots;  // indices into `leaves`
};
std::unordered_map<const Node*, LeafUses> leaf_uses(Node* root, const std::vector<std::shared_ptr<Node>>& leaves) {
  std::unordered_map<const Node*, LeafUses> uses;
  for (size_t j = 0; j < leaves.size(); ++j) uses[leaves[j].get()].slots.push_back(j);
  const uint64_t epoch = ++t_epoch;
  std::vector<Node*> stack{root};
  root->epoch = epoch;
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const auto& e : node->edges) {
      if (!e) continue;
      if (auto it = uses.find(e.get()); it != uses.end()) ++it->second.edges_left;
      if (e->epoch != epoch) {
        e->epoch = epoch;
        stack.push_back(e.get());
      }
    }
  }
  return uses;
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

// Nodes a walk has reached and not yet run, kept as a heap with the highest seq on top. A node's gradient is
// complete when it comes to the top: its consumers have higher seqs, and every reached node above it has run.
class Frontier {
 public:
  explicit Frontier(uint64_t epoch) : epoch_(epoch) {}
  // A walk that failed half-way leaves no partial sum on a node, where it would live as long as the graph.
  ~Frontier() {
    for (auto& p : heap_) p.node->grad = Tensor();
  }
  Frontier(const Frontier&) = delete;
  Frontier& operator=(const Frontier&) = delete;

  /// Adds g to what `node` has collected in this walk, queueing it the first time.
  void reach(std::shared_ptr<Node> node, Tensor g) {
    if (node->epoch == epoch_) {
      node->grad = ops::add(node->grad, g);
      return;
    }
    node->epoch = epoch_;
    node->grad = std::move(g);
    heap_.push_back({node->seq, reached_++, std::move(node)});
    std::push_heap(heap_.begin(), heap_.end());
  }
  bool empty() const { return heap_.empty(); }
  std::shared_ptr<Node> pop() {
    std::pop_heap(heap_.begin(), heap_.end());
    std::shared_ptr<Node> node = std::move(heap_.back().node);
    heap_.pop_back();
    return node;
  }

 private:
  struct Entry {
    uint64_t seq;
    uint64_t reached;  // equal seqs (nodes numbered on two threads): the one reached first runs first
    std::shared_ptr<Node> node;
    bool operator<(const Entry& o) const { return seq != o.seq ? seq < o.seq : reached > o.reached; }
  };
  uint64_t epoch_;
  uint64_t reached_ = 0;
  std::vector<Entry> heap_;
};

// Runs one node's bprop on dout (its own or a custom one), with the device and observer set up around it.
std::vector<Tensor> run_bprop(Node& node, const Tensor& dout, std::vector<bool>& needs) {
  needs.assign(node.edges.size(), false);
  for (size_t i = 0; i < node.edges.size(); ++i) needs[i] = node.edges[i] != nullptr;
  // While tracing, the backward of an op is marked with the forward op's source location.
  std::optional<graph::LocationScope> at;
  if (graph::Tracer* tracer = graph::current_tracer()) {
    if (const std::string* where = tracer->origin_of(&node)) at.emplace(*tracer, *where);
  }
  std::vector<Tensor> dx;
  GraphObserver* obs = graph_observer();
  if (obs) obs->on_bprop_begin(node, dout);
  {
    // A bprop's host constants go to the device of the value it differentiates: its output or, when the node
    // keeps none (bprop_reads_out), the device among its inputs (the op ran there), else dout's.
    std::optional<detail::PreferDevice> on_device;
    if (detail::devices_in_use()) {
      auto on_a_device = [](const Tensor& t) { return t.defined() && t.on_device(); };
      const Tensor* value = node.out.defined() ? &node.out : nullptr;
      for (size_t i = 0; !value && i < node.inputs.size(); ++i) {
        if (on_a_device(node.inputs[i])) value = &node.inputs[i];
      }
      if (!value) value = &dout;
      if (on_a_device(*value)) on_device.emplace(value->device());
    }
    const detail::AutocastSuspend no_autocast;
    if (node.op) {
      const BpropCtx ctx{node.inputs, node.out, dout, node.attrs, needs};
      dx = node.op->bprop(ctx);
    } else {
      dx = node.custom->bprop(node.inputs, node.out, dout);
    }
  }
  if (obs) obs->on_bprop_end(node, dx);
  if (dx.size() > node.edges.size()) {
    throw ValueError("For '" + node.name() + "', the bprop returned " + std::to_string(dx.size()) +
                     " gradients for " + std::to_string(node.edges.size()) + " inputs");
  }
  return dx;
}

}  // namespace

std::vector<Tensor> backward(int level, const Tensor& root, const Tensor& sens,
                             const std::vector<std::shared_ptr<Node>>& leaves, const LeafFinalHook& on_final,
                             SavedTensors saved) {
  std::vector<Tensor> result(leaves.size());
  std::shared_ptr<Node> root_node = node_at(root, level);
  if (!root_node) return result;
  std::unordered_map<const Node*, LeafUses> uses;
  if (on_final) uses = leaf_uses(root_node.get(), leaves);
  auto fire = [&](const Node* leaf, LeafUses& u) {
    u.edges_left = -1;  // announced
    if (!leaf->grad.defined()) return;
    for (size_t j : u.slots) on_final(j, leaf->grad);
  };
  // Leaves keep their gradient on the node until the end: cleared however the walk ends.
  struct ClearLeaves {
    const std::vector<std::shared_ptr<Node>>& leaves;
    ~ClearLeaves() {
      for (const auto& leaf : leaves) leaf->grad = Tensor();
    }
  } clear_leaves{leaves};

  const uint64_t epoch = ++t_epoch;
  Frontier frontier(epoch);
  frontier.reach(std::move(root_node), sens);
  const bool release = saved == SavedTensors::ReleaseAsWalked;
  std::vector<bool> needs;
  while (!frontier.empty()) {
    // Released (when this walk is the only one and nothing else holds it) at the end of its turn, while in cache.
    std::shared_ptr<Node> node = frontier.pop();
    if (node->is_leaf) continue;
    const Tensor dout = std::move(node->grad);
    std::vector<Tensor> dx = run_bprop(*node, dout, needs);
    for (size_t i = 0; i < node->edges.size(); ++i) {
      std::shared_ptr<Node>& edge = node->edges[i];
      if (!edge) continue;
      Node* child = edge.get();
      if (i < dx.size() && dx[i].defined()) {
        Tensor g = conform_grad(*node, i, std::move(dx[i]));
        frontier.reach(release ? std::move(edge) : edge, std::move(g));
      }
      if (on_final && child->is_leaf) {
        auto it = uses.find(child);
        if (it != uses.end() && --it->second.edges_left == 0) fire(child, it->second);
      }
    }
    if (release) {
      detail::recycle_arg_list(node->inputs);
      node->out = Tensor();
      node->edges.clear();
    }
  }
  // Reached leaves not announced yet (a consumer no gradient came to never ran, or the leaf is the root), in the
  // order of `leaves`: data-parallel ranks must see the same order.
  if (on_final) {
    for (const auto& leaf : leaves) {
      LeafUses& u = uses[leaf.get()];
      if (leaf->epoch == epoch && u.edges_left >= 0) fire(leaf.get(), u);
    }
  }
  for (size_t j = 0; j < leaves.size(); ++j) {
    if (leaves[j]->epoch == epoch) result[j] = leaves[j]->grad;
  }
  return result;
}

}  // namespace bprop::autodiff
