// The shared gradient test vectors (tests/vectors/*.json), one test per case, and the reader's and runner's
// handling of malformed files and failing cases.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bprop/vectors.h"

namespace fs = std::filesystem;
using namespace bprop;
using namespace bprop::vectors;

namespace {

fs::path vectors_dir() { return fs::path(BPROP_SOURCE_DIR) / "tests" / "vectors"; }

std::vector<fs::path> vector_files() {
  std::vector<fs::path> files;
  if (fs::is_directory(vectors_dir())) {
    for (const auto& e : fs::directory_iterator(vectors_dir())) {
      if (e.path().extension() == ".json") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct VectorCase {
  std::string test_name;
  std::string file;
  Case c;
};

// How gtest prints a parameter (instead of its bytes).
void PrintTo(const VectorCase& v, std::ostream* os) { *os << v.file << ": " << v.c.name; }

std::string sanitize(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return out;
}

std::vector<VectorCase> all_cases() {
  std::vector<VectorCase> out;
  std::set<std::string> used;
  for (const auto& path : vector_files()) {
    const VectorFile f = load_file(path.string());
    for (const Case& c : f.cases) {
      std::string name = sanitize(path.stem().string() + "_" + c.name);
      while (!used.insert(name).second) name += "_";
      out.push_back({name, path.filename().string(), c});
    }
  }
  return out;
}

class VectorCaseTest : public ::testing::TestWithParam<VectorCase> {};

TEST_P(VectorCaseTest, Passes) {
  const VectorCase& v = GetParam();
  const CaseResult r = run_case(v.c);
  EXPECT_TRUE(r.passed) << v.file << ": " << describe(r);
}

INSTANTIATE_TEST_SUITE_P(Vectors, VectorCaseTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<VectorCase>& info) { return info.param.test_name; });

TEST(VectorFiles, AllFilesAreWellFormed) {
  const auto files = vector_files();
  ASSERT_FALSE(files.empty()) << "no vector files under " << vectors_dir();
  size_t total = 0;
  for (const auto& path : files) {
    const VectorFile f = load_file(path.string());
    for (const auto& e : f.errors) ADD_FAILURE() << e;
    EXPECT_FALSE(f.cases.empty()) << path;
    total += f.cases.size();
  }
  EXPECT_GE(total, 300u);
}

// ---- malformed files ------------------------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("bprop_vectors_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  fs::path path_;
};

const char* kGoodCase = R"({
  "name": "good",
  "dtype": "float64",
  "inputs": {"x": {"shape": [2], "dtype": "float64", "data": [1.0, 2.0]}},
  "program": [["y", "mul", "x", "x"]],
  "output": "y",
  "wrt": ["x"],
  "expected": {"value": {"shape": [2], "dtype": "float64", "data": [1.0, 4.0]},
               "grads": {"x": {"shape": [2], "dtype": "float64", "data": [2.0, 4.0]}}}
})";

std::string file_with(const std::vector<std::string>& cases) {
  std::string s = R"({"format": "bprop-vectors/1", "source": "test", "cases": [)";
  for (size_t i = 0; i < cases.size(); ++i) s += (i ? ", " : "") + cases[i];
  return s + "]}";
}

