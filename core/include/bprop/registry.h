// The op registry: one OpDef per op holds everything about it (inputs, attributes, shape and dtype rules,
// kernels per backend, and the bprop), and the dispatcher that runs an op by name or by definition.
#pragma once
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bprop/attrs.h"
#include "bprop/tensor.h"

namespace bprop {

struct OpDef;

struct InputSpec {
  std::string name;
  bool optional = false;
};

/// What shape and dtype rules see: the op, its (validated) inputs and normalised attributes.
struct InferCtx {
  const OpDef& op;
  const std::vector<Tensor>& inputs;
  const Attrs& attrs;

  const Tensor& input(size_t i) const { return inputs[i]; }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i].defined(); }
  /// "For 'op', " — the prefix of every error message.
  std::string prefix() const;
  [[noreturn]] void shape_error(const std::string& what) const;
  [[noreturn]] void dtype_error(const std::string& what) const;
  [[noreturn]] void value_error(const std::string& what) const;
};

/// What a kernel sees: inputs, attributes and the output, allocated with the inferred shape and dtype on the
/// device the op runs on. A kernel may instead point `out` at an input's storage (reshape-like ops), never at new
/// shapes.
struct KernelCtx {
  const OpDef& op;
  const std::vector<Tensor>& inputs;
  const Attrs& attrs;
  const Shape& out_shape;
  DType out_dtype;
  Tensor& out;  // allocated unless the op sets allocates_output = false (then the kernel sets it)
  Device device{};  // where inputs and output live (a device kernel finds its stream from it)
};

/// What a bprop sees, MindSpore's convention: the op's inputs, its output `out` (undefined for an op declaring
/// bprop_reads_out = false), and the cotangent `dout`.
struct BpropCtx {
  const std::vector<Tensor>& inputs;
  const Tensor& out;
  const Tensor& dout;
  const Attrs& attrs;
  const std::vector<bool>& needs_grad;

  const Tensor& input(size_t i) const { return inputs[i]; }
  /// True when a gradient for input i is wanted (skip the work otherwise).
  bool needs(size_t i) const { return i < needs_grad.size() && needs_grad[i]; }
};

/// One operand of an elementwise array function: n contiguous elements, or one element repeated.
struct ElementOperand {
  const void* data;
  bool scalar;
};
/// An elementwise op's array function for one dtype: out[i] = f(in[0][i], in[1][i], ...) over n elements, every
/// operand and the output of that dtype. The op's eager kernel runs this same function wherever its operands
/// qualify (same dtype, each of the output's shape or one element), so a graph's fused loop calling it on tiles
/// gives the eager kernel's bits.
///
/// An op with attributes (leaky_relu's alpha, clamp's bounds) has its array functions take them as numbers after
/// the tensor operands: `num_params` one-element operands of type double whatever the dtype, whose values
/// `params(attrs, out)` gives. (A fused loop reads them once per graph, the eager kernel once per call.)
using ElementFn = void (*)(const ElementOperand* in, void* out, int64_t n);
constexpr int kMaxElementParams = 2;
struct ElementwiseDef {
  ElementFn f32 = nullptr;
  ElementFn f64 = nullptr;
  int num_params = 0;
  void (*params)(const Attrs& attrs, double* out) = nullptr;
  ElementFn fn(DType dt) const { return dt == DType::Float32 ? f32 : dt == DType::Float64 ? f64 : nullptr; }
  /// The function computing elements of dt: float16 and bfloat16 compute in float32, each tile widened on the way
  /// in and rounded on the way out (the op's eager half kernel and a half fused loop).
  ElementFn compute_fn(DType dt) const { return dt == DType::Float16 || dt == DType::BFloat16 ? f32 : fn(dt); }
  bool any() const { return f32 || f64; }
};

using InferShapeFn = std::function<Shape(const InferCtx&)>;
using InferDTypeFn = std::function<DType(const InferCtx&)>;
using KernelFn = std::function<void(KernelCtx&)>;
/// A CPU kernel that reads half operands itself (a fast path); returns false to decline, and then the call runs
/// the float32 kernel on widened copies.
using HalfKernelFn = std::function<bool(KernelCtx&)>;
/// Returns one gradient per input (undefined where not needed or not differentiable).
using BpropFn = std::function<std::vector<Tensor>(const BpropCtx&)>;

