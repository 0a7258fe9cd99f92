#include "bprop/nn/losses.h"
#include "tensor/format.h"

namespace bprop::nn {

LossBase::LossBase(const std::string& name, const std::string& reduction) : loss_name_(name), reduction_(reduction) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none") {
    throw ValueError("For '" + name + "', reduction must be 'mean', 'sum' or 'none', got '" + reduction + "'");
  }
}

std::pair<Tensor, Tensor> LossBase::two_inputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != 2 || !inputs[0].defined() || !inputs[1].defined()) {
    throw ValueError("For '" + loss_name_ + "', expected 2 input tensors (prediction, target), got " +
                     std::to_string(inputs.size()));
  }
  return {inputs[0], inputs[1]};
}

BCEWithLogitsLoss::BCEWithLogitsLoss(const std::string& reduction, Tensor weight, Tensor pos_weight)
    : LossBase("BCEWithLogitsLoss", reduction), weight_(std::move(weight)), pos_weight_(std::move(pos_weight)) {}

Value BCEWithLogitsLoss::construct(const std::vector<Tensor>& inputs) {
  const auto [logits, target] = two_inputs(inputs);
  return ops::binary_cross_entropy_with_logits(logits, target, weight_, pos_weight_, reduction_);
}

BCELoss::BCELoss(Tensor weight, const std::string& reduction)
    : LossBase("BCELoss", reduction), weight_(std::move(weight)) {}

Value BCELoss::construct(const std::vector<Tensor>& inputs) {
  const auto [probs, target] = two_inputs(inputs);
  return ops::binary_cross_entropy(probs, target, weight_, reduction_);
}

CrossEntropyLoss::CrossEntropyLoss(Tensor weight, int64_t ignore_index, const std::string& reduction,
                                   double label_smoothing)
    : LossBase("CrossEntropyLoss", reduction),
      weight_(std::move(weight)),
      ignore_index_(ignore_index),
      label_smoothing_(label_smoothing) {
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0)) {
    throw ValueError("For 'CrossEntropyLoss', label_smoothing must be in [0, 1], got " +
                     format_number(label_smoothing));
  }
}

Value CrossEntropyLoss::construct(const std::vector<Tensor>& inputs) {
  const auto [logits, labels] = two_inputs(inputs);
  return ops::cross_entropy(logits, labels, weight_, reduction_, ignore_index_, label_smoothing_);
}

NLLLoss::NLLLoss(Tensor weight, int64_t ignore_index, const std::string& reduction)
    : LossBase("NLLLoss", reduction), weight_(std::move(weight)), ignore_index_(ignore_index) {}

Value NLLLoss::construct(const std::vector<Tensor>& inputs) {
  const auto [log_probs, labels] = two_inputs(inputs);
  return ops::nll_loss(log_probs, labels, weight_, reduction_, ignore_index_);
}

MSELoss::MSELoss(const std::string& reduction) : LossBase("MSELoss", reduction) {}

Value MSELoss::construct(const std::vector<Tensor>& inputs) {
  const auto [x, y] = two_inputs(inputs);
  return ops::mse_loss(x, y, reduction_);
}

L1Loss::L1Loss(const std::string& reduction) : LossBase("L1Loss", reduction) {}

Value L1Loss::construct(const std::vector<Tensor>& inputs) {
  const auto [x, y] = two_inputs(inputs);
  return ops::l1_loss(x, y, reduction_);
}

SmoothL1Loss::SmoothL1Loss(double beta, const std::string& reduction)
    : LossBase("SmoothL1Loss", reduction), beta_(beta) {
  if (!(beta >= 0.0)) throw ValueError("For 'SmoothL1Loss', beta must not be negative, got " + format_number(beta));
}

Value SmoothL1Loss::construct(const std::vector<Tensor>& inputs) {
  const auto [x, y] = two_inputs(inputs);
  return ops::smooth_l1_loss(x, y, reduction_, beta_);
}

}  // namespace bprop::nn
