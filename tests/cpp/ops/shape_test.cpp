// Shape and indexing ops: values against NumPy's results (hard-coded), views, the copy paths of large
// tensors against an element-by-element reference, first and second order gradients (including the
// internal gradient ops gather_grad and strided_slice_grad), negative axes and the error paths.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "autodiff/tape.h"
#include "bprop/bprop.h"
#include "expectations.h"

using namespace bprop;

namespace {

using expectations::expect_error;

// 0, 1, 2, ... shaped `shape`.
Tensor seq(const Shape& shape, DType dtype = DType::Float64) {
  return ops::reshape(arange(0, static_cast<double>(shape_numel(shape)), 1.0, dtype), shape);
}

std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }

void expect_tensor(const Tensor& t, const Shape& shape, const std::vector<double>& values) {
  EXPECT_EQ(shape_str(t.shape()), shape_str(shape));
  EXPECT_EQ(vals(t), values);
}

// First and second order finite-difference checks of fn at inputs.
void expect_grads(const Fn& fn, const std::vector<Tensor>& inputs) {
  const CheckResult r1 = gradcheck(fn, inputs);
  EXPECT_TRUE(r1.ok) << r1.message;
  const CheckResult r2 = gradgradcheck(fn, inputs);
  EXPECT_TRUE(r2.ok) << r2.message;
}

Tensor rnd(const Shape& shape, uint64_t seed) { return randn(shape, seed, DType::Float64); }

// Element (multi-index) access of a row-major value vector.
struct Nd {
  std::vector<double> v;
  Shape shape;
  explicit Nd(const Tensor& t) : v(vals(t)), shape(t.shape()) {}
  double at(const std::vector<int64_t>& idx) const {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) off = off * shape[i] + idx[i];
    return v[static_cast<size_t>(off)];
  }
};

// Calls f(multi-index) for every element of `shape` in row-major order.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t n = 0; n < shape_numel(shape); ++n) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

Fn unary(std::function<Tensor(const Tensor&)> f) {
  return [f](const std::vector<Tensor>& a) -> Value { return f(a[0]); };
}

}  // namespace

// ---- reshape ----------------------------------------------------------------------------------------------

TEST(ShapeOps, ReshapeValuesAndView) {
  const Tensor x = seq({2, 3});
  const Tensor y = ops::reshape(x, {3, -1});
  expect_tensor(y, {3, 2}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(y.raw_data(), x.raw_data()) << "reshape should be a view";
  expect_tensor(ops::reshape(x, {6}), {6}, {0, 1, 2, 3, 4, 5});
  expect_tensor(ops::reshape(seq({1}), {}), {}, {0});
  expect_tensor(ops::reshape(zeros({0, 3}), {3, 0}), {3, 0}, {});
}

TEST(ShapeOps, ReshapeErrors) {
  expect_error(ErrorKind::Shape, [] { ops::reshape(ones({2, 3}), {4, -1}); }, {"For 'reshape'", "(2, 3)", "(4, -1)"});
  expect_error(ErrorKind::Shape, [] { ops::reshape(ones({2, 3}), {5}); }, {"For 'reshape'", "(2, 3)", "(5,)"});
  expect_error(ErrorKind::Value, [] { ops::reshape(ones({2, 3}), {-1, -1}); }, {"For 'reshape'", "-1"});
  expect_error(ErrorKind::Value, [] { ops::reshape(ones({2, 3}), {-2, -3}); }, {"For 'reshape'", "negative"});
  expect_error(ErrorKind::Shape, [] { ops::reshape(zeros({0, 3}), {0, -1}); }, {"For 'reshape'"});
  expect_error(ErrorKind::Value, [] { call_op("reshape", {ones({2})}); }, {"For 'reshape'", "shape"});
}

TEST(ShapeOps, ReshapeGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::reshape(x, {3, -1}) * ops::reshape(x, {3, 2}); }),
               {rnd({2, 3}, 1)});
}

// ---- transpose --------------------------------------------------------------------------------------------

TEST(ShapeOps, TransposeValues) {
  const Tensor x = seq({2, 3, 4});
  const std::vector<double> expect = {0, 4, 8, 12, 16, 20, 1, 5, 9,  13, 17, 21,
                                      2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23};
  expect_tensor(ops::transpose(x, {2, 0, 1}), {4, 2, 3}, expect);
  expect_tensor(ops::transpose(x, {-1, 0, -2}), {4, 2, 3}, expect);
  expect_tensor(ops::transpose(seq({2, 3}, DType::Int32), {1, 0}), {3, 2}, {0, 3, 1, 4, 2, 5});
  expect_tensor(ops::transpose(scalar(7.0), {}), {}, {7});
}

