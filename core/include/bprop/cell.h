// Cell: a module with parameters and sub-cells, optionally with its own backward operator (MindSpore's
// Cell.bprop, the second way to define one). SequentialCell chains cells.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bprop/grad.h"

namespace bprop {

namespace amp {
enum class Level;  // bprop/amp.h
}

class Cell {
 public:
  virtual ~Cell() = default;

  /// The forward computation.
  virtual Value construct(const std::vector<Tensor>& inputs) = 0;
  /// Override with `true` together with bprop() to replace automatic differentiation of construct.
  virtual bool has_bprop() const { return false; }
  /// (inputs..., out, dout) -> one gradient per input; written with ops it differentiates again.
  virtual std::vector<Tensor> bprop(const std::vector<Tensor>& inputs, const Tensor& out, const Tensor& dout);

  /// Calls construct, through the custom bprop when there is one; in graph mode (bprop/context.h) through a
  /// jit of that, one graph per signature and train/eval mode.
  Value operator()(const std::vector<Tensor>& inputs);
  Tensor operator()(const Tensor& x);
  /// Two inputs, one tensor out (losses: loss(logits, labels)).
  Tensor operator()(const Tensor& x, const Tensor& y);

  /// Parameters of this cell and its sub-cells with requires_grad, in registration order; a parameter
  /// registered under several names (tied weights) is listed once.
  std::vector<Parameter> trainable_params() const;
  /// Every parameter with its dotted path ("fc1.weight"), state such as BatchNorm's moving statistics included.
  std::vector<std::pair<std::string, Parameter>> parameters_and_names() const;
  /// Direct sub-cells with their names, in registration order.
  const std::vector<std::pair<std::string, std::shared_ptr<Cell>>>& name_cells() const { return cells_; }
  /// Every sub-cell below this one with its dotted path ("features.0"), depth first.
  std::vector<std::pair<std::string, std::shared_ptr<Cell>>> cells_and_names() const;
  void set_train(bool mode = true);
  bool training() const { return training_; }
  /// MindSpore's set_grad: marks whether this cell's parameters are differentiated (requires_grad). State
  /// registered with register_state (moving statistics) is left non-trainable.
  void set_grad(bool requires_grad = true);
  const std::string& cell_name() const { return name_; }
  /// Runs this cell's calls under automatic mixed precision (amp::auto_mixed_precision sets it; level O0 = none).
  void set_mixed_precision(amp::Level level, DType dtype);
  amp::Level mixed_precision_level() const { return amp_level_; }
  DType mixed_precision_dtype() const { return amp_dtype_; }

  /// Adds a parameter under `name` (ValueError when the name is taken in this cell) and returns it.
  Parameter register_parameter(const std::string& name, const Parameter& p);
  /// Adds non-trainable state (requires_grad false, untouched by set_grad) that checkpoints save and load.
  Parameter register_state(const std::string& name, const Parameter& p);
  /// Adds a sub-cell under `name` (ValueError when the name is taken in this cell) and returns it.
  template <typename C>
  std::shared_ptr<C> register_cell(const std::string& name, std::shared_ptr<C> cell) {
    if (!cell) throw ValueError("Cell '" + name_ + "': register_cell('" + name + "') was given no cell");
    check_new_name(name);
    cell->name_ = name;
    cells_.emplace_back(name, cell);
    return cell;
  }

 private:
  void check_new_name(const std::string& name) const;
  Value eager_call(const std::vector<Tensor>& inputs);
  Value construct_or_bprop(const std::vector<Tensor>& inputs);
  // Graph mode's jit caches of this cell's calls. They call this object, so a copy of the cell starts its own.
  struct GraphCache {
    std::shared_ptr<detail::GraphModeCache> p;
    GraphCache() = default;
    GraphCache(const GraphCache&) {}
    GraphCache& operator=(const GraphCache&) {
      p.reset();
      return *this;
    }
  };
  GraphCache graph_;

  std::string name_;
  bool training_ = true;
  amp::Level amp_level_{};  // O0
  DType amp_dtype_ = DType::Float16;
  std::vector<std::pair<std::string, Parameter>> params_;
  std::vector<bool> is_state_;  // parallel to params_
  std::vector<std::pair<std::string, std::shared_ptr<Cell>>> cells_;
};

/// Runs its cells in order: the first receives the inputs, each next one the previous output (MindSpore's
/// SequentialCell). Sub-cells are named "0", "1", ...
class SequentialCell : public Cell {
 public:
  SequentialCell() = default;
  explicit SequentialCell(std::vector<std::shared_ptr<Cell>> cells);
  SequentialCell(std::initializer_list<std::shared_ptr<Cell>> cells);

  void append(std::shared_ptr<Cell> cell);
  size_t size() const { return name_cells().size(); }
  /// The i-th cell (ValueError when out of range).
  std::shared_ptr<Cell> operator[](size_t i) const;

  Value construct(const std::vector<Tensor>& inputs) override;
};

/// Holds cells named "0", "1", ... for a parent that calls them itself (MindSpore's CellList, PyTorch's
/// ModuleList): their parameters get the paths "blocks.0.weight". Calling the list is a ValueError.
class CellList : public Cell {
 public:
  CellList() = default;
  void append(std::shared_ptr<Cell> cell);
  size_t size() const { return name_cells().size(); }
  /// The i-th cell (ValueError when out of range).
  std::shared_ptr<Cell> operator[](size_t i) const;

  Value construct(const std::vector<Tensor>& inputs) override;
};

}  // namespace bprop
