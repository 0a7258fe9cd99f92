// scaled_dot_product_attention(query, key, value, attn_mask?) {is_causal, scale}, PyTorch's
// F.scaled_dot_product_attention without dropout:
//   out = softmax(q k^T scale + mask) v,   q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev)
// The leading axes broadcast; attn_mask is bool (true = attend) or additive float, broadcastable to (..., L, S);
// is_causal hides key j from query i when j > i (top-left aligned) and combines with a mask; scale null is
// 1/sqrt(E). A row with every key masked gives zeros and zero gradients (PyTorch's math path gives NaN there).
//
// The CPU kernel tiles (kernels/cpu/flash_attention.h): the (L, S) scores are never stored. The bprop is one call
// of scaled_dot_product_attention_grad(query, key, value, attn_mask?, out, dout) {is_causal, scale, mask_grad},
// whose kernel recomputes the score tiles from the rows' log-sum-exp (kept by the forward with its output, or
// recomputed when `out` came from elsewhere) and returns dq, dk, dv (and the float mask's gradient when mask_grad)
// packed into one flat tensor. Its own bprop, for second order, is the vjp of the same gradient written in ops
// (attention_grad_composed below), so third and higher orders follow from the ops' bprops.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "bprop/grad.h"
#include "bprop/half.h"
#include "kernels/cpu/flash_attention.h"
#include "kernels/cpu/parallel.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

constexpr size_t kQuery = 0, kKey = 1, kValue = 2, kMask = 3;
constexpr size_t kOut = 4, kDout = 5;  // the gradient op's

Shape lead(const Shape& s, size_t trailing) {
  return s.size() > trailing ? Shape(s.begin(), s.end() - static_cast<std::ptrdiff_t>(trailing)) : Shape{};
}

std::string arg(const InferCtx& c, size_t i) {
  return "'" + c.op.inputs[i].name + "' of shape " + shape_str(c.input(i).shape());
}

bool has_mask(const std::vector<Tensor>& in) { return in.size() > kMask && in[kMask].defined(); }

// The checked problem: (L, S, E, Ev) and the broadcast batch shape of query, key and value.
struct Problem {
  int64_t L, S, E, Ev;
  Shape batch;
};

Problem check_problem(const InferCtx& c) {
  for (size_t i : {kQuery, kKey, kValue}) {
    if (c.input(i).dim() < 2) c.shape_error("argument " + arg(c, i) + " must have at least 2 dimensions");
  }
  const Shape &qs = c.input(kQuery).shape(), &ks = c.input(kKey).shape(), &vs = c.input(kValue).shape();
  const DType dt = c.input(kQuery).dtype();
  if (!is_float(dt)) c.dtype_error("argument 'query' must be a float tensor, got " + std::string(dtype_name(dt)));
  for (size_t i : {kKey, kValue}) {
    if (c.input(i).dtype() != dt) {
      c.dtype_error("argument '" + c.op.inputs[i].name + "' is " + dtype_name(c.input(i).dtype()) +
                    " but 'query' is " + dtype_name(dt) + " (query, key and value take one dtype)");
    }
  }
  const Problem p{qs.end()[-2], ks.end()[-2], qs.back(), vs.back(), {}};
  if (ks.back() != p.E) {
    c.shape_error("the last dimension of " + arg(c, kKey) + " must equal that of " + arg(c, kQuery) + " (E)");
  }
  if (vs.end()[-2] != p.S) {
    c.shape_error("the second-to-last dimension of " + arg(c, kValue) + " must equal that of " + arg(c, kKey) +
                  " (S, the number of keys)");
  }
  Problem out = p;
  out.batch = broadcast_shapes(broadcast_shapes(lead(qs, 2), lead(ks, 2), c.op.name, "query", "key"), lead(vs, 2),
                               c.op.name, "query and key", "value");
  if (c.has_input(kMask)) {
    const Tensor& m = c.input(kMask);
    if (m.dtype() != DType::Bool && m.dtype() != dt) {
      c.dtype_error("argument 'attn_mask' is " + std::string(dtype_name(m.dtype())) +
                    "; it must be bool (true = attend) or of the query's dtype " + dtype_name(dt) + " (added to the scores)");
    }
    Shape full = out.batch;
    full.push_back(p.L);
    full.push_back(p.S);
    Shape target;
    try {
      target = broadcast_shapes(full, m.shape(), c.op.name, "scores", "attn_mask");
    } catch (const ShapeError&) {
      target.clear();
    }
    if (target != full) {
      c.shape_error("argument " + arg(c, kMask) + " must broadcast to the scores' shape " + shape_str(full) +
                    " (batch..., L, S)");
    }
  }
  return out;
}