TEST(ShapeOps, TransposeLargeMatchesReference) {
  // Large enough for the tiled path and several threads, with ragged tiles.
  for (const IntList& perm : {IntList{0, 2, 1}, IntList{2, 1, 0}, IntList{1, 2, 0}, IntList{1, 0, 2}}) {
    const Tensor x = seq({3, 70, 45}, DType::Float32);
    const Tensor y = ops::transpose(x, perm);
    const Nd xn(x), yn(y);
    bool ok = true;
    for_each_index(y.shape(), [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> src(3);
      for (size_t d = 0; d < 3; ++d) src[static_cast<size_t>(perm[d])] = i[d];
      ok = ok && yn.at(i) == xn.at(src);
    });
    EXPECT_TRUE(ok) << attr_value_str(AttrValue(perm));
  }
  const Tensor big = rand({300, 257}, 3);
  const Tensor bt = ops::transpose(big, {1, 0});
  const Nd bn(big), btn(bt);
  bool ok = true;
  for_each_index(bt.shape(), [&](const std::vector<int64_t>& i) { ok = ok && btn.at(i) == bn.at({i[1], i[0]}); });
  EXPECT_TRUE(ok);
}

TEST(ShapeOps, TransposeErrors) {
  expect_error(ErrorKind::Value, [] { ops::transpose(ones({2, 3, 4}), {0, 1, 1}); }, {"For 'transpose'", "perm"});
  expect_error(ErrorKind::Value, [] { ops::transpose(ones({2, 3}), {1, -1}); }, {"For 'transpose'", "more than once"});
  expect_error(ErrorKind::Shape, [] { ops::transpose(ones({2, 3}), {0, 1, 2}); }, {"For 'transpose'", "(2, 3)"});
  expect_error(ErrorKind::Shape, [] { ops::transpose(ones({2, 3}), {0, 2}); }, {"For 'transpose'", "2", "(2, 3)"});
  expect_error(ErrorKind::Value, [] { call_op("transpose", {ones({2, 3})}); }, {"For 'transpose'", "perm"});
}

TEST(ShapeOps, TransposeGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::transpose(x, {2, 0, 1})); }), {rnd({2, 3, 2}, 2)});
  expect_grads(unary([](const Tensor& x) { return ops::transpose(x, {-1, 0}) * 3.0; }), {rnd({2, 3}, 3)});
}

// ---- broadcast_to -----------------------------------------------------------------------------------------

TEST(ShapeOps, BroadcastToValues) {
  const Tensor x = tensor({1, 2, 3}, {3, 1}, DType::Float64);
  const Tensor y = ops::broadcast_to(x, {2, 3, 4});
  std::vector<double> expect;
  for (int a = 0; a < 2; ++a)
    for (int b = 1; b <= 3; ++b)
      for (int c = 0; c < 4; ++c) expect.push_back(b);
  expect_tensor(y, {2, 3, 4}, expect);
  expect_tensor(ops::broadcast_to(tensor_i32({5, 6}, {2}), {2, 2}), {2, 2}, {5, 6, 5, 6});
  expect_tensor(ops::broadcast_to(scalar(4.0), {3}), {3}, {4, 4, 4});
  // A large broadcast across threads.
  const Tensor row = seq({1, 1000}, DType::Float32);
  const Tensor big = ops::broadcast_to(row, {200, 1000});
  const std::vector<double> bv = vals(big);
  bool ok = true;
  for (size_t i = 0; i < bv.size(); ++i) ok = ok && bv[i] == static_cast<double>(i % 1000);
  EXPECT_TRUE(ok);
}

TEST(ShapeOps, BroadcastToErrors) {
  expect_error(ErrorKind::Shape, [] { ops::broadcast_to(ones({2, 3}), {3, 3}); }, {"For 'broadcast_to'", "(2, 3)", "(3, 3)"});
  expect_error(ErrorKind::Shape, [] { ops::broadcast_to(ones({2, 3}), {3}); }, {"For 'broadcast_to'", "(2, 3)", "(3,)"});
  expect_error(ErrorKind::Value, [] { ops::broadcast_to(ones({1}), {-1}); }, {"For 'broadcast_to'", "negative"});
}

