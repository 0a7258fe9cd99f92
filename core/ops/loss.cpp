// Losses, with torch.nn.functional's semantics: cross_entropy nll_loss binary_cross_entropy_with_logits
// binary_cross_entropy mse_loss l1_loss smooth_l1_loss.
//
// Each loss is a composite op (ops/composite.h): one function writes the loss with public ops, the kernel
// evaluates it unrecorded and the bprop differentiates it, so gradients with respect to every float input
// (targets and weights included) are right to any order without a hand-derived formula per case.
// cross_entropy's training hot path also has a fused kernel and a direct bprop (see below).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ops/composite.h"
#include "ops/op_helpers.h"
#include "tensor/format.h"

namespace bprop {
namespace {

using namespace opdef;

// ---- shared pieces ----------------------------------------------------------------------------------------

// Input i, or an undefined tensor where an optional input was left out.
Tensor input_at(const std::vector<Tensor>& in, size_t i) { return i < in.size() ? in[i] : Tensor(); }

AttrSpec reduction_attr() {
  return {"reduction", AttrKind::String, std::string("mean"), false, {"mean", "sum", "none"}};
}

// The loss tensor reduced as `reduction` says ("none" keeps it elementwise).
Tensor reduce_loss(const Tensor& loss, const std::string& reduction) {
  if (reduction == "sum") return ops::sum(loss);
  if (reduction == "mean") return ops::mean(loss);
  return loss;
}

// Output dtype of a loss: every defined input must be float except those at `int_inputs`; floats promote.
DType loss_dtype(const InferCtx& c, const std::vector<size_t>& int_inputs = {}) {
  DType d = DType::Float32;
  bool first = true;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.has_input(i)) continue;
    if (std::find(int_inputs.begin(), int_inputs.end(), i) != int_inputs.end()) {
      require_int(c, i);
      continue;
    }
    require_float(c, i);
    d = first ? c.input(i).dtype() : promote_types(d, c.input(i).dtype());
    first = false;
  }
  return d;
}

// Shape of an elementwise loss of `shape`: itself for "none", a scalar otherwise.
Shape reduced_shape(const InferCtx& c, const Shape& shape) {
  return c.attrs.get_string("reduction") == "none" ? shape : Shape{};
}

// Fails unless optional input i broadcasts to `target` (the shape of input `against`).
void require_broadcasts_to(const InferCtx& c, size_t i, size_t against) {
  if (!c.has_input(i)) return;
  const Shape& s = c.input(i).shape();
  const Shape& t = c.input(against).shape();
  const std::string& name = c.op.inputs[i].name;
  const std::string& other = c.op.inputs[against].name;
  const Shape b = broadcast_shapes(s, t, c.op.name, name.c_str(), other.c_str());
  if (b != t) {
    c.shape_error("argument '" + name + "' of shape " + shape_str(s) + " does not broadcast to '" + other +
                  "' of shape " + shape_str(t));
  }
}

void require_same_shape(const InferCtx& c, size_t i, size_t j) {
  const Shape &a = c.input(i).shape(), &b = c.input(j).shape();
  if (a != b) {
    c.shape_error("argument '" + c.op.inputs[j].name + "' of shape " + shape_str(b) + " must have the shape of '" +
                  c.op.inputs[i].name + "', " + shape_str(a));
  }
}

OpDef loss_def(const char* name, std::vector<InputSpec> inputs, std::vector<AttrSpec> attrs) {
  OpDef op;
  op.name = name;
  op.family = "loss";
  op.inputs = std::move(inputs);
  op.attrs = std::move(attrs);
  op.allocates_output = false;  // composite kernels hand over the decomposition's result
  return op;
}

// Registers `op` as the composite of `decomp`, with `check(c)` run on the data before the kernel.
void add_composite(Registry& r, OpDef op, const Decomposition& decomp,
                   std::function<void(const KernelCtx&)> check = {}) {
  if (check) {
    op.cpu([decomp, check](KernelCtx& c) {
      check(c);
      c.out = eval_composite(decomp, c.inputs, c.attrs, c.out_dtype);
    });
  } else {
    op.cpu(composite_kernel(decomp));
  }
  op.bprop = composite_bprop(op.name, decomp);
  r.add(std::move(op));
}

// ---- class-index losses (nll_loss, cross_entropy) ---------------------------------------------------------
// Inputs are (C,) with a 0-d label, or (N, C, d1, ...) with labels (N, d1, ...): the class axis is 0 or 1.

int64_t class_axis(int64_t rank) { return rank == 1 ? 0 : 1; }

