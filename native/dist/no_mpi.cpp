// Built instead of mpi_comm.cpp and hccl_comm.cpp when bprop has no MPI (BPROP_MPI=OFF, or CMake found no MPI).
#include "dist/communicator.h"

namespace bprop::dist::detail {

std::unique_ptr<Communicator> make_mpi_communicator() {
  throw ValueError(
      "For 'dist.init', data parallel training needs MPI, and this bprop was built without it: install Open MPI "
      "(Debian: apt-get install openmpi-bin libopenmpi-dev), then reconfigure and rebuild (cmake -S . -B "
      "build/native -DBPROP_MPI=ON && cmake --build build/native)");
}

std::unique_ptr<Communicator> make_hccl_communicator() {
  throw ValueError(
      "For 'dist.init', HCCL needs MPI (bprop shares HCCL's root info over MPI and launches one process per NPU "
      "with mpirun), and this bprop was built without it: install Open MPI (Debian: apt-get install openmpi-bin "
      "libopenmpi-dev), then reconfigure and rebuild (cmake -S . -B build/native -DBPROP_MPI=ON && cmake --build "
      "build/native)");
}

}  // namespace bprop::dist::detail