TEST(ShapeOps, BroadcastToGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::broadcast_to(x, {2, 3, 4})); }), {rnd({3, 1}, 4)});
  expect_grads(unary([](const Tensor& x) { return ops::broadcast_to(x, {2, 3}) * ops::broadcast_to(x, {2, 3}); }),
               {rnd({3}, 5)});
}

// ---- squeeze / expand_dims --------------------------------------------------------------------------------

TEST(ShapeOps, SqueezeValuesAndView) {
  const Tensor x = seq({1, 3, 1});
  const Tensor all = ops::squeeze(x);
  expect_tensor(all, {3}, {0, 1, 2});
  EXPECT_EQ(all.raw_data(), x.raw_data()) << "squeeze should be a view";
  expect_tensor(ops::squeeze(x, -1), {1, 3}, {0, 1, 2});
  expect_tensor(ops::squeeze(x, {0, -1}), {3}, {0, 1, 2});
  expect_tensor(ops::squeeze(seq({2, 3})), {2, 3}, {0, 1, 2, 3, 4, 5});
  expect_tensor(ops::squeeze(seq({1, 1})), {}, {0});
}

TEST(ShapeOps, SqueezeErrors) {
  expect_error(ErrorKind::Shape, [] { ops::squeeze(ones({1, 3, 1}), 1); }, {"For 'squeeze'", "axis 1", "(1, 3, 1)"});
  expect_error(ErrorKind::Shape, [] { ops::squeeze(ones({1, 3, 1}), 3); }, {"For 'squeeze'", "3"});
  expect_error(ErrorKind::Shape, [] { ops::squeeze(ones({1, 3, 1}), -4); }, {"For 'squeeze'", "-4"});
  expect_error(ErrorKind::Value, [] { ops::squeeze(ones({1, 3, 1}), {0, -3}); }, {"For 'squeeze'", "more than once"});
  expect_error(ErrorKind::Shape, [] { ops::squeeze(scalar(1.0), 0); }, {"For 'squeeze'", "()"});
}

TEST(ShapeOps, ExpandDimsValuesAndView) {
  const Tensor x = seq({2, 3});
  const Tensor y = ops::expand_dims(x, 0);
  expect_tensor(y, {1, 2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(y.raw_data(), x.raw_data()) << "expand_dims should be a view";
  EXPECT_EQ(ops::expand_dims(x, -1).shape(), (Shape{2, 3, 1}));
  EXPECT_EQ(ops::expand_dims(x, 1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(ops::expand_dims(x, {0, 3}).shape(), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(ops::expand_dims(x, {1, -1}).shape(), (Shape{2, 1, 3, 1}));
  EXPECT_EQ(ops::expand_dims(scalar(1.0), 0).shape(), (Shape{1}));
}

TEST(ShapeOps, ExpandDimsErrors) {
  expect_error(ErrorKind::Shape, [] { ops::expand_dims(ones({2, 3}), 3); }, {"For 'expand_dims'", "3"});
  expect_error(ErrorKind::Shape, [] { ops::expand_dims(ones({2, 3}), -4); }, {"For 'expand_dims'", "-4"});
  expect_error(ErrorKind::Value, [] { ops::expand_dims(ones({2, 3}), {0, -4}); }, {"For 'expand_dims'", "more than once"});
  expect_error(ErrorKind::Value, [] { ops::expand_dims(ones({2, 3}), Axis()); }, {"For 'expand_dims'", "axis"});
}

TEST(ShapeOps, SqueezeExpandDimsGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::squeeze(x)); }), {rnd({1, 3, 1}, 6)});
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::squeeze(x, -1)); }), {rnd({2, 1}, 7)});
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::expand_dims(x, {0, -1})); }), {rnd({2, 3}, 8)});
}

// ---- concat / stack ---------------------------------------------------------------------------------------

TEST(ShapeOps, ConcatValues) {
  const Tensor a = seq({2, 3});
  const Tensor b = seq({2, 2}) + 100.0;
  const std::vector<double> expect = {0, 1, 2, 100, 101, 3, 4, 5, 102, 103};
  expect_tensor(ops::concat({a, b}, 1), {2, 5}, expect);
  expect_tensor(ops::concat({a, b}, -1), {2, 5}, expect);
  expect_tensor(ops::concat({a, seq({1, 3})}, 0), {3, 3}, {0, 1, 2, 3, 4, 5, 0, 1, 2});
  expect_tensor(ops::concat({seq({2})}, 0), {2}, {0, 1});
  // Mixed dtypes promote (int32 + float32 -> float32); bools stay bool.
  const Tensor m = ops::concat({tensor_i32({1, 2}, {2}), tensor({0.5}, {1})}, 0);
  EXPECT_EQ(m.dtype(), DType::Float32);
  expect_tensor(m, {3}, {1, 2, 0.5});
  const Tensor bools = ops::concat({tensor_bool({true}, {1}), tensor_bool({false, true}, {2})}, 0);
  EXPECT_EQ(bools.dtype(), DType::Bool);
  expect_tensor(bools, {3}, {1, 0, 1});
}