// A copy of kGoodCase named `name` with `from` replaced by `to` (once).
std::string variant(const std::string& name, const std::string& from, const std::string& to) {
  std::string s = kGoodCase;
  s.replace(s.find("\"good\""), 6, "\"" + name + "\"");
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

// Reads a one-case file and returns its single error.
std::string error_of(const TempDir& dir, const std::string& case_text, const std::string& file = "bad.json") {
  const std::string path = dir.write(file, file_with({case_text, kGoodCase}));
  const VectorFile f = load_file(path);
  EXPECT_EQ(f.cases.size(), 1u) << "the well-formed case is still read";
  EXPECT_EQ(f.errors.size(), 1u);
  const std::string e = f.errors.empty() ? std::string() : f.errors[0];
  EXPECT_NE(e.find(path), std::string::npos) << "names the file: " << e;
  return e;
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(VectorReader, ReadsAWellFormedFile) {
  TempDir dir;
  const VectorFile f = load_file(dir.write("good.json", file_with({kGoodCase})));
  ASSERT_TRUE(f.ok()) << f.errors[0];
  ASSERT_EQ(f.cases.size(), 1u);
  const Case& c = f.cases[0];
  EXPECT_EQ(c.name, "good");
  EXPECT_EQ(c.dtype, DType::Float64);
  EXPECT_EQ(c.program.size(), 1u);
  EXPECT_EQ(c.program[0].op, "mul");
  EXPECT_EQ(c.wrt, std::vector<std::string>{"x"});
  EXPECT_DOUBLE_EQ(c.rtol, 1e-10);
  EXPECT_DOUBLE_EQ(c.atol, 1e-12);
  EXPECT_TRUE(run_case(c).passed) << describe(run_case(c));
}

TEST(VectorReader, MissingField) {
  TempDir dir;
  const std::string e = error_of(dir, variant("no_output", R"("output": "y",)", ""));
  EXPECT_HAS(e, "case 'no_output'");
  EXPECT_HAS(e, "field 'output'");
  EXPECT_HAS(e, "missing");
}

TEST(VectorReader, MissingExpectedValue) {
  TempDir dir;
  const std::string e =
      error_of(dir, variant("no_value", R"("value": {"shape": [2], "dtype": "float64", "data": [1.0, 4.0]},)", ""));
  EXPECT_HAS(e, "field 'expected.value'");
}

TEST(VectorReader, UnknownDtype) {
  TempDir dir;
  const std::string e = error_of(dir, variant("f8", R"("dtype": "float64", "data": [1.0, 2.0])",
                                              R"("dtype": "float8", "data": [1.0, 2.0])"));
  EXPECT_HAS(e, "case 'f8'");
  EXPECT_HAS(e, "field 'inputs.x.dtype'");
  EXPECT_HAS(e, "float8");
}

TEST(VectorReader, UnknownCaseDtype) {
  TempDir dir;
  const std::string e = error_of(dir, variant("case_int", R"("dtype": "float64",)", R"("dtype": "int32",)"));
  EXPECT_HAS(e, "field 'dtype'");
}

TEST(VectorReader, DataLengthDoesNotMatchShape) {
  TempDir dir;
  const std::string e = error_of(dir, variant("short", R"("data": [1.0, 2.0]})", R"("data": [1.0, 2.0, 3.0]})"));
  EXPECT_HAS(e, "case 'short'");
  EXPECT_HAS(e, "field 'inputs.x.data'");
  EXPECT_HAS(e, "has 3 values but shape (2,) needs 2");
}

TEST(VectorReader, UnknownNameInProgram) {
  TempDir dir;
  const std::string e = error_of(dir, variant("unknown_name", R"(["y", "mul", "x", "x"])", R"(["y", "mul", "x", "q"])"));
  EXPECT_HAS(e, "case 'unknown_name'");
  EXPECT_HAS(e, "field 'program[0][3]'");
  EXPECT_HAS(e, "unknown name 'q'");
}

TEST(VectorReader, OutputNameMustBeNew) {
  TempDir dir;
  const std::string e = error_of(dir, variant("redefined", R"(["y", "mul", "x", "x"])", R"(["x", "mul", "x", "x"])"));
  EXPECT_HAS(e, "field 'program[0][0]'");
  EXPECT_HAS(e, "already defined");
}

TEST(VectorReader, UnknownOutputName) {
  TempDir dir;
  const std::string e = error_of(dir, variant("bad_output", R"("output": "y")", R"("output": "z")"));
  EXPECT_HAS(e, "field 'output'");
  EXPECT_HAS(e, "unknown name 'z'");
}

TEST(VectorReader, DuplicateCaseName) {
  TempDir dir;
  const std::string path = dir.write("dup.json", file_with({kGoodCase, kGoodCase}));
  const VectorFile f = load_file(path);
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_EQ(f.cases.size(), 1u);
  EXPECT_HAS(f.errors[0], path);
  EXPECT_HAS(f.errors[0], "case 'good'");
  EXPECT_HAS(f.errors[0], "duplicate case name");
}

TEST(VectorReader, GradsMustMatchWrt) {
  TempDir dir;
  const std::string e = error_of(dir, variant("grads_w", R"("grads": {"x")", R"("grads": {"w")"));
  EXPECT_HAS(e, "field 'expected.grads.w'");
  EXPECT_HAS(e, "not a wrt name");
}

TEST(VectorReader, WrtMustBeAFloatInput) {
  TempDir dir;
  EXPECT_HAS(error_of(dir, variant("wrt_unknown", R"("wrt": ["x"])", R"("wrt": ["y"])")), "field 'wrt[0]'");
  const std::string e = error_of(dir, variant("wrt_int", R"("dtype": "float64", "data": [1.0, 2.0])",
                                              R"("dtype": "int32", "data": [1, 2])"));
  EXPECT_HAS(e, "field 'wrt[0]'");
  EXPECT_HAS(e, "int32");
}

TEST(VectorReader, BadTensorValues) {
  TempDir dir;
  EXPECT_HAS(error_of(dir, variant("text", "[1.0, 2.0]", R"([1.0, "two"])")), "field 'inputs.x.data[1]'");
  EXPECT_HAS(error_of(dir, variant("neg_dim", R"("shape": [2], "dtype": "float64", "data": [1.0, 2.0])",
                                   R"("shape": [-2], "dtype": "float64", "data": [1.0, 2.0])")),
             "field 'inputs.x.shape[0]'");
  EXPECT_HAS(error_of(dir, variant("bool_num", R"("dtype": "float64", "data": [1.0, 2.0])",
                                   R"("dtype": "bool", "data": [1, 0])")),
             "true/false");
  EXPECT_HAS(error_of(dir, variant("int_frac", R"("dtype": "float64", "data": [1.0, 2.0])",
                                   R"("dtype": "int32", "data": [1, 2.5])")),
             "field 'inputs.x.data[1]'");
}

TEST(VectorReader, UnknownFieldAndErrorKind) {
  TempDir dir;
  EXPECT_HAS(error_of(dir, variant("typo", R"("wrt": ["x"],)", R"("wrt": ["x"], "rtoll": 1e-3,)")),
             "field 'rtoll': unknown field");
  EXPECT_HAS(error_of(dir, R"({"name": "k", "inputs": {}, "program": [], "output": "k2", "expected": {"error": "index"}})"),
             "field 'output'");
  const std::string k = error_of(dir, R"({"name": "k", "inputs": {"a": {"shape": [], "dtype": "float32", "data": [1]}},
      "program": [], "output": "a", "expected": {"error": "index"}})");
  EXPECT_HAS(k, "field 'expected.error'");
  EXPECT_HAS(k, "unknown error kind");
}

TEST(VectorReader, MalformedStatements) {
  TempDir dir;
  EXPECT_HAS(error_of(dir, variant("short_stmt", R"(["y", "mul", "x", "x"])", R"(["y"])")), "field 'program[0]'");
  EXPECT_HAS(error_of(dir, variant("attrs_middle", R"(["y", "mul", "x", "x"])", R"(["y", "mul", {"a": 1}, "x"])")),
             "must be the last element");
  EXPECT_HAS(error_of(dir, variant("bad_attr", R"(["y", "mul", "x", "x"])", R"(["y", "mul", "x", "x", {"a": {"b": 1}}])")),
             "field 'program[0][4].a'");
}

TEST(VectorReader, FileLevelProblems) {
  TempDir dir;
  const std::string not_json = dir.write("not.json", "{\"format\": ");
  VectorFile f = load_file(not_json);
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_HAS(f.errors[0], not_json);
  EXPECT_HAS(f.errors[0], "not valid JSON");
  EXPECT_TRUE(f.cases.empty());

  f = load_file(dir.write("fmt.json", R"({"format": "bprop-vectors/2", "cases": []})"));
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_HAS(f.errors[0], "field 'format'");

  f = load_file(dir.write("nocases.json", R"({"format": "bprop-vectors/1"})"));
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_HAS(f.errors[0], "field 'cases'");

  f = load_file(dir.write("array.json", "[1, 2]"));
  ASSERT_EQ(f.errors.size(), 1u);

  const std::string missing = (fs::temp_directory_path() / "bprop_vectors_test_no_such_file.json").string();
  f = load_file(missing);
  ASSERT_EQ(f.errors.size(), 1u);
  EXPECT_HAS(f.errors[0], missing);
  EXPECT_HAS(f.errors[0], "cannot open");
  EXPECT_THROW(load_file_strict(missing), FormatError);
  try {
    load_file_strict(not_json);
    ADD_FAILURE() << "no FormatError";
  } catch (const FormatError& e) {
    EXPECT_HAS(std::string(e.what()), not_json);
  }
}

// ---- the runner ---------------------------------------------------------------------------------------------

Case one_case(const std::string& text) {
  const VectorFile f = parse(file_with({text}), "inline.json");
  EXPECT_TRUE(f.ok()) << (f.errors.empty() ? "" : f.errors[0]);
  EXPECT_EQ(f.cases.size(), 1u);
  return f.cases.empty() ? Case{} : f.cases[0];
}

TEST(VectorRunner, ReportsTheWorstElement) {
  // d(x*x)/dx = 2x = [2, 4, 6]; the file claims [2, 4.5, 6.1]: the worst element is index 1.
  const Case c = one_case(R"({"name": "wrong", "dtype": "float64",
      "inputs": {"x": {"shape": [3], "dtype": "float64", "data": [1, 2, 3]}},
      "program": [["y", "mul", "x", "x"]], "output": "y", "wrt": ["x"],
      "expected": {"value": {"shape": [3], "dtype": "float64", "data": [1, 4, 9]},
                   "grads": {"x": {"shape": [3], "dtype": "float64", "data": [2, 4.5, 6.1]}}}})");
  const CaseResult r = run_case(c);
  EXPECT_FALSE(r.passed);
  ASSERT_TRUE(r.worst.has_value()) << r.message;
  EXPECT_EQ(r.worst->tensor, "grads[x]");
  EXPECT_EQ(r.worst->index, std::vector<int64_t>{1});
  EXPECT_DOUBLE_EQ(r.worst->got, 4.0);
  EXPECT_DOUBLE_EQ(r.worst->want, 4.5);
  EXPECT_DOUBLE_EQ(r.worst->abs_err, 0.5);
  EXPECT_EQ(r.worst->bad_elements, 2);
  EXPECT_HAS(describe(r), "wrong: grads[x] at [1]: got 4, want 4.5");
}

