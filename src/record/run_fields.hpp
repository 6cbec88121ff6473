// The fields of a run, one row each, an instance of the field table (record/field_table.hpp):
// the one place that says how a field of RunInfo is stored (its column of the `runs` table),
// exported (its key in a run of `opbench export`), listed (`opbench runs --format json`), shown
// (its phrase in the report's timing line) and compared (diff's warning when two runs differ in
// it). The store's SQL for runs, the export and import, the listing, the report's provenance
// and diff's warnings all read these rows; a new field of a run is one row here and one
// migration of the store. The GPU's state, kept by runs and points alike, has a table of its
// own (record/state_fields.hpp). Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "record/field_table.hpp"
#include "record/run.hpp"
#include "record/state_fields.hpp"

namespace opbench {

enum class FieldKind {
  text,      // a string; unknown: ""
  integer,   // an int64_t; unknown: RunField::unknown
  real,      // a double; unknown: RunField::unknown (and NaN)
  tuning,    // Environment::tuning: stored as a JSON object, exported as [{name, value}]
  state,     // Environment::state: the state_fields columns, exported as an object (or null)
  stages,    // RunInfo::stages: stored and exported as {stage: seconds} (or null)
  notation,  // RunInfo::notation: stored as [[label, provider]], exported as [{label, provider}]
  identity,  // Environment::identity: stored and exported as its object (or null)
};

// A row of the run's table: the field table's (record/field_table.hpp), whose scalars (text,
// integer, real) are known only above their unknown value, and the run's own members.
struct RunField : Field<RunInfo> {
  FieldKind kind = FieldKind::text;
  // The expression a query reads its column by ("" the column itself; a field filled by
  // queries is not written).
  const char* select = "";
  // --- how it is shown
  // `opbench runs --format json` lists it under its key (null when unknown).
  bool listed = false;
  // Its phrase in the report's timing line, at this place (0: none; "" for nothing to say).
  int timing_place = 0;
  std::string (*phrase)(const RunInfo&) = nullptr;
  // Diff warns, at this place among its warnings (0: never), when two runs' values as compared
  // (the value itself as text by default, "" unknown) both are known and differ:
  // "<differs> (base: X, head: Y)<why>".
  int warning_place = 0;
  const char* differs = "";
  const char* why = "";
  std::string (*compared)(const RunInfo&) = nullptr;

  bool known(const RunInfo& r) const;
  // The value as text ("" unknown): a number as the store's integers and %g print it.
  std::string value_text(const RunInfo& r) const;
  // What diff compares of it (compared, else value_text).
  std::string comparable(const RunInfo& r) const;
};

// Every field of a run, in the order of the export (within each object of a run).
const std::vector<RunField>& run_fields();
// The row of that name; throws std::out_of_range for none.
const RunField& run_field(const std::string& name);
// The rows shown at a place (timing line, warnings), in the order of their places.
std::vector<const RunField*> timing_fields();
std::vector<const RunField*> warning_fields();

// --- the words the rows use
// "1 thread", "4 threads", "LibTorch's own threads"; "" when unknown.
std::string threads_text(int64_t threads);
// A run's rounds and stop rule in words ("4 to 16 rounds, stopping once the 95% interval of a
// median is under 0.5% (...)"); "" when its rounds are unknown.
std::string stop_rule_text(const std::string& stop, double noise_pct, int64_t min_rounds, int64_t min_samples,
                           int64_t rounds);
// The tuning variables set, "A=1, B=2" ("none" when none was set); "" when not recorded.
std::string tuning_list(const RunInfo& r);

}  // namespace opbench
