// safetensors checkpoints: byte-exact round trips, the file layout, files written by other tools, and every
// error path leaving the model unchanged.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bprop/bprop.h"
#include "nn_test_util.h"
#include "same_bits.h"

using namespace bprop;
using namespace nntest;

namespace {

std::shared_ptr<SequentialCell> make_model(uint64_t seed) {
  nn::set_seed(seed);
  return std::make_shared<SequentialCell>(
      std::vector<std::shared_ptr<Cell>>{std::make_shared<nn::Dense>(4, 8), std::make_shared<nn::BatchNorm1d>(8),
                                         std::make_shared<nn::ReLU>(), std::make_shared<nn::Dense>(8, 3)});
}

// A model whose BatchNorm statistics moved away from their initial values.
std::shared_ptr<SequentialCell> trained_model() {
  auto m = make_model(1);
  auto with_loss = std::make_shared<nn::WithLossCell>(m, std::make_shared<nn::CrossEntropyLoss>());
  nn::TrainOneStepCell step(with_loss, std::make_shared<optim::Adam>(m->trainable_params(), 0.01));
  step.step({randn({6, 4}, 5), tensor_i32({0, 1, 2, 0, 1, 2}, {6})});
  return m;
}

// Paths in the test temporary directory, removed when the test ends.
struct TempFiles {
  std::vector<std::string> paths;
  std::string operator()(const std::string& name) {
    paths.push_back(::testing::TempDir() + "bprop_nn_" + name + ".safetensors");
    return paths.back();
  }
  ~TempFiles() {
    for (const auto& p : paths) std::remove(p.c_str());
  }
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A safetensors file from a header text and raw data, as any writer lays it out.
std::vector<uint8_t> build_file(const std::string& header, const std::vector<uint8_t>& data) {
  const uint64_t n = header.size();
  std::vector<uint8_t> out(8 + header.size() + data.size());
  std::memcpy(out.data(), &n, 8);
  if (!header.empty()) std::memcpy(out.data() + 8, header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + 8 + header.size(), data.data(), data.size());
  return out;
}

template <typename T>
void append_raw(std::vector<uint8_t>& data, std::initializer_list<T> values) {
  for (T v : values) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    data.insert(data.end(), b, b + sizeof(T));
  }
}

NamedTensors tensors_of(const Cell& cell) {
  NamedTensors out;
  for (const auto& [n, p] : cell.parameters_and_names()) out.emplace_back(n, p.clone());
  return out;
}

}  // namespace

TEST(NnCheckpoint, RoundTripIsByteExact) {
  TempFiles tmp;
  auto model = trained_model();
  const std::string path = tmp("roundtrip");
  save_checkpoint(*model, path, {{"framework", "bprop"}, {"epoch", "1"}});
  const std::vector<uint8_t> first = read_bytes(path);
  EXPECT_EQ(first, save_checkpoint_bytes(*model, {{"framework", "bprop"}, {"epoch", "1"}}));

  auto fresh = make_model(99);
  EXPECT_FALSE(bitwise::same_bits(fresh->parameters_and_names()[0].second, model->parameters_and_names()[0].second));
  EXPECT_TRUE(load_checkpoint(*fresh, path).empty());
  const auto a = model->parameters_and_names(), b = fresh->parameters_and_names();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(bitwise::same_bits(a[i].second, b[i].second)) << a[i].first;
  EXPECT_NE(fresh->parameters_and_names()[2].second.to_vector<double>(), std::vector<double>(8, 1.0));  // gamma moved
  EXPECT_NE(b[4].first.find("moving_mean"), std::string::npos);

  // Saving the loaded model gives the same bytes; the same output in eval mode.
  save_checkpoint(*fresh, tmp("roundtrip2"));
  EXPECT_EQ(read_bytes(tmp("roundtrip2")).size(), save_checkpoint_bytes(*fresh).size());
  EXPECT_EQ(save_checkpoint_bytes(*fresh, {{"framework", "bprop"}, {"epoch", "1"}}), first);
  model->set_train(false);
  fresh->set_train(false);
  const Tensor x = randn({3, 4}, 8);
  EXPECT_EQ((*model)(x).to_vector<double>(), (*fresh)(x).to_vector<double>());

  const Checkpoint ck = load_checkpoint(path);
  EXPECT_EQ(ck.metadata.at("framework"), "bprop");
  EXPECT_EQ(ck.metadata.at("epoch"), "1");
  ASSERT_EQ(ck.tensors.size(), a.size());
  EXPECT_EQ(ck.tensors[0].first, "0.weight");  // file order is the model's order
}