TEST(VectorRunner, SensAndSecondOrderAndTolerance) {
  // y = x^3 with sens s: grads = 3 x^2 s; second = d/dx sum(3 x^2 s) = 6 x s.
  const Case c = one_case(R"({"name": "cube", "dtype": "float32",
      "inputs": {"x": {"shape": [2], "dtype": "float32", "data": [1, -2]}},
      "program": [["x2", "mul", "x", "x"], ["y", "mul", "x2", "x"]], "output": "y", "wrt": ["x"],
      "sens": {"shape": [2], "dtype": "float32", "data": [0.5, 2]},
      "expected": {"value": {"shape": [2], "dtype": "float32", "data": [1, -8]},
                   "grads": {"x": {"shape": [2], "dtype": "float32", "data": [1.5, 24]}},
                   "second": {"x": {"shape": [2], "dtype": "float32", "data": [3.0001, -24]}}},
      "rtol": 0, "atol": 1e-3})");
  const CaseResult r = run_case(c);
  EXPECT_TRUE(r.passed) << describe(r);
}

TEST(VectorRunner, NonFiniteValuesPassOnlyWhenEqual) {
  const std::string text = R"({"name": "nan", "dtype": "float64",
      "inputs": {"x": {"shape": [3], "dtype": "float64", "data": ["nan", "inf", 1]}},
      "program": [["y", "mul", "x", "x"]], "output": "y",
      "expected": {"value": {"shape": [3], "dtype": "float64", "data": ["nan", "inf", WANT]}}})";
  auto with = [&](const std::string& want) {
    std::string s = text;
    s.replace(s.find("WANT"), 4, want);
    return run_case(one_case(s));
  };
  EXPECT_TRUE(with("1").passed);
  EXPECT_FALSE(with("\"nan\"").passed);
  EXPECT_FALSE(with("\"-inf\"").passed);
}

