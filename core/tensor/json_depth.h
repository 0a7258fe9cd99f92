// A bound on how deeply the JSON that bprop reads (vector files, checkpoint headers) may nest, checked by a
// scan that does not recurse, before any parser or reader walks the text: nesting 100,000 lists deep exhausts
// the stack of code that recurses into values, natively a crash and in WebAssembly a trap.
#pragma once
#include <cstddef>
#include <string_view>

namespace bprop {

/// The deepest nesting any file bprop reads needs is 5 (a vector case's attribute matrix); 64 leaves room.
inline constexpr size_t kMaxJsonDepth = 64;

/// The deepest nesting of lists and objects in `text` (0 for a plain value); brackets inside strings are skipped.
/// Malformed text still gets a depth: the parser reports what is wrong with it.
size_t json_depth(std::string_view text);

}  // namespace bprop
