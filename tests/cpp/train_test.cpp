// The native training program's parts: the IDX reader (plain and gzip'd, and every malformed file with its
// message), the data set loader, the models, and training on a Fashion-MNIST subset with a checkpoint round
// trip (skipped when the dataset-fashion-mnist package is not installed).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "bprop/nn/checkpoint.h"
#include "bprop/nn/init.h"
#include "data/idx.h"
#include "models/models.h"
#include "models/trainer.h"

namespace fs = std::filesystem;
using bprop::data::DataError;
using bprop::data::IdxArray;

namespace {

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("bprop-train-test-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_gzip(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

std::vector<uint8_t> counting(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 7 + 3) % 256);
  return v;
}

// The DataError message `fn` throws ("" when it throws nothing).
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// An MNIST-style directory of `count` 4x4 images whose label is the brightness band of the image.
void write_split(const TempDir& dir, const std::string& prefix, int64_t images, int64_t labels, bool gzip,
                 int label_value_limit = 10) {
  std::vector<uint8_t> px(static_cast<size_t>(images * 16));
  std::vector<uint8_t> lb(static_cast<size_t>(labels));
  for (int64_t i = 0; i < std::max(images, labels); ++i) {
    const int label = static_cast<int>(i % label_value_limit);
    if (i < labels) lb[static_cast<size_t>(i)] = static_cast<uint8_t>(label);
    if (i < images) {
      for (int j = 0; j < 16; ++j) px[static_cast<size_t>(i * 16 + j)] = static_cast<uint8_t>(label * 25 + j);
    }
  }
  const std::string ext = gzip ? ".gz" : "";
  bprop::data::write_idx(dir.file(prefix + "-images-idx3-ubyte" + ext), {images, 4, 4}, px, gzip);
  bprop::data::write_idx(dir.file(prefix + "-labels-idx1-ubyte" + ext), {labels}, lb, gzip);
}

}  // namespace

// ---- IDX files ---------------------------------------------------------------------------------------------

TEST(IdxReader, ReadsPlainAndGzipFilesAlike) {
  TempDir dir;
  const std::vector<uint8_t> data = counting(5 * 3 * 2);
  bprop::data::write_idx(dir.file("a.idx"), {5, 3, 2}, data, false);
  bprop::data::write_idx(dir.file("a.idx.gz"), {5, 3, 2}, data, true);
  // The plain file is exactly the IDX layout: magic 00 00 08 03, big-endian dims, the bytes.
  const std::vector<uint8_t> raw = read_bytes(dir.file("a.idx"));
  ASSERT_EQ(raw.size(), 4u + 12u + data.size());
  EXPECT_EQ(raw[2], 0x08);
  EXPECT_EQ(raw[3], 3);
  EXPECT_EQ(raw[7], 5);
  EXPECT_EQ(raw[11], 3);
  EXPECT_EQ(raw[15], 2);
  // The gzip file really is compressed (gzip magic 1f 8b).
  const std::vector<uint8_t> gz = read_bytes(dir.file("a.idx.gz"));
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(gz[0], 0x1f);
  EXPECT_EQ(gz[1], 0x8b);

  for (const std::string name : {"a.idx", "a.idx.gz"}) {
    const IdxArray a = bprop::data::read_idx(dir.file(name), 3);
    EXPECT_EQ(a.dims, (std::vector<int64_t>{5, 3, 2})) << name;
    EXPECT_EQ(a.items, 5) << name;
    EXPECT_EQ(a.data, data) << name;
  }
  // Compression is told by content, not by name.
  fs::copy_file(dir.file("a.idx.gz"), dir.file("b.idx"));
  EXPECT_EQ(bprop::data::read_idx(dir.file("b.idx")).data, data);
}

TEST(IdxReader, MaxItemsReadsOnlyAPrefix) {
  TempDir dir;
  const std::vector<uint8_t> data = counting(10 * 4);
  bprop::data::write_idx(dir.file("a.gz"), {10, 4}, data, true);
  const IdxArray a = bprop::data::read_idx(dir.file("a.gz"), 2, 3);
  EXPECT_EQ(a.dims, (std::vector<int64_t>{10, 4}));
  EXPECT_EQ(a.items, 3);
  EXPECT_EQ(a.data, std::vector<uint8_t>(data.begin(), data.begin() + 12));
  // A limit above the count keeps everything.
  EXPECT_EQ(bprop::data::read_idx(dir.file("a.gz"), 2, 100).items, 10);
  // Zero entries is a valid file.
  bprop::data::write_idx(dir.file("empty"), {0, 4}, {}, false);
  EXPECT_EQ(bprop::data::read_idx(dir.file("empty")).items, 0);
}