TEST(VectorRunner, ErrorCases) {
  const std::string base = R"({"name": "err", "inputs": {"x": {"shape": [2], "dtype": "float32", "data": [1, 2]},
      "y": {"shape": [3], "dtype": "float32", "data": [1, 2, 3]}}, "program": [["z", OP, "x", "y"]], "output": "z",
      "expected": {"error": KIND}})";
  auto run = [&](const std::string& op, const std::string& kind) {
    std::string s = base;
    s.replace(s.find("OP"), 2, "\"" + op + "\"");
    s.replace(s.find("KIND"), 4, "\"" + kind + "\"");
    return run_case(one_case(s));
  };
  EXPECT_TRUE(run("add", "shape").passed);
  const CaseResult wrong_kind = run("add", "dtype");
  EXPECT_FALSE(wrong_kind.passed);
  EXPECT_HAS(wrong_kind.message, "expected a 'dtype' error, got a 'shape' error");
  EXPECT_TRUE(run("no_such_op", "unknown_op").passed);
  const CaseResult ran = run_case(one_case(R"({"name": "ok", "inputs": {"x": {"shape": [], "dtype": "float32",
      "data": [1]}}, "program": [["z", "exp", "x"]], "output": "z", "expected": {"error": "value"}})"));
  EXPECT_FALSE(ran.passed);
  EXPECT_HAS(ran.message, "without one");
}

