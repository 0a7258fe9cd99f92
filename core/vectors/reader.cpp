// Reading and validating vector files (bprop-vectors/1). Every problem becomes a message naming the file,
// the case and the field; a malformed case is left out, the rest of the file is still read.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "bprop/vectors.h"
#include "tensor/file_io.h"
#include "tensor/format.h"
#include "tensor/json_depth.h"

namespace bprop::vectors {
namespace {

using json = nlohmann::ordered_json;

// A problem in one field of the case being read.
struct Problem {
  std::string field;
  std::string what;
};

[[noreturn]] void fail(const std::string& field, const std::string& what) { throw Problem{field, what}; }

std::string type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "a list";
    case json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

void check_keys(const json& obj, const std::string& field, const std::set<std::string>& allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!allowed.count(it.key())) {
      std::string known;
      for (const auto& k : allowed) known += (known.empty() ? "" : ", ") + k;
      fail(join(field, it.key()), "unknown field (expected: " + known + ")");
    }
  }
}

const json& require(const json& obj, const char* key, const std::string& field) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(join(field, key), "missing");
  return *it;
}

std::string string_of(const json& j, const std::string& field) {
  if (!j.is_string()) fail(field, "must be a string, got " + type_name(j));
  return j.get<std::string>();
}

// Whether v is a value of the half dtype `dt` (NaN counts as one).
bool representable_in(DType dt, double v) {
  if (v != v) return true;
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) != v) return false;
  const float back = dt == DType::Float16 ? half_bits_to_float(float_to_half_bits(f))
                                          : bfloat16_bits_to_float(float_to_bfloat16_bits(f));
  return back == f;
}

DType dtype_of(const json& j, const std::string& field, bool float_only) {
  const std::string s = string_of(j, field);
  if (s == "float32") return DType::Float32;
  if (s == "float64") return DType::Float64;
  if (s == "float16") return DType::Float16;
  if (s == "bfloat16") return DType::BFloat16;
  if (!float_only && s == "int32") return DType::Int32;
  if (!float_only && s == "bool") return DType::Bool;
  fail(field, "unknown dtype \"" + s + "\" (expected " +
                  (float_only ? std::string("\"float32\", \"float64\", \"float16\" or \"bfloat16\"")
                              : std::string("\"float32\", \"float64\", \"float16\", \"bfloat16\", \"int32\" or \"bool\"")) +
                  ")");
}

double tolerance_of(const json& j, const std::string& field) {
  if (!j.is_number()) fail(field, "must be a number, got " + type_name(j));
  const double v = j.get<double>();
  if (!(v >= 0.0) || !std::isfinite(v)) fail(field, "must be a finite number >= 0");
  return v;
}

VTensor tensor_of(const json& j, const std::string& field) {
  if (!j.is_object()) fail(field, "must be a tensor object {\"shape\", \"dtype\", \"data\"}, got " + type_name(j));
  check_keys(j, field, {"shape", "dtype", "data"});
  VTensor t;
  const json& shape = require(j, "shape", field);
  if (!shape.is_array()) fail(join(field, "shape"), "must be a list of sizes, got " + type_name(shape));
  int64_t numel = 1;
  bool huge = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const json& d = shape[i];
    const std::string f = join(field, "shape") + "[" + std::to_string(i) + "]";
    if (!d.is_number_integer()) fail(f, "must be an integer size, got " + type_name(d));
    if (d.is_number_unsigned() ? d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                               : d.get<int64_t>() < 0) {
      fail(f, "must be a size >= 0");
    }
    const int64_t v = d.get<int64_t>();
    t.shape.push_back(v);
    if (v != 0 && numel > std::numeric_limits<int64_t>::max() / v) huge = true;
    else numel *= v;
  }
  t.dtype = dtype_of(require(j, "dtype", field), join(field, "dtype"), false);
  try {
    checked_numel(t.shape, t.dtype);  // rank and size limits, before anything is allocated for it
  } catch (const Error& e) {
    fail(join(field, "shape"), e.what());
  }
  const json& data = require(j, "data", field);
  const std::string df = join(field, "data");
  if (!data.is_array()) fail(df, "must be a list of values, got " + type_name(data));
  if (huge || static_cast<int64_t>(data.size()) != numel) {
    fail(df, "has " + std::to_string(data.size()) + " values but shape " + shape_str(t.shape) + " needs " +
                 (huge ? std::string("more than 2^63") : std::to_string(numel)));
  }
  t.data.reserve(data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    const json& v = data[i];
    const std::string f = df + "[" + std::to_string(i) + "]";
    switch (t.dtype) {
      case DType::Bool:
        if (!v.is_boolean()) fail(f, "a bool tensor holds true/false, got " + type_name(v));
        t.data.push_back(v.get<bool>() ? 1.0 : 0.0);
        break;
      case DType::Int32: {
        if (!v.is_number_integer()) fail(f, "an int32 tensor holds integers, got " + type_name(v));
        const bool in_range = v.is_number_unsigned()
                                  ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max())
                                  : (v.get<int64_t>() >= std::numeric_limits<int32_t>::min() &&
                                     v.get<int64_t>() <= std::numeric_limits<int32_t>::max());
        if (!in_range) fail(f, "is out of the int32 range");
        t.data.push_back(static_cast<double>(v.get<int64_t>()));
        break;
      }
      default:
        if (v.is_number()) {
          t.data.push_back(v.get<double>());
        } else if (v.is_string() && v.get<std::string>() == "nan") {
          t.data.push_back(std::numeric_limits<double>::quiet_NaN());
        } else if (v.is_string() && v.get<std::string>() == "inf") {
          t.data.push_back(std::numeric_limits<double>::infinity());
        } else if (v.is_string() && v.get<std::string>() == "-inf") {
          t.data.push_back(-std::numeric_limits<double>::infinity());
        } else {
          fail(f, "a float tensor holds numbers or \"nan\", \"inf\", \"-inf\", got " +
                      (v.is_string() ? "\"" + v.get<std::string>() + "\"" : type_name(v)));
        }
        if (is_half(t.dtype) && !representable_in(t.dtype, t.data.back())) {
          fail(f, "is " + format_g(t.data.back(), 17) + ", which " + dtype_name(t.dtype) +
                      " does not hold exactly (data of a half tensor are values of that dtype)");
        }
    }
  }
  return t;
}

