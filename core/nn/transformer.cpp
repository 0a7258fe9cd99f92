// MultiheadAttention, TransformerEncoderLayer and GPT (bprop/nn/transformer.h).
#include "bprop/nn/transformer.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "bprop/random.h"
#include "nn/nn_helpers.h"
#include "tensor/format.h"

namespace bprop::nn {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A PyTorch-convention mask as an additive float mask of `dtype`: bool true becomes -inf, false 0.
Tensor additive_mask(const Tensor& mask, DType dtype, const char* who, const char* what) {
  if (mask.dtype() == DType::Bool) return ops::where(mask, scalar(-kInf, dtype), scalar(0.0, dtype));
  if (!is_float(mask.dtype())) {
    throw DTypeError(std::string("For '") + who + "', " + what + " must be bool or float, got " +
                     dtype_name(mask.dtype()));
  }
  return mask.dtype() == dtype ? mask : ops::cast(mask, dtype);
}

/// (L, S) with -inf above the diagonal: query i sees keys 0..i (top-left aligned, as the op's is_causal).
Tensor causal_mask(int64_t L, int64_t S, DType dtype) {
  std::vector<double> m(static_cast<size_t>(L * S), 0.0);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = i + 1; j < S; ++j) m[static_cast<size_t>(i * S + j)] = -kInf;
  return tensor(m, {L, S}, dtype);
}

void check_rank(const char* who, const char* what, const Tensor& t, bool unbatched) {
  const int64_t want = unbatched ? 2 : 3;
  if (!t.defined() || t.dim() != want) {
    throw ShapeError(std::string("For '") + who + "', " + what + " must be " + (unbatched ? "2-D (unbatched, as the query)" : "3-D") +
                     ", got shape " + (t.defined() ? shape_str(t.shape()) : std::string("(undefined)")));
  }
}

void reinit(Parameter& p, const Initializer& init) { p.assign(initializer(init, p.shape(), p.dtype())); }

}  // namespace

// ---- MultiheadAttention ---------------------------------------------------------------------------------

MultiheadAttention::MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions options)
    : embed_(embed_dim),
      heads_(num_heads),
      kdim_(options.kdim.value_or(embed_dim)),
      vdim_(options.vdim.value_or(embed_dim)),
      opt_(options) {
  const char* who = "MultiheadAttention";
  detail::check_positive(who, "embed_dim", embed_dim);
  detail::check_positive(who, "num_heads", num_heads);
  detail::check_positive(who, "kdim", kdim_);
  detail::check_positive(who, "vdim", vdim_);
  detail::check_float_dtype(who, options.dtype);
  if (embed_dim % num_heads != 0) {
    throw ValueError("For 'MultiheadAttention', embed_dim " + std::to_string(embed_dim) +
                     " must be divisible by num_heads " + std::to_string(num_heads));
  }
  if (!(options.dropout >= 0.0 && options.dropout < 1.0)) {
    throw ValueError("For 'MultiheadAttention', dropout must be in [0, 1), got " + format_number(options.dropout));
  }
  // PyTorch's initialisation: xavier_uniform projections, zero biases, out_proj a Linear with a zero bias.
  const DType dt = options.dtype;
  const Initializer xavier = init::xavier_uniform();
  if (kdim_ == embed_ && vdim_ == embed_) {
    in_proj_weight = register_parameter("in_proj_weight", Parameter(xavier({3 * embed_, embed_}, dt), "in_proj_weight"));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", Parameter(xavier({embed_, embed_}, dt), "q_proj_weight"));
    k_proj_weight = register_parameter("k_proj_weight", Parameter(xavier({embed_, kdim_}, dt), "k_proj_weight"));
    v_proj_weight = register_parameter("v_proj_weight", Parameter(xavier({embed_, vdim_}, dt), "v_proj_weight"));
  }
  if (options.bias) in_proj_bias = register_parameter("in_proj_bias", Parameter(zeros({3 * embed_}, dt), "in_proj_bias"));
  out_proj = register_cell("out_proj", std::make_shared<Dense>(embed_, embed_,
                                                               DenseOptions{.bias_init = init::zeros(),
                                                                            .has_bias = options.bias,
                                                                            .dtype = dt}));
  if (options.dropout > 0.0) dropout_ = register_cell("dropout", std::make_shared<Dropout>(options.dropout));
}

