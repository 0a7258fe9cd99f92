// DistributedSampler: for 1..5 ranks and odd data set sizes, the ranks' slices of every global batch are
// disjoint and cover it, so the shards together are the epoch's shuffle exactly once; every rank draws the same
// shuffle; the batches are the one-process trainer's (the last one short).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "bprop/dist/sampler.h"
#include "bprop/errors.h"

using bprop::dist::DistributedSampler;

TEST(DistributedSampler, ShardsAreDisjointAndCoverEveryBatch) {
  for (int64_t count : {1, 2, 7, 13, 61, 100, 257}) {
    for (int64_t batch : {1, 3, 8, 64}) {
      for (int world = 1; world <= 5; ++world) {
        for (int64_t epoch : {1, 2}) {
          const std::vector<int64_t> order = bprop::dist::epoch_order(count, 7, epoch);
          std::vector<DistributedSampler> ranks;
          for (int r = 0; r < world; ++r) {
            ranks.emplace_back(count, batch, r, world, 7);
            ranks.back().set_epoch(epoch);
          }
          const int64_t batches = ranks[0].batches();
          ASSERT_EQ(batches, (count + batch - 1) / batch);
          std::vector<int64_t> seen;
          for (int64_t b = 0; b < batches; ++b) {
            const int64_t n = ranks[0].global_count(b);
            ASSERT_EQ(n, std::min(batch, count - b * batch)) << "count " << count << " batch " << batch;
            // Concatenating the ranks' slices in rank order gives the batch of the one-process order.
            std::vector<int64_t> joined;
            for (int r = 0; r < world; ++r) {
              const auto part = ranks[static_cast<size_t>(r)].local_indices(b);
              // Balanced: slices differ by at most one image.
              EXPECT_LE(static_cast<int64_t>(part.size()), n / world + 1);
              EXPECT_GE(static_cast<int64_t>(part.size()), n / world);
              joined.insert(joined.end(), part.begin(), part.end());
            }
            const std::vector<int64_t> expect(order.begin() + b * batch, order.begin() + b * batch + n);
            ASSERT_EQ(joined, expect) << "count " << count << " batch " << batch << " world " << world << " b " << b;
            seen.insert(seen.end(), joined.begin(), joined.end());
          }
          // Disjoint and covering: every index exactly once over the epoch.
          std::sort(seen.begin(), seen.end());
          std::vector<int64_t> all(static_cast<size_t>(count));
          for (int64_t i = 0; i < count; ++i) all[static_cast<size_t>(i)] = i;
          ASSERT_EQ(seen, all) << "count " << count << " batch " << batch << " world " << world;
          // The shards are pairwise disjoint and their sizes add up.
          std::set<int64_t> shard_union;
          size_t total = 0;
          for (const auto& s : ranks) {
            const auto shard = s.shard();
            total += shard.size();
            shard_union.insert(shard.begin(), shard.end());
          }
          EXPECT_EQ(total, static_cast<size_t>(count));
          EXPECT_EQ(shard_union.size(), static_cast<size_t>(count));
        }
      }
    }
  }
}

TEST(DistributedSampler, EpochsShuffleDifferentlyAndIdenticallyOnEveryRank) {
  const auto e1 = bprop::dist::epoch_order(1000, 3, 1);
  EXPECT_EQ(e1, bprop::dist::epoch_order(1000, 3, 1));
  EXPECT_NE(e1, bprop::dist::epoch_order(1000, 3, 2));
  EXPECT_NE(e1, bprop::dist::epoch_order(1000, 4, 1));
  std::vector<int64_t> sorted = e1;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<size_t>(i)], i);
}

TEST(DistributedSampler, ShortLastBatchCanLeaveARankEmpty) {
  // 9 images, batch 4: batches of 4, 4, 1; with 3 ranks the last one goes to rank 2 alone.
  std::vector<size_t> sizes;
  for (int r = 0; r < 3; ++r) sizes.push_back(DistributedSampler(9, 4, r, 3, 0).local_indices(2).size());
  EXPECT_EQ(sizes, (std::vector<size_t>{0, 0, 1}));
}

TEST(DistributedSampler, BadArgumentsAreValueErrors) {
  EXPECT_THROW(DistributedSampler(0, 4, 0, 1, 0), bprop::ValueError);
  EXPECT_THROW(DistributedSampler(10, 0, 0, 1, 0), bprop::ValueError);
  EXPECT_THROW(DistributedSampler(10, 4, 2, 2, 0), bprop::ValueError);
  EXPECT_THROW(DistributedSampler(10, 4, -1, 2, 0), bprop::ValueError);
  EXPECT_THROW(DistributedSampler(10, 4, 0, 2, 0).local_indices(3), bprop::ValueError);
}
