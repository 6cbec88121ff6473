#include "record/state_json.hpp"

#include "record/json_number.hpp"
#include "record/run_fields.hpp"

namespace opbench {

namespace {

DeviceState state_of(const JsonReader& o) {
  DeviceState d;
  d.known = true;
  for (const auto& f : state_fields()) {
    if (f.real) d.*f.real = o.num(f.name);
    else if (f.count) d.*f.count = uint64_t(o.integer(f.name));
    else d.*f.flag = o.boolean(f.name);
  }
  return d;
}

}  // namespace

nlohmann::ordered_json state_to_json(const DeviceState& d) {
  if (!d.known) return nullptr;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& f : state_fields()) {
    if (f.real) out[f.name] = number_json(d.*f.real);
    else if (f.count) out[f.name] = d.*f.count;
    else out[f.name] = d.*f.flag;
  }
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
