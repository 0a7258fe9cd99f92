// Conv2d, MaxPool2d, AvgPool2d, BatchNorm1d/2d and LayerNorm: cells over the conv2d, max_pool2d, avg_pool2d,
// batch_norm and layer_norm ops, with MindSpore's pad modes added around them.
#include <cmath>
#include <limits>

#include "bprop/nn/layers.h"
#include "nn/nn_helpers.h"
#include "tensor/format.h"

namespace bprop::nn {

namespace {

// MindSpore's "same": output ceil(n / s); the total padding split with the extra cell after.
std::pair<int64_t, int64_t> same_padding(int64_t n, int64_t k, int64_t s, int64_t d) {
  const int64_t out = (n + s - 1) / s;
  const int64_t total = std::max<int64_t>((out - 1) * s + (k - 1) * d + 1 - n, 0);
  return {total / 2, total - total / 2};
}

int64_t hh(const Size2& v) { return v.value()[0]; }
int64_t ww(const Size2& v) { return v.value()[1]; }

Padding same_padding_2d(const Tensor& x, const Size2& k, const Size2& s, const Size2& d) {
  const auto [top, bottom] = same_padding(x.shape()[2], hh(k), hh(s), hh(d));
  const auto [left, right] = same_padding(x.shape()[3], ww(k), ww(s), ww(d));
  return Padding(top, bottom, left, right);
}

Tensor pad_hw(const Tensor& x, const Padding& p, double value) {
  return ops::pad(x, IntMatrix{{0, 0}, {0, 0}, {p.top, p.bottom}, {p.left, p.right}}, value);
}

void check_size2(const char* cell, const char* what, const Size2& v, int64_t min) {
  if (v.value().size() != 2) {
    throw ValueError(std::string("For '") + cell + "', " + what + " must be one int or an (h, w) pair");
  }
  if (hh(v) < min || ww(v) < min) {
    throw ValueError(std::string("For '") + cell + "', " + what + " must be at least " + std::to_string(min) +
                     ", got (" + std::to_string(hh(v)) + ", " + std::to_string(ww(v)) + ")");
  }
}

void check_pad_mode(const char* cell, const std::string& mode, const Padding& padding) {
  if (mode != "same" && mode != "valid" && mode != "pad") {
    throw ValueError(std::string("For '") + cell + "', pad_mode must be 'same', 'valid' or 'pad', got '" + mode + "'");
  }
  if (padding.top < 0 || padding.bottom < 0 || padding.left < 0 || padding.right < 0) {
    throw ValueError(std::string("For '") + cell + "', padding must not be negative");
  }
  if (mode != "pad" && !padding.is_zero()) {
    throw ValueError(std::string("For '") + cell + "', padding must be 0 when pad_mode is '" + mode +
                     "' (use pad_mode 'pad')");
  }
}

const Tensor& image_input(const char* cell, const std::vector<Tensor>& inputs, int64_t channels) {
  const Tensor& x = detail::one_input(cell, inputs);
  if (x.dim() != 4) {
    throw ShapeError(std::string("For '") + cell + "', the input must be 4-D (N, C, H, W), got shape " +
                     shape_str(x.shape()));
  }
  if (channels > 0 && x.shape()[1] != channels) {
    throw ShapeError(std::string("For '") + cell + "', the input has " + std::to_string(x.shape()[1]) +
                     " channels but the cell expects " + std::to_string(channels) + " (input shape " +
                     shape_str(x.shape()) + ")");
  }
  return x;
}

}  // namespace

// ---- Conv2d -------------------------------------------------------------------------------------------

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Size2 kernel_size, Conv2dOptions options)
    : in_(in_channels), out_(out_channels), kernel_(kernel_size), opt_(std::move(options)) {
  detail::check_positive("Conv2d", "in_channels", in_);
  detail::check_positive("Conv2d", "out_channels", out_);
  detail::check_positive("Conv2d", "group", opt_.group);
  detail::check_float_dtype("Conv2d", opt_.dtype);
  check_size2("Conv2d", "kernel_size", kernel_, 1);
  check_size2("Conv2d", "stride", opt_.stride, 1);
  check_size2("Conv2d", "dilation", opt_.dilation, 1);
  check_pad_mode("Conv2d", opt_.pad_mode, opt_.padding);
  if (in_ % opt_.group != 0 || out_ % opt_.group != 0) {
    throw ValueError("For 'Conv2d', in_channels " + std::to_string(in_) + " and out_channels " + std::to_string(out_) +
                     " must both be divisible by group " + std::to_string(opt_.group));
  }
  const Shape w_shape{out_, in_ / opt_.group, hh(kernel_), ww(kernel_)};
  const Initializer w_init = opt_.weight_init ? *opt_.weight_init : init::he_uniform(std::sqrt(5.0));
  weight = register_parameter("weight", Parameter(w_init(w_shape, opt_.dtype), "weight"));
  if (opt_.has_bias) {
    const double fan_in = static_cast<double>(compute_fans(w_shape).first);
    const Initializer b_init = opt_.bias_init ? *opt_.bias_init : init::uniform(1.0 / std::sqrt(fan_in));
    bias = register_parameter("bias", Parameter(b_init({out_}, opt_.dtype), "bias"));
  }
}

