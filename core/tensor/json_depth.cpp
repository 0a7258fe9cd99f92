#include "tensor/json_depth.h"

namespace bprop {

size_t json_depth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char ch : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (ch == '\\') escaped = true;
      else if (ch == '"') in_string = false;
      continue;
    }
    switch (ch) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > deepest) deepest = depth;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return deepest;
}

}  // namespace bprop
