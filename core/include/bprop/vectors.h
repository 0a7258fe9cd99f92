// Shared gradient test vectors (format "bprop-vectors/1", docs/vectors.md): reading and validating vector
// files, and running their cases through the op registry and the grad API. The native `bprop check` command
// and the WebAssembly build both use this.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bprop/attrs.h"
#include "bprop/errors.h"
#include "bprop/tensor.h"

namespace bprop::vectors {

/// The format name a vector file must declare.
inline constexpr const char* kFormat = "bprop-vectors/1";

/// A tensor as written in a file. Values are kept as doubles (exact for every dtype the format has).
struct VTensor {
  Shape shape;
  DType dtype = DType::Float32;
  std::vector<double> data;

  /// As a bprop tensor; float data is converted to `float_dtype`, int32 and bool keep their dtype.
  Tensor to_tensor(DType float_dtype) const;
};

/// One argument of a statement: a name, null (an omitted optional tensor), or a list of names.
struct Arg {
  enum class Kind { Name, Null, List };
  Kind kind = Kind::Name;
  std::string name;                // Kind::Name
  std::vector<std::string> names;  // Kind::List
};

/// One SSA statement: out = op(args...; attrs).
struct Statement {
  std::string out;
  std::string op;
  std::vector<Arg> args;
  Attrs attrs;
};

using NamedTensors = std::vector<std::pair<std::string, VTensor>>;

struct Case {
  std::string name;
  DType dtype = DType::Float32;  // the float dtype the case runs in
  NamedTensors inputs;           // in file order
  std::vector<Statement> program;
  std::string output;
  std::optional<VTensor> sens;   // absent: ones
  std::vector<std::string> wrt;
  // expected results: either an error kind ...
  std::string error;             // "shape" | "dtype" | "value" | "unknown_op" | "memory"; empty for a value case
  // ... or values
  std::optional<VTensor> value;
  NamedTensors grads;            // one per wrt name, in wrt order
  NamedTensors second;           // empty unless has_second; in wrt order
  bool has_second = false;
  double rtol = 0.0, atol = 0.0; // resolved: the file's values or the defaults of `dtype`

  bool expects_error() const { return !error.empty(); }
};

/// Default tolerances of a case dtype: {rtol, atol} = {1e-5, 1e-6} for float32, {1e-10, 1e-12} for float64.
std::pair<double, double> default_tolerances(DType dtype);

/// A vector file as read. Malformed cases are left out and described in `errors` (one message each, naming
/// the file, the case and the field); a file that is not a vector file at all has no cases.
struct VectorFile {
  std::string path;
  std::string source;
  std::vector<Case> cases;
  std::vector<std::string> errors;

  bool ok() const { return errors.empty(); }
};

/// Raised by the strict readers for a malformed file; its message names the file, the case and the field.
class FormatError : public ValueError {
 public:
  explicit FormatError(const std::string& msg) : ValueError(msg) {}
};

/// Reads a vector file from its text (`path` is only used in messages). Never throws for bad input.
VectorFile parse(const std::string& text, const std::string& path);
/// Reads a vector file from disk; an unreadable file gives one error and no cases. Never throws.
VectorFile load_file(const std::string& path);
/// As load_file, but throws FormatError with the first problem when the file is unreadable or malformed.
VectorFile load_file_strict(const std::string& path);

/// The worst element of a failed comparison.
struct Mismatch {
  std::string tensor;          // "value", "grads[x]" or "second[x]"
  std::vector<int64_t> index;  // position in the tensor (empty for a 0-d tensor)
  int64_t flat_index = 0;
  double got = 0.0, want = 0.0;
  double abs_err = 0.0, rel_err = 0.0;
  int64_t bad_elements = 0;    // elements out of tolerance in that tensor
  int64_t elements = 0;
};

struct CaseResult {
  std::string name;
  bool passed = false;
  /// Why it failed: an unexpected error, a shape or dtype difference, or the worst element (see `worst`).
  std::string message;
  std::optional<Mismatch> worst;  // set when the failure is element values out of tolerance
  /// For an error case: the message of the error the program raised (empty when it raised none).
  std::string raised;
};

/// What a value case computes, before any comparison: the output, its gradients and the second order (both in
/// wrt order; empty when the case asks for none).
struct Computed {
  Tensor value;
  std::vector<Tensor> grads, second;
};
/// Computes a case (eagerly, or traced and replayed with bprop::jit); errors propagate.
Computed compute(const Case& c, bool jit = false);

/// Runs one case: the program through bprop::call_op, the gradients through bprop::vjp / value_and_grad, the
/// second order by differentiating the gradient computation with bprop::grad; then compares. With `jit` the
/// program, and the gradient computations with it, are traced with bprop::jit and the graphs run. Never throws.
CaseResult run_case(const Case& c, bool jit = false);

/// How a case ended when run without comparing to its expectations (the fuzzer's "outcomes" mode).
struct CaseOutcome {
  std::string name;
  /// "ok"; an error kind name ("shape", "dtype", "value", "unknown_op", "memory"); or "other" for an exception
  /// that is not a bprop error.
  std::string outcome;
  Shape shape;                   // the output's shape and dtype, when ok
  DType dtype = DType::Float32;
  std::string message;           // the error's message, when not ok

  bool ok() const { return outcome == "ok"; }
};

/// Runs one case's program and, when the case has wrt names, its first-order gradients; ignores `expected`.
/// Never throws.
CaseOutcome case_outcome(const Case& c);

struct FileSummary {
  std::string path;
  int passed = 0;
  int failed = 0;
  std::vector<CaseResult> results;  // every case, in file order
  std::vector<std::string> errors;  // reading problems (the file's `errors`)
};

/// Runs every case of a file (through jit when `jit`).
FileSummary run_file(const VectorFile& file, bool jit = false);

/// One line describing a failed case: "<case>: <message>", with the worst element when there is one.
std::string describe(const CaseResult& result);

}  // namespace bprop::vectors
