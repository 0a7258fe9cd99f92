// A program outside bprop's tree built against the installed package (install_and_use.cmake checks what it prints).
// It uses both libraries and what they link: the core's autodiff; bprop::native's IDX files (zlib), models and
// bprop::dist (whose object files call MPI when the build has it). Exit status 1 when a value is wrong.
#include <bprop/bprop.h>
#include <bprop/dist.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "data/idx.h"  // bprop::native's headers, included as in the source tree
#include "models/models.h"

int main() {
  using namespace bprop;
  int wrong = 0;

  // d/dx x^3 = 3x^2 = 12 at x = 2.
  const Fn cube = [](const std::vector<Tensor>& a) -> Value { return a[0] * a[0] * a[0]; };
  const double d = grad(cube)({scalar(2.0)}).tensor().item();
  std::printf("grad of x^3 at 2: %g\n", d);
  if (d != 12.0) wrong = 1;

  // A gzip'd IDX file written and read back.
  const std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6};
  data::write_idx("consumer-idx3-ubyte.gz", {1, 2, 3}, bytes, /*gzip=*/true);
  const data::IdxArray back = data::read_idx("consumer-idx3-ubyte.gz", 3);
  const bool idx_ok = back.dims == std::vector<int64_t>{1, 2, 3} && back.data == bytes;
  std::printf("idx round trip: %s\n", idx_ok ? "ok" : "wrong");
  if (!idx_ok) wrong = 1;

  // Layers 784-256, 256-128, 128-10 with biases.
  const int64_t params = models::parameter_count(*models::make_model("mlp"));
  std::printf("mlp parameters: %lld\n", static_cast<long long>(params));
  if (params != 235146) wrong = 1;

  // One process: an allreduce leaves the tensor as it is.
  dist::init(dist::Backend::Local);
  Tensor t = tensor({1.0, 2.0}, {2});
  dist::allreduce({t}, dist::ReduceOp::Sum);
  const bool dist_ok = dist::size() == 1 && t.to_vector<double>() == std::vector<double>{1.0, 2.0};
  std::printf("dist: %s (MPI built: %s): %s\n", dist::describe().c_str(), dist::mpi_built() ? "yes" : "no",
              dist_ok ? "ok" : "wrong");
  if (!dist_ok) wrong = 1;
  dist::finalize();
  return wrong;
}
