// bprop::dist: collectives over the processes of one training job (MPI; HCCL for tensors on Ascend NPUs), or
// over this process alone when no launcher started it. The implementation is native-only (native/dist/); the
// WebAssembly build has none.
//
//   dist::init();                       // MPI under mpirun / srun (with MPI built in), else one process;
//                                       // HCCL + MPI when the context's device is an Ascend NPU
//   dist::allreduce({g}, dist::ReduceOp::Mean);
//   dist::broadcast(model_params, 0);
//   dist::finalize();
//
// Every collective waits under a watchdog (dist::set_timeout, default 300 s, env BPROP_DIST_TIMEOUT): a
// collective that makes no progress for that long stops the whole job with a message naming this rank and the
// collective, instead of hanging. Data parallel training is in bprop/dist/data_parallel.h.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bprop/dtype.h"
#include "bprop/tensor.h"

namespace bprop::dist {

enum class ReduceOp { Sum, Mean, Max, Min };

/// Which implementation to run: Auto picks MPI when a launcher started the process (OMPI_COMM_WORLD_SIZE,
/// PMI_SIZE, PMIX_RANK or PMI_RANK set) — HCCL instead when the context's device (bprop::set_context) is an
/// Ascend NPU — else Local. HCCL binds each rank to NPU (local rank mod the device count), makes that the
/// context's device, and reduces device tensors there in place on the device's stream; host tensors, float64
/// (HCCL reduces none) and the start-up exchange go through MPI (docs/distributed.md).
enum class Backend { Auto, Local, MPI, HCCL };

/// True when this build has the MPI implementation (CMake found MPI and BPROP_MPI is ON).
bool mpi_built();
/// The launcher variable that says this process was started by mpirun / srun (empty when none is set).
std::string launcher_variable();

/// Starts the chosen implementation (once; a second call with the same choice does nothing). ValueError when
/// MPI or HCCL is asked for, or Auto finds a launcher's variables, in a build without MPI: the message says to
/// install libopenmpi-dev and rebuild; for HCCL also when CANN's libhccl.so or the NPU runtime does not load.
void init(Backend backend = Backend::Auto);
bool initialized();
/// "mpi", "hccl" or "local" (init must have run).
std::string backend_name();
/// One line for logs: "MPI (Open MPI v4.1.4), rank 0 of 4", "HCCL on ascend:1 (2 devices), rank 1 of 2; ..." or
/// "one process (no MPI launcher detected)".
std::string describe();
int rank();
int size();

/// Reduces each tensor in place over all ranks (every rank passes the same count, shapes and dtypes, in the
/// same order). Mean divides the sum by size() (float dtypes only). Tensors may live on a device: with HCCL on
/// theirs they are reduced there; otherwise they travel through a host copy.
void allreduce(const std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::Sum);
/// Copies root's values into each tensor on every other rank, in place.
void broadcast(const std::vector<Tensor>& tensors, int root = 0);
void barrier();
/// Ends the implementation (collectives are errors afterwards). Safe to call when not initialised.
void finalize();
/// Stops every rank of the job: prints "bprop dist: rank R: <why>" on stderr and aborts through the launcher
/// (MPI_Abort), or exits with `code` in one process.
[[noreturn]] void abort(int code, const std::string& why);

/// Seconds a collective may go without progress before the job is aborted (<= 0: wait forever).
void set_timeout(double seconds);
double timeout();

/// An allreduce in flight (dist::allreduce_async). test() drives it and says whether it has finished; wait()
/// blocks under the watchdog. The buffer must stay alive and untouched until it has finished.
class Work {
 public:
  virtual ~Work() = default;
  virtual bool test() = 0;
  void wait();
  /// What it is, for the watchdog's message ("allreduce of 6422528 bytes").
  virtual std::string what() const = 0;
};

/// Starts an in-place Sum / Max / Min allreduce of `count` elements of `dtype` at `data` (host memory).
std::unique_ptr<Work> allreduce_async(void* data, int64_t count, DType dtype, ReduceOp op);
/// The same for a whole tensor, on the host or a device (as allreduce): with HCCL on its device it is queued on
/// the device's stream; otherwise a device tensor is copied to the host now and back once reduced.
std::unique_ptr<Work> allreduce_async(const Tensor& buffer, ReduceOp op);

}  // namespace bprop::dist