TEST(ShapeOps, ConcatErrors) {
  expect_error(ErrorKind::Shape, [] { ops::concat({ones({2, 3}), ones({3, 2})}, 1); },
               {"For 'concat'", "(2, 3)", "(3, 2)"});
  expect_error(ErrorKind::Shape, [] { ops::concat({ones({2, 3}), ones({2})}, 0); }, {"For 'concat'", "(2,)"});
  expect_error(ErrorKind::Shape, [] { ops::concat({ones({2, 3}), ones({2, 3})}, 2); }, {"For 'concat'", "2"});
  expect_error(ErrorKind::Shape, [] { ops::concat({scalar(1.0), scalar(2.0)}, 0); }, {"For 'concat'", "0-d"});
  expect_error(ErrorKind::Value, [] { ops::concat({}, 0); }, {"For 'concat'", "empty"});
}

TEST(ShapeOps, ConcatGrads) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    return ops::square(ops::concat({a[0], a[1], a[0]}, -1));
  };
  expect_grads(f, {rnd({2, 3}, 9), rnd({2, 2}, 10)});
  const Fn g = [](const std::vector<Tensor>& a) -> Value { return ops::concat({a[0] * a[1], a[1]}, 0); };
  expect_grads(g, {rnd({1, 3}, 11), rnd({2, 3}, 12)});
}

TEST(ShapeOps, StackValues) {
  const Tensor a = seq({2, 3});
  const Tensor b = seq({2, 3}) + 10.0;
  expect_tensor(ops::stack({a, b}, 0), {2, 2, 3}, {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15});
  expect_tensor(ops::stack({a, b}, 1), {2, 2, 3}, {0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15});
  expect_tensor(ops::stack({a, b}, -1), {2, 3, 2}, {0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15});
  expect_tensor(ops::stack({scalar(1.0), scalar(2.0), scalar(3.0)}, 0), {3}, {1, 2, 3});
}

TEST(ShapeOps, StackErrors) {
  expect_error(ErrorKind::Shape, [] { ops::stack({ones({2, 3}), ones({3, 2})}, 0); }, {"For 'stack'", "(2, 3)", "(3, 2)"});
  expect_error(ErrorKind::Shape, [] { ops::stack({ones({2, 3}), ones({2, 3})}, 3); }, {"For 'stack'", "3"});
  expect_error(ErrorKind::Shape, [] { ops::stack({ones({2, 3}), ones({2, 3})}, -4); }, {"For 'stack'", "-4"});
}

TEST(ShapeOps, StackGrads) {
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return ops::square(ops::stack({a[0], a[1], a[0]}, 1)); };
  expect_grads(f, {rnd({2, 3}, 13), rnd({2, 3}, 14)});
  const Fn g = [](const std::vector<Tensor>& a) -> Value { return ops::stack({a[0] * a[1], a[1]}, -1); };
  expect_grads(g, {rnd({3}, 15), rnd({3}, 16)});
}

// ---- tile -------------------------------------------------------------------------------------------------

TEST(ShapeOps, TileValues) {
  const Tensor x = tensor({1, 2, 3, 4}, {2, 2}, DType::Float64);
  expect_tensor(ops::tile(x, {2, 3}), {4, 6},
                {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4});
  // Fewer multiples than axes: NumPy pads the multiples with leading 1s.
  expect_tensor(ops::tile(x, {2}), {2, 4}, {1, 2, 1, 2, 3, 4, 3, 4});
  // More multiples than axes: x gains leading axes.
  expect_tensor(ops::tile(x, {2, 1, 1}), {2, 2, 2}, {1, 2, 3, 4, 1, 2, 3, 4});
  expect_tensor(ops::tile(tensor_i32({7, 8}, {2}), {0}), {0}, {});
  expect_error(ErrorKind::Value, [] { ops::tile(ones({2}), {-1}); }, {"For 'tile'", "multiples"});
}

TEST(ShapeOps, TileGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::tile(x, {2, 3})); }), {rnd({2, 2}, 17)});
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::tile(x, {3, 1, 2})); }), {rnd({2, 3}, 18)});
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::tile(x, {2})); }), {rnd({2, 3}, 19)});
}

