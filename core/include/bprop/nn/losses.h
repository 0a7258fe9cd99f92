// Losses as Cells with MindSpore's names and argument orders (mindspore.nn): loss(logits, labels) -> Tensor.
// Each wraps the loss op of the same meaning; reduction is "mean", "sum" or "none".
#pragma once
#include <cstdint>
#include <string>

#include "bprop/cell.h"

namespace bprop::nn {

/// Two inputs (prediction, target); checks the reduction name.
class LossBase : public Cell {
 public:
  const std::string& reduction() const { return reduction_; }

 protected:
  LossBase(const std::string& name, const std::string& reduction);
  /// The two inputs; ValueError naming the loss otherwise.
  std::pair<Tensor, Tensor> two_inputs(const std::vector<Tensor>& inputs) const;
  std::string loss_name_;
  std::string reduction_;
};

/// binary_cross_entropy_with_logits; weight rescales each element, pos_weight the positive term per class
/// (broadcast over the last axis).
class BCEWithLogitsLoss : public LossBase {
 public:
  explicit BCEWithLogitsLoss(const std::string& reduction = "mean", Tensor weight = {}, Tensor pos_weight = {});
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  Tensor weight_, pos_weight_;
};

/// binary_cross_entropy on probabilities.
class BCELoss : public LossBase {
 public:
  explicit BCELoss(Tensor weight = {}, const std::string& reduction = "mean");
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  Tensor weight_;
};

/// cross_entropy of logits (N, C) or (N, C, d...) and int32 class labels; weight per class; labels equal to
/// ignore_index add nothing; label_smoothing mixes the one-hot target with the uniform one.
class CrossEntropyLoss : public LossBase {
 public:
  explicit CrossEntropyLoss(Tensor weight = {}, int64_t ignore_index = -100, const std::string& reduction = "mean",
                            double label_smoothing = 0.0);
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  Tensor weight_;
  int64_t ignore_index_;
  double label_smoothing_;
};

/// nll_loss of log-probabilities and int32 class labels.
class NLLLoss : public LossBase {
 public:
  explicit NLLLoss(Tensor weight = {}, int64_t ignore_index = -100, const std::string& reduction = "mean");
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  Tensor weight_;
  int64_t ignore_index_;
};

class MSELoss : public LossBase {
 public:
  explicit MSELoss(const std::string& reduction = "mean");
  Value construct(const std::vector<Tensor>& inputs) override;
};

class L1Loss : public LossBase {
 public:
  explicit L1Loss(const std::string& reduction = "mean");
  Value construct(const std::vector<Tensor>& inputs) override;
};

/// Quadratic below beta, linear above. The default reduction is "mean" (MindSpore's is "none").
class SmoothL1Loss : public LossBase {
 public:
  explicit SmoothL1Loss(double beta = 1.0, const std::string& reduction = "mean");
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  double beta_;
};

}  // namespace bprop::nn
