// Comparisons -> bool, not differentiable: equal not_equal greater greater_equal less less_equal.
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

// out[i] = F()(a[i], b[i]) as bool, for a and b of type T (an array function, ElementFn, with a bool output).
template <typename F, typename T>
void compare_array(const ElementOperand* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in[0].data);
  const T* b = static_cast<const T*>(in[1].data);
  bool* y = static_cast<bool*>(out);
  const F f{};
  if (in[0].scalar) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<bool>(f(av, b[i]));
  } else if (in[1].scalar) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<bool>(f(a[i], bv));
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<bool>(f(a[i], b[i]));
  }
}

// Compares in the promoted dtype of the inputs (f captureless), with broadcasting (cpu::broadcast_binary).
template <typename F>
KernelFn compare_kernel(F) {
  return [](KernelCtx& c) {
    DType common = promote_types(c.inputs[0].dtype(), c.inputs[1].dtype());
    const Tensor a = cpu::as_dtype(c.inputs[0], common);
    const Tensor b = cpu::as_dtype(c.inputs[1], common);
    ElementFn fn = nullptr;
    visit_dtype(common, [&]<typename T>() { fn = &compare_array<F, T>; });
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
