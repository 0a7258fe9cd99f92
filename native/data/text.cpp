#include "data/text.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bprop/errors.h"

namespace bprop::data {

namespace {

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(std::string("cannot open the ") + what + " text '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw DataError(std::string("cannot read the ") + what + " text '" + path + "'");
  return s.str();
}

std::string byte_name(unsigned char c) {
  if (c >= 32 && c < 127) return std::string("'") + static_cast<char>(c) + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", c);
  return buf;
}

}  // namespace

CharVocabulary::CharVocabulary(std::string distinct_sorted) : chars(std::move(distinct_sorted)) {
  std::fill(std::begin(index_), std::end(index_), -1);
  for (size_t i = 0; i < chars.size(); ++i) {
    const auto c = static_cast<unsigned char>(chars[i]);
    if (index_[c] >= 0 || (i > 0 && static_cast<unsigned char>(chars[i - 1]) > c)) {
      throw ValueError("a character vocabulary must hold distinct bytes in increasing order, got byte " +
                       byte_name(c) + " at position " + std::to_string(i));
    }
    index_[c] = static_cast<int32_t>(i);
  }
}

CharVocabulary CharVocabulary::of(const std::string& text) {
  bool seen[256] = {};
  for (char c : text) seen[static_cast<unsigned char>(c)] = true;
  std::string chars;
  for (int c = 0; c < 256; ++c) {
    if (seen[c]) chars.push_back(static_cast<char>(c));
  }
  return CharVocabulary(chars);
}

std::vector<int32_t> CharVocabulary::encode(const std::string& text, const std::string& source) const {
  std::vector<int32_t> ids(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const int32_t id = index_[static_cast<unsigned char>(text[i])];
    if (id < 0) {
      throw DataError("'" + source + "': byte " + byte_name(static_cast<unsigned char>(text[i])) + " at offset " +
                      std::to_string(i) + " is not in the vocabulary of " + std::to_string(size()) + " characters");
    }
    ids[i] = id;
  }
  return ids;
}

std::string CharVocabulary::decode(const std::vector<int32_t>& ids) const {
  std::string s;
  s.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= size()) {
      throw ValueError("token id " + std::to_string(id) + " is out of range for a vocabulary of " +
                       std::to_string(size()) + " characters");
    }
    s.push_back(chars[static_cast<size_t>(id)]);
  }
  return s;
}

TextCorpus load_text_corpus(const std::string& train_path, const std::string& val_path, const CharVocabulary* vocab) {
  TextCorpus c;
  c.train_path = train_path;
  std::string train = read_file(train_path, "training"), val;
  namespace fs = std::filesystem;
  const fs::path beside = fs::path(train_path).parent_path() / "val.txt";
  if (!val_path.empty()) {
    c.val_path = val_path;
    val = read_file(val_path, "validation");
  } else if (fs::path(train_path).filename() == "train.txt" && fs::exists(beside)) {
    c.val_path = beside.string();
    val = read_file(c.val_path, "validation");
  } else {
    size_t cut = train.size() * 9 / 10;
    const size_t nl = train.find('\n', cut);
    cut = nl == std::string::npos ? cut : nl + 1;
    c.val_path = train_path + " (its last tenth)";
    val = train.substr(cut);
    train.resize(cut);
  }
  if (train.size() < 2) throw DataError("the training text '" + train_path + "' holds fewer than 2 characters");
  if (val.size() < 2) throw DataError("the validation text '" + c.val_path + "' holds fewer than 2 characters");
  c.vocab = vocab ? *vocab : CharVocabulary::of(train + val);
  c.train = c.vocab.encode(train, train_path);
  c.val = c.vocab.encode(val, c.val_path);
  return c;
}

}  // namespace bprop::data