Shape attention_shape(const InferCtx& c) {
  const Problem p = check_problem(c);
  Shape out = p.batch;
  out.push_back(p.L);
  out.push_back(p.Ev);
  return out;
}

// Per-problem element offsets of an operand whose leading axes broadcast to `batch`, each problem `matrix`
// elements apart along its own (non-broadcast) axes.
std::vector<int64_t> batch_offsets(const Shape& batch, const Shape& operand_lead, int64_t matrix) {
  const int64_t n = shape_numel(batch);
  std::vector<int64_t> strides(batch.size(), 0);
  int64_t stride = matrix;
  for (size_t d = 0; d < operand_lead.size(); ++d) {
    const size_t od = operand_lead.size() - 1 - d, bd = batch.size() - 1 - d;
    if (operand_lead[od] != 1) strides[bd] = stride;
    stride *= operand_lead[od];
  }
  std::vector<int64_t> off(static_cast<size_t>(n), 0);
  for (int64_t b = 0; b < n; ++b) {
    int64_t rest = b, o = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      o += (rest % batch[d]) * strides[d];
      rest /= batch[d];
    }
    off[static_cast<size_t>(b)] = o;
  }
  return off;
}

double attention_scale(const Attrs& attrs, int64_t E) {
  const AttrValue& s = attrs.get("scale");
  if (std::holds_alternative<std::monostate>(s)) return 1.0 / std::sqrt(static_cast<double>(E));
  return attrs.get_float("scale");
}

cpu::AttentionLayout layout_of(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Shape &qs = in[kQuery].shape(), &ks = in[kKey].shape(), &vs = in[kValue].shape();
  cpu::AttentionLayout a;
  a.L = qs.end()[-2], a.S = ks.end()[-2], a.E = qs.back(), a.Ev = vs.back();
  const Shape batch = broadcast_shapes(broadcast_shapes(lead(qs, 2), lead(ks, 2), "scaled_dot_product_attention"),
                                       lead(vs, 2), "scaled_dot_product_attention");
  a.batch = shape_numel(batch);
  a.q_off = batch_offsets(batch, lead(qs, 2), a.L * a.E);
  a.k_off = batch_offsets(batch, lead(ks, 2), a.S * a.E);
  a.v_off = batch_offsets(batch, lead(vs, 2), a.S * a.Ev);
  a.out_off = batch_offsets(batch, batch, a.L * a.Ev);
  a.disjoint = shape_numel(lead(qs, 2)) == a.batch && shape_numel(lead(ks, 2)) == a.batch &&
               shape_numel(lead(vs, 2)) == a.batch;
  if (has_mask(in)) {
    Shape ms = in[kMask].shape();
    while (ms.size() < 2) ms.insert(ms.begin(), 1);
    const int64_t rows = ms.end()[-2], cols = ms.back();
    a.mask_row_stride = rows == 1 ? 0 : cols;
    a.mask_col_stride = cols == 1 ? 0 : 1;
    a.mask_off = batch_offsets(batch, lead(ms, 2), rows * cols);
    a.mask_is_bool = in[kMask].dtype() == DType::Bool;
    a.disjoint = a.disjoint && shape_numel(lead(ms, 2)) == a.batch && rows == a.L && cols == a.S;
  }
  a.causal = attrs.get_bool("is_causal");
  a.scale = attention_scale(attrs, a.E);
  return a;
}

// What the forward's log-sum-exp depends on besides q, k and the mask: causality and the scale (bit for bit).
std::string residual_key(const cpu::AttentionLayout& a) {
  char scale[32];
  std::snprintf(scale, sizeof scale, "%a", a.scale);
  return std::string("scaled_dot_product_attention causal=") + (a.causal ? "1" : "0") + " scale=" + scale;
}

