#include "ops/op_helpers.h"

#include <algorithm>

namespace bprop::opdef {

Shape same_shape(const InferCtx& c) { return c.input(0).shape(); }

Shape broadcast_shape(const InferCtx& c) {
  // The common case (one input, or equal shapes) needs no argument names: they only go into an error message.
  const Tensor* first = nullptr;
  size_t first_index = 0;
  bool all_equal = true;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) continue;
    if (!first) {
      first = &c.inputs[i];
      first_index = i;
    } else if (c.inputs[i].shape() != first->shape()) {
      all_equal = false;
    }
  }
  if (!first) return {};
  if (all_equal) return first->shape();
  auto arg_name = [&](size_t i) { return i < c.op.inputs.size() ? c.op.inputs[i].name : std::to_string(i); };
  const std::string first_name = arg_name(first_index);
  Shape s = first->shape();
  for (size_t i = first_index + 1; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].defined()) continue;
    s = broadcast_shapes(s, c.inputs[i].shape(), c.op.name, first_name.c_str(), arg_name(i).c_str());
  }
  return s;
}

DType same_dtype(const InferCtx& c) { return c.input(0).dtype(); }
DType float_dtype(const InferCtx& c) { return to_float(c.input(0).dtype()); }
DType bool_dtype(const InferCtx&) { return DType::Bool; }

DType numeric_dtype(const InferCtx& c) {
  const DType d = c.input(0).dtype();
  return d == DType::Bool ? DType::Int32 : d;
}

DType float_inputs_dtype(const InferCtx& c) {
  DType d = DType::Float32;
  bool first = true;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_input(i)) continue;
    require_float(c, i);
    d = first ? c.input(i).dtype() : promote_types(d, c.input(i).dtype());
    first = false;
  }
  return d;
}

DType promote_dtype(const InferCtx& c) {
  DType d = DType::Bool;
  for (const auto& t : c.inputs) {
    if (t.defined()) d = promote_types(d, t.dtype());
  }
  return d == DType::Bool ? DType::Int32 : d;
}

void require_float(const InferCtx& c, size_t i) {
  const Tensor& t = c.input(i);
  if (!is_float(t.dtype())) {
    c.dtype_error("argument '" + c.op.inputs[i].name + "' must be float32 or float64, got " + dtype_name(t.dtype()) +
                  " of shape " + shape_str(t.shape()));
  }
}

void require_int(const InferCtx& c, size_t i) {
  const Tensor& t = c.input(i);
  if (t.dtype() != DType::Int32) {
    c.dtype_error("argument '" + c.op.inputs[i].name + "' must be int32, got " + dtype_name(t.dtype()) +
                  " of shape " + shape_str(t.shape()));
  }
}

std::vector<int64_t> reduce_axes(const std::string& op, const AttrValue& axis, int64_t rank) {
  std::vector<int64_t> axes;
  if (std::holds_alternative<std::monostate>(axis)) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  IntList given = std::holds_alternative<int64_t>(axis) ? IntList{std::get<int64_t>(axis)} : std::get<IntList>(axis);
  for (int64_t a : given) {
    const int64_t n = normalize_axis(a, rank, op);
    if (std::find(axes.begin(), axes.end(), n) != axes.end()) {
      throw ValueError("For '" + op + "', axis " + std::to_string(n) + " appears more than once in 'axis' " +
                       attr_value_str(axis));
    }
    axes.push_back(n);
  }
  std::sort(axes.begin(), axes.end());
  if (rank == 0) axes.clear();  // axis 0 / -1 of a scalar reduces nothing
  return axes;
}

std::vector<int64_t> reduce_axes(const InferCtx& c, const AttrValue& axis, int64_t rank) {
  return reduce_axes(c.op.name, axis, rank);
}

std::vector<Tensor> sum_to_inputs(const BpropCtx& c, std::vector<Tensor> grads) {
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined() && i < c.inputs.size() && c.inputs[i].defined() &&
        grads[i].shape() != c.inputs[i].shape()) {
      grads[i] = ops::sum_to(grads[i], c.inputs[i].shape());
    }
  }
  return grads;
}

}  // namespace bprop::opdef
