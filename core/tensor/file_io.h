// Whole-file reads with C stdio (no iostreams: see format.h).
#pragma once
#include <string>

namespace bprop {

enum class FileRead { Ok, CannotOpen, Failed };

/// Reads the file at `path` into `out` (bytes as they are).
FileRead read_whole_file(const std::string& path, std::string& out);

}  // namespace bprop
