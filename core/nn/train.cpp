#include "bprop/nn/train.h"

namespace bprop::nn {

WithLossCell::WithLossCell(std::shared_ptr<Cell> backbone, std::shared_ptr<Cell> loss_fn)
    : backbone_(register_cell("backbone", std::move(backbone))),
      loss_fn_(register_cell("loss_fn", std::move(loss_fn))) {}

Value WithLossCell::construct(const std::vector<Tensor>& inputs) {
  if (inputs.size() < 2) {
    throw ValueError("For 'WithLossCell', expected the data and the label (at least 2 inputs), got " +
                     std::to_string(inputs.size()));
  }
  const std::vector<Tensor> data(inputs.begin(), inputs.end() - 1);
  const Value out = (*backbone_)(data);
  if (!out.is_tensor()) {
    throw ValueError("For 'WithLossCell', the backbone must return one tensor, got a tuple of " +
                     std::to_string(out.size()));
  }
  return (*loss_fn_)(out.tensor(), inputs.back());
}

TrainOneStepCell::TrainOneStepCell(std::shared_ptr<Cell> network, std::shared_ptr<optim::Optimizer> optimizer)
    : network_(register_cell("network", std::move(network))), optimizer_(std::move(optimizer)) {
  if (!optimizer_) throw ValueError("For 'TrainOneStepCell', no optimizer was given");
}

Value TrainOneStepCell::construct(const std::vector<Tensor>& inputs) {
  Cell& net = *network_;
  const Fn loss_fn = [&net](const std::vector<Tensor>& in) -> Value { return net(in); };
  const Value r = value_and_grad(loss_fn, nullptr, optimizer_->parameters())(inputs);
  optimizer_->apply_gradients(r[1]);
  return r[0];
}

Tensor TrainOneStepCell::step(const std::vector<Tensor>& inputs) { return construct(inputs).tensor(); }

}  // namespace bprop::nn
