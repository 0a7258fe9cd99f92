#include "registry/autocast.h"

#include "bprop/ops.h"

namespace bprop::detail {

AutocastState& autocast_state() {
  thread_local AutocastState state;
  return state;
}

namespace {

// The dtype an op's float inputs take at `level` (0 = leave them), from its place in the lists.
DType target_dtype(AmpClass amp, int level, DType half) {
  switch (amp) {
    case AmpClass::Half:
      return half;
    case AmpClass::Follow:
      return level >= 2 ? half : DType::Int32;
    case AmpClass::Float32:
      return level == 3 ? half : DType::Float32;
    default:
      return DType::Int32;
  }
}

}  // namespace

bool autocast_inputs(const OpDef& op, const std::vector<Tensor>& inputs, std::vector<Tensor>& cast) {
  const AutocastState& st = autocast_state();
  DType target = target_dtype(op.amp, st.level, st.dtype);
  if (is_half(target) && !op.takes_half) target = DType::Float32;  // (O3 included: the op has no half kernel)
  if (target == DType::Int32) return false;  // (Int32: "leave the inputs")
  bool changed = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    // float64 stays float64 (as PyTorch's autocast); integers and bools are indices, labels and masks
    if (!t.defined() || t.dtype() == target || !(t.dtype() == DType::Float32 || is_half(t.dtype()))) continue;
    if (!changed) cast = inputs;
    cast[i] = ops::cast(t, target);
    changed = true;
  }
  return changed;
}

}  // namespace bprop::detail
