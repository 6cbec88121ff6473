// A run's points as the store keeps them: one row of `points` each, with every sample
// (store.hpp), every column read and written from the field table (record/point_fields.hpp),
// so that a new field of a point is one row there and one migration (schema.cpp). Torch-free.
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/value_json.hpp"
#include "record/point_fields.hpp"
#include "store/statement.hpp"
#include "store/store.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

Params params_from(const json& j) {
  Params p;
  for (auto& [k, v] : j.items()) {
    if (v.is_number_integer()) p.set(k, v.get<int64_t>());
    else if (v.is_string()) p.set(k, v.get<std::string>());
  }
  return p;
}

// The SQL of points, made once from the field table: each field's parameter (":column"; ""
// for a field with no column of its own), the INSERT and the SELECT list, with the lists
// (samples, rounds, control) or with each read as empty instead.
struct PointSql {
  std::vector<std::string> params, axis_params;
  std::string insert, select, select_without_lists;
};

// The columns a field is read from: its own, or the state's.
std::vector<std::string> read_columns(const PointField& f) {
  return field_columns(f.kind == PointKind::state, f.column);
}

// The columns the store writes a field to: those it is read from, and the params' axes.
std::vector<std::string> written_columns(const PointField& f) {
  std::vector<std::string> out = read_columns(f);
  if (f.kind == PointKind::params) out.insert(out.end(), std::begin(kAxisColumns), std::end(kAxisColumns));
  return out;
}

PointSql make_point_sql() {
  PointSql q;
  std::vector<std::string> written, read, read_without_lists;
  for (const auto& f : point_fields()) {
    if (f.written)
      for (const auto& c : written_columns(f)) written.push_back(c);
    for (const auto& c : read_columns(f)) {
      read.push_back(c);
      read_without_lists.push_back(f.list() ? "'' AS " + c : c);
    }
  }
  q.params = field_params(point_fields());
  for (const char* c : kAxisColumns) q.axis_params.push_back(std::string(":") + c);
  q.insert = "INSERT OR REPLACE INTO points(" + joined(written) + ") VALUES(" + joined(written, ":") + ")";
  q.select = "SELECT " + joined(read) + " FROM points WHERE ";
  q.select_without_lists = "SELECT " + joined(read_without_lists) + " FROM points WHERE ";
  return q;
}

const PointSql& point_sql() {
  static const PointSql q = make_point_sql();
  return q;
}

void bind_params(Stmt& s, const char* p, const Params& params) {
  s.bind(p, params_json(params).dump());
  for (size_t i = 0; i < std::size(kAxisColumns); ++i)
    s.bind(point_sql().axis_params[i].c_str(), params.s_or(kAxisColumns[i], ""));
}

// A field into its parameter `p`: NULL when unknown where its row says so; a stamped one empty,
// the time of storing.
void bind_field(Stmt& s, const PointField& f, const char* p, const StoredPoint& sp) {
  if (f.stamped && !f.known(sp)) {
    s.bind(p, now_iso());
    return;
  }
  if (f.null_unknown && !f.known(sp)) {
    s.null(p);
    return;
  }
  if (f.scalar()) return bind_scalar(s, f, p, sp);
  switch (f.kind) {
    case PointKind::reals: s.bind(p, json(f.reals_of(sp)).dump()); return;
    case PointKind::counts: s.bind(p, json(f.counts_of(sp)).dump()); return;
    case PointKind::params: return bind_params(s, p, sp.point.params);
    case PointKind::state: return bind_state(s, sp.state);
    default: break;  // a scalar: above
  }
}

// The columns a point is written with: every field the store writes.
void bind_point(Stmt& s, const StoredPoint& sp) { bind_written(s, point_fields(), point_sql().params, sp, bind_field); }

// A field from its column: a NULL reads as its unknown value.
void read_field(const Stmt& s, const PointField& f, StoredPoint& sp) {
  if (f.scalar()) return read_scalar(s, f, sp);
  const char* c = f.column;
  switch (f.kind) {
    case PointKind::reals:
      for (auto& v : json_column(s, c)) f.reals(sp).push_back(v.get<double>());
      return;
    case PointKind::counts:
      for (auto& v : json_column(s, c)) f.counts(sp).push_back(v.get<int64_t>());
      return;
    case PointKind::params: sp.point.params = params_from(json_column(s, c)); return;
    case PointKind::state: sp.state = read_state(s); return;
    default: break;  // a scalar: above
  }
}

// One row of `points` as read_points selects it.
StoredPoint read_point(const Stmt& s) {
  StoredPoint sp;
  for (const auto& f : point_fields()) read_field(s, f, sp);
  return sp;
}

std::vector<StoredPoint> read_points(sqlite3* db, const std::string& where, const std::function<void(Stmt&)>& bind,
                                     bool samples = true) {
  std::vector<StoredPoint> out;
  Stmt s(db, (samples ? point_sql().select : point_sql().select_without_lists) + where);
  bind(s);
  while (s.step()) out.push_back(read_point(s));
  return out;
}

}  // namespace

void Store::add_point(const StoredPoint& p) {
  transaction([&] { insert_points({p}); });
}

void Store::add_points(const std::vector<StoredPoint>& ps) {
  transaction([&] { insert_points(ps); });
}

void Store::insert_points(const std::vector<StoredPoint>& ps) {
  Stmt s(db_, point_sql().insert);  // prepared once: an import stores millions
  for (const auto& p : ps) {
    bind_point(s, p);
    s.step();
    s.reset();
  }
}

std::vector<StoredPoint> Store::points(int64_t run_id) const {
  return read_points(db_, "run_id=:run_id ORDER BY seq, id", [&](Stmt& s) { s.bind(":run_id", run_id); });
}

std::vector<StoredPoint> Store::points_without_samples(int64_t run_id) const {
  return read_points(db_, "run_id=:run_id ORDER BY seq, id", [&](Stmt& s) { s.bind(":run_id", run_id); }, false);
}

std::vector<StoredPoint> Store::points_titled(const std::string& title) const {
  return read_points(db_, "title=:title ORDER BY run_id, seq, id", [&](Stmt& s) { s.bind(":title", title); });
}

std::vector<std::string> Store::done_keys(int64_t run_id) const {
  std::vector<std::string> out;
  for (const auto& p : points(run_id)) out.push_back(p.point.key());
  return out;
}

std::map<std::string, double> Store::latest_medians(const std::string& op, const std::string& gpu) const {
  std::map<std::string, double> out;
  Stmt s(db_,
         "SELECT points.title, points.x_value, points.provider, points.median FROM points JOIN runs ON runs.id = points.run_id"
         " WHERE points.op = :op AND runs.gpu = :gpu AND points.metric = 'speed' AND points.error = ''"
         " AND points.median > 0 ORDER BY points.run_id");
  s.bind(":op", op).bind(":gpu", gpu);
  while (s.step()) {
    Point p;
    p.title = s.text("title");
    p.x_value = s.i64("x_value");
    p.provider = s.text("provider");
    out[p.key()] = s.f64("median");
  }
  return out;
}

std::vector<std::pair<std::string, int64_t>> Store::stop_counts(int64_t run_id) const {
  std::vector<std::pair<std::string, int64_t>> out;
  Stmt s(db_,
         "SELECT stop, COUNT(*) AS n FROM points WHERE run_id=:run_id AND stop IS NOT NULL AND stop <> ''"
         " GROUP BY stop ORDER BY stop");
  s.bind(":run_id", run_id);
  while (s.step()) out.emplace_back(s.text("stop"), s.i64("n"));
  return out;
}

}  // namespace opbench
