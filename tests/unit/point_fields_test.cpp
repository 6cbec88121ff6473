// The point field table (record/point_fields.hpp) drives every reader and writer of a point's
// fields: every member a stored point keeps has its row, the store's columns are exactly the
// rows', every row round-trips through the store and through JSON export and import, a field
// newer than the first export is read only where a point holds it, and the check refuses a
// field by its row's rule under the row's name.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "record/run_check.hpp"
#include "exchange/runs_json.hpp"
#include "record/point_fields.hpp"
#include "record/point_json.hpp"
#include "record/run_fields.hpp"
#include "report/csv.hpp"
#include "store/store.hpp"
#include "table_columns.hpp"
#include "temp_db.hpp"

using namespace opbench;
using json = nlohmann::ordered_json;

namespace {

std::string temp_db(const std::string& name) { return fresh_db_path("point_fields", name); }

// The members of an aggregate: the most initializers a braced initializer of it takes.
struct AnyMember {
  template <class T>
  operator T() const;
};
template <class T, class... A>
constexpr std::size_t members(long) {
  return sizeof...(A);
}
template <class T, class... A>
constexpr auto members(int) -> decltype(T{std::declval<A>()..., AnyMember{}}, std::size_t()) {
  return members<T, A..., AnyMember>(0);
}

// A value of the field's kind that no default holds, told apart by `i`.
void set_distinct(const PointField& f, StoredPoint& p, int i) {
  const double x = 0.5 + i;
  switch (f.kind) {
    case PointKind::text: f.text(p) = std::string("t") + std::to_string(i) + "-" + f.name; break;
    case PointKind::integer: f.integer(p) = 10 + i; break;
    case PointKind::real: f.real(p) = x; break;
    case PointKind::flag: f.flag(p) = true; break;
    case PointKind::reals: f.reals(p) = {x, x + 0.25, x + 0.5}; break;
    case PointKind::counts: f.counts(p) = {1, 2}; break;
    case PointKind::params:
      p.point.params = Params({{"mode", std::string("fwd")}, {"metric", std::string("speed")},
                               {"dtype", std::string("fp32")}, {"n", int64_t(10 + i)}});
      break;
    case PointKind::state: p.state = DeviceState{true, 1000.5 + i, 2619, 1980, 41, 120.25, 4, false}; break;
  }
}

// Every field known, each with a value of its own; the fields the check reads together (op,
// unit, stat, a count of the samples its rounds add up to) valid.
StoredPoint full_point() {
  StoredPoint p;
  int i = 0;
  for (const auto& f : point_fields()) set_distinct(f, p, i++);
  p.point.op = "act";
  p.result.unit = "ms";
  p.stat = "median";
  p.result.stats.count = int64_t(p.result.samples.size());
  return p;
}

// Every field unknown.
StoredPoint unknown_point() {
  StoredPoint p;
  for (const auto& f : point_fields()) {
    if (f.kind == PointKind::real) f.real(p) = f.unknown;
    EXPECT_FALSE(f.known(p)) << f.name;
  }
  return p;
}

// The member of `p` a field is.
const void* member_of(const PointField& f, StoredPoint& p) {
  switch (f.kind) {
    case PointKind::text: return &f.text(p);
    case PointKind::integer: return &f.integer(p);
    case PointKind::real: return &f.real(p);
    case PointKind::flag: return &f.flag(p);
    case PointKind::reals: return &f.reals(p);
    case PointKind::counts: return &f.counts(p);
    case PointKind::params: return &p.point.params;
    case PointKind::state: return &p.state;
  }
  return nullptr;
}

// Where a point's document holds a field (null when not there).
json exported_at(const json& point, const PointField& f) {
  const json& in = *f.section ? point.value(f.section, json::object()) : point;
  return in.value(f.key, json());
}

// The SQL type of a field's column in the point's row.
std::string stored_type(Store& store, const PointField& f, int64_t id) {
  const std::string sql = std::string("SELECT typeof(") + f.column + ") FROM points WHERE id=?";
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(store.handle(), sql.c_str(), -1, &s, nullptr), SQLITE_OK) << f.name;
  sqlite3_bind_int64(s, 1, id);
  EXPECT_EQ(sqlite3_step(s), SQLITE_ROW);
  const std::string type = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  return type;
}

