// Dense, Dropout, Embedding, Flatten and the activation cells.
#include "bprop/nn/layers.h"

#include <cmath>

#include "bprop/random.h"
#include "nn/nn_helpers.h"
#include "tensor/format.h"

namespace bprop::nn {

std::shared_ptr<Cell> get_activation(const std::string& name) {
  if (name == "relu") return std::make_shared<ReLU>();
  if (name == "leakyrelu" || name == "leaky_relu") return std::make_shared<LeakyReLU>();
  if (name == "gelu") return std::make_shared<GELU>();
  if (name == "silu") return std::make_shared<SiLU>();
  if (name == "sigmoid") return std::make_shared<Sigmoid>();
  if (name == "tanh") return std::make_shared<Tanh>();
  if (name == "softmax") return std::make_shared<Softmax>();
  if (name == "logsoftmax" || name == "log_softmax") return std::make_shared<LogSoftmax>();
  throw ValueError("get_activation: unknown activation '" + name +
                   "' (expected relu, leakyrelu, gelu, silu, sigmoid, tanh, softmax or logsoftmax)");
}

// ---- Dense --------------------------------------------------------------------------------------------

Dense::Dense(int64_t in_channels, int64_t out_channels, DenseOptions options) : in_(in_channels), out_(out_channels) {
  detail::check_positive("Dense", "in_channels", in_channels);
  detail::check_positive("Dense", "out_channels", out_channels);
  detail::check_float_dtype("Dense", options.dtype);
  const Initializer w_init = options.weight_init ? *options.weight_init : init::he_uniform(std::sqrt(5.0));
  weight = register_parameter("weight", Parameter(w_init({out_, in_}, options.dtype), "weight"));
  if (options.has_bias) {
    const Initializer b_init =
        options.bias_init ? *options.bias_init : init::uniform(1.0 / std::sqrt(static_cast<double>(in_)));
    bias = register_parameter("bias", Parameter(b_init({out_}, options.dtype), "bias"));
  }
  if (!options.activation.empty()) activation_ = register_cell("activation", get_activation(options.activation));
}

Value Dense::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = detail::one_input("Dense", inputs);
  if (x.dim() == 0 || x.shape().back() != in_) {
    throw ShapeError("For 'Dense', the input's last dimension must equal in_channels = " + std::to_string(in_) +
                     ", got input shape " + shape_str(x.shape()));
  }
  Tensor y = ops::matmul(x, ops::transpose(weight, {1, 0}));
  if (bias.defined()) y = y + bias;
  if (activation_) y = (*activation_)(y);
  return y;
}

// ---- Dropout ------------------------------------------------------------------------------------------

Dropout::Dropout(double p, std::optional<uint64_t> seed)
    : p_(p), seed_(seed ? *seed : next_seed()), calls_(zeros({}, DType::Float64), "dropout_calls", false) {
  if (!(p >= 0.0 && p < 1.0)) {
    throw ValueError("For 'Dropout', p must be in [0, 1), got " + format_number(p));
  }
}

Value Dropout::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = detail::one_input("Dropout", inputs);
  if (!training() || p_ == 0.0) return x;
  if (!is_float(x.dtype())) {
    throw DTypeError(std::string("For 'Dropout', the input must be float32 or float64, got ") + dtype_name(x.dtype()));
  }
  // The mask of call k is drawn from the stream seed + k * golden ratio (dropout_mask, core/ops/random.cpp).
  calls_.assign(calls_ + 1.0);
  const Tensor mask = call_op("dropout_mask", {calls_},
                              {{"seed", static_cast<int64_t>(seed_)},
                               {"p", p_},
                               {"shape", IntList(x.shape())},
                               {"dtype", std::string(dtype_name(x.dtype()))}});
  return x * mask;
}

// ---- Embedding ----------------------------------------------------------------------------------------

