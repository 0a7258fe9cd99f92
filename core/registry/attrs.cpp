#include "bprop/attrs.h"

#include <algorithm>
#include <cmath>

#include "bprop/errors.h"
#include "tensor/format.h"

namespace bprop {

std::string attr_value_str(const AttrValue& v) {
  std::string out;
  const auto list = [&out](const IntList& xs) {
    out += '[';
    for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
    out += ']';
  };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) out = "null";
        else if constexpr (std::is_same_v<T, bool>) out = x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::string>) out = '"' + x + '"';
        else if constexpr (std::is_same_v<T, IntList>) list(x);
        else if constexpr (std::is_same_v<T, IntMatrix>) {
          out += '[';
          for (size_t i = 0; i < x.size(); ++i) {
            if (i) out += ", ";
            list(x[i]);
          }
          out += ']';
        } else if constexpr (std::is_same_v<T, double>) out = format_number(x);
        else out = std::to_string(x);
      },
      v);
  return out;
}

void Attrs::set(const std::string& name, AttrValue v) {
  for (auto& [k, val] : items_) {
    if (k == name) {
      val = std::move(v);
      return;
    }
  }
  items_.emplace_back(name, std::move(v));
}

bool Attrs::has(const std::string& name) const {
  return std::any_of(items_.begin(), items_.end(), [&](const auto& kv) { return kv.first == name; });
}

const AttrValue& Attrs::get(const std::string& name) const {
  for (const auto& [k, v] : items_) {
    if (k == name) return v;
  }
  throw ValueError("attribute '" + name + "' is not set");
}

int64_t Attrs::get_int(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto p = std::get_if<int64_t>(&v)) return *p;
  throw ValueError("attribute '" + name + "' is not an int: " + attr_value_str(v));
}

double Attrs::get_float(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto p = std::get_if<double>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
  throw ValueError("attribute '" + name + "' is not a number: " + attr_value_str(v));
}

bool Attrs::get_bool(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto p = std::get_if<bool>(&v)) return *p;
  throw ValueError("attribute '" + name + "' is not a bool: " + attr_value_str(v));
}

const std::string& Attrs::get_string(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto p = std::get_if<std::string>(&v)) return *p;
  throw ValueError("attribute '" + name + "' is not a string: " + attr_value_str(v));
}

IntList Attrs::get_ints(const std::string& name) const {
  const AttrValue& v = get(name);
  if (auto p = std::get_if<IntList>(&v)) return *p;
  if (auto p = std::get_if<int64_t>(&v)) return {*p};
  throw ValueError("attribute '" + name + "' is not a list of ints: " + attr_value_str(v));
}

bool Attrs::is_null(const std::string& name) const { return std::holds_alternative<std::monostate>(get(name)); }

DType Attrs::get_dtype(const std::string& name) const { return parse_dtype(get_string(name), name); }

namespace {

const char* kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "an int";
    case AttrKind::Float: return "a number";
    case AttrKind::OptFloat: return "a number or null";
    case AttrKind::Bool: return "a bool";
    case AttrKind::String: return "a string";
    case AttrKind::IntList: return "a list of ints";
    case AttrKind::Axes: return "an int, a list of ints or null";
    case AttrKind::OptInt: return "an int or null";
    case AttrKind::IntPair: return "an int or a pair of ints";
    case AttrKind::IntMatrix: return "a list of int lists";
    case AttrKind::DType: return "a dtype name";
  }
  return "?";
}

// A whole number inside int64's range, as an int (the range is checked first: converting a double outside it is
// undefined, and printed -9223372036854775808 for 1e300).
bool integral_double(const AttrValue& v, int64_t* out) {
  if (auto d = std::get_if<double>(&v); d && std::isfinite(*d) && std::floor(*d) == *d && *d >= -0x1p63 && *d < 0x1p63) {
    *out = static_cast<int64_t>(*d);
    return true;
  }
  return false;
}

// Why a number is not an int, for the message ("" when it is not a number).
std::string why_not_int(const AttrValue& v) {
  const double* d = std::get_if<double>(&v);
  if (!d) return "";
  if (!std::isfinite(*d) || std::floor(*d) != *d) return " (not a whole number)";
  return " (outside the int64 range)";
}