// The inputs the log-sum-exp is computed from.
std::vector<Tensor> lse_inputs(const std::vector<Tensor>& in) {
  return {in[kQuery], in[kKey], has_mask(in) ? in[kMask] : Tensor()};
}

// The rows' log-sum-exp the forward kept with `out`, when it was computed from these inputs and attributes.
const Tensor* saved_lse(const std::vector<Tensor>& in, const cpu::AttentionLayout& a, DType dt) {
  const KernelResidual* r = in[kOut].residual();
  if (!r || r->op != residual_key(a) || !r->computed_from(lse_inputs(in))) return nullptr;
  if (r->values.dtype() != dt || r->values.numel() != a.batch * a.L) return nullptr;
  return &r->values;
}

// Keeps the rows' log-sum-exp with the forward's output (TensorImpl::residual), for the gradient op.
void keep_lse(KernelCtx& c, const cpu::AttentionLayout& a, Tensor lse) {
  std::vector<std::weak_ptr<TensorImpl>> from;
  for (const Tensor& t : lse_inputs(c.inputs)) {
    from.push_back(t.defined() ? std::weak_ptr<TensorImpl>(t.impl_ptr()) : std::weak_ptr<TensorImpl>());
  }
  c.out.impl()->residual = std::make_shared<const KernelResidual>(KernelResidual{residual_key(a), from, std::move(lse)});
}

// The forward keeps each row's log-sum-exp with its output for the gradient op.
void attention_kernel(KernelCtx& c) {
  const cpu::AttentionLayout a = layout_of(c.inputs, c.attrs);
  const void* mask = has_mask(c.inputs) ? c.inputs[kMask].raw_data() : nullptr;
  Tensor lse = Tensor::empty({a.batch * a.L}, c.out_dtype, Device::cpu(), c.op.name);
  visit_float(c.out_dtype, [&]<typename T>() {
    cpu::flash_attention_forward<T>(a, c.inputs[kQuery].data<T>(), c.inputs[kKey].data<T>(),
                                    c.inputs[kValue].data<T>(), mask, c.out.data<T>(), lse.data<T>());
  });
  keep_lse(c, a, std::move(lse));
}

// ---- the gradient op ----

bool wants_mask_grad(const std::vector<Tensor>& in, const Attrs& attrs) {
  return attrs.get_bool("mask_grad") && has_mask(in) && in[kMask].dtype() != DType::Bool;
}

Shape attention_grad_shape(const InferCtx& c) {
  const Problem p = check_problem(c);
  Shape out_shape = p.batch;
  out_shape.push_back(p.L);
  out_shape.push_back(p.Ev);
  for (size_t i : {kOut, kDout}) {
    if (c.input(i).shape() != out_shape || c.input(i).dtype() != c.input(kQuery).dtype()) {
      c.shape_error("argument " + arg(c, i) + " " + dtype_name(c.input(i).dtype()) + " must be the attention's output, " +
                    shape_str(out_shape) + " " + dtype_name(c.input(kQuery).dtype()));
    }
  }
  int64_t n = c.input(kQuery).numel() + c.input(kKey).numel() + c.input(kValue).numel();
  if (wants_mask_grad(c.inputs, c.attrs)) n += c.input(kMask).numel();
  return {n};
}

void attention_grad_kernel(KernelCtx& c) {
  const cpu::AttentionLayout a = layout_of(c.inputs, c.attrs);
  const void* mask = has_mask(c.inputs) ? c.inputs[kMask].raw_data() : nullptr;
  const bool mask_grad = wants_mask_grad(c.inputs, c.attrs);
  visit_float(c.out_dtype, [&]<typename T>() {
    const T *q = c.inputs[kQuery].data<T>(), *k = c.inputs[kKey].data<T>(), *v = c.inputs[kValue].data<T>();
    const Tensor* saved = saved_lse(c.inputs, a, c.out_dtype);
    std::vector<T> recomputed;
    if (!saved) {  // out came from elsewhere (a copy, a half call's widened operands, a gradcheck): recompute it
      recomputed.resize(static_cast<size_t>(a.batch * a.L));
      cpu::flash_attention_lse<T>(a, q, k, mask, recomputed.data());
    }
    const T* lse = saved ? saved->data<T>() : recomputed.data();
    T* dq = c.out.data<T>();
    std::fill(dq, dq + c.out.numel(), T(0));
    T* dk = dq + c.inputs[kQuery].numel();
    T* dv = dk + c.inputs[kKey].numel();
    T* dmask = mask_grad ? dv + c.inputs[kValue].numel() : nullptr;
    cpu::flash_attention_backward<T>(a, q, k, v, mask, c.inputs[kOut].data<T>(), c.inputs[kDout].data<T>(), lse,
                                     dq, dk, dv, dmask);
  });
}

