// The dispatcher: one path for every op call, built-in or user-registered.
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include "autodiff/observer.h"
#include "bprop/device.h"
#include "autodiff/tape.h"
#include "bprop/registry.h"
#include "graph/trace.h"
#include "registry/autocast.h"
#include "registry/half_kernels.h"
#include "registry/kernel_errors.h"

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
    if (present && !op.takes_half && is_half(inputs[i].dtype())) {
      throw DTypeError("For '" + op.name + "', '" + op.inputs[i].name + "' is " + dtype_name(inputs[i].dtype()) +
                       " of shape " + shape_str(inputs[i].shape()) + ", but '" + op.name +
                       "' takes float32 or float64 only (as PyTorch on the CPU, which has no bfloat16 kernel "
                       "for it): cast to float32 first");
    }
  }
}

// Under jit, a call with an abstract input, or with a Parameter while tracing, is traced: it is
// recorded, and the concrete inputs become constants of the graph (Parameters live ones).
bool traced_call(const std::vector<Tensor>& inputs) {
  const bool tracing = graph::tracing();
  for (const Tensor& t : inputs) {
    if (t.defined() && (t.is_abstract() || (tracing && t.impl()->is_parameter))) return true;
  }
  return false;
}

std::string input_name(const OpDef& op, size_t i) {
  if (op.variadic || i >= op.inputs.size()) return "tensor " + std::to_string(i);
  return "'" + op.inputs[i].name + "'";
}

// Nesting depth of kernels: ops run by a kernel (composite ops) are not reported to an observer.
thread_local int t_kernel_depth = 0;

// Also makes the kernel's device the one host tensors go to: the ops a composite kernel runs on a device run
// there, with the host constants of its decomposition moved over; a CPU kernel's stay on the host.
struct KernelDepth {
  std::optional<detail::PreferDevice> prefer;
  explicit KernelDepth(Device d) {
    if (detail::devices_in_use()) prefer.emplace(d);
    ++t_kernel_depth;
  }
  ~KernelDepth() { --t_kernel_depth; }
};

// The device a non-traced call runs on, and its inputs there. Inputs on one device run there; host tensors meet a
// device tensor as PyTorch's CPU scalars do (0-d ones are copied over) or, when the context's device is that
// device, all of them are (MindSpore's host tensors); with no device input, a call runs on the context's device
// (or, in a kernel or a bprop, on that one's: detail::PreferDevice). Anything else is a ValueError naming both devices.
Device place_inputs(const OpDef& op, const std::vector<Tensor>& inputs, std::vector<Tensor>& moved) {
  if (!detail::devices_in_use()) return Device::cpu();
  Device dev = Device::cpu();
  size_t dev_input = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].on_device()) continue;
    const Device d = inputs[i].device();
    if (dev.is_cpu()) {
      dev = d;
      dev_input = i;
    } else if (d != dev) {
      throw ValueError("For '" + op.name + "', inputs live on different devices: " + input_name(op, dev_input) +
                       " on " + dev.str() + " and " + input_name(op, i) + " on " + d.str() +
                       " (move one with .to())");
    }
  }
  const Device preferred = detail::preferred_device();
  if (dev.is_cpu()) {
    if (preferred.is_cpu()) return dev;
    dev = preferred;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined() || !t.on_host()) continue;
    if (t.dim() != 0 && preferred != dev) {
      throw ValueError("For '" + op.name + "', inputs live on different devices: " + input_name(op, dev_input) +
                       " on " + dev.str() + " and " + input_name(op, i) + " of shape " + shape_str(t.shape()) +
                       " on cpu (move it with .to(), or make " + dev.str() +
                       " the context's device so host tensors move there)");
    }
    if (moved.empty()) moved = inputs;
    moved[i] = t.to(dev);
  }
  return dev;
}

// Runs `kernel` in the dispatcher's frame (kernel depth, scratch-memory errors as MemoryError).
void run_kernel(const KernelFn& kernel, KernelCtx& kctx) {
  detail::translating_kernel_errors(kctx.op.name, kctx.out_shape, kctx.out_dtype, [&] {
    KernelDepth depth(kctx.device);
    if (kctx.device.is_cpu()) run_cpu_kernel(kernel, kctx);  // (float16 / bfloat16 computed in float32)
    else kernel(kctx);
  });
}

