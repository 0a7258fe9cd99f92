#include "bprop/nn/init.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "bprop/random.h"

namespace bprop::nn {

namespace {

std::atomic<uint64_t> g_seed_state{0};

uint64_t mix64(uint64_t z) {  // splitmix64's output function
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// Fills a new tensor with gen() (doubles) converted to the float dtype.
template <typename Gen>
Tensor fill(const Shape& shape, DType dtype, Gen&& gen) {
  Tensor out = Tensor::empty(shape, dtype);
  visit_storage_dtype(dtype, [&]<typename T>() {
    T* p = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = convert_element<T>(gen());
  });
  return out;
}

int64_t fan_of(const Shape& shape, const std::string& mode) {
  const auto [fan_in, fan_out] = compute_fans(shape);
  if (mode == "fan_in") return fan_in;
  if (mode == "fan_out") return fan_out;
  throw ValueError("For 'he_normal/he_uniform', mode must be 'fan_in' or 'fan_out', got '" + mode + "'");
}

}  // namespace

void set_seed(uint64_t seed) { g_seed_state.store(mix64(seed ^ kGolden)); }

uint64_t next_seed() { return mix64(g_seed_state.fetch_add(kGolden) + kGolden); }

Initializer::Initializer(Kind kind, std::optional<uint64_t> seed) : kind_(kind), seed_(seed) {
  if (kind == Kind::Values) throw ValueError("Initializer: Kind::Values needs the values: pass the tensor instead");
}

Initializer::Initializer(const std::string& name) {
  static const std::pair<const char*, Kind> kNames[] = {{"zeros", Kind::Zeros},
                                                        {"zero", Kind::Zeros},
                                                        {"ones", Kind::Ones},
                                                        {"one", Kind::Ones},
                                                        {"normal", Kind::Normal},
                                                        {"uniform", Kind::Uniform},
                                                        {"xavier_uniform", Kind::XavierUniform},
                                                        {"xavier_normal", Kind::XavierNormal},
                                                        {"he_normal", Kind::HeNormal},
                                                        {"he_uniform", Kind::HeUniform}};
  for (const auto& [n, k] : kNames) {
    if (name == n) {
      kind_ = k;
      return;
    }
  }
  throw ValueError("Initializer: unknown name '" + name +
                   "' (expected zeros, ones, normal, uniform, xavier_uniform, xavier_normal, he_normal or he_uniform)");
}

Initializer::Initializer(const Tensor& values) : kind_(Kind::Values), values_(values) {
  if (!values.defined()) throw ValueError("Initializer: the values tensor is undefined");
}

std::string Initializer::name() const {
  switch (kind_) {
    case Kind::Zeros:
      return "zeros";
    case Kind::Ones:
      return "ones";
    case Kind::Constant:
      return "constant";
    case Kind::Normal:
      return "normal";
    case Kind::Uniform:
      return "uniform";
    case Kind::XavierUniform:
      return "xavier_uniform";
    case Kind::XavierNormal:
      return "xavier_normal";
    case Kind::HeNormal:
      return "he_normal";
    case Kind::HeUniform:
      return "he_uniform";
    case Kind::Values:
      break;
  }
  return "tensor";
}

Initializer Initializer::with_seed(uint64_t seed) const {
  Initializer out = *this;
  out.seed_ = seed;
  return out;
}

std::pair<int64_t, int64_t> compute_fans(const Shape& shape) {
  if (shape.size() < 2) {
    throw ValueError("Initializer: fan_in and fan_out need a shape of at least 2 dimensions, got " + shape_str(shape));
  }
  int64_t receptive = 1;
  for (size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

double calculate_gain(const std::string& nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "conv2d" || nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  throw ValueError("calculate_gain: unknown nonlinearity '" + nonlinearity +
                   "' (expected linear, conv2d, sigmoid, tanh, relu or leaky_relu)");
}

Tensor Initializer::operator()(const Shape& shape, DType dtype) const {
  if (!is_float(dtype)) {
    throw DTypeError("Initializer '" + name() + "': dtype must be float32 or float64, got " + dtype_name(dtype));
  }
  for (int64_t d : shape) {
    if (d < 0) throw ValueError("Initializer '" + name() + "': negative dimension in shape " + shape_str(shape));
  }
  switch (kind_) {
    case Kind::Zeros:
      return bprop::zeros(shape, dtype);
    case Kind::Ones:
      return bprop::ones(shape, dtype);
    case Kind::Constant:
      return bprop::full(shape, value, dtype);
    case Kind::Values: {
      if (values_.shape() != shape) {
        throw ShapeError("Initializer: the given tensor has shape " + shape_str(values_.shape()) +
                         " but the parameter needs " + shape_str(shape));
      }
      return convert(values_, dtype).clone();
    }
    default:
      break;
  }
  Random rng(seed_ ? *seed_ : next_seed());
  switch (kind_) {
    case Kind::Normal:
      return fill(shape, dtype, [&] { return mean + sigma * rng.normal(); });
    case Kind::Uniform:
      return fill(shape, dtype, [&] { return scale * (2.0 * rng.uniform() - 1.0); });
    case Kind::XavierUniform: {
      const auto [fan_in, fan_out] = compute_fans(shape);
      const double a = gain * std::sqrt(6.0 / static_cast<double>(std::max<int64_t>(fan_in + fan_out, 1)));
      return fill(shape, dtype, [&] { return a * (2.0 * rng.uniform() - 1.0); });
    }
    case Kind::XavierNormal: {
      const auto [fan_in, fan_out] = compute_fans(shape);
      const double s = gain * std::sqrt(2.0 / static_cast<double>(std::max<int64_t>(fan_in + fan_out, 1)));
      return fill(shape, dtype, [&] { return s * rng.normal(); });
    }
    case Kind::HeNormal: {
      const double s = calculate_gain(nonlinearity, negative_slope) /
                       std::sqrt(static_cast<double>(std::max<int64_t>(fan_of(shape, mode), 1)));
      return fill(shape, dtype, [&] { return s * rng.normal(); });
    }
    case Kind::HeUniform: {
      const double b = calculate_gain(nonlinearity, negative_slope) *
                       std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(fan_of(shape, mode), 1)));
      return fill(shape, dtype, [&] { return b * (2.0 * rng.uniform() - 1.0); });
    }
    default:
      break;
  }
  throw ValueError("Initializer: unhandled kind '" + name() + "'");
}

Tensor initializer(const Initializer& init, const Shape& shape, DType dtype) { return init(shape, dtype); }

namespace init {

Initializer zeros() { return Initializer(Initializer::Kind::Zeros); }
Initializer ones() { return Initializer(Initializer::Kind::Ones); }
Initializer constant(double value) {
  Initializer i(Initializer::Kind::Constant);
  i.value = value;
  return i;
}
Initializer normal(double sigma, double mean, std::optional<uint64_t> seed) {
  Initializer i(Initializer::Kind::Normal, seed);
  i.sigma = sigma;
  i.mean = mean;
  return i;
}
Initializer uniform(double scale, std::optional<uint64_t> seed) {
  Initializer i(Initializer::Kind::Uniform, seed);
  i.scale = scale;
  return i;
}
Initializer xavier_uniform(double gain, std::optional<uint64_t> seed) {
  Initializer i(Initializer::Kind::XavierUniform, seed);
  i.gain = gain;
  return i;
}
Initializer xavier_normal(double gain, std::optional<uint64_t> seed) {
  Initializer i(Initializer::Kind::XavierNormal, seed);
  i.gain = gain;
  return i;
}
Initializer he_normal(double negative_slope, const std::string& mode, const std::string& nonlinearity,
                      std::optional<uint64_t> seed) {
  Initializer i(Initializer::Kind::HeNormal, seed);
  i.negative_slope = negative_slope;
  i.mode = mode;
  i.nonlinearity = nonlinearity;
  fan_of({1, 1}, mode);                          // validates mode now, not at first use
  calculate_gain(nonlinearity, negative_slope);  // and the nonlinearity
  return i;
}
Initializer he_uniform(double negative_slope, const std::string& mode, const std::string& nonlinearity,
                       std::optional<uint64_t> seed) {
  Initializer i = he_normal(negative_slope, mode, nonlinearity, seed);
  Initializer out(Initializer::Kind::HeUniform, seed);
  out.negative_slope = i.negative_slope;
  out.mode = i.mode;
  out.nonlinearity = i.nonlinearity;
  return out;
}

}  // namespace init

}  // namespace bprop::nn
