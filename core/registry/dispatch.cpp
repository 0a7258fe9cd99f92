// The dispatcher: one path for every op call, built-in or user-registered.
#include <new>
#include <stdexcept>
#include <string>

#include "autodiff/observer.h"
#include "autodiff/tape.h"
#include "bprop/registry.h"
#include "graph/trace.h"

namespace bprop {
namespace {

void check_inputs(const OpDef& op, const std::vector<Tensor>& inputs) {
  if (op.variadic) {
    if (inputs.empty()) throw ValueError("For '" + op.name + "', the list of tensors is empty");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].defined()) {
        throw ValueError("For '" + op.name + "', tensor " + std::to_string(i) + " of the list is missing");
      }
    }
    return;
  }
  if (inputs.size() > op.inputs.size()) {
    throw ValueError("For '" + op.name + "', expected at most " + std::to_string(op.inputs.size()) +
                     " tensor arguments, got " + std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const bool present = i < inputs.size() && inputs[i].defined();
    if (!present && !op.inputs[i].optional) {
      throw ValueError("For '" + op.name + "', the required argument '" + op.inputs[i].name + "' is missing");
    }
  }
}

// The backend the call runs on: its inputs' (one, or a ValueError naming both). Under jit, a call with an
// abstract input, or a Parameter while tracing, runs on the Graph backend: it is recorded, and the concrete
// inputs become constants of the graph (Parameters live ones).
Backend common_backend(const OpDef& op, const std::vector<Tensor>& inputs) {
  const bool tracing = graph::tracing();
  Backend be = Backend::CPU;
  bool first = true, traced = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) continue;
    const Backend b = inputs[i].backend();
    if (b == Backend::Graph || (tracing && inputs[i].impl()->is_parameter)) {
      traced = true;
    } else if (first) {
      be = b;
      first = false;
    } else if (b != be) {
      throw ValueError("For '" + op.name + "', inputs live on different backends ('" + backend_name(be) + "' and '" +
                       backend_name(b) + "')");
    }
  }
  return traced ? Backend::Graph : be;
}

// Nesting depth of kernels: ops run by a kernel (composite ops) are not reported to an observer.
thread_local int t_kernel_depth = 0;

struct KernelDepth {
  KernelDepth() { ++t_kernel_depth; }
  ~KernelDepth() { --t_kernel_depth; }
};

}  // namespace

namespace autodiff {
GraphObserver*& graph_observer() {
  thread_local GraphObserver* observer = nullptr;
  return observer;
}
}  // namespace autodiff

Tensor call_op(const std::string& name, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  return call_op(registry().get(name), inputs, attrs);
}

Tensor call_op(const std::string& name, std::vector<Tensor>&& inputs, const Attrs& attrs) {
  return call_op(registry().get(name), std::move(inputs), attrs);
}

namespace {

// One op call. `movable`, when set, is `inputs` itself and may be handed to the tape.
Tensor run_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, std::vector<Tensor>* movable) {
  check_inputs(op, inputs);
  // Ops without attributes (most elementwise ops) skip normalisation: the hot path of small-tensor code.
  const Attrs normalized = (op.attrs.empty() && attrs.empty()) ? Attrs{} : normalize_attrs(op.name, op.attrs, attrs);
  const InferCtx ictx{op, inputs, normalized};
  const Shape shape = op.infer_shape(ictx);
  const DType dtype = op.infer_dtype(ictx);
  const Backend backend = common_backend(op, inputs);
  if (backend == Backend::Graph) {
    Tensor out = graph::current_tracer_or_throw(op.name).add_node(op, inputs, normalized, shape, dtype);
    if (!op.no_grad && is_float(dtype) && autodiff::recording()) autodiff::record(op, inputs, normalized, out, nullptr);
    return out;
  }
  const KernelFn& kernel = op.kernels[static_cast<int>(backend)];
  if (!kernel) {
    throw UnknownOpError("For '" + op.name + "', there is no kernel for backend '" + backend_name(backend) + "'");
  }
  Tensor out;
  if (op.allocates_output) out = Tensor::empty(shape, dtype, backend, op.name);
  else checked_numel(shape, dtype, op.name);  // a view gets the inferred shape: it obeys the same limits
  KernelCtx kctx{op, inputs, normalized, shape, dtype, out};
  try {
    KernelDepth depth;
    kernel(kctx);
  } catch (const std::bad_alloc&) {  // a kernel's own scratch memory
    throw MemoryError("For '" + op.name + "', out of memory while computing the output of shape " + shape_str(shape) +
                      " " + dtype_name(dtype));
  } catch (const std::length_error&) {  // scratch memory past what a std::vector can address (wasm32)
    throw MemoryError("For '" + op.name + "', the scratch memory for the output of shape " + shape_str(shape) + " " +
                      dtype_name(dtype) + " is more than this build can address");
  }
  if (!out.defined() || out.shape() != shape || out.dtype() != dtype) {
    throw ValueError("For '" + op.name + "', the kernel produced " +
                     (out.defined() ? shape_str(out.shape()) + " " + dtype_name(out.dtype()) : std::string("nothing")) +
                     " where " + shape_str(shape) + " " + dtype_name(dtype) + " was inferred");
  }
  autodiff::GraphObserver* obs = t_kernel_depth == 0 ? autodiff::graph_observer() : nullptr;
  if (!op.no_grad && is_float(dtype) && autodiff::recording()) {
    autodiff::record(op, inputs, normalized, out, obs ? nullptr : movable);  // the observer reads inputs after
  }
  if (obs) obs->on_op(op, inputs, normalized, out);
  return out;
}

}  // namespace

Tensor call_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs) {
  return run_op(op, inputs, attrs, nullptr);
}

Tensor call_op(const OpDef& op, std::vector<Tensor>&& inputs, const Attrs& attrs) {
  return run_op(op, inputs, attrs, &inputs);
}

}  // namespace bprop