// ---- float16 / bfloat16 (OpDef::cpu_half) ----
// PyTorch's CPU semantics, as the widening path has them: the float32 kernels on the exactly widened operands,
// each result rounded once (the same bits). Here a group of problems (heads) is widened at a time instead of
// whole tensors, so the float32 memory is the group's blocks. A float mask (read as float32 by the kernels), and
// for the gradient query, key or value blocks shared by several problems (broadcast operands, whose gradients
// accumulate across problems), take the widening path.

template <typename S>
void widen(const S* in, float* out, int64_t n) {
  if constexpr (std::is_same_v<S, Half>) half_to_float(in, out, n);
  else bfloat16_to_float(in, out, n);
}
template <typename S>
void narrow(const float* in, S* out, int64_t n) {
  if constexpr (std::is_same_v<S, Half>) float_to_half(in, out, n);
  else float_to_bfloat16(in, out, n);
}

bool no_float_mask(const std::vector<Tensor>& in) { return !has_mask(in) || in[kMask].dtype() == DType::Bool; }

// True when no two problems share a query, key or value block.
bool own_blocks(const cpu::AttentionLayout& a) {
  for (const std::vector<int64_t>* off : {&a.q_off, &a.k_off, &a.v_off}) {
    std::vector<int64_t> sorted = *off;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return false;
  }
  return true;
}

// Problems per group: a few per thread (the kernels split a group's problems and query tiles over the threads),
// within about 8 MiB of float32 blocks when a problem is large (and always at least one).
int64_t group_size(const cpu::AttentionLayout& a, int64_t floats_per_problem) {
  constexpr int64_t kGroupFloats = int64_t{2} << 20;
  const int64_t by_memory = std::max<int64_t>(1, kGroupFloats / std::max<int64_t>(1, floats_per_problem));
  return std::min({a.batch, by_memory, std::max<int64_t>(4, 4 * int64_t{cpu::num_threads()})});
}

// The layout of problems [b0, b0 + n) of `a`, their blocks packed one after another in the group's buffers (the
// mask stays where it is).
cpu::AttentionLayout group_layout(const cpu::AttentionLayout& a, int64_t b0, int64_t n) {
  cpu::AttentionLayout g = a;
  g.batch = n;
  g.q_off.resize(static_cast<size_t>(n));
  g.k_off.resize(static_cast<size_t>(n));
  g.v_off.resize(static_cast<size_t>(n));
  g.out_off.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    g.q_off[static_cast<size_t>(i)] = i * a.L * a.E;
    g.k_off[static_cast<size_t>(i)] = i * a.S * a.E;
    g.v_off[static_cast<size_t>(i)] = i * a.S * a.Ev;
    g.out_off[static_cast<size_t>(i)] = i * a.L * a.Ev;
  }
  if (!a.mask_off.empty()) g.mask_off.assign(a.mask_off.begin() + b0, a.mask_off.begin() + b0 + n);
  return g;
}

// Widens the blocks of `block` elements of problems [b0, b0 + n) (at `off`) into consecutive blocks of `to`; narrow
// is the way back.
template <typename S>
void widen_blocks(const S* from, const std::vector<int64_t>& off, int64_t b0, int64_t n, int64_t block, float* to) {
  for (int64_t i = 0; i < n; ++i) widen(from + off[static_cast<size_t>(b0 + i)], to + i * block, block);
}
template <typename S>
void narrow_blocks(const float* from, const std::vector<int64_t>& off, int64_t b0, int64_t n, int64_t block, S* to) {
  for (int64_t i = 0; i < n; ++i) narrow(from + i * block, to + off[static_cast<size_t>(b0 + i)], block);
}