TEST(IdxReader, MissingFileNamesIt) {
  TempDir dir;
  const std::string path = dir.file("nope-idx1-ubyte");
  const std::string msg = error_of([&] { bprop::data::read_idx(path); });
  EXPECT_TRUE(contains(msg, path) && contains(msg, "does not exist")) << msg;
  const std::string dmsg = error_of([&] { bprop::data::read_idx(dir.str()); });
  EXPECT_TRUE(contains(dmsg, dir.str()) && contains(dmsg, "not a regular file")) << dmsg;
}

TEST(IdxReader, BadMagicNumber) {
  TempDir dir;
  // A text file, plain and gzip-compressed.
  const std::string text = "hello, this is not an IDX file\n";
  const std::vector<uint8_t> bytes(text.begin(), text.end());
  write_bytes(dir.file("text"), bytes);
  write_gzip(dir.file("text.gz"), bytes);
  std::string msg = error_of([&] { bprop::data::read_idx(dir.file("text")); });
  EXPECT_TRUE(contains(msg, dir.file("text") + "'") && contains(msg, "bad magic number 0x68 0x65 0x6c 0x6c") &&
              contains(msg, "not an IDX file"))
      << msg;
  msg = error_of([&] { bprop::data::read_idx(dir.file("text.gz")); });
  EXPECT_TRUE(contains(msg, "text.gz") && contains(msg, "bad magic number 0x68 0x65") &&
              contains(msg, "after gzip decompression"))
      << msg;
  // Rank 0 and a nonzero first byte are bad magic numbers too.
  write_bytes(dir.file("rank0"), {0, 0, 0x08, 0});
  msg = error_of([&] { bprop::data::read_idx(dir.file("rank0")); });
  EXPECT_TRUE(contains(msg, "rank0") && contains(msg, "bad magic number 0x00 0x00 0x08 0x00")) << msg;
  write_bytes(dir.file("byte0"), {0x7f, 0, 0x08, 1, 0, 0, 0, 1, 5});
  msg = error_of([&] { bprop::data::read_idx(dir.file("byte0")); });
  EXPECT_TRUE(contains(msg, "byte0") && contains(msg, "bad magic number 0x7f")) << msg;
  // An unknown element type.
  write_bytes(dir.file("type"), {0, 0, 0x42, 1, 0, 0, 0, 1, 5});
  msg = error_of([&] { bprop::data::read_idx(dir.file("type")); });
  EXPECT_TRUE(contains(msg, "type") && contains(msg, "bad magic number 0x00 0x00 0x42 0x01")) << msg;
}

TEST(IdxReader, UnsupportedElementTypeAndWrongRank) {
  TempDir dir;
  // float32 elements (type 0x0D), rank 1, one element.
  write_bytes(dir.file("floats"), {0, 0, 0x0D, 1, 0, 0, 0, 1, 0, 0, 0x80, 0x3f});
  std::string msg = error_of([&] { bprop::data::read_idx(dir.file("floats")); });
  EXPECT_TRUE(contains(msg, "floats") && contains(msg, "float32") && contains(msg, "0x08")) << msg;

  bprop::data::write_idx(dir.file("labels.gz"), {3}, {1, 2, 3}, true);
  msg = error_of([&] { bprop::data::read_idx(dir.file("labels.gz"), 3); });
  EXPECT_TRUE(contains(msg, "labels.gz") && contains(msg, "has 1 dimensions; expected 3")) << msg;
}

