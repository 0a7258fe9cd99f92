// Hostile input: sizes near INT64_MAX, shapes past the limits, allocations that fail, numbers that do not fit
// the attribute, JSON nested too deeply. Each is a typed error that names what the user wrote, never a crash,
// a wrapped number or a leak; the library keeps working afterwards.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "autodiff/tape.h"
#include "bprop/bprop.h"
#include "bprop/limits.h"
#include "bprop/nn/checkpoint.h"
#include "bprop/nn/losses.h"
#include "bprop/vectors.h"
#include "kernels/cpu/parallel.h"
#include "tensor/json_depth.h"

using namespace bprop;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// Runs body and expects an Error of `kind` whose message holds every fragment; then checks that nothing leaked,
// no grad level is left open and the next op works.
template <typename Body>
void expect_error(ErrorKind kind, Body body, std::initializer_list<std::string> fragments) {
  const MemoryStats before = memory_stats();
  try {
    body();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_STREQ(error_kind_name(e.kind()), error_kind_name(kind)) << e.what();
    for (const std::string& f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
  EXPECT_FALSE(autodiff::recording()) << "a grad level was left open";
  EXPECT_EQ(memory_stats().storages, before.storages) << "tensors leaked";
  EXPECT_EQ(memory_stats().bytes, before.bytes);
  EXPECT_DOUBLE_EQ((scalar(2.0) * scalar(3.0)).item(), 6.0);
}

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

// ---- checked arithmetic and the shape limits ----

TEST(CheckedArithmetic, DetectsOverflow) {
  EXPECT_EQ(add_checked(kInt64Max - 1, 1), kInt64Max);
  EXPECT_FALSE(add_checked(kInt64Max, 1));
  EXPECT_FALSE(sub_checked(std::numeric_limits<int64_t>::min(), 1));
  EXPECT_EQ(mul_checked(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(mul_checked(int64_t{1} << 32, int64_t{1} << 31));
  EXPECT_FALSE(mul_checked(-1, std::numeric_limits<int64_t>::min()));
}

TEST(ShapeLimits, CheckedNumel) {
  EXPECT_EQ(checked_numel({2, 3}, DType::Float32), 6);
  EXPECT_EQ(checked_numel({}, DType::Float64), 1);
  EXPECT_EQ(checked_numel({0, 1 << 20}, DType::Float32), 0);
  expect_error(ErrorKind::Shape, [] { checked_numel({2, -3}, DType::Float32, "sum"); },
               {"For 'sum', the output", "negative dimension -3", "(2, -3)"});
  expect_error(ErrorKind::Shape, [] { checked_numel(Shape(kMaxRank + 1, 1), DType::Float32); },
               {"A tensor", "rank " + str(kMaxRank + 1), "limit of " + str(kMaxRank)});
  // The product overflows int64: reported as such, not as a wrapped count.
  expect_error(ErrorKind::Memory, [] { checked_numel({int64_t{1} << 40, int64_t{1} << 40}, DType::Float32, "tile"); },
               {"For 'tile'", "more than 2^63 elements"});
  // Zero elements, but strides past the limit.
  expect_error(ErrorKind::Memory, [] { checked_numel({0, kMaxElements + 1}, DType::Bool); },
               {"zero dimensions aside", str(kMaxElements + 1)});
  // Elements within the limit, bytes past it.
  const int64_t n = kMaxTensorBytes / 4 + 1;
  expect_error(ErrorKind::Memory, [&] { checked_numel({n}, DType::Float32, "sum"); },
               {"For 'sum'", "float32", str(n * 4) + " bytes", "limit of " + str(kMaxTensorBytes)});
  EXPECT_EQ(shape_numel({kInt64Max, 2}), kInt64Max) << "shape_numel saturates";
}

TEST(ShapeLimits, TensorCreation) {
  expect_error(ErrorKind::Memory, [] { zeros({int64_t{1} << 62}); }, {"A tensor", "(4611686018427387904,)", "float32"});
  expect_error(ErrorKind::Shape, [] { zeros({3, -1}); }, {"negative dimension -1"});
  expect_error(ErrorKind::Shape, [] { tensor({1.0, 2.0}, {kInt64Max, 2}); }, {"2 values", "(9223372036854775807, 2)"});
  expect_error(ErrorKind::Memory, [] { arange(0, 1e300); }, {"arange: [0, 1e+300) by 1 holds 1e+300 values"});
  expect_error(ErrorKind::Value, [] { arange(0, INFINITY); }, {"arange", "finite", "inf"});
  expect_error(ErrorKind::Memory, [] { eye(int64_t{1} << 40); }, {"(1099511627776, 1099511627776)"});
}

// ---- ops whose shape arithmetic used to overflow ----

TEST(HostileOps, SliceSizeNearInt64Max) {
  const Tensor x = ones({5, 1});
  expect_error(ErrorKind::Value, [&] { ops::slice(x, {5, 0}, {kInt64Max, 1}); },
               {"For 'slice', begin[0] + size[0] = 5 + 9223372036854775807 exceeds dim 0 of size 5"});
  expect_error(ErrorKind::Value, [&] { ops::slice(x, {0, 0}, {1, kInt64Max}); },
               {"begin[1] + size[1] = 0 + 9223372036854775807 exceeds dim 1 of size 1"});
  expect_error(ErrorKind::Value, [&] { ops::slice(x, {0, 0}, {std::numeric_limits<int64_t>::min(), 1}); },
               {"negative entry"});
  EXPECT_EQ(ops::slice(x, {5, 0}, {0, 1}).shape(), (Shape{0, 1}));
}

TEST(HostileOps, StridedSliceExtremes) {
  const Tensor x = arange(0, 5);
  const int64_t lo = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ops::strided_slice(x, {lo}, {kInt64Max}, {kInt64Max}).to_vector<float>(), std::vector<float>{0});
  EXPECT_EQ(ops::strided_slice(x, {kInt64Max}, {lo}, {lo}).to_vector<float>(), std::vector<float>{4});
  EXPECT_EQ(ops::strided_slice(x, {kInt64Max}, {lo}, {-2}).to_vector<float>(), (std::vector<float>{4, 2, 0}));
}

TEST(HostileOps, SizesPastTheLimits) {
  const Tensor x = ones({2});
  expect_error(ErrorKind::Memory, [&] { ops::tile(x, {kInt64Max}); },
               {"For 'tile'", "'multiples' [9223372036854775807]", "more than 2^63"});
  expect_error(ErrorKind::Memory, [&] { ops::tile(x, {int64_t{1} << 50}); }, {"For 'tile', the output", "(2251799813685248"});
  expect_error(ErrorKind::Memory, [&] { ops::pad(x, {{kInt64Max, 1}}); }, {"For 'pad'", "'paddings' row 0", "2^63"});
  expect_error(ErrorKind::Memory, [&] { ops::pad(x, {{int64_t{1} << 50, 0}}); }, {"For 'pad', the output"});
  expect_error(ErrorKind::Memory, [&] { ops::broadcast_to(x, {int64_t{1} << 50, 2}); },
               {"For 'broadcast_to', the output", "(1125899906842624, 2)", "float32"});
  expect_error(ErrorKind::Shape, [&] { ops::reshape(x, {kInt64Max, kInt64Max, -1}); }, {"For 'reshape'"});
  expect_error(ErrorKind::Shape, [&] { ops::reshape(x, {kInt64Max, 4, 0}); }, {"For 'reshape'"});
  expect_error(ErrorKind::Shape, [&] { ops::expand_dims(x, IntList(100, 0)); }, {"For 'expand_dims'", "limit of 64"});
}

TEST(HostileOps, ZeroElementsHugeOtherDims) {
  // (0, 2^30): no data, but a sum over axis 0 asks for 2^30 elements; within the native limits, past the
  // WebAssembly ones (the JavaScript tests check that side).
  const Tensor x = zeros({0, 8});
  EXPECT_EQ(ops::sum(x, 0).shape(), (Shape{8}));
  expect_error(ErrorKind::Memory, [] { zeros({0, int64_t{1} << 50}); }, {"zero dimensions aside"});
}

TEST(HostileOps, ConvolutionAndPoolingGeometry) {
  const Tensor x = ones({1, 1, 4, 4}), w = ones({1, 1, 2, 2});
  expect_error(ErrorKind::Memory, [&] { ops::conv2d(x, w, {}, 1, Size2(kInt64Max)); },
               {"For 'conv2d'", "'padding'", "2^63"});
  expect_error(ErrorKind::Memory, [&] { ops::conv2d(x, w, {}, 1, 0, Size2(kInt64Max)); }, {"For 'conv2d'", "'dilation'"});
  expect_error(ErrorKind::Memory, [&] { ops::conv2d(x, w, {}, 1, Size2(int64_t{1} << 40)); }, {"For 'conv2d'"});
  expect_error(ErrorKind::Value, [&] { ops::max_pool2d(x, 2, std::nullopt, Size2(kInt64Max)); },
               {"For 'max_pool2d'", "half of 'kernel_size'"});
  expect_error(ErrorKind::Memory, [&] { ops::max_pool2d(x, Size2(kInt64Max), 1, Size2(kInt64Max / 2)); },
               {"For 'max_pool2d'", "2^63"});
  // groups past every channel count with zero channels: no product of groups overflows.
  expect_error(ErrorKind::Value,
               [] { call_op("conv2d", {zeros({1, 0, 4, 4}), ones({1, 1, 2, 2})}, {{"groups", kInt64Max}}); },
               {"For 'conv2d'"});
}

// ---- int32 values at the edges: defined results, the same in every build ----

TEST(HostileValues, Int32ArithmeticWrapsLikeNumPy) {
  const Tensor big = tensor_i32({2147483647, -2147483647 - 1, 65536}, {3});
  EXPECT_EQ(ops::add(big, tensor_i32({1, -1, 0}, {3})).to_vector<int32_t>(),
            (std::vector<int32_t>{-2147483647 - 1, 2147483647, 65536}));
  EXPECT_EQ(ops::mul(big, big).to_vector<int32_t>(), (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(ops::neg(big).to_vector<int32_t>(), (std::vector<int32_t>{-2147483647, -2147483647 - 1, -65536}));
  EXPECT_EQ(ops::sum(big).item(), 65535.0);
}

TEST(HostileValues, FloatToInt32TruncatesAndSaturates) {
  const Tensor x = tensor({std::nan(""), INFINITY, -INFINITY, 3e9, -3e9, 2.7, -2.7, 1e300}, {8}, DType::Float64);
  EXPECT_EQ(ops::cast(x, DType::Int32).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 2147483647, -2147483647 - 1, 2147483647, -2147483647 - 1, 2, -2, 2147483647}));
  EXPECT_EQ(full({2}, 1e300, DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{2147483647, 2147483647}));
  EXPECT_EQ(ops::pow(tensor_i32({2, 2}, {2}), tensor_i32({40, -1}, {2})).to_vector<int32_t>(),
            (std::vector<int32_t>{2147483647, 0}));
}

// ---- allocation failures ----

TEST(AllocationFailure, IsAMemoryErrorAndTheLibraryGoesOn) {
  // In a child with its address space capped, so the failure is certain on any host and harmless to this one.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    rlimit cap{};
    if (getrlimit(RLIMIT_AS, &cap) != 0) _exit(3);
    // Current use plus 1 GiB: a 4 GiB tensor cannot be had.
    long pages = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{1} << 30);
    cap.rlim_cur = limit;
    if (setrlimit(RLIMIT_AS, &cap) != 0) _exit(3);
    int status = 1;
    try {
      ops::broadcast_to(ones({1}), {int64_t{1} << 30});
    } catch (const MemoryError& e) {
      const std::string msg = e.what();
      status = msg.find("For 'broadcast_to'") != std::string::npos && msg.find("4294967296 bytes") != std::string::npos
                   ? 0
                   : 2;
    } catch (...) {
      status = 4;
    }
    if (status == 0 && (scalar(2.0) * scalar(3.0)).item() != 6.0) status = 5;
    _exit(status);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of a signal";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: no error, 2: wrong message, 3: setrlimit failed, 4: not a MemoryError";
}

TEST(AllocationFailure, ParallelChunkThatThrowsReachesTheCaller) {
  const int threads = cpu::num_threads();
  cpu::set_num_threads(2);
  EXPECT_THROW(cpu::parallel_for(1000, 1, [](int64_t b, int64_t) {
                 if (b > 0) throw MemoryError("scratch");
               }),
               MemoryError);
  EXPECT_THROW(cpu::parallel_for(1000, 1, [](int64_t b, int64_t) {
                 if (b == 0) throw MemoryError("scratch");
               }),
               MemoryError);
  int64_t total = 0;
  cpu::parallel_for(1000, 1000, [&](int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total, 1000);
  cpu::set_num_threads(threads);
}

// ---- numbers in attributes and messages ----

TEST(HostileAttributes, NumbersThatAreNotInts) {
  const Tensor x = ones({2, 3});
  expect_error(ErrorKind::Value, [&] { call_op("sum", {x}, {{"axis", 1e300}}); },
               {"For 'sum', attribute 'axis'", "1e+300", "outside the int64 range"});
  expect_error(ErrorKind::Value, [&] { call_op("softmax", {x}, {{"axis", 1e300}}); }, {"1e+300", "int64 range"});
  expect_error(ErrorKind::Value, [&] { call_op("softmax", {x}, {{"axis", 1.5}}); }, {"1.5", "not a whole number"});
  expect_error(ErrorKind::Value, [&] { call_op("softmax", {x}, {{"axis", 0x1p63}}); }, {"9.223372036854776e+18"});
  expect_error(ErrorKind::Value, [&] { call_op("softmax", {x}, {{"axis", std::nan("")}}); }, {"nan"});
  EXPECT_EQ(call_op("softmax", {x}, {{"axis", 1.0}}).shape(), x.shape());
}

TEST(HostileAttributes, MessagesShowTheNumberWritten) {
  const Tensor logits = ones({2, 3});
  const Tensor labels = tensor_i32({0, 1}, {2});
  expect_error(ErrorKind::Value,
               [&] { call_op("cross_entropy", {logits, labels}, {{"label_smoothing", 1.0000001}}); },
               {"got 1.0000001"});
  expect_error(ErrorKind::Value, [&] { call_op("smooth_l1_loss", {logits, logits}, {{"beta", -1e-300}}); },
               {"got -1e-300"});
  expect_error(ErrorKind::Value, [] { nn::CrossEntropyLoss({}, -100, "mean", 1.0000001); }, {"1.0000001"});
  expect_error(ErrorKind::Value, [] { nn::SmoothL1Loss(-1e-300); }, {"-1e-300"});
}

// ---- readers ----

TEST(HostileFiles, JsonDepth) {
  EXPECT_EQ(json_depth("1"), 0u);
  EXPECT_EQ(json_depth("[[1], {\"a\": [2]}]"), 3u);
  EXPECT_EQ(json_depth("[\"[[[[\\\"[[\"]"), 1u) << "brackets in strings, escaped quotes";
  EXPECT_EQ(json_depth(std::string(100000, '[')), 100000u);
}

TEST(HostileFiles, DeeplyNestedVectorFileIsARefusedFile) {
  for (const std::string& where : {std::string("attrs"), std::string("data")}) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const std::string input = where == "data" ? deep : "[1]";
    const std::string attr = where == "attrs" ? deep : "0";
    const std::string text =
        R"({"format": "bprop-vectors/1", "source": "t", "cases": [{"name": "a", "inputs": {"x": {"shape": [1],
        "dtype": "float32", "data": )" + input + R"(}}, "program": [["y", "sum", "x", {"axis": )" + attr +
        R"(}]], "output": "y", "wrt": [], "expected": {"error": "value"}}]})";
    const vectors::VectorFile f = vectors::parse(text, "deep.json");
    ASSERT_EQ(f.errors.size(), 1u) << where;
    EXPECT_NE(f.errors[0].find(" deep, more than the limit of 64 (not read)"), std::string::npos) << f.errors[0];
    EXPECT_TRUE(f.cases.empty());
  }
}

TEST(HostileFiles, VectorTensorPastTheLimitsIsRefusedBeforeAllocating) {
  const std::string text = R"({"format": "bprop-vectors/1", "source": "t", "cases": [{"name": "a", "inputs": {"x":
      {"shape": [0, 4611686018427387904], "dtype": "float32", "data": []}}, "program": [["y", "sum", "x"]],
      "output": "y", "wrt": [], "expected": {"error": "memory"}}]})";
  const vectors::VectorFile f = vectors::parse(text, "huge.json");
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_NE(f.errors[0].find("field 'inputs.x.shape'"), std::string::npos) << f.errors[0];
}

