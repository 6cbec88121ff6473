// The fields of a run, one row each: the one place that says how a field of RunInfo is stored
// (its column of the `runs` table), exported (its key in a run of `opbench export`), listed
// (`opbench runs --format json`), shown (its phrase in the report's timing line) and compared
// (diff's warning when two runs differ in it). The store's SQL for runs, the export and import,
// the listing, the report's provenance and diff's warnings all read these rows; a new field of
// a run is one row here and one migration of the store. The GPU's state, kept by runs and
// points alike, has a table of its own (state_fields). Torch-free.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "record/device_state.hpp"
#include "record/run.hpp"

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

struct RunField {
  const char* name;  // as messages name it: its export key
  FieldKind kind;
  // --- the store: its column of `runs` ("" none); the expression a query reads it by ("" the
  // column); whether the store writes it (false: filled by queries); whether its unknown
  // value is stored as NULL.
  const char* column = "";
  const char* select = "";
  bool written = true;
  bool null_unknown = false;
  // --- the export: the object of a run it sits in ("" the run itself, "config", "timing",
  // "environment") and its key there ("" not exported); the export version that added it (a
  // document of an older version may lack it; one of its own version or later must have it).
  const char* section = "";
  const char* key = "";
  int since = 1;
  // --- its value, by kind (text, integer, real; the others are reached through the run).
  std::string& (*text)(RunInfo&) = nullptr;
  int64_t& (*integer)(RunInfo&) = nullptr;
  double& (*real)(RunInfo&) = nullptr;
  // The value that means unknown (a number known is above it).
  double unknown = 0;
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
  // Its value for reading only.
  const std::string& text_of(const RunInfo& r) const { return text(const_cast<RunInfo&>(r)); }
  int64_t integer_of(const RunInfo& r) const { return integer(const_cast<RunInfo&>(r)); }
  double real_of(const RunInfo& r) const { return real(const_cast<RunInfo&>(r)); }
  bool scalar() const { return kind == FieldKind::text || kind == FieldKind::integer || kind == FieldKind::real; }
};

// Every field of a run, in the order of the export (within each object of a run).
const std::vector<RunField>& run_fields();
// The row of that name; throws std::out_of_range for none.
const RunField& run_field(const std::string& name);
// The rows shown at a place (timing line, warnings), in the order of their places.
std::vector<const RunField*> timing_fields();
std::vector<const RunField*> warning_fields();

// A field of the GPU's state (DeviceState), stored in a column of runs and points alike.
struct StateField {
  const char* name;    // its key in the export's state object
  const char* column;  // gpu_<name>
  double DeviceState::*real = nullptr;      // one of the three
  uint64_t DeviceState::*count = nullptr;
  bool DeviceState::*flag = nullptr;
};
const std::vector<StateField>& state_fields();

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
