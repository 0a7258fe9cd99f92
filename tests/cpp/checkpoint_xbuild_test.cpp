// Checkpoints across builds: tests/data/checkpoints/golden_net.safetensors is written by this native build
// from a fixed seeded model. This test checks that the native build still writes it byte for byte and reads
// it back exactly; tests/js/checkpoint.test.mjs builds the same model in WebAssembly and checks the same two
// things there. Together: a file written natively loads in JavaScript and the reverse, with identical weights.
//
// Regenerate the file after an intended change of the model or the format with
//   BPROP_UPDATE_GOLDEN=1 ./bprop_tests --gtest_filter='CheckpointCrossBuild.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bprop/bprop.h"

using namespace bprop;

namespace {

constexpr uint64_t kGoldenSeed = 2024;
const CheckpointMetadata kMetadata{{"format", "bprop-golden"}, {"model", "GoldenNet"}};

std::string golden_path() { return std::string(BPROP_SOURCE_DIR) + "/tests/data/checkpoints/golden_net.safetensors"; }

/// Every dtype a checkpoint holds (F32, F64, I32, BOOL), parameters of the cell itself and of sub-cells,
/// BatchNorm state, and the initialisers Dense, Embedding and xavier_uniform draw from. The JavaScript test
/// builds the same cell from the same seed: keep the two in step.
class GoldenNet : public Cell {
 public:
  explicit GoldenNet(uint64_t seed) {
    nn::set_seed(seed);
    scale = register_parameter("scale", Parameter(tensor({1.5, -2.25}, {2}, DType::Float64), "scale"));
    steps = register_parameter("steps", Parameter(tensor_i32({3, -7, 11}, {3}), "steps", false));
    mask = register_parameter("mask", Parameter(tensor_bool({true, false, true, true}, {2, 2}), "mask", false));
    fc1 = register_cell("fc1", std::make_shared<nn::Dense>(3, 4));
    bn = register_cell("bn", std::make_shared<nn::BatchNorm1d>(4));
    fc2 = register_cell("fc2", std::make_shared<nn::Dense>(4, 2, nn::DenseOptions{.weight_init = "xavier_uniform",
                                                                                  .bias_init = "zeros",
                                                                                  .dtype = DType::Float64}));
    emb = register_cell("emb", std::make_shared<nn::Embedding>(5, 2));
  }
  Value construct(const std::vector<Tensor>& inputs) override { return (*fc1)(inputs); }

  Parameter scale, steps, mask;
  std::shared_ptr<nn::Dense> fc1, fc2;
  std::shared_ptr<nn::BatchNorm1d> bn;
  std::shared_ptr<nn::Embedding> emb;
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool update_requested() {
  const char* v = std::getenv("BPROP_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace

TEST(CheckpointCrossBuild, NativeWritesTheGoldenFileByteForByte) {
  const GoldenNet net(kGoldenSeed);
  const std::vector<uint8_t> bytes = save_checkpoint_bytes(net, kMetadata);
  if (update_requested()) save_checkpoint(net, golden_path(), kMetadata);
  const std::vector<uint8_t> golden = read_bytes(golden_path());
  ASSERT_FALSE(golden.empty()) << golden_path() << " is missing: run this test with BPROP_UPDATE_GOLDEN=1";
  EXPECT_EQ(bytes.size(), golden.size());
  EXPECT_TRUE(bytes == golden) << "the native build no longer writes " << golden_path() << " byte for byte";
}

TEST(CheckpointCrossBuild, GoldenFileLayout) {
  const std::vector<uint8_t> golden = read_bytes(golden_path());
  ASSERT_GE(golden.size(), 8u);
  uint64_t n = 0;
  std::memcpy(&n, golden.data(), 8);
  ASSERT_EQ(n % 8, 0u);
  ASSERT_LE(8 + n, golden.size());
  const auto header = nlohmann::ordered_json::parse(golden.begin() + 8, golden.begin() + 8 + static_cast<long>(n));
  const std::vector<std::string> names = {"__metadata__", "scale",   "steps",          "mask",
                                          "fc1.weight",   "fc1.bias", "bn.gamma",       "bn.beta",
                                          "bn.moving_mean", "bn.moving_variance", "fc2.weight", "fc2.bias",
                                          "emb.embedding_table"};
  std::vector<std::string> got;
  for (const auto& [k, v] : header.items()) got.push_back(k);
  EXPECT_EQ(got, names);
  EXPECT_EQ(header["__metadata__"]["format"], "bprop-golden");
  EXPECT_EQ(header["scale"]["dtype"], "F64");
  EXPECT_EQ(header["steps"]["dtype"], "I32");
  EXPECT_EQ(header["mask"]["dtype"], "BOOL");
  EXPECT_EQ(header["fc1.weight"]["dtype"], "F32");
  EXPECT_EQ(header["fc1.weight"]["shape"], nlohmann::json::array({4, 3}));
  EXPECT_EQ(header["fc2.weight"]["dtype"], "F64");
  EXPECT_EQ(header["emb.embedding_table"]["shape"], nlohmann::json::array({5, 2}));
  EXPECT_EQ(header["emb.embedding_table"]["data_offsets"][1].get<uint64_t>(), golden.size() - 8 - n);
}

TEST(CheckpointCrossBuild, NativeReadsTheGoldenFileIntoAFreshModel) {
  GoldenNet net(7);  // other weights
  net.scale.assign(zeros({2}, DType::Float64));
  net.steps.assign(zeros({3}, DType::Int32));
  net.mask.assign(zeros({2, 2}, DType::Bool));
  ASSERT_FALSE(save_checkpoint_bytes(net, kMetadata) == read_bytes(golden_path()));
  EXPECT_TRUE(load_checkpoint(net, golden_path()).empty());
  EXPECT_TRUE(save_checkpoint_bytes(net, kMetadata) == read_bytes(golden_path()));
  EXPECT_EQ(net.scale.to_vector<double>(), (std::vector<double>{1.5, -2.25}));
  EXPECT_EQ(net.steps.to_vector<double>(), (std::vector<double>{3, -7, 11}));
  EXPECT_EQ(net.mask.to_vector<double>(), (std::vector<double>{1, 0, 1, 1}));
  const GoldenNet reference(kGoldenSeed);
  const auto want = reference.parameters_and_names();
  const auto got = net.parameters_and_names();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first);
    ASSERT_EQ(got[i].second.nbytes(), want[i].second.nbytes());
    EXPECT_EQ(std::memcmp(got[i].second.raw_data(), want[i].second.raw_data(), got[i].second.nbytes()), 0)
        << got[i].first;
  }
}

TEST(CheckpointCrossBuild, TheSeedDeterminesTheWeights) {
  const GoldenNet a(kGoldenSeed), b(kGoldenSeed), c(kGoldenSeed + 1);
  EXPECT_TRUE(save_checkpoint_bytes(a) == save_checkpoint_bytes(b));
  EXPECT_FALSE(save_checkpoint_bytes(a) == save_checkpoint_bytes(c));
}