AttrValue attr_of(const json& v, const std::string& field) {
  switch (v.type()) {
    case json::value_t::null: return std::monostate{};
    case json::value_t::boolean: return v.get<bool>();
    case json::value_t::number_integer: return v.get<int64_t>();
    case json::value_t::number_unsigned:
      if (v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail(field, "is too large");
      return v.get<int64_t>();
    case json::value_t::number_float: return v.get<double>();
    case json::value_t::string: return v.get<std::string>();
    case json::value_t::array: {
      if (v.empty()) return IntList{};
      bool all_ints = true, all_lists = true;
      for (const auto& e : v) {
        all_ints = all_ints && e.is_number_integer();
        all_lists = all_lists && e.is_array() &&
                    std::all_of(e.begin(), e.end(), [](const json& x) { return x.is_number_integer(); });
      }
      if (all_ints) return v.get<IntList>();
      if (all_lists) return v.get<IntMatrix>();
      break;
    }
    default: break;
  }
  fail(field, "an attribute is null, a bool, a number, a string, a list of integers or a list of integer lists, got " +
                  type_name(v));
}

Statement statement_of(const json& s, const std::string& field, std::set<std::string>& defined) {
  if (!s.is_array() || s.size() < 2) {
    fail(field, "a statement is a list [OUT, OP, ARG..., ATTRS?], got " +
                    (s.is_array() ? "a list of " + std::to_string(s.size()) : type_name(s)));
  }
  Statement st;
  st.out = string_of(s[0], field + "[0]");
  if (st.out.empty()) fail(field + "[0]", "the output name is empty");
  st.op = string_of(s[1], field + "[1]");
  if (st.op.empty()) fail(field + "[1]", "the op name is empty");
  auto known = [&](const json& n, const std::string& f) {
    const std::string name = string_of(n, f);
    if (!defined.count(name)) fail(f, "unknown name '" + name + "' (not an input or an earlier output)");
    return name;
  };
  for (size_t i = 2; i < s.size(); ++i) {
    const json& a = s[i];
    const std::string f = field + "[" + std::to_string(i) + "]";
    if (a.is_object()) {
      if (i + 1 != s.size()) fail(f, "the attributes object must be the last element of the statement");
      for (auto it = a.begin(); it != a.end(); ++it) st.attrs.set(it.key(), attr_of(it.value(), join(f, it.key())));
    } else if (a.is_null()) {
      st.args.push_back({Arg::Kind::Null, "", {}});
    } else if (a.is_array()) {
      Arg arg{Arg::Kind::List, "", {}};
      for (size_t k = 0; k < a.size(); ++k) arg.names.push_back(known(a[k], f + "[" + std::to_string(k) + "]"));
      st.args.push_back(std::move(arg));
    } else if (a.is_string()) {
      st.args.push_back({Arg::Kind::Name, known(a, f), {}});
    } else {
      fail(f, "an argument is a name, null, a list of names or (last) an attributes object, got " + type_name(a));
    }
  }
  if (defined.count(st.out)) fail(field + "[0]", "'" + st.out + "' is already defined (outputs must be new names)");
  defined.insert(st.out);
  return st;
}

NamedTensors per_wrt(const json& obj, const std::string& field, const std::vector<std::string>& wrt) {
  if (!obj.is_object()) fail(field, "must be an object {NAME: TENSOR} with one entry per wrt name, got " + type_name(obj));
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(wrt.begin(), wrt.end(), it.key()) == wrt.end()) {
      fail(join(field, it.key()), "is not a wrt name");
    }
  }
  NamedTensors out;
  for (const auto& n : wrt) {
    auto it = obj.find(n);
    if (it == obj.end()) fail(join(field, n), "missing (every wrt name needs one)");
    out.emplace_back(n, tensor_of(*it, join(field, n)));
  }
  return out;
}

