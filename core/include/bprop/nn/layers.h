// Layers as Cells, with MindSpore's names, parameter names and defaults (mindspore.nn). Options structs
// stand in for keyword arguments: Dense(784, 256, {.weight_init = "xavier_uniform", .activation = "relu"}).
// Every layer takes one input tensor; its parameters are public members (dense.weight, bn.moving_mean).
// Sizes (kernel_size, stride, dilation) are bprop::Size2: one int for both axes, or {h, w}.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bprop/cell.h"
#include "bprop/nn/init.h"

namespace bprop::nn {

using ::bprop::Cell;
using ::bprop::SequentialCell;

/// Zero padding of the four sides of an image: one int for all, (h, w) for top/bottom and left/right, or
/// (top, bottom, left, right) as MindSpore's padding tuple.
struct Padding {
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  Padding(int64_t v = 0) : top(v), bottom(v), left(v), right(v) {}
  Padding(int64_t h, int64_t w) : top(h), bottom(h), left(w), right(w) {}
  Padding(int64_t t, int64_t b, int64_t l, int64_t r) : top(t), bottom(b), left(l), right(r) {}
  bool is_zero() const { return top == 0 && bottom == 0 && left == 0 && right == 0; }
  bool symmetric() const { return top == bottom && left == right; }
};

/// An activation cell by MindSpore name: "relu", "leakyrelu", "gelu", "silu", "sigmoid", "tanh", "softmax",
/// "logsoftmax" ("leaky_relu" and "log_softmax" are accepted too). ValueError for other names.
std::shared_ptr<Cell> get_activation(const std::string& name);

// ---- Dense --------------------------------------------------------------------------------------------

struct DenseOptions {
  /// Default: he_uniform(sqrt(5)) (MindSpore 2 and PyTorch: U(-1/sqrt(in), 1/sqrt(in))).
  std::optional<Initializer> weight_init = std::nullopt;
  /// Default: uniform(1/sqrt(in_channels)).
  std::optional<Initializer> bias_init = std::nullopt;
  bool has_bias = true;
  /// Applied to the output when not empty: a get_activation name.
  std::string activation = "";
  DType dtype = DType::Float32;
};

/// y = activation(x @ weight^T + bias) over the last axis of x.
class Dense : public Cell {
 public:
  Dense(int64_t in_channels, int64_t out_channels, DenseOptions options = {});
  Value construct(const std::vector<Tensor>& inputs) override;
  int64_t in_channels() const { return in_; }
  int64_t out_channels() const { return out_; }

  Parameter weight;  // (out_channels, in_channels)
  Parameter bias;    // (out_channels,); undefined without has_bias

 private:
  int64_t in_, out_;
  std::shared_ptr<Cell> activation_;
};

// ---- Conv2d and pooling (NCHW) ------------------------------------------------------------------------

struct Conv2dOptions {
  Size2 stride = 1;
  /// "same" (output size ceil(in / stride), extra padding at the bottom/right), "valid" (none) or "pad"
  /// (`padding`). MindSpore's default is "same".
  std::string pad_mode = "same";
  /// Used with pad_mode "pad" only (anything else with a nonzero padding is a ValueError, as in MindSpore).
  Padding padding = 0;
  Size2 dilation = 1;
  int64_t group = 1;
  /// MindSpore's default is no bias.
  bool has_bias = false;
  /// Default: he_uniform(sqrt(5)), as MindSpore 2 and PyTorch.
  std::optional<Initializer> weight_init = std::nullopt;
  /// Default: uniform(1/sqrt(fan_in)).
  std::optional<Initializer> bias_init = std::nullopt;
  DType dtype = DType::Float32;
};

/// 2-D cross-correlation over NCHW input: weight (out, in / group, kh, kw), bias (out,).
class Conv2d : public Cell {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Conv2dOptions options = {});
  Value construct(const std::vector<Tensor>& inputs) override;
  const Conv2dOptions& options() const { return opt_; }

  Parameter weight;
  Parameter bias;  // undefined without has_bias

 private:
  int64_t in_, out_;
  Size2 kernel_;
  Conv2dOptions opt_;
};

/// What the pooling layers share: their window, stride and padding, checked on construction (`layer` names the
/// layer in the errors).
class Pool2dCell : public Cell {
 protected:
  Pool2dCell(const char* layer, Size2 kernel_size, Size2 stride, std::string pad_mode, Padding padding);
  Size2 kernel_, stride_;
  std::string pad_mode_;
  Padding padding_;
};

/// Max pooling over NCHW input. pad_mode "valid" (no padding), "same" (output ceil(in / stride), padded with
/// -inf) or "pad" (`padding`, equal on opposite sides).
class MaxPool2d : public Pool2dCell {
 public:
  MaxPool2d(Size2 kernel_size = 1, Size2 stride = 1, std::string pad_mode = "valid", Padding padding = 0);
  Value construct(const std::vector<Tensor>& inputs) override;
};

/// Average pooling over NCHW input. pad_mode "valid", "same" (padded cells are not counted, as MindSpore)
/// or "pad" (`padding`, equal on opposite sides; padded zeros are counted, as PyTorch's default).
class AvgPool2d : public Pool2dCell {
 public:
  AvgPool2d(Size2 kernel_size = 1, Size2 stride = 1, std::string pad_mode = "valid", Padding padding = 0);
  Value construct(const std::vector<Tensor>& inputs) override;
};

// ---- normalisation ------------------------------------------------------------------------------------

