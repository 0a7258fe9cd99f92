#include "ascend/backend.h"
#include "train_setup.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <system_error>

#include "bprop/context.h"
#include "bprop/dist.h"
#include "kernels/cpu/parallel.h"

namespace bprop::cli {

bool checkpoint_directory_exists(const std::string& out_path) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::absolute(out_path, ec).parent_path();
  if (std::filesystem::is_directory(parent, ec)) return true;
  std::cerr << "bprop train: cannot write the checkpoint '" << out_path << "': directory '" << parent.string()
            << "' does not exist\n";
  return false;
}

bool start_data_parallel(int64_t* threads) {
  try {
    const bool npu = get_context().device.backend == ascend::backend();
    dist::init(dist::mpi_built() ? dist::Backend::Auto : npu ? dist::Backend::HCCL : dist::Backend::MPI);
  } catch (const Error& e) {
    std::cerr << "bprop train: " << e.what() << "\n";
    return false;
  }
  if (*threads == 0) {
    // Ranks on one host share its cores.
    int local = 1;
    if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) local = std::max(1, std::atoi(v));
    *threads = std::max(1, cpu::num_threads() / local);
  }
  return true;
}

}  // namespace bprop::cli