TEST(IdxReader, TruncatedFiles) {
  TempDir dir;
  const std::vector<uint8_t> data = counting(6 * 4 * 4);
  bprop::data::write_idx(dir.file("full"), {6, 4, 4}, data, false);
  const std::vector<uint8_t> full = read_bytes(dir.file("full"));

  // Empty, inside the magic, inside the header, inside the data.
  write_bytes(dir.file("empty"), {});
  std::string msg = error_of([&] { bprop::data::read_idx(dir.file("empty")); });
  EXPECT_TRUE(contains(msg, "empty") && contains(msg, "truncated") && contains(msg, "magic")) << msg;

  write_bytes(dir.file("header"), std::vector<uint8_t>(full.begin(), full.begin() + 9));
  msg = error_of([&] { bprop::data::read_idx(dir.file("header")); });
  EXPECT_TRUE(contains(msg, "header") && contains(msg, "truncated") && contains(msg, "inside the header")) << msg;

  write_bytes(dir.file("short"), std::vector<uint8_t>(full.begin(), full.end() - 20));
  msg = error_of([&] { bprop::data::read_idx(dir.file("short")); });
  EXPECT_TRUE(contains(msg, "short") && contains(msg, "truncated") && contains(msg, "declares 6 entries (6, 4, 4)") &&
              contains(msg, "holds only 76") && contains(msg, "4 complete entries"))
      << msg;
  // Reading only the complete prefix of a truncated file works.
  EXPECT_EQ(bprop::data::read_idx(dir.file("short"), 3, 4).items, 4);

  // A gzip file cut short: the stream ends before its end marker.
  bprop::data::write_idx(dir.file("full.gz"), {6, 4, 4}, data, true);
  const std::vector<uint8_t> gz = read_bytes(dir.file("full.gz"));
  write_bytes(dir.file("cut.gz"), std::vector<uint8_t>(gz.begin(), gz.begin() + static_cast<long>(gz.size() / 2)));
  msg = error_of([&] { bprop::data::read_idx(dir.file("cut.gz")); });
  EXPECT_TRUE(contains(msg, "cut.gz") && contains(msg, "truncated")) << msg;
  // Only the 8-byte trailer (CRC and length) missing.
  write_bytes(dir.file("notrailer.gz"), std::vector<uint8_t>(gz.begin(), gz.end() - 8));
  msg = error_of([&] { bprop::data::read_idx(dir.file("notrailer.gz")); });
  EXPECT_TRUE(contains(msg, "notrailer.gz") && contains(msg, "truncated")) << msg;
}

TEST(IdxReader, WrongCountAndCorruptGzip) {
  TempDir dir;
  const std::vector<uint8_t> data = counting(5 * 8);
  bprop::data::write_idx(dir.file("a"), {5, 8}, data, false);
  std::vector<uint8_t> bytes = read_bytes(dir.file("a"));
  // The header says 4 entries but 5 follow: 8 extra bytes.
  bytes[7] = 4;
  write_bytes(dir.file("count"), bytes);
  std::string msg = error_of([&] { bprop::data::read_idx(dir.file("count")); });
  EXPECT_TRUE(contains(msg, "count") && contains(msg, "8 bytes after the 4 entries") && contains(msg, "wrong")) << msg;
  // The header says 9 entries: truncated.
  bytes[7] = 9;
  write_bytes(dir.file("count9"), bytes);
  msg = error_of([&] { bprop::data::read_idx(dir.file("count9")); });
  EXPECT_TRUE(contains(msg, "count9") && contains(msg, "truncated") && contains(msg, "declares 9 entries")) << msg;
  // A header declaring an absurd size fails cleanly, without allocating it.
  write_bytes(dir.file("huge"), {0, 0, 0x08, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1});
  msg = error_of([&] { bprop::data::read_idx(dir.file("huge")); });
  EXPECT_TRUE(contains(msg, "huge") && contains(msg, "impossible dimensions")) << msg;

  // Damaged compressed data: the CRC check (or the inflater) reports it.
  bprop::data::write_idx(dir.file("a.gz"), {5, 8}, counting(5 * 8), true);
  std::vector<uint8_t> gz = read_bytes(dir.file("a.gz"));
  gz[gz.size() - 6] ^= 0x5a;  // inside the CRC-32 of the trailer
  write_bytes(dir.file("crc.gz"), gz);
  msg = error_of([&] { bprop::data::read_idx(dir.file("crc.gz")); });
  EXPECT_TRUE(contains(msg, "crc.gz") && contains(msg, "corrupt gzip data")) << msg;
}

