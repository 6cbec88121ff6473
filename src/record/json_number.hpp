// A number as the runs document writes it: a finite number as itself, NaN (nothing known) as
// null, an infinity as the string "inf" or "-inf". Torch-free.
#pragma once
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace opbench {

inline nlohmann::ordered_json number_json(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// The number `j` writes into *out; false when it is none of those.
inline bool number_of_json(const nlohmann::ordered_json& j, double* out) {
  if (j.is_null()) *out = std::numeric_limits<double>::quiet_NaN();
  else if (j.is_number()) *out = j.get<double>();
  else if (j == "inf") *out = std::numeric_limits<double>::infinity();
  else if (j == "-inf") *out = -std::numeric_limits<double>::infinity();
  else return false;
  return true;
}

}  // namespace opbench
