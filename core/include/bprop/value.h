// Value: what functions under grad take apart and return — a tensor or a tuple of values (a small pytree).
#pragma once
#include <initializer_list>
#include <vector>

#include "bprop/tensor.h"

namespace bprop {

class Value {
 public:
  Value() : is_tensor_(false) {}
  Value(Tensor t) : tensor_(std::move(t)), is_tensor_(true) {}
  Value(std::vector<Value> items) : items_(std::move(items)), is_tensor_(false) {}
  Value(std::initializer_list<Value> items) : items_(items), is_tensor_(false) {}
  static Value tuple(std::vector<Tensor> ts);

  bool is_tensor() const { return is_tensor_; }
  /// The tensor; ValueError if this is a tuple.
  const Tensor& tensor() const;
  /// The items; ValueError if this is a tensor.
  const std::vector<Value>& items() const;
  size_t size() const { return is_tensor_ ? 1 : items_.size(); }
  const Value& operator[](size_t i) const;
  /// Every tensor in order, depth first.
  std::vector<Tensor> flatten() const;

 private:
  Tensor tensor_;
  std::vector<Value> items_;
  bool is_tensor_;
};

}  // namespace bprop
