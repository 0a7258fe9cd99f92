// vectors::case_outcome, the outcomes mode the fuzzer runs (docs/fuzzing.md): how a case ends, its expectations
// ignored: ok with the output's shape and dtype, a bprop error kind with its message, or "other".
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "bprop/registry.h"
#include "bprop/vectors.h"

using namespace bprop;
using namespace bprop::vectors;

namespace {

// The outcome of the only case of a file made from one case's JSON (without "name" and "expected").
CaseOutcome outcome_of(const std::string& case_fields) {
  const VectorFile f = parse(R"({"format": "bprop-vectors/1", "cases": [{"name": "c", "expected": {"error": "value"}, )" +
                                 case_fields + "}]}",
                             "outcomes.json");
  EXPECT_TRUE(f.ok()) << (f.errors.empty() ? "" : f.errors.front());
  if (f.cases.size() != 1) return {};
  return case_outcome(f.cases[0]);
}

const std::string kX = R"("inputs": {"x": {"shape": [2, 3], "dtype": "float32", "data": [1, 2, 3, 4, 5, 6]}})";

TEST(VectorOutcomes, OkGivesTheOutputsShapeAndDtypeWhateverTheExpectation) {
  CaseOutcome o = outcome_of(kX + R"(, "program": [["y", "sum", "x", {"axis": 1}]], "output": "y")");
  EXPECT_EQ(o.name, "c");
  EXPECT_EQ(o.outcome, "ok");
  EXPECT_TRUE(o.ok());
  EXPECT_EQ(o.shape, (Shape{2}));
  EXPECT_EQ(o.dtype, DType::Float32);
  EXPECT_EQ(o.message, "");

  o = outcome_of(kX + R"(, "dtype": "float64", "program": [["y", "argmax", "x", {"axis": 0}]], "output": "y")");
  EXPECT_EQ(o.outcome, "ok");
  EXPECT_EQ(o.shape, (Shape{3}));
  EXPECT_EQ(o.dtype, DType::Int32);
}

TEST(VectorOutcomes, WrtNamesRunTheFirstOrderGradientsToo) {
  CaseOutcome o = outcome_of(kX + R"(, "program": [["y", "exp", "x"]], "output": "y", "wrt": ["x"])");
  EXPECT_EQ(o.outcome, "ok");
  EXPECT_EQ(o.shape, (Shape{2, 3}));
  // the forward runs; differentiating an int32 output does not
  o = outcome_of(kX + R"(, "program": [["y", "argmax", "x"]], "output": "y", "wrt": ["x"])");
  EXPECT_EQ(o.outcome, "dtype");
  EXPECT_NE(o.message.find("grad"), std::string::npos) << o.message;
  o = outcome_of(kX + R"(, "program": [["y", "exp", "x"]], "output": "y", "wrt": ["x"],
                         "sens": {"shape": [3], "dtype": "float32", "data": [1, 1, 1]})");
  EXPECT_EQ(o.outcome, "shape");
}

TEST(VectorOutcomes, ErrorsGiveTheirKindNameAndMessage) {
  CaseOutcome o = outcome_of(kX + R"(, "program": [["y", "matmul", "x", "x"]], "output": "y")");
  EXPECT_EQ(o.outcome, "shape");
  EXPECT_NE(o.message.find("matmul"), std::string::npos) << o.message;
  o = outcome_of(kX + R"(, "program": [["y", "no_such_op", "x"]], "output": "y")");
  EXPECT_EQ(o.outcome, "unknown_op");
  o = outcome_of(kX + R"(, "program": [["y", "sum", "x", {"axis": 1.5}]], "output": "y")");
  EXPECT_EQ(o.outcome, "value");
  o = outcome_of(kX + R"(, "program": [["y", "broadcast_to", "x", {"shape": [140737488355328, 2, 3]}]], "output": "y")");
  EXPECT_EQ(o.outcome, "memory");
}

TEST(VectorOutcomes, AnExceptionThatIsNotABpropErrorIsOtherAndNotThrown) {
  PrimitiveDef def;
  def.name = "vector_outcomes_test_throws";
  def.inputs = {"x"};
  def.infer_shape = [](const InferCtx& c) { return c.input(0).shape(); };
  def.infer_dtype = [](const InferCtx& c) { return c.input(0).dtype(); };
  def.forward = [](KernelCtx&) { throw std::out_of_range("a kernel read past its input"); };
  def.bprop = [](const std::vector<Tensor>&, const Tensor&, const Tensor& dout) { return std::vector<Tensor>{dout}; };
  register_primitive(def);
  const CaseOutcome o = outcome_of(kX + R"(, "program": [["y", "vector_outcomes_test_throws", "x"]], "output": "y")");
  EXPECT_EQ(o.outcome, "other");
  EXPECT_EQ(o.message, "a kernel read past its input");
  EXPECT_FALSE(o.ok());
}

}  // namespace