// ---- data sets ---------------------------------------------------------------------------------------------

TEST(IdxDataset, LoadsBothSplitsPreferringGzip) {
  TempDir dir;
  write_split(dir, "train", 30, 30, true);
  write_split(dir, "t10k", 12, 12, false);
  const bprop::data::Dataset train = bprop::data::load_split(dir.str(), "train");
  EXPECT_EQ(train.count, 30);
  EXPECT_EQ(train.rows, 4);
  EXPECT_EQ(train.cols, 4);
  EXPECT_TRUE(contains(train.images_path, "train-images-idx3-ubyte.gz"));
  EXPECT_EQ(train.labels[13], 3);
  EXPECT_EQ(train.images[13 * 16 + 2], 3 * 25 + 2);
  const bprop::data::Dataset test = bprop::data::load_split(dir.str(), "test", 5);
  EXPECT_EQ(test.count, 5);
  EXPECT_EQ(test.images.size(), 5u * 16u);
  EXPECT_TRUE(contains(test.labels_path, "t10k-labels-idx1-ubyte"));
}

TEST(IdxDataset, ClearErrors) {
  TempDir dir;
  // Missing directory and missing files.
  std::string msg = error_of([&] { bprop::data::load_split(dir.file("absent"), "train"); });
  EXPECT_TRUE(contains(msg, "absent") && contains(msg, "does not exist")) << msg;
  msg = error_of([&] { bprop::data::load_split(dir.str(), "train"); });
  EXPECT_TRUE(contains(msg, "train-images-idx3-ubyte.gz") && contains(msg, "does not exist")) << msg;
  // Images and labels that disagree.
  write_split(dir, "train", 20, 19, false);
  msg = error_of([&] { bprop::data::load_split(dir.str(), "train"); });
  EXPECT_TRUE(contains(msg, "train-images-idx3-ubyte") && contains(msg, "train-labels-idx1-ubyte") &&
              contains(msg, "20 images but 19 labels"))
      << msg;
  // The count mismatch is reported even when only a prefix is asked for.
  msg = error_of([&] { bprop::data::load_split(dir.str(), "train", 5); });
  EXPECT_TRUE(contains(msg, "20 images but 19 labels")) << msg;
  // A label outside the classes.
  write_split(dir, "t10k", 20, 20, true, 12);
  msg = error_of([&] { bprop::data::load_split(dir.str(), "test"); });
  EXPECT_TRUE(contains(msg, "t10k-labels-idx1-ubyte.gz") && contains(msg, "label 10 at index 10")) << msg;
  // Images stored where labels belong (wrong rank).
  fs::copy_file(dir.file("t10k-images-idx3-ubyte.gz"), dir.file("t10k-labels-idx1-ubyte.gz"),
                fs::copy_options::overwrite_existing);
  msg = error_of([&] { bprop::data::load_split(dir.str(), "test"); });
  EXPECT_TRUE(contains(msg, "t10k-labels-idx1-ubyte.gz") && contains(msg, "has 3 dimensions; expected 1")) << msg;
  msg = error_of([&] { bprop::data::load_split(dir.str(), "validation"); });
  EXPECT_TRUE(contains(msg, "unknown data split 'validation'")) << msg;
}

// ---- models and training -----------------------------------------------------------------------------------

TEST(TrainModels, ShapesAndParameterNames) {
  bprop::nn::set_seed(1);
  const auto mlp = bprop::models::make_model("mlp");
  const auto cnn = bprop::models::make_model("cnn");
  const bprop::Tensor x = bprop::randn({3, 1, 28, 28}, 7);
  EXPECT_EQ((*mlp)(x).shape(), (bprop::Shape{3, 10}));
  EXPECT_EQ((*cnn)(x).shape(), (bprop::Shape{3, 10}));
  EXPECT_EQ(bprop::models::parameter_count(*mlp), 784 * 256 + 256 + 256 * 128 + 128 + 128 * 10 + 10);
  const auto names = mlp->parameters_and_names();
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names[0].first, "1.weight");
  EXPECT_THROW(bprop::models::make_model("resnet"), bprop::ValueError);
}