Value Conv2d::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = image_input("Conv2d", inputs, in_);
  Padding p = 0;  // "valid"
  if (opt_.pad_mode == "pad") {
    p = opt_.padding;
  } else if (opt_.pad_mode == "same") {
    p = same_padding_2d(x, kernel_, opt_.stride, opt_.dilation);
  }
  if (p.symmetric()) return ops::conv2d(x, weight, bias, opt_.stride, {p.top, p.left}, opt_.dilation, opt_.group);
  return ops::conv2d(pad_hw(x, p, 0.0), weight, bias, opt_.stride, 0, opt_.dilation, opt_.group);
}

// ---- pooling ------------------------------------------------------------------------------------------

Pool2dCell::Pool2dCell(const char* layer, Size2 kernel_size, Size2 stride, std::string pad_mode, Padding padding)
    : kernel_(kernel_size), stride_(stride), pad_mode_(std::move(pad_mode)), padding_(padding) {
  check_size2(layer, "kernel_size", kernel_, 1);
  check_size2(layer, "stride", stride_, 1);
  check_pad_mode(layer, pad_mode_, padding_);
  if (!padding_.symmetric()) {
    throw ValueError(std::string("For '") + layer +
                     "', padding must be equal on opposite sides (top = bottom, left = right)");
  }
}

MaxPool2d::MaxPool2d(Size2 kernel_size, Size2 stride, std::string pad_mode, Padding padding)
    : Pool2dCell("MaxPool2d", kernel_size, stride, std::move(pad_mode), padding) {}

Value MaxPool2d::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = image_input("MaxPool2d", inputs, 0);
  Padding p = pad_mode_ == "pad" ? padding_ : Padding(0);
  if (pad_mode_ == "same") p = same_padding_2d(x, kernel_, stride_, 1);
  if (p.symmetric()) return ops::max_pool2d(x, kernel_, stride_, {p.top, p.left});
  return ops::max_pool2d(pad_hw(x, p, -std::numeric_limits<double>::infinity()), kernel_, stride_, 0);
}

AvgPool2d::AvgPool2d(Size2 kernel_size, Size2 stride, std::string pad_mode, Padding padding)
    : Pool2dCell("AvgPool2d", kernel_size, stride, std::move(pad_mode), padding) {}

Value AvgPool2d::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = image_input("AvgPool2d", inputs, 0);
  if (pad_mode_ == "pad") return ops::avg_pool2d(x, kernel_, stride_, {padding_.top, padding_.left});
  const Padding p = pad_mode_ == "same" ? same_padding_2d(x, kernel_, stride_, 1) : Padding(0);
  if (p.is_zero()) return ops::avg_pool2d(x, kernel_, stride_, 0);
  // "same" averages over the cells inside the image only: the window sums over zero padding, divided by the
  // fraction of each window that lies inside.
  const Tensor sums = ops::avg_pool2d(pad_hw(x, p, 0.0), kernel_, stride_, 0);
  const Tensor inside = ones({1, 1, x.shape()[2], x.shape()[3]}, x.dtype());
  const Tensor fraction = ops::avg_pool2d(pad_hw(inside, p, 0.0), kernel_, stride_, 0);
  return sums / fraction;
}

// ---- BatchNorm ----------------------------------------------------------------------------------------

BatchNorm::BatchNorm(const std::string& kind, int64_t num_features, const BatchNormOptions& options,
                     std::vector<int64_t> ranks)
    : kind_(kind), c_(num_features), opt_(options), ranks_(std::move(ranks)) {
  detail::check_positive(kind_.c_str(), "num_features", c_);
  detail::check_float_dtype(kind_.c_str(), opt_.dtype);
  if (!(opt_.eps > 0.0)) throw ValueError("For '" + kind_ + "', eps must be positive, got " + format_number(opt_.eps));
  if (!(opt_.momentum >= 0.0 && opt_.momentum <= 1.0)) {
    throw ValueError("For '" + kind_ + "', momentum must be in [0, 1], got " + format_number(opt_.momentum));
  }
  if (opt_.affine) {
    gamma = register_parameter("gamma", Parameter(opt_.gamma_init({c_}, opt_.dtype), "gamma"));
    beta = register_parameter("beta", Parameter(opt_.beta_init({c_}, opt_.dtype), "beta"));
  }
  moving_mean = register_state("moving_mean", Parameter(opt_.moving_mean_init({c_}, opt_.dtype), "moving_mean", false));
  moving_variance =
      register_state("moving_variance", Parameter(opt_.moving_var_init({c_}, opt_.dtype), "moving_variance", false));
}

