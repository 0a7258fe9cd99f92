// Bad input: every failure is an error of a kind, naming the op, the argument and the shapes/dtypes; the
// library keeps working afterwards.
#include <gtest/gtest.h>

#include "autodiff/tape.h"
#include "bprop/bprop.h"
#include "expectations.h"

using namespace bprop;

namespace {

using expectations::expect_error;

}  // namespace

TEST(Errors, BroadcastMismatch) {
  expect_error(ErrorKind::Shape, [] { ops::add(ones({2, 3}), ones({4})); }, {"For 'add'", "(2, 3)", "(4,)", "'x'", "'y'"});
}

TEST(Errors, MatmulInnerDimensions) {
  expect_error(ErrorKind::Shape, [] { ops::matmul(ones({2, 3}), ones({4, 5})); }, {"For 'matmul'", "(2, 3)", "(4, 5)"});
}

TEST(Errors, ReshapeSize) {
  expect_error(ErrorKind::Shape, [] { ops::reshape(ones({2, 3}), {4, 2}); }, {"For 'reshape'", "(2, 3)", "(4, 2)"});
  expect_error(ErrorKind::Shape, [] { ops::reshape(ones({2, 3}), {-1, 4}); }, {"For 'reshape'"});
}

TEST(Errors, AxisOutOfRange) {
  expect_error(ErrorKind::Shape, [] { ops::sum(ones({2, 3}), 2); }, {"For 'sum'", "axis", "2"});
  expect_error(ErrorKind::Shape, [] { ops::softmax(ones({2, 3}), -3); }, {"For 'softmax'"});
}

TEST(Errors, DuplicatePermAxes) {
  expect_error(ErrorKind::Value, [] { ops::transpose(ones({2, 3, 4}), {0, 1, 1}); }, {"For 'transpose'", "perm"});
}

TEST(Errors, FloatIndicesToGather) {
  expect_error(ErrorKind::DType, [] { ops::gather(ones({3, 4}), ones({2}), 0); }, {"For 'gather'", "indices", "float32"});
}

TEST(Errors, UnknownOp) {
  expect_error(ErrorKind::UnknownOp, [] { call_op("no_such_op", {ones({2})}); }, {"no_such_op"});
}

TEST(Errors, UnknownOrIllTypedAttribute) {
  expect_error(ErrorKind::Value, [] { call_op("sum", {ones({2})}, {{"axes", int64_t{0}}}); },
               {"For 'sum'", "unknown attribute 'axes'", "axis"});
  expect_error(ErrorKind::Value, [] { call_op("sum", {ones({2})}, {{"keepdims", std::string("yes")}}); },
               {"For 'sum'", "'keepdims'", "bool"});
  expect_error(ErrorKind::Value, [] { call_op("gelu", {ones({2})}, {{"approximate", std::string("fast")}}); },
               {"For 'gelu'", "approximate", "fast"});
  expect_error(ErrorKind::Value, [] { call_op("cast", {ones({2})}); }, {"For 'cast'", "dtype", "missing"});
}

TEST(Errors, MissingAndExtraArguments) {
  expect_error(ErrorKind::Value, [] { call_op("add", {ones({2})}); }, {"For 'add'", "'y'"});
  expect_error(ErrorKind::Value, [] { call_op("neg", {ones({2}), ones({2})}); }, {"For 'neg'"});
}

TEST(Errors, WhereNeedsBoolCondition) {
  expect_error(ErrorKind::DType, [] { ops::where(ones({2}), ones({2}), ones({2})); }, {"For 'where'", "cond"});
}

TEST(Errors, GradPositionOutOfRange) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0]); };
  expect_error(ErrorKind::Value, [&] { grad(f, 2)({ones({2})}); }, {"For 'grad'", "grad_position 2"});
}

TEST(Errors, DifferentiatingAnInt32Input) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::cast(a[0], DType::Float32)); };
  expect_error(ErrorKind::DType, [&] { grad(f)({tensor_i32({1, 2}, {2})}); }, {"For 'grad'", "int32"});
}

TEST(Errors, HasAuxWithASingleOutput) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(a[0]); };
  expect_error(ErrorKind::Value, [&] { grad(f, 0, {}, true)({ones({2})}); }, {"For 'grad'", "has_aux"});
}

TEST(Errors, ErrorInsideTheDifferentiatedFunction) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::sum(ops::add(a[0], ones({5}))); };
  expect_error(ErrorKind::Shape, [&] { grad(f)({ones({2})}); }, {"For 'add'"});
}

TEST(Errors, SensShapeMismatch) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return a[0] * 2.0; };
  expect_error(ErrorKind::Shape, [&] { grad(f)({ones({2})}, ones({3})); }, {"sens", "(3,)", "(2,)"});
}

TEST(Errors, NonScalarItem) {
  expect_error(ErrorKind::Value, [] { ones({2}).item(); }, {"item"});
}
