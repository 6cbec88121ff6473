#include "core/value.hpp"

#include <stdexcept>

namespace opbench {

std::string to_string(const Value& v) {
  if (auto p = std::get_if<int64_t>(&v)) return std::to_string(*p);
  return std::get<std::string>(v);
}

static const Value& lookup(const std::map<std::string, Value>& m, const std::string& axis) {
  auto it = m.find(axis);
  if (it == m.end()) throw std::out_of_range("axis '" + axis + "' is not set");
  return it->second;
}

int64_t Params::i(const std::string& axis) const {
  const Value& v = lookup(values_, axis);
  if (auto p = std::get_if<int64_t>(&v)) return *p;
  throw std::invalid_argument("axis '" + axis + "' is not an integer");
}

const std::string& Params::s(const std::string& axis) const {
  const Value& v = lookup(values_, axis);
  if (auto p = std::get_if<std::string>(&v)) return *p;
  throw std::invalid_argument("axis '" + axis + "' is not a word");
}

int64_t Params::i_or(const std::string& axis, int64_t fallback) const {
  return has(axis) ? i(axis) : fallback;
}

std::string Params::s_or(const std::string& axis, const std::string& fallback) const {
  return has(axis) ? s(axis) : fallback;
}

}  // namespace opbench
