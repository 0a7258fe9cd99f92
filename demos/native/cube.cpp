// Automatic bprop: x^3 and its first three derivatives at x = 2 by nesting grad.
#include <cstdio>

#include "seed_examples.h"

int main(int argc, char** argv) {
  examples::set_mode_from_args(argc, argv);
  using namespace bprop;
  const Tensor x = scalar(2.0);
  const Fn d1 = [](const std::vector<Tensor>& a) { return grad(examples::cube)(a); };
  const Fn d2 = [d1](const std::vector<Tensor>& a) { return grad(d1)(a); };
  const Fn d3 = [d2](const std::vector<Tensor>& a) { return grad(d2)(a); };
  std::printf("cube(2) = %g\n", examples::cube({x}).tensor().item());
  std::printf("d/dx    = %g\n", d1({x}).tensor().item());
  std::printf("d2/dx2  = %g\n", d2({x}).tensor().item());
  std::printf("d3/dx3  = %g\n", d3({x}).tensor().item());
}