// ---- flip -------------------------------------------------------------------------------------------------

TEST(ShapeOps, FlipValues) {
  const Tensor x = seq({2, 3});
  expect_tensor(ops::flip(x, 1), {2, 3}, {2, 1, 0, 5, 4, 3});
  expect_tensor(ops::flip(x, -2), {2, 3}, {3, 4, 5, 0, 1, 2});
  expect_tensor(ops::flip(x), {2, 3}, {5, 4, 3, 2, 1, 0});
  expect_tensor(ops::flip(x, {0, 1}), {2, 3}, {5, 4, 3, 2, 1, 0});
  expect_tensor(ops::flip(tensor_bool({true, false, false}, {3}), 0), {3}, {0, 0, 1});
  expect_tensor(ops::flip(scalar(3.0)), {}, {3});
  expect_error(ErrorKind::Shape, [] { ops::flip(ones({2, 3}), 2); }, {"For 'flip'", "2"});
}

TEST(ShapeOps, FlipGrads) {
  expect_grads(unary([](const Tensor& x) { return x * ops::flip(x, -1); }), {rnd({2, 3}, 20)});
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::flip(x)); }), {rnd({2, 3}, 21)});
}

// ---- pad --------------------------------------------------------------------------------------------------

TEST(ShapeOps, PadValues) {
  const Tensor x = tensor({1, 2, 3, 4}, {2, 2}, DType::Float64);
  expect_tensor(ops::pad(x, {{1, 0}, {0, 2}}, 9.0), {3, 4}, {9, 9, 9, 9, 1, 2, 9, 9, 3, 4, 9, 9});
  expect_tensor(ops::pad(x, {{0, 0}, {1, 1}}), {2, 4}, {0, 1, 2, 0, 0, 3, 4, 0});
  expect_tensor(ops::pad(tensor_i32({5}, {1}), {{2, 1}}, -1.0), {4}, {-1, -1, 5, -1});
  expect_tensor(ops::pad(scalar(2.0), {}), {}, {2});
}

TEST(ShapeOps, PadErrors) {
  expect_error(ErrorKind::Value, [] { ops::pad(ones({2, 2}), {{-1, 0}, {0, 0}}); }, {"For 'pad'", "negative"});
  expect_error(ErrorKind::Shape, [] { ops::pad(ones({2, 2}), {{1, 1}}); }, {"For 'pad'", "(2, 2)"});
  expect_error(ErrorKind::Value, [] { ops::pad(ones({2}), {{1, 1, 1}}); }, {"For 'pad'", "pair"});
}

TEST(ShapeOps, PadGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::pad(x, {{1, 0}, {0, 2}}, 0.5)); }),
               {rnd({2, 3}, 22)});
}

// ---- slice ------------------------------------------------------------------------------------------------

TEST(IndexOps, SliceValues) {
  const Tensor x = seq({3, 4});
  expect_tensor(ops::slice(x, {1, 1}, {2, -1}), {2, 3}, {5, 6, 7, 9, 10, 11});
  expect_tensor(ops::slice(x, {0, 2}, {3, 1}), {3, 1}, {2, 6, 10});
  expect_tensor(ops::slice(x, {3, 0}, {-1, 4}), {0, 4}, {});
  expect_tensor(ops::slice(seq({4}, DType::Int32), {1}, {2}), {2}, {1, 2});
}

TEST(IndexOps, SliceErrors) {
  expect_error(ErrorKind::Value, [] { ops::slice(ones({3, 4}), {1, 1}, {3, 1}); }, {"For 'slice'", "(3, 4)"});
  expect_error(ErrorKind::Value, [] { ops::slice(ones({3, 4}), {4, 0}, {-1, -1}); }, {"For 'slice'", "begin"});
  expect_error(ErrorKind::Value, [] { ops::slice(ones({3, 4}), {-1, 0}, {1, 1}); }, {"For 'slice'", "begin"});
  expect_error(ErrorKind::Value, [] { ops::slice(ones({3, 4}), {0, 0}, {-2, 1}); }, {"For 'slice'", "size"});
  expect_error(ErrorKind::Shape, [] { ops::slice(ones({3, 4}), {0}, {1}); }, {"For 'slice'", "(3, 4)"});
}

TEST(IndexOps, SliceGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::slice(x, {1, 0}, {2, -1})); }), {rnd({3, 4}, 23)});
}

// ---- strided_slice ----------------------------------------------------------------------------------------