Case case_of(const json& c) {
  if (!c.is_object()) fail("", "a case must be an object, got " + type_name(c));
  check_keys(c, "", {"name", "dtype", "inputs", "program", "output", "sens", "wrt", "expected", "rtol", "atol"});
  Case k;
  k.name = string_of(require(c, "name", ""), "name");
  if (k.name.empty()) fail("name", "is empty");
  if (auto it = c.find("dtype"); it != c.end()) k.dtype = dtype_of(*it, "dtype", true);

  const json& inputs = require(c, "inputs", "");
  if (!inputs.is_object()) fail("inputs", "must be an object {NAME: TENSOR}, got " + type_name(inputs));
  std::set<std::string> defined;
  for (auto it = inputs.begin(); it != inputs.end(); ++it) {
    if (it.key().empty()) fail("inputs", "an input name is empty");
    k.inputs.emplace_back(it.key(), tensor_of(it.value(), join("inputs", it.key())));
    defined.insert(it.key());
  }

  const json& program = require(c, "program", "");
  if (!program.is_array()) fail("program", "must be a list of statements, got " + type_name(program));
  for (size_t i = 0; i < program.size(); ++i) {
    k.program.push_back(statement_of(program[i], "program[" + std::to_string(i) + "]", defined));
  }
  k.output = string_of(require(c, "output", ""), "output");
  if (!defined.count(k.output)) fail("output", "unknown name '" + k.output + "' (not an input or a program output)");

  if (auto it = c.find("wrt"); it != c.end()) {
    if (!it->is_array()) fail("wrt", "must be a list of input names, got " + type_name(*it));
    for (size_t i = 0; i < it->size(); ++i) {
      const std::string f = "wrt[" + std::to_string(i) + "]";
      const std::string n = string_of((*it)[i], f);
      auto in = std::find_if(k.inputs.begin(), k.inputs.end(), [&](const auto& p) { return p.first == n; });
      if (in == k.inputs.end()) fail(f, "unknown input '" + n + "'");
      if (!is_float(in->second.dtype)) {
        fail(f, "input '" + n + "' is " + dtype_name(in->second.dtype) + "; only float inputs are differentiated");
      }
      if (std::find(k.wrt.begin(), k.wrt.end(), n) != k.wrt.end()) fail(f, "'" + n + "' is listed twice");
      k.wrt.push_back(n);
    }
  }
  if (auto it = c.find("sens"); it != c.end()) {
    k.sens = tensor_of(*it, "sens");
    if (!is_float(k.sens->dtype)) fail("sens.dtype", "the cotangent must be float32 or float64");
  }

  const json& expected = require(c, "expected", "");
  if (!expected.is_object()) fail("expected", "must be an object, got " + type_name(expected));
  if (auto it = expected.find("error"); it != expected.end()) {
    check_keys(expected, "expected", {"error"});
    k.error = string_of(*it, "expected.error");
    if (k.error != "shape" && k.error != "dtype" && k.error != "value" && k.error != "unknown_op" &&
        k.error != "memory") {
      fail("expected.error", "unknown error kind \"" + k.error + "\" (expected \"shape\", \"dtype\", \"value\", "
                             "\"unknown_op\" or \"memory\")");
    }
  } else {
    check_keys(expected, "expected", {"value", "grads", "second"});
    k.value = tensor_of(require(expected, "value", "expected"), "expected.value");
    if (auto g = expected.find("grads"); g != expected.end()) {
      k.grads = per_wrt(*g, "expected.grads", k.wrt);
    } else if (!k.wrt.empty()) {
      fail("expected.grads", "missing (the case has wrt names)");
    }
    if (auto s = expected.find("second"); s != expected.end()) {
      if (k.wrt.empty()) fail("expected.second", "needs wrt names");
      k.second = per_wrt(*s, "expected.second", k.wrt);
      k.has_second = true;
    }
  }
  const auto [rtol, atol] = default_tolerances(k.dtype);
  k.rtol = c.contains("rtol") ? tolerance_of(c["rtol"], "rtol") : rtol;
  k.atol = c.contains("atol") ? tolerance_of(c["atol"], "atol") : atol;
  return k;
}

}  // namespace