Value MultiheadAttention::construct(const std::vector<Tensor>& inputs) {
  if (inputs.size() != 3 && inputs.size() != 4) {
    throw ValueError("For 'MultiheadAttention', expected (query, key, value[, attn_mask]), got " +
                     std::to_string(inputs.size()) + " inputs");
  }
  AttentionCall call;
  if (inputs.size() == 4) call.attn_mask = inputs[3];
  return forward(inputs[0], inputs[1], inputs[2], call).output;
}

AttentionOutput MultiheadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                            const AttentionCall& call) {
  const char* who = "MultiheadAttention";
  if (!query.defined()) throw ValueError("For 'MultiheadAttention', the query is undefined");
  const bool unbatched = query.dim() == 2;
  check_rank(who, "the query", query, unbatched);
  check_rank(who, "the key", key, unbatched);
  check_rank(who, "the value", value, unbatched);
  const DType dt = query.dtype();
  if (key.dtype() != dt || value.dtype() != dt) {
    throw DTypeError(std::string("For 'MultiheadAttention', query, key and value must have one dtype, got ") +
                     dtype_name(dt) + ", " + dtype_name(key.dtype()) + " and " + dtype_name(value.dtype()));
  }
  // Everything below works on (N, L, features).
  auto batch_major = [&](const Tensor& t) {
    if (unbatched) return ops::expand_dims(t, 0);
    return opt_.batch_first ? t : ops::transpose(t, {1, 0, 2});
  };
  const Tensor q = batch_major(query), k = batch_major(key), v = batch_major(value);
  const int64_t N = q.shape()[0], L = q.shape()[1], S = k.shape()[1];
  const bool shapes_ok = q.shape()[2] == embed_ && k.shape()[2] == kdim_ && v.shape()[2] == vdim_ &&
                         k.shape()[0] == N && v.shape()[0] == N && v.shape()[1] == S;
  if (!shapes_ok) {
    throw ShapeError("For 'MultiheadAttention' (embed_dim " + std::to_string(embed_) + ", kdim " +
                     std::to_string(kdim_) + ", vdim " + std::to_string(vdim_) + ", batch_first " +
                     (opt_.batch_first ? "true" : "false") + "), query, key and value have inconsistent shapes " +
                     shape_str(query.shape()) + ", " + shape_str(key.shape()) + " and " + shape_str(value.shape()));
  }

  // Projections. Self-attention takes one (3E, E) matmul; otherwise each input its slice of the weights.
  Tensor qp, kp, vp;
  auto bias_part = [&](int64_t i) { return ops::slice(in_proj_bias, {i * embed_}, {embed_}); };
  auto project = [&](const Tensor& x, const Tensor& w, int64_t i) {
    Tensor y = ops::matmul(x, ops::transpose(w, {1, 0}));
    return in_proj_bias.defined() ? y + bias_part(i) : y;
  };
  if (in_proj_weight.defined() && query.same(key) && key.same(value)) {
    Tensor qkv = ops::matmul(q, ops::transpose(in_proj_weight, {1, 0}));
    if (in_proj_bias.defined()) qkv = qkv + in_proj_bias;
    qp = ops::slice(qkv, {0, 0, 0}, {N, L, embed_});
    kp = ops::slice(qkv, {0, 0, embed_}, {N, L, embed_});
    vp = ops::slice(qkv, {0, 0, 2 * embed_}, {N, L, embed_});
  } else if (in_proj_weight.defined()) {
    auto rows = [&](int64_t i) { return ops::slice(in_proj_weight, {i * embed_, 0}, {embed_, embed_}); };
    qp = project(q, rows(0), 0);
    kp = project(k, rows(1), 1);
    vp = project(v, rows(2), 2);
  } else {
    qp = project(q, q_proj_weight, 0);
    kp = project(k, k_proj_weight, 1);
    vp = project(v, v_proj_weight, 2);
  }
  const int64_t D = head_dim();
  auto heads = [&](const Tensor& x, int64_t len) {
    return ops::transpose(ops::reshape(x, {N, len, heads_, D}), {0, 2, 1, 3});  // (N, H, len, D)
  };
  const Tensor qh = heads(qp, L), kh = heads(kp, S), vh = heads(vp, S);

  // One additive mask broadcastable to (N, H, L, S), or none.
  Tensor mask;
  if (call.attn_mask.defined()) {
    const Tensor& m = call.attn_mask;
    if (m.dim() == 2 && m.shape()[0] == L && m.shape()[1] == S) {
      mask = additive_mask(m, dt, who, "attn_mask");
    } else if (m.dim() == 3 && m.shape()[0] == N * heads_ && m.shape()[1] == L && m.shape()[2] == S) {
      mask = ops::reshape(additive_mask(m, dt, who, "attn_mask"), {N, heads_, L, S});
    } else {
      throw ShapeError("For 'MultiheadAttention', attn_mask must be (L, S) = (" + std::to_string(L) + ", " +
                       std::to_string(S) + ") or (batch * num_heads, L, S) = (" + std::to_string(N * heads_) + ", " +
                       std::to_string(L) + ", " + std::to_string(S) + "), got " + shape_str(m.shape()));
    }
  }
  if (call.key_padding_mask.defined()) {
    const Tensor& m = call.key_padding_mask;
    const Shape want = unbatched ? Shape{S} : Shape{N, S};
    if (m.shape() != want) {
      throw ShapeError("For 'MultiheadAttention', key_padding_mask must be " + shape_str(want) + ", got " +
                       shape_str(m.shape()));
    }
    const Tensor kpm = ops::reshape(additive_mask(m, dt, who, "key_padding_mask"), {unbatched ? 1 : N, 1, 1, S});
    mask = mask.defined() ? mask + kpm : kpm;
  }

  AttentionOutput result;
  Tensor attn;  // (N, H, L, Dv)
  const bool drop = dropout_ && training();
  if (call.need_weights || drop) {
    Tensor scores = ops::matmul(qh, ops::transpose(kh, {0, 1, 3, 2})) * (1.0 / std::sqrt(static_cast<double>(D)));
    if (mask.defined()) scores = scores + mask;
    if (call.is_causal) scores = scores + causal_mask(L, S, dt);
    // Rows with every key masked: zeros (as the op) rather than softmax's NaN.
    const Tensor fully_masked = ops::equal(ops::amax(scores, -1, true), scalar(-kInf, dt));
    Tensor w = ops::where(fully_masked, scalar(0.0, dt), ops::softmax(scores, -1));
    if (drop) w = (*dropout_)(w);
    attn = ops::matmul(w, vh);
    if (call.need_weights) {
      result.weights = call.average_attn_weights ? ops::mean(w, 1) : w;
      if (unbatched) result.weights = ops::squeeze(result.weights, 0);
    }
  } else {
    attn = ops::scaled_dot_product_attention(qh, kh, vh, mask, call.is_causal);
  }
  Tensor out = (*out_proj)(ops::reshape(ops::transpose(attn, {0, 2, 1, 3}), {N, L, embed_}));
  if (unbatched) out = ops::squeeze(out, 0);
  else if (!opt_.batch_first) out = ops::transpose(out, {1, 0, 2});
  result.output = out;
  return result;
}

