#include "registry/register_all_ops.h"

namespace bprop {

void register_all_ops(Registry& r) {
  register_unary_ops(r);       // neg abs sign exp log ... gelu
  register_binary_ops(r);      // add sub mul div pow maximum minimum atan2 squared_difference
  register_compare_ops(r);     // equal not_equal greater greater_equal less less_equal
  register_select_ops(r);      // where clamp
  register_reduce_ops(r);      // sum mean prod amax amin logsumexp var std argmax argmin
  register_shape_ops(r);       // reshape transpose broadcast_to squeeze expand_dims concat stack tile flip pad
  register_index_ops(r);       // slice strided_slice gather (and their gradient ops)
  register_linalg_ops(r);      // matmul
  register_activation_ops(r);  // softmax log_softmax
  register_loss_ops(r);        // cross_entropy nll_loss binary_cross_entropy(_with_logits) mse l1 smooth_l1
  register_conv_ops(r);        // conv2d (and its gradient ops)
  register_pool_ops(r);        // max_pool2d avg_pool2d (and their gradient ops)
  register_norm_ops(r);        // batch_norm layer_norm
  register_attention_ops(r);   // scaled_dot_product_attention (and its gradient op)
  register_embedding_ops(r);   // embedding
  register_control_ops(r);     // stop_gradient identity cast
  register_random_ops(r);      // random_uniform random_normal dropout_mask
  register_optimizer_ops(r);   // sgd_buffer sgd_step adam_m adam_v adam_step
}

}  // namespace bprop
