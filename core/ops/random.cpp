// Random tensors as ops, so that a traced function draws fresh numbers at every replay instead of freezing
// them into the graph: random_uniform / random_normal take the seed as a 0-d tensor (an argument of a jitted
// function, or state it updates), dropout_mask a call counter. The numbers are those of randn / rand (the
// Random stream of bprop/random.h) for the same seed, in both builds.
#include <cmath>

#include "bprop/random.h"
#include "ops/op_helpers.h"

namespace bprop {
namespace {

using namespace opdef;

// The seed held by a 0-d key tensor: a whole number in [0, 2^53) (float64 holds every such integer exactly).
uint64_t seed_of(const Tensor& key, const std::string& op) {
  double v = 0.0;
  visit_storage_dtype(key.dtype(), [&]<typename T>() { v = convert_element<double>(key.data<T>()[0]); });
  if (!(v >= 0.0 && v < 9007199254740992.0) || std::floor(v) != v) {
    throw ValueError("For '" + op + "', the key must hold a whole number in [0, 2^53), got " + std::to_string(v));
  }
  return static_cast<uint64_t>(v);
}

Shape attr_shape(const InferCtx& c) {
  const IntList s = c.attrs.get_ints("shape");
  for (int64_t d : s) {
    if (d < 0) c.shape_error("'shape' has a negative dimension " + std::to_string(d));
  }
  return Shape(s.begin(), s.end());
}

DType float_attr_dtype(const InferCtx& c) {
  const DType dt = c.attrs.get_dtype("dtype");
  if (!is_float(dt)) c.dtype_error(std::string("'dtype' must be float32 or float64, got ") + dtype_name(dt));
  return dt;
}

void require_scalar_key(const InferCtx& c) {
  if (c.input(0).dim() != 0) c.shape_error("the key must be a 0-d tensor, got shape " + shape_str(c.input(0).shape()));
  if (c.input(0).dtype() == DType::Bool) c.dtype_error("the key must be float or int32, got bool");
}

template <typename Draw>
void fill(Tensor& out, Draw draw) {
  visit_float(out.dtype(), [&]<typename T>() {
    T* p = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = static_cast<T>(draw());
  });
}

OpDef random_def(const char* name, std::vector<AttrSpec> extra, KernelFn kernel) {
  OpDef op;
  op.name = name;
  op.family = "random";
  op.inputs = {{"key"}};
  op.attrs = {{"shape", AttrKind::IntList, std::monostate{}, true}, {"dtype", AttrKind::DType, std::string("float32")}};
  for (auto& a : extra) op.attrs.push_back(std::move(a));
  op.infer_shape = [](const InferCtx& c) {
    require_scalar_key(c);
    return attr_shape(c);
  };
  op.infer_dtype = float_attr_dtype;
  op.cpu(std::move(kernel));
  op.no_grad = true;
  return op;
}

}  // namespace

void register_random_ops(Registry& r) {
  // random_uniform(key): uniform in [low, high), the numbers of rand(shape, seed = key, low, high)
  r.add(random_def("random_uniform", {{"low", AttrKind::Float, 0.0}, {"high", AttrKind::Float, 1.0}}, [](KernelCtx& c) {
    Random rng(seed_of(c.inputs[0], "random_uniform"));
    const double low = c.attrs.get_float("low"), high = c.attrs.get_float("high");
    fill(c.out, [&] { return low + (high - low) * rng.uniform(); });
  }));
  // random_normal(key): standard normal, the numbers of randn(shape, seed = key)
  r.add(random_def("random_normal", {}, [](KernelCtx& c) {
    Random rng(seed_of(c.inputs[0], "random_normal"));
    fill(c.out, [&] { return rng.normal(); });
  }));
  // dropout_mask(counter): 0 with probability p, else 1 / (1 - p); the stream of call `counter` of a Dropout
  // cell seeded `seed` (nn::Dropout counts its calls in a state tensor, so a jitted call advances it too)
  r.add(random_def("dropout_mask", {{"seed", AttrKind::Int, std::monostate{}, true}, {"p", AttrKind::Float, 0.5}},
                   [](KernelCtx& c) {
                     const uint64_t seed = static_cast<uint64_t>(c.attrs.get_int("seed"));
                     const uint64_t call = seed_of(c.inputs[0], "dropout_mask");
                     Random rng(seed + 0x9E3779B97F4A7C15ull * call);
                     const double p = c.attrs.get_float("p"), keep_scale = 1.0 / (1.0 - p);
                     fill(c.out, [&] { return rng.uniform() < p ? 0.0 : keep_scale; });
                   }));
}

}  // namespace bprop