Shape class_loss_shape(const InferCtx& c) {
  const Tensor& x = c.input(0);
  const Tensor& labels = c.input(1);
  const std::string& xname = c.op.inputs[0].name;
  if (x.dim() == 0) {
    c.shape_error("argument '" + xname + "' must have a class axis, shape (C,) or (N, C, ...), got shape ()");
  }
  const int64_t ca = class_axis(x.dim());
  const int64_t classes = x.shape()[static_cast<size_t>(ca)];
  Shape expected = x.shape();
  expected.erase(expected.begin() + ca);
  if (labels.shape() != expected) {
    c.shape_error("argument 'labels' of shape " + shape_str(labels.shape()) + " does not match '" + xname +
                  "' of shape " + shape_str(x.shape()) + " (expected labels of shape " + shape_str(expected) + ")");
  }
  if (c.has_input(2) && c.input(2).shape() != Shape{classes}) {
    c.shape_error("argument 'weight' of shape " + shape_str(c.input(2).shape()) + " must have one entry per class, " +
                  shape_str({classes}) + " for '" + xname + "' of shape " + shape_str(x.shape()));
  }
  if (c.attrs.has("label_smoothing")) {
    const double ls = c.attrs.get_float("label_smoothing");
    if (!(ls >= 0.0 && ls <= 1.0)) {
      c.value_error("'label_smoothing' must be between 0.0 and 1.0, got " + format_number(ls));
    }
  }
  return reduced_shape(c, expected);
}

DType class_loss_dtype(const InferCtx& c) { return loss_dtype(c, {1}); }

// Every label is a class in [0, C) or ignore_index (a data check, so it runs with the kernel).
void check_labels(const KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& labels = c.inputs[1];
  const int64_t classes = x.shape()[static_cast<size_t>(class_axis(x.dim()))];
  const int64_t ignore = c.attrs.get_int("ignore_index");
  const Tensor host = labels.cpu();  // (labels on a device are read through a copy)
  const int32_t* p = host.data<int32_t>();
  for (int64_t i = 0; i < labels.numel(); ++i) {
    const int64_t y = p[i];
    if (y != ignore && (y < 0 || y >= classes)) {
      throw ValueError("For '" + c.op.name + "', label " + std::to_string(y) + " at flat position " +
                       std::to_string(i) + " of 'labels' " + shape_str(labels.shape()) + " is out of range for " +
                       std::to_string(classes) + " classes (expected 0.." + std::to_string(classes - 1) +
                       " or ignore_index " + std::to_string(ignore) + ")");
    }
  }
}

// What the class-index losses derive from the labels.
struct LabelInfo {
  int64_t axis = 0;   // the class axis of the input
  int64_t classes = 0;
  Tensor valid;       // bool, labels' shape: the label is not ignore_index
  Tensor hot;         // bool, the input's shape: class == label (all false on ignored rows)
};

LabelInfo label_info(const Tensor& x, const Tensor& labels, int64_t ignore) {
  LabelInfo li;
  li.axis = class_axis(x.dim());
  li.classes = x.shape()[static_cast<size_t>(li.axis)];
  // Labels are int32 and checked to be classes or ignore_index, so an ignore_index beyond int32 matches none,
  // exactly like -1.
  const bool fits = ignore >= std::numeric_limits<int32_t>::min() && ignore <= std::numeric_limits<int32_t>::max();
  const Tensor ign = scalar(fits ? static_cast<double>(ignore) : -1.0, DType::Int32);
  li.valid = ops::not_equal(labels, ign);
  // An ignore_index inside [0, C) would otherwise pick its class: such rows get the label -1 first.
  const Tensor eff = (ignore >= 0 && ignore < li.classes) ? ops::where(li.valid, labels, scalar(-1.0, DType::Int32))
                                                          : labels;
  Shape class_shape(static_cast<size_t>(x.dim() - li.axis), 1);  // (C, 1, ..., 1): broadcasts at the class axis
  class_shape[0] = li.classes;
  const Tensor class_ids = arange(0.0, static_cast<double>(li.classes), 1.0, DType::Int32).view(class_shape);
  li.hot = ops::equal(ops::expand_dims(eff, li.axis), class_ids);
  return li;
}

// The class weights shaped to broadcast along the class axis of an input of `rank`.
Tensor class_weights(const Tensor& weight, int64_t rank, int64_t axis) {
  Shape s(static_cast<size_t>(rank - axis), 1);
  s[0] = weight.numel();
  return s.size() == 1 ? weight : ops::reshape(weight, s);
}

