// Internal: one forward pass recorded at its own level, then any number of backward (and jvp) passes.
#pragma once
#include <memory>
#include <vector>

#include "bprop/grad.h"

namespace bprop::autodiff {

struct Node;

struct Pullback {
  int level = 0;
  Tensor out;                               // fn's output, with this level's history
  std::vector<Tensor> inputs;               // the differentiated inputs
  std::vector<std::shared_ptr<Node>> leaves;

  /// v . d out / d inputs (zeros where an input does not influence out).
  std::vector<Tensor> operator()(const Tensor& v) const;
  /// d out / d inputs . tangents.
  Tensor jvp(const std::vector<Tensor>& tangents) const;
  /// The output without this level's history.
  Tensor value() const;
};

/// Runs fn with the inputs at `positions` differentiated at a new (then closed) level.
Pullback forward_for_vjp(const Fn& fn, const std::vector<Tensor>& inputs, const std::vector<int>& positions,
                         const char* api);

}  // namespace bprop::autodiff
