#include "record/state_json.hpp"

#include "record/field_json.hpp"
#include "record/state_fields.hpp"

namespace opbench {

namespace {

DeviceState state_of(const JsonReader& o) {
  DeviceState d;
  d.known = true;
  for (const auto& f : state_fields()) scalar_from_json(f, o, d);
  return d;
}

}  // namespace

nlohmann::ordered_json state_to_json(const DeviceState& d) {
  if (!d.known) return nullptr;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& f : state_fields()) out[f.key] = scalar_to_json(f, d);
  return out;
}

DeviceState state_from(const JsonReader& parent, const std::string& key) {
  if (!parent.has(key) || parent.at(key).is_null()) return DeviceState();
  return state_of(parent.obj(key));
}

DeviceState state_from_json(const nlohmann::ordered_json& j, const std::string& where, const std::string& path) {
  if (j.is_null()) return DeviceState();
  return state_of(JsonReader(j, where, path));
}

}  // namespace opbench
