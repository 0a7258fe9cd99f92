// bprop check FILE...: runs gradient test vector files and reports failing cases.
#include <iostream>

#include "bprop/vectors.h"
#include "commands.h"

namespace bprop::cli {

int check_command(const std::vector<std::string>& args) {
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    (args.empty() ? std::cerr : std::cout)
        << "usage: bprop check [-v] FILE...\n"
           "Runs every case of the vector files (format bprop-vectors/1, see docs/vectors.md). Prints one line\n"
           "per failing case (FILE: CASE: the worst element or the error) and closes with 'N passed, N failed'.\n"
           "With -v (--verbose) passing cases are listed too, error cases with the message they raised.\n"
           "Exit status: 0 all passed, 1 a case failed, 2 a file is unreadable or malformed.\n";
    return args.empty() ? 2 : 0;
  }
  bool verbose = false;
  std::vector<std::string> paths;
  for (const std::string& a : args) {
    if (a == "-v" || a == "--verbose") verbose = true;
    else paths.push_back(a);
  }
  int passed = 0, failed = 0;
  bool malformed = false;
  for (const std::string& path : paths) {
    const vectors::VectorFile file = vectors::load_file(path);
    for (const std::string& e : file.errors) std::cout << "error: " << e << "\n";
    malformed = malformed || !file.ok();
    const vectors::FileSummary s = vectors::run_file(file);
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
  if (malformed) return 2;
  return failed > 0 ? 1 : 0;
}

}  // namespace bprop::cli