/// How automatic mixed precision (bprop/amp.h) treats an op's float inputs inside an autocast region.
enum class AmpClass {
  /// From the family: compute ops (unary, binary, activation, reduce, select, embedding, conv_pool, linalg) Follow,
  /// norms and losses Float32, everything else Keep. Registry::add resolves it.
  Default,
  /// Never cast (shape, indexing, comparison, casts, random numbers, optimizer updates).
  Keep,
  /// Runs in its inputs' dtype; O2 and O3 cast float32 inputs to the half dtype.
  Follow,
  /// The white list (matmul, conv): every level O1-O3 casts float32 inputs to the half dtype.
  Half,
  /// The black list (norms, softmax, losses): O1 and O2 cast half inputs to float32; O3 casts to half.
  Float32,
};

struct OpDef {
  std::string name;
  std::vector<InputSpec> inputs;
  bool variadic = false;  // one list argument of any length (concat, stack)
  std::vector<AttrSpec> attrs;
  InferShapeFn infer_shape;
  InferDTypeFn infer_dtype;
  std::array<KernelFn, kMaxBackends> kernels{};  // by Backend::id
  /// Optional: the CPU fast path for float16 / bfloat16 calls (see HalfKernelFn); tried before the widening.
  HalfKernelFn cpu_half;
  BpropFn bprop;
  /// False when the bprop never reads `out` (MindSpore's SetUnusedInputs, for the output): the tape then keeps no
  /// handle on the output for it, and that op's BpropCtx::out is undefined. (A long chain of small ops records
  /// tens of thousands of nodes; what each keeps decides whether the tape still fits in cache.)
  bool bprop_reads_out = true;
  bool no_grad = false;  // not differentiable: the output carries no gradient
  /// False for ops whose kernel returns a view of an input (reshape, identity) or computes with other ops
  /// (composites). Such kernels read no element on the host, so they serve every device as they are.
  bool allocates_output = true;
  std::string family;    // unary, binary, ... (for the coverage matrix)
  /// Elementwise ops without attributes: the array functions their kernel runs, which graph mode fuses.
  ElementwiseDef elementwise;
  /// The op's place in automatic mixed precision's lists.
  AmpClass amp = AmpClass::Default;
  /// False for the float ops PyTorch has no bfloat16 CPU kernel for (prod, mse_loss, binary_cross_entropy): such
  /// an op refuses float16 and bfloat16 inputs with a DTypeError, and mixed precision runs it in float32.
  bool takes_half = true;

  /// Convenience for op files: sets the CPU kernel.
  OpDef& cpu(KernelFn k) {
    kernels[Backend::CPU.id] = std::move(k);
    return *this;
  }
};

class Registry {
 public:
  /// Adds an op; ValueError if the name is taken or the definition is incomplete.
  void add(OpDef def);
  /// The op named `name`; UnknownOpError when there is none.
  const OpDef& get(const std::string& name) const;
  const OpDef* find(const std::string& name) const;
  std::vector<std::string> names() const;
  /// Adds or replaces the kernel of an existing op for one backend (how a backend plugs in).
  void set_kernel(const std::string& op, Backend backend, KernelFn kernel);

 private:
  std::map<std::string, std::unique_ptr<OpDef>> ops_;
};

/// The process-wide registry holding every built-in op (registered on first use).
Registry& registry();

/// Runs an op by name: validates inputs and attributes, infers shape and dtype, runs the kernel of the
/// inputs' backend and records the op for every grad level that differentiates an input.
Tensor call_op(const std::string& name, const std::vector<Tensor>& inputs, const Attrs& attrs = {});
Tensor call_op(const std::string& name, std::vector<Tensor>&& inputs, const Attrs& attrs = {});
Tensor call_op(const OpDef& op, const std::vector<Tensor>& inputs, const Attrs& attrs = {});
/// The same; a temporary argument list is handed to the tape rather than copied (the common `call_op(op, {x, y})`).
Tensor call_op(const OpDef& op, std::vector<Tensor>&& inputs, const Attrs& attrs = {});

/// A primitive defined by the user at run time (the third way to define a backward operator).
struct PrimitiveDef {
  std::string name;
  std::vector<std::string> inputs;  // input names
  InferShapeFn infer_shape;
  InferDTypeFn infer_dtype;
  KernelFn forward;  // CPU kernel
  /// (inputs..., out, dout) -> one gradient per input; written with ops it differentiates again.
  std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Tensor& out, const Tensor& dout)>
      bprop;
  /// False when the bprop never reads `out` (MindSpore's SetUnusedInputs for the output): a recorded call then keeps
  /// no reference to its output, and the bprop is given an undefined tensor in its place.
  bool bprop_reads_out = true;
};
void register_primitive(const PrimitiveDef& def);

}  // namespace bprop