// A float32 scratch tensor (counted by memory_stats, as the widened copies it replaces would be).
Tensor scratch(int64_t n, const std::string& op) { return Tensor::empty({n}, DType::Float32, Device::cpu(), op); }

template <typename S>
void attention_half_forward(KernelCtx& c, const cpu::AttentionLayout& a) {
  const void* mask = has_mask(c.inputs) ? c.inputs[kMask].raw_data() : nullptr;
  const int64_t qn = a.L * a.E, kn = a.S * a.E, vn = a.S * a.Ev, on = a.L * a.Ev;
  const int64_t group = group_size(a, qn + kn + vn + on);
  Tensor lse = scratch(a.batch * a.L, c.op.name);
  Tensor buf = scratch(group * (qn + kn + vn + on), c.op.name);
  float* qf = buf.data<float>();
  float *kf = qf + group * qn, *vf = kf + group * kn, *of = vf + group * vn;
  for (int64_t b0 = 0; b0 < a.batch; b0 += group) {
    const int64_t n = std::min(group, a.batch - b0);
    widen_blocks(c.inputs[kQuery].data<S>(), a.q_off, b0, n, qn, qf);
    widen_blocks(c.inputs[kKey].data<S>(), a.k_off, b0, n, kn, kf);
    widen_blocks(c.inputs[kValue].data<S>(), a.v_off, b0, n, vn, vf);
    cpu::flash_attention_forward<float>(group_layout(a, b0, n), qf, kf, vf, mask, of, lse.data<float>() + b0 * a.L);
    narrow_blocks(of, a.out_off, b0, n, on, c.out.data<S>());
  }
  keep_lse(c, a, std::move(lse));  // (float32: what the half gradient reads)
}

bool attention_half_kernel(KernelCtx& c) {
  const cpu::AttentionLayout a = layout_of(c.inputs, c.attrs);
  if (!no_float_mask(c.inputs)) return false;
  if (c.out_dtype == DType::Float16) attention_half_forward<Half>(c, a);
  else attention_half_forward<BFloat16>(c, a);
  return true;
}

template <typename S>
void attention_half_backward(KernelCtx& c, const cpu::AttentionLayout& a) {
  const void* mask = has_mask(c.inputs) ? c.inputs[kMask].raw_data() : nullptr;
  const int64_t qn = a.L * a.E, kn = a.S * a.E, vn = a.S * a.Ev, on = a.L * a.Ev;
  // per problem: q, k, v, out, dout, and dq, dk, dv
  const int64_t group = group_size(a, 2 * (qn + kn + vn) + 2 * on + a.L);
  const Tensor* saved = saved_lse(c.inputs, a, DType::Float32);
  Tensor buf = scratch(group * (2 * (qn + kn + vn) + 2 * on + (saved ? 0 : a.L)), c.op.name);
  float* qf = buf.data<float>();
  float *kf = qf + group * qn, *vf = kf + group * kn, *of = vf + group * vn, *dof = of + group * on;
  float *dqf = dof + group * on, *dkf = dqf + group * qn, *dvf = dkf + group * kn, *lsef = dvf + group * vn;
  S* dq = c.out.data<S>();
  S* dk = dq + c.inputs[kQuery].numel();
  S* dv = dk + c.inputs[kKey].numel();
  for (int64_t b0 = 0; b0 < a.batch; b0 += group) {
    const int64_t n = std::min(group, a.batch - b0);
    const cpu::AttentionLayout g = group_layout(a, b0, n);
    widen_blocks(c.inputs[kQuery].data<S>(), a.q_off, b0, n, qn, qf);
    widen_blocks(c.inputs[kKey].data<S>(), a.k_off, b0, n, kn, kf);
    widen_blocks(c.inputs[kValue].data<S>(), a.v_off, b0, n, vn, vf);
    widen_blocks(c.inputs[kOut].data<S>(), a.out_off, b0, n, on, of);
    widen_blocks(c.inputs[kDout].data<S>(), a.out_off, b0, n, on, dof);
    const float* lse = saved ? saved->data<float>() + b0 * a.L : lsef;
    if (!saved) cpu::flash_attention_lse<float>(g, qf, kf, mask, lsef);
    std::fill(dqf, dqf + n * qn, 0.0f);
    std::fill(dkf, dkf + n * kn, 0.0f);
    std::fill(dvf, dvf + n * vn, 0.0f);
    cpu::flash_attention_backward<float>(g, qf, kf, vf, mask, of, dof, lse, dqf, dkf, dvf, nullptr);
    narrow_blocks(dqf, a.q_off, b0, n, qn, dq);
    narrow_blocks(dkf, a.k_off, b0, n, kn, dk);
    narrow_blocks(dvf, a.v_off, b0, n, vn, dv);
  }
}

