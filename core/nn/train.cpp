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

namespace {

// The network's result as (loss, aux...) for value_and_grad with has_aux: `who` names the cell in the error.
Value loss_and_aux(const Value& v, bool has_aux, const char* who) {
  if (!has_aux) {
    if (!v.is_tensor()) {
      throw ValueError(std::string("For '") + who + "', the network must return the loss, got a tuple of " +
                       std::to_string(v.size()) + " (give has_aux to return more)");
    }
    return v;
  }
  if (v.is_tensor() || v.size() == 0 || !v[0].is_tensor()) {
    throw ValueError(std::string("For '") + who + "', with has_aux the network must return (loss, aux...), got " +
                     (v.is_tensor() ? std::string("one tensor") : "a tuple of " + std::to_string(v.size())));
  }
  return v;
}

}  // namespace

TrainOneStepCell::TrainOneStepCell(std::shared_ptr<Cell> network, std::shared_ptr<optim::Optimizer> optimizer,
                                   bool has_aux)
    : network_(register_cell("network", std::move(network))), optimizer_(std::move(optimizer)), has_aux_(has_aux) {
  if (!optimizer_) throw ValueError("For 'TrainOneStepCell', no optimizer was given");
}

Value TrainOneStepCell::construct(const std::vector<Tensor>& inputs) {
  Cell& net = *network_;
  const bool has_aux = has_aux_;
  const Fn loss_fn = [&net, has_aux](const std::vector<Tensor>& in) -> Value {
    return loss_and_aux(net(in), has_aux, "TrainOneStepCell");
  };
  const Value r = value_and_grad(loss_fn, nullptr, optimizer_->parameters(), has_aux)(inputs);
  optimizer_->apply_gradients(r[1]);
  return r[0];
}

Tensor TrainOneStepCell::step(const std::vector<Tensor>& inputs) { return construct(inputs).tensor(); }

UnscaledGradients unscale_and_check(const amp::LossScaler& scaler, const std::vector<Tensor>& scaled_grads) {
  UnscaledGradients out;
  out.grads = scaler.unscale(scaled_grads);
  out.finite = amp::all_finite(out.grads);
  return out;
}

TrainOneStepWithLossScaleCell::TrainOneStepWithLossScaleCell(std::shared_ptr<Cell> network,
                                                             std::shared_ptr<optim::Optimizer> optimizer,
                                                             std::shared_ptr<amp::LossScaler> scaler, bool has_aux)
    : network_(register_cell("network", std::move(network))),
      optimizer_(std::move(optimizer)),
      scaler_(std::move(scaler)),
      has_aux_(has_aux) {
  if (!optimizer_) throw ValueError("For 'TrainOneStepWithLossScaleCell', no optimizer was given");
  if (!scaler_) throw ValueError("For 'TrainOneStepWithLossScaleCell', no loss scaler was given");
}

Value TrainOneStepWithLossScaleCell::construct(const std::vector<Tensor>& inputs) {
  Cell& net = *network_;
  const amp::LossScaler& scaler = *scaler_;
  const bool has_aux = has_aux_;
  // (the scale is copied: the scaler updates it in place at the end of the step)
  const Tensor scale = ops::cast(scaler.scale_value(), DType::Float64);
  // (scaled loss, (loss, aux...)): the gradients are the scaled loss's
  const Fn scaled_loss = [&net, &scaler, has_aux](const std::vector<Tensor>& in) -> Value {
    const Value v = loss_and_aux(net(in), has_aux, "TrainOneStepWithLossScaleCell");
    const Tensor loss = has_aux ? v[0].tensor() : v.tensor();
    return Value{scaler.scale(loss), v};
  };
  const Value r = value_and_grad(scaled_loss, nullptr, optimizer_->parameters(), /*has_aux=*/true)(inputs);
  const UnscaledGradients g = unscale_and_check(scaler, r[1].flatten());
  optimizer_->step(g.grads, g.finite);
  scaler_->adjust(g.finite);
  const Value& out = r[0][1];
  std::vector<Value> result{has_aux ? out[0] : out, Value(ops::equal(g.finite, full({}, 0.0, DType::Bool))),
                            Value(ops::cast(scale, DType::Float32))};
  for (size_t i = 1; has_aux && i < out.size(); ++i) result.push_back(out[i]);
  return Value(std::move(result));
}

}  // namespace bprop::nn
