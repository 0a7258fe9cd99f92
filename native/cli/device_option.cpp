// --device for the commands that compute: the context's device (MindSpore's device_target / device_id).
#include <cstdlib>

#include "bprop/context.h"
#include "commands.h"

namespace bprop::cli {

Device take_device_option(std::vector<std::string>& args) {
  std::string text;
  bool given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--device") {
      if (i + 1 >= args.size()) throw ValueError("--device needs a value: cpu, ascend or ascend:N");
      text = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      given = true;
      break;
    }
    if (args[i].rfind("--device=", 0) == 0) {
      text = args[i].substr(9);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      given = true;
      break;
    }
  }
  if (!given) {
    const char* env = std::getenv("BPROP_DEVICE");
    if (!env || !*env) return Device::cpu();
    text = env;
  }
  const Device d = parse_device(text);
  Context ctx = get_context();
  ctx.device = d;
  set_context(ctx);
  return d;
}

}  // namespace bprop::cli