TEST(IndexOps, StridedSliceLikePythonSlicing) {
  const Tensor x = seq({4, 5});
  struct Case {
    IntList begin, end, strides;
    Shape shape;
    std::vector<double> values;
  };
  // Expected values: [[x[r][c] for r in range(4)[b0:e0:s0] for c in range(5)[b1:e1:s1]]] in Python.
  const std::vector<Case> cases = {
      {{3, 0}, {0, 5}, {-1, 2}, {3, 3}, {15, 17, 19, 10, 12, 14, 5, 7, 9}},
      {{-1, -2}, {-100, -6}, {-1, -2}, {4, 2}, {18, 16, 13, 11, 8, 6, 3, 1}},
      {{1, -100}, {100, 100}, {2, 3}, {2, 2}, {5, 8, 15, 18}},
      {{0, 4}, {4, 0}, {1, -1}, {4, 4}, {4, 3, 2, 1, 9, 8, 7, 6, 14, 13, 12, 11, 19, 18, 17, 16}},
      {{-3, 1}, {-1, 4}, {1, 1}, {2, 3}, {6, 7, 8, 11, 12, 13}},
      {{5, 0}, {-6, 5}, {-2, 1}, {2, 5}, {15, 16, 17, 18, 19, 5, 6, 7, 8, 9}},
      // Lists shorter than the rank: the remaining axes are taken whole.
      {{1}, {3}, {1}, {2, 5}, {5, 6, 7, 8, 9, 10, 11, 12, 13, 14}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(attr_value_str(AttrValue(c.begin)) + attr_value_str(AttrValue(c.end)) +
                 attr_value_str(AttrValue(c.strides)));
    expect_tensor(ops::strided_slice(x, c.begin, c.end, c.strides), c.shape, c.values);
  }
  // 1-D: list(range(7))[b:e:s]
  const Tensor v = seq({7}, DType::Int32);
  expect_tensor(ops::strided_slice(v, {-2}, {-8}, {-1}), {6}, {5, 4, 3, 2, 1, 0});
  expect_tensor(ops::strided_slice(v, {10}, {-10}, {-3}), {3}, {6, 3, 0});
  expect_tensor(ops::strided_slice(v, {-10}, {10}, {4}), {2}, {0, 4});
  expect_tensor(ops::strided_slice(v, {2}, {2}, {1}), {0}, {});
  expect_tensor(ops::strided_slice(v, {6}, {0}, {-2}), {3}, {6, 4, 2});
  expect_tensor(ops::strided_slice(v, {0}, {7}, {10}), {1}, {0});
  expect_tensor(ops::strided_slice(v, {-1}, {-1}, {-1}), {0}, {});
  expect_tensor(ops::strided_slice(v, {INT64_MAX}, {INT64_MIN}, {INT64_MIN}), {1}, {6});
}

TEST(IndexOps, StridedSliceLargeMatchesReference) {
  const Tensor x = seq({40, 30, 50}, DType::Float32);
  const Tensor y = ops::strided_slice(x, {-1, 2, 1}, {-41, 29, 50}, {-3, 2, 1});
  ASSERT_EQ(y.shape(), (Shape{14, 14, 49}));
  const Nd xn(x), yn(y);
  bool ok = true;
  for_each_index(y.shape(), [&](const std::vector<int64_t>& i) {
    ok = ok && yn.at(i) == xn.at({39 - 3 * i[0], 2 + 2 * i[1], 1 + i[2]});
  });
  EXPECT_TRUE(ok);
}

TEST(IndexOps, StridedSliceErrors) {
  expect_error(ErrorKind::Value, [] { ops::strided_slice(ones({4}), {0}, {4}, {0}); }, {"For 'strided_slice'", "strides"});
  expect_error(ErrorKind::Value, [] { ops::strided_slice(ones({4, 4}), {0, 0}, {4}, {1, 1}); },
               {"For 'strided_slice'", "same length"});
  expect_error(ErrorKind::Shape, [] { ops::strided_slice(ones({4}), {0, 0}, {4, 4}, {1, 1}); },
               {"For 'strided_slice'", "(4,)"});
}

TEST(IndexOps, StridedSliceGrads) {
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::strided_slice(x, {3, 0}, {0, 5}, {-1, 2})); }),
               {rnd({4, 5}, 24)});
  expect_grads(unary([](const Tensor& x) { return ops::square(ops::strided_slice(x, {-1}, {-100}, {-2})); }),
               {rnd({5, 2}, 25)});
}