// The per-row target weights w[y] (1 without weights), 0 on ignored rows; in the dtype of `ref`.
Tensor target_weights(const LabelInfo& li, const Tensor& weight, const Tensor& ref) {
  if (!weight.defined()) return mask_as(li.valid, ref);
  const Tensor w = class_weights(weight, ref.dim(), li.axis);
  return ops::sum(ops::where(li.hot, w, like(0.0, w)), li.axis);
}

// nll_loss: loss_i = -w[y_i] * log_probs[i, y_i], 0 where y_i == ignore_index; "mean" divides the sum by the
// sum of w[y_i] over the rows not ignored.
Tensor nll_from(const Tensor& log_probs, const LabelInfo& li, const Tensor& wy, const std::string& reduction) {
  // where (not a product with the one-hot), so a -inf log-probability of another class cannot make 0 * inf.
  const Tensor picked = ops::sum(ops::where(li.hot, log_probs, like(0.0, log_probs)), li.axis);
  const Tensor loss = -(wy * picked);
  if (reduction == "none") return loss;
  if (reduction == "sum") return ops::sum(loss);
  return ops::sum(loss) / ops::sum(wy);
}

Tensor nll_loss_decomp(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Tensor &log_probs = in[0], &labels = in[1];
  const Tensor weight = input_at(in, 2);
  const LabelInfo li = label_info(log_probs, labels, attrs.get_int("ignore_index"));
  return nll_from(log_probs, li, target_weights(li, weight, log_probs), attrs.get_string("reduction"));
}

// cross_entropy = nll_loss(log_softmax(logits)); with label smoothing ls, PyTorch's
//   (1 - ls) * nll + (ls / C) * reduce(-sum_c w_c log_softmax_c), the smooth term 0 on ignored rows and, for
//   "mean", divided by the same sum of w[y_i] as nll.
Tensor cross_entropy_decomp(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Tensor &logits = in[0], &labels = in[1];
  const Tensor weight = input_at(in, 2);
  const std::string& reduction = attrs.get_string("reduction");
  const double ls = attrs.get_float("label_smoothing");
  const LabelInfo li = label_info(logits, labels, attrs.get_int("ignore_index"));
  const Tensor log_probs = ops::log_softmax(logits, li.axis);
  const Tensor wy = target_weights(li, weight, log_probs);
  const Tensor nll = nll_from(log_probs, li, wy, reduction);
  if (ls == 0.0) return nll;
  const Tensor weighted = weight.defined() ? log_probs * class_weights(weight, logits.dim(), li.axis) : log_probs;
  Tensor smooth = -ops::sum(weighted, li.axis);
  smooth = ops::where(li.valid, smooth, like(0.0, smooth));
  if (reduction == "sum") smooth = ops::sum(smooth);
  if (reduction == "mean") smooth = ops::sum(smooth) / ops::sum(wy);
  return nll * (1.0 - ls) + smooth * (ls / static_cast<double>(li.classes));
}

// The training hot path of cross_entropy: (N, C) logits, no class weights, no label smoothing, a "mean" or
// "sum" reduction. It gets a fused kernel (one pass per row: max, log-sum-exp, pick the label) instead of a
// dozen ops with their temporaries, and the closed-form bprop
//   d logits = (softmax(logits) - onehot(labels)) * dout / count   (count = rows not ignored; 1 for "sum")
// instead of rerunning the decomposition. Both paths give the same values; everything else takes the
// composite route.
// (On the host, or traced for it, only: on a device the decomposition's ops run there.)
bool on_host(const Tensor& t) { return !t.on_device(); }

bool cross_entropy_fast(const std::vector<Tensor>& in, const Attrs& attrs) {
  // (half logits take the decomposition: its ops compute in float32 and round as every half op does)
  return on_host(in[0]) && on_host(in[1]) && !is_half(in[0].dtype()) && in[0].dim() == 2 &&
         !input_at(in, 2).defined() && attrs.get_float("label_smoothing") == 0.0 &&
         attrs.get_string("reduction") != "none";
}

