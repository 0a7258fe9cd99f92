// The fake's transformer operators (libopapi_transformer.so, as CANN 8.1 splits them out):
// aclnnFlashAttentionScore and aclnnFlashAttentionScoreGrad, with the signatures, layouts, mask convention (1 =
// not attended), softmaxMax / softmaxSum outputs ([B, N, Sq, 8], float32, each value repeated 8 times) and checks of
// ops-transformer's documentation. Computed in double, as the reference: scores s = scale * q k^T, masked positions
// set to the most negative float (so a fully masked row averages the values, as the device does), the row's max and
// sum of exp(s - max) kept, out = softmax(s) v.
//
// What the fake computes of the documented surface: the BNSD and BSND layouts (BSH and SBH are refused by the fake,
// not by CANN), no pse / dropout / padding mask / prefix (keepProb 1), sparseMode 0 with preTokens / nextTokens as a
// band (the mask, when given, applied as well), grouped-query heads (Nq a multiple of Nkv).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "opapi_common.h"

namespace fake_ascend {
namespace {

constexpr double kMasked = -3.4028234663852886e38;  // the most negative float

struct Layout {
  int64_t B = 0, N = 0, S = 0, D = 0;
  bool bsnd = false;
  /// Row-major index of (b, n, s, d) in a tensor of this layout.
  int64_t at(int64_t b, int64_t n, int64_t s, int64_t d) const {
    return bsnd ? ((b * S + s) * N + n) * D + d : ((b * N + n) * S + s) * D + d;
  }
};

/// The (B, N, S, D) of a 4-D tensor in `layout` ("BNSD" or "BSND").
bool layout_of(Op& op, const char* arg, const TDesc& t, const std::string& layout, Layout* l) {
  if (!op.check(t.ndim() == 4, std::string(arg) + " must be 4-D in layout " + layout + ", got " +
                                   std::to_string(t.ndim()) + "-D")) {
    return false;
  }
  l->bsnd = layout == "BSND";
  l->B = t.shape[0];
  l->N = l->bsnd ? t.shape[2] : t.shape[1];
  l->S = l->bsnd ? t.shape[1] : t.shape[2];
  l->D = t.shape[3];
  return true;
}

/// Everything both operators share: the arguments that must be absent, the layouts, the heads, the mask.
struct Problem {
  Layout q, k, v;
  double scale = 1.0;
  int64_t pre = 0, next = 0;
  TDesc mask;
  int64_t group = 1;  // query heads per key/value head
};

bool common_checks(Op& op, const TDesc& q, const TDesc& k, const TDesc& v, const TDesc& pse, const TDesc& drop,
                   const TDesc& padding, const TDesc& mask, const std::vector<int64_t>& prefix, double scale,
                   double keep_prob, int64_t pre, int64_t next, int64_t head_num, const char* input_layout,
                   int64_t inner_precise, int64_t sparse_mode, Problem* p) {
  op.dtype("query", q.dtype, {ACL_FLOAT, ACL_FLOAT16, ACL_BF16});
  op.check(k.dtype == q.dtype && v.dtype == q.dtype, "query, key and value must have one dtype");
  if (!op.check(input_layout != nullptr, "inputLayout is nullptr")) return false;
  const std::string layout = input_layout;
  op.check(layout == "BSH" || layout == "SBH" || layout == "BSND" || layout == "BNSD",
           "inputLayout '" + layout + "' is not one of BSH, SBH, BSND, BNSD");
  op.check(layout == "BSND" || layout == "BNSD", "inputLayout " + layout + ": the fake computes BSND and BNSD only");
  op.check(!pse.present && !drop.present && !padding.present && prefix.empty(),
           "the fake computes no pse, dropMask, paddingMask or prefix");
  op.check(keep_prob > 0.0 && keep_prob <= 1.0, "keepProb must be in (0, 1], got " + std::to_string(keep_prob));
  op.check(keep_prob == 1.0, "keepProb < 1 needs a dropMask, which the fake does not compute");
  op.check(inner_precise >= 0 && inner_precise <= 2, "innerPrecise must be 0, 1 or 2");
  op.check(sparse_mode >= 0 && sparse_mode <= 8, "sparseMode must be in [0, 8], got " + std::to_string(sparse_mode));
  op.check(sparse_mode == 0, "sparseMode " + std::to_string(sparse_mode) + ": the fake computes sparseMode 0 only");
  if (op.status()) return false;
  if (!layout_of(op, "query", q, layout, &p->q) || !layout_of(op, "key", k, layout, &p->k) ||
      !layout_of(op, "value", v, layout, &p->v)) {
    return false;
  }
  op.check(p->q.B == p->k.B && p->q.B == p->v.B, "query, key and value must have one batch size");
  op.check(p->k.N == p->v.N && p->k.S == p->v.S, "key and value must have one shape but for D");
  op.check(p->q.D == p->k.D, "query and key must have one head dim D");
  op.check(p->k.D >= p->v.D, "the key's D must be at least the value's");
  op.check(head_num == p->q.N, "headNum " + std::to_string(head_num) + " must be the query's N " + std::to_string(p->q.N));
  op.check(p->q.N >= 1 && p->q.N <= 256, "N must be in [1, 256]");
  op.check(p->k.N > 0 && p->q.N % p->k.N == 0, "the query's N must be a multiple of the key's");
  op.check(p->q.D >= 1 && p->q.D <= 512, "D must be in [1, 512]");
  if (op.status()) return false;
  p->group = p->q.N / p->k.N;
  p->scale = scale;
  p->pre = pre;
  p->next = next;
  if (mask.present) {
    op.dtype("attenMask", mask.dtype, {ACL_BOOL, ACL_UINT8});
    const Shape& m = mask.shape;
    const int64_t Sq = p->q.S, Skv = p->k.S;
    const bool ok = (m.size() == 2 && m[0] == Sq && m[1] == Skv) ||
                    (m.size() == 4 && (m[0] == 1 || m[0] == p->q.B) && (m[1] == 1 || m[1] == p->q.N) &&
                     m[2] == Sq && m[3] == Skv);
    op.check(ok, "attenMask must be [B, N, Sq, Skv], [B, 1, Sq, Skv], [1, 1, Sq, Skv] or [Sq, Skv]");
    p->mask = mask;
  }
  return !op.status();
}

/// Whether (b, n, i, j) is masked: the mask's 1s and, for sparseMode 0, the band of preTokens / nextTokens.
struct Masking {
  std::vector<uint8_t> bits;
  Shape shape;
  int64_t pre, next, B, N, Sq, Skv;
  bool masked(int64_t b, int64_t n, int64_t i, int64_t j) const {
    if (j - i > next || i - j > pre) return true;
    if (bits.empty()) return false;
    int64_t idx;
    if (shape.size() == 2) {
      idx = i * Skv + j;
    } else {
      const int64_t bb = shape[0] == 1 ? 0 : b, nn = shape[1] == 1 ? 0 : n;
      idx = ((bb * shape[1] + nn) * Sq + i) * Skv + j;
    }
    return bits[static_cast<size_t>(idx)] != 0;
  }
};

Masking masking_of(const Problem& p) {
  Masking m{{}, p.mask.shape, p.pre, p.next, p.q.B, p.q.N, p.q.S, p.k.S};
  if (p.mask.present) {
    for (double x : load<double>(p.mask)) m.bits.push_back(x != 0.0 ? 1 : 0);
  }
  return m;
}

/// Row (b, n, i)'s scaled, masked scores against every key.
void scores(const Problem& p, const Masking& m, const std::vector<double>& q, const std::vector<double>& k, int64_t b,
            int64_t n, int64_t i, std::vector<double>& s) {
  const int64_t kn = n / p.group;
  for (int64_t j = 0; j < p.k.S; ++j) {
    if (m.masked(b, n, i, j)) {
      s[static_cast<size_t>(j)] = kMasked;
      continue;
    }
    double dot = 0;
    for (int64_t d = 0; d < p.q.D; ++d) dot += q[p.q.at(b, n, i, d)] * k[p.k.at(b, kn, j, d)];
    s[static_cast<size_t>(j)] = p.scale * dot;
  }
}

aclnnStatus flash_attention_score(const aclTensor* query, const aclTensor* key, const aclTensor* value,
                                  const aclTensor* real_shift, const aclTensor* drop_mask, const aclTensor* padding_mask,
                                  const aclTensor* atten_mask, const aclIntArray* prefix, double scale,
                                  double keep_prob, int64_t pre_tokens, int64_t next_tokens, int64_t head_num,
                                  char* input_layout, int64_t inner_precise, int64_t sparse_mode,
                                  const aclTensor* softmax_max, const aclTensor* softmax_sum,
                                  const aclTensor* softmax_out, const aclTensor* attention_out, uint64_t* ws,
                                  aclOpExecutor** ex) {
  Op op("aclnnFlashAttentionScore", ws, ex);
  TDesc q, k, v, pse, drop, padding, mask, mx, sm, so, out;
  std::vector<int64_t> prefix_v;
  op.tensor(query, "query", &q, false);
  op.tensor(key, "key", &k, false);
  op.tensor(value, "value", &v, false);
  op.tensor(real_shift, "realShiftOptional", &pse, false, true);
  op.tensor(drop_mask, "dropMaskOptional", &drop, false, true);
  op.tensor(padding_mask, "paddingMaskOptional", &padding, false, true);
  op.tensor(atten_mask, "attenMaskOptional", &mask, false, true);
  op.int_array(prefix, "prefixOptional", &prefix_v, true);
  op.tensor(softmax_max, "softmaxMaxOut", &mx, true);
  op.tensor(softmax_sum, "softmaxSumOut", &sm, true);
  op.tensor(softmax_out, "softmaxOutOut", &so, true, true);
  op.tensor(attention_out, "attentionOutOut", &out, true);
  Problem p;
  if (op.status() || !common_checks(op, q, k, v, pse, drop, padding, mask, prefix_v, scale, keep_prob, pre_tokens,
                                    next_tokens, head_num, input_layout, inner_precise, sparse_mode, &p)) {
    return op.status();
  }
  op.check(p.v.D == p.q.D, "the forward needs one D for query, key and value");
  op.shape_is("attentionOutOut", out, q.shape);
  op.dtype_is("attentionOutOut", out, q.dtype);
  const Shape stats = {p.q.B, p.q.N, p.q.S, 8};
  op.shape_is("softmaxMaxOut", mx, stats);
  op.shape_is("softmaxSumOut", sm, stats);
  op.dtype_is("softmaxMaxOut", mx, ACL_FLOAT);
  op.dtype_is("softmaxSumOut", sm, ACL_FLOAT);
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const Masking m = masking_of(p);
    const std::vector<double> qv = load<double>(q), kv = load<double>(k), vv = load<double>(v);
    std::vector<double> o(static_cast<size_t>(q.numel()), 0.0), maxes(static_cast<size_t>(mx.numel())),
        sums(static_cast<size_t>(sm.numel())), s(static_cast<size_t>(p.k.S));
    for (int64_t b = 0; b < p.q.B; ++b) {
      for (int64_t n = 0; n < p.q.N; ++n) {
        for (int64_t i = 0; i < p.q.S; ++i) {
          scores(p, m, qv, kv, b, n, i, s);
          double top = kMasked;
          for (double x : s) top = std::max(top, x);
          double total = 0;
          for (double& x : s) total += (x = std::exp(x - top));
          for (int64_t d = 0; d < p.v.D; ++d) {
            double acc = 0;
            for (int64_t j = 0; j < p.k.S; ++j) acc += s[static_cast<size_t>(j)] * vv[p.v.at(b, n / p.group, j, d)];
            o[p.q.at(b, n, i, d)] = acc / total;
          }
          const size_t row = static_cast<size_t>(((b * p.q.N + n) * p.q.S + i) * 8);
          for (size_t r = 0; r < 8; ++r) {
            maxes[row + r] = top;
            sums[row + r] = total;
          }
        }
      }
    }
    store(out, o);
    store(mx, maxes);
    store(sm, sums);
  });
}

