// Axis values and the parameter set of one benchmark point. Torch-free.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace opbench {

// An axis value: integers (batch, n, act_dim ...) or words (act, dtype, mode, metric).
using Value = std::variant<int64_t, std::string>;

std::string to_string(const Value& v);

// The axis values of one point, by axis name (ordered, so iteration is stable).
class Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, Value> values) : values_(std::move(values)) {}

  bool has(const std::string& axis) const { return values_.count(axis) != 0; }
  // Typed accessors; throw std::out_of_range / std::bad_variant_access with the axis name.
  int64_t i(const std::string& axis) const;
  const std::string& s(const std::string& axis) const;
  int64_t i_or(const std::string& axis, int64_t fallback) const;
  std::string s_or(const std::string& axis, const std::string& fallback) const;

  void set(const std::string& axis, Value v) { values_[axis] = std::move(v); }
  void erase(const std::string& axis) { values_.erase(axis); }
  const std::map<std::string, Value>& values() const { return values_; }
  bool operator==(const Params& o) const { return values_ == o.values_; }

 private:
  std::map<std::string, Value> values_;
};

}  // namespace opbench
