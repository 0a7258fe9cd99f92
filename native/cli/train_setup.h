// Steps `bprop train` takes before training, for every model (classifiers and the GPT).
#pragma once
#include <cstdint>
#include <string>

namespace bprop::cli {

/// True when the checkpoint can be written at `out_path` (its directory exists); otherwise says why on stderr.
bool checkpoint_directory_exists(const std::string& out_path);

/// Starts bprop::dist for --data-parallel: MPI (HCCL under a launcher with an NPU device); a build without MPI asks
/// for MPI (HCCL on an NPU) so that the error says how to get it. With *threads 0, sets it to this host's cores
/// divided by the ranks on it. False (the error on stderr) when it cannot start.
bool start_data_parallel(int64_t* threads);

}  // namespace bprop::cli
