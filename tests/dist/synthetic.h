// Deterministic MNIST-like images and labels, the same on every rank (the data of the multi-process checks).
#pragma once
#include <cstdint>

#include "bprop/bprop.h"
#include "models/trainer.h"

namespace bprop::dist_test {

inline data::Dataset synthetic(int64_t count) {
  data::Dataset ds;
  ds.count = count;
  ds.rows = ds.cols = 28;
  ds.images.resize(static_cast<size_t>(count * 28 * 28));
  ds.labels.resize(static_cast<size_t>(count));
  uint64_t s = 987654321;
  for (int64_t i = 0; i < count; ++i) {
    const int label = static_cast<int>((i * 7 + 3) % 10);
    ds.labels[static_cast<size_t>(i)] = static_cast<uint8_t>(label);
    for (int64_t j = 0; j < 28 * 28; ++j) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      // Some signal (a bright band per class) over noise, so the loss actually falls.
      const bool band = (j / 28) / 3 == label;
      ds.images[static_cast<size_t>(i * 784 + j)] = static_cast<uint8_t>((s >> 58) + (band ? 160 : 0));
    }
  }
  return ds;
}

}  // namespace bprop::dist_test
