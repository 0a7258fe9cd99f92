// The ops that run as aclnn kernels on the NPU. A kernel declines (KernelDeclined, before queuing anything) what
// the NPU or its aclnn operator does not do the way the op is defined: float64 where the NPU has none (Matmul,
// Relu, Tanh), integer division, empty tensors; the dispatcher then runs the CPU kernel with a host round trip.
// Every other op, with no entry here or in kernels_shape.cpp, kernels_index.cpp and kernels_optim.cpp, does that
// too (counted per op: bprop::fallback_counts()).
#include "ascend/kernels.h"

#include <climits>
#include <cmath>
#include <optional>
#include <variant>

#include "ascend/aclnn_call.h"
#include "bprop/device.h"
#include "ops/op_helpers.h"

namespace bprop::ascend {
namespace {

using acl::aclTensor;

[[noreturn]] void decline(const std::string& why) { throw KernelDeclined{why}; }

// Every input and the output of one float dtype, none empty: float32, float16 and bfloat16 (which every operator
// here has on the Atlas A2 training series; the Atlas training series' missing bfloat16 is declined for every
// kernel, in backend.cpp), and float64 unless the NPU operator has none.
void require_float(const KernelCtx& c, bool has_double = true) {
  for (const Tensor& t : c.inputs) {
    if (t.defined() && t.dtype() != c.out_dtype) decline("mixed dtypes");
    if (t.defined() && t.numel() == 0) decline("an empty tensor");
  }
  const DType dt = c.out_dtype;
  if (dt != DType::Float32 && !is_half(dt) && !(has_double && dt == DType::Float64)) {
    decline(std::string(dtype_name(dt)) + " is not supported by the NPU operator");
  }
}

// What the first Ascend 910 (the Atlas training series) lacks, declined there: its cube unit has no float32, so
// CANN refuses cubeMathType KEEP_DTYPE with float32 for Matmul, Convolution(Backward) and AvgPool2d(Backward)
// (they compute float32 in float16 there, which bprop's float32 results must not be), and it has no
// MaxPool2dWithIndices at all. Those run on the CPU.
void decline_on_atlas_training(const KernelCtx& c, const char* what) {
  if (c.out_dtype == DType::Float32 && Runtime::get().soc() == SocFamily::Ascend910) {
    decline(std::string(what) + " in float32 is not supported on " + Runtime::get().soc_name() +
            " (Atlas training series)");
  }
}

// An operator the Atlas training series lacks in every dtype.
void decline_missing_on_atlas_training(const char* what) {
  if (Runtime::get().soc() == SocFamily::Ascend910) {
    decline(std::string(what) + " is not supported on " + Runtime::get().soc_name() + " (Atlas training series)");
  }
}

// Float or int32, one dtype throughout (add, sub, mul, sum: integers wrap on both sides).
void require_numeric(const KernelCtx& c) {
  for (const Tensor& t : c.inputs) {
    if (t.defined() && t.dtype() != c.out_dtype) decline("mixed dtypes");
    if (t.defined() && t.numel() == 0) decline("an empty tensor");
  }
  if (c.out_dtype == DType::Bool) decline("bool arithmetic");
}

template <const char* Name>
void unary(KernelCtx& c, bool has_double) {
  require_float(c, has_double);
  AclTensorArg x(c.inputs[0]), out(c.out);
  launch_aclnn(c.device, Name, static_cast<const aclTensor*>(x.get()), out.get());
}

// aclnnAdd/Sub(self, other, alpha, out): alpha 1.
void add_sub(KernelCtx& c, const char* name) {
  require_numeric(c);
  AclTensorArg x(c.inputs[0]), y(c.inputs[1]), out(c.out);
  AclScalarArg one(1.0, c.out_dtype);
  launch_aclnn(c.device, name, static_cast<const aclTensor*>(x.get()), static_cast<const aclTensor*>(y.get()),
               static_cast<const acl::aclScalar*>(one.get()), out.get());
}

void binary(KernelCtx& c, const char* name) {
  AclTensorArg x(c.inputs[0]), y(c.inputs[1]), out(c.out);
  launch_aclnn(c.device, name, static_cast<const aclTensor*>(x.get()), static_cast<const aclTensor*>(y.get()),
               out.get());
}

// sum / mean over the op's axes: aclnnReduceSum / aclnnMean(self, dims, keepdim, dtype, out).
void reduce(KernelCtx& c, const char* name) {
  const std::vector<int64_t> axes = opdef::reduce_axes(c.op.name, c.attrs.get("axis"), c.inputs[0].dim());
  if (axes.empty() && c.inputs[0].dim() > 0) decline("no axis to reduce");  // (an empty list means all to aclnn)
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg dims(axes);
  launch_aclnn(c.device, name, static_cast<const aclTensor*>(x.get()), static_cast<const acl::aclIntArray*>(dims.get()),
               c.attrs.get_bool("keepdims"), acl_dtype(c.out_dtype), out.get());
}

// The last two dimensions of `t` swapped, as a strided view (no copy).
AclTensorArg transposed_view(const Tensor& t) {
  std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
  std::vector<int64_t> strides = row_major_strides(t.shape());
  const size_t r = dims.size();
  std::swap(dims[r - 1], dims[r - 2]);
  std::swap(strides[r - 1], strides[r - 2]);
  return AclTensorArg(t, dims, strides);
}

// matmul / matmul_t: aclnnMatmul with cubeMathType KEEP_DTYPE, so float32 products stay float32 on the cube unit
// (ALLOW_FP32_DOWN_PRECISION would be faster, at HF32's 10-bit mantissa). The NPU's Matmul has no float64.
void matmul(KernelCtx& c, bool ta, bool tb) {
  require_float(c, /*has_double=*/false);
  decline_on_atlas_training(c, "aclnnMatmul with cubeMathType KEEP_DTYPE");
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const AclTensorArg av = ta ? transposed_view(a) : AclTensorArg(a);
  const AclTensorArg bv = tb ? transposed_view(b) : AclTensorArg(b);
  AclTensorArg out(c.out);
  launch_aclnn(c.device, "Matmul", static_cast<const aclTensor*>(av.get()), static_cast<const aclTensor*>(bv.get()),
               out.get(), static_cast<int8_t>(acl::KEEP_DTYPE));
}

void softmax(KernelCtx& c, const char* name) {
  require_float(c);
  int64_t axis = c.attrs.get_int("axis");
  if (axis < 0) axis += c.inputs[0].dim();
  AclTensorArg x(c.inputs[0]), out(c.out);
  launch_aclnn(c.device, name, static_cast<const aclTensor*>(x.get()), axis, out.get());
}

// cast: float <-> float, and int32/bool to anything. float -> int32 (NaN, out-of-range) is the CPU's definition.
void cast(KernelCtx& c) {
  const DType from = c.inputs[0].dtype();
  if (c.inputs[0].numel() == 0) decline("an empty tensor");
  if (is_float(from) && c.out_dtype == DType::Int32) decline("float to int32");
  AclTensorArg x(c.inputs[0]), out(c.out);
  launch_aclnn(c.device, "Cast", static_cast<const aclTensor*>(x.get()), acl_dtype(c.out_dtype), out.get());
}

// ---- convolution, pooling, batch norm (NCHW) ----

// These operators check the format of their feature maps: NCHW for a 4-D tensor (ND is refused with 161002).
constexpr Layout kNchw = Layout::Channels;

std::vector<int64_t> pair_attr(const KernelCtx& c, const char* name) { return c.attrs.get_ints(name); }

struct ConvArgs {
  AclIntArrayArg stride, padding, dilation, output_padding;
  int64_t groups;
  explicit ConvArgs(const KernelCtx& c)
      : stride(pair_attr(c, "stride")), padding(pair_attr(c, "padding")), dilation(pair_attr(c, "dilation")),
        output_padding({0, 0}), groups(c.attrs.get_int("groups")) {}
};

// conv2d(x, w, bias?): aclnnConvolution, not transposed, KEEP_DTYPE (the NPU's Convolution has no float64).
void conv2d(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  decline_on_atlas_training(c, "aclnnConvolution with cubeMathType KEEP_DTYPE");
  ConvArgs a(c);
  AclTensorArg x(c.inputs[0], kNchw), w(c.inputs[1], kNchw), out(c.out, kNchw);
  std::optional<AclTensorArg> bias;
  if (c.inputs.size() > 2 && c.inputs[2].defined()) bias.emplace(c.inputs[2]);
  launch_aclnn(c.device, "Convolution", static_cast<const aclTensor*>(x.get()), static_cast<const aclTensor*>(w.get()),
               static_cast<const aclTensor*>(bias ? bias->get() : nullptr),
               static_cast<const acl::aclIntArray*>(a.stride.get()), static_cast<const acl::aclIntArray*>(a.padding.get()),
               static_cast<const acl::aclIntArray*>(a.dilation.get()), false,
               static_cast<const acl::aclIntArray*>(a.output_padding.get()), a.groups, out.get(),
               static_cast<int8_t>(acl::KEEP_DTYPE));
}

// conv2d_input_grad(dout, w) / conv2d_weight_grad(x, dout): aclnnConvolutionBackward with one output asked for.
// The operator takes the input and the weight as tensors; the one the op does not have (only its shape is used)
// is an uninitialised device tensor of that shape.
void conv2d_backward(KernelCtx& c, bool input_grad) {
  require_float(c, /*has_double=*/false);
  decline_on_atlas_training(c, "aclnnConvolutionBackward with cubeMathType KEEP_DTYPE");
  ConvArgs a(c);
  const Tensor& dout = input_grad ? c.inputs[0] : c.inputs[1];
  const std::vector<int64_t> other_shape = c.attrs.get_ints(input_grad ? "x_shape" : "w_shape");
  const Tensor other = Tensor::empty(Shape(other_shape.begin(), other_shape.end()), c.out_dtype, c.device);
  const Tensor& x = input_grad ? other : c.inputs[0];
  const Tensor& w = input_grad ? c.inputs[1] : other;
  AclTensorArg dy(dout, kNchw), xa(x, kNchw), wa(w, kNchw), out(c.out, kNchw);
  const bool mask[3] = {input_grad, !input_grad, false};
  AclBoolArrayArg output_mask(mask, 3);
  AclIntArrayArg bias_sizes({w.shape()[0]});
  launch_aclnn(c.device, "ConvolutionBackward", static_cast<const aclTensor*>(dy.get()),
               static_cast<const aclTensor*>(xa.get()), static_cast<const aclTensor*>(wa.get()),
               static_cast<const acl::aclIntArray*>(bias_sizes.get()), static_cast<const acl::aclIntArray*>(a.stride.get()),
               static_cast<const acl::aclIntArray*>(a.padding.get()), static_cast<const acl::aclIntArray*>(a.dilation.get()),
               false, static_cast<const acl::aclIntArray*>(a.output_padding.get()), static_cast<int>(a.groups),
               static_cast<const acl::aclBoolArray*>(output_mask.get()), static_cast<int8_t>(acl::KEEP_DTYPE),
               input_grad ? out.get() : nullptr, input_grad ? nullptr : out.get(), static_cast<aclTensor*>(nullptr));
}

struct PoolArgs {
  AclIntArrayArg kernel, stride, padding, dilation;
  explicit PoolArgs(const KernelCtx& c)
      : kernel(pair_attr(c, "kernel_size")),
        stride(std::holds_alternative<std::monostate>(c.attrs.get("stride")) ? pair_attr(c, "kernel_size")
                                                                            : pair_attr(c, "stride")),
        padding(pair_attr(c, "padding")), dilation({1, 1}) {}
};

// The window maxima and their flat positions in each (H, W) plane: aclnnMaxPool2dWithIndices.
void max_pool_with_indices(const KernelCtx& c, const Tensor& x, const Tensor& out, const Tensor& indices) {
  PoolArgs a(c);
  AclTensorArg xa(x, kNchw), o(out, kNchw), idx(indices, kNchw);
  launch_aclnn(c.device, "MaxPool2dWithIndices", static_cast<const aclTensor*>(xa.get()),
               static_cast<const acl::aclIntArray*>(a.kernel.get()), static_cast<const acl::aclIntArray*>(a.stride.get()),
               static_cast<const acl::aclIntArray*>(a.padding.get()), static_cast<const acl::aclIntArray*>(a.dilation.get()),
               false, o.get(), idx.get());
}

void max_pool2d(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  decline_missing_on_atlas_training("aclnnMaxPool2dWithIndices");
  const Tensor indices = Tensor::empty(c.out_shape, DType::Int32, c.device);
  max_pool_with_indices(c, c.inputs[0], c.out, indices);
}

// max_pool2d_grad(dout, x): the positions again (the forward's are not kept), then the scatter of dout.
void max_pool2d_grad(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  // (CANN's MaxPool2dWithIndicesBackward takes FLOAT only: ops-nn aclnn_max_pool2d_with_indices_backward.cpp)
  if (is_half(c.out_dtype)) decline(std::string(dtype_name(c.out_dtype)) + " is not supported by aclnnMaxPool2dWithIndicesBackward");
  decline_missing_on_atlas_training("aclnnMaxPool2dWithIndices");
  const Tensor& dout = c.inputs[0];
  const Tensor& x = c.inputs[1];
  const Tensor pooled = Tensor::empty(dout.shape(), c.out_dtype, c.device);
  const Tensor indices = Tensor::empty(dout.shape(), DType::Int32, c.device);
  max_pool_with_indices(c, x, pooled, indices);
  PoolArgs a(c);
  AclTensorArg dy(dout, kNchw), xa(x, kNchw), idx(indices, kNchw), out(c.out, kNchw);
  launch_aclnn(c.device, "MaxPool2dWithIndicesBackward", static_cast<const aclTensor*>(dy.get()),
               static_cast<const aclTensor*>(xa.get()), static_cast<const aclTensor*>(idx.get()),
               static_cast<const acl::aclIntArray*>(a.kernel.get()), static_cast<const acl::aclIntArray*>(a.stride.get()),
               static_cast<const acl::aclIntArray*>(a.padding.get()), static_cast<const acl::aclIntArray*>(a.dilation.get()),
               false, out.get());
}

// batch_norm(x, weight?, bias?): normalisation with the batch's statistics (the op has no running statistics:
// the layer updates those with ops), aclnnBatchNorm in training mode without running tensors.
void batch_norm(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  // (its saved statistics are float32 here: a half call would mix dtypes; mixed precision keeps BatchNorm float32)
  if (is_half(c.out_dtype)) decline(std::string(dtype_name(c.out_dtype)) + " batch norm");
  const Tensor& x = c.inputs[0];
  const int64_t channels = x.shape()[1];
  const Tensor save_mean = Tensor::empty({channels}, DType::Float32, c.device);
  const Tensor save_invstd = Tensor::empty({channels}, DType::Float32, c.device);
  AclTensorArg xa(x, kNchw), out(c.out, kNchw), sm(save_mean), si(save_invstd);
  std::optional<AclTensorArg> w, b;
  if (c.inputs.size() > 1 && c.inputs[1].defined()) w.emplace(c.inputs[1]);
  if (c.inputs.size() > 2 && c.inputs[2].defined()) b.emplace(c.inputs[2]);
  launch_aclnn(c.device, "BatchNorm", static_cast<const aclTensor*>(xa.get()),
               static_cast<const aclTensor*>(w ? w->get() : nullptr), static_cast<const aclTensor*>(b ? b->get() : nullptr),
               static_cast<aclTensor*>(nullptr), static_cast<aclTensor*>(nullptr), true, 0.1, c.attrs.get_float("eps"),
               out.get(), sm.get(), si.get());
}

// layer_norm(x, weight?, bias?): aclnnLayerNorm over the last normalized_ndim dimensions (the op has no mean or
// rstd output: those are nullptr). The NPU's LayerNorm has no float64.
void layer_norm(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  const Tensor& x = c.inputs[0];
  const int64_t k = c.attrs.get_int("normalized_ndim");
  const std::vector<int64_t> normalized(x.shape().end() - k, x.shape().end());
  AclTensorArg xa(x), out(c.out);
  AclIntArrayArg shape(normalized);
  std::optional<AclTensorArg> w, b;
  if (c.inputs.size() > 1 && c.inputs[1].defined()) w.emplace(c.inputs[1]);
  if (c.inputs.size() > 2 && c.inputs[2].defined()) b.emplace(c.inputs[2]);
  launch_aclnn(c.device, "LayerNorm", static_cast<const aclTensor*>(xa.get()),
               static_cast<const acl::aclIntArray*>(shape.get()), static_cast<const aclTensor*>(w ? w->get() : nullptr),
               static_cast<const aclTensor*>(b ? b->get() : nullptr), c.attrs.get_float("eps"), out.get(),
               static_cast<aclTensor*>(nullptr), static_cast<aclTensor*>(nullptr));
}

// ---- selection, comparison, layout ----

// Inputs of one dtype (the output's may differ: comparisons), none empty.
void require_same_inputs(const KernelCtx& c) {
  for (const Tensor& t : c.inputs) {
    if (t.defined() && t.dtype() != c.inputs[0].dtype()) decline("mixed dtypes");
    if (t.defined() && t.numel() == 0) decline("an empty tensor");
  }
}

void compare(KernelCtx& c, const char* name) {
  require_same_inputs(c);
  if (c.inputs[0].dtype() == DType::Bool && std::string(name) != "EqTensor" && std::string(name) != "NeTensor") {
    decline("ordering bools");
  }
  binary(c, name);
}

// where(cond, x, y): aclnnSWhere(condition, self, other, out).
void where(KernelCtx& c) {
  if (c.inputs[1].dtype() != c.out_dtype || c.inputs[2].dtype() != c.out_dtype) decline("mixed dtypes");
  for (const Tensor& t : c.inputs) {
    if (t.numel() == 0) decline("an empty tensor");
  }
  AclTensorArg cond(c.inputs[0]), x(c.inputs[1]), y(c.inputs[2]), out(c.out);
  launch_aclnn(c.device, "SWhere", static_cast<const aclTensor*>(cond.get()), static_cast<const aclTensor*>(x.get()),
               static_cast<const aclTensor*>(y.get()), out.get());
}

// broadcast_to: aclnnExpand to the output's shape (no DOUBLE in aclnnExpand's list: float64 runs on the CPU).
void broadcast_to(KernelCtx& c) {
  if (c.inputs[0].numel() == 0 || c.out.numel() == 0) decline("an empty tensor");
  if (c.out_dtype == DType::Float64) decline("float64 is not supported by aclnnExpand");
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg size(std::vector<int64_t>(c.out_shape.begin(), c.out_shape.end()));
  launch_aclnn(c.device, "Expand", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclIntArray*>(size.get()), out.get());
}

// transpose: aclnnPermute with the op's permutation (negative axes normalised).
void transpose(KernelCtx& c) {
  if (c.inputs[0].numel() == 0) decline("an empty tensor");
  const int64_t rank = c.inputs[0].dim();
  std::vector<int64_t> perm = c.attrs.get_ints("perm");
  for (int64_t& p : perm) p = p < 0 ? p + rank : p;
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg dims(perm);
  launch_aclnn(c.device, "Permute", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclIntArray*>(dims.get()), out.get());
}

// concat: aclnnCat over a tensor list, which owns (and destroys) the aclTensors it is made of.
void concat(KernelCtx& c) {
  require_same_inputs(c);
  if (c.inputs[0].dtype() != c.out_dtype) decline("mixed dtypes");
  const int64_t axis = c.attrs.get_int("axis");
  AclTensorListArg list(c.inputs);
  AclTensorArg out(c.out);
  launch_aclnn(c.device, "Cat", static_cast<const acl::aclTensorList*>(list.get()),
               axis < 0 ? axis + c.out.dim() : axis, out.get());
}

// tanh_grad / sigmoid_grad(y, dy): aclnnTanhBackward / aclnnSigmoidBackward(gradOutput = dy, output = y);
// relu_grad(y, dy): aclnnThresholdBackward(gradOutput = dy, self = y, threshold 0), a select as the op is.
void activation_grad(KernelCtx& c, const char* name, bool has_double) {
  require_float(c, has_double);
  if (c.inputs[0].shape() != c.inputs[1].shape()) decline("broadcast operands");
  AclTensorArg y(c.inputs[0]), dy(c.inputs[1]), out(c.out);
  if (std::string(name) == "ThresholdBackward") {
    AclScalarArg zero(0.0, c.out_dtype);
    launch_aclnn(c.device, name, static_cast<const aclTensor*>(dy.get()), static_cast<const aclTensor*>(y.get()),
                 static_cast<const acl::aclScalar*>(zero.get()), out.get());
  } else {
    launch_aclnn(c.device, name, static_cast<const aclTensor*>(dy.get()), static_cast<const aclTensor*>(y.get()),
                 out.get());
  }
}

// amax / amin over the op's axes.
void extreme(KernelCtx& c, const char* name) {
  require_float(c);
  const std::vector<int64_t> axes = opdef::reduce_axes(c.op.name, c.attrs.get("axis"), c.inputs[0].dim());
  if (axes.empty()) decline("no axis to reduce");
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg dims(axes);
  launch_aclnn(c.device, name, static_cast<const aclTensor*>(x.get()), static_cast<const acl::aclIntArray*>(dims.get()),
               c.attrs.get_bool("keepdims"), out.get());
}

// gelu: aclnnGeluV2 (approximate 0: the erf form, 1: tanh); the NPU's GELU has no float64.
void gelu(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  const int64_t approximate = c.attrs.get_string("approximate") == "tanh" ? 1 : 0;
  AclTensorArg x(c.inputs[0]), out(c.out);
  launch_aclnn(c.device, "GeluV2", static_cast<const aclTensor*>(x.get()), approximate, out.get());
}

// gelu_grad(x, dy): aclnnGeluBackwardV2(dy, x, "none"), the erf form's derivative, the one gelu_grad computes
// (gelu's tanh form composes its gradient of ops); no float64, as the forward.
void gelu_grad(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  if (c.inputs[0].shape() != c.inputs[1].shape()) decline("broadcast operands");
  AclTensorArg x(c.inputs[0]), dy(c.inputs[1]), out(c.out);
  static char erf_form[] = "none";  // (CANN takes the mode as a char*)
  launch_aclnn(c.device, "GeluBackwardV2", static_cast<const aclTensor*>(dy.get()),
               static_cast<const aclTensor*>(x.get()), erf_form, out.get());
}

// square: aclnnMul(x, x).
void square(KernelCtx& c) {
  require_numeric(c);
  AclTensorArg x(c.inputs[0]), out(c.out);
  launch_aclnn(c.device, "Mul", static_cast<const aclTensor*>(x.get()), static_cast<const aclTensor*>(x.get()), out.get());
}

// avg_pool2d: windows averaged over kH kW with padding counted (countIncludePad, no divisor override).
void avg_pool2d(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  decline_on_atlas_training(c, "aclnnAvgPool2d with cubeMathType KEEP_DTYPE");
  PoolArgs a(c);
  AclTensorArg x(c.inputs[0], kNchw), out(c.out, kNchw);
  launch_aclnn(c.device, "AvgPool2d", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclIntArray*>(a.kernel.get()), static_cast<const acl::aclIntArray*>(a.stride.get()),
               static_cast<const acl::aclIntArray*>(a.padding.get()), false, true, int64_t{0},
               static_cast<int8_t>(acl::KEEP_DTYPE), out.get());
}

// avg_pool2d_grad(dout): the backward takes the input tensor for its shape only (uninitialised here).
void avg_pool2d_grad(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  decline_on_atlas_training(c, "aclnnAvgPool2dBackward with cubeMathType KEEP_DTYPE");
  PoolArgs a(c);
  const std::vector<int64_t> xs = c.attrs.get_ints("x_shape");
  const Tensor x = Tensor::empty(Shape(xs.begin(), xs.end()), c.out_dtype, c.device);
  AclTensorArg dy(c.inputs[0], kNchw), xa(x, kNchw), out(c.out, kNchw);
  launch_aclnn(c.device, "AvgPool2dBackward", static_cast<const aclTensor*>(dy.get()),
               static_cast<const aclTensor*>(xa.get()), static_cast<const acl::aclIntArray*>(a.kernel.get()),
               static_cast<const acl::aclIntArray*>(a.stride.get()), static_cast<const acl::aclIntArray*>(a.padding.get()),
               false, true, int64_t{0}, static_cast<int8_t>(acl::KEEP_DTYPE), out.get());
}

// leaky_relu: aclnnLeakyRelu(self, negativeSlope, out); x > 0 ? x : alpha x as the op. FLOAT only on the NPU.
void leaky_relu(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclScalarArg slope(c.attrs.get_float("alpha"), DType::Float32);
  launch_aclnn(c.device, "LeakyRelu", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclScalar*>(slope.get()), out.get());
}

// elu: aclnnElu(self, alpha, scale 1, inputScale 1, out): x > 0 ? x : alpha (e^x - 1). FLOAT only on the NPU.
void elu(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclScalarArg alpha(c.attrs.get_float("alpha"), DType::Float32), one(1.0, DType::Float32);
  launch_aclnn(c.device, "Elu", static_cast<const aclTensor*>(x.get()), static_cast<const acl::aclScalar*>(alpha.get()),
               static_cast<const acl::aclScalar*>(one.get()), static_cast<const acl::aclScalar*>(one.get()), out.get());
}

// clamp: aclnnClamp(self, min?, max?, out), an absent bound as nullptr. CANN applies min last
// (max(min(x, hi), lo)), the op max first: min > max is left to the CPU, as are int32 bounds that are fractional
// or past int32 (the CPU rounds and saturates them).
void clamp(KernelCtx& c) {
  const Tensor& x = c.inputs[0];
  if (x.dtype() != c.out_dtype || x.numel() == 0) decline(x.numel() == 0 ? "an empty tensor" : "mixed dtypes");
  if (c.out_dtype == DType::Bool) decline("bool clamp");
  std::optional<double> lo, hi;
  if (!c.attrs.is_null("min")) lo = c.attrs.get_float("min");
  if (!c.attrs.is_null("max")) hi = c.attrs.get_float("max");
  if (!lo && !hi) decline("no bound");
  if (lo && hi && *lo > *hi) decline("min > max");
  if (c.out_dtype == DType::Int32) {
    for (const auto& b : {lo, hi}) {
      if (b && (*b != std::trunc(*b) || *b < INT32_MIN || *b > INT32_MAX)) decline("a non-int32 bound");
    }
  }
  std::optional<AclScalarArg> min_arg, max_arg;
  if (lo) min_arg.emplace(*lo, c.out_dtype);
  if (hi) max_arg.emplace(*hi, c.out_dtype);
  AclTensorArg xa(x), out(c.out);
  launch_aclnn(c.device, "Clamp", static_cast<const aclTensor*>(xa.get()),
               static_cast<const acl::aclScalar*>(min_arg ? min_arg->get() : nullptr),
               static_cast<const acl::aclScalar*>(max_arg ? max_arg->get() : nullptr), out.get());
}

// logsumexp over the op's axes: aclnnLogSumExp(self, dim, keepDim, out); FLOAT only on the NPU.
void logsumexp(KernelCtx& c) {
  require_float(c, /*has_double=*/false);
  const std::vector<int64_t> axes = opdef::reduce_axes(c.op.name, c.attrs.get("axis"), c.inputs[0].dim());
  if (axes.empty()) decline("no axis to reduce");
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg dims(axes);
  launch_aclnn(c.device, "LogSumExp", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclIntArray*>(dims.get()), c.attrs.get_bool("keepdims"), out.get());
}

// var / std over the op's axes with its correction (0 or 1, N - correction in the denominator): aclnnStd takes the
// correction, aclnnVar unbiased = (correction == 1). FLOAT only on the NPU.
void var_std(KernelCtx& c, bool root) {
  require_float(c, /*has_double=*/false);
  const std::vector<int64_t> axes = opdef::reduce_axes(c.op.name, c.attrs.get("axis"), c.inputs[0].dim());
  if (axes.empty()) decline("no axis to reduce");
  const int64_t correction = c.attrs.get_int("correction");
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg dims(axes);
  const auto* dim = static_cast<const acl::aclIntArray*>(dims.get());
  if (root) {
    launch_aclnn(c.device, "Std", static_cast<const aclTensor*>(x.get()), dim, correction, c.attrs.get_bool("keepdims"),
                 out.get());
  } else {
    launch_aclnn(c.device, "Var", static_cast<const aclTensor*>(x.get()), dim, correction == 1,
                 c.attrs.get_bool("keepdims"), out.get());
  }
}

// prod over the op's axes: aclnnProd over every axis (into a 0-d view of the output), aclnnProdDim over one; over
// several (not all) axes, ProdDim one axis at a time with the dimension kept (the product's order differs from the
// CPU's: float results agree to rounding).
void prod(KernelCtx& c) {
  require_numeric(c);
  const Tensor& x = c.inputs[0];
  const std::vector<int64_t> axes = opdef::reduce_axes(c.op.name, c.attrs.get("axis"), x.dim());
  if (axes.empty()) decline("no axis to reduce");
  const acl::aclDataType dtype = acl_dtype(c.out_dtype);
  if (static_cast<int64_t>(axes.size()) == x.dim()) {
    AclTensorArg xa(x), out(c.out, {}, {});
    launch_aclnn(c.device, "Prod", static_cast<const aclTensor*>(xa.get()), dtype, out.get());
    return;
  }
  if (axes.size() == 1) {
    AclTensorArg xa(x), out(c.out);
    launch_aclnn(c.device, "ProdDim", static_cast<const aclTensor*>(xa.get()), axes[0], c.attrs.get_bool("keepdims"),
                 dtype, out.get());
    return;
  }
  Tensor t = x;
  Shape kept = x.shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    kept[static_cast<size_t>(axes[i])] = 1;
    const bool last = i + 1 == axes.size();
    const Tensor next = last ? c.out : Tensor::empty(kept, c.out_dtype, c.device);
    AclTensorArg ta(t), out(next, std::vector<int64_t>(kept.begin(), kept.end()), row_major_strides(kept));
    launch_aclnn(c.device, "ProdDim", static_cast<const aclTensor*>(ta.get()), axes[i], true, dtype, out.get());
    t = next;
  }
}

// flip: aclnnFlip(self, dims, out) over the op's axes.
void flip(KernelCtx& c) {
  if (c.inputs[0].numel() == 0) decline("an empty tensor");
  if (Runtime::get().soc() == SocFamily::Ascend910) decline("aclnnFlip is not supported on the Atlas training series");
  const std::vector<int64_t> axes = opdef::reduce_axes(c.op.name, c.attrs.get("axis"), c.inputs[0].dim());
  if (axes.empty()) decline("no axis to flip");
  AclTensorArg x(c.inputs[0]), out(c.out);
  AclIntArrayArg dims(axes);
  launch_aclnn(c.device, "Flip", static_cast<const aclTensor*>(x.get()),
               static_cast<const acl::aclIntArray*>(dims.get()), out.get());
}

constexpr char kNeg[] = "Neg", kExp[] = "Exp", kLog[] = "Log", kSqrt[] = "Sqrt", kTanh[] = "Tanh",
               kSigmoid[] = "Sigmoid", kRelu[] = "Relu", kAbs[] = "Abs", kSin[] = "Sin", kCos[] = "Cos",
               kRsqrt[] = "Rsqrt", kReciprocal[] = "Reciprocal", kErf[] = "Erf", kLog1p[] = "Log1p",
               kExpm1[] = "Expm1", kFloor[] = "Floor", kCeil[] = "Ceil", kRound[] = "Round", kSilu[] = "Silu",
               kTan[] = "Tan";

}  // namespace

