// Every value case of the shared vectors (tests/vectors/*.json) computed eagerly and through jit (program and
// gradient computations traced into graphs, then replayed): the results must be bit-identical, first and second
// order, since the replay runs the same kernels on the same inputs in the same order.
#include <gtest/gtest.h>

#include <filesystem>

#include "bprop/vectors.h"
#include "same_bits.h"

using namespace bprop;

namespace {

using bitwise::same_bits;

}  // namespace

TEST(JitVectors, EveryValueCaseIsBitIdenticalToEager) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(BPROP_SOURCE_DIR "/tests/vectors")) {
    const vectors::VectorFile file = vectors::load_file_strict(entry.path().string());
    for (const vectors::Case& c : file.cases) {
      if (c.expects_error()) continue;
      SCOPED_TRACE(entry.path().filename().string() + ": " + c.name);
      const vectors::Computed eager = vectors::compute(c, false), traced = vectors::compute(c, true);
      EXPECT_TRUE(same_bits(traced.value, eager.value)) << traced.value.to_string() << " vs " << eager.value.to_string();
      EXPECT_TRUE(same_bits(traced.grads, eager.grads));
      EXPECT_TRUE(same_bits(traced.second, eager.second));
      ++cases;
    }
  }
  EXPECT_GT(cases, 300);
}

TEST(JitVectors, EveryCasePassesThroughJit) {
  for (const auto& entry : std::filesystem::directory_iterator(BPROP_SOURCE_DIR "/tests/vectors")) {
    const vectors::FileSummary s = vectors::run_file(vectors::load_file_strict(entry.path().string()), true);
    for (const auto& r : s.results) EXPECT_TRUE(r.passed) << entry.path().filename().string() << ": " << vectors::describe(r);
  }
}
