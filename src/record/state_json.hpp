// The GPU's state (record/device_state.hpp) as the runs document writes it, for runs and points
// alike: an object whose keys are the rows of state_fields (record/state_fields.hpp), or null
// when nothing was read. Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "record/device_state.hpp"
#include "record/json_reader.hpp"

namespace opbench {

nlohmann::ordered_json state_to_json(const DeviceState& d);  // null when nothing was read

// The state under `key` of `parent`: unknown when the key is missing or null.
DeviceState state_from(const JsonReader& parent, const std::string& key);

// The state `j` holds (null: unknown); throws InputError(where, "field", why).
DeviceState state_from_json(const nlohmann::ordered_json& j, const std::string& where, const std::string& path);

}  // namespace opbench
