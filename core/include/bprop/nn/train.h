// Training wrappers (MindSpore's WithLossCell and TrainOneStepCell): a backbone joined to its loss, and one
// call that computes the loss, its gradients w.r.t. the optimizer's parameters, and applies the update.
#pragma once
#include <memory>
#include <vector>

#include "bprop/cell.h"
#include "bprop/nn/optim.h"

namespace bprop::nn {

/// construct(data..., label) = loss_fn(backbone(data...), label).
class WithLossCell : public Cell {
 public:
  WithLossCell(std::shared_ptr<Cell> backbone, std::shared_ptr<Cell> loss_fn);
  Value construct(const std::vector<Tensor>& inputs) override;
  const std::shared_ptr<Cell>& backbone() const { return backbone_; }

 private:
  std::shared_ptr<Cell> backbone_, loss_fn_;
};

/// construct(inputs...) runs value_and_grad of `network` (which returns the loss) w.r.t. the optimizer's
/// parameters, applies the optimizer, and returns the loss computed before the update.
class TrainOneStepCell : public Cell {
 public:
  TrainOneStepCell(std::shared_ptr<Cell> network, std::shared_ptr<optim::Optimizer> optimizer);
  Value construct(const std::vector<Tensor>& inputs) override;
  /// One training step; the loss as a tensor.
  Tensor step(const std::vector<Tensor>& inputs);
  const std::shared_ptr<Cell>& network() const { return network_; }
  const std::shared_ptr<optim::Optimizer>& optimizer() const { return optimizer_; }

 private:
  std::shared_ptr<Cell> network_;
  std::shared_ptr<optim::Optimizer> optimizer_;
};

}  // namespace bprop::nn
