// The seed examples, shared by the native demos and the tests: one function or class per way of defining
// a backward operator.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bprop/bprop.h"

namespace examples {

using namespace bprop;

/// `--mode graph` runs the demo in MindSpore's GRAPH_MODE (grad functions and Cell calls compile themselves
/// with jit); `--mode pynative`, the default, eagerly. The printed results are the same.
inline void set_mode_from_args(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--mode") == 0 && std::strcmp(argv[2], "graph") == 0) {
    Context c;
    c.mode = Mode::Graph;
    set_context(c);
  } else if (!(argc == 1 || (argc == 3 && std::strcmp(argv[1], "--mode") == 0 &&
                             std::strcmp(argv[2], "pynative") == 0))) {
    std::fprintf(stderr, "usage: %s [--mode graph|pynative]\n", argv[0]);
    std::exit(2);
  }
  std::fprintf(stderr, "mode: %s\n", mode_name(get_context().mode));
}

/// 1. Automatic: x^3 from registered primitives (mul), differentiated to any order.
inline Value cube(const std::vector<Tensor>& args) { return args[0] * args[0] * args[0]; }

/// 2. A Cell with its own bprop: construct x * x, bprop 2 x dout.
struct MySquare : Cell {
  int bprop_calls = 0;
  Value construct(const std::vector<Tensor>& in) override { return in[0] * in[0]; }
  bool has_bprop() const override { return true; }
  std::vector<Tensor> bprop(const std::vector<Tensor>& in, const Tensor& /*out*/, const Tensor& dout) override {
    ++bprop_calls;
    return {in[0] * 2.0 * dout};  // d(x^2) = 2 x dout
  }
};

/// 3. A primitive registered at run time: forward kernel, shape and dtype rules, and its bprop.
inline void register_my_square_prim() {
  PrimitiveDef def;
  def.name = "my_square_prim";
  def.inputs = {"x"};
  def.infer_shape = [](const InferCtx& c) { return c.input(0).shape(); };
  def.infer_dtype = [](const InferCtx& c) {
    if (!is_float(c.input(0).dtype())) c.dtype_error("argument 'x' must be float");
    return c.input(0).dtype();
  };
  def.forward = [](KernelCtx& c) {
    visit_float(c.out_dtype, [&]<typename T>() {
      const T* x = c.inputs[0].data<T>();
      T* y = c.out.data<T>();
      for (int64_t i = 0; i < c.out.numel(); ++i) y[i] = x[i] * x[i];
    });
  };
  def.bprop = [](const std::vector<Tensor>& in, const Tensor&, const Tensor& dout) -> std::vector<Tensor> {
    return {in[0] * 2.0 * dout};  // d(x^2) = 2 x dout
  };
  register_primitive(def);
}

/// MindSpore's functional-grad example: z = x @ w + b; loss = bce_with_logits(z, y, ones, ones).
inline Tensor linear_logits(const std::vector<Tensor>& a) { return ops::matmul(a[0], a[2]) + a[3]; }
inline Value linear_bce(const std::vector<Tensor>& a) {
  const Tensor z = linear_logits(a);
  return ops::binary_cross_entropy_with_logits(z, a[1], ones_like(z), ones_like(z));
}
/// The same loss behind stop_gradient: every gradient is exactly zero.
inline Value linear_bce_stopped(const std::vector<Tensor>& a) { return ops::stop_gradient(linear_bce(a).tensor()); }
/// Returns (loss, logits): used with has_aux, only the loss is differentiated.
inline Value linear_bce_with_logits(const std::vector<Tensor>& a) {
  const Tensor z = linear_logits(a);
  return Value{ops::binary_cross_entropy_with_logits(z, a[1], ones_like(z), ones_like(z)), z};
}

}  // namespace examples