TEST(TrainModels, NormalisationAndBatches) {
  TempDir dir;
  write_split(dir, "train", 10, 10, false);
  const bprop::data::Dataset ds = bprop::data::load_split(dir.str(), "train");
  const bprop::models::Normalization norm = bprop::models::compute_normalization(ds);
  const bprop::Tensor x = bprop::models::make_image_batch(ds, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, norm);
  EXPECT_EQ(x.shape(), (bprop::Shape{10, 1, 4, 4}));
  double sum = 0.0, sq = 0.0;
  for (float v : x.to_vector<float>()) {
    sum += v;
    sq += static_cast<double>(v) * v;
  }
  EXPECT_NEAR(sum / 160.0, 0.0, 1e-5);
  EXPECT_NEAR(sq / 160.0, 1.0, 1e-4);
  const bprop::Tensor y = bprop::models::make_label_batch(ds, {3, 7});
  EXPECT_EQ(y.dtype(), bprop::DType::Int32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{3, 7}));
  // The metadata carries the normalisation.
  const auto meta = bprop::models::training_metadata({}, norm, 10, {});
  const auto back = bprop::models::normalization_from_metadata(meta, "m");
  EXPECT_DOUBLE_EQ(back.mean, norm.mean);
  EXPECT_DOUBLE_EQ(back.std, norm.std);
  EXPECT_THROW(bprop::models::normalization_from_metadata({{"input_std", "abc"}}, "m"), bprop::ValueError);
}

TEST(TrainModels, TrainingIsSeededAndReproducible) {
  TempDir dir;
  write_split(dir, "train", 64, 64, false);
  const bprop::data::Dataset ds = bprop::data::load_split(dir.str(), "train");
  // 4x4 images in 10 classes: a model of the right input size through the trainer.
  auto run = [&](uint64_t seed) {
    bprop::nn::set_seed(seed);
    auto model = bprop::models::make_model("mlp", 4, 4);
    bprop::models::TrainOptions opts;
    opts.batch_size = 16;
    opts.seed = seed;
    bprop::models::Trainer trainer(model, opts, bprop::models::compute_normalization(ds));
    int64_t calls = 0;
    trainer.train_epoch(ds, 1, [&](const bprop::models::BatchProgress& p) {
      ++calls;
      EXPECT_EQ(p.batches, 4);
      EXPECT_EQ(p.batch, calls);
    });
    EXPECT_EQ(calls, 4);
    return model->parameters_and_names()[0].second.to_vector<float>();
  };
  EXPECT_EQ(run(3), run(3));
  EXPECT_NE(run(3), run(4));
}

namespace {

// One epoch of a 4x4-input model from seed 5 with batch 16 and `opts` (jit, amp): the epoch and every parameter.
struct EpochRun {
  bprop::models::EpochResult epoch;
  std::vector<std::vector<float>> params;
  std::vector<bprop::DType> dtypes;
  bool scaled = false;  // a loss scaler was made
};
EpochRun train_small_epoch(const char* kind, const bprop::data::Dataset& ds, bprop::models::TrainOptions opts) {
  bprop::nn::set_seed(5);
  auto model = bprop::models::make_model(kind, 4, 4);
  opts.batch_size = 16;
  opts.seed = 5;
  bprop::models::Trainer trainer(model, opts, bprop::models::compute_normalization(ds));
  EpochRun r;
  r.scaled = trainer.loss_scaler() != nullptr;
  r.epoch = trainer.train_epoch(ds, 1, nullptr);
  for (const auto& [name, p] : model->parameters_and_names()) {
    r.params.push_back(p.to_vector<float>());
    r.dtypes.push_back(p.dtype());
  }
  return r;
}

}  // namespace

TEST(TrainModels, JitStepsTrainAsEagerStepsDo) {
  // --jit: loss, gradients and the Adam update of each step in one graph; the same parameters to the bit, for the
  // mlp and the cnn (batch norm statistics updated inside the graph), over an epoch with a short last batch
  TempDir dir;
  write_split(dir, "train", 60, 60, false);
  const bprop::data::Dataset ds = bprop::data::load_split(dir.str(), "train");
  for (const char* kind : {"mlp", "cnn"}) {
    SCOPED_TRACE(kind);
    bprop::models::TrainOptions opts;
    const EpochRun eager = train_small_epoch(kind, ds, opts);
    opts.jit = true;
    const EpochRun jitted = train_small_epoch(kind, ds, opts);
    EXPECT_EQ(jitted.epoch.train_loss, eager.epoch.train_loss);
    EXPECT_EQ(jitted.params, eager.params);
  }
}

