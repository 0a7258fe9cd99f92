// bprop check [-v] [--jit | --outcomes] FILE...: runs gradient test vector files and reports failing cases
// (eagerly, or traced and replayed with --jit), or (with --outcomes) how each case ended, as JSON lines.
#include <iostream>

#include <nlohmann/json.hpp>

#include "bprop/device.h"
#include "bprop/vectors.h"
#include "commands.h"

namespace bprop::cli {
namespace {

const char* kUsage =
    "usage: bprop check [-v] [--jit] [--device cpu|ascend[:N]] FILE...\n"
    "       bprop check --outcomes FILE...\n"
    "Runs every case of the vector files (format bprop-vectors/1, see docs/vectors.md). Prints one line\n"
    "per failing case (FILE: CASE: the worst element or the error) and closes with 'N passed, N failed'.\n"
    "With -v (--verbose) passing cases are listed too, error cases with the message they raised.\n"
    "With --jit every case runs through bprop::jit: the program and its gradient computations are traced\n"
    "into graphs and the graphs run (docs/jit.md); the expectations are the same.\n"
    "With --device ascend[:N] (or BPROP_DEVICE) every op runs on that NPU (docs/ascend.md), with the\n"
    "tolerances of the vector files; the ops with no NPU kernel run on the CPU, counted at the end.\n"
    "Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or malformed.\n"
    "With --outcomes the expectations are ignored: each case's program (and its first-order gradients when\n"
    "it has wrt names) is run and one JSON object per line says how it ended,\n"
    "  {\"file\", \"case\", \"outcome\": \"ok\" | \"shape\" | \"dtype\" | \"value\" | \"unknown_op\" | \"memory\" | \"other\",\n"
    "   \"shape\", \"dtype\" (when ok), \"message\" (when not)},\n"
    "and each reading problem of a file is a line {\"file\", \"reading_error\"}. Exit status 0 when it finished\n"
    "(docs/fuzzing.md).\n";

// Messages can quote parts of the file; invalid UTF-8 in them is replaced rather than failing the dump.
std::string json_line(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

int print_outcomes(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    const vectors::VectorFile file = vectors::load_file(path);
    for (const std::string& e : file.errors) {
      std::cout << json_line({{"file", path}, {"reading_error", e}}) << std::endl;
    }
    for (const vectors::Case& c : file.cases) {
      const vectors::CaseOutcome o = vectors::case_outcome(c);
      nlohmann::ordered_json line = {{"file", path}, {"case", o.name}, {"outcome", o.outcome}};
      if (o.ok()) {
        line["shape"] = o.shape;
        line["dtype"] = dtype_name(o.dtype);
      } else {
        line["message"] = o.message;
      }
      // Flushed per case, so that the lines before a crash are not lost.
      std::cout << json_line(line) << std::endl;
    }
  }
  return 0;
}

}  // namespace

int check_command(const std::vector<std::string>& given) {
  std::vector<std::string> args = given;
  const Device device = take_device_option(args);
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? 2 : 0;
  }
  bool verbose = false, outcomes = false, jit = false;
  std::vector<std::string> paths;
  for (const std::string& a : args) {
    if (a == "-v" || a == "--verbose") verbose = true;
    else if (a == "--outcomes") outcomes = true;
    else if (a == "--jit") jit = true;
    else paths.push_back(a);
  }
  if (outcomes) return print_outcomes(paths);
  int passed = 0, failed = 0;
  bool malformed = false;
  for (const std::string& path : paths) {
    const vectors::VectorFile file = vectors::load_file(path);
    for (const std::string& e : file.errors) std::cout << "error: " << e << "\n";
    malformed = malformed || !file.ok();
    const vectors::FileSummary s = vectors::run_file(file, jit);
    for (const auto& r : s.results) {
      if (!r.passed) {
        std::cout << path << ": " << vectors::describe(r) << "\n";
      } else if (verbose) {
        std::cout << path << ": " << r.name << ": passed" << (r.raised.empty() ? "" : " (raised: " + r.raised + ")")
                  << "\n";
      }
    }
    passed += s.passed;
    failed += s.failed;
  }
  std::cout << passed << " passed, " << failed << " failed" << std::endl;
  if (!device.is_cpu()) {
    std::cout << "on " << device.str() << "; CPU fallbacks:";
    for (const auto& [op, n] : fallback_counts()) std::cout << " " << op << " " << n;
    std::cout << std::endl;
  }
  if (malformed) return 2;
  return failed > 0 ? 1 : 0;
}

}  // namespace bprop::cli
