#include "bprop/cell.h"

namespace bprop {

std::vector<Tensor> Cell::bprop(const std::vector<Tensor>&, const Tensor&, const Tensor&) {
  throw ValueError("Cell '" + name_ + "': has_bprop() is true but bprop() is not overridden");
}

Value Cell::operator()(const std::vector<Tensor>& inputs) {
  if (!has_bprop()) return construct(inputs);
  const std::string label = name_.empty() ? std::string("Cell.bprop") : name_ + ".bprop";
  return Value(autodiff::apply_custom(
      label, inputs,
      [this, &label](const std::vector<Tensor>& in) {
        const Value v = construct(in);
        if (!v.is_tensor()) throw ValueError("For '" + label + "', construct must return one tensor");
        return v.tensor();
      },
      [this](const std::vector<Tensor>& in, const Tensor& out, const Tensor& dout) { return bprop(in, out, dout); }));
}

Tensor Cell::operator()(const Tensor& x) {
  const Value v = (*this)(std::vector<Tensor>{x});
  return v.tensor();
}

Parameter Cell::register_parameter(const std::string& name, const Parameter& p) {
  params_.emplace_back(name, p);
  return p;
}

std::vector<std::pair<std::string, Parameter>> Cell::parameters_and_names() const {
  std::vector<std::pair<std::string, Parameter>> out = params_;
  for (const auto& [name, cell] : cells_) {
    for (auto& [sub, p] : cell->parameters_and_names()) out.emplace_back(name + "." + sub, p);
  }
  return out;
}

std::vector<Parameter> Cell::trainable_params() const {
  std::vector<Parameter> out;
  for (auto& [name, p] : parameters_and_names()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

void Cell::set_train(bool mode) {
  training_ = mode;
  for (auto& [name, cell] : cells_) cell->set_train(mode);
}

void Cell::set_grad(bool requires_grad) {
  for (auto& [name, p] : parameters_and_names()) p.set_requires_grad(requires_grad);
}

}  // namespace bprop
