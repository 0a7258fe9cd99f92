// The explicit list of op families (static self-registration can be dropped by linkers, Emscripten's too).
#pragma once
#include "bprop/registry.h"

namespace bprop {

void register_unary_ops(Registry& r);
void register_binary_ops(Registry& r);
void register_compare_ops(Registry& r);
void register_select_ops(Registry& r);
void register_reduce_ops(Registry& r);
void register_shape_ops(Registry& r);
void register_index_ops(Registry& r);
void register_linalg_ops(Registry& r);
void register_activation_ops(Registry& r);
void register_loss_ops(Registry& r);
void register_conv_ops(Registry& r);
void register_pool_ops(Registry& r);
void register_norm_ops(Registry& r);
void register_attention_ops(Registry& r);
void register_embedding_ops(Registry& r);
void register_control_ops(Registry& r);
void register_random_ops(Registry& r);
void register_optimizer_ops(Registry& r);

void register_all_ops(Registry& r);

}  // namespace bprop
