// Tensors: creation, dtypes and promotion, printing, the cross-platform random stream.
#include <gtest/gtest.h>

#include "bprop/bprop.h"

using namespace bprop;

TEST(Tensor, CreationAndConversion) {
  const Tensor t = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(scalar(3.5).dim(), 0);
  EXPECT_DOUBLE_EQ(scalar(3.5).item(), 3.5);
  EXPECT_EQ(arange(0, 5, 2).to_vector<double>(), (std::vector<double>{0, 2, 4}));
  EXPECT_EQ(linspace(0, 1, 5, DType::Float64).to_vector<double>(), (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(eye(2).to_vector<double>(), (std::vector<double>{1, 0, 0, 1}));
  EXPECT_EQ(full({2}, 7, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{7, 7}));
  EXPECT_THROW(tensor({1, 2, 3}, {2, 2}), ShapeError);
}

TEST(Tensor, StorageIsSharedByViews) {
  Tensor a = zeros({2, 2});
  Tensor v = a.view({4});
  v.data<float>()[3] = 5;
  EXPECT_EQ(a.to_vector<double>()[3], 5.0);
  Tensor c = a.clone();
  c.data<float>()[0] = 1;
  EXPECT_EQ(a.to_vector<double>()[0], 0.0);
}

TEST(Tensor, Promotion) {
  EXPECT_EQ(promote_types(DType::Int32, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::Float32, DType::Float64), DType::Float64);
  EXPECT_EQ(promote_types(DType::Bool, DType::Int32), DType::Int32);
  EXPECT_EQ((tensor_i32({1, 2}, {2}) + tensor_i32({3, 4}, {2})).dtype(), DType::Int32);
  EXPECT_EQ(ops::div(tensor_i32({1, 2}, {2}), tensor_i32({2, 4}, {2})).dtype(), DType::Float32);
  EXPECT_EQ(ops::div(tensor_i32({1, 2}, {2}), tensor_i32({2, 4}, {2})).to_vector<double>(),
            (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ((ones({2}) + ones({2}, DType::Float64)).dtype(), DType::Float64);
  EXPECT_EQ((tensor_i32({1}, {1}) * 1.5).dtype(), DType::Float32);
  EXPECT_EQ((ones({1}) * 2.0).dtype(), DType::Float32);  // a C++ number does not widen a float32 tensor
  EXPECT_EQ(ops::exp(tensor_i32({0}, {1})).dtype(), DType::Float32);
}

TEST(Tensor, Broadcasting) {
  const Tensor a = tensor({1, 2, 3}, {3, 1}), b = tensor({10, 20, 30, 40}, {1, 4});
  const Tensor c = a + b;
  EXPECT_EQ(c.shape(), (Shape{3, 4}));
  EXPECT_EQ(c.to_vector<double>()[5], 22.0);
  const Tensor r3 = ones({2, 3, 4}) * tensor({1, 2, 3, 4}, {4});
  EXPECT_EQ(r3.to_vector<double>()[7], 4.0);
  EXPECT_EQ(broadcast_shapes({5, 1, 3}, {4, 1}, "t"), (Shape{5, 4, 3}));
}

TEST(Tensor, Printing) {
  EXPECT_EQ(tensor({1, 2, 3, 4}, {2, 2}).to_string(), "Tensor(shape=(2, 2), dtype=float32, [[1, 2], [3, 4]])");
  EXPECT_EQ(scalar(1.5, DType::Float64).to_string(), "Tensor(shape=(), dtype=float64, 1.5)");
  EXPECT_EQ(tensor_bool({true, false}, {2}).to_string(), "Tensor(shape=(2,), dtype=bool, [true, false])");
  const std::string big = arange(0, 100).to_string();
  EXPECT_NE(big.find("0, 1, 2, ..., 97, 98, 99"), std::string::npos) << big;
}

TEST(Random, StreamIsFixed) {
  // Golden values: the WebAssembly build must print exactly these (tested there too).
  Random r(42);
  EXPECT_EQ(r.next_u64(), 1546998764402558742ull);
  const Tensor n = randn({4}, 1, DType::Float64);
  const Tensor u = rand({2}, 1, 0.0, 1.0, DType::Float64);
  EXPECT_EQ(n.to_vector<double>(),
            (std::vector<double>{-1.5452228371402945, -0.19951530557848959, -1.0136476397283942, 0.82440683748826737}));
  EXPECT_EQ(u.to_vector<double>(), (std::vector<double>{0.70292183315885048, 0.52043661993885693}));
  EXPECT_EQ(randn({4}, 1, DType::Float64).to_vector<double>(), n.to_vector<double>());  // same seed, same stream
  EXPECT_NE(randn({4}, 2, DType::Float64).to_vector<double>(), n.to_vector<double>());
  for (double v : u.to_vector<double>()) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(Random, NormalMomentsAreRight) {
  const std::vector<double> v = randn({20000}, 3, DType::Float64).to_vector<double>();
  double mean = 0, sq = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  for (double x : v) sq += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(sq / v.size(), 1.0, 0.03);
}
