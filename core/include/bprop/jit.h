// Graph mode: jit(fn) traces fn once per signature (argument shapes and dtypes) into a graph holding every op
// it runs, the backward ops of any grad / value_and_grad / vjp inside it included (they come from the same
// bprops), and replays that graph on later calls without per-op inference, attribute parsing or taping.
//
//   Fn step = jit(value_and_grad(loss, 0));
//   Value r = step({x});                  // traced on the first call with this shape, replayed after
//   std::string ir = step.lower({x});     // the graph as text
//
// Inside a traced function, tensors are abstract (a shape and a dtype): reading a value (item, to_vector) is an
// error that says so. Parameters stay live inputs (an optimizer's in-place update is seen by the next call);
// other tensors the function captures are constants. Creating random tensors or assigning Parameters inside is
// refused. A grad level open around a jitted call (grad(jit(f))) runs fn eagerly, so gradients stay exact.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bprop/grad.h"

namespace bprop {

namespace graph {
struct Graph;
}

struct JitStats {
  int64_t traces = 0;      // signatures traced so far
  int64_t replays = 0;     // calls answered from the cache
  int64_t eager_calls = 0; // calls run eagerly (a grad level was open)
  int64_t nodes = 0;       // nodes of the most recent graph
};

class JitFn {
 public:
  explicit JitFn(Fn fn);
  Value operator()(const std::vector<Tensor>& args) const;
  /// The graph for these arguments' signature, as text (traced now if it was not).
  std::string lower(const std::vector<Tensor>& args) const;
  JitStats stats() const;
  /// As an Fn (jit(f) where a function is expected).
  operator Fn() const;

 private:
  struct State;
  std::shared_ptr<const graph::Graph> compiled(const std::vector<Tensor>& args) const;
  Fn fn_;
  std::shared_ptr<State> state_;
};

/// fn traced into a graph on first call per signature and replayed after.
JitFn jit(Fn fn);

}  // namespace bprop