TEST(IndexOps, StridedSliceGradOp) {
  // Zeros of `shape` with dout written where x[3:0:-1, 0:5:2] reads.
  const Tensor dout = seq({3, 3}) + 1.0;
  const Attrs attrs = {{"shape", IntList{4, 5}}, {"begin", IntList{3, 0}}, {"end", IntList{0, 5}},
                       {"strides", IntList{-1, 2}}};
  expect_tensor(call_op("strided_slice_grad", {dout}, attrs), {4, 5},
                {0, 0, 0, 0, 0, 7, 0, 8, 0, 9, 4, 0, 5, 0, 6, 1, 0, 2, 0, 3});
  expect_grads([attrs](const std::vector<Tensor>& a) -> Value {
    return ops::square(call_op("strided_slice_grad", {a[0]}, attrs));
  }, {rnd({3, 3}, 26)});
  expect_error(ErrorKind::Shape, [&] { call_op("strided_slice_grad", {ones({2, 3})}, attrs); },
               {"For 'strided_slice_grad'", "(2, 3)", "(3, 3)"});
}

// ---- gather -----------------------------------------------------------------------------------------------

TEST(IndexOps, GatherValues) {
  const Tensor x = seq({3, 4});
  const Tensor idx = tensor_i32({0, 2, 3, 0}, {2, 2});
  expect_tensor(ops::gather(x, idx, 1), {3, 2, 2}, {0, 2, 3, 0, 4, 6, 7, 4, 8, 10, 11, 8});
  expect_tensor(ops::gather(x, idx, -1), {3, 2, 2}, {0, 2, 3, 0, 4, 6, 7, 4, 8, 10, 11, 8});
  expect_tensor(ops::gather(x, tensor_i32({2, 0}, {2}), 0), {2, 4}, {8, 9, 10, 11, 0, 1, 2, 3});
  // A 0-d index drops the axis; negative indices count from the end.
  expect_tensor(ops::gather(x, tensor_i32({1}, {}), 0), {4}, {4, 5, 6, 7});
  expect_tensor(ops::gather(x, tensor_i32({-1}, {}), 1), {3}, {3, 7, 11});
  expect_tensor(ops::gather(x, tensor_i32({-3, 2}, {2}), 0), {2, 4}, {0, 1, 2, 3, 8, 9, 10, 11});
  expect_tensor(ops::gather(tensor_bool({true, false}, {2}), tensor_i32({1, 1, 0}, {3}), 0), {3}, {0, 0, 1});
  expect_tensor(ops::gather(x, tensor_i32({}, {0}), 0), {0, 4}, {});
}

TEST(IndexOps, GatherErrors) {
  expect_error(ErrorKind::DType, [] { ops::gather(ones({3, 4}), ones({2}), 0); }, {"For 'gather'", "indices", "float32"});
  expect_error(ErrorKind::Value, [] { ops::gather(ones({3, 4}), tensor_i32({0, 4}, {2}), 1); },
               {"For 'gather'", "index 4", "(3, 4)"});
  expect_error(ErrorKind::Value, [] { ops::gather(ones({3, 4}), tensor_i32({-4}, {1}), 0); },
               {"For 'gather'", "index -4"});
  expect_error(ErrorKind::Shape, [] { ops::gather(ones({3, 4}), tensor_i32({0}, {1}), 2); }, {"For 'gather'", "2"});
  expect_error(ErrorKind::Shape, [] { ops::gather(scalar(1.0), tensor_i32({0}, {1}), 0); }, {"For 'gather'", "()"});
}

TEST(IndexOps, GatherGrads) {
  const Tensor idx = tensor_i32({0, 2, 3, 0}, {2, 2});  // index 0 repeats: its gradient accumulates
  expect_grads([idx](const std::vector<Tensor>& a) -> Value { return ops::square(ops::gather(a[0], idx, 1)); },
               {rnd({3, 4}, 27)});
  expect_grads([](const std::vector<Tensor>& a) -> Value {
    return ops::square(ops::gather(a[0], tensor_i32({-1, 1, 1}, {3}), 0));
  }, {rnd({3, 2}, 28)});
  expect_grads([](const std::vector<Tensor>& a) -> Value {
    return ops::square(ops::gather(a[0], tensor_i32({1}, {}), -1));
  }, {rnd({2, 3}, 29)});
  // d/dx sum(gather(x, [1, 1, 0])) counts each index.
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    return ops::sum(ops::gather(a[0], tensor_i32({1, 1, 0}, {3}), 0));
  };
  expect_tensor(grad(f)({zeros({3}, DType::Float64)}).tensor(), {3}, {1, 2, 0});
}

