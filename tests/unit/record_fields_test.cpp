// The run field table (record/run_fields.hpp) drives every reader and writer of a run's fields:
// the store's columns are exactly its rows', every row round-trips through the store and
// through JSON export and import, and each row's phrase and warning show in the report's timing
// line and diff's warnings as the row says.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/error.hpp"
#include "diff/diff.hpp"
#include "exchange/runs_json.hpp"
#include "record/run_fields.hpp"
#include "record/run_json.hpp"
#include "report/provenance.hpp"
#include "store/store.hpp"
#include "stored_points.hpp"
#include "table_columns.hpp"
#include "temp_db.hpp"

using namespace opbench;
using json = nlohmann::ordered_json;

namespace {

std::string temp_db(const std::string& name) { return fresh_db_path("record_fields", name); }

// A value of the field's kind that no default holds, told apart by `i`.
void set_distinct(const RunField& f, RunInfo& r, int i) {
  const std::string tag = std::to_string(i);
  switch (f.kind) {
    case FieldKind::text: f.text(r) = std::string("t") + tag + "-" + f.name; break;
    case FieldKind::integer: f.integer(r) = 10 + i; break;
    case FieldKind::real: f.real(r) = 0.5 + i; break;
    case FieldKind::tuning: r.env.tuning = std::vector<std::pair<std::string, std::string>>{{"OPBENCH_T", tag}}; break;
    case FieldKind::state: r.env.state = DeviceState{true, 1000.5 + i, 2619, 1980, 41, 120.25, 4, false}; break;
    case FieldKind::stages: r.stages[Stage::timed] = 1.5 + i; break;
    case FieldKind::notation: r.notation = {{"to", "torch"}, {"c" + tag, "cuda"}}; break;
    case FieldKind::identity:
      r.env.identity = DeviceIdentity{"GPU-" + tag, "00000000:3B:00.0", "165" + tag, "96.00.8" + tag, "on", 700,
                                      1980, 2619, 1980, 1980};
      break;
  }
}

void set_unknown(const RunField& f, RunInfo& r) {
  switch (f.kind) {
    case FieldKind::text: f.text(r).clear(); break;
    case FieldKind::integer: f.integer(r) = int64_t(f.unknown); break;
    case FieldKind::real: f.real(r) = f.unknown; break;
    case FieldKind::tuning: r.env.tuning.reset(); break;
    case FieldKind::state: r.env.state = DeviceState(); break;
    case FieldKind::stages: r.stages = StageTimes(); break;
    case FieldKind::notation: r.notation.clear(); break;
    case FieldKind::identity: r.env.identity = DeviceIdentity(); break;
  }
}

// Every field the store writes known, each with a value of its own; the fields a run is
// checked against (source, status, stat, op) valid.
RunInfo full_run() {
  RunInfo r;
  int i = 0;
  for (const auto& f : run_fields())
    if (f.written) set_distinct(f, r, i++);
  r.uuid = "11111111-2222-4333-8444-555555555555";
  r.source = "sweep";
  r.status = "done";
  r.stat = "median";
  r.op = "act";
  r.stop_rule = "budget";
  return r;
}

// Where the export holds a field in a run's object (null when not there).
json exported_at(const json& run, const RunField& f) {
  if (!*f.section) return run.value(f.key, json());
  if (!*f.key) return run.value(f.section, json());
  return run.contains(f.section) ? run[f.section].value(f.key, json()) : json();
}

bool in_export(const RunField& f) { return *f.section || *f.key; }

// The warnings of diff between runs measuring one point alike.
std::vector<std::string> warnings(const RunInfo& base, const RunInfo& head) {
  const StoredPoint p = speed_point("t", 1, "torch", "to", {1.0, 1.0, 1.0});
  return diff_runs({base, {p}}, {head, {p}}, {}).warnings;
}

}  // namespace

TEST(RecordFields, TheRunsTableHoldsExactlyTheRowsColumns) {
  Store store(temp_db("schema"));
  std::set<std::string> want;
  for (const auto& f : run_fields()) {
    if (f.kind == FieldKind::state)
      for (const auto& s : state_fields()) want.insert(s.column);
    else if (*f.column && !*f.select)
      want.insert(f.column);
  }
  EXPECT_EQ(table_columns(store.handle(), "runs"), want);
}