// A run holding `p` and nothing else, as the check takes it.
RunRecord record_of(const StoredPoint& p) {
  RunRecord rec;
  rec.run.uuid = "11111111-2222-4333-8444-555555555555";
  rec.run.source = "import";
  rec.run.status = "done";
  rec.points = {p};
  return rec;
}

// The point's id, which the store fills, and its run's, which a document says by where the
// point sits: the rows a document does not hold.
bool in_document(const PointField& f) { return f.name != std::string("id") && f.name != std::string("run_id"); }

// Every field a document holds, as the point had it.
void expect_same_exported(const StoredPoint& back, const StoredPoint& p, const std::string& how) {
  for (const auto& f : point_fields())
    if (in_document(f)) EXPECT_EQ(point_field_to_json(f, back), point_field_to_json(f, p)) << how << f.name;
}

}  // namespace

TEST(PointFields, EveryMemberAStoredPointKeepsHasItsRow) {
  // Its Point, Result and Stats opened (three members holding the rest), less Result's
  // estimate_ms and lost, which are never stored.
  const std::size_t kept = members<StoredPoint>(0) + members<Point>(0) + members<Result>(0) + members<Stats>(0) - 3 - 2;
  StoredPoint p;
  std::set<const void*> reached;
  for (const auto& f : point_fields())
    EXPECT_TRUE(reached.insert(member_of(f, p)).second) << f.name << " reaches another row's member";
  EXPECT_EQ(reached.size(), kept);
  EXPECT_EQ(point_fields().size(), kept);
}

TEST(PointFields, ThePointsTableHoldsExactlyTheRowsColumns) {
  Store store(temp_db("schema"));
  std::set<std::string> want(std::begin(kAxisColumns), std::end(kAxisColumns));
  for (const auto& f : point_fields()) {
    if (f.kind == PointKind::state)
      for (const auto& s : state_fields()) want.insert(s.column);
    else
      want.insert(f.column);
  }
  EXPECT_EQ(table_columns(store.handle(), "points"), want);
}

TEST(PointFields, EveryFieldRoundTripsThroughTheStore) {
  Store store(temp_db("store"));
  RunInfo run;
  store.begin_run(run);
  StoredPoint known = full_point(), unknown = unknown_point();
  for (StoredPoint* p : {&known, &unknown}) p->run_id = run.id;
  store.add_points({known, unknown});
  const std::vector<StoredPoint> back = store.points(run.id), light = store.points_without_samples(run.id);
  ASSERT_EQ(back.size(), 2u);
  ASSERT_EQ(light.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {  // in the order of their seq
    const StoredPoint& p = i == 0 ? unknown : known;
    for (const auto& f : point_fields()) {
      if (f.name == std::string("id")) continue;  // the store's own
      if (f.stamped && !f.known(p)) {  // stored as the time it was stored
        EXPECT_TRUE(f.known(back[i])) << f.name;
        continue;
      }
      EXPECT_EQ(point_field_to_json(f, back[i]), point_field_to_json(f, p)) << i << " " << f.name;
      // Without samples: the lists empty, the rest as they were.
      EXPECT_EQ(f.known(light[i]), f.known(p) && !f.list()) << i << " " << f.name;
      if (!f.list()) EXPECT_EQ(point_field_to_json(f, light[i]), point_field_to_json(f, p)) << i << " " << f.name;
      // NULL where unknown and the row says so (a real's NaN always).
      if (f.kind == PointKind::params || f.kind == PointKind::state) continue;
      const bool null = !f.known(p) && (f.null_unknown || (f.kind == PointKind::real && std::isnan(f.unknown)));
      EXPECT_EQ(stored_type(store, f, back[i].id) == "null", null) << i << " " << f.name;
    }
  }
  for (const char* axis : kAxisColumns) {
    const std::string sql = std::string("SELECT ") + axis + " FROM points WHERE id=" + std::to_string(back[1].id);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(store.handle(), sql.c_str(), -1, &s, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)), known.point.params.s(axis)) << axis;
    sqlite3_finalize(s);
  }
}

