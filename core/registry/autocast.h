// The dispatcher's side of automatic mixed precision (bprop/amp.h): the thread's autocast level and dtype, and the
// casts of an op's inputs that its AmpClass asks for at that level.
#pragma once
#include <vector>

#include "bprop/registry.h"

namespace bprop::detail {

struct AutocastState {
  int level = 0;  // amp::Level: 0 (off) .. 3 (O3)
  DType dtype = DType::Float16;
};
AutocastState& autocast_state();

/// The inputs of a call of `op` under the thread's autocast level, cast as the op's AmpClass says, in `cast`;
/// false (and `cast` untouched) when none changes.
bool autocast_inputs(const OpDef& op, const std::vector<Tensor>& inputs, std::vector<Tensor>& cast);

/// Turns autocasting off while it lives (backward passes: the casts on the tape already give each gradient its
/// input's dtype, and a bprop's arithmetic must stay in the dtypes it was written for).
class AutocastSuspend {
 public:
  AutocastSuspend() : saved_(autocast_state()) { autocast_state().level = 0; }
  ~AutocastSuspend() { autocast_state() = saved_; }
  AutocastSuspend(const AutocastSuspend&) = delete;
  AutocastSuspend& operator=(const AutocastSuspend&) = delete;

 private:
  AutocastState saved_;
};

}  // namespace bprop::detail
