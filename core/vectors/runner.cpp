// Running vector cases: the program through call_op, gradients through the public grad API, then an
// element-by-element comparison that reports the worst element.
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <tuple>

#include "bprop/grad.h"
#include "bprop/jit.h"
#include "bprop/ops.h"
#include "bprop/registry.h"
#include "bprop/vectors.h"

namespace bprop::vectors {
namespace {

using Env = std::map<std::string, Tensor>;

Tensor run_program(const Case& c, Env env) {
  for (const Statement& st : c.program) {
    const OpDef& op = registry().get(st.op);  // UnknownOpError for a name that is not registered
    std::vector<Tensor> inputs;
    for (const Arg& a : st.args) {
      switch (a.kind) {
        case Arg::Kind::Name: inputs.push_back(env.at(a.name)); break;
        case Arg::Kind::Null: inputs.emplace_back(); break;
        case Arg::Kind::List:
          if (!op.variadic) {
            throw ValueError("For '" + st.op + "', a list of tensors was given but the op takes no list argument");
          }
          for (const auto& n : a.names) inputs.push_back(env.at(n));
          break;
      }
    }
    if (op.variadic && !(st.args.size() == 1 && st.args[0].kind == Arg::Kind::List)) {
      throw ValueError("For '" + st.op + "', the tensors must be given as one list argument");
    }
    env[st.out] = call_op(op, inputs, st.attrs);
  }
  return env.at(c.output);
}

Env base_env(const Case& c) {
  Env env;
  for (const auto& [name, t] : c.inputs) env[name] = t.to_tensor(c.dtype);
  return env;
}

// The case's program as a function of its wrt inputs (every other input is a constant).
Fn program_fn(const Case& c, const Env& base) {
  return [&c, base](const std::vector<Tensor>& xs) -> Value {
    Env env = base;
    for (size_t i = 0; i < c.wrt.size(); ++i) env[c.wrt[i]] = xs[i];
    return run_program(c, env);
  };
}

std::vector<int> all_positions(size_t n) {
  std::vector<int> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int>(i);
  return p;
}

// Value and sens . d out / d xs: vjp with the case's cotangent, value_and_grad (cotangent of ones) without.
std::pair<Tensor, std::vector<Tensor>> first_order(const Fn& f, const std::vector<Tensor>& xs, const Tensor& sens) {
  if (sens.defined()) return vjp(f, xs, sens);
  const Value r = value_and_grad(f, GradPosition(all_positions(xs.size())))(xs);
  return {r[0].tensor(), r[1].flatten()};
}

// ---- comparison ----

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string short_num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    const int64_t d = shape[k] > 0 ? shape[k] : 1;
    idx[k] = flat % d;
    flat /= d;
  }
  return idx;
}

struct Comparison {
  std::string problem;          // shape / dtype difference (no element comparison then)
  std::optional<Mismatch> worst;
  double worst_excess = 0.0;    // |got - want| / (atol + rtol |want|) of the worst element
};

// Non-finite expected values pass only when equal (nan with nan, inf with the same inf).
void compare(const std::string& what, const Tensor& got, const VTensor& want, double rtol, double atol,
             Comparison& cmp) {
  if (got.shape() != want.shape) {
    if (cmp.problem.empty()) {
      cmp.problem = what + " has shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape);
    }
    return;
  }
  if (got.dtype() != want.dtype) {
    if (cmp.problem.empty()) {
      cmp.problem = what + " has dtype " + std::string(dtype_name(got.dtype())) + ", expected " + dtype_name(want.dtype);
    }
    return;
  }
  const std::vector<double> g = got.to_vector<double>();
  Mismatch m;
  double worst = 0.0;
  int64_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want.data[i], v = g[i];
    double excess = 0.0;
    if (!std::isfinite(w)) {
      const bool same = std::isnan(w) ? std::isnan(v) : v == w;
      excess = same ? 0.0 : std::numeric_limits<double>::infinity();
    } else if (!std::isfinite(v)) {
      excess = std::numeric_limits<double>::infinity();
    } else {
      const double diff = std::fabs(v - w), tol = atol + rtol * std::fabs(w);
      if (diff > tol) excess = tol > 0.0 ? diff / tol : std::numeric_limits<double>::infinity();
    }
    if (excess > 0.0) {
      ++bad;
      if (excess > worst || m.tensor.empty()) {
        worst = excess;
        m.tensor = what;
        m.flat_index = static_cast<int64_t>(i);
        m.got = v;
        m.want = w;
        m.abs_err = std::fabs(v - w);
        m.rel_err = w != 0.0 ? m.abs_err / std::fabs(w) : (m.abs_err == 0.0 ? 0.0 : std::numeric_limits<double>::infinity());
      }
    }
  }
  if (bad == 0) return;
  m.index = unravel(m.flat_index, want.shape);
  m.bad_elements = bad;
  m.elements = static_cast<int64_t>(g.size());
  if (!cmp.worst || worst > cmp.worst_excess) {
    cmp.worst = m;
    cmp.worst_excess = worst;
  }
}

