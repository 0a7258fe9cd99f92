// Number formatting for messages and tensor printing, without iostreams: a stream pulls the whole locale
// machinery (about 85 KB of code) into the WebAssembly module.
#pragma once
#include <string>

namespace bprop {

/// printf's "%.<precision>g": what `std::ostream << v` prints at that precision ("0.1", "1e+20", "inf", "nan").
std::string format_g(double v, int precision = 6);

/// The shortest text that reads back as exactly `v` ("0.1", "1.0000001", "-1e-300", "1e+300", "inf", "nan"):
/// for numbers in messages, which must show the value the user wrote, not a rounding of it.
std::string format_number(double v);

}  // namespace bprop
