// Bit-for-bit comparison of tensors, for the tests that hold graph mode (and checkpoints) to eager's exact bits.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bprop/bprop.h"

namespace bitwise {

/// Same shape, same dtype and the same bytes (so NaN payloads and the sign of zero count).
inline bool same_bits(const bprop::Tensor& a, const bprop::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

inline bool same_bits(const std::vector<bprop::Tensor>& a, const std::vector<bprop::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_bits(a[i], b[i])) return false;
  }
  return true;
}

inline void expect_bitwise_equal(const bprop::Tensor& got, const bprop::Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  EXPECT_TRUE(same_bits(got, want)) << got.to_string() << " vs " << want.to_string();
}

/// Every tensor of two values (tuples flattened), in order.
inline void expect_bitwise_equal(const bprop::Value& got, const bprop::Value& want) {
  const std::vector<bprop::Tensor> g = got.flatten(), w = want.flatten();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) expect_bitwise_equal(g[i], w[i]);
}

}  // namespace bitwise