// ---- TransformerEncoderLayer ----------------------------------------------------------------------------

TransformerEncoderLayer::TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerEncoderLayerOptions options)
    : opt_(options) {
  const char* who = "TransformerEncoderLayer";
  detail::check_positive(who, "d_model", d_model);
  detail::check_positive(who, "nhead", nhead);
  detail::check_positive(who, "dim_feedforward", options.dim_feedforward);
  if (options.activation != "relu" && options.activation != "gelu") {
    throw ValueError("For 'TransformerEncoderLayer', activation must be 'relu' or 'gelu', got '" + options.activation +
                     "'");
  }
  const DType dt = options.dtype;
  self_attn = register_cell("self_attn", std::make_shared<MultiheadAttention>(
                                             d_model, nhead,
                                             MultiheadAttentionOptions{.dropout = options.dropout,
                                                                       .batch_first = options.batch_first,
                                                                       .dtype = dt}));
  linear1 = register_cell("linear1", std::make_shared<Dense>(d_model, options.dim_feedforward, DenseOptions{.dtype = dt}));
  dropout_ = register_cell("dropout", std::make_shared<Dropout>(options.dropout));
  linear2 = register_cell("linear2", std::make_shared<Dense>(options.dim_feedforward, d_model, DenseOptions{.dtype = dt}));
  const LayerNormOptions norm{.epsilon = options.layer_norm_eps, .dtype = dt, .parameter_names = {"weight", "bias"}};
  norm1 = register_cell("norm1", std::make_shared<LayerNorm>(Shape{d_model}, norm));
  norm2 = register_cell("norm2", std::make_shared<LayerNorm>(Shape{d_model}, norm));
  dropout1_ = register_cell("dropout1", std::make_shared<Dropout>(options.dropout));
  dropout2_ = register_cell("dropout2", std::make_shared<Dropout>(options.dropout));
}

