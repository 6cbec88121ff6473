// The devices of a run (record/run.hpp's RunDevice) as the runs document's `devices` list holds
// them: each with its share, placement (version 6), identity and calibration (version 9); what
// `opbench runs --format json` lists too. Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "record/json_reader.hpp"
#include "record/run.hpp"

namespace opbench {

nlohmann::ordered_json run_device_to_json(const RunDevice& d);

// The `devices` list of a run (none in versions 1 and 2).
std::vector<RunDevice> run_devices_from(const JsonReader& run);

}  // namespace opbench
