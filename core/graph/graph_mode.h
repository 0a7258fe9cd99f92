// The jit caches behind graph mode (bprop/context.h): a grad function or a Cell keeps one, created on its
// first call in graph mode.
#pragma once
#include <memory>
#include <mutex>

#include "bprop/jit.h"

namespace bprop::detail {

struct GraphModeCache {
  std::mutex mu;
  std::unique_ptr<JitFn> plain;      // fn(args)
  std::unique_ptr<JitFn> with_sens;  // fn(args..., sens)
  std::unique_ptr<JitFn> modes[2];   // a Cell's construct, in eval (0) and train (1) mode
};

}  // namespace bprop::detail