// An op on a device: its device kernel, or else (none, or it declined) the CPU kernel on host copies of the
// inputs, the output copied back. View and composite kernels (allocates_output = false) touch no element on the
// host and run as they are.
Tensor run_on_device_impl(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, const Shape& shape,
                          DType dtype, Device dev, const Tensor& planned = {}) {
  Tensor out;
  const KernelFn& device_kernel = op.kernels[dev.backend.id];
  if (device_kernel || !op.allocates_output) {
    const KernelFn& kernel = device_kernel ? device_kernel : op.kernels[Backend::CPU.id];
    if (op.allocates_output) out = planned.defined() ? planned : Tensor::empty(shape, dtype, dev, op.name);
    KernelCtx kctx{op, inputs, attrs, shape, dtype, out, dev};
    try {
      run_kernel(kernel, kctx);
      return out;
    } catch (const KernelDeclined&) {
    }
  }
  const KernelFn& cpu_kernel = op.kernels[Backend::CPU.id];
  if (!cpu_kernel) {
    throw UnknownOpError("For '" + op.name + "', there is no kernel for " + dev.str() + " and no CPU kernel");
  }
  detail::count_fallback(op.name);
  std::vector<Tensor> host(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) host[i] = inputs[i].cpu();
  }
  Tensor host_out = Tensor::empty(shape, dtype, Device::cpu(), op.name);
  KernelCtx kctx{op, host, attrs, shape, dtype, host_out};
  run_kernel(cpu_kernel, kctx);
  if (!planned.defined()) return host_out.to(dev);
  Tensor into = planned;
  if (into.nbytes() > 0) {
    device_backend(dev.backend).copy_from_host(dev.index, into.raw_data(), host_out.raw_data(), into.nbytes());
  }
  return into;
}

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
  // Mixed precision casts the inputs of the calls a program makes (not those of a composite kernel's
  // decomposition): the casts are ops, so the tape and a trace record them.
  if (detail::autocast_state().level != 0 && t_kernel_depth == 0) {
    std::vector<Tensor> cast;
    if (detail::autocast_inputs(op, inputs, cast)) return run_op(op, cast, attrs, &cast);
  }
  check_inputs(op, inputs);
  // Ops without attributes (most elementwise ops) skip normalisation: the hot path of small-tensor code.
  const Attrs normalized = (op.attrs.empty() && attrs.empty()) ? Attrs{} : normalize_attrs(op.name, op.attrs, attrs);
  const InferCtx ictx{op, inputs, normalized};
  const Shape shape = op.infer_shape(ictx);
  const DType dtype = op.infer_dtype(ictx);
  if (traced_call(inputs)) {
    graph::Tracer& tracer = graph::current_tracer_or_throw(op.name);
    Tensor out = tracer.add_node(op, inputs, normalized, shape, dtype);
    if (!op.no_grad && is_float(dtype) && autodiff::recording()) {
      autodiff::record(op, inputs, normalized, out, nullptr);
      tracer.note_origins(out);
    }
    return out;
  }
  Tensor out;
  std::vector<Tensor> moved;  // the inputs copied to the call's device, when some were not there
  const Device dev = place_inputs(op, inputs, moved);
  if (!dev.is_cpu()) {
    out = run_on_device_impl(op, moved.empty() ? inputs : moved, normalized, shape, dtype, dev);
  } else {
    const KernelFn& kernel = op.kernels[Backend::CPU.id];
    if (!kernel) throw UnknownOpError("For '" + op.name + "', there is no kernel for backend 'cpu'");
    if (op.allocates_output) out = Tensor::empty(shape, dtype, Device::cpu(), op.name);
    else checked_numel(shape, dtype, op.name);  // a view gets the inferred shape: it obeys the same limits
    KernelCtx kctx{op, inputs, normalized, shape, dtype, out};
    run_kernel(kernel, kctx);
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

namespace detail {
Tensor run_on_device(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs, const Shape& shape,
                     DType dtype, Device device, Tensor out) {
  return run_on_device_impl(op, inputs, attrs, shape, dtype, device, out);
}
}  // namespace detail

Tensor call_op(const OpDef& op, std::vector<Tensor>&& inputs, const Attrs& attrs) {
  return run_op(op, inputs, attrs, &inputs);
}

}  // namespace bprop
