// Recycled argument lists for op calls (internal to the core).
//
// Why: every op call passes its tensors as a std::vector (what kernels, shape rules and bprops read), and on a
// scalar the malloc and free of that two-element vector cost as much as the op's arithmetic. The ops:: functions
// take their list from here and give it back when the call returns, and a tape node gives back the list it kept.
#pragma once
#include <vector>

#include "bprop/registry.h"

namespace bprop::detail {

/// An empty list, with room for a few tensors when a recycled one is at hand.
std::vector<Tensor> take_arg_list();
/// Empties `list` and keeps its buffer for a later take_arg_list() (unless it has none, is large, or enough are
/// kept already).
void recycle_arg_list(std::vector<Tensor>& list) noexcept;

/// op(xs...) through an argument list from take_arg_list().
template <typename... Ts>
Tensor call_with_args(const OpDef& op, const Ts&... xs) {
  std::vector<Tensor> args = take_arg_list();
  (args.push_back(xs), ...);
  Tensor out = call_op(op, std::move(args));
  recycle_arg_list(args);  // still here unless the tape took it
  return out;
}

}  // namespace bprop::detail
