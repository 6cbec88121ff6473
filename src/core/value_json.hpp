// Axis values and parameter sets as JSON (integers stay integers, words strings). Torch-free.
#pragma once
#include <nlohmann/json.hpp>

#include "core/value.hpp"

namespace opbench {

inline nlohmann::ordered_json value_json(const Value& v) {
  if (auto i = std::get_if<int64_t>(&v)) return *i;
  return std::get<std::string>(v);
}

// {axis: value, ...} in axis-name order.
inline nlohmann::ordered_json params_json(const Params& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : p.values()) j[k] = value_json(v);
  return j;
}

}  // namespace opbench
