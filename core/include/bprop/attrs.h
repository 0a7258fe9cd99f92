// Op attributes: values, the schema an op declares, and the normalised set a kernel reads.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bprop/dtype.h"

namespace bprop {

using IntList = std::vector<int64_t>;
using IntMatrix = std::vector<std::vector<int64_t>>;

/// An attribute value: null, bool, int, float, string, list of ints, or list of int lists.
using AttrValue = std::variant<std::monostate, bool, int64_t, double, std::string, IntList, IntMatrix>;

std::string attr_value_str(const AttrValue& v);

/// What an attribute accepts.
enum class AttrKind {
  Int,          // int
  Float,        // number
  OptFloat,     // number or null
  Bool,         // bool
  String,       // string, one of `choices` when given
  IntList,      // list of ints (an int is taken as a one-element list)
  Axes,         // int, list of ints or null (all axes)
  OptInt,       // int or null
  IntPair,      // int or [h, w]
  IntMatrix,    // list of int lists
  DType,        // dtype name
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  AttrValue default_value;       // std::monostate with `required` false means null
  bool required = false;
  std::vector<std::string> choices = {};
};

/// Named attribute values as given by a caller, or normalised against a schema (then every schema entry is
/// present, in schema order).
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) : items_(items) {}

  void set(const std::string& name, AttrValue v);
  bool has(const std::string& name) const;
  const AttrValue& get(const std::string& name) const;  // ValueError when absent
  bool empty() const { return items_.empty(); }
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  IntList get_ints(const std::string& name) const;  // an int reads as one element
  bool is_null(const std::string& name) const;
  DType get_dtype(const std::string& name) const;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

/// Checks `given` against `schema` for `op`: unknown names and ill-typed values are ValueErrors; fills defaults.
Attrs normalize_attrs(const std::string& op, const std::vector<AttrSpec>& schema, const Attrs& given);

}  // namespace bprop