TEST(IndexOps, GatherGradOp) {
  // Scatter-add of dout (3, 2, 2) into zeros (3, 4) along axis 1.
  const Tensor dout = seq({3, 2, 2}) + 1.0;
  const Tensor idx = tensor_i32({0, 2, 3, 0}, {2, 2});
  const Attrs attrs = {{"axis", int64_t{1}}, {"dim_size", int64_t{4}}};
  expect_tensor(call_op("gather_grad", {dout, idx}, attrs), {3, 4}, {5, 0, 2, 3, 13, 0, 6, 7, 21, 0, 10, 11});
  expect_tensor(call_op("gather_grad", {ones({2}, DType::Float64), tensor_i32({1, -2}, {2})},
                        {{"axis", int64_t{0}}, {"dim_size", int64_t{3}}}),
                {3}, {0, 2, 0});
  expect_grads([idx, attrs](const std::vector<Tensor>& a) -> Value {
    return ops::square(call_op("gather_grad", {a[0], idx}, attrs));
  }, {rnd({3, 2, 2}, 30)});
  expect_error(ErrorKind::Value, [&] { call_op("gather_grad", {dout, tensor_i32({0, 2, 4, 0}, {2, 2})}, attrs); },
               {"For 'gather_grad'", "index 4"});
  expect_error(ErrorKind::Shape, [&] { call_op("gather_grad", {dout, tensor_i32({0, 1, 2}, {3})}, attrs); },
               {"For 'gather_grad'", "(3, 2, 2)", "(3,)"});
  expect_error(ErrorKind::DType, [&] { call_op("gather_grad", {dout, ones({2, 2})}, attrs); },
               {"For 'gather_grad'", "indices"});
}

TEST(IndexOps, GatherLargeMatchesReference) {
  // Large rows (memcpy path across threads) and a scatter-add with many repeats, both axes.
  const Tensor x = rand({64, 300}, 31);
  std::vector<int32_t> iv;
  for (int i = 0; i < 500; ++i) iv.push_back((i * 37) % 64 - 32);
  const Tensor idx = tensor_i32(iv, {500});
  const Tensor y = ops::gather(x, idx, 0);
  const Nd xn(x), yn(y);
  bool ok = true;
  for_each_index(y.shape(), [&](const std::vector<int64_t>& i) {
    const int64_t r = iv[static_cast<size_t>(i[0])] < 0 ? iv[static_cast<size_t>(i[0])] + 64 : iv[static_cast<size_t>(i[0])];
    ok = ok && yn.at(i) == xn.at({r, i[1]});
  });
  EXPECT_TRUE(ok);
  const Tensor dout = ones({500, 300}, DType::Float64);
  const Tensor dx = call_op("gather_grad", {dout, idx}, {{"axis", int64_t{0}}, {"dim_size", int64_t{64}}});
  std::vector<double> counts(64, 0.0);
  for (int32_t v : iv) counts[static_cast<size_t>(v < 0 ? v + 64 : v)] += 1.0;
  const Nd dn(dx);
  ok = true;
  for_each_index(dx.shape(), [&](const std::vector<int64_t>& i) { ok = ok && dn.at(i) == counts[static_cast<size_t>(i[0])]; });
  EXPECT_TRUE(ok);
}

// ---- a composition at second order -----------------------------------------------------------------------

TEST(ShapeOps, ComposedSecondOrder) {
  // Every shape op in one function, differentiated twice.
  const Fn f = [](const std::vector<Tensor>& a) -> Value {
    const Tensor& x = a[0];
    Tensor t = ops::transpose(ops::reshape(x, {3, 2}), {1, 0});                   // (2, 3)
    t = ops::concat({t, ops::flip(t, 0)}, 1);                                      // (2, 6)
    t = ops::pad(ops::tile(ops::expand_dims(t, 0), {2, 1, 1}), {{0, 0}, {1, 1}, {0, 0}});  // (2, 4, 6)
    t = ops::stack({ops::squeeze(ops::slice(t, {0, 0, 0}, {1, -1, -1}), 0), ops::broadcast_to(x, {4, 6})}, 0);
    t = ops::strided_slice(t, {1, -1}, {-3, 0}, {-1, -2});
    return ops::sum(ops::square(ops::gather(t, tensor_i32({0, 2, 2}, {3}), -1)) * 0.5);
  };
  expect_grads(f, {rnd({6}, 32)});
}
