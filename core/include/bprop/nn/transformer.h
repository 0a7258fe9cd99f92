// Transformer layers with PyTorch's semantics, parameter names and layouts (torch.nn.MultiheadAttention,
// torch.nn.TransformerEncoderLayer), and a GPT built from them. The parameter paths are PyTorch's state-dict keys
// ("self_attn.in_proj_weight", "norm1.weight"), so a PyTorch model of the same architecture saved as safetensors
// loads with strict key matching (load_checkpoint), and a bprop checkpoint loads into PyTorch.
//
// Attention runs through the scaled_dot_product_attention op (FlashAttention tiles on the CPU, one node under jit);
// only attention weights asked for (need_weights) or attention dropout in training compose softmax(q k^T) v.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bprop/nn/layers.h"

namespace bprop::nn {

// ---- MultiheadAttention ---------------------------------------------------------------------------------

struct MultiheadAttentionOptions {
  /// Dropout on the attention weights, in training.
  double dropout = 0.0;
  /// in_proj_bias and out_proj.bias.
  bool bias = true;
  /// Feature sizes of key and value (embed_dim when unset). When either differs from embed_dim the projections
  /// are q_proj_weight, k_proj_weight and v_proj_weight instead of one in_proj_weight, as PyTorch's.
  std::optional<int64_t> kdim = std::nullopt;
  std::optional<int64_t> vdim = std::nullopt;
  /// Inputs and output (batch, seq, feature) when true, (seq, batch, feature) when false (PyTorch's default).
  bool batch_first = false;
  DType dtype = DType::Float32;
};

/// The optional arguments of one attention call, with PyTorch's conventions (the opposite of the op's for bool
/// masks: here true means "not attended").
struct AttentionCall {
  /// (L, S) or (batch * num_heads, L, S): bool (true = masked out) or float (added to the scores).
  Tensor attn_mask = {};
  /// (batch, S): bool (true = padding, ignored) or float (added).
  Tensor key_padding_mask = {};
  /// Causal attention (query i sees keys 0..i), combinable with the masks; no mask tensor is built for it.
  bool is_causal = false;
  /// Also return the attention weights (composed: softmax(q k^T * scale + mask)).
  bool need_weights = false;
  /// Weights averaged over the heads, (batch, L, S); false gives (batch, num_heads, L, S).
  bool average_attn_weights = true;
};

struct AttentionOutput {
  Tensor output;   // the query's layout, embed_dim features
  Tensor weights;  // undefined unless need_weights
};

/// Multi-head attention: out_proj(concat_h(attention(q W_q^h + b_q^h, k W_k^h + b_k^h, v W_v^h + b_v^h))).
/// Self-attention (query, key and value the same tensor) projects with one (3E, E) matmul.
/// Fully masked rows give zero outputs (PyTorch gives NaN); their weights are zeros too.
class MultiheadAttention : public Cell {
 public:
  MultiheadAttention(int64_t embed_dim, int64_t num_heads, MultiheadAttentionOptions options = {});
  /// (query, key, value[, attn_mask]) -> output.
  Value construct(const std::vector<Tensor>& inputs) override;
  AttentionOutput forward(const Tensor& query, const Tensor& key, const Tensor& value, const AttentionCall& call = {});

  int64_t embed_dim() const { return embed_; }
  int64_t num_heads() const { return heads_; }
  int64_t head_dim() const { return embed_ / heads_; }
  bool batch_first() const { return opt_.batch_first; }

  Parameter in_proj_weight;                               // (3E, E); undefined with kdim/vdim != E
  Parameter q_proj_weight, k_proj_weight, v_proj_weight;  // (E, E), (E, kdim), (E, vdim); only with kdim/vdim != E
  Parameter in_proj_bias;                                 // (3E,); undefined without bias
  std::shared_ptr<Dense> out_proj;

