// A primitive registered at run time with its forward kernel, shape/dtype rules and bprop: grad at x = 4.
#include <cstdio>

#include "seed_examples.h"

int main(int argc, char** argv) {
  examples::set_mode_from_args(argc, argv);
  using namespace bprop;
  examples::register_my_square_prim();
  const Tensor x = scalar(4.0);
  const Fn f = [](const std::vector<Tensor>& a) -> Value { return call_op("my_square_prim", {a[0]}); };
  std::printf("my_square_prim(4)      = %g\n", f({x}).tensor().item());
  std::printf("grad my_square_prim(4) = %g\n", grad(f)({x}).tensor().item());
}
