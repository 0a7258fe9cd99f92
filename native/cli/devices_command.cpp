// bprop devices: what this host offers bprop, as each registered backend describes itself: the CPU (threads,
// vector features, BLAS, the bfloat16 GEMM) and devices such as Ascend NPUs (count, SoC, CANN version and where it
// was found), or why there are none.
#include <iostream>

#include "bprop/device.h"
#include "command_line.h"
#include "commands.h"

namespace bprop::cli {

int devices_command(const std::vector<std::string>& args) {
  CommandLine cl("devices", "Lists the CPU (threads, vector features, BLAS, the bfloat16 GEMM) and the devices of "
                            "every other backend of this build (Ascend NPUs with the CANN version), or why none were "
                            "found.");
  try {
    if (!cl.parse(args)) return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << "bprop devices: " << e.what() << "\n";
    return 2;
  }
  for (const Backend b : registered_backends()) {
    const BackendRegistration& r = backend_registration(b);
    if (!r.describe) {
      std::cout << r.name << "\n";
      continue;
    }
    for (const std::string& line : r.describe()) std::cout << line << "\n";
  }
  return 0;
}

}  // namespace bprop::cli