Value TransformerEncoderLayer::construct(const std::vector<Tensor>& inputs) {
  if (inputs.size() != 1 && inputs.size() != 2) {
    throw ValueError("For 'TransformerEncoderLayer', expected (src[, src_mask]), got " + std::to_string(inputs.size()) +
                     " inputs");
  }
  AttentionCall call;
  if (inputs.size() == 2) call.attn_mask = inputs[1];
  return forward(inputs[0], call).output;
}

Tensor TransformerEncoderLayer::feed_forward(const Tensor& x) {
  Tensor h = (*linear1)(x);
  h = opt_.activation == "gelu" ? ops::gelu(h, "none") : ops::relu(h);
  return (*dropout2_)((*linear2)((*dropout_)(h)));
}

AttentionOutput TransformerEncoderLayer::forward(const Tensor& src, const AttentionCall& call) {
  AttentionOutput result;
  auto self_attention = [&](const Tensor& x) {
    AttentionOutput a = self_attn->forward(x, x, x, call);
    result.weights = a.weights;
    return (*dropout1_)(a.output);
  };
  Tensor x = src;
  if (opt_.norm_first) {
    x = x + self_attention((*norm1)(x));
    x = x + feed_forward((*norm2)(x));
  } else {
    x = (*norm1)(x + self_attention(x));
    x = (*norm2)(x + feed_forward(x));
  }
  result.output = x;
  return result;
}

// ---- GPT ------------------------------------------------------------------------------------------------

