// Tracing: while a function runs under jit, every op whose inputs include a traced (abstract) tensor, or a
// Parameter, appends a node to the trace instead of computing. Abstract tensors have a shape and a dtype and no
// storage; shape and dtype come from the ops' own infer_shape / infer_dtype, gradients from their own bprops.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/ir.h"

namespace bprop::autodiff {
struct Node;
}

namespace bprop::graph {

class Tracer {
 public:
  Tracer();
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  /// A new abstract argument of the traced function.
  Tensor add_input(const Shape& shape, DType dtype);
  /// Records out = op(inputs) and returns the abstract output.
  Tensor add_node(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, const Shape& shape,
                  DType dtype);
  /// Records `param`.assign(value): the graph writes value into param's storage at the end of every replay,
  /// and reads of param later in the trace see value.
  void assign(const Tensor& param, const Tensor& value);
  /// Where the next nodes come from (a source location), until set again.
  void set_location(std::string where) { location_ = std::move(where); }
  const std::string& location() const { return location_; }
  /// Remembers the current location as the origin of the tape nodes that produced `out` (a traced op's, or a
  /// custom bprop's), so that the nodes their bprops add (the backward of that op) carry the forward op's location,
  /// not the last one set.
  void note_origins(const Tensor& out);
  /// The location noted for `node`, or null.
  const std::string* origin_of(const autodiff::Node* node) const;
  /// The finished graph returning `result`; the tracer is spent.
  std::shared_ptr<Graph> finish(const Value& result);

 private:
  int value_of(const Tensor& t);  // the id of an abstract tensor, or a new constant for a concrete one

  Graph* graph_;
  std::shared_ptr<Graph> owned_;
  // An abstract value is known by its storage (detached copies and grad leaves share it, with the same shape);
  // a constant by its tensor (views of one buffer with other shapes are other values).
  std::unordered_map<const Storage*, int> abstract_ids_;
  std::unordered_map<const TensorImpl*, int> constant_ids_;
  std::unordered_map<const Storage*, int> assigned_;  // a Parameter's storage -> the value it was assigned
  std::vector<Tensor> alive_;  // keeps every recorded tensor alive, so that no address is reused while tracing
  std::string location_;
  // (weak: a node freed while tracing and an other one made at its address are told apart)
  std::unordered_map<const autodiff::Node*, std::pair<std::weak_ptr<autodiff::Node>, std::string>> origins_;
  Tracer* outer_;
};

/// Sets a tracer's location for its lifetime, then puts the previous one back.
class LocationScope {
 public:
  LocationScope(Tracer& tracer, const std::string& where) : tracer_(tracer), previous_(tracer.location()) {
    tracer_.set_location(where);
  }
  ~LocationScope() { tracer_.set_location(std::move(previous_)); }
  LocationScope(const LocationScope&) = delete;
  LocationScope& operator=(const LocationScope&) = delete;

 private:
  Tracer& tracer_;
  std::string previous_;
};

/// The trace being recorded on this thread, or null.
Tracer* current_tracer();
inline bool tracing() { return current_tracer() != nullptr; }
/// The current trace; a ValueError naming `op` when an abstract tensor is used outside any trace.
Tracer& current_tracer_or_throw(const std::string& op);

/// A ValueError explaining that `what` needs a value that tracing does not have.
[[noreturn]] void throw_no_value(const char* what);

}  // namespace bprop::graph
