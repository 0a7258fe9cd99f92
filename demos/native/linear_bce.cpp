// MindSpore's functional grad example: gradients of a linear layer + bce_with_logits w.r.t. w and b
// (grad_position (2, 3)), the same behind stop_gradient, and has_aux returning the logits.
#include <iostream>

#include "seed_examples.h"

int main(int argc, char** argv) {
  examples::set_mode_from_args(argc, argv);
  using namespace bprop;
  const std::vector<Tensor> args = {ones({5}), zeros({3}), randn({5, 3}, 7), randn({3}, 8)};
  const Value g = grad(examples::linear_bce, {2, 3})(args);
  std::cout << "loss = " << examples::linear_bce(args).tensor().item() << "\n";
  std::cout << "dw = " << g[0].tensor() << "\ndb = " << g[1].tensor() << "\n";
  const Value gs = grad(examples::linear_bce_stopped, {2, 3})(args);
  std::cout << "with stop_gradient: dw = " << gs[0].tensor() << "\n";
  const Value ga = grad(examples::linear_bce_with_logits, {2, 3}, {}, true)(args);
  std::cout << "has_aux: db = " << ga[0][1].tensor() << ", logits = " << ga[1].tensor() << "\n";
}
