// A whole number read from text strictly: all of the text is one base-10 integer (an optional sign, digits, no
// spaces, nothing after, within int64). The one reading of integers given on the command line and kept in
// checkpoints' metadata; each caller words its own error.
#pragma once
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>

namespace bprop {

inline std::optional<int64_t> whole_number(const std::string& text) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;
  int64_t v = 0;
  const auto [at, ec] = std::from_chars(begin, end, v);
  if (begin == end || ec != std::errc() || at != end) return std::nullopt;
  return v;
}

}  // namespace bprop
