// Which images each rank trains on. Every rank draws the same seeded shuffle of the epoch (the one the
// one-process trainer uses), cuts it into global batches exactly as that trainer does (the last one may be
// short), and takes its own contiguous slice of each: the slices of one batch are disjoint and cover it, so the
// ranks together see the epoch once, batch by batch, and the global batch means what it means in one process.
#pragma once
#include <cstdint>
#include <vector>

namespace bprop::dist {

/// The seeded Fisher-Yates shuffle of 0..count-1 for `epoch` (from 1): the same on every rank and platform.
std::vector<int64_t> epoch_order(int64_t count, uint64_t seed, int64_t epoch);

class DistributedSampler {
 public:
  /// ValueError when count < 1, global_batch < 1, world < 1 or rank outside [0, world).
  DistributedSampler(int64_t count, int64_t global_batch, int rank, int world, uint64_t seed);

  /// Reshuffles for `epoch` (from 1).
  void set_epoch(int64_t epoch);
  /// Global batches per epoch: ceil(count / global_batch).
  int64_t batches() const { return (count_ + batch_ - 1) / batch_; }
  /// Images in global batch b (every rank together); only the last one may be short.
  int64_t global_count(int64_t b) const;
  /// This rank's images of global batch b: [rank * n / world, (rank + 1) * n / world) of it (may be empty
  /// when the batch has fewer images than there are ranks).
  std::vector<int64_t> local_indices(int64_t b) const;
  /// Every image this rank sees in the epoch, batch by batch.
  std::vector<int64_t> shard() const;

  int rank() const { return rank_; }
  int world() const { return world_; }

 private:
  int64_t count_, batch_;
  int rank_, world_;
  uint64_t seed_;
  std::vector<int64_t> order_;
};

}  // namespace bprop::dist