struct BatchNormOptions {
  double eps = 1e-5;
  /// moving = momentum * moving + (1 - momentum) * batch (MindSpore's convention: PyTorch's 0.1 is 0.9 here).
  double momentum = 0.9;
  /// With gamma and beta (false: neither).
  bool affine = true;
  Initializer gamma_init = "ones";
  Initializer beta_init = "zeros";
  Initializer moving_mean_init = "zeros";
  Initializer moving_var_init = "ones";
  /// Unset: batch statistics in training mode, the moving ones in eval mode. true / false forces either.
  std::optional<bool> use_batch_statistics = std::nullopt;
  DType dtype = DType::Float32;
};

/// Shared by BatchNorm1d and BatchNorm2d. In training the batch_norm op normalises with the batch statistics
/// (biased variance) and the moving statistics are updated, outside autodiff, with the unbiased variance, as
/// PyTorch; in eval mode y = (x - moving_mean) / sqrt(moving_variance + eps) * gamma + beta.
class BatchNorm : public Cell {
 public:
  Value construct(const std::vector<Tensor>& inputs) override;
  int64_t num_features() const { return c_; }

  Parameter gamma;            // (C,); undefined without affine
  Parameter beta;             // (C,); undefined without affine
  Parameter moving_mean;      // (C,), state
  Parameter moving_variance;  // (C,), state

 protected:
  BatchNorm(const std::string& kind, int64_t num_features, const BatchNormOptions& options, std::vector<int64_t> ranks);

 private:
  std::string kind_;
  int64_t c_;
  BatchNormOptions opt_;
  std::vector<int64_t> ranks_;
};

/// Over (N, C) or (N, C, L) input: statistics per channel over N (and L).
class BatchNorm1d : public BatchNorm {
 public:
  explicit BatchNorm1d(int64_t num_features, BatchNormOptions options = {});
};

/// Over (N, C, H, W) input: statistics per channel over N, H and W.
class BatchNorm2d : public BatchNorm {
 public:
  explicit BatchNorm2d(int64_t num_features, BatchNormOptions options = {});
};

struct LayerNormOptions {
  Initializer gamma_init = "ones";
  Initializer beta_init = "zeros";
  /// MindSpore's default (PyTorch uses 1e-5).
  double epsilon = 1e-7;
  DType dtype = DType::Float32;
  /// The names gamma and beta are registered under: MindSpore's by default; {"weight", "bias"} gives PyTorch's
  /// state-dict keys (the transformer layers use those, so PyTorch checkpoints load with strict matching).
  std::pair<std::string, std::string> parameter_names = {"gamma", "beta"};
};

/// Normalises over the trailing dimensions given by normalized_shape; gamma and beta have that shape.
class LayerNorm : public Cell {
 public:
  explicit LayerNorm(Shape normalized_shape, LayerNormOptions options = {});
  Value construct(const std::vector<Tensor>& inputs) override;

  Parameter gamma;
  Parameter beta;

 private:
  Shape shape_;
  double eps_;
};

// ---- others -------------------------------------------------------------------------------------------

/// In training, zeroes each element with probability p and scales the rest by 1 / (1 - p); the identity in
/// eval mode. The masks come from `seed` (or one drawn from the process-wide stream): a new mask per call,
/// the same sequence of masks for the same seed.
class Dropout : public Cell {
 public:
  explicit Dropout(double p = 0.5, std::optional<uint64_t> seed = {});
  Value construct(const std::vector<Tensor>& inputs) override;
  double p() const { return p_; }

 private:
  double p_;
  uint64_t seed_;
  // Calls so far (float64 0-d state: read and advanced with ops, so that a jitted call advances it too).
  Parameter calls_;
};

struct EmbeddingOptions {
  Initializer embedding_table = "normal";
  /// The row initialised to zeros.
  std::optional<int64_t> padding_idx = std::nullopt;
  DType dtype = DType::Float32;
  /// The name the table is registered under: MindSpore's by default, "weight" for PyTorch's state-dict key.
  std::string parameter_name = "embedding_table";
};

/// Looks int32 indices up in a (vocab_size, embedding_size) table: output indices.shape + (embedding_size,).
class Embedding : public Cell {
 public:
  Embedding(int64_t vocab_size, int64_t embedding_size, EmbeddingOptions options = {});
  Value construct(const std::vector<Tensor>& inputs) override;

  Parameter embedding_table;

 private:
  int64_t vocab_, size_;
};

/// Merges dimensions start_dim..end_dim into one (default: everything but the batch axis).
class Flatten : public Cell {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  int64_t start_, end_;
};

class ReLU : public Cell {
 public:
  Value construct(const std::vector<Tensor>& inputs) override;
};

class LeakyReLU : public Cell {
 public:
  explicit LeakyReLU(double alpha = 0.2);
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  double alpha_;
};

/// MindSpore's default is the tanh approximation (approximate = true); false gives the exact erf form.
class GELU : public Cell {
 public:
  explicit GELU(bool approximate = true);
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  bool approximate_;
};

class SiLU : public Cell {
 public:
  Value construct(const std::vector<Tensor>& inputs) override;
};

class Sigmoid : public Cell {
 public:
  Value construct(const std::vector<Tensor>& inputs) override;
};

class Tanh : public Cell {
 public:
  Value construct(const std::vector<Tensor>& inputs) override;
};

class Softmax : public Cell {
 public:
  explicit Softmax(int64_t axis = -1);
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  int64_t axis_;
};

class LogSoftmax : public Cell {
 public:
  explicit LogSoftmax(int64_t axis = -1);
  Value construct(const std::vector<Tensor>& inputs) override;

 private:
  int64_t axis_;
};

}  // namespace bprop::nn