TEST(TrainModels, MixedPrecisionTrainsCloseToFloat32AndJitMatchesEager) {
  // --amp O2: the mlp and cnn in bfloat16 (no loss scale) and float16 (dynamic loss scale) keep float32 weights, end
  // an epoch near the float32 loss, and jitted steps give the eager steps' parameters to the bit
  TempDir dir;
  write_split(dir, "train", 60, 60, false);
  const bprop::data::Dataset ds = bprop::data::load_split(dir.str(), "train");
  for (const char* kind : {"mlp", "cnn"}) {
    const EpochRun f32 = train_small_epoch(kind, ds, {});
    EXPECT_FALSE(f32.scaled);
    for (const char* dtype : {"bfloat16", "float16"}) {
      SCOPED_TRACE(std::string(kind) + " " + dtype);
      bprop::models::TrainOptions opts;
      opts.amp = "O2";
      opts.amp_dtype = dtype;
      const EpochRun eager = train_small_epoch(kind, ds, opts);
      opts.jit = true;
      const EpochRun jitted = train_small_epoch(kind, ds, opts);
      EXPECT_EQ(eager.scaled, std::string(dtype) == "float16");
      for (const bprop::DType d : eager.dtypes) EXPECT_EQ(d, bprop::DType::Float32);
      EXPECT_EQ(jitted.epoch.train_loss, eager.epoch.train_loss);
      EXPECT_EQ(jitted.params, eager.params);
      EXPECT_NE(eager.params, f32.params);  // it did run in half
      EXPECT_NEAR(eager.epoch.train_loss, f32.epoch.train_loss, 0.05 * f32.epoch.train_loss);
      EXPECT_EQ(eager.epoch.skipped_steps, 0);
      EXPECT_EQ(eager.epoch.loss_scale, std::string(dtype) == "float16" ? 65536.0 : 0.0);
    }
  }
  bprop::models::TrainOptions opts;
  opts.amp = "O2";
  const auto meta = bprop::models::training_metadata(opts, {}, 10, {});
  EXPECT_EQ(meta.at("amp"), "O2");
  EXPECT_EQ(meta.at("amp_dtype"), "bfloat16");
  EXPECT_EQ(bprop::models::training_metadata({}, {}, 10, {}).count("amp"), 0u);
}

