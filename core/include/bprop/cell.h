// Cell: a module with parameters and sub-cells, optionally with its own backward operator (MindSpore's
// Cell.bprop, the second way to define one).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bprop/grad.h"

namespace bprop {

class Cell {
 public:
  virtual ~Cell() = default;

  /// The forward computation.
  virtual Value construct(const std::vector<Tensor>& inputs) = 0;
  /// Override with `true` together with bprop() to replace automatic differentiation of construct.
  virtual bool has_bprop() const { return false; }
  /// (inputs..., out, dout) -> one gradient per input; written with ops it differentiates again.
  virtual std::vector<Tensor> bprop(const std::vector<Tensor>& inputs, const Tensor& out, const Tensor& dout);

  /// Calls construct, through the custom bprop when there is one.
  Value operator()(const std::vector<Tensor>& inputs);
  Tensor operator()(const Tensor& x);

  /// Parameters of this cell and its sub-cells with requires_grad, in registration order.
  std::vector<Parameter> trainable_params() const;
  /// Every parameter with its dotted path ("fc1.weight").
  std::vector<std::pair<std::string, Parameter>> parameters_and_names() const;
  void set_train(bool mode = true);
  bool training() const { return training_; }
  /// MindSpore's set_grad: marks whether this cell's parameters are differentiated (requires_grad).
  void set_grad(bool requires_grad = true);
  const std::string& cell_name() const { return name_; }

 protected:
  Parameter register_parameter(const std::string& name, const Parameter& p);
  template <typename C>
  std::shared_ptr<C> register_cell(const std::string& name, std::shared_ptr<C> cell) {
    cell->name_ = name;
    cells_.emplace_back(name, cell);
    return cell;
  }

 private:
  std::string name_;
  bool training_ = true;
  std::vector<std::pair<std::string, Parameter>> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Cell>>> cells_;
};

}  // namespace bprop