Embedding::Embedding(int64_t vocab_size, int64_t embedding_size, EmbeddingOptions options)
    : vocab_(vocab_size), size_(embedding_size) {
  detail::check_positive("Embedding", "vocab_size", vocab_size);
  detail::check_positive("Embedding", "embedding_size", embedding_size);
  detail::check_float_dtype("Embedding", options.dtype);
  Tensor table = options.embedding_table({vocab_, size_}, options.dtype);
  if (options.padding_idx) {
    int64_t row = *options.padding_idx;
    if (row < -vocab_ || row >= vocab_) {
      throw ValueError("For 'Embedding', padding_idx " + std::to_string(row) + " is out of range for vocab_size " +
                       std::to_string(vocab_));
    }
    if (row < 0) row += vocab_;
    visit_storage_dtype(table.dtype(), [&]<typename T>() {
      T* p = table.data<T>() + row * size_;
      for (int64_t j = 0; j < size_; ++j) p[j] = convert_element<T>(0.0);
    });
  }
  embedding_table = register_parameter(options.parameter_name, Parameter(table, options.parameter_name));
}

Value Embedding::construct(const std::vector<Tensor>& inputs) {
  const Tensor& ids = detail::one_input("Embedding", inputs);
  if (ids.dtype() != DType::Int32) {
    throw DTypeError(std::string("For 'Embedding', the indices must be int32, got ") + dtype_name(ids.dtype()));
  }
  return ops::embedding(ids, embedding_table);
}

// ---- Flatten ------------------------------------------------------------------------------------------

Flatten::Flatten(int64_t start_dim, int64_t end_dim) : start_(start_dim), end_(end_dim) {}

Value Flatten::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = detail::one_input("Flatten", inputs);
  const int64_t n = x.dim();
  const int64_t s = start_ < 0 ? start_ + n : start_, e = end_ < 0 ? end_ + n : end_;
  if (s < 0 || s >= n || e < 0 || e >= n || s > e) {
    throw ValueError("For 'Flatten', start_dim " + std::to_string(start_) + " and end_dim " + std::to_string(end_) +
                     " do not select a range of the input's dimensions (input shape " + shape_str(x.shape()) + ")");
  }
  Shape shape;
  int64_t merged = 1;
  for (int64_t i = 0; i < n; ++i) {
    if (i < s || i > e) {
      shape.push_back(x.shape()[static_cast<size_t>(i)]);
    } else {
      merged *= x.shape()[static_cast<size_t>(i)];
    }
    if (i == e) shape.push_back(merged);
  }
  return ops::reshape(x, shape);
}

// ---- activations --------------------------------------------------------------------------------------

Value ReLU::construct(const std::vector<Tensor>& inputs) { return ops::relu(detail::one_input("ReLU", inputs)); }

LeakyReLU::LeakyReLU(double alpha) : alpha_(alpha) {}
Value LeakyReLU::construct(const std::vector<Tensor>& inputs) {
  return ops::leaky_relu(detail::one_input("LeakyReLU", inputs), alpha_);
}

GELU::GELU(bool approximate) : approximate_(approximate) {}
Value GELU::construct(const std::vector<Tensor>& inputs) {
  return ops::gelu(detail::one_input("GELU", inputs), approximate_ ? "tanh" : "none");
}

Value SiLU::construct(const std::vector<Tensor>& inputs) { return ops::silu(detail::one_input("SiLU", inputs)); }

Value Sigmoid::construct(const std::vector<Tensor>& inputs) {
  return ops::sigmoid(detail::one_input("Sigmoid", inputs));
}

Value Tanh::construct(const std::vector<Tensor>& inputs) { return ops::tanh(detail::one_input("Tanh", inputs)); }

Softmax::Softmax(int64_t axis) : axis_(axis) {}
Value Softmax::construct(const std::vector<Tensor>& inputs) {
  return ops::softmax(detail::one_input("Softmax", inputs), axis_);
}

LogSoftmax::LogSoftmax(int64_t axis) : axis_(axis) {}
Value LogSoftmax::construct(const std::vector<Tensor>& inputs) {
  return ops::log_softmax(detail::one_input("LogSoftmax", inputs), axis_);
}

}  // namespace bprop::nn
