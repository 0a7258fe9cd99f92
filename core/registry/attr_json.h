// An attribute value as JSON (null for an absent one): shared by the exports of autodiff graphs and jitted graphs.
#pragma once
#include <nlohmann/json.hpp>
#include <type_traits>
#include <variant>

#include "bprop/attrs.h"

namespace bprop {

// ordered: keys print in the order written, as the formats in docs/graph.md show them (and one json type in the
// module, not two).
using OrderedJson = nlohmann::ordered_json;

inline OrderedJson attr_json(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> OrderedJson {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return OrderedJson(x);
      },
      v);
}

}  // namespace bprop
