// Training wrappers (MindSpore's WithLossCell and TrainOneStepCell): a backbone joined to its loss, and one
// call that computes the loss, its gradients w.r.t. the optimizer's parameters, and applies the update.
#pragma once
#include <memory>
#include <vector>

#include "bprop/amp.h"
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
/// parameters, applies the optimizer, and returns the loss computed before the update. With `has_aux` the network
/// returns (loss, aux...) (a classifier's logits, say): the gradients are the loss's, and the cell returns
/// (loss, aux...), all computed before the update.
class TrainOneStepCell : public Cell {
 public:
  TrainOneStepCell(std::shared_ptr<Cell> network, std::shared_ptr<optim::Optimizer> optimizer, bool has_aux = false);
  Value construct(const std::vector<Tensor>& inputs) override;
  /// One training step; the loss as a tensor.
  Tensor step(const std::vector<Tensor>& inputs);
  const std::shared_ptr<Cell>& network() const { return network_; }
  const std::shared_ptr<optim::Optimizer>& optimizer() const { return optimizer_; }

 private:
  std::shared_ptr<Cell> network_;
  std::shared_ptr<optim::Optimizer> optimizer_;
  bool has_aux_;
};

/// MindSpore's TrainOneStepWithLossScaleCell (PyTorch's GradScaler around a step): construct(inputs...) takes the
/// gradients of loss * scale w.r.t. the optimizer's parameters, unscales them, and applies the optimizer only when
/// every unscaled gradient is finite; then the scaler adjusts its scale (a dynamic scaler halves it after an
/// overflow). Returns (loss, overflow, scale): the loss before the update, a 0-d bool that is true when the step was
/// skipped, and the scale this step used. Eager and jitted steps give the same bits; under jit nothing is read back
/// (the skip is a select in the graph). With `has_aux` the network returns (loss, aux...) and the cell
/// (loss, overflow, scale, aux...).
class TrainOneStepWithLossScaleCell : public Cell {
 public:
  TrainOneStepWithLossScaleCell(std::shared_ptr<Cell> network, std::shared_ptr<optim::Optimizer> optimizer,
                                std::shared_ptr<amp::LossScaler> scaler, bool has_aux = false);
  Value construct(const std::vector<Tensor>& inputs) override;
  const std::shared_ptr<Cell>& network() const { return network_; }
  const std::shared_ptr<optim::Optimizer>& optimizer() const { return optimizer_; }
  const std::shared_ptr<amp::LossScaler>& scaler() const { return scaler_; }

 private:
  std::shared_ptr<Cell> network_;
  std::shared_ptr<optim::Optimizer> optimizer_;
  std::shared_ptr<amp::LossScaler> scaler_;
  bool has_aux_;
};

/// The scaled step's arithmetic, shared by TrainOneStepWithLossScaleCell and data-parallel training: from the
/// gradients of the scaled loss, the unscaled gradients and whether they are all finite.
struct UnscaledGradients {
  std::vector<Tensor> grads;
  Tensor finite;  // 0-d bool
};
UnscaledGradients unscale_and_check(const amp::LossScaler& scaler, const std::vector<Tensor>& scaled_grads);

}  // namespace bprop::nn