TEST(RecordFields, EveryFieldRoundTripsThroughTheStore) {
  Store store(temp_db("store"));
  RunInfo known = full_run(), unknown;
  unknown.uuid = "22222222-2222-4333-8444-555555555555";
  for (RunInfo* r : {&known, &unknown}) {
    store.begin_run(*r);
    const RunInfo back = *store.run(r->id);
    for (const auto& f : run_fields()) {
      if (!f.written) continue;
      EXPECT_EQ(run_field_to_json(f, back), run_field_to_json(f, *r)) << f.name;
      EXPECT_EQ(f.known(back), f.known(*r)) << f.name;
    }
  }
  for (const auto& f : run_fields()) EXPECT_TRUE(!f.written || f.known(known)) << f.name;
  // A field unknown is NULL in its column where its row says so, and known is not.
  for (const auto& f : run_fields()) {
    if (!f.written || !f.scalar()) continue;
    const std::string sql = std::string("SELECT typeof(") + f.column + ") FROM runs WHERE id=?";
    for (const RunInfo* r : {&known, &unknown}) {
      sqlite3_stmt* s = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(store.handle(), sql.c_str(), -1, &s, nullptr), SQLITE_OK) << f.name;
      sqlite3_bind_int64(s, 1, r->id);
      ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
      const std::string type = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
      sqlite3_finalize(s);
      EXPECT_EQ(type == "null", f.null_unknown && !f.known(*r)) << f.name << " stored as " << type;
    }
  }
}

TEST(RecordFields, EveryExportedFieldRoundTripsThroughJson) {
  RunRecord rec;
  rec.run = full_run();
  const std::string text = runs_to_json({rec});
  const json doc = json::parse(text);
  const json& run = doc["runs"][0];
  for (const auto& f : run_fields()) {
    if (!in_export(f)) continue;
    EXPECT_EQ(exported_at(run, f), run_field_to_json(f, rec.run)) << f.name;
  }
  // Every key of the objects that hold fields is a row's.
  for (const char* section : {"config", "timing", "environment"})
    for (const auto& [key, value] : run[section].items()) {
      bool found = false;
      for (const auto& f : run_fields()) found = found || (section == std::string(f.section) && key == f.key);
      EXPECT_TRUE(found) << section << "." << key;
    }
  const std::vector<RunRecord> back = runs_from_json(text, "runs.json");
  ASSERT_EQ(back.size(), 1u);
  for (const auto& f : run_fields())
    if (in_export(f)) EXPECT_EQ(run_field_to_json(f, back[0].run), run_field_to_json(f, rec.run)) << f.name;
  EXPECT_EQ(runs_to_json(back), text);
}

TEST(RecordFields, ImportTakesAFieldNewerThanItsObjectAsMissing) {
  RunRecord rec;
  rec.run = full_run();
  json doc = json::parse(runs_to_json({rec}));
  json older = doc;
  older["runs"][0]["timing"].erase(run_field("interleave").key);  // added by version 4
  const std::vector<RunRecord> back = runs_from_json(older.dump(), "older.json");
  EXPECT_FALSE(run_field("interleave").known(back[0].run));
  EXPECT_EQ(back[0].run.processes, rec.run.processes);
  json broken = doc;
  broken["runs"][0]["timing"].erase(run_field("flush_l2").key);  // as old as the timing object
  EXPECT_THROW(runs_from_json(broken.dump(), "broken.json"), InputError);
}

TEST(RecordFields, TheTimingLineShowsEachPhraseInItsPlace) {
  const RunInfo r = full_run();
  const std::string line = timing_line(r);
  size_t at = 0;
  ASSERT_FALSE(timing_fields().empty());
  for (const RunField* f : timing_fields()) {
    const std::string phrase = f->phrase(r);
    ASSERT_FALSE(phrase.empty()) << f->name;
    const size_t found = line.find(phrase, at);
    ASSERT_NE(found, std::string::npos) << f->name << " in " << line;
    at = found + phrase.size();
    RunInfo without = r;
    set_unknown(*f, without);
    EXPECT_EQ(timing_line(without).find(phrase), std::string::npos) << f->name;
  }
  RunInfo none;
  for (const RunField* f : timing_fields()) set_unknown(*f, none);
  EXPECT_EQ(timing_line(none), "");
}

TEST(RecordFields, DiffWarnsOfEachRowThatDiffers) {
  const RunInfo base = full_run();
  EXPECT_TRUE(warnings(base, base).empty());
  ASSERT_FALSE(warning_fields().empty());
  for (const RunField* f : warning_fields()) {
    RunInfo head = base;
    set_distinct(*f, head, 1000);
    const std::vector<std::string> w = warnings(base, head);
    ASSERT_EQ(w.size(), 1u) << f->name;
    EXPECT_EQ(w[0].rfind(f->differs, 0), 0u) << w[0];
    EXPECT_NE(w[0].find("base: " + f->comparable(base) + ", head: " + f->comparable(head)), std::string::npos) << w[0];
    // Nothing to compare where one run does not know it.
    set_unknown(*f, head);
    EXPECT_TRUE(warnings(base, head).empty()) << f->name;
  }
}