void cross_entropy_fast_kernel(KernelCtx& c) {
  const Tensor logits = cpu::as_dtype(c.inputs[0], c.out_dtype);
  const Tensor& labels = c.inputs[1];
  const int64_t rows = logits.shape()[0], classes = logits.shape()[1];
  const int64_t ignore = c.attrs.get_int("ignore_index");
  const int32_t* y = labels.data<int32_t>();
  std::vector<double> row_loss(static_cast<size_t>(rows), 0.0);
  visit_float(c.out_dtype, [&]<typename T>() {
    const T* x = logits.data<T>();
    cpu::parallel_for(rows, std::max<int64_t>(1, cpu::kParallelGrain / std::max<int64_t>(classes, 1)),
                      [&](int64_t b, int64_t e) {
                        for (int64_t r = b; r < e; ++r) {
                          if (y[r] == ignore) continue;
                          const T* row = x + r * classes;
                          T m = -std::numeric_limits<T>::infinity();
                          for (int64_t k = 0; k < classes; ++k) m = row[k] > m ? row[k] : m;
                          double s = 0.0;
                          for (int64_t k = 0; k < classes; ++k) s += static_cast<double>(std::exp(row[k] - m));
                          // -log_softmax at the label = logsumexp(row) - row[y]
                          row_loss[static_cast<size_t>(r)] = static_cast<double>(m) + std::log(s) -
                                                             static_cast<double>(row[y[r]]);
                        }
                      });
  });
  double total = 0.0;
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    total += row_loss[static_cast<size_t>(r)];
    count += y[r] != ignore;
  }
  // "mean" over no rows is 0 / 0 = NaN, as in PyTorch.
  const double value =
      c.attrs.get_string("reduction") == "sum" ? total : total / static_cast<double>(count);
  c.out = full({}, value, c.out_dtype);
}

// (softmax(logits) - onehot) * dout / count, zero on ignored rows; written with ops, so it differentiates again.
Tensor cross_entropy_fast_grad(const BpropCtx& c) {
  const Tensor &logits = c.input(0), &labels = c.input(1);
  const LabelInfo li = label_info(logits, labels, c.attrs.get_int("ignore_index"));
  const Tensor valid = mask_as(li.valid, logits);
  Tensor scale = c.dout * valid;
  if (c.attrs.get_string("reduction") == "mean") scale = scale / ops::sum(valid);
  return (ops::softmax(logits, 1) - mask_as(li.hot, logits)) * ops::expand_dims(scale, 1);
}

// ---- binary losses --------------------------------------------------------------------------------------

Shape binary_loss_shape(const InferCtx& c) {
  require_same_shape(c, 0, 1);
  for (size_t i = 2; i < c.op.inputs.size(); ++i) require_broadcasts_to(c, i, 0);
  return reduced_shape(c, c.input(0).shape());
}

// loss = (1 - t) x + lw * softplus(-x), lw = 1 + (pos_weight - 1) t (1 without pos_weight), times weight;
// softplus(-x) = log(1 + e^-x) = -log sigmoid(x), evaluated stably.
Tensor bce_with_logits_decomp(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Tensor &x = in[0], &t = in[1];
  const Tensor weight = input_at(in, 2), pos_weight = input_at(in, 3);
  const Tensor log_sig_neg = ops::softplus(-x);
  Tensor loss = (1.0 - t) * x + (pos_weight.defined() ? ((pos_weight - 1.0) * t + 1.0) * log_sig_neg : log_sig_neg);
  if (weight.defined()) loss = loss * weight;
  return reduce_loss(loss, attrs.get_string("reduction"));
}

// log(p) clamped below at -100 like PyTorch; at p == 0 the value is -100 with a zero (not NaN) gradient.
Tensor clamped_log(const Tensor& p) {
  const Tensor positive = ops::greater(p, like(0.0, p));
  const Tensor safe = ops::where(positive, p, like(1.0, p));
  return ops::where(positive, ops::clamp(ops::log(safe), -100.0, std::nullopt), like(-100.0, p));
}

// loss = -w (t log p + (1 - t) log(1 - p)), each log clamped at -100.
Tensor bce_decomp(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Tensor &p = in[0], &t = in[1];
  const Tensor weight = input_at(in, 2);
  Tensor loss = -(t * clamped_log(p) + (1.0 - t) * clamped_log(1.0 - p));
  if (weight.defined()) loss = loss * weight;
  return reduce_loss(loss, attrs.get_string("reduction"));
}

void check_probabilities(const KernelCtx& c) {
  const Tensor p = c.inputs[0].cpu();  // (probabilities on a device are read through a copy)
  visit_storage_dtype(p.dtype(), [&]<typename T>() {
    const T* v = p.data<T>();
    for (int64_t i = 0; i < p.numel(); ++i) {
      const double x = convert_element<double>(v[i]);
      if (!(x >= 0.0 && x <= 1.0)) {
        throw ValueError("For 'binary_cross_entropy', every element of 'probs' must be between 0 and 1, got " +
                         std::to_string(x) + " at flat position " + std::to_string(i) + " of shape " +
                         shape_str(p.shape()));
      }
    }
  });
}

// ---- regression losses (x, y broadcast together) ---------------------------------------------------------

Shape regression_shape(const InferCtx& c) { return reduced_shape(c, broadcast_shape(c)); }