GPT::GPT(GPTConfig config) : cfg_(config) {
  const char* who = "GPT";
  detail::check_positive(who, "vocab_size", config.vocab_size);
  detail::check_positive(who, "context", config.context);
  detail::check_positive(who, "layers", config.layers);
  detail::check_positive(who, "heads", config.heads);
  detail::check_positive(who, "width", config.width);
  const DType dt = config.dtype;
  const Initializer normal = init::normal(0.02);
  const EmbeddingOptions emb{.embedding_table = normal, .dtype = dt, .parameter_name = "weight"};
  wte = register_cell("wte", std::make_shared<Embedding>(config.vocab_size, config.width, emb));
  wpe = register_cell("wpe", std::make_shared<Embedding>(config.context, config.width, emb));
  drop_ = register_cell("drop", std::make_shared<Dropout>(config.dropout));
  auto list = register_cell("blocks", std::make_shared<CellList>());
  const TransformerEncoderLayerOptions block{.dim_feedforward = 4 * config.width,
                                             .dropout = config.dropout,
                                             .activation = "gelu",
                                             .layer_norm_eps = 1e-5,
                                             .batch_first = true,
                                             .norm_first = true,
                                             .dtype = dt};
  // nanoGPT's initialisation; the projections into the residual stream are scaled down with depth.
  const Initializer residual = init::normal(0.02 / std::sqrt(2.0 * static_cast<double>(config.layers)));
  for (int64_t i = 0; i < config.layers; ++i) {
    auto b = std::make_shared<TransformerEncoderLayer>(config.width, config.heads, block);
    reinit(b->self_attn->in_proj_weight, normal);
    reinit(b->self_attn->out_proj->weight, residual);
    reinit(b->linear1->weight, normal);
    reinit(b->linear2->weight, residual);
    for (Parameter* bias : {&b->linear1->bias, &b->linear2->bias}) reinit(*bias, init::zeros());
    list->append(b);
    blocks.push_back(b);
  }
  ln_f = register_cell("ln_f", std::make_shared<LayerNorm>(
                                   Shape{config.width},
                                   LayerNormOptions{.epsilon = 1e-5, .dtype = dt, .parameter_names = {"weight", "bias"}}));
  if (!config.tie_weights) {
    lm_head = register_cell("lm_head", std::make_shared<Dense>(config.width, config.vocab_size,
                                                               DenseOptions{.weight_init = normal, .has_bias = false,
                                                                            .dtype = dt}));
  }
}

Tensor GPT::hidden(const Tensor& ids, std::vector<Tensor>* weights) {
  if (!ids.defined() || ids.dtype() != DType::Int32 || (ids.dim() != 1 && ids.dim() != 2)) {
    throw ValueError("For 'GPT', the token ids must be an int32 (batch, time) or (time,) tensor, got " +
                     (ids.defined() ? std::string(dtype_name(ids.dtype())) + " " + shape_str(ids.shape())
                                    : std::string("an undefined tensor")));
  }
  const Tensor batched = ids.dim() == 1 ? ops::expand_dims(ids, 0) : ids;
  const int64_t T = batched.shape()[1];
  if (T < 1 || T > cfg_.context) {
    throw ShapeError("For 'GPT', the sequence length must be in [1, context = " + std::to_string(cfg_.context) +
                     "], got ids of shape " + shape_str(ids.shape()));
  }
  std::vector<int32_t> pos(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) pos[static_cast<size_t>(t)] = static_cast<int32_t>(t);
  // The positions live where the weights do (the ids may be a traced value under jit).
  Tensor x = (*drop_)((*wte)(batched) + (*wpe)(tensor_i32(pos, {T}).to(wpe->embedding_table.device())));
  AttentionCall causal;
  causal.is_causal = true;
  causal.need_weights = weights != nullptr;
  causal.average_attn_weights = false;
  for (auto& b : blocks) {
    AttentionOutput o = b->forward(x, causal);
    x = o.output;
    if (weights) weights->push_back(o.weights);
  }
  return (*ln_f)(x);
}

Tensor GPT::logits(const Tensor& ids) {
  const Tensor h = hidden(ids, nullptr);
  Tensor y = lm_head ? (*lm_head)(h) : ops::matmul(h, ops::transpose(wte->embedding_table, {1, 0}));
  return ids.dim() == 1 ? ops::squeeze(y, 0) : y;
}

Tensor GPT::loss(const Tensor& ids, const Tensor& targets) {
  if (!targets.defined() || targets.dtype() != DType::Int32 || targets.shape() != ids.shape()) {
    throw ValueError("For 'GPT', the targets must be int32 with the ids' shape " + shape_str(ids.shape()) + ", got " +
                     (targets.defined() ? std::string(dtype_name(targets.dtype())) + " " + shape_str(targets.shape())
                                        : std::string("an undefined tensor")));
  }
  const Tensor y = logits(ids);
  return ops::cross_entropy(ops::reshape(y, {ids.numel(), cfg_.vocab_size}), ops::reshape(targets, {ids.numel()}));
}

