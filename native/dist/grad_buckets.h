// Gradient buckets of DataParallel: which parameters share a bucket, copying each final gradient in, starting a
// bucket's allreduce as soon as it is full (in bucket order, the same on every rank: MPI and HCCL need collectives
// started in one order everywhere), and the reduced gradients as views into the buckets. A bucket lives on its
// parameters' device: on an NPU with HCCL it is reduced there, in place, on the device's stream.
#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include "bprop/dist.h"
#include "bprop/dist/data_parallel.h"
#include "bprop/grad.h"

namespace bprop::dist::detail {

class GradBuckets {
 public:
  using Clock = std::chrono::steady_clock;

  /// Buckets of at most `bucket_bytes` (at least one parameter each) over `params` in reverse order, one dtype
  /// and one device per bucket.
  GradBuckets(const std::vector<Parameter>& params, int64_t bucket_bytes);

  size_t size() const { return buckets_.size(); }
  /// Forgets the previous step; timings count from t0.
  void begin_step(Clock::time_point t0);
  /// Parameter i's final gradient: copied into its bucket; full buckets start reducing.
  void add(size_t i, const Tensor& grad);
  /// Zeros for every parameter not added yet (a rank with no images in this batch).
  void add_missing_zeros();
  /// Waits for every bucket (ValueError if a parameter's gradient never came). Afterwards gradients() holds the
  /// sums over the ranks.
  void finish();
  /// Each parameter's summed gradient: a view into its bucket (valid until the next begin_step).
  const std::vector<Tensor>& gradients() const { return views_; }
  const std::vector<BucketTiming>& timings() const { return timings_; }

 private:
  struct Bucket {
    DType dtype;
    Device device;
    std::vector<size_t> params;
    int64_t numel = 0;
    Tensor buffer;
    size_t pending = 0;
    std::unique_ptr<Work> work;
    size_t timing = 0;  // index into timings_
  };
  void launch_ready();
  void poll();
  double now() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }

  std::vector<Parameter> params_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;   // per parameter
  std::vector<Tensor> views_;       // per parameter: its part of its bucket, in its shape
  std::vector<bool> added_;
  size_t next_launch_ = 0;
  std::vector<BucketTiming> timings_;
  Clock::time_point t0_;
};

}  // namespace bprop::dist::detail
