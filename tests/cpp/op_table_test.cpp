// Every registered op: complete definition, a row in the op table, and checked gradients (first and second
// order, float64 finite differences).
#include <gtest/gtest.h>

#include <set>

#include "bprop/bprop.h"
#include "bprop/op_table.h"

using namespace bprop;

namespace bprop {
// Test names and failure output show the row's name rather than its bytes.
void PrintTo(const OpCheckRow& row, std::ostream* os) { *os << row.name; }
}  // namespace bprop

TEST(Registry, EveryOpIsCompleteAndInTheTable) {
  std::set<std::string> in_table;
  for (const auto& row : op_check_table()) in_table.insert(row.op);
  for (const auto& name : registry().names()) {
    const OpDef& op = registry().get(name);
    if (op.family == "user") continue;  // primitives registered by tests at run time
    SCOPED_TRACE(name);
    EXPECT_TRUE(op.infer_shape) << name << " lacks infer_shape";
    EXPECT_TRUE(op.infer_dtype) << name << " lacks infer_dtype";
    EXPECT_TRUE(op.kernels[Backend::CPU.id]) << name << " lacks a CPU kernel";
    EXPECT_TRUE(op.bprop || op.no_grad) << name << " has neither a bprop nor a no-grad mark";
    EXPECT_TRUE(in_table.count(name)) << name << " is missing from the op table";
    if (!op.no_grad) {
      bool second = false;
      for (const auto& row : op_check_table()) second |= row.op == name && row.first_order && row.second_order;
      EXPECT_TRUE(second) << name << " is differentiable but no table row checks it to second order";
    }
  }
}

TEST(Registry, EveryTableRowNamesARegisteredOp) {
  std::set<std::string> names;
  for (const auto& row : op_check_table()) {
    EXPECT_TRUE(registry().find(row.op)) << row.name << " names unknown op " << row.op;
    EXPECT_TRUE(names.insert(row.name).second) << "duplicate row " << row.name;
  }
}

TEST(Registry, CatalogueIsRegistered) {
  const char* catalogue[] = {
      "neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "square", "reciprocal", "sin", "cos",
      "tan", "tanh", "sigmoid", "relu", "silu", "softplus", "erf", "floor", "ceil", "round", "leaky_relu", "elu",
      "gelu", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "squared_difference", "equal",
      "not_equal", "greater", "greater_equal", "less", "less_equal", "where", "clamp", "sum", "mean", "prod", "amax",
      "amin", "logsumexp", "var", "std", "argmax", "argmin", "reshape", "transpose", "broadcast_to", "squeeze",
      "expand_dims", "concat", "stack", "slice", "strided_slice", "gather", "pad", "tile", "flip", "matmul",
      "softmax", "log_softmax", "cross_entropy", "nll_loss", "binary_cross_entropy_with_logits",
      "binary_cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "stop_gradient", "identity", "cast",
      "conv2d", "max_pool2d", "avg_pool2d", "batch_norm", "layer_norm", "embedding"};
  for (const char* name : catalogue) EXPECT_TRUE(registry().find(name)) << name << " is not registered";
}

class OpTable : public ::testing::TestWithParam<OpCheckRow> {};

TEST_P(OpTable, Gradients) {
  const OpCheckRow& row = GetParam();
  const std::vector<Tensor> inputs = make_inputs(row);
  const Fn fn = [&row](const std::vector<Tensor>& in) -> Value { return call_op(row.op, in, row.attrs); };
  const Tensor out = fn(inputs).tensor();  // the forward always runs
  EXPECT_TRUE(out.defined());
  if (row.first_order) {
    const CheckResult r = gradcheck(fn, inputs);
    EXPECT_TRUE(r.ok) << row.name << ": " << r.message;
  }
  if (row.second_order) {
    const CheckResult r = gradgradcheck(fn, inputs);
    EXPECT_TRUE(r.ok) << row.name << ": " << r.message;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpTable, ::testing::ValuesIn(op_check_table()),
                         [](const ::testing::TestParamInfo<OpCheckRow>& info) { return info.param.name; });