TEST(TrainModels, TheLossScalerStateGoesIntoTheCheckpointAndComesBackOnResume) {
  // A float16 run's dynamic scale and finite-step count (after an epoch: 4 finite steps, or a lowered scale) are
  // written to the metadata; a new trainer restores them, as `bprop train --resume` does.
  TempDir dir;
  write_split(dir, "train", 60, 60, false);
  const bprop::data::Dataset ds = bprop::data::load_split(dir.str(), "train");
  bprop::models::TrainOptions opts;
  opts.amp = "O2";
  opts.amp_dtype = "float16";
  opts.batch_size = 16;
  bprop::models::Trainer first(bprop::models::make_model("mlp", 4, 4), opts, {});
  first.train_epoch(ds, 1);
  auto* dynamic = dynamic_cast<bprop::amp::DynamicLossScaler*>(first.loss_scaler().get());
  ASSERT_NE(dynamic, nullptr);
  // a state a fresh scaler does not have: half the default scale, 7 finite steps
  dynamic->load_state({{"loss_scale", 32768.0}, {"loss_scale_finite_steps", 7.0}});
  const auto meta = bprop::models::training_metadata(opts, {}, 60, {}, dynamic);
  EXPECT_EQ(meta.at("loss_scale"), "32768");
  EXPECT_EQ(meta.at("loss_scale_finite_steps"), "7");
  bprop::models::Trainer resumed(bprop::models::make_model("mlp", 4, 4), opts, {});
  EXPECT_EQ(resumed.loss_scaler()->current_scale(), 65536.0);
  resumed.restore_loss_scaler(meta, "run.safetensors");
  EXPECT_EQ(resumed.loss_scaler()->state(), dynamic->state());
  EXPECT_EQ(resumed.train_epoch(ds, 2).loss_scale, 32768.0);  // 4 more finite steps: 11, below the window
  EXPECT_EQ(resumed.loss_scaler()->state().at("loss_scale_finite_steps"), 11.0);
  // no scale saved (a bfloat16 or float32 run): the scaler keeps its start; without a scaler nothing happens
  bprop::models::Trainer plain(bprop::models::make_model("mlp", 4, 4), opts, {});
  plain.restore_loss_scaler(bprop::models::training_metadata({}, {}, 60, {}), "f32.safetensors");
  EXPECT_EQ(plain.loss_scaler()->current_scale(), 65536.0);
  bprop::models::Trainer unscaled(bprop::models::make_model("mlp", 4, 4), {}, {});
  unscaled.restore_loss_scaler(meta, "run.safetensors");
  // bad values name the checkpoint and the key, and leave the scaler as it was
  auto bad = meta;
  bad["loss_scale"] = "0.25";
  try {
    plain.restore_loss_scaler(bad, "run.safetensors");
    ADD_FAILURE() << "no error";
  } catch (const bprop::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint 'run.safetensors': For 'DynamicLossScaler.load_state', "
                                         "loss_scale must be a finite float32 number >= 1, got 0.25"),
              std::string::npos)
        << e.what();
  }
  bad = meta;
  bad["loss_scale_finite_steps"] = "2.5";
  EXPECT_THROW(plain.restore_loss_scaler(bad, "run.safetensors"), bprop::ValueError);
  bad.erase("loss_scale_finite_steps");
  EXPECT_THROW(plain.restore_loss_scaler(bad, "run.safetensors"), bprop::ValueError);
  bad = meta;
  bad["loss_scale"] = "big";
  EXPECT_THROW(plain.restore_loss_scaler(bad, "run.safetensors"), bprop::ValueError);
  EXPECT_EQ(plain.loss_scaler()->current_scale(), 65536.0);
  EXPECT_THROW(dynamic->load_state({{"loss_scale", 2.0}}), bprop::ValueError);  // a key missing
  bprop::amp::StaticLossScaler fixed(128.0);
  EXPECT_THROW(fixed.load_state({{"loss_scale", 2.0}, {"loss_scale_finite_steps", 0.0}}), bprop::ValueError);
  fixed.load_state({{"loss_scale", 256.0}});
  EXPECT_EQ(fixed.current_scale(), 256.0);
}

TEST(TrainModels, RejectsBadOptions) {
  auto model = bprop::models::make_model("mlp");
  bprop::models::TrainOptions opts;
  opts.optimizer = "rmsprop";
  EXPECT_THROW(bprop::models::Trainer(model, opts, {}), bprop::ValueError);
  opts = {};
  opts.batch_size = 0;
  EXPECT_THROW(bprop::models::Trainer(model, opts, {}), bprop::ValueError);
  opts = {};
  opts.lr = -1.0;
  EXPECT_THROW(bprop::models::Trainer(model, opts, {}), bprop::ValueError);
  opts = {};
  opts.schedule = "step";
  EXPECT_THROW(bprop::models::Trainer(model, opts, {}), bprop::ValueError);
  opts = {};
  opts.amp = "O5";
  EXPECT_THROW(bprop::models::Trainer(model, opts, {}), bprop::ValueError);
  opts = {};
  opts.amp = "O2";
  opts.amp_dtype = "float64";
  EXPECT_THROW(bprop::models::Trainer(model, opts, {}), bprop::DTypeError);
  opts = {};
  opts.loss_scale = "0.5";
  EXPECT_THROW(bprop::models::Trainer(model, opts, {}), bprop::ValueError);
}

