// Helpers shared by the nn tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bprop/bprop.h"

namespace nntest {

using namespace bprop;

inline Tensor f64(std::vector<double> v, Shape s) { return tensor(v, s, DType::Float64); }

/// (i * mul) % mod - sub, divided by div, for i in [0, n): the deterministic inputs the torch references used.
inline std::vector<double> pattern(int64_t n, int64_t mul, int64_t mod, int64_t sub, double div) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((i * mul) % mod - sub) / div);
  return v;
}

inline void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& expected,
                          double tol = 1e-12) {
  ASSERT_EQ(t.shape(), shape);
  const std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::abs(expected[i]))) << "element " << i;
  }
}

/// Runs body; checks it throws E with every part in the message.
template <typename E>
void expect_error(const std::function<void()>& body, const std::vector<std::string>& parts) {
  try {
    body();
    ADD_FAILURE() << "no error thrown";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& part : parts) EXPECT_NE(msg.find(part), std::string::npos) << "\"" << part << "\" not in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
  }
}

/// The bytes of every parameter of a cell, by name: to check that nothing changed.
inline std::vector<std::pair<std::string, std::vector<double>>> snapshot(const Cell& cell) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (const auto& [name, p] : cell.parameters_and_names()) out.emplace_back(name, p.to_vector<double>());
  return out;
}

}  // namespace nntest
