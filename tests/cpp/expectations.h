// Expectations the op tests share: values against a list (within a relative tolerance; NaN and infinities
// exactly), and errors of an op (their class or kind, where the message starts, what it says), after which no grad
// level may be left open and the library must go on working.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "autodiff/tape.h"
#include "bprop/bprop.h"

namespace expectations {

using namespace bprop;

inline void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(t.shape(), shape) << shape_str(t.shape());
  const std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i << " = " << got[i];
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
    }
  }
}

/// Runs body and checks that it throws E with a message starting with "For '<op>'" and containing `part`.
template <typename E>
void expect_op_error(const std::function<void()>& body, const std::string& op, const std::string& part) {
  try {
    body();
    ADD_FAILURE() << "no error thrown (expected one containing \"" << part << "\")";
  } catch (const E& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("For '" + op + "'", 0), 0u) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong error type: " << e.what();
  }
}

/// Runs body and expects an Error of `kind` whose message contains every fragment; then no grad level is open
/// and the next op works.
inline void expect_error(ErrorKind kind, const std::function<void()>& body, std::initializer_list<const char*> fragments) {
  try {
    body();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const char* f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
  EXPECT_FALSE(autodiff::recording()) << "a grad level was left open";
  EXPECT_DOUBLE_EQ((scalar(2.0) * scalar(3.0)).item(), 6.0);
}

}  // namespace expectations