std::string index_str(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

std::string error_text(const Error& e) { return std::string("a '") + error_kind_name(e.kind()) + "' error: " + e.what(); }

// fn(args), or (jit) fn traced into a graph and the graph run: what the jit check of the vectors runs.
Value call(bool jit, const Fn& fn, const std::vector<Tensor>& args) {
  if (!jit) return fn(args);
  const JitFn traced = bprop::jit(fn, {}, {nullptr, 0});  // (the vector names the case, not a line here)
  Value out = traced(args);
  if (traced.stats().traces != 1) {  // e.g. run eagerly under an open grad level: not what the check is for
    throw ValueError("jit: the case was not traced and replayed");
  }
  return out;
}

// The program as a function of every input, so that under jit the whole program is traced.
Value whole_program(const Case& c, bool jit) {
  const Env base = base_env(c);
  std::vector<Tensor> all;
  for (const auto& [name, t] : c.inputs) all.push_back(base.at(name));
  const Fn whole = [&c](const std::vector<Tensor>& a) -> Value {
    Env env;
    for (size_t i = 0; i < a.size(); ++i) env[c.inputs[i].first] = a[i];
    return run_program(c, env);
  };
  return call(jit, whole, all);
}

// Value and first-order gradients as one function of the wrt inputs (so that jit traces both together).
Fn first_order_fn(const Fn& f, const Tensor& sens) {
  return [f, sens](const std::vector<Tensor>& xs) -> Value {
    const auto [value, grads] = first_order(f, xs, sens);
    return Value{Value(value), Value::tuple(grads)};
  };
}

std::vector<Tensor> wrt_inputs(const Case& c, const Env& base) {
  std::vector<Tensor> xs;
  for (const auto& n : c.wrt) xs.push_back(base.at(n));
  return xs;
}

}  // namespace

Computed compute(const Case& c, bool jit) {
  Computed out;
  if (c.wrt.empty()) {
    out.value = whole_program(c, jit).tensor();
    return out;
  }
  const Env base = base_env(c);
  const std::vector<Tensor> xs = wrt_inputs(c, base);
  const Tensor sens = c.sens ? c.sens->to_tensor(c.dtype) : Tensor();
  const Fn f = program_fn(c, base);
  const Value first = call(jit, first_order_fn(f, sens), xs);
  out.value = first[0].tensor();
  out.grads = first[1].flatten();
  if (c.has_second) {
    // d/dxs sum(grads[0]): the gradient computation is itself differentiated (nested grad levels).
    const Fn g0 = [f, sens](const std::vector<Tensor>& ys) -> Value {
      return ops::sum(first_order(f, ys, sens).second.at(0));
    };
    out.second = call(jit, grad(g0, GradPosition(all_positions(xs.size()))), xs).flatten();
  }
  return out;
}