TEST(NnCheckpoint, LayoutFollowsTheSafetensorsFormat) {
  const Tensor w = f64({1.5, -2.0, 0.25}, {3});
  const Tensor i = tensor_i32({7, -8}, {2, 1});
  const Tensor m = tensor_bool({true, false, true}, {3});
  const Tensor f = tensor({0.5, 1.0}, {2});
  const std::vector<uint8_t> bytes = save_checkpoint_bytes({{"w", w}, {"i", i}, {"m", m}, {"f", f}}, {{"k", "v"}});
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ((8 + n) % 8, 0u);  // data starts 8-byte aligned
  const std::string text(reinterpret_cast<const char*>(bytes.data() + 8), n);
  const auto header = nlohmann::json::parse(text);
  EXPECT_EQ(header["__metadata__"]["k"], "v");
  EXPECT_EQ(header["w"]["dtype"], "F64");
  EXPECT_EQ(header["w"]["shape"], nlohmann::json::array({3}));
  EXPECT_EQ(header["w"]["data_offsets"], nlohmann::json::array({0, 24}));
  EXPECT_EQ(header["i"]["dtype"], "I32");
  EXPECT_EQ(header["i"]["data_offsets"], nlohmann::json::array({24, 32}));
  EXPECT_EQ(header["m"]["dtype"], "BOOL");
  EXPECT_EQ(header["m"]["data_offsets"], nlohmann::json::array({32, 35}));
  EXPECT_EQ(header["f"]["dtype"], "F32");
  EXPECT_EQ(header["f"]["data_offsets"], nlohmann::json::array({35, 43}));
  ASSERT_EQ(bytes.size(), 8 + n + 43);
  const uint8_t* data = bytes.data() + 8 + n;
  EXPECT_EQ(std::memcmp(data, w.raw_data(), 24), 0);
  EXPECT_EQ(std::memcmp(data + 24, i.raw_data(), 8), 0);
  EXPECT_EQ(data[32], 1);
  EXPECT_EQ(data[33], 0);
  float f0 = 0;
  std::memcpy(&f0, data + 35, 4);
  EXPECT_EQ(f0, 0.5f);

  const Checkpoint ck = load_checkpoint_bytes(bytes);
  ASSERT_EQ(ck.tensors.size(), 4u);
  EXPECT_TRUE(bitwise::same_bits(*ck.find("w"), w));
  EXPECT_TRUE(bitwise::same_bits(*ck.find("i"), i));
  EXPECT_EQ(ck.find("m")->to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 1}));
  EXPECT_TRUE(bitwise::same_bits(*ck.find("f"), f));
  EXPECT_EQ(ck.find("nope"), nullptr);
}

