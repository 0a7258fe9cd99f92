// Splitting a traced forward-and-backward graph at its cotangent, for grad(jit(f)): the forward part runs when f is
// called and keeps what the backward part reads (its residuals, as autodiff saves tensors for a bprop); the
// backward part then runs from those and the cotangent alone, instead of tracing f's forward again.
#pragma once
#include <memory>

#include "graph/executable.h"

namespace bprop::graph {

struct SplitGraphs {
  /// (args...) -> (f's value, residuals...)
  std::shared_ptr<const Executable> forward;
  /// (args..., dout, residuals...) -> one gradient per argument
  std::shared_ptr<const Executable> backward;
  size_t residuals = 0;
};

/// `joint` takes (args..., dout) and returns (value, grads...) (optimised, not fused, no Parameter updates). A node
/// goes to the backward part when it reads the cotangent, directly or through other nodes; every other node, the
/// dout-independent parts of the bprops included, to the forward part. Both parts are compiled for `device` (fused
/// when `fuse` and on the CPU).
SplitGraphs split_at_cotangent(const Graph& joint, Device device, bool fuse);

}  // namespace bprop::graph