aclnnStatus flash_attention_score_grad(
    const aclTensor* query, const aclTensor* key_in, const aclTensor* value, const aclTensor* dy,
    const aclTensor* pse_shift, const aclTensor* drop_mask, const aclTensor* padding_mask, const aclTensor* atten_mask,
    const aclTensor* softmax_max, const aclTensor* softmax_sum, const aclTensor* softmax_in,
    const aclTensor* attention_in, const aclIntArray* prefix, double scale, double keep_prob, int64_t pre_tokens,
    int64_t next_tokens, int64_t head_num, char* input_layout, int64_t inner_precise, int64_t sparse_mode,
    const aclTensor* dq_out, const aclTensor* dk_out, const aclTensor* dv_out, const aclTensor* dpse_out, uint64_t* ws,
    aclOpExecutor** ex) {
  Op op("aclnnFlashAttentionScoreGrad", ws, ex);
  TDesc q, k, v, g, pse, drop, padding, mask, mx, sm, si, ai, dq, dk, dv, dpse;
  std::vector<int64_t> prefix_v;
  op.tensor(query, "query", &q, false);
  op.tensor(key_in, "keyIn", &k, false);
  op.tensor(value, "value", &v, false);
  op.tensor(dy, "dy", &g, false);
  op.tensor(pse_shift, "pseShiftOptional", &pse, false, true);
  op.tensor(drop_mask, "dropMaskOptional", &drop, false, true);
  op.tensor(padding_mask, "paddingMaskOptional", &padding, false, true);
  op.tensor(atten_mask, "attenMaskOptional", &mask, false, true);
  op.tensor(softmax_max, "softmaxMaxOptional", &mx, false, true);
  op.tensor(softmax_sum, "softmaxSumOptional", &sm, false, true);
  op.tensor(softmax_in, "softmaxInOptional", &si, false, true);
  op.tensor(attention_in, "attentionInOptional", &ai, false, true);
  op.int_array(prefix, "prefixOptional", &prefix_v, true);
  op.tensor(dq_out, "dqOut", &dq, true);
  op.tensor(dk_out, "dkOut", &dk, true);
  op.tensor(dv_out, "dvOut", &dv, true);
  op.tensor(dpse_out, "dpseOut", &dpse, true, true);
  Problem p;
  if (op.status() || !common_checks(op, q, k, v, pse, drop, padding, mask, prefix_v, scale, keep_prob, pre_tokens,
                                    next_tokens, head_num, input_layout, inner_precise, sparse_mode, &p)) {
    return op.status();
  }
  op.check(mx.present == sm.present, "softmaxMaxOptional and softmaxSumOptional go together");
  op.check(!si.present, "softmaxInOptional is reserved");
  const Shape stats = {p.q.B, p.q.N, p.q.S, 8};
  if (mx.present) {
    op.shape_is("softmaxMaxOptional", mx, stats);
    op.shape_is("softmaxSumOptional", sm, stats);
    op.dtype_is("softmaxMaxOptional", mx, ACL_FLOAT);
    op.dtype_is("softmaxSumOptional", sm, ACL_FLOAT);
  }
  Shape out_shape = q.shape;  // dy and attentionIn: the query's shape with the value's D
  out_shape[3] = p.v.D;
  op.shape_is("dy", g, out_shape);
  op.dtype_is("dy", g, q.dtype);
  if (ai.present) {
    op.shape_is("attentionInOptional", ai, out_shape);
    op.dtype_is("attentionInOptional", ai, q.dtype);
  }
  op.shape_is("dqOut", dq, q.shape);
  op.shape_is("dkOut", dk, k.shape);
  op.shape_is("dvOut", dv, v.shape);
  for (const auto& [name, t] : {std::pair<const char*, const TDesc*>{"dqOut", &dq}, {"dkOut", &dk}, {"dvOut", &dv}}) {
    op.dtype_is(name, *t, q.dtype);
  }
  if (op.status()) return op.status();
  return op.finish(0, [=](uint8_t*, uint64_t) {
    const Masking m = masking_of(p);
    const std::vector<double> qv = load<double>(q), kv = load<double>(k), vv = load<double>(v), gv = load<double>(g);
    const std::vector<double> maxes = mx.present ? load<double>(mx) : std::vector<double>{};
    const std::vector<double> sums = sm.present ? load<double>(sm) : std::vector<double>{};
    const std::vector<double> outs = ai.present ? load<double>(ai) : std::vector<double>{};
    std::vector<double> dqv(static_cast<size_t>(q.numel()), 0.0), dkv(static_cast<size_t>(k.numel()), 0.0),
        dvv(static_cast<size_t>(v.numel()), 0.0), s(static_cast<size_t>(p.k.S)), dp(static_cast<size_t>(p.k.S));
    for (int64_t b = 0; b < p.q.B; ++b) {
      for (int64_t n = 0; n < p.q.N; ++n) {
        const int64_t kn = n / p.group;
        for (int64_t i = 0; i < p.q.S; ++i) {
          scores(p, m, qv, kv, b, n, i, s);
          double top, total;
          if (mx.present) {  // the forward's statistics, as the device reads them
            const size_t row = static_cast<size_t>(((b * p.q.N + n) * p.q.S + i) * 8);
            top = maxes[row];
            total = sums[row];
          } else {
            top = kMasked;
            for (double x : s) top = std::max(top, x);
            total = 0;
            for (double x : s) total += std::exp(x - top);
          }
          for (double& x : s) x = std::exp(x - top) / total;  // P
          // D = rowsum(dy * out), out from attentionIn or P V
          double D = 0;
          for (int64_t d = 0; d < p.v.D; ++d) {
            double o = 0;
            if (ai.present) {
              o = outs[p.q.at(b, n, i, d)];
            } else {
              for (int64_t j = 0; j < p.k.S; ++j) o += s[static_cast<size_t>(j)] * vv[p.v.at(b, kn, j, d)];
            }
            D += gv[p.q.at(b, n, i, d)] * o;
          }
          for (int64_t j = 0; j < p.k.S; ++j) {
            double acc = 0;
            for (int64_t d = 0; d < p.v.D; ++d) {
              const double gd = gv[p.q.at(b, n, i, d)];
              acc += gd * vv[p.v.at(b, kn, j, d)];
              dvv[p.v.at(b, kn, j, d)] += s[static_cast<size_t>(j)] * gd;
            }
            dp[static_cast<size_t>(j)] = s[static_cast<size_t>(j)] * (acc - D) * p.scale;  // dS, scaled
          }
          for (int64_t j = 0; j < p.k.S; ++j) {
            const double ds = dp[static_cast<size_t>(j)];
            if (ds == 0.0) continue;
            for (int64_t d = 0; d < p.q.D; ++d) {
              dqv[p.q.at(b, n, i, d)] += ds * kv[p.k.at(b, kn, j, d)];
              dkv[p.k.at(b, kn, j, d)] += ds * qv[p.q.at(b, n, i, d)];
            }
          }
        }
      }
    }
    store(dq, dqv);
    store(dk, dkv);
    store(dv, dvv);
  });
}

}  // namespace
}  // namespace fake_ascend