TEST(NnCheckpoint, ReadsFilesFromOtherWriters) {
  TempFiles tmp;
  // The deserialisation example of the safetensors library's own tests: a 60-byte header, I32 zeros.
  std::vector<uint8_t> data(16, 0);
  const std::vector<uint8_t> lib = build_file(R"({"test":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}})", data);
  ASSERT_EQ(lib[0], 60);
  const Checkpoint a = load_checkpoint_bytes(lib, "library example");
  ASSERT_EQ(a.tensors.size(), 1u);
  EXPECT_EQ(a.tensors[0].second.shape(), (Shape{2, 2}));
  EXPECT_EQ(a.tensors[0].second.to_vector<int32_t>(), std::vector<int32_t>(4, 0));

  // Keys in another order, spaces, tensors listed out of data order, a 0-d and an empty tensor, padding.
  std::vector<uint8_t> d;
  append_raw<float>(d, {1.0f, 2.0f, 3.0f, 4.0f});  // weight [0, 16)
  append_raw<double>(d, {-0.5, 0.25});             // bias [16, 32)
  append_raw<int32_t>(d, {42});                    // step [32, 36)
  std::string header = R"({"weight": {"shape": [2, 2], "data_offsets": [0, 16], "dtype": "F32"},
    "step": {"data_offsets": [32, 36], "dtype": "I32", "shape": []},
    "empty": {"dtype": "F32", "shape": [0, 3], "data_offsets": [36, 36]},
    "__metadata__": {"format": "pt"},
    "bias": {"dtype": "F64", "shape": [2], "data_offsets": [16, 32]}})";
  while ((header.size() + 8) % 8 != 0) header += ' ';
  const std::string path = tmp("foreign");
  write_bytes(path, build_file(header, d));
  const Checkpoint b = load_checkpoint(path);
  EXPECT_EQ(b.metadata.at("format"), "pt");
  ASSERT_EQ(b.tensors.size(), 4u);
  EXPECT_EQ(b.tensors[0].first, "weight");  // in data order
  EXPECT_EQ(b.find("weight")->to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(b.find("weight")->dtype(), DType::Float32);
  EXPECT_EQ(b.find("bias")->to_vector<double>(), (std::vector<double>{-0.5, 0.25}));
  EXPECT_EQ(b.find("step")->shape(), Shape{});
  EXPECT_EQ(b.find("step")->item(), 42.0);
  EXPECT_EQ(b.find("empty")->shape(), (Shape{0, 3}));

  // Into a cell with those names.
  struct Net : Cell {
    Parameter weight{zeros({2, 2}), "weight"};
    Parameter bias{zeros({2}, DType::Float64), "bias"};
    Net() {
      register_parameter("weight", weight);
      register_parameter("bias", bias);
    }
    Value construct(const std::vector<Tensor>& in) override { return in[0]; }
  } net;
  EXPECT_EQ(load_param_into_net(net, b, false), std::vector<std::string>{});
  EXPECT_EQ(net.weight.to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(net.bias.to_vector<double>(), (std::vector<double>{-0.5, 0.25}));
}

TEST(NnCheckpoint, MismatchesFailClearlyAndLeaveTheModelUnchanged) {
  TempFiles tmp;
  auto source = trained_model();
  auto model = make_model(42);
  const auto before = snapshot(*model);
  auto check_unchanged = [&] { EXPECT_EQ(snapshot(*model), before); };

  // Wrong name: a tensor renamed (the model's one is missing).
  {
    NamedTensors t = tensors_of(*source);
    t[1].first = "0.offset";
    const std::string path = tmp("wrong_name");
    save_checkpoint(t, path);
    expect_error<ValueError>([&] { load_checkpoint(*model, path); },
                             {"For 'load_checkpoint'", "file '" + path + "'", "'0.bias'", "missing"});
    check_unchanged();
  }
  // Extra tensor: strict rejects it; non-strict ignores it.
  {
    NamedTensors t = tensors_of(*source);
    t.emplace_back("head.scale", ones({1}));
    const std::vector<uint8_t> bytes = save_checkpoint_bytes(t);
    expect_error<ValueError>([&] { load_checkpoint_bytes(*model, bytes, true, "extra.safetensors"); },
                             {"'extra.safetensors'", "'head.scale'", "does not have"});
    check_unchanged();
  }
  // Wrong shape, on the last parameter (nothing before it may be written).
  {
    NamedTensors t = tensors_of(*source);
    t.back().second = zeros({2});
    const std::string path = tmp("wrong_shape");
    save_checkpoint(t, path);
    expect_error<ValueError>([&] { load_checkpoint(*model, path); }, {path, "'3.bias'", "shape (2,)", "(3,)"});
    check_unchanged();
  }
  // Wrong dtype.
  {
    NamedTensors t = tensors_of(*source);
    t[0].second = convert(t[0].second, DType::Float64);
    const std::string path = tmp("wrong_dtype");
    save_checkpoint(t, path);
    expect_error<ValueError>([&] { load_checkpoint(*model, path); }, {path, "'0.weight'", "F64", "float32"});
    check_unchanged();
  }
  // Non-strict: a missing parameter keeps its value and is reported.
  {
    NamedTensors t = tensors_of(*source);
    t.erase(t.begin() + 1);
    t.emplace_back("unused", ones({1}));
    auto other = make_model(42);
    const auto missing = load_checkpoint_bytes(*other, save_checkpoint_bytes(t), false);
    EXPECT_EQ(missing, std::vector<std::string>{"0.bias"});
    EXPECT_EQ(other->parameters_and_names()[1].second.to_vector<double>(), before[1].second);
    EXPECT_EQ(other->parameters_and_names()[0].second.to_vector<double>(),
              source->parameters_and_names()[0].second.to_vector<double>());
  }
}

TEST(NnCheckpoint, StrictLoadsLeaveTheOptimizerStateOut) {
  // The optimizer state of a training checkpoint is not the model's: a strict load takes the weights beside it.
  auto source = trained_model();
  auto model = make_model(42);
  NamedTensors t = tensors_of(*source);
  t.emplace_back("optimizer.steps", ones({}));
  t.emplace_back("optimizer.0.exp_avg", ones({3}));
  EXPECT_TRUE(load_checkpoint_bytes(*model, save_checkpoint_bytes(t), true, "training.safetensors").empty());
  EXPECT_EQ(snapshot(*model), snapshot(*source));
  EXPECT_TRUE(is_optimizer_state("optimizer.steps"));
  EXPECT_FALSE(is_optimizer_state("head.optimizer.steps"));
}

TEST(NnCheckpoint, CorruptFilesFailClearlyAndLeaveTheModelUnchanged) {
  TempFiles tmp;
  auto source = trained_model();
  auto model = make_model(42);
  const auto before = snapshot(*model);
  const std::vector<uint8_t> good = save_checkpoint_bytes(*source);
  auto expect_corrupt = [&](const std::string& name, const std::vector<uint8_t>& bytes,
                            const std::vector<std::string>& parts) {
    const std::string path = tmp(name);
    write_bytes(path, bytes);
    std::vector<std::string> all = parts;
    all.push_back("For 'load_checkpoint', file '" + path + "'");
    expect_error<ValueError>([&] { load_checkpoint(*model, path); }, all);
    expect_error<ValueError>([&] { load_checkpoint(path); }, all);
    EXPECT_EQ(snapshot(*model), before) << name;
  };

  expect_corrupt("truncated_data", std::vector<uint8_t>(good.begin(), good.end() - 10), {"truncated", "'3.bias'"});
  expect_corrupt("truncated_header", std::vector<uint8_t>(good.begin(), good.begin() + 40), {"truncated", "header"});
  expect_corrupt("tiny", std::vector<uint8_t>(good.begin(), good.begin() + 5), {"truncated", "8-byte"});
  expect_corrupt("empty", {}, {"truncated"});
  expect_corrupt("garbage_header", build_file("{this is not json}      ", {}), {"not valid JSON"});
  expect_corrupt("array_header", build_file("[1, 2, 3]", {}), {"not a JSON object"});
  {
    std::vector<uint8_t> huge = good;
    const uint64_t n = 1ull << 40;
    std::memcpy(huge.data(), &n, 8);
    expect_corrupt("huge_header", huge, {"header length"});
  }
  std::vector<uint8_t> four(16, 0);
  expect_corrupt("overlap",
                 build_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                            std::vector<uint8_t>(12, 0)),
                 {"'b'", "overlaps"});
  expect_corrupt("gap", build_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})", four),
                 {"unused bytes", "'a'"});
  expect_corrupt("trailing", build_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", four),
                 {"8 bytes after the last tensor"});
  expect_corrupt("span", build_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", four),
                 {"'a'", "span 16 bytes", "needs 12"});
  expect_corrupt("f8", build_file(R"({"a":{"dtype":"F8_E4M3","shape":[16],"data_offsets":[0,16]}})", four),
                 {"'a'", "F8_E4M3"});
  expect_corrupt("bool_byte",
                 build_file(R"({"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", std::vector<uint8_t>{1, 2}),
                 {"'a'", "BOOL"});
  expect_corrupt("bad_shape", build_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", four),
                 {"'a'", "shape dimension"});
  expect_corrupt("no_offsets", build_file(R"({"a":{"dtype":"F32","shape":[2]}})", four), {"'a'", "data_offsets"});
  expect_corrupt("bad_metadata", build_file(R"({"__metadata__":{"k":1}})", {}), {"'__metadata__'", "'k'"});

  expect_error<ValueError>([&] { load_checkpoint(*model, tmp("does_not_exist")); }, {"does_not_exist", "cannot open"});
  EXPECT_EQ(snapshot(*model), before);
}

TEST(NnCheckpoint, SaveErrors) {
  expect_error<ValueError>(
      [] {
        save_checkpoint_bytes({{"a", ones({1})}, {"a", zeros({1})}});
      },
      {"For 'save_checkpoint'", "'a'", "twice"});
  expect_error<ValueError>([] { save_checkpoint_bytes({{"", ones({1})}}); }, {"empty"});
  expect_error<ValueError>([] { save_checkpoint_bytes({{"__metadata__", ones({1})}}); }, {"reserved"});
  expect_error<ValueError>(
      [] {
        save_checkpoint({{"a", ones({1})}}, "/nonexistent-dir/x.safetensors");
      },
      {"For 'save_checkpoint'", "/nonexistent-dir/x.safetensors"});
}
