#include "record/json_reader.hpp"

#include "record/json_number.hpp"

namespace opbench {

JsonReader::JsonReader(const json& j, std::string where, const std::string& path)
    : j_(j), where_(std::move(where)), path_(path) {
  if (!j_.is_object()) fail("", "expected an object");
}

void JsonReader::fail(const std::string& key, const std::string& why) const {
  std::string field = where_;
  if (!key.empty()) field += (field.empty() ? "" : ".") + key;
  throw InputError(path_, field, why);
}

const JsonReader::json& JsonReader::at(const std::string& key) const {
  auto it = j_.find(key);
  if (it == j_.end()) fail(key, "missing");
  return *it;
}

std::string JsonReader::str(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_string()) fail(key, "expected a string");
  return v.get<std::string>();
}

int64_t JsonReader::integer(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_number_integer()) fail(key, "expected an integer");
  return v.get<int64_t>();
}

bool JsonReader::boolean(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_boolean()) fail(key, "expected true or false");
  return v.get<bool>();
}

double JsonReader::number_of(const json& v, const std::string& key) const {
  double out = 0;
  if (!number_of_json(v, &out)) fail(key, "expected a number, null, \"inf\" or \"-inf\"");
  return out;
}

const JsonReader::json& JsonReader::array(const std::string& key) const {
  const json& v = at(key);
  if (!v.is_array()) fail(key, "expected an array");
  return v;
}

JsonReader JsonReader::item(const std::string& key, size_t i) const {
  return JsonReader(array(key)[i], sub(key) + "[" + std::to_string(i) + "]", path_);
}

}  // namespace opbench