std::pair<double, double> default_tolerances(DType dtype) {
  if (dtype == DType::Float64) return {1e-10, 1e-12};
  if (dtype == DType::Float16) return {1e-3, 1e-5};  // torch.testing.assert_close's
  if (dtype == DType::BFloat16) return {1.6e-2, 1e-5};
  return {1e-5, 1e-6};
}

Tensor VTensor::to_tensor(DType float_dtype) const {
  if (dtype == DType::Int32) {
    std::vector<int32_t> v(data.size());
    for (size_t i = 0; i < data.size(); ++i) v[i] = static_cast<int32_t>(data[i]);
    return tensor_i32(v, shape);
  }
  if (dtype == DType::Bool) {
    std::vector<bool> v(data.size());
    for (size_t i = 0; i < data.size(); ++i) v[i] = data[i] != 0.0;
    return tensor_bool(v, shape);
  }
  return tensor(data, shape, float_dtype);
}

VectorFile parse(const std::string& text, const std::string& path) {
  VectorFile f;
  f.path = path;
  json doc;
  if (const size_t depth = json_depth(text); depth > kMaxJsonDepth) {
    f.errors.push_back(path + ": nests lists and objects " + std::to_string(depth) + " deep, more than the limit of " +
                       std::to_string(kMaxJsonDepth) + " (not read)");
    return f;
  }
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    f.errors.push_back(path + ": not valid JSON: " + e.what());
    return f;
  }
  auto top = [&](const std::string& field, const std::string& what) {
    f.errors.push_back(path + ": field '" + field + "': " + what);
  };
  if (!doc.is_object()) {
    top("(top level)", "a vector file is an object {\"format\", \"source\", \"cases\"}, got " + type_name(doc));
    return f;
  }
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() != "format" && it.key() != "source" && it.key() != "cases") {
      top(it.key(), "unknown field (expected: format, source, cases)");
    }
  }
  auto format = doc.find("format");
  if (format == doc.end()) {
    top("format", "missing (expected \"" + std::string(kFormat) + "\")");
    return f;
  }
  if (!format->is_string() || format->get<std::string>() != kFormat) {
    top("format", "expected \"" + std::string(kFormat) + "\", got " + format->dump());
    return f;
  }
  if (auto source = doc.find("source"); source != doc.end()) {
    if (source->is_string()) f.source = source->get<std::string>();
    else top("source", "must be a string, got " + type_name(*source));
  }
  auto cases = doc.find("cases");
  if (cases == doc.end() || !cases->is_array()) {
    top("cases", cases == doc.end() ? "missing" : "must be a list of cases, got " + type_name(*cases));
    return f;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < cases->size(); ++i) {
    const json& c = (*cases)[i];
    std::string label = "case #" + std::to_string(i);
    if (c.is_object()) {
      if (auto n = c.find("name"); n != c.end() && n->is_string()) label = "case '" + n->get<std::string>() + "'";
    }
    try {
      Case k = case_of(c);
      if (!names.insert(k.name).second) fail("name", "duplicate case name '" + k.name + "'");
      f.cases.push_back(std::move(k));
    } catch (const Problem& p) {
      f.errors.push_back(path + ": " + label + ": " + (p.field.empty() ? "" : "field '" + p.field + "': ") + p.what);
    } catch (const std::exception& e) {  // nlohmann conversions; the checks above should leave none
      f.errors.push_back(path + ": " + label + ": " + e.what());
    }
  }
  return f;
}

VectorFile load_file(const std::string& path) {
  std::string text;
  const FileRead r = read_whole_file(path, text);
  if (r != FileRead::Ok) {
    VectorFile f;
    f.path = path;
    f.errors.push_back(path + (r == FileRead::CannotOpen ? ": cannot open the file" : ": cannot read the file"));
    return f;
  }
  return parse(text, path);
}

VectorFile load_file_strict(const std::string& path) {
  VectorFile f = load_file(path);
  if (!f.errors.empty()) throw FormatError(f.errors.front());
  return f;
}

}  // namespace bprop::vectors
