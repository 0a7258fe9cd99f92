// bprop check [-v] [--jit | --outcomes] FILE...: runs gradient test vector files and reports failing cases
// (eagerly, or traced and replayed with --jit), or (with --outcomes) how each case ended, as JSON lines.
#include <iostream>

#include <nlohmann/json.hpp>

#include "bprop/device.h"
#include "bprop/vectors.h"
#include "command_line.h"
#include "commands.h"

namespace bprop::cli {
namespace {

void declare_options(CommandLine& cl) {
  cl.positionals("FILE", "vector files (format bprop-vectors/1, docs/vectors.md)")
      .flag("-v,--verbose", "list passing cases too, error cases with the message they raised")
      .flag("--jit", "run every case through bprop::jit: the program and its gradient computations traced into "
                     "graphs and the graphs run (docs/jit.md), with the same expectations")
      .flag("--outcomes", "ignore the expectations: run each case's program (and its first-order gradients when "
                          "it has wrt names) and print one JSON object per line saying how it ended: {\"file\", "
                          "\"case\", \"outcome\": ok|shape|dtype|value|unknown_op|memory|other, \"shape\", "
                          "\"dtype\" (when ok), \"message\" (when not)}, and {\"file\", \"reading_error\"} per "
                          "reading problem (docs/fuzzing.md); exit status 0 when it finished")
      .device_option()
      .footer("Prints one line per failing case (FILE: CASE: the worst element or the error) and closes with\n"
              "'N passed, N failed'. On a device (docs/ascend.md) the ops with no kernel there run on the CPU,\n"
              "counted at the end. Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or malformed.");
}

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
  CommandLine cl("check", "Runs every case of gradient test vector files.");
  declare_options(cl);
  try {
    if (!cl.parse(given)) return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "bprop check: " << e.what() << " (see bprop check --help)\n";
    return 2;
  }
  const std::vector<std::string>& paths = cl.positional_values();
  if (paths.empty()) {
    std::cerr << cl.help();
    return 2;
  }
  const Device device = cl.device();
  const bool verbose = cl.has("--verbose"), outcomes = cl.has("--outcomes"), jit = cl.has("--jit");
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
