#include "data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <system_error>

namespace bprop::data {
namespace {

namespace fs = std::filesystem;

// The largest payload a header may declare (1 TiB): beyond it the dims are corrupt, not a data set.
constexpr uint64_t kMaxPayload = uint64_t{1} << 40;

std::string in_quotes(const std::string& path) { return "'" + path + "'"; }

const char* idx_type_name(int type) {
  switch (type) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return nullptr;
  }
}

std::string hex2(int v) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  s += digits[(v >> 4) & 0xF];
  s += digits[v & 0xF];
  return s;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzHandle = std::unique_ptr<gzFile_s, GzCloser>;

// A gzip or plain file read through zlib, with errors that name the file.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) throw DataError("data file " + in_quotes(path) + " does not exist");
    if (!fs::is_regular_file(st)) throw DataError("data file " + in_quotes(path) + " is not a regular file");
    errno = 0;
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) {
      throw DataError("cannot open data file " + in_quotes(path) + (errno ? std::string(": ") + std::strerror(errno) : ""));
    }
    gzbuffer(file_.get(), 1 << 18);
  }

  // Reads up to n bytes into dst; returns how many were read (fewer only at the end of the data).
  size_t read(uint8_t* dst, size_t n) {
    size_t total = 0;
    while (total < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - total, size_t{1} << 30));
      const int got = gzread(file_.get(), dst + total, chunk);
      if (got < 0) fail();
      if (got == 0) break;
      total += static_cast<size_t>(got);
    }
    // A gzip stream cut short reads as a short count with a "unexpected end of file" error set.
    int err = Z_OK;
    const char* msg = gzerror(file_.get(), &err);
    if (err != Z_OK && err != Z_STREAM_END) {
      if (err == Z_BUF_ERROR) truncated_stream_ = true;
      else throw DataError("cannot read data file " + in_quotes(path_) + ": " + (msg ? msg : "read error"));
    }
    return total;
  }

  bool compressed() const { return gzdirect(file_.get()) == 0; }
  bool truncated_stream() const { return truncated_stream_; }

 private:
  [[noreturn]] void fail() {
    int err = Z_OK;
    const char* msg = gzerror(file_.get(), &err);
    std::string what = err == Z_ERRNO ? std::strerror(errno) : (msg && *msg ? msg : "read error");
    if (err == Z_DATA_ERROR) what = "corrupt gzip data (" + what + ")";
    throw DataError("cannot read data file " + in_quotes(path_) + ": " + what);
  }

  std::string path_;
  GzHandle file_;
  bool truncated_stream_ = false;
};

uint32_t big_endian_u32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

IdxArray read_idx(const std::string& path, int expected_rank, int64_t max_items) {
  Reader in(path);
  const std::string where = "data file " + in_quotes(path);

  std::array<uint8_t, 4> magic{};
  const size_t got_magic = in.read(magic.data(), magic.size());
  if (got_magic < magic.size()) {
    throw DataError(where + " is truncated: it ends after " + std::to_string(got_magic) +
                    " bytes, inside the 4-byte IDX magic number");
  }
  if (magic[0] != 0 || magic[1] != 0 || idx_type_name(magic[2]) == nullptr || magic[3] == 0) {
    throw DataError(where + " has a bad magic number " + hex2(magic[0]) + " " + hex2(magic[1]) + " " +
                    hex2(magic[2]) + " " + hex2(magic[3]) +
                    ": not an IDX file (expected 0x00 0x00, an element type, a rank >= 1)" +
                    (in.compressed() ? " after gzip decompression" : ""));
  }
  if (magic[2] != 0x08) {
    throw DataError(where + " holds " + idx_type_name(magic[2]) + " elements (type " + hex2(magic[2]) +
                    "); only unsigned bytes (type 0x08) are supported");
  }
  const int rank = magic[3];
  if (expected_rank > 0 && rank != expected_rank) {
    throw DataError(where + " has " + std::to_string(rank) + " dimensions; expected " +
                    std::to_string(expected_rank));
  }

  IdxArray out;
  out.path = path;
  std::vector<uint8_t> header(static_cast<size_t>(rank) * 4);
  const size_t got_header = in.read(header.data(), header.size());
  if (got_header < header.size()) {
    throw DataError(where + " is truncated: it ends inside the header (" + std::to_string(4 + got_header) + " of " +
                    std::to_string(4 + header.size()) + " bytes)");
  }
  uint64_t row_bytes = 1;
  for (int i = 0; i < rank; ++i) {
    const uint32_t d = big_endian_u32(header.data() + 4 * i);
    out.dims.push_back(static_cast<int64_t>(d));
    if (i > 0) {
      row_bytes *= d;
      if (row_bytes > kMaxPayload) throw DataError(where + " declares impossible dimensions " + dims_text(out.dims));
    }
  }
  const uint64_t declared = static_cast<uint64_t>(out.dims[0]);
  if (row_bytes != 0 && declared > kMaxPayload / row_bytes) {
    throw DataError(where + " declares impossible dimensions " + dims_text(out.dims));
  }
  const uint64_t wanted_items = max_items >= 0 ? std::min<uint64_t>(declared, static_cast<uint64_t>(max_items)) : declared;
  const uint64_t wanted = wanted_items * row_bytes;

  // Read in chunks so a corrupt header cannot make us allocate more than the file holds.
  const size_t chunk = size_t{1} << 22;
  out.data.reserve(static_cast<size_t>(std::min<uint64_t>(wanted, uint64_t{64} << 20)));
  while (out.data.size() < wanted) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(chunk, wanted - out.data.size()));
    const size_t old = out.data.size();
    out.data.resize(old + n);
    const size_t got = in.read(out.data.data() + old, n);
    out.data.resize(old + got);
    if (got < n) break;
  }
  if (out.data.size() < wanted) {
    const uint64_t total = declared * row_bytes;
    std::string msg = where + " is truncated: its header declares " + std::to_string(declared) + " entries " +
                      dims_text(out.dims) + ", " + std::to_string(total) + " bytes of data, but the file holds only " +
                      std::to_string(out.data.size()) + " (" + std::to_string(row_bytes ? out.data.size() / row_bytes : 0) +
                      " complete entries)";
    if (in.truncated_stream()) msg += "; the gzip stream ends early";
    throw DataError(msg);
  }
  if (in.truncated_stream()) {
    throw DataError(where + " is truncated: the gzip stream ends before its end marker");
  }
  if (wanted_items == declared) {
    // The whole payload was read: anything after it means the header's count is wrong.
    std::array<uint8_t, 4096> extra{};
    uint64_t extra_bytes = 0;
    for (;;) {
      const size_t got = in.read(extra.data(), extra.size());
      extra_bytes += got;
      if (got < extra.size()) break;
    }
    if (in.truncated_stream()) {
      throw DataError(where + " is truncated: the gzip stream ends before its end marker");
    }
    if (extra_bytes > 0) {
      throw DataError(where + " has " + std::to_string(extra_bytes) + " bytes after the " + std::to_string(declared) +
                      " entries " + dims_text(out.dims) + " its header declares: the count in the header is wrong");
    }
  }
  out.items = static_cast<int64_t>(wanted_items);
  return out;
}

