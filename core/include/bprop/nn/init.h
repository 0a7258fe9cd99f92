// Weight initialisers with MindSpore's names (mindspore.common.initializer), seeded and deterministic: the
// same seed gives the same values natively and in WebAssembly.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "bprop/tensor.h"

namespace bprop::nn {

/// Seeds the process-wide stream that initialisers and Dropout without an explicit seed draw their seeds
/// from (MindSpore's set_seed). Building the same model in the same order after the same set_seed gives
/// identical weights.
void set_seed(uint64_t seed);
/// The next seed of that stream.
uint64_t next_seed();

/// How to fill a new parameter: a distribution with its arguments and an optional seed, or given values.
class Initializer {
 public:
  enum class Kind { Zeros, Ones, Constant, Normal, Uniform, XavierUniform, XavierNormal, HeNormal, HeUniform, Values };

  /// zeros.
  Initializer() = default;
  /// By MindSpore name with default arguments: "zeros", "ones", "normal", "uniform", "xavier_uniform",
  /// "xavier_normal", "he_normal", "he_uniform" (ValueError otherwise).
  Initializer(const std::string& name);
  Initializer(const char* name) : Initializer(std::string(name)) {}
  /// Exactly these values (the parameter's shape must equal the tensor's).
  Initializer(const Tensor& values);
  /// `kind` with default arguments (set the public fields below to change them); Kind::Values needs the
  /// tensor constructor.
  explicit Initializer(Kind kind, std::optional<uint64_t> seed = {});

  Kind kind() const { return kind_; }
  /// The name MindSpore gives this initialiser ("xavier_uniform", ...; "tensor" for given values).
  std::string name() const;
  const std::optional<uint64_t>& seed() const { return seed_; }
  /// The same initialiser drawing from `seed`.
  Initializer with_seed(uint64_t seed) const;

  /// A new tensor of `shape` and float `dtype` filled by this initialiser; draws a seed from the
  /// process-wide stream when none is set. ValueError for shapes the rule cannot use (fans of a 1-D shape).
  Tensor operator()(const Shape& shape, DType dtype = DType::Float32) const;

  // The arguments (only those of `kind` are used).
  double value = 0.0;                       // Constant
  double sigma = 0.01;                      // Normal
  double mean = 0.0;                        // Normal
  double scale = 0.07;                      // Uniform: U(-scale, scale)
  double gain = 1.0;                        // Xavier
  double negative_slope = 0.0;              // He: the leaky_relu slope in the gain
  std::string mode = "fan_in";              // He: "fan_in" | "fan_out"
  std::string nonlinearity = "leaky_relu";  // He: "leaky_relu" | "relu" | "linear" | "sigmoid" | "tanh"

 private:
  Kind kind_ = Kind::Zeros;
  std::optional<uint64_t> seed_;
  Tensor values_;
};

/// (fan_in, fan_out) of a weight shape, as PyTorch and MindSpore compute them: dims 0 and 1 times the
/// receptive field (the product of dims 2...). ValueError for fewer than 2 dims.
std::pair<int64_t, int64_t> compute_fans(const Shape& shape);
/// The recommended gain of a nonlinearity (PyTorch's calculate_gain; `param` is leaky_relu's slope).
double calculate_gain(const std::string& nonlinearity, double param = 0.0);

/// MindSpore's initializer(init, shape, dtype): a new tensor filled by `init`.
Tensor initializer(const Initializer& init, const Shape& shape, DType dtype = DType::Float32);

namespace init {
Initializer zeros();
Initializer ones();
Initializer constant(double value);
/// N(mean, sigma^2).
Initializer normal(double sigma = 0.01, double mean = 0.0, std::optional<uint64_t> seed = {});
/// U(-scale, scale).
Initializer uniform(double scale = 0.07, std::optional<uint64_t> seed = {});
/// U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)).
Initializer xavier_uniform(double gain = 1.0, std::optional<uint64_t> seed = {});
/// N(0, s^2), s = gain * sqrt(2 / (fan_in + fan_out)).
Initializer xavier_normal(double gain = 1.0, std::optional<uint64_t> seed = {});
/// N(0, s^2), s = calculate_gain(nonlinearity, negative_slope) / sqrt(fan).
Initializer he_normal(double negative_slope = 0.0, const std::string& mode = "fan_in",
                      const std::string& nonlinearity = "leaky_relu", std::optional<uint64_t> seed = {});
/// U(-b, b), b = calculate_gain(nonlinearity, negative_slope) * sqrt(3 / fan).
Initializer he_uniform(double negative_slope = 0.0, const std::string& mode = "fan_in",
                       const std::string& nonlinearity = "leaky_relu", std::optional<uint64_t> seed = {});
}  // namespace init

}  // namespace bprop::nn