bool attention_grad_half_kernel(KernelCtx& c) {
  const cpu::AttentionLayout a = layout_of(c.inputs, c.attrs);
  if (!no_float_mask(c.inputs) || !own_blocks(a)) return false;
  if (c.out_dtype == DType::Float16) attention_half_backward<Half>(c, a);
  else attention_half_backward<BFloat16>(c, a);
  return true;
}

// ---- the same gradient in ops (second order) ----
Tensor swap_last(const Tensor& x) {
  IntList perm;
  for (int64_t i = 0; i < x.dim(); ++i) perm.push_back(i);
  std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  return ops::transpose(x, perm);
}

// The attention probabilities in ops, with fully masked rows all zero.
Tensor probabilities(const Tensor& q, const Tensor& k, const Tensor& mask, const Attrs& attrs) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor scores0 = ops::matmul(q, swap_last(k)) * like(attention_scale(attrs, q.shape().back()), q);
  const bool bool_mask = mask.defined() && mask.dtype() == DType::Bool;
  const Tensor scores = mask.defined() && !bool_mask ? scores0 + mask : scores0;
  Tensor allowed = ops::cast(ops::greater(scores, like(-inf, q)), q.dtype());
  if (bool_mask) allowed = allowed * ops::cast(mask, q.dtype());
  if (attrs.get_bool("is_causal")) {
    const int64_t L = q.shape().end()[-2], S = k.shape().end()[-2];
    std::vector<double> tril(static_cast<size_t>(L * S));
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t j = 0; j < S; ++j) tril[static_cast<size_t>(i * S + j)] = j <= i ? 1.0 : 0.0;
    }
    allowed = allowed * tensor(tril, {L, S}, q.dtype());
  }
  const Tensor any = ops::amax(allowed, IntList{-1}, true);
  const Tensor allowed_b = ops::greater(allowed, like(0.0, q)), any_b = ops::greater(any, like(0.0, q));
  const Tensor masked = ops::where(any_b, ops::where(allowed_b, scores, like(-inf, q)), like(0.0, q));
  return ops::softmax(masked, -1) * any;
}

// scaled_dot_product_attention_grad's packed result from its inputs (q, k, v, float mask or undefined, out,
// dout), written in ops; a bool mask comes in `bool_mask`.
Tensor attention_grad_composed(const std::vector<Tensor>& x, const Tensor& bool_mask, const Attrs& attrs,
                               bool mask_grad) {
  const Tensor &q = x[0], &k = x[1], &v = x[2], &out = x[4], &dout = x[5];
  const Tensor p = probabilities(q, k, bool_mask.defined() ? bool_mask : x[3], attrs);
  const Tensor scale = like(attention_scale(attrs, q.shape().back()), q);
  const Tensor dv = ops::sum_to(ops::matmul(swap_last(p), dout), v.shape());
  const Tensor dp = ops::matmul(dout, swap_last(v));
  const Tensor ds = p * (dp - ops::sum(dout * out, IntList{-1}, true));
  const Tensor dq = ops::sum_to(ops::matmul(ds, k) * scale, q.shape());
  const Tensor dk = ops::sum_to(ops::matmul(swap_last(ds), q) * scale, k.shape());
  std::vector<Tensor> parts = {ops::reshape(dq, {-1}), ops::reshape(dk, {-1}), ops::reshape(dv, {-1})};
  if (mask_grad) parts.push_back(ops::reshape(ops::sum_to(ds, x[3].shape()), {-1}));
  return ops::concat(parts, 0);
}