namespace {

// Everything a value case computes, then compared.
void run_value_case(const Case& c, bool jit, CaseResult& r) {
  const Computed computed = compute(c, jit);
  const Tensor& value = computed.value;
  const std::vector<Tensor>& grads = computed.grads;
  const std::vector<Tensor>& second = computed.second;
  Comparison cmp;
  compare("value", value, *c.value, c.rtol, c.atol, cmp);
  for (size_t i = 0; i < c.grads.size() && i < grads.size(); ++i) {
    compare("grads[" + c.grads[i].first + "]", grads[i], c.grads[i].second, c.rtol, c.atol, cmp);
  }
  for (size_t i = 0; i < c.second.size() && i < second.size(); ++i) {
    compare("second[" + c.second[i].first + "]", second[i], c.second[i].second, c.rtol, c.atol, cmp);
  }
  if (!cmp.problem.empty()) {
    r.message = cmp.problem;
  } else if (cmp.worst) {
    const Mismatch& m = *cmp.worst;
    r.worst = m;
    r.message = m.tensor + " at " + index_str(m.index) + ": got " + num(m.got) + ", want " + num(m.want) +
                " (abs err " + short_num(m.abs_err) + ", rel err " + short_num(m.rel_err) + "; atol " +
                short_num(c.atol) + ", rtol " + short_num(c.rtol) + "); " + std::to_string(m.bad_elements) + " of " +
                std::to_string(m.elements) + " elements out of tolerance";
  } else {
    r.passed = true;
  }
}

// The program's output; when the case has wrt names, computed along with the first-order gradients (which are
// dropped), so that differentiating is part of the run.
Tensor run_forward_and_first_order(const Case& c, bool jit = false) {
  if (c.wrt.empty()) return whole_program(c, jit).tensor();
  const Env base = base_env(c);
  const Fn f = program_fn(c, base);
  return call(jit, first_order_fn(f, c.sens ? c.sens->to_tensor(c.dtype) : Tensor()), wrt_inputs(c, base))[0].tensor();
}

void run_error_case(const Case& c, bool jit, CaseResult& r) {
  try {
    try {
      run_forward_and_first_order(c, jit);
    } catch (const std::bad_alloc&) {  // an allocation outside the ops (the runner's own): still a memory error
      throw MemoryError("out of memory while running the case");
    }
  } catch (const Error& e) {
    r.raised = e.what();
    if (c.error == error_kind_name(e.kind())) {
      r.passed = true;
    } else {
      r.message = "expected a '" + c.error + "' error, got " + error_text(e);
    }
    return;
  }
  r.message = "expected a '" + c.error + "' error, but the program ran without one";
}

}  // namespace

CaseResult run_case(const Case& c, bool jit) {
  CaseResult r;
  r.name = c.name;
  try {
    if (c.expects_error()) run_error_case(c, jit, r);
    else run_value_case(c, jit, r);
  } catch (const Error& e) {
    r.passed = false;
    r.message = "failed with " + error_text(e);
  } catch (const std::exception& e) {
    r.passed = false;
    r.message = std::string("failed with an exception that is not a bprop error: ") + e.what();
  } catch (...) {
    r.passed = false;
    r.message = "failed with an unknown exception";
  }
  return r;
}

CaseOutcome case_outcome(const Case& c) {
  CaseOutcome o;
  o.name = c.name;
  try {
    const Tensor out = run_forward_and_first_order(c);
    o.outcome = "ok";
    o.shape = out.shape();
    o.dtype = out.dtype();
  } catch (const Error& e) {
    o.outcome = error_kind_name(e.kind());
    o.message = e.what();
  } catch (const std::bad_alloc& e) {
    o.outcome = error_kind_name(ErrorKind::Memory);
    o.message = e.what();
  } catch (const std::exception& e) {
    o.outcome = "other";
    o.message = e.what();
  } catch (...) {
    o.outcome = "other";
    o.message = "an exception that is not a std::exception";
  }
  return o;
}

FileSummary run_file(const VectorFile& file, bool jit) {
  FileSummary s;
  s.path = file.path;
  s.errors = file.errors;
  for (const Case& c : file.cases) {
    s.results.push_back(run_case(c, jit));
    if (s.results.back().passed) ++s.passed;
    else ++s.failed;
  }
  return s;
}

std::string describe(const CaseResult& result) {
  return result.name + ": " + (result.passed ? std::string("passed") : result.message);
}

}  // namespace bprop::vectors
