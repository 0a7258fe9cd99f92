#include "bprop/jit.h"

#include "autodiff/tape.h"
#include "graph/executor.h"
#include "graph/trace.h"

namespace bprop {

struct JitFn::State {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const graph::Graph>> cache;  // by signature
  JitStats stats;
};

namespace {

// "(2, 3) float32; (3,) int32": what a graph depends on besides the function.
std::string signature(const std::vector<Tensor>& args) {
  std::string s;
  for (const Tensor& t : args) {
    if (!t.defined()) throw ValueError("For 'jit', an argument is an undefined tensor");
    s += shape_str(t.shape()) + " " + dtype_name(t.dtype()) + "; ";
  }
  return s;
}

}  // namespace

JitFn::JitFn(Fn fn) : fn_(std::move(fn)), state_(std::make_shared<State>()) {}

std::shared_ptr<const graph::Graph> JitFn::compiled(const std::vector<Tensor>& args) const {
  const std::string key = signature(args);
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (auto it = state_->cache.find(key); it != state_->cache.end()) {
      ++state_->stats.replays;
      return it->second;
    }
  }
  std::shared_ptr<graph::Graph> g;
  {
    graph::Tracer tracer;
    std::vector<Tensor> abstract;
    for (const Tensor& t : args) abstract.push_back(tracer.add_input(t.shape(), t.dtype()));
    g = tracer.finish(fn_(abstract));
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  ++state_->stats.traces;
  state_->stats.nodes = static_cast<int64_t>(g->nodes.size());
  state_->cache.emplace(key, g);
  return g;
}

Value JitFn::operator()(const std::vector<Tensor>& args) const {
  // Inside another trace the function is simply part of it; under an open grad level (grad(jit(f))) it runs
  // eagerly so that the level records it.
  // (Any open level, not only one that differentiates an argument: a Parameter the function reads may be one.)
  if (graph::tracing()) return fn_(args);
  if (autodiff::recording()) {
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      ++state_->stats.eager_calls;
    }
    return fn_(args);
  }
  return graph::run(*compiled(args), args);
}

std::string JitFn::lower(const std::vector<Tensor>& args) const { return compiled(args)->to_text(); }

JitStats JitFn::stats() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stats;
}

JitFn::operator Fn() const {
  JitFn self = *this;
  return [self](const std::vector<Tensor>& args) { return self(args); };
}

JitFn jit(Fn fn) { return JitFn(std::move(fn)); }

}  // namespace bprop