std::vector<Tensor> attention_grad_bprop(const BpropCtx& c) {
  const bool float_mask = has_mask(c.inputs) && c.input(kMask).dtype() != DType::Bool;
  const Tensor bool_mask = has_mask(c.inputs) && !float_mask ? c.input(kMask) : Tensor();
  const bool mask_grad = wants_mask_grad(c.inputs, c.attrs);
  // the differentiable inputs; a 0-d zero stands in the float mask's place when there is none
  std::vector<Tensor> primals = {c.input(kQuery), c.input(kKey), c.input(kValue),
                                 float_mask ? c.input(kMask) : like(0.0, c.input(kQuery)), c.input(kOut),
                                 c.input(kDout)};
  const Attrs attrs = c.attrs;
  const Fn fn = [bool_mask, attrs, mask_grad, float_mask](const std::vector<Tensor>& x) -> Value {
    std::vector<Tensor> xs = x;
    if (!float_mask) xs[3] = Tensor();
    return attention_grad_composed(xs, bool_mask, attrs, mask_grad);
  };
  std::vector<Tensor> g = vjp(fn, primals, c.dout).second;
  if (!float_mask) g[3] = Tensor();
  return g;
}

// ---- the op's bprop: one gradient-op call, unpacked ----
std::vector<Tensor> attention_bprop(const BpropCtx& c) {
  const bool mask_grad = c.needs(kMask) && has_mask(c.inputs) && c.input(kMask).dtype() != DType::Bool;
  if (!c.needs(kQuery) && !c.needs(kKey) && !c.needs(kValue) && !mask_grad) return std::vector<Tensor>(c.inputs.size());
  Attrs attrs = c.attrs;
  attrs.set("mask_grad", mask_grad);
  static const OpDef& grad_op = registry().get("scaled_dot_product_attention_grad");
  const Tensor packed = call_op(grad_op, {c.input(kQuery), c.input(kKey), c.input(kValue),
                                          has_mask(c.inputs) ? c.input(kMask) : Tensor(), c.out, c.dout},
                                attrs);
  std::vector<Tensor> grads(c.inputs.size());
  int64_t at = 0;
  for (size_t i : {kQuery, kKey, kValue, kMask}) {
    if (i == kMask && !mask_grad) break;
    const Shape& s = c.input(i).shape();
    const int64_t n = shape_numel(s);
    if (c.needs(i)) grads[i] = ops::reshape(ops::slice(packed, {at}, {n}), s);
    at += n;
  }
  return grads;
}

std::vector<AttrSpec> attention_attrs() {
  return {{"is_causal", AttrKind::Bool, false}, {"scale", AttrKind::OptFloat, std::monostate{}}};
}

}  // namespace

void register_attention_ops(Registry& r) {
  {
    OpDef op;
    op.name = "scaled_dot_product_attention";
    op.family = "attention";
    op.inputs = {{"query"}, {"key"}, {"value"}, {"attn_mask", true}};
    op.attrs = attention_attrs();
    op.infer_shape = attention_shape;
    op.infer_dtype = same_dtype;
    op.cpu(attention_kernel);
    op.cpu_half = attention_half_kernel;
    op.amp = AmpClass::Follow;
    op.bprop = attention_bprop;
    r.add(std::move(op));
  }
  {
    OpDef op;
    op.name = "scaled_dot_product_attention_grad";
    op.family = "attention";
    op.inputs = {{"query"}, {"key"}, {"value"}, {"attn_mask", true}, {"out"}, {"dout"}};
    op.attrs = attention_attrs();
    op.attrs.push_back({"mask_grad", AttrKind::Bool, false});
    op.infer_shape = attention_grad_shape;
    op.infer_dtype = same_dtype;
    op.cpu(attention_grad_kernel);
    op.cpu_half = attention_grad_half_kernel;
    op.amp = AmpClass::Keep;
    op.bprop = attention_grad_bprop;
    op.bprop_reads_out = false;
    r.add(std::move(op));
  }
}

}  // namespace bprop
