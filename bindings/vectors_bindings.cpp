// The embind layer of the gradient test vectors (format bprop-vectors/1): the core's runner on a file's text, as
// `bprop check` runs it. Errors follow guard.h's convention.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "bprop/vectors.h"
#include "bprop/bprop.h"
#include "convert.h"
#include "guard.h"
#include "handles.h"

using emscripten::val;

namespace bprop::js {
namespace {

// ---- gradient test vectors ----------------------------------------------------------------------------

/// Runs a vector file given as text through the core's runner (the same one `bprop check` uses; with `jit`,
/// as `bprop check --jit`: programs and gradient computations traced with bprop::jit and replayed):
/// {errors: [reading problems], passed, failed, results: [{name, passed, line, raised}]} where `line` is
/// the runner's description of a failed case.
val run_vectors(std::string text, std::string path, bool jit) {
  return guarded([&] {
    const vectors::VectorFile file = vectors::parse(text, path);
    const vectors::FileSummary s = vectors::run_file(file, jit);
    val errors = val::array();
    for (size_t i = 0; i < file.errors.size(); ++i) errors.set(i, file.errors[i]);
    val results = val::array();
    for (size_t i = 0; i < s.results.size(); ++i) {
      const vectors::CaseResult& r = s.results[i];
      val o = val::object();
      o.set("name", r.name);
      o.set("passed", r.passed);
      o.set("line", r.passed ? std::string() : vectors::describe(r));
      o.set("raised", r.raised);
      results.set(i, o);
    }
    val out = val::object();
    out.set("errors", errors);
    out.set("passed", s.passed);
    out.set("failed", s.failed);
    out.set("results", results);
    return out;
  });
}

/// What every value case of a vector file computes (vectors::compute), eagerly or through jit, before any
/// comparison: {errors: [reading problems], cases: [{name, value, grads: [...], second: [...]} with new tensor
/// handles, or {name, error: message} when the computation raised]}. Error cases are left out.
val compute_vectors(std::string text, std::string path, bool jit) {
  return guarded([&] {
    const vectors::VectorFile file = vectors::parse(text, path);
    val errors = val::array();
    for (size_t i = 0; i < file.errors.size(); ++i) errors.set(i, file.errors[i]);
    val cases = val::array();
    int n = 0;
    for (const vectors::Case& c : file.cases) {
      if (c.expects_error()) continue;
      val o = val::object();
      o.set("name", c.name);
      try {
        const vectors::Computed r = vectors::compute(c, jit);
        o.set("value", handle_val(r.value));
        o.set("grads", from_tensors(r.grads));
        o.set("second", from_tensors(r.second));
      } catch (const Error& e) {
        o.set("error", std::string(e.what()));
      }
      cases.set(n++, o);
    }
    val out = val::object();
    out.set("errors", errors);
    out.set("cases", cases);
    return out;
  });
}

/// Runs every case of a vector file without comparing to its expectations (vectors::case_outcome):
/// {errors: [reading problems], cases: [{name, outcome, shape, dtype} when ok, {name, outcome, message} when not]}.
val vector_outcomes(std::string text, std::string path) {
  return guarded([&] {
    const vectors::VectorFile file = vectors::parse(text, path);
    val errors = val::array();
    for (size_t i = 0; i < file.errors.size(); ++i) errors.set(i, file.errors[i]);
    val cases = val::array();
    for (size_t i = 0; i < file.cases.size(); ++i) {
      const vectors::CaseOutcome o = vectors::case_outcome(file.cases[i]);
      val c = val::object();
      c.set("name", o.name);
      c.set("outcome", o.outcome);
      if (o.ok()) {
        val shape = val::array();
        // Dimensions as doubles: a JavaScript number holds every size a tensor can have.
        for (size_t k = 0; k < o.shape.size(); ++k) shape.set(k, static_cast<double>(o.shape[k]));
        c.set("shape", shape);
        c.set("dtype", std::string(dtype_name(o.dtype)));
      } else {
        c.set("message", o.message);
      }
      cases.set(i, c);
    }
    val out = val::object();
    out.set("errors", errors);
    out.set("cases", cases);
    return out;
  });
}

}  // namespace
}  // namespace bprop::js

EMSCRIPTEN_BINDINGS(bprop_vectors) {
  using namespace emscripten;
  namespace js = bprop::js;
  function("runVectors", &js::run_vectors);
  function("computeVectors", &js::compute_vectors);
  function("vectorOutcomes", &js::vector_outcomes);
}
