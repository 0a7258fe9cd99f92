// The classifiers `bprop train` and `bprop eval` build for 28x28 grey images in 10 classes (Fashion-MNIST):
// the same definition on both sides, so a checkpoint saved by one loads into the other.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bprop/cell.h"
#include "bprop/shape.h"

namespace bprop::models {

/// "mlp" and "cnn".
const std::vector<std::string>& model_names();

/// A new model with freshly initialised weights (drawn from the stream nn::set_seed seeds):
///   mlp: Flatten, Dense 784-256, ReLU, Dense 256-128, ReLU, Dense 128-10.
///   cnn: Conv2d 1->16 3x3 pad 1, ReLU, MaxPool 2, Conv2d 16->32 3x3 pad 1, ReLU, MaxPool 2, Flatten,
///        Dense 32*7*7-128, ReLU, Dense 128-10.
/// Both take (N, 1, rows, cols) float32 images and return (N, num_classes) logits. ValueError naming the
/// known models for any other name.
std::shared_ptr<SequentialCell> make_model(const std::string& name, int64_t rows = 28, int64_t cols = 28,
                                           int64_t num_classes = 10);

/// One line describing the model's layers and parameter count.
std::string describe_model(const std::string& name, const Cell& model);

/// Total elements over the model's trainable parameters.
int64_t parameter_count(const Cell& model);

}  // namespace bprop::models
