// The fields of the GPU's state (DeviceState), one row each, an instance of the field table
// (record/field_table.hpp): kept by runs and points alike, each in a column gpu_<name> of
// `runs` and of `points` (NULL, all of them, when nothing was read), and exported under its
// name in a run's or a point's state object (record/state_json.hpp). Torch-free.
#pragma once
#include <vector>

#include "record/device_state.hpp"
#include "record/field_table.hpp"

namespace opbench {

using StateField = Field<DeviceState>;

// Every field of the state, in the order of its columns and of the export's state object.
const std::vector<StateField>& state_fields();

}  // namespace opbench
