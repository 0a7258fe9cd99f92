#include "bprop/cell.h"

#include "bprop/amp.h"
#include "bprop/context.h"
#include "graph/graph_mode.h"

#include <unordered_set>

namespace bprop {

std::vector<Tensor> Cell::bprop(const std::vector<Tensor>&, const Tensor&, const Tensor&) {
  throw ValueError("Cell '" + name_ + "': has_bprop() is true but bprop() is not overridden");
}

Value Cell::operator()(const std::vector<Tensor>& inputs) {
  if (!detail::graph_mode_call()) return eager_call(inputs);
  if (!graph_.p) graph_.p = std::make_shared<detail::GraphModeCache>();
  std::unique_ptr<JitFn>& jitted = graph_.p->modes[training() ? 1 : 0];
  if (!jitted) jitted = std::make_unique<JitFn>([this](const std::vector<Tensor>& in) { return eager_call(in); });
  return (*jitted)(inputs);
}

namespace {

// MindSpore's output cast of a mixed-precision network: half results leave it as float32.
Value outputs_to_float32(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.tensor();
    return t.defined() && is_half(t.dtype()) ? Value(ops::cast(t, DType::Float32)) : v;
  }
  std::vector<Value> items;
  for (const Value& item : v.items()) items.push_back(outputs_to_float32(item));
  return Value(std::move(items));
}

}  // namespace

void Cell::set_mixed_precision(amp::Level level, DType dtype) {
  if (!is_half(dtype)) {
    throw DTypeError("For 'auto_mixed_precision', the dtype must be float16 or bfloat16, got " +
                     std::string(dtype_name(dtype)));
  }
  amp_level_ = level;
  amp_dtype_ = dtype;
  graph_.p.reset();  // graph mode traces the calls again, with the casts
}

Value Cell::eager_call(const std::vector<Tensor>& inputs) {
  if (amp_level_ == amp::Level::O0) return construct_or_bprop(inputs);
  Value out;
  {
    const amp::AutocastScope autocast(amp_level_, amp_dtype_);
    out = construct_or_bprop(inputs);
  }
  return outputs_to_float32(out);
}

Value Cell::construct_or_bprop(const std::vector<Tensor>& inputs) {
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

Tensor Cell::operator()(const Tensor& x, const Tensor& y) {
  const Value v = (*this)(std::vector<Tensor>{x, y});
  return v.tensor();
}

void Cell::check_new_name(const std::string& name) const {
  const std::string who = name_.empty() ? std::string("Cell") : "Cell '" + name_ + "'";
  if (name.empty()) throw ValueError(who + ": a parameter or sub-cell name must not be empty");
  if (name.find('.') != std::string::npos) {
    throw ValueError(who + ": the name '" + name + "' must not contain '.' (it separates path components)");
  }
  for (const auto& [n, p] : params_) {
    if (n == name) throw ValueError(who + ": the name '" + name + "' is already a parameter of this cell");
  }
  for (const auto& [n, c] : cells_) {
    if (n == name) throw ValueError(who + ": the name '" + name + "' is already a sub-cell of this cell");
  }
}

Parameter Cell::register_parameter(const std::string& name, const Parameter& p) {
  if (!p.defined()) throw ValueError("Cell '" + name_ + "': register_parameter('" + name + "') was given no tensor");
  check_new_name(name);
  params_.emplace_back(name, p);
  is_state_.push_back(false);
  return p;
}

Parameter Cell::register_state(const std::string& name, const Parameter& p) {
  if (!p.defined()) throw ValueError("Cell '" + name_ + "': register_state('" + name + "') was given no tensor");
  check_new_name(name);
  Parameter state = p;
  state.set_requires_grad(false);
  params_.emplace_back(name, state);
  is_state_.push_back(true);
  return state;
}

std::vector<std::pair<std::string, Parameter>> Cell::parameters_and_names() const {
  std::vector<std::pair<std::string, Parameter>> out = params_;
  for (const auto& [name, cell] : cells_) {
    for (auto& [sub, p] : cell->parameters_and_names()) out.emplace_back(name + "." + sub, p);
  }
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Cell>>> Cell::cells_and_names() const {
  std::vector<std::pair<std::string, std::shared_ptr<Cell>>> out;
  for (const auto& [name, cell] : cells_) {
    out.emplace_back(name, cell);
    for (auto& [sub, c] : cell->cells_and_names()) out.emplace_back(name + "." + sub, c);
  }
  return out;
}

std::vector<Parameter> Cell::trainable_params() const {
  std::vector<Parameter> out;
  std::unordered_set<const TensorImpl*> seen;
  for (auto& [name, p] : parameters_and_names()) {
    if (p.requires_grad() && seen.insert(p.impl()).second) out.push_back(p);
  }
  return out;
}

void Cell::set_train(bool mode) {
  training_ = mode;
  for (auto& [name, cell] : cells_) cell->set_train(mode);
}

void Cell::set_grad(bool requires_grad) {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!is_state_[i]) params_[i].second.set_requires_grad(requires_grad);
  }
  for (auto& [name, cell] : cells_) cell->set_grad(requires_grad);
}

// ---- SequentialCell -------------------------------------------------------------------------------------

SequentialCell::SequentialCell(std::vector<std::shared_ptr<Cell>> cells) {
  for (auto& c : cells) append(std::move(c));
}

SequentialCell::SequentialCell(std::initializer_list<std::shared_ptr<Cell>> cells) {
  for (const auto& c : cells) append(c);
}

void SequentialCell::append(std::shared_ptr<Cell> cell) {
  if (!cell) throw ValueError("SequentialCell: append was given no cell");
  register_cell(std::to_string(size()), std::move(cell));
}

std::shared_ptr<Cell> SequentialCell::operator[](size_t i) const {
  if (i >= size()) {
    throw ValueError("SequentialCell: index " + std::to_string(i) + " is out of range for " + std::to_string(size()) +
                     " cells");
  }
  return name_cells()[i].second;
}

Value SequentialCell::construct(const std::vector<Tensor>& inputs) {
  if (size() == 0) {
    if (inputs.size() == 1) return inputs[0];
    return Value::tuple(inputs);
  }
  Value v = (*name_cells()[0].second)(inputs);
  for (size_t i = 1; i < size(); ++i) v = (*name_cells()[i].second)(v.flatten());
  return v;
}

// ---- CellList -------------------------------------------------------------------------------------------

void CellList::append(std::shared_ptr<Cell> cell) {
  if (!cell) throw ValueError("CellList: append was given no cell");
  register_cell(std::to_string(size()), std::move(cell));
}

std::shared_ptr<Cell> CellList::operator[](size_t i) const {
  if (i >= size()) {
    throw ValueError("CellList: index " + std::to_string(i) + " is out of range for " + std::to_string(size()) +
                     " cells");
  }
  return name_cells()[i].second;
}

Value CellList::construct(const std::vector<Tensor>&) {
  throw ValueError("CellList '" + cell_name() + "' holds cells for its parent to call; it cannot be called itself");
}

}  // namespace bprop