Tensor mse_decomp(const std::vector<Tensor>& in, const Attrs& attrs) {
  return reduce_loss(ops::square(in[0] - in[1]), attrs.get_string("reduction"));  // (x - y)^2
}

Tensor l1_decomp(const std::vector<Tensor>& in, const Attrs& attrs) {
  return reduce_loss(ops::abs(in[0] - in[1]), attrs.get_string("reduction"));  // |x - y|
}

// 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (d = x - y); beta = 0 is l1.
Tensor smooth_l1_decomp(const std::vector<Tensor>& in, const Attrs& attrs) {
  const double beta = attrs.get_float("beta");
  const Tensor d = in[0] - in[1];
  const Tensor ad = ops::abs(d);
  Tensor loss = ad;
  if (beta > 0.0) loss = ops::where(ops::less(ad, like(beta, ad)), ops::square(d) * (0.5 / beta), ad - 0.5 * beta);
  return reduce_loss(loss, attrs.get_string("reduction"));
}

}  // namespace

void register_loss_ops(Registry& r) {
  {
    OpDef op = loss_def("cross_entropy", {{"logits"}, {"labels"}, {"weight", true}},
                        {reduction_attr(), {"ignore_index", AttrKind::Int, int64_t{-100}},
                         {"label_smoothing", AttrKind::Float, 0.0}});
    op.infer_shape = class_loss_shape;
    op.infer_dtype = class_loss_dtype;
    op.cpu([](KernelCtx& c) {
      check_labels(c);
      if (cross_entropy_fast(c.inputs, c.attrs)) cross_entropy_fast_kernel(c);
      else c.out = eval_composite(cross_entropy_decomp, c.inputs, c.attrs, c.out_dtype);
    });
    const BpropFn composite = composite_bprop("cross_entropy", cross_entropy_decomp);
    op.bprop = [composite](const BpropCtx& c) -> std::vector<Tensor> {
      if (!cross_entropy_fast(c.inputs, c.attrs) || !on_host(c.dout)) return composite(c);
      return {c.needs(0) ? cross_entropy_fast_grad(c) : Tensor()};
    };
    r.add(std::move(op));
  }
  {
    OpDef op = loss_def("nll_loss", {{"log_probs"}, {"labels"}, {"weight", true}},
                        {reduction_attr(), {"ignore_index", AttrKind::Int, int64_t{-100}}});
    op.infer_shape = class_loss_shape;
    op.infer_dtype = class_loss_dtype;
    add_composite(r, std::move(op), nll_loss_decomp, check_labels);
  }
  {
    OpDef op = loss_def("binary_cross_entropy_with_logits",
                        {{"logits"}, {"target"}, {"weight", true}, {"pos_weight", true}}, {reduction_attr()});
    op.infer_shape = binary_loss_shape;
    op.infer_dtype = [](const InferCtx& c) { return loss_dtype(c); };
    add_composite(r, std::move(op), bce_with_logits_decomp);
  }
  {
    OpDef op = loss_def("binary_cross_entropy", {{"probs"}, {"target"}, {"weight", true}}, {reduction_attr()});
    op.takes_half = false;
    op.infer_shape = binary_loss_shape;
    op.infer_dtype = [](const InferCtx& c) { return loss_dtype(c); };
    add_composite(r, std::move(op), bce_decomp, check_probabilities);
  }
  {
    OpDef op = loss_def("mse_loss", {{"x"}, {"y"}}, {reduction_attr()});
    op.takes_half = false;
    op.infer_shape = regression_shape;
    op.infer_dtype = [](const InferCtx& c) { return loss_dtype(c); };
    add_composite(r, std::move(op), mse_decomp);
  }
  {
    OpDef op = loss_def("l1_loss", {{"x"}, {"y"}}, {reduction_attr()});
    op.infer_shape = regression_shape;
    op.infer_dtype = [](const InferCtx& c) { return loss_dtype(c); };
    add_composite(r, std::move(op), l1_decomp);
  }
  {
    OpDef op = loss_def("smooth_l1_loss", {{"x"}, {"y"}}, {reduction_attr(), {"beta", AttrKind::Float, 1.0}});
    op.infer_shape = [](const InferCtx& c) {
      const double beta = c.attrs.get_float("beta");
      if (!(beta >= 0.0)) c.value_error("'beta' must be non-negative, got " + format_number(beta));
      return regression_shape(c);
    };
    op.infer_dtype = [](const InferCtx& c) { return loss_dtype(c); };
    add_composite(r, std::move(op), smooth_l1_decomp);
  }
}

}  // namespace bprop