TEST(PointFields, EveryExportedFieldRoundTripsThroughJson) {
  const StoredPoint p = full_point();
  const std::string text = runs_to_json({record_of(p)});
  const json point = json::parse(text)["runs"][0]["points"][0];
  for (const auto& f : point_fields())
    if (in_document(f)) EXPECT_EQ(exported_at(point, f), point_field_to_json(f, p)) << f.name;
  // Every key of a point (and of its stats) is a row's.
  for (const json* in : {&point, &point["stats"]})
    for (const auto& [key, value] : in->items()) {
      const std::string section = in == &point ? "" : "stats";
      bool found = section.empty() && key == "stats";
      for (const auto& f : point_fields()) found = found || (section == f.section && key == f.key);
      EXPECT_TRUE(found) << section << "." << key;
    }
  const std::vector<RunRecord> back = runs_from_json(text, "runs.json");
  ASSERT_EQ(back.size(), 1u);
  ASSERT_EQ(back[0].points.size(), 1u);
  expect_same_exported(back[0].points[0], p, "known ");
  EXPECT_EQ(runs_to_json(back), text);
  // Unknown, each reads back unknown.
  const StoredPoint unknown = unknown_point();
  expect_same_exported(point_from_json(point_to_json(unknown), "points[0]", "p.json"), unknown, "unknown ");
}

TEST(PointFields, ImportTakesAFieldNewerThanTheFirstExportAsMissing) {
  const json point = point_to_json(full_point());
  const StoredPoint none;
  for (const auto& f : point_fields()) {
    if (!in_document(f) || *f.with) continue;
    json older = point;
    json& in = *f.section ? older[f.section] : older;
    for (const auto& g : point_fields())  // the field, and those its version added with it
      if (g.key == std::string(f.key) || g.with == std::string(f.key)) in.erase(g.key);
    if (f.since == 1) {
      EXPECT_THROW(point_from_json(older, "points[0]", "p.json"), InputError) << f.name;
      continue;
    }
    const StoredPoint back = point_from_json(older, "points[0]", "p.json");
    EXPECT_EQ(point_field_to_json(f, back), point_field_to_json(f, none)) << f.name;
  }
  // A field read along with another is not missing where the other is there.
  for (const auto& f : point_fields()) {
    if (!*f.with) continue;
    json broken = point;
    broken.erase(f.key);
    EXPECT_THROW(point_from_json(broken, "points[0]", "p.json"), InputError) << f.name;
  }
}

TEST(PointFields, TheCheckRefusesEachFieldByItsRowsRule) {
  const StoredPoint good = full_point();
  ASSERT_FALSE(point_problem(good, "import")) << point_problem(good, "import").field;
  for (const auto& f : point_fields()) {
    StoredPoint bad = good;
    switch (f.check) {
      case PointCheck::none: continue;
      case PointCheck::name: f.text(bad) = "a\x01" "b"; break;
      case PointCheck::required_name: f.text(bad).clear(); break;
      case PointCheck::label: f.text(bad) = "a: b"; break;
      case PointCheck::op: f.text(bad) = "no_such_op"; break;
      case PointCheck::one_line: f.text(bad) = "a\nb"; break;
      case PointCheck::not_negative:
        if (f.kind == PointKind::integer) f.integer(bad) = -1;
        else f.real(bad) = -0.5;
        break;
    }
    const Problem problem = point_problem(bad, "import");
    EXPECT_TRUE(problem) << f.name;
    EXPECT_EQ(problem.field, f.path()) << problem.why;
  }
}

TEST(PointFields, TheCsvHasAColumnForEachRowMarkedForIt) {
  RunRecord run;
  run.run.id = 1;
  run.run.env.gpu = "a GPU";
  run.points = {full_point()};
  const std::string csv = render_csv({run});
  const std::string header = csv.substr(0, csv.find('\n'));
  std::string expected;
  for (const auto& f : point_fields())
    if (*f.csv) expected += std::string(",") + f.csv;
  ASSERT_GE(header.size(), expected.size());
  EXPECT_EQ(header.substr(header.size() - expected.size()), expected);
  // Each such column holds the point's value: none of the full point's cells is empty.
  const std::string line = csv.substr(csv.find('\n') + 1);
  EXPECT_EQ(line.find(",,"), std::string::npos) << line;
  EXPECT_NE(expected.find(",host_share"), std::string::npos);
}