Value GPT::construct(const std::vector<Tensor>& inputs) {
  if (inputs.size() == 1) return logits(inputs[0]);
  if (inputs.size() == 2) return loss(inputs[0], inputs[1]);
  throw ValueError("For 'GPT', expected (ids) or (ids, targets), got " + std::to_string(inputs.size()) + " inputs");
}

std::vector<Tensor> GPT::attention_weights(const Tensor& ids) {
  std::vector<Tensor> weights;
  const bool was_training = training();
  set_train(false);
  try {
    no_grad([&] { hidden(ids, &weights); });
  } catch (...) {
    set_train(was_training);
    throw;
  }
  set_train(was_training);
  for (Tensor& w : weights) w = w.detach();
  return weights;
}

int32_t sample_token(const std::vector<double>& logits, double temperature, int64_t top_k, double u) {
  if (logits.empty()) throw ValueError("sample_token: no logits");
  const auto argmax = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  if (temperature == 0.0) return argmax;
  double threshold = -kInf;
  if (top_k > 0 && top_k < static_cast<int64_t>(logits.size())) {
    std::vector<double> sorted = logits;
    std::nth_element(sorted.begin(), sorted.begin() + (top_k - 1), sorted.end(), std::greater<>());
    threshold = sorted[static_cast<size_t>(top_k - 1)];
  }
  const double top = logits[static_cast<size_t>(argmax)];
  std::vector<double> p(logits.size(), 0.0);
  double total = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] >= threshold) total += p[i] = std::exp((logits[i] - top) / temperature);
  }
  double r = u * total;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] > 0.0 && (r -= p[i]) < 0.0) return static_cast<int32_t>(i);
  }
  return argmax;  // u * total rounded up to total: the most likely token
}

std::vector<int32_t> GPT::generate(const std::vector<int32_t>& prompt, const GenerateOptions& options) {
  if (prompt.empty()) throw ValueError("For 'GPT.generate', the prompt must hold at least one token id");
  for (int32_t id : prompt) {
    if (id < 0 || id >= cfg_.vocab_size) {
      throw ValueError("For 'GPT.generate', prompt id " + std::to_string(id) + " is out of range for vocab_size " +
                       std::to_string(cfg_.vocab_size));
    }
  }
  if (options.tokens < 0) throw ValueError("For 'GPT.generate', tokens must be >= 0, got " + std::to_string(options.tokens));
  if (!(options.temperature >= 0.0) || !std::isfinite(options.temperature)) {
    throw ValueError("For 'GPT.generate', temperature must be finite and >= 0, got " + format_number(options.temperature));
  }
  if (options.top_k < 0) throw ValueError("For 'GPT.generate', top_k must be >= 0, got " + std::to_string(options.top_k));
  const Device device = wte->embedding_table.device();
  std::vector<int32_t> seq = prompt, out;
  Random rng(options.seed);
  const bool was_training = training();
  set_train(false);
  try {
    no_grad([&] {
      for (int64_t n = 0; n < options.tokens; ++n) {
        const size_t len = std::min(seq.size(), static_cast<size_t>(cfg_.context));
        const std::vector<int32_t> window(seq.end() - static_cast<std::ptrdiff_t>(len), seq.end());
        const Tensor y = logits(tensor_i32(window, {static_cast<int64_t>(len)}).to(device));
        const Tensor last = ops::slice(y, {static_cast<int64_t>(len) - 1, 0}, {1, cfg_.vocab_size});
        const std::vector<double> row = convert(last.cpu(), DType::Float64).to_vector<double>();
        const int32_t next = sample_token(row, options.temperature, options.top_k, rng.uniform());
        seq.push_back(next);
        out.push_back(next);
      }
    });
  } catch (...) {
    set_train(was_training);
    throw;
  }
  set_train(was_training);
  return out;
}

}  // namespace bprop::nn
