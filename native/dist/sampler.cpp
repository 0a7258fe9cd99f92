#include "bprop/dist/sampler.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "bprop/errors.h"
#include "bprop/random.h"

namespace bprop::dist {
namespace {

// A 64-bit mix (SplitMix64's finaliser) so neighbouring seeds and epochs give unrelated shuffles.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

std::vector<int64_t> epoch_order(int64_t count, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(count > 0 ? count : 0));
  std::iota(order.begin(), order.end(), 0);
  Random rng(mix(seed ^ mix(static_cast<uint64_t>(epoch))));
  for (size_t i = order.size(); i > 1; --i) {
    const size_t j = static_cast<size_t>(rng.next_u64() % i);
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

DistributedSampler::DistributedSampler(int64_t count, int64_t global_batch, int rank, int world, uint64_t seed)
    : count_(count), batch_(global_batch), rank_(rank), world_(world), seed_(seed) {
  if (count < 1) throw ValueError("For 'DistributedSampler', the data set holds no images");
  if (global_batch < 1) {
    throw ValueError("For 'DistributedSampler', the global batch size must be positive, got " +
                     std::to_string(global_batch));
  }
  if (world < 1 || rank < 0 || rank >= world) {
    throw ValueError("For 'DistributedSampler', rank " + std::to_string(rank) + " is not in a world of " +
                     std::to_string(world));
  }
  set_epoch(1);
}

void DistributedSampler::set_epoch(int64_t epoch) {
  if (epoch < 1) throw ValueError("For 'DistributedSampler', epochs count from 1, got " + std::to_string(epoch));
  order_ = epoch_order(count_, seed_, epoch);
}

int64_t DistributedSampler::global_count(int64_t b) const {
  if (b < 0 || b >= batches()) {
    throw ValueError("For 'DistributedSampler', batch " + std::to_string(b) + " is not in [0, " +
                     std::to_string(batches()) + ")");
  }
  return std::min(batch_, count_ - b * batch_);
}

std::vector<int64_t> DistributedSampler::local_indices(int64_t b) const {
  const int64_t n = global_count(b);
  const int64_t begin = b * batch_ + rank_ * n / world_;
  const int64_t end = b * batch_ + (rank_ + 1) * n / world_;
  return {order_.begin() + begin, order_.begin() + end};
}

std::vector<int64_t> DistributedSampler::shard() const {
  std::vector<int64_t> out;
  for (int64_t b = 0; b < batches(); ++b) {
    const auto part = local_indices(b);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace bprop::dist
