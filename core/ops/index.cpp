#include "ops/op_helpers.h"

namespace bprop {
void register_index_ops(Registry&) {}
}  // namespace bprop
