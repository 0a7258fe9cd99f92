// vjp, jvp, Jacobians and Hessians, built on the tape. jvp uses the transpose trick: the VJP is linear in
// its cotangent u, so differentiating <vjp(u), t> with respect to u gives J t, with nothing but bprops.
#include "autodiff/functional.h"

#include "autodiff/tape.h"
#include "bprop/device.h"
#include "bprop/ops.h"
#include "graph/trace.h"

namespace bprop {
namespace autodiff {

Pullback forward_for_vjp(const Fn& fn, const std::vector<Tensor>& inputs, const std::vector<int>& positions,
                         const char* api) {
  for (int p : positions) {
    const Tensor& x = inputs.at(static_cast<size_t>(p));
    if (!is_float(x.dtype())) {
      throw DTypeError(std::string("For '") + api + "', cannot differentiate with respect to input " +
                       std::to_string(p) + " of dtype " + dtype_name(x.dtype()));
    }
  }
  Pullback pb;
  pb.level = open_level();
  try {
    std::vector<Tensor> call_args = inputs;
    for (int p : positions) {
      pb.leaves.emplace_back();
      call_args[static_cast<size_t>(p)] = make_leaf(inputs[static_cast<size_t>(p)], pb.level, pb.leaves.back());
      pb.inputs.push_back(inputs[static_cast<size_t>(p)]);
    }
    const Value v = fn(call_args);
    if (!v.is_tensor()) throw ValueError(std::string("For '") + api + "', the function must return one tensor");
    pb.out = v.tensor();
    if (!is_float(pb.out.dtype())) {
      throw DTypeError(std::string("For '") + api + "', the function's output has dtype " + dtype_name(pb.out.dtype()));
    }
  } catch (...) {
    close_level(pb.level);
    throw;
  }
  close_level(pb.level);
  return pb;
}

std::vector<Tensor> Pullback::operator()(const Tensor& v) const {
  if (v.shape() != out.shape()) {
    throw ShapeError("For 'vjp', the cotangent has shape " + shape_str(v.shape()) + " but the output has shape " +
                     shape_str(out.shape()));
  }
  std::vector<Tensor> g = backward(level, out, v.dtype() == out.dtype() ? v : ops::cast(v, out.dtype()), leaves);
  for (size_t i = 0; i < g.size(); ++i) {
    if (!g[i].defined()) g[i] = zeros(inputs[i].shape(), inputs[i].dtype());
  }
  return g;
}

Tensor Pullback::value() const { return strip_levels(out, level); }

Tensor Pullback::jvp(const std::vector<Tensor>& tangents) const {
  if (tangents.size() != inputs.size()) {
    throw ValueError("For 'jvp', got " + std::to_string(tangents.size()) + " tangents for " +
                     std::to_string(inputs.size()) + " inputs");
  }
  for (size_t i = 0; i < tangents.size(); ++i) {
    if (tangents[i].shape() != inputs[i].shape()) {
      throw ShapeError("For 'jvp', tangent " + std::to_string(i) + " has shape " + shape_str(tangents[i].shape()) +
                       " but input " + std::to_string(i) + " has shape " + shape_str(inputs[i].shape()));
    }
  }
  const int level = open_level();
  std::shared_ptr<Node> u_leaf;
  Tensor s;
  try {
    const Tensor u = make_leaf(zeros(out.shape(), out.dtype()), level, u_leaf);
    const std::vector<Tensor> g = (*this)(u);
    for (size_t i = 0; i < g.size(); ++i) {
      const Tensor term = ops::sum(ops::mul(g[i], ops::cast(tangents[i], g[i].dtype())));
      s = s.defined() ? ops::add(s, term) : term;
    }
  } catch (...) {
    close_level(level);
    throw;
  }
  close_level(level);
  std::vector<Tensor> r = backward(level, s, ones({}, s.dtype()), {u_leaf}, {}, SavedTensors::ReleaseAsWalked);
  return r[0].defined() ? r[0] : zeros(out.shape(), out.dtype());
}

}  // namespace autodiff

namespace {
std::vector<int> all_positions(size_t n) {
  std::vector<int> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int>(i);
  return p;
}

int check_argnum(int argnum, size_t n, const char* api) {
  if (argnum < 0 || static_cast<size_t>(argnum) >= n) {
    throw ValueError(std::string("For '") + api + "', argnum " + std::to_string(argnum) + " is out of range for " +
                     std::to_string(n) + " input(s)");
  }
  return argnum;
}

Tensor one_hot_like(const Tensor& like, int64_t k) {
  Tensor t = zeros(like.shape(), like.dtype());
  visit_storage_dtype(like.dtype(), [&]<typename T>() { t.data<T>()[k] = convert_element<T>(1.0); });
  return on_device_of(like, t);
}
}  // namespace

std::pair<Tensor, std::vector<Tensor>> vjp(const Fn& fn, const std::vector<Tensor>& inputs, const Tensor& v) {
  autodiff::Pullback pb = autodiff::forward_for_vjp(fn, inputs, all_positions(inputs.size()), "vjp");
  return {pb.value(), pb(v)};
}

std::pair<Tensor, Tensor> jvp(const Fn& fn, const std::vector<Tensor>& inputs, const std::vector<Tensor>& tangents) {
  autodiff::Pullback pb = autodiff::forward_for_vjp(fn, inputs, all_positions(inputs.size()), "jvp");
  return {pb.value(), pb.jvp(tangents)};
}

std::function<Tensor(const std::vector<Tensor>&)> jacrev(Fn fn, int argnum) {
  return [fn = std::move(fn), argnum](const std::vector<Tensor>& inputs) {
    const int a = check_argnum(argnum, inputs.size(), "jacrev");
    autodiff::Pullback pb = autodiff::forward_for_vjp(fn, inputs, {a}, "jacrev");
    std::vector<Tensor> rows;
    for (int64_t k = 0; k < pb.out.numel(); ++k) rows.push_back(pb(one_hot_like(pb.out, k))[0]);
    Shape shape = pb.out.shape();
    const Shape& in_shape = inputs[static_cast<size_t>(a)].shape();
    shape.insert(shape.end(), in_shape.begin(), in_shape.end());
    if (rows.empty()) return zeros(shape, pb.out.dtype());
    return ops::reshape(ops::stack(rows, 0), shape);
  };
}

std::function<Tensor(const std::vector<Tensor>&)> jacfwd(Fn fn, int argnum) {
  return [fn = std::move(fn), argnum](const std::vector<Tensor>& inputs) {
    const int a = check_argnum(argnum, inputs.size(), "jacfwd");
    autodiff::Pullback pb = autodiff::forward_for_vjp(fn, inputs, {a}, "jacfwd");
    const Tensor& x = inputs[static_cast<size_t>(a)];
    std::vector<Tensor> cols;
    for (int64_t k = 0; k < x.numel(); ++k) cols.push_back(pb.jvp({one_hot_like(x, k)}));
    Shape shape = pb.out.shape();
    shape.insert(shape.end(), x.shape().begin(), x.shape().end());
    if (cols.empty() || pb.out.numel() == 0) return zeros(shape, pb.out.dtype());
    // cols: (in_numel, out...) -> (out_numel, in_numel) -> out.shape + in.shape
    const Tensor stacked = ops::reshape(ops::stack(cols, 0), {x.numel(), pb.out.numel()});
    return ops::reshape(ops::transpose(stacked, {1, 0}), shape);
  };
}

std::function<Tensor(const std::vector<Tensor>&)> hessian(Fn fn, int argnum) {
  auto inner = jacrev(std::move(fn), argnum);
  return jacfwd([inner](const std::vector<Tensor>& in) { return Value(inner(in)); }, argnum);
}

void no_grad(const std::function<void()>& body) {
  autodiff::SuspendRecording guard;
  body();
}

namespace autodiff {
Tensor apply_custom(const std::string& name, const std::vector<Tensor>& inputs,
                    const std::function<Tensor(const std::vector<Tensor>&)>& forward, const CustomBprop& bprop) {
  Tensor out;
  {
    SuspendRecording guard;
    out = forward(inputs);
  }
  if (!out.defined()) throw ValueError("For '" + name + "', construct returned no tensor");
  // A fresh impl, so the recorded entries cannot leak into a tensor construct may have returned as-is.
  out = out.detach();
  if (is_float(out.dtype()) && recording()) {
    record_custom(name, inputs, out, bprop);
    if (graph::Tracer* tracer = graph::current_tracer()) tracer->note_origins(out);  // as a traced op's nodes are
  }
  return out;
}
}  // namespace autodiff

}  // namespace bprop
