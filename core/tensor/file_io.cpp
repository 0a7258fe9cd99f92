#include "tensor/file_io.h"

#include <cstdio>
#include <memory>

namespace bprop {

FileRead read_whole_file(const std::string& path, std::string& out) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return FileRead::CannotOpen;
  out.clear();
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) out.append(buf, n);
  return std::ferror(f.get()) ? FileRead::Failed : FileRead::Ok;
}

}  // namespace bprop