Value BatchNorm::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = detail::one_input(kind_.c_str(), inputs);
  bool rank_ok = false;
  for (int64_t r : ranks_) rank_ok = rank_ok || x.dim() == r;
  if (!rank_ok || x.shape()[1] != c_) {
    std::string want;
    for (int64_t r : ranks_) want += (want.empty() ? "" : " or ") + std::to_string(r) + "-D";
    throw ShapeError("For '" + kind_ + "', the input must be " + want + " with " + std::to_string(c_) +
                     " channels on axis 1, got shape " + shape_str(x.shape()));
  }
  const bool batch_stats = opt_.use_batch_statistics.value_or(training());
  if (!batch_stats) {
    // y = (x - moving_mean) / sqrt(moving_variance + eps) * gamma + beta, channels on axis 1
    Shape b(static_cast<size_t>(x.dim()), 1);
    b[1] = c_;
    Tensor scale = ops::rsqrt(ops::reshape(moving_variance, b) + opt_.eps);
    if (gamma.defined()) scale = scale * ops::reshape(gamma, b);
    Tensor y = (x - ops::reshape(moving_mean, b)) * scale;
    if (beta.defined()) y = y + ops::reshape(beta, b);
    return y;
  }
  IntList axes;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != 1) axes.push_back(i);
  }
  const int64_t count = x.numel() / c_;
  const bool update = training();
  if (update && count < 2) {
    throw ValueError("For '" + kind_ +
                     "', training needs more than 1 value per channel to estimate the variance, "
                     "got input shape " +
                     shape_str(x.shape()));
  }
  Tensor y;
  if (x.dim() == 3) {  // (N, C, L) runs as (N, C, L, 1)
    const Shape s = x.shape();
    y = ops::batch_norm(ops::reshape(x, {s[0], s[1], s[2], 1}), gamma, beta, opt_.eps);
    y = ops::reshape(y, s);
  } else {
    y = ops::batch_norm(x, gamma, beta, opt_.eps);
  }
  if (update) {
    // moving = momentum * moving + (1 - momentum) * batch statistic (unbiased variance), with ops, so that a
    // jitted training step traces the update too (Parameter::assign is then an effect of every replay)
    no_grad([&] {
      const Tensor xd = x.detach();
      const double m = opt_.momentum;
      const Tensor mean = ops::cast(ops::mean(xd, Axis(axes)), moving_mean.dtype());
      const Tensor var = ops::cast(ops::var(xd, Axis(axes), false, 1), moving_variance.dtype());
      moving_mean.assign(moving_mean * m + mean * (1.0 - m));
      moving_variance.assign(moving_variance * m + var * (1.0 - m));
    });
  }
  return y;
}

BatchNorm1d::BatchNorm1d(int64_t num_features, BatchNormOptions options)
    : BatchNorm("BatchNorm1d", num_features, options, {2, 3}) {}

BatchNorm2d::BatchNorm2d(int64_t num_features, BatchNormOptions options)
    : BatchNorm("BatchNorm2d", num_features, options, {4}) {}

// ---- LayerNorm ----------------------------------------------------------------------------------------

LayerNorm::LayerNorm(Shape normalized_shape, LayerNormOptions options)
    : shape_(std::move(normalized_shape)), eps_(options.epsilon) {
  if (shape_.empty()) throw ValueError("For 'LayerNorm', normalized_shape must have at least one dimension");
  for (int64_t d : shape_) detail::check_positive("LayerNorm", "every normalized_shape dimension", d);
  detail::check_float_dtype("LayerNorm", options.dtype);
  if (!(eps_ > 0.0)) throw ValueError("For 'LayerNorm', epsilon must be positive, got " + format_number(eps_));
  const auto& [gamma_name, beta_name] = options.parameter_names;
  gamma = register_parameter(gamma_name, Parameter(options.gamma_init(shape_, options.dtype), gamma_name));
  beta = register_parameter(beta_name, Parameter(options.beta_init(shape_, options.dtype), beta_name));
}

Value LayerNorm::construct(const std::vector<Tensor>& inputs) {
  const Tensor& x = detail::one_input("LayerNorm", inputs);
  const size_t nd = shape_.size();
  const bool ok =
      x.shape().size() >= nd && Shape(x.shape().end() - static_cast<std::ptrdiff_t>(nd), x.shape().end()) == shape_;
  if (!ok) {
    throw ShapeError("For 'LayerNorm', the input's trailing dimensions must be normalized_shape " + shape_str(shape_) +
                     ", got input shape " + shape_str(x.shape()));
  }
  return ops::layer_norm(x, gamma, beta, static_cast<int64_t>(nd), eps_);
}

}  // namespace bprop::nn