std::vector<DeviceKernel> aclnn_kernels() {
  std::vector<DeviceKernel> kernels = {
      {"add", "Add", [](KernelCtx& c) { add_sub(c, "Add"); }},
      {"sub", "Sub", [](KernelCtx& c) { add_sub(c, "Sub"); }},
      {"mul", "Mul", [](KernelCtx& c) { require_numeric(c); binary(c, "Mul"); }},
      {"div", "Div", [](KernelCtx& c) { require_float(c); binary(c, "Div"); }},
      {"pow", "PowTensorTensor", [](KernelCtx& c) { require_float(c); binary(c, "PowTensorTensor"); }},
      {"neg", "Neg", [](KernelCtx& c) { unary<kNeg>(c, true); }},
      {"exp", "Exp", [](KernelCtx& c) { unary<kExp>(c, true); }},
      {"log", "Log", [](KernelCtx& c) { unary<kLog>(c, true); }},
      {"sqrt", "Sqrt", [](KernelCtx& c) { unary<kSqrt>(c, true); }},
      {"tanh", "Tanh", [](KernelCtx& c) { unary<kTanh>(c, false); }},
      {"sigmoid", "Sigmoid", [](KernelCtx& c) { unary<kSigmoid>(c, true); }},
      {"relu", "Relu", [](KernelCtx& c) { unary<kRelu>(c, false); }},
      {"sum", "ReduceSum", [](KernelCtx& c) { require_numeric(c); reduce(c, "ReduceSum"); }},
      {"mean", "Mean", [](KernelCtx& c) { require_float(c); reduce(c, "Mean"); }},
      {"matmul", "Matmul", [](KernelCtx& c) { matmul(c, false, false); }},
      {"matmul_t", "Matmul",
       [](KernelCtx& c) { matmul(c, c.attrs.get_bool("transpose_a"), c.attrs.get_bool("transpose_b")); }},
      {"softmax", "Softmax", [](KernelCtx& c) { softmax(c, "Softmax"); }},
      {"log_softmax", "LogSoftmax", [](KernelCtx& c) { softmax(c, "LogSoftmax"); }},
      {"cast", "Cast", cast},
      {"conv2d", "Convolution", conv2d},
      {"conv2d_input_grad", "ConvolutionBackward", [](KernelCtx& c) { conv2d_backward(c, true); }},
      {"conv2d_weight_grad", "ConvolutionBackward", [](KernelCtx& c) { conv2d_backward(c, false); }},
      {"max_pool2d", "MaxPool2dWithIndices", max_pool2d},
      {"max_pool2d_grad", "MaxPool2dWithIndicesBackward", max_pool2d_grad},
      {"batch_norm", "BatchNorm", batch_norm},
      {"avg_pool2d", "AvgPool2d", avg_pool2d},
      {"avg_pool2d_grad", "AvgPool2dBackward", avg_pool2d_grad},
      {"abs", "Abs", [](KernelCtx& c) { unary<kAbs>(c, true); }},
      {"sin", "Sin", [](KernelCtx& c) { unary<kSin>(c, true); }},
      {"cos", "Cos", [](KernelCtx& c) { unary<kCos>(c, true); }},
      {"rsqrt", "Rsqrt", [](KernelCtx& c) { unary<kRsqrt>(c, true); }},
      {"reciprocal", "Reciprocal", [](KernelCtx& c) { unary<kReciprocal>(c, true); }},
      {"erf", "Erf", [](KernelCtx& c) { unary<kErf>(c, true); }},
      {"log1p", "Log1p", [](KernelCtx& c) { unary<kLog1p>(c, true); }},
      {"expm1", "Expm1", [](KernelCtx& c) { unary<kExpm1>(c, false); }},  // (no DOUBLE in aclnnExpm1)
      {"floor", "Floor", [](KernelCtx& c) { unary<kFloor>(c, true); }},
      {"ceil", "Ceil", [](KernelCtx& c) { unary<kCeil>(c, true); }},
      {"round", "Round", [](KernelCtx& c) { unary<kRound>(c, true); }},
      {"silu", "Silu", [](KernelCtx& c) { unary<kSilu>(c, false); }},
      {"gelu", "GeluV2", gelu},
      {"gelu_grad", "GeluBackwardV2", gelu_grad},
      {"square", "Mul", square},
      {"tanh_grad", "TanhBackward", [](KernelCtx& c) { activation_grad(c, "TanhBackward", true); }},
      {"sigmoid_grad", "SigmoidBackward", [](KernelCtx& c) { activation_grad(c, "SigmoidBackward", true); }},
      {"relu_grad", "ThresholdBackward", [](KernelCtx& c) { activation_grad(c, "ThresholdBackward", false); }},
      {"equal", "EqTensor", [](KernelCtx& c) { compare(c, "EqTensor"); }},
      {"not_equal", "NeTensor", [](KernelCtx& c) { compare(c, "NeTensor"); }},
      {"greater", "GtTensor", [](KernelCtx& c) { compare(c, "GtTensor"); }},
      {"greater_equal", "GeTensor", [](KernelCtx& c) { compare(c, "GeTensor"); }},
      {"less", "LtTensor", [](KernelCtx& c) { compare(c, "LtTensor"); }},
      {"less_equal", "LeTensor", [](KernelCtx& c) { compare(c, "LeTensor"); }},
      {"where", "SWhere", where},
      {"broadcast_to", "Expand", broadcast_to},
      {"transpose", "Permute", transpose},
      {"concat", "Cat", concat},
      {"amax", "Amax", [](KernelCtx& c) { extreme(c, "Amax"); }},
      {"amin", "Amin", [](KernelCtx& c) { extreme(c, "Amin"); }},
      {"tan", "Tan", [](KernelCtx& c) { unary<kTan>(c, true); }},
      {"leaky_relu", "LeakyRelu", leaky_relu},
      {"elu", "Elu", elu},
      {"clamp", "Clamp", clamp},
      {"flip", "Flip", flip},
      {"logsumexp", "LogSumExp", logsumexp},
      {"var", "Var", [](KernelCtx& c) { var_std(c, false); }},
      {"std", "Std", [](KernelCtx& c) { var_std(c, true); }},
      {"layer_norm", "LayerNorm", layer_norm},
      {"prod", "ProdDim", prod, {"Prod"}},
  };
  for (DeviceKernel& k : shape_kernels()) kernels.push_back(std::move(k));
  for (DeviceKernel& k : index_kernels()) kernels.push_back(std::move(k));
  for (DeviceKernel& k : attention_kernels()) kernels.push_back(std::move(k));
  for (DeviceKernel& k : optimizer_kernels()) kernels.push_back(std::move(k));
  return kernels;
}

}  // namespace bprop::ascend
