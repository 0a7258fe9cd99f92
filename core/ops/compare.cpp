// Comparisons -> bool, not differentiable: equal not_equal greater greater_equal less less_equal.
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

// Compares in the promoted dtype of the inputs (f captureless), with broadcasting (cpu::broadcast_binary).
template <typename F>
KernelFn compare_kernel(F) {
  return [](KernelCtx& c) {
    DType common = promote_types(c.inputs[0].dtype(), c.inputs[1].dtype());
    const Tensor a = cpu::as_dtype(c.inputs[0], common);
    const Tensor b = cpu::as_dtype(c.inputs[1], common);
    ElementFn fn = nullptr;
    visit_dtype(common, [&]<typename T>() { fn = &cpu::binary_array<F, T, true, bool>; });
    cpu::broadcast_binary(fn, a.raw_data(), a.shape(), b.raw_data(), b.shape(), dtype_size(common), c.out.raw_data(),
                          c.out_shape, sizeof(bool));
  };
}

}  // namespace

void register_compare_ops(Registry& r) {
  const std::vector<std::pair<const char*, KernelFn>> table = {
      {"equal", compare_kernel([](auto x, auto y) { return x == y; })},
      {"not_equal", compare_kernel([](auto x, auto y) { return x != y; })},
      {"greater", compare_kernel([](auto x, auto y) { return x > y; })},
      {"greater_equal", compare_kernel([](auto x, auto y) { return x >= y; })},
      {"less", compare_kernel([](auto x, auto y) { return x < y; })},
      {"less_equal", compare_kernel([](auto x, auto y) { return x <= y; })},
  };
  for (const auto& [name, kernel] : table) {
    OpDef op;
    op.name = name;
    op.family = "compare";
    op.inputs = {{"x"}, {"y"}};
    op.infer_shape = broadcast_shape;
    op.infer_dtype = bool_dtype;
    op.cpu(kernel);
    op.no_grad = true;
    r.add(std::move(op));
  }
}

}  // namespace bprop
