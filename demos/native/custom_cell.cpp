// A Cell with a custom bprop (MindSpore's Cell.bprop): MySquare at x = 3.
#include <cstdio>

#include "seed_examples.h"

int main(int argc, char** argv) {
  examples::set_mode_from_args(argc, argv);
  using namespace bprop;
  examples::MySquare net;
  const Tensor x = scalar(3.0);
  const Fn f = [&net](const std::vector<Tensor>& a) -> Value { return net(a[0]); };
  std::printf("MySquare(3)      = %g\n", net(x).item());
  std::printf("grad MySquare(3) = %g  (from the custom bprop 2 * x * dout)\n", grad(f)({x}).tensor().item());
}