using namespace fake_ascend;

extern "C" {

FA_EXPORT aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(
    const aclTensor* query, const aclTensor* key, const aclTensor* value, const aclTensor* realShiftOptional,
    const aclTensor* dropMaskOptional, const aclTensor* paddingMaskOptional, const aclTensor* attenMaskOptional,
    const aclIntArray* prefixOptional, double scaleValueOptional, double keepProbOptional, int64_t preTokensOptional,
    int64_t nextTokensOptional, int64_t headNum, char* inputLayout, int64_t innerPreciseOptional,
    int64_t sparseModeOptional, const aclTensor* softmaxMaxOut, const aclTensor* softmaxSumOut,
    const aclTensor* softmaxOutOut, const aclTensor* attentionOutOut, uint64_t* workspaceSize,
    aclOpExecutor** executor) {
  return flash_attention_score(query, key, value, realShiftOptional, dropMaskOptional, paddingMaskOptional,
                               attenMaskOptional, prefixOptional, scaleValueOptional, keepProbOptional,
                               preTokensOptional, nextTokensOptional, headNum, inputLayout, innerPreciseOptional,
                               sparseModeOptional, softmaxMaxOut, softmaxSumOut, softmaxOutOut, attentionOutOut,
                               workspaceSize, executor);
}

FA_EXPORT aclnnStatus aclnnFlashAttentionScoreGradGetWorkspaceSize(
    const aclTensor* query, const aclTensor* keyIn, const aclTensor* value, const aclTensor* dy,
    const aclTensor* pseShiftOptional, const aclTensor* dropMaskOptional, const aclTensor* paddingMaskOptional,
    const aclTensor* attenMaskOptional, const aclTensor* softmaxMaxOptional, const aclTensor* softmaxSumOptional,
    const aclTensor* softmaxInOptional, const aclTensor* attentionInOptional, const aclIntArray* prefixOptional,
    double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char* inputLayout,
    int64_t innerPrecise, int64_t sparseMode, const aclTensor* dqOut, const aclTensor* dkOut, const aclTensor* dvOut,
    const aclTensor* dpseOut, uint64_t* workspaceSize, aclOpExecutor** executor) {
  return flash_attention_score_grad(query, keyIn, value, dy, pseShiftOptional, dropMaskOptional, paddingMaskOptional,
                                    attenMaskOptional, softmaxMaxOptional, softmaxSumOptional, softmaxInOptional,
                                    attentionInOptional, prefixOptional, scaleValue, keepProb, preTokens, nextTokens,
                                    headNum, inputLayout, innerPrecise, sparseMode, dqOut, dkOut, dvOut, dpseOut,
                                    workspaceSize, executor);
}

}  // extern "C"

FAKE_ACLNN_LAUNCH_FN(FlashAttentionScore)
FAKE_ACLNN_LAUNCH_FN(FlashAttentionScoreGrad)
