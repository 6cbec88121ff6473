// A run as the runs document writes it (exchange/runs_json.hpp): its own fields as their rows of
// record/run_fields.hpp say (the object each sits in, its key, the version that added it), in
// the objects config, timing, environment, stages and notation, and what the store keeps beside
// its row: options, devices (record/run_device_json.hpp), compiles and points
// (record/point_json.hpp). Torch-free.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "record/json_reader.hpp"
#include "record/run_fields.hpp"
#include "record/run_record.hpp"

namespace opbench {

// A field of a run as the document writes it (a text, an integer, a number or null, or the
// kind's own object): what `opbench runs --format json` lists too.
nlohmann::ordered_json run_field_to_json(const RunField& f, const RunInfo& r);

// The run, in the document's order.
nlohmann::ordered_json run_record_to_json(const RunRecord& rec);
// The run `o` holds, a field added after version 1 read where the run holds it; throws
// InputError(where, "field", why). Not checked: record/run_check.hpp does.
RunRecord run_record_from(const JsonReader& o);

// An environment, as a run's `environment` object; the reader throws InputError(where,
// "field", why).
nlohmann::ordered_json environment_to_json(const Environment& e);
Environment environment_from_json(const nlohmann::ordered_json& j, const std::string& where, const std::string& path);

// A run's stages (record/stage_times.hpp: stages_json writes them): an object of numbers by
// stage key, or null; a key this build does not know is skipped (a newer opbench's stage).
StageTimes stages_from_json(const nlohmann::ordered_json& j, const std::string& where, const std::string& path);

}  // namespace opbench
