// A user primitive for the tests that register their own: float64, elementwise, forward from a scalar function.
#pragma once
#include <string>

#include "bprop/bprop.h"

namespace primtest {

/// A PrimitiveDef named `name` with one input x and y[i] = f(x[i]) in float64; the caller sets its bprop.
inline bprop::PrimitiveDef elementwise_float64(const std::string& name, double (*f)(double)) {
  using namespace bprop;
  PrimitiveDef def;
  def.name = name;
  def.inputs = {"x"};
  def.infer_shape = [](const InferCtx& c) { return c.input(0).shape(); };
  def.infer_dtype = [](const InferCtx& c) { return c.input(0).dtype(); };
  def.forward = [f](KernelCtx& c) {
    const double* x = c.inputs[0].data<double>();
    double* y = c.out.data<double>();
    for (int64_t i = 0; i < c.out.numel(); ++i) y[i] = f(x[i]);
  };
  return def;
}

}  // namespace primtest