TEST(TrainModels, CosineScheduleSetsTheRateOfEachEpoch) {
  TempDir dir;
  write_split(dir, "train", 8, 8, false);
  const bprop::data::Dataset ds = bprop::data::load_split(dir.str(), "train");
  for (const std::string schedule : {"cosine", "constant"}) {
    auto model = bprop::models::make_model("mlp", 4, 4);
    bprop::models::TrainOptions opts;
    opts.epochs = 4;
    opts.lr = 0.01;
    opts.batch_size = 8;
    opts.schedule = schedule;
    bprop::models::Trainer trainer(model, opts, {});
    const double pi = 3.14159265358979323846;
    for (int64_t e = 1; e <= 4; ++e) {
      const double want = schedule == "cosine" ? 0.01 * (1.0 + std::cos(pi * static_cast<double>(e - 1) / 4.0)) / 2.0
                                               : 0.01;
      EXPECT_NEAR(trainer.train_epoch(ds, e).lr, want, 1e-15) << schedule << " epoch " << e;
    }
  }
}

// Trains the MLP on the first 2,000 Fashion-MNIST training images, evaluates on 1,000 test images, and
// checks that a checkpoint saved and loaded into a fresh model gives the same accuracy. The data come from
// the dataset-fashion-mnist package's directory, or from $BPROP_FASHION_MNIST_DIR when set.
TEST(TrainFashionMnist, SubsetTrainsWellAboveChanceAndCheckpointRoundTrips) {
  const char* env_dir = std::getenv("BPROP_FASHION_MNIST_DIR");
  const std::string dir = env_dir && *env_dir ? env_dir : bprop::data::kDefaultDataDir;
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    const fs::path p = fs::path(dir) / base;
    if (!fs::exists(p.string() + ".gz") && !fs::exists(p)) {
      GTEST_SKIP() << "Fashion-MNIST is not installed (" << p.string()
                   << "[.gz] is missing): apt-get install dataset-fashion-mnist, or set BPROP_FASHION_MNIST_DIR";
    }
  }
  const bprop::data::Dataset train = bprop::data::load_split(dir, "train", 2000);
  const bprop::data::Dataset test = bprop::data::load_split(dir, "test", 1000);
  ASSERT_EQ(train.count, 2000);
  ASSERT_EQ(test.count, 1000);
  ASSERT_EQ(train.rows, 28);

  bprop::models::TrainOptions opts;
  opts.model = "mlp";
  opts.epochs = 3;
  opts.batch_size = 64;
  opts.lr = 1e-3;
  opts.optimizer = "adam";
  opts.seed = 0;
  const bprop::models::Normalization norm = bprop::models::compute_normalization(train);
  bprop::nn::set_seed(opts.seed);
  auto model = bprop::models::make_model("mlp");
  bprop::models::Trainer trainer(model, opts, norm);
  const auto history = trainer.fit(train, test);
  ASSERT_EQ(history.size(), 3u);
  EXPECT_LT(history.back().train_loss, history.front().train_loss);
  const double accuracy = history.back().test.accuracy;
  EXPECT_GT(accuracy, 0.6) << "10 classes: chance is 10%";

  TempDir tmp;
  const std::string path = tmp.file("mlp.safetensors");
  bprop::save_checkpoint(*model, path, bprop::models::training_metadata(opts, norm, train.count, history));

  const bprop::Checkpoint ckpt = bprop::load_checkpoint(path);
  EXPECT_EQ(ckpt.metadata.at("model"), "mlp");
  EXPECT_EQ(ckpt.metadata.at("epochs"), "3");
  bprop::nn::set_seed(99);  // different initial weights, all overwritten by the checkpoint
  auto fresh = bprop::models::make_model("mlp");
  bprop::load_param_into_net(*fresh, ckpt, true, path);
  const bprop::models::EvalResult again =
      bprop::models::evaluate(*fresh, test, bprop::models::normalization_from_metadata(ckpt.metadata, path));
  EXPECT_EQ(again.accuracy, accuracy);
  EXPECT_NEAR(again.loss, history.back().test.loss, 1e-9);
  EXPECT_NEAR(std::stod(ckpt.metadata.at("test_accuracy")), accuracy, 1e-12);

  // A checkpoint of the other model does not fit, and leaves the model unchanged.
  auto cnn = bprop::models::make_model("cnn");
  const auto before = cnn->parameters_and_names()[0].second.to_vector<float>();
  EXPECT_THROW(bprop::load_param_into_net(*cnn, ckpt, true, path), bprop::Error);
  EXPECT_EQ(cnn->parameters_and_names()[0].second.to_vector<float>(), before);
}
