#include "models/models.h"

#include <sstream>

#include "bprop/errors.h"
#include "bprop/nn/layers.h"

namespace bprop::models {

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names{"mlp", "cnn"};
  return names;
}

std::shared_ptr<SequentialCell> make_model(const std::string& name, int64_t rows, int64_t cols, int64_t num_classes) {
  using namespace bprop::nn;
  if (rows <= 0 || cols <= 0 || num_classes <= 0) {
    throw ValueError("For 'make_model', the image size and class count must be positive, got " + std::to_string(rows) +
                     " x " + std::to_string(cols) + " and " + std::to_string(num_classes));
  }
  if (name == "mlp") {
    return std::make_shared<SequentialCell>(std::initializer_list<std::shared_ptr<Cell>>{
        std::make_shared<Flatten>(),
        std::make_shared<Dense>(rows * cols, 256),
        std::make_shared<ReLU>(),
        std::make_shared<Dense>(256, 128),
        std::make_shared<ReLU>(),
        std::make_shared<Dense>(128, num_classes),
    });
  }
  if (name == "cnn") {
    if (rows % 4 != 0 || cols % 4 != 0) {
      throw ValueError("For 'make_model', the cnn needs image sides divisible by 4 (two 2x2 poolings), got " +
                       std::to_string(rows) + " x " + std::to_string(cols));
    }
    Conv2dOptions conv;
    conv.pad_mode = "pad";
    conv.padding = 1;
    conv.has_bias = true;
    return std::make_shared<SequentialCell>(std::initializer_list<std::shared_ptr<Cell>>{
        std::make_shared<Conv2d>(1, 16, 3, conv),
        std::make_shared<ReLU>(),
        std::make_shared<MaxPool2d>(2, 2),
        std::make_shared<Conv2d>(16, 32, 3, conv),
        std::make_shared<ReLU>(),
        std::make_shared<MaxPool2d>(2, 2),
        std::make_shared<Flatten>(),
        std::make_shared<Dense>(32 * (rows / 4) * (cols / 4), 128),
        std::make_shared<ReLU>(),
        std::make_shared<Dense>(128, num_classes),
    });
  }
  std::string known;
  for (const auto& n : model_names()) known += (known.empty() ? "'" : ", '") + n + "'";
  throw ValueError("unknown model '" + name + "' (known models: " + known + ")");
}

int64_t parameter_count(const Cell& model) {
  int64_t n = 0;
  for (const auto& p : model.trainable_params()) n += p.numel();
  return n;
}

std::string describe_model(const std::string& name, const Cell& model) {
  std::ostringstream os;
  os << name << ": ";
  if (name == "mlp") os << "784-256-128-10 with ReLU";
  else if (name == "cnn") os << "conv 1->16 3x3, relu, maxpool 2, conv 16->32 3x3, relu, maxpool 2, dense 1568-128, relu, dense 128-10";
  else os << "custom";
  os << " (" << parameter_count(model) << " parameters)";
  return os.str();
}

}  // namespace bprop::models
