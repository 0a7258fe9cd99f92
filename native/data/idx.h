// Reading IDX files (the format of MNIST and Fashion-MNIST), plain or gzip-compressed, and the image/label
// pairs of a data set directory. Every failure is a DataError whose message names the file and says what is
// wrong with it: missing, bad magic number, unsupported element type, truncated, extra bytes after the
// declared data, or images and labels that do not agree.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bprop::data {

/// A data file that is missing, unreadable or malformed.
class DataError : public std::runtime_error {
 public:
  explicit DataError(const std::string& msg) : std::runtime_error(msg) {}
};

/// Where the Debian package dataset-fashion-mnist installs its files.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";

/// An IDX array of unsigned bytes: dims as the header declares them, and the data of the first
/// `items` entries along dim 0 (all of them unless a limit was asked for).
struct IdxArray {
  std::string path;
  std::vector<int64_t> dims;  // as declared in the header
  int64_t items = 0;          // entries along dim 0 held in data (dims[0], or the limit when smaller)
  std::vector<uint8_t> data;  // items * (product of dims[1..]) bytes, row-major
};

/// Reads the IDX file at `path`, compressed with gzip or not (told apart by its first bytes, not its name).
/// `expected_rank` (when > 0) is the number of dims the caller needs. With max_items >= 0, only the first
/// max_items entries are read (the rest of the file is not checked). Unsigned-byte elements (type 0x08) only.
/// DataError naming the file otherwise.
IdxArray read_idx(const std::string& path, int expected_rank = 0, int64_t max_items = -1);

/// Writes an unsigned-byte IDX file (gzip-compressed when `gzip`): for test fixtures and tools.
/// DataError when the file cannot be written or data.size() does not match dims.
void write_idx(const std::string& path, const std::vector<int64_t>& dims, const std::vector<uint8_t>& data,
               bool gzip);

/// The images and labels of one split of an MNIST-style data set.
struct Dataset {
  std::string images_path, labels_path;
  int64_t count = 0;  // images held (after any limit)
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> images;  // count * rows * cols bytes
  std::vector<uint8_t> labels;  // count class indices, each < num_classes
  int64_t image_size() const { return rows * cols; }
};

/// The path of `<dir>/<base>.gz` or `<dir>/<base>`, whichever exists (the .gz first); DataError naming both
/// when neither does.
std::string find_data_file(const std::string& dir, const std::string& base);

/// Loads split "train" (train-images-idx3-ubyte, train-labels-idx1-ubyte) or "test" (t10k-...) from `dir`:
/// checks that the image and label files declare the same count, that images are 3-D and labels 1-D, and
/// that every label is below num_classes. max_items >= 0 keeps only the first max_items pairs.
Dataset load_split(const std::string& dir, const std::string& split, int64_t max_items = -1,
                   int num_classes = 10);

}  // namespace bprop::data
