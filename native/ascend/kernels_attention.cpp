// scaled_dot_product_attention and its gradient op on the NPU: aclnnFlashAttentionScore and
// aclnnFlashAttentionScoreGrad (ops-transformer; Atlas A2 training series only), layout BNSD.
//
// Taken: 4-D query, key and value (B, N, L|S, E) of one dtype (float32, float16, bfloat16) with the same B and N
// and E == Ev, no attn_mask, causal or not. Causality is sparseMode 0 with an (L, S) bool mask of the future keys
// (CANN's 1 = not attended) and nextTokens 0, which keep the same keys as the op's top-left alignment. Everything
// else (masks, whose fully masked rows the op defines as zeros while the device averages them; broadcast batch
// axes; float64) is left to the CPU kernel. The forward keeps the device's softmaxMax and softmaxSum ([B, N, L, 8]
// float32 each, packed in one tensor) with its output, as the CPU kernel keeps its log-sum-exp, and the gradient
// kernel hands them back; without them (an output from elsewhere) the gradient runs on the CPU.
#include <cmath>
#include <cstdio>
#include <limits>
#include <variant>

#include "ascend/aclnn_call.h"
#include "ascend/kernels.h"
#include "ascend/runtime.h"
#include "bprop/device.h"

namespace bprop::ascend {
namespace {

using acl::aclTensor;

[[noreturn]] void decline(const std::string& why) { throw KernelDeclined{why}; }

constexpr size_t kQuery = 0, kKey = 1, kValue = 2, kMask = 3, kOut = 4, kDout = 5;
constexpr int64_t kAllTokens = std::numeric_limits<int32_t>::max();  // CANN's default preTokens / nextTokens

struct FaProblem {
  int64_t B, N, L, S, E;
  double scale;
  bool causal;
};

FaProblem check_problem(const KernelCtx& c) {
  if (Runtime::get().soc() == SocFamily::Ascend910) {
    decline("aclnnFlashAttentionScore is not supported on " + Runtime::get().soc_name() + " (Atlas training series)");
  }
  const Tensor &q = c.inputs[kQuery], &k = c.inputs[kKey], &v = c.inputs[kValue];
  if (c.inputs.size() > kMask && c.inputs[kMask].defined()) decline("attn_mask (left to the CPU kernel)");
  for (const Tensor* t : {&q, &k, &v}) {
    if (t->dtype() != q.dtype()) decline("mixed dtypes");
    if (t->dim() != 4) decline("query, key and value not 4-D (B, N, L, E)");
    if (t->numel() == 0) decline("an empty tensor");
  }
  const DType dt = q.dtype();
  if (dt != DType::Float32 && !is_half(dt)) decline(std::string(dtype_name(dt)) + " is not supported by the NPU operator");
  const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[1] != qs[1] || vs[1] != qs[1]) decline("broadcast batch or head axes");
  if (vs[3] != qs[3] || ks[3] != qs[3] || vs[2] != ks[2]) decline("E != Ev");
  if (qs[1] > 256 || qs[3] > 512) decline("N > 256 or E > 512");
  FaProblem p{qs[0], qs[1], qs[2], ks[2], qs[3], 0.0, c.attrs.get_bool("is_causal")};
  const AttrValue& s = c.attrs.get("scale");
  p.scale = std::holds_alternative<std::monostate>(s) ? 1.0 / std::sqrt(static_cast<double>(p.E))
                                                      : c.attrs.get_float("scale");
  return p;
}

// The (L, S) bool mask of the future keys (j > i), on the device.
Tensor causal_mask(const FaProblem& p, Device device) {
  std::vector<bool> m(static_cast<size_t>(p.L * p.S));
  for (int64_t i = 0; i < p.L; ++i)
    for (int64_t j = 0; j < p.S; ++j) m[static_cast<size_t>(i * p.S + j)] = j > i;
  return tensor_bool(m, {p.L, p.S}).to(device);
}

std::string residual_key(const FaProblem& p) {
  char scale[32];
  std::snprintf(scale, sizeof scale, "%a", p.scale);
  return std::string("aclnnFlashAttentionScore causal=") + (p.causal ? "1" : "0") + " scale=" + scale;
}

char kLayout[] = "BNSD";

void attention(KernelCtx& c) {
  const FaProblem p = check_problem(c);
  const Tensor stats = Tensor::empty({2, p.B, p.N, p.L, 8}, DType::Float32, c.device);  // softmaxMax, softmaxSum
  const int64_t half = p.B * p.N * p.L * 8;
  const std::vector<int64_t> sdims = {p.B, p.N, p.L, 8}, sstrides = {p.N * p.L * 8, p.L * 8, 8, 1};
  AclTensorArg q(c.inputs[kQuery]), k(c.inputs[kKey]), v(c.inputs[kValue]), out(c.out);
  AclTensorArg mx(stats, sdims, sstrides, 0), sm(stats, sdims, sstrides, half);
  const Tensor mask = p.causal ? causal_mask(p, c.device) : Tensor();
  std::unique_ptr<AclTensorArg> m = p.causal ? std::make_unique<AclTensorArg>(mask) : nullptr;
  launch_aclnn(c.device, "FlashAttentionScore", static_cast<const aclTensor*>(q.get()),
               static_cast<const aclTensor*>(k.get()), static_cast<const aclTensor*>(v.get()),
               static_cast<const aclTensor*>(nullptr), static_cast<const aclTensor*>(nullptr),
               static_cast<const aclTensor*>(nullptr), static_cast<const aclTensor*>(m ? m->get() : nullptr),
               static_cast<const acl::aclIntArray*>(nullptr), p.scale, 1.0, kAllTokens,
               p.causal ? int64_t{0} : kAllTokens, p.N, kLayout, int64_t{0}, int64_t{0},
               static_cast<const aclTensor*>(mx.get()), static_cast<const aclTensor*>(sm.get()),
               static_cast<const aclTensor*>(nullptr), static_cast<const aclTensor*>(out.get()));
  std::vector<std::weak_ptr<TensorImpl>> from = {c.inputs[kQuery].impl_ptr(), c.inputs[kKey].impl_ptr(),
                                                 c.inputs[kValue].impl_ptr()};
  c.out.impl()->residual = std::make_shared<const KernelResidual>(KernelResidual{residual_key(p), from, stats});
}

void attention_grad(KernelCtx& c) {
  const FaProblem p = check_problem(c);
  const Tensor &o = c.inputs[kOut], &g = c.inputs[kDout];
  const KernelResidual* r = o.residual();
  if (!r || r->op != residual_key(p) ||
      !r->computed_from({c.inputs[kQuery], c.inputs[kKey], c.inputs[kValue]})) {
    decline("no softmax statistics of the NPU forward kept with `out`");
  }
  if (o.dtype() != c.out_dtype || g.dtype() != c.out_dtype) decline("mixed dtypes");
  const Tensor& stats = r->values;
  const int64_t half = p.B * p.N * p.L * 8;
  const std::vector<int64_t> sdims = {p.B, p.N, p.L, 8}, sstrides = {p.N * p.L * 8, p.L * 8, 8, 1};
  AclTensorArg q(c.inputs[kQuery]), k(c.inputs[kKey]), v(c.inputs[kValue]), dy(g), out(o);
  AclTensorArg mx(stats, sdims, sstrides, 0), sm(stats, sdims, sstrides, half);
  // dq, dk, dv: views of the packed result.
  const int64_t nq = c.inputs[kQuery].numel(), nk = c.inputs[kKey].numel();
  const auto view = [&](const Shape& s, int64_t offset) {
    const std::vector<int64_t> dims(s.begin(), s.end());
    return std::make_unique<AclTensorArg>(c.out, dims, row_major_strides(s), offset);
  };
  const auto dq = view(c.inputs[kQuery].shape(), 0), dk = view(c.inputs[kKey].shape(), nq),
             dv = view(c.inputs[kValue].shape(), nq + nk);
  const Tensor mask = p.causal ? causal_mask(p, c.device) : Tensor();
  std::unique_ptr<AclTensorArg> m = p.causal ? std::make_unique<AclTensorArg>(mask) : nullptr;
  const aclTensor* none = nullptr;
  launch_aclnn(c.device, "FlashAttentionScoreGrad", static_cast<const aclTensor*>(q.get()),
               static_cast<const aclTensor*>(k.get()), static_cast<const aclTensor*>(v.get()),
               static_cast<const aclTensor*>(dy.get()), none, none, none,
               static_cast<const aclTensor*>(m ? m->get() : nullptr), static_cast<const aclTensor*>(mx.get()),
               static_cast<const aclTensor*>(sm.get()), none, static_cast<const aclTensor*>(out.get()),
               static_cast<const acl::aclIntArray*>(nullptr), p.scale, 1.0, kAllTokens,
               p.causal ? int64_t{0} : kAllTokens, p.N, kLayout, int64_t{0}, int64_t{0},
               static_cast<const aclTensor*>(dq->get()), static_cast<const aclTensor*>(dk->get()),
               static_cast<const aclTensor*>(dv->get()), none);
}

}  // namespace

std::vector<DeviceKernel> attention_kernels() {
  return {
      {"scaled_dot_product_attention", "FlashAttentionScore", attention},
      {"scaled_dot_product_attention_grad", "FlashAttentionScoreGrad", attention_grad},
  };
}

}  // namespace bprop::ascend