// Returns the value converted to the spec's kind, or throws.
AttrValue coerce(const std::string& op, const AttrSpec& spec, const AttrValue& v) {
  auto bad = [&]() -> AttrValue {
    const bool wants_int = spec.kind == AttrKind::Int || spec.kind == AttrKind::OptInt || spec.kind == AttrKind::IntList ||
                           spec.kind == AttrKind::Axes || spec.kind == AttrKind::IntPair;
    throw ValueError("For '" + op + "', attribute '" + spec.name + "' must be " + kind_name(spec.kind) + ", got " +
                     attr_value_str(v) + (wants_int ? why_not_int(v) : ""));
  };
  const bool is_null = std::holds_alternative<std::monostate>(v);
  int64_t iv = 0;
  switch (spec.kind) {
    case AttrKind::Int:
      if (std::holds_alternative<int64_t>(v)) return v;
      if (integral_double(v, &iv)) return iv;
      return bad();
    case AttrKind::OptInt:
      if (is_null || std::holds_alternative<int64_t>(v)) return v;
      if (integral_double(v, &iv)) return iv;
      return bad();
    case AttrKind::Float:
      if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
      if (std::holds_alternative<double>(v)) return v;
      return bad();
    case AttrKind::OptFloat:
      if (auto p = std::get_if<int64_t>(&v)) return static_cast<double>(*p);
      if (is_null || std::holds_alternative<double>(v)) return v;
      return bad();
    case AttrKind::Bool:
      if (std::holds_alternative<bool>(v)) return v;
      return bad();
    case AttrKind::String:
      if (auto p = std::get_if<std::string>(&v)) {
        if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), *p) == spec.choices.end()) {
          std::string options;
          for (const auto& c : spec.choices) options += (options.empty() ? "\"" : ", \"") + c + "\"";
          throw ValueError("For '" + op + "', attribute '" + spec.name + "' must be one of " + options + ", got \"" +
                           *p + "\"");
        }
        return v;
      }
      return bad();
    case AttrKind::IntList:
      if (auto p = std::get_if<int64_t>(&v)) return IntList{*p};
      if (std::holds_alternative<IntList>(v)) return v;
      return bad();
    case AttrKind::Axes:
      if (is_null || std::holds_alternative<int64_t>(v) || std::holds_alternative<IntList>(v)) return v;
      return bad();
    case AttrKind::IntPair:
      if (auto p = std::get_if<int64_t>(&v)) return IntList{*p, *p};
      if (auto p = std::get_if<IntList>(&v); p && p->size() == 2) return v;
      return bad();
    case AttrKind::IntMatrix:
      if (std::holds_alternative<IntMatrix>(v)) return v;
      if (auto p = std::get_if<IntList>(&v); p && p->empty()) return IntMatrix{};
      return bad();
    case AttrKind::DType:
      if (auto p = std::get_if<std::string>(&v)) {
        parse_dtype(*p, "For '" + op + "', attribute '" + spec.name + "'");
        return v;
      }
      return bad();
  }
  return bad();
}

}  // namespace

Attrs normalize_attrs(const std::string& op, const std::vector<AttrSpec>& schema, const Attrs& given) {
  for (const auto& item : given.items()) {
    const std::string& name = item.first;  // a plain reference: lambdas may not capture structured bindings in clang 14
    if (std::none_of(schema.begin(), schema.end(), [&](const AttrSpec& s) { return s.name == name; })) {
      std::string known;
      for (const auto& s : schema) known += (known.empty() ? "" : ", ") + s.name;
      throw ValueError("For '" + op + "', unknown attribute '" + name + "' (" +
                       (known.empty() ? std::string("the op takes no attributes") : "expected: " + known) + ")");
    }
  }
  Attrs out;
  for (const auto& spec : schema) {
    if (given.has(spec.name)) {
      out.set(spec.name, coerce(op, spec, given.get(spec.name)));
    } else if (spec.required) {
      throw ValueError("For '" + op + "', the required attribute '" + spec.name + "' is missing");
    } else {
      out.set(spec.name, spec.default_value);
    }
  }
  return out;
}

}  // namespace bprop
