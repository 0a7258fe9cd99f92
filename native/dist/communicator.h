// The collective interface one implementation provides (internal to native/dist): non-blocking operations
// only, so that dist.cpp can wait on every one of them under the same watchdog.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "bprop/dist.h"

namespace bprop::dist::detail {

/// An operation in flight; test() makes progress and returns true once it has finished.
class Request {
 public:
  virtual ~Request() = default;
  virtual bool test() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string name() const = 0;         // "mpi", "hccl", "local"
  virtual std::string description() const = 0;  // for the start-up line
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// In place; op is Sum, Max or Min (Mean is a Sum divided afterwards).
  virtual std::unique_ptr<Request> iallreduce(void* data, int64_t count, DType dtype, ReduceOp op) = 0;
  virtual std::unique_ptr<Request> ibroadcast(void* data, int64_t bytes, int root) = 0;
  virtual std::unique_ptr<Request> ibarrier() = 0;
  /// True when the *_device collectives below take memory of `device` (HCCL on its NPU); `reduce`: for an
  /// allreduce of `dtype` (a broadcast moves bytes). Everything else goes through host memory.
  virtual bool on_device(Device device, DType dtype, bool reduce) const {
    (void)device, (void)dtype, (void)reduce;
    return false;
  }
  /// In place in device memory, queued on the device's stream (only where on_device says so).
  virtual std::unique_ptr<Request> iallreduce_device(Device device, void* data, int64_t count, DType dtype,
                                                     ReduceOp op);
  virtual std::unique_ptr<Request> ibroadcast_device(Device device, void* data, int64_t bytes, int root);
  virtual void finalize() = 0;
  [[noreturn]] virtual void abort(int code) = 0;
};

std::unique_ptr<Communicator> make_local_communicator();
/// MPI_Init and MPI_COMM_WORLD; in a build without MPI, a ValueError saying how to get it.
std::unique_ptr<Communicator> make_mpi_communicator();
/// HCCL on this rank's NPU (local rank mod the device count) for device tensors, over MPI for the rest (and for
/// sharing HCCL's root info); in a build without MPI, a ValueError saying HCCL needs it.
std::unique_ptr<Communicator> make_hccl_communicator();

}  // namespace bprop::dist::detail
