#include "bprop/op_table.h"

#include <algorithm>

#include "bprop/errors.h"
#include "bprop/ops.h"
#include "bprop/random.h"
#include "bprop/registry.h"

namespace bprop {
namespace {

InputGen f(Shape s, double lo = -2.0, double hi = 2.0) { return InputGen{std::move(s), lo, hi}; }
InputGen pos(Shape s) { return InputGen{std::move(s), 0.5, 2.0}; }
InputGen nz(Shape s) { return InputGen{std::move(s), 0.3, 2.0, true}; }  // away from the kink at 0
InputGen ints(Shape s, std::vector<double> v) { return InputGen{std::move(s), 0, 0, false, DType::Int32, std::move(v)}; }
InputGen bools(Shape s, std::vector<double> v) { return InputGen{std::move(s), 0, 0, false, DType::Bool, std::move(v)}; }
InputGen omitted() { return InputGen{{}, 0, 0, false, DType::Float64, {}, true}; }

OpCheckRow row(std::string name, std::string op, std::vector<InputGen> in, Attrs attrs = {}, bool first = true,
               bool second = true) {
  return OpCheckRow{std::move(name), std::move(op), std::move(in), std::move(attrs), first, second};
}
OpCheckRow nograd(std::string name, std::string op, std::vector<InputGen> in, Attrs attrs = {}) {
  return row(std::move(name), std::move(op), std::move(in), std::move(attrs), false, false);
}

// FNV-1a: a row's seed must not depend on the standard library's std::hash.
uint64_t name_seed(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<OpCheckRow> build() {
  std::vector<OpCheckRow> t;
  // ---- unary ----
  for (const char* op : {"neg", "exp", "sin", "cos", "tanh", "sigmoid", "silu", "softplus", "erf", "square"}) {
    t.push_back(row(op, op, {f({2, 3})}));
  }
  for (const char* op : {"log", "log1p", "sqrt", "rsqrt", "reciprocal"}) t.push_back(row(op, op, {pos({2, 3})}));
  t.push_back(row("expm1", "expm1", {f({2, 3}, -1.0, 1.0)}));
  t.push_back(row("tan", "tan", {f({2, 3}, -1.0, 1.0)}));
  for (const char* op : {"abs", "sign", "relu"}) t.push_back(row(op, op, {nz({2, 3})}));
  t.push_back(row("leaky_relu", "leaky_relu", {nz({2, 3})}, {{"alpha", 0.2}}));
  t.push_back(row("elu", "elu", {nz({2, 3})}, {{"alpha", 0.7}}));
  t.push_back(row("gelu_none", "gelu", {f({2, 3})}));
  t.push_back(row("gelu_tanh", "gelu", {f({2, 3})}, {{"approximate", std::string("tanh")}}));
  for (const char* op : {"floor", "ceil", "round"}) t.push_back(nograd(op, op, {f({2, 3})}));
  // gradient ops of the unary family (internal): (y, dy) with y in the range of tanh / sigmoid; gelu_grad (x, dy)
  t.push_back(row("tanh_grad", "tanh_grad", {f({2, 3}, -0.9, 0.9), f({2, 3})}));
  t.push_back(row("tanh_grad_broadcast_dy", "tanh_grad", {f({2, 3}, -0.9, 0.9), f({3})}));
  t.push_back(row("sigmoid_grad", "sigmoid_grad", {f({2, 3}, 0.1, 0.9), f({2, 3})}));
  t.push_back(row("sigmoid_grad_broadcast_y", "sigmoid_grad", {f({3}, 0.1, 0.9), f({2, 3})}));
  t.push_back(row("gelu_grad", "gelu_grad", {f({2, 3}, -3.0, 3.0), f({2, 3})}));
  t.push_back(row("gelu_grad_broadcast_dy", "gelu_grad", {f({2, 3}, -3.0, 3.0), f({3})}));
  t.push_back(row("relu_grad", "relu_grad", {nz({2, 3}), f({2, 3})}));
  t.push_back(row("relu_grad_broadcast_dy", "relu_grad", {nz({2, 3}), f({3})}));
  // ---- random (no gradient; the key is a 0-d tensor holding the seed) ----
  t.push_back(nograd("random_uniform", "random_uniform", {ints({}, {7})}, {{"shape", IntList{2, 3}}}));
  t.push_back(nograd("random_normal", "random_normal", {ints({}, {7})}, {{"shape", IntList{2, 3}}}));
  t.push_back(nograd("dropout_mask", "dropout_mask", {ints({}, {3})}, {{"shape", IntList{2, 3}}, {"seed", int64_t{9}}}));
  // ---- optimizer updates (no gradient; lr and step are 0-d float64) ----
  {
    const InputGen lr = InputGen{{}, 0.1, 0.1, false, DType::Float64}, step = InputGen{{}, 2.0, 2.0, false, DType::Float64};
    t.push_back(nograd("sgd_buffer", "sgd_buffer", {f({2, 3}), f({2, 3}), f({2, 3}), step}, {{"momentum", 0.9}}));
    t.push_back(nograd("sgd_step", "sgd_step", {f({2, 3}), f({2, 3}), lr, f({2, 3})}, {{"momentum", 0.9}}));
    t.push_back(nograd("adam_m", "adam_m", {f({2, 3}), f({2, 3}), f({2, 3})}));
    t.push_back(nograd("adam_v", "adam_v", {pos({2, 3}), f({2, 3}), f({2, 3})}));
    t.push_back(nograd("adam_step", "adam_step", {f({2, 3}), f({2, 3}), pos({2, 3}), lr, step}));
    t.push_back(nograd("all_finite", "all_finite", {f({2, 3}), f({3})}));
  }
  // ---- binary (with broadcasting) ----
  for (const char* op : {"add", "sub", "mul", "maximum", "minimum", "atan2", "squared_difference"}) {
    t.push_back(row(op, op, {f({2, 3}), f({3})}));
  }
  t.push_back(row("add_scalar_matrix", "add", {f({}), f({2, 3})}));
  t.push_back(row("mul_col_row", "mul", {f({3, 1}), f({1, 4})}));
  t.push_back(row("div", "div", {f({2, 3}), nz({2, 1})}));
  t.push_back(row("pow", "pow", {pos({2, 3}), f({2, 3}, -1.5, 1.5)}));
  // ---- comparison ----
  for (const char* op : {"equal", "not_equal", "greater", "greater_equal", "less", "less_equal"}) {
    t.push_back(nograd(op, op, {f({2, 3}), f({3})}));
  }
  // ---- selection ----
  t.push_back(row("where", "where", {bools({2, 3}, {1, 0, 1, 0, 0, 1}), f({2, 3}), f({3})}));
  t.push_back(row("clamp", "clamp", {f({2, 4})}, {{"min", -0.5}, {"max", 0.7}}));
  t.push_back(row("clamp_min_only", "clamp", {f({2, 4})}, {{"min", 0.1}}));
  // ---- reductions ----
  t.push_back(row("sum_all", "sum", {f({2, 3})}));
  t.push_back(row("sum_axis1_keepdims", "sum", {f({2, 3, 2})}, {{"axis", int64_t{1}}, {"keepdims", true}}));
  t.push_back(row("mean_axes", "mean", {f({2, 3, 2})}, {{"axis", IntList{0, -1}}}));
  t.push_back(row("prod", "prod", {nz({2, 3})}, {{"axis", int64_t{-1}}}));
  t.push_back(row("amax", "amax", {f({3, 4})}, {{"axis", int64_t{1}}}));
  t.push_back(row("amin", "amin", {f({3, 4})}, {{"axis", int64_t{0}}, {"keepdims", true}}));
  t.push_back(row("logsumexp", "logsumexp", {f({3, 4})}, {{"axis", int64_t{-1}}}));
  t.push_back(row("var", "var", {f({3, 4})}, {{"axis", int64_t{1}}}));
  t.push_back(row("var_all_c0", "var", {f({3, 4})}, {{"correction", int64_t{0}}}));
  t.push_back(row("std", "std", {f({3, 4})}, {{"axis", int64_t{0}}, {"keepdims", true}}));
  t.push_back(nograd("argmax", "argmax", {f({3, 4})}, {{"axis", int64_t{1}}}));
  t.push_back(nograd("argmin", "argmin", {f({3, 4})}));
  // ---- shape ----
  t.push_back(row("reshape", "reshape", {f({2, 3})}, {{"shape", IntList{3, -1}}}));
  t.push_back(row("transpose", "transpose", {f({2, 3, 4})}, {{"perm", IntList{2, 0, 1}}}));
  t.push_back(row("broadcast_to", "broadcast_to", {f({3, 1})}, {{"shape", IntList{2, 3, 4}}}));
  t.push_back(row("squeeze", "squeeze", {f({1, 3, 1})}));
  t.push_back(row("expand_dims", "expand_dims", {f({2, 3})}, {{"axis", int64_t{-1}}}));
  t.push_back(row("concat", "concat", {f({2, 3}), f({2, 2})}, {{"axis", int64_t{1}}}));
  t.push_back(row("stack", "stack", {f({2, 3}), f({2, 3})}, {{"axis", int64_t{1}}}));
  t.push_back(row("tile", "tile", {f({2, 3})}, {{"multiples", IntList{2, 2}}}));
  t.push_back(row("flip", "flip", {f({2, 3})}, {{"axis", int64_t{1}}}));
  t.push_back(row("pad", "pad", {f({2, 3})}, {{"paddings", IntMatrix{{1, 0}, {0, 2}}}, {"value", 0.5}}));
  // ---- indexing ----
  t.push_back(row("slice", "slice", {f({3, 4})}, {{"begin", IntList{1, 0}}, {"size", IntList{2, -1}}}));
  t.push_back(row("strided_slice", "strided_slice", {f({4, 5})},
                  {{"begin", IntList{3, 0}}, {"end", IntList{0, 5}}, {"strides", IntList{-1, 2}}}));
  t.push_back(row("gather", "gather", {f({3, 4}), ints({2, 2}, {0, 2, 3, 0})}, {{"axis", int64_t{1}}}));
  // gradient ops of the indexing family (internal, linear in dout)
  t.push_back(row("strided_slice_grad", "strided_slice_grad", {f({3, 3})},
                  {{"shape", IntList{4, 5}}, {"begin", IntList{3, 0}}, {"end", IntList{0, 5}}, {"strides", IntList{-1, 2}}}));
  t.push_back(row("gather_grad", "gather_grad", {f({3, 2, 2}), ints({2, 2}, {0, 2, 3, 0})},
                  {{"axis", int64_t{1}}, {"dim_size", int64_t{4}}}));
  // ---- linear algebra ----
  t.push_back(row("matmul", "matmul", {f({2, 3}), f({3, 4})}));
  t.push_back(row("matmul_batched_broadcast", "matmul", {f({2, 1, 2, 3}), f({3, 3, 2})}));
  t.push_back(row("matmul_vec_mat", "matmul", {f({3}), f({3, 2})}));
  t.push_back(row("matmul_dot", "matmul", {f({3}), f({3})}));
  // the internal GEMM of matmul's bprop: transposes as flags
  t.push_back(row("matmul_t_b", "matmul_t", {f({2, 3}), f({4, 3})}, {{"transpose_a", false}, {"transpose_b", true}}));
  t.push_back(row("matmul_t_ab_batched", "matmul_t", {f({2, 3, 2}), f({1, 4, 3})},
                  {{"transpose_a", true}, {"transpose_b", true}}));
  // ---- neural network ----
  t.push_back(row("softmax", "softmax", {f({2, 4})}));
  t.push_back(row("log_softmax_axis0", "log_softmax", {f({3, 2})}, {{"axis", int64_t{0}}}));
  t.push_back(row("cross_entropy", "cross_entropy", {f({3, 4}), ints({3}, {0, 3, 1}), omitted()}));
  t.push_back(row("cross_entropy_weighted_smoothed", "cross_entropy",
                  {f({4, 3}), ints({4}, {2, -100, 0, 1}), pos({3})},
                  {{"label_smoothing", 0.2}, {"reduction", std::string("sum")}}));
  t.push_back(row("nll_loss", "nll_loss", {f({3, 4}), ints({3}, {1, 0, 3}), pos({4})}));
  t.push_back(row("bce_with_logits", "binary_cross_entropy_with_logits",
                  {f({2, 3}), f({2, 3}, 0.1, 0.9), pos({2, 3}), pos({3})}));
  t.push_back(row("bce", "binary_cross_entropy", {f({2, 3}, 0.1, 0.9), f({2, 3}, 0.1, 0.9), omitted()},
                  {{"reduction", std::string("none")}}));
  t.push_back(row("mse_loss", "mse_loss", {f({2, 3}), f({2, 3})}));
  t.push_back(row("l1_loss", "l1_loss", {f({2, 3}), f({2, 3})}, {{"reduction", std::string("sum")}}));
  t.push_back(row("smooth_l1_loss", "smooth_l1_loss", {f({2, 3}), f({2, 3})}, {{"beta", 0.5}}));
  // ---- nn (conv, pool, norm, embedding) ----
  {
    // conv2d and its gradient ops, with stride, padding, dilation and groups all away from their defaults
    const Attrs conv{{"stride", IntList{2, 1}}, {"padding", IntList{1, 0}}, {"dilation", IntList{1, 2}},
                     {"groups", int64_t{2}}};
    Attrs input_grad = conv, weight_grad = conv;
    input_grad.set("x_shape", IntList{2, 4, 5, 5});
    weight_grad.set("w_shape", IntList{4, 2, 2, 2});
    t.push_back(row("conv2d", "conv2d", {f({1, 2, 4, 4}), f({3, 2, 2, 2}), f({3})}, {{"padding", int64_t{1}}}));
    t.push_back(row("conv2d_strided_dilated_grouped", "conv2d", {f({2, 4, 5, 5}), f({4, 2, 2, 2}), omitted()}, conv));
    t.push_back(row("conv2d_input_grad", "conv2d_input_grad", {f({2, 4, 3, 3}), f({4, 2, 2, 2})}, input_grad));
    t.push_back(row("conv2d_weight_grad", "conv2d_weight_grad", {f({2, 4, 5, 5}), f({2, 4, 3, 3})}, weight_grad));
    // max_pool2d inputs: distinct values 0.1 apart, so no window has a tie and its argmax is stable
    const auto distinct = [](Shape s) {
      const int64_t n = shape_numel(s);
      std::vector<double> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>((i * 7) % n) * 0.1 - 2.0;
      return InputGen{std::move(s), 0, 0, false, DType::Float64, std::move(v)};
    };
    const Attrs pool{{"kernel_size", int64_t{3}}, {"stride", int64_t{2}}, {"padding", int64_t{1}}};
    t.push_back(row("max_pool2d", "max_pool2d", {distinct({1, 2, 5, 5})}, pool));
    t.push_back(
        row("max_pool2d_3d_default_stride", "max_pool2d", {distinct({2, 4, 5})}, {{"kernel_size", int64_t{2}}}));
    t.push_back(row("max_pool2d_grad", "max_pool2d_grad", {f({1, 2, 3, 3}), distinct({1, 2, 5, 5})}, pool));
    t.push_back(row("max_pool2d_gather", "max_pool2d_gather", {f({1, 2, 5, 5}), distinct({1, 2, 5, 5})}, pool));
    const Attrs avg{{"kernel_size", IntList{3, 2}}, {"stride", IntList{2, 1}}, {"padding", IntList{1, 1}}};
    Attrs avg_grad = avg;
    avg_grad.set("x_shape", IntList{1, 2, 5, 5});
    t.push_back(row("avg_pool2d", "avg_pool2d", {f({1, 2, 5, 5})}, avg));
    t.push_back(row("avg_pool2d_3d_default_stride", "avg_pool2d", {f({2, 4, 5})}, {{"kernel_size", int64_t{2}}}));
    t.push_back(row("avg_pool2d_grad", "avg_pool2d_grad", {f({1, 2, 3, 6})}, avg_grad));
  }
  t.push_back(row("batch_norm", "batch_norm", {f({3, 2, 2, 2}), f({2}), f({2})}));
  t.push_back(row("batch_norm_2d_no_affine", "batch_norm", {f({4, 3}), omitted(), omitted()}, {{"eps", 0.1}}));
  t.push_back(row("layer_norm", "layer_norm", {f({2, 3, 4}), f({3, 4}), f({3, 4})}, {{"normalized_ndim", int64_t{2}}}));
  t.push_back(row("layer_norm_bias_only", "layer_norm", {f({3, 4}), omitted(), f({4})}));
  // ---- attention: batch and head axes broadcasting, L != S, E != Ev, causal with an additive mask, a bool mask
  // with a fully masked row (zeros), and the gradient op on its own (out and dout independent inputs) ----
  t.push_back(row("sdpa", "scaled_dot_product_attention", {f({2, 3, 4}), f({2, 5, 4}), f({2, 5, 3}), omitted()}));
  t.push_back(row("sdpa_causal_float_mask_broadcast", "scaled_dot_product_attention",
                  {f({1, 2, 4, 3}), f({2, 1, 4, 3}), f({4, 2}), f({4, 4})}, {{"is_causal", true}}));
  t.push_back(row("sdpa_bool_mask_fully_masked_row", "scaled_dot_product_attention",
                  {f({2, 3, 2}), f({2, 4, 2}), f({2, 4, 3}), bools({3, 4}, {1, 0, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0})},
                  {{"scale", 0.7}}));
  t.push_back(row("sdpa_grad", "scaled_dot_product_attention_grad",
                  {f({2, 3, 4}), f({2, 5, 4}), f({2, 5, 3}), f({3, 5}), f({2, 3, 3}), f({2, 3, 3})},
                  {{"is_causal", true}, {"mask_grad", true}}));
  t.push_back(row("embedding", "embedding", {ints({2, 3}, {0, 2, 1, 2, 3, 0}), f({4, 3})}));
  // ---- graph control ----
  t.push_back(nograd("stop_gradient", "stop_gradient", {f({2, 3})}));
  t.push_back(row("identity", "identity", {f({2, 3})}));
  t.push_back(row("cast", "cast", {f({2, 3})}, {{"dtype", std::string("float64")}}));
  return t;
}

}  // namespace

const std::vector<OpCheckRow>& op_check_table() {
  static const std::vector<OpCheckRow> table = build();
  return table;
}

std::vector<Tensor> make_inputs(const OpCheckRow& r) {
  std::vector<Tensor> out;
  Random rng(name_seed(r.name));
  for (const InputGen& g : r.inputs) {
    if (g.omitted) {
      out.emplace_back();
      continue;
    }
    Tensor t = Tensor::empty(g.shape, g.dtype);
    const int64_t n = t.numel();
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double x;
      if (!g.values.empty()) {
        x = g.values[static_cast<size_t>(i) % g.values.size()];
      } else if (g.away_from_zero) {
        x = g.lo + (g.hi - g.lo) * rng.uniform();
        if (rng.uniform() < 0.5) x = -x;
      } else {
        x = g.lo + (g.hi - g.lo) * rng.uniform();
      }
      v[static_cast<size_t>(i)] = x;
    }
    out.push_back(tensor(v, g.shape, g.dtype));
  }
  return out;
}

std::vector<DType> op_float_dtypes(const std::string& op) {
  const OpDef& def = registry().get(op);
  const OpCheckRow* sample = nullptr;
  for (const OpCheckRow& row : op_check_table()) {
    if (row.op == op) {
      sample = &row;
      break;
    }
  }
  if (!sample) throw ValueError("op_float_dtypes: '" + op + "' has no row in the op check table");
  const bool dtype_attr = std::any_of(def.attrs.begin(), def.attrs.end(), [](const AttrSpec& a) {
    return a.name == "dtype" && a.kind == AttrKind::DType;
  });
  const std::vector<Tensor> inputs = make_inputs(*sample);
  // One run in `dt`; `keep_scalars` leaves 0-d float inputs as they are (the optimizer updates take their step
  // sizes as 0-d float64 tensors, whatever the parameters' dtype).
  auto runs_in = [&](DType dt, bool keep_scalars) {
    std::vector<Tensor> cast = inputs;
    for (Tensor& t : cast) {
      if (t.defined() && is_float(t.dtype()) && !(keep_scalars && t.dim() == 0)) t = ops::cast(t, dt);
    }
    Attrs attrs = sample->attrs;
    // a cast's own target stays the row's: the cast op takes every dtype in, which the input shows
    if (dtype_attr && op != "cast") attrs.set("dtype", std::string(dtype_name(dt)));
    try {
      (void)call_op(def, cast, attrs);
      return true;
    } catch (const DTypeError&) {
      return false;
    }
  };
  std::vector<DType> taken;
  for (const DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    bool ok;
    try {
      ok = runs_in(dt, false);
    } catch (const Error&) {
      ok = runs_in(dt, true);
    }
    if (ok) taken.push_back(dt);
  }
  return taken;
}

}  // namespace bprop