void write_idx(const std::string& path, const std::vector<int64_t>& dims, const std::vector<uint8_t>& data,
               bool gzip) {
  if (dims.empty() || dims.size() > 255) throw DataError("cannot write IDX file " + in_quotes(path) + ": bad rank");
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > std::numeric_limits<uint32_t>::max()) {
      throw DataError("cannot write IDX file " + in_quotes(path) + ": dimension " + std::to_string(d) + " out of range");
    }
    n *= static_cast<uint64_t>(d);
  }
  if (n != data.size()) {
    throw DataError("cannot write IDX file " + in_quotes(path) + ": dims " + dims_text(dims) + " need " +
                    std::to_string(n) + " bytes, got " + std::to_string(data.size()));
  }
  std::vector<uint8_t> bytes{0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (int64_t d : dims) {
    const auto v = static_cast<uint32_t>(d);
    for (int s = 24; s >= 0; s -= 8) bytes.push_back(static_cast<uint8_t>(v >> s));
  }
  bytes.insert(bytes.end(), data.begin(), data.end());
  errno = 0;
  GzHandle f(gzopen(path.c_str(), gzip ? "wb6" : "wbT"));
  if (!f) {
    throw DataError("cannot write IDX file " + in_quotes(path) + (errno ? std::string(": ") + std::strerror(errno) : ""));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const unsigned n_chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, size_t{1} << 30));
    const int wrote = gzwrite(f.get(), bytes.data() + done, n_chunk);
    if (wrote <= 0) throw DataError("cannot write IDX file " + in_quotes(path) + ": write error");
    done += static_cast<size_t>(wrote);
  }
  if (gzclose(f.release()) != Z_OK) throw DataError("cannot write IDX file " + in_quotes(path) + ": close failed");
}

std::string find_data_file(const std::string& dir, const std::string& base) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw DataError("data directory " + in_quotes(dir) + (fs::exists(dir, ec) ? " is not a directory" : " does not exist") +
                    " (install the Debian package dataset-fashion-mnist, or give --data DIR)");
  }
  const fs::path gz = fs::path(dir) / (base + ".gz");
  const fs::path plain = fs::path(dir) / base;
  if (fs::exists(gz, ec)) return gz.string();
  if (fs::exists(plain, ec)) return plain.string();
  throw DataError("data file " + in_quotes(gz.string()) + " (or " + in_quotes(plain.string()) + ") does not exist");
}

Dataset load_split(const std::string& dir, const std::string& split, int64_t max_items, int num_classes) {
  std::string prefix;
  if (split == "train") prefix = "train";
  else if (split == "test") prefix = "t10k";
  else throw DataError("unknown data split '" + split + "' (expected 'train' or 'test')");

  Dataset ds;
  ds.images_path = find_data_file(dir, prefix + "-images-idx3-ubyte");
  ds.labels_path = find_data_file(dir, prefix + "-labels-idx1-ubyte");
  IdxArray images = read_idx(ds.images_path, 3, max_items);
  IdxArray labels = read_idx(ds.labels_path, 1, max_items);
  if (images.dims[0] != labels.dims[0]) {
    throw DataError("data files " + in_quotes(ds.images_path) + " and " + in_quotes(ds.labels_path) + " do not match: " +
                    std::to_string(images.dims[0]) + " images but " + std::to_string(labels.dims[0]) + " labels");
  }
  if (images.dims[1] == 0 || images.dims[2] == 0) {
    throw DataError("data file " + in_quotes(ds.images_path) + " holds empty images (" + std::to_string(images.dims[1]) +
                    " x " + std::to_string(images.dims[2]) + ")");
  }
  for (size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= num_classes) {
      throw DataError("data file " + in_quotes(ds.labels_path) + " has label " + std::to_string(labels.data[i]) +
                      " at index " + std::to_string(i) + ", outside the " + std::to_string(num_classes) +
                      " classes [0, " + std::to_string(num_classes - 1) + "]");
    }
  }
  ds.count = images.items;
  ds.rows = images.dims[1];
  ds.cols = images.dims[2];
  ds.images = std::move(images.data);
  ds.labels = std::move(labels.data);
  return ds;
}

}  // namespace bprop::data