TEST(HostileFiles, MemoryIsAnErrorKindOfTheVectorFormat) {
  const std::string text = R"({"format": "bprop-vectors/1", "source": "t", "cases": [{"name": "a", "inputs": {"x":
      {"shape": [2], "dtype": "float32", "data": [1, 2]}}, "program": [["y", "tile", "x",
      {"multiples": [1125899906842624]}]], "output": "y", "wrt": [], "expected": {"error": "memory"}}]})";
  const vectors::VectorFile f = vectors::parse(text, "memory.json");
  ASSERT_TRUE(f.ok()) << f.errors[0];
  const vectors::CaseResult r = vectors::run_case(f.cases.at(0));
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_NE(r.raised.find("For 'tile'"), std::string::npos) << r.raised;
}

// A safetensors file that is only its header: the 8-byte little-endian length, then the JSON text.
static std::vector<uint8_t> safetensors_with_header(const std::string& header) {
  std::vector<uint8_t> bytes(8 + header.size());
  const uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  std::memcpy(bytes.data() + 8, header.data(), header.size());
  return bytes;
}

TEST(HostileFiles, DeeplyNestedCheckpointHeader) {
  std::string header = "{\"a\": " + std::string(10000, '[') + std::string(10000, ']') + "}";
  const std::vector<uint8_t> bytes = safetensors_with_header(header);
  expect_error(ErrorKind::Value, [&] { load_checkpoint_bytes(bytes, "deep.safetensors"); },
               {"For 'load_checkpoint'", "10001 deep"});
}

TEST(HostileFiles, CheckpointTensorPastTheLimits) {
  const std::string header =
      R"({"w": {"dtype": "F32", "shape": [0, 4611686018427387904], "data_offsets": [0, 0]}})";
  const std::vector<uint8_t> bytes = safetensors_with_header(header);
  expect_error(ErrorKind::Value, [&] { load_checkpoint_bytes(bytes, "huge.safetensors"); },
               {"For 'load_checkpoint'", "tensor 'w'", "4611686018427387904"});
}