TEST(VectorRunner, UnexpectedErrorsAndShapeDifferencesFailWithAMessage) {
  const CaseResult r = run_case(one_case(R"({"name": "boom", "inputs": {"x": {"shape": [2], "dtype": "float32",
      "data": [1, 2]}, "y": {"shape": [3], "dtype": "float32", "data": [1, 2, 3]}}, "program": [["z", "add", "x", "y"]],
      "output": "z", "expected": {"value": {"shape": [2], "dtype": "float32", "data": [1, 2]}}})"));
  EXPECT_FALSE(r.passed);
  EXPECT_HAS(r.message, "'shape' error");
  const CaseResult s = run_case(one_case(R"({"name": "shape", "inputs": {"x": {"shape": [2], "dtype": "float32",
      "data": [1, 2]}}, "program": [["z", "exp", "x"]], "output": "z",
      "expected": {"value": {"shape": [1, 2], "dtype": "float32", "data": [1, 2]}}})"));
  EXPECT_FALSE(s.passed);
  EXPECT_HAS(s.message, "value has shape (2,), expected (1, 2)");
  const CaseResult d = run_case(one_case(R"({"name": "dtype", "inputs": {"x": {"shape": [2], "dtype": "float32",
      "data": [1, 2]}}, "program": [["z", "exp", "x"]], "output": "z",
      "expected": {"value": {"shape": [2], "dtype": "float64", "data": [1, 2]}}})"));
  EXPECT_FALSE(d.passed);
  EXPECT_HAS(d.message, "dtype float32, expected float64");
}

TEST(VectorRunner, UnusedWrtInputHasAZeroGradient) {
  const Case c = one_case(R"({"name": "unused", "dtype": "float64",
      "inputs": {"x": {"shape": [2], "dtype": "float64", "data": [1, 2]},
                 "w": {"shape": [2, 2], "dtype": "float64", "data": [1, 2, 3, 4]}},
      "program": [["y", "exp", "x"]], "output": "y", "wrt": ["x", "w"],
      "expected": {"value": {"shape": [2], "dtype": "float64", "data": [2.718281828459045, 7.38905609893065]},
                   "grads": {"x": {"shape": [2], "dtype": "float64", "data": [2.718281828459045, 7.38905609893065]},
                             "w": {"shape": [2, 2], "dtype": "float64", "data": [0, 0, 0, 0]}},
                   "second": {"x": {"shape": [2], "dtype": "float64", "data": [2.718281828459045, 7.38905609893065]},
                              "w": {"shape": [2, 2], "dtype": "float64", "data": [0, 0, 0, 0]}}}})");
  const CaseResult r = run_case(c);
  EXPECT_TRUE(r.passed) << describe(r);
}

TEST(VectorRunner, RunFileCounts) {
  const VectorFile f = parse(file_with({kGoodCase, variant("bad", R"("data": [2.0, 4.0])", R"("data": [2.0, 5.0])")}),
                             "two.json");
  ASSERT_TRUE(f.ok());
  const FileSummary s = run_file(f);
  EXPECT_EQ(s.passed, 1);
  EXPECT_EQ(s.failed, 1);
  ASSERT_EQ(s.results.size(), 2u);
  EXPECT_FALSE(s.results[1].passed);
}

}  // namespace