 private:
  int64_t embed_, heads_, kdim_, vdim_;
  MultiheadAttentionOptions opt_;
  std::shared_ptr<Dropout> dropout_;
};

// ---- TransformerEncoderLayer ----------------------------------------------------------------------------

struct TransformerEncoderLayerOptions {
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;
  /// "relu" or "gelu" (exact erf form, as PyTorch's).
  std::string activation = "relu";
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  /// Pre-norm (x + sa(norm1(x)); x + ff(norm2(x))) when true, post-norm (norm1(x + sa(x)); norm2(x + ff(x))) when false.
  bool norm_first = false;
  DType dtype = DType::Float32;
};

/// PyTorch's TransformerEncoderLayer: self_attn, linear1, linear2, norm1, norm2 (state-dict keys as PyTorch's), and
/// dropout, dropout1, dropout2.
class TransformerEncoderLayer : public Cell {
 public:
  TransformerEncoderLayer(int64_t d_model, int64_t nhead, TransformerEncoderLayerOptions options = {});
  /// (src[, src_mask]) -> output.
  Value construct(const std::vector<Tensor>& inputs) override;
  /// With src_key_padding_mask and is_causal (AttentionCall's conventions; need_weights returns the self-attention
  /// weights of this call too).
  AttentionOutput forward(const Tensor& src, const AttentionCall& call = {});

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Dense> linear1, linear2;
  std::shared_ptr<LayerNorm> norm1, norm2;

 private:
  Tensor feed_forward(const Tensor& x);
  TransformerEncoderLayerOptions opt_;
  std::shared_ptr<Dropout> dropout_, dropout1_, dropout2_;
};

// ---- GPT ------------------------------------------------------------------------------------------------

struct GPTConfig {
  int64_t vocab_size = 96;
  /// The longest sequence (the position table's size).
  int64_t context = 128;
  int64_t layers = 4;
  int64_t heads = 4;
  int64_t width = 128;
  double dropout = 0.0;
  /// The output projection is the token embedding's transpose (no lm_head parameter).
  bool tie_weights = true;
  DType dtype = DType::Float32;
};

struct GenerateOptions {
  int64_t tokens = 100;
  /// Logits are divided by it; 0 picks the most likely token (greedy).
  double temperature = 1.0;
  /// Sample among the k most likely tokens only (0: all).
  int64_t top_k = 0;
  uint64_t seed = 0;
};

/// A decoder-only transformer: token (wte) + learned position (wpe) embeddings, `layers` pre-norm blocks of causal
/// self-attention and a gelu MLP of width 4 * width (TransformerEncoderLayer with norm_first, batch_first), a
/// final LayerNorm (ln_f) and logits over the vocabulary (tied to wte, or lm_head). Weights start as nanoGPT's:
/// normal(0, 0.02), the residual projections (out_proj, linear2) normal(0, 0.02 / sqrt(2 * layers)), biases zero.
class GPT : public Cell {
 public:
  explicit GPT(GPTConfig config);
  /// (ids) -> logits (B, T, vocab); (ids, targets) -> mean cross-entropy. ids and targets int32 (B, T) or (T,).
  Value construct(const std::vector<Tensor>& inputs) override;
  Tensor logits(const Tensor& ids);
  Tensor loss(const Tensor& ids, const Tensor& targets);
  /// The self-attention weights of every block for `ids`: one (B, heads, T, T) tensor per layer (no gradient).
  std::vector<Tensor> attention_weights(const Tensor& ids);
  /// The options.tokens ids sampled after `prompt` (at least one id; the prompt is not repeated), in eval mode (the
  /// training mode is restored), the context cropped to the last `context` ids. The same ids for the same seed.
  std::vector<int32_t> generate(const std::vector<int32_t>& prompt, const GenerateOptions& options);

  const GPTConfig& config() const { return cfg_; }

  std::shared_ptr<Embedding> wte, wpe;
  std::vector<std::shared_ptr<TransformerEncoderLayer>> blocks;
  std::shared_ptr<LayerNorm> ln_f;
  std::shared_ptr<Dense> lm_head;  // null with tie_weights

 private:
  Tensor hidden(const Tensor& ids, std::vector<Tensor>* weights);
  GPTConfig cfg_;
  std::shared_ptr<Dropout> drop_;
};

/// Picks the next token from one row of logits as GPT::generate does: argmax for temperature 0, else softmax of
/// logits / temperature over the top_k largest (ties at the k-th value kept, as nanoGPT) sampled with `u` in [0, 1).
int32_t sample_token(const std::vector<double>& logits, double temperature, int64_t top_k, double u);

}  // namespace bprop::nn
