// Internal: an observer of op calls and backward steps, used to export the recorded graph (one per thread).
#pragma once
#include <vector>

#include "bprop/registry.h"

namespace bprop::autodiff {

struct Node;

class GraphObserver {
 public:
  virtual ~GraphObserver() = default;
  /// A top-level op call (ops inside kernels, e.g. of composite ops, are not reported); after recording.
  virtual void on_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, const Tensor& out) = 0;
  /// The backward walk is about to call node's bprop with dout.
  virtual void on_bprop_begin(const Node& node, const Tensor& dout) = 0;
  /// node's bprop returned dx (one per input, undefined where none).
  virtual void on_bprop_end(const Node& node, const std::vector<Tensor>& dx) = 0;
};

/// The current thread's observer (null: none, the normal case).
GraphObserver*& graph_observer();

}  // namespace bprop::autodiff
