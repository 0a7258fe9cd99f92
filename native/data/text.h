// Plain-text corpora for the character-level GPT: a byte vocabulary (the sorted distinct bytes of the text), the
// train and validation token streams, and the default corpus scripts/make-text-corpus.mjs builds from the Debian
// package fortunes. Failures are DataErrors naming the file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/idx.h"

namespace bprop::data {

/// Where scripts/make-text-corpus.mjs writes the fortunes corpus (relative to the working directory).
inline constexpr const char* kDefaultTextCorpus = "build/data/fortunes/train.txt";

/// Token i is the byte vocab[i]; bytes outside the vocabulary cannot be encoded.
struct CharVocabulary {
  std::string chars;  // distinct bytes in increasing order
  explicit CharVocabulary(std::string distinct_sorted = {});
  /// The sorted distinct bytes of `text`.
  static CharVocabulary of(const std::string& text);
  int64_t size() const { return static_cast<int64_t>(chars.size()); }
  /// DataError naming `source` and the byte offset for a byte outside the vocabulary.
  std::vector<int32_t> encode(const std::string& text, const std::string& source = "<text>") const;
  /// ValueError for an id out of range.
  std::string decode(const std::vector<int32_t>& ids) const;

 private:
  int32_t index_[256];
};

struct TextCorpus {
  std::string train_path, val_path;
  CharVocabulary vocab;
  std::vector<int32_t> train, val;
};

/// Reads `train_path` and the validation text: `val_path` when given; else val.txt beside a file named train.txt;
/// else the last tenth of the file (split at the first newline after 90 %, so no line is cut). The vocabulary is
/// that of both texts unless `vocab` is given (a checkpoint's). DataError for a missing or empty file, a validation
/// text shorter than two tokens, or (with `vocab`) a byte it lacks.
TextCorpus load_text_corpus(const std::string& train_path, const std::string& val_path = "",
                            const CharVocabulary* vocab = nullptr);

}  // namespace bprop::data
