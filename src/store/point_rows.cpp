// A run's points as the store keeps them: one row of `points` each, with every sample
// (store.hpp). Torch-free.
#include <nlohmann/json.hpp>

#include "core/value_json.hpp"
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

// The statement that stores a point (bind_point fills it).
const char* const kInsertPoint =
         "INSERT OR REPLACE INTO points(run_id, seq, section, title, op, params, x_name, x_value,"
         " provider, label, mode, metric, dtype, unit, stat, value, median, mean, min, max, p20, p80,"
         " stdev, count, samples, bytes, gbps, pct_peak, error, created_at, rel_err, check_failed,"
         " rounds, gpu_sm_mhz, gpu_memory_mhz, gpu_sm_default_mhz, gpu_temperature_c, gpu_power_w,"
         " gpu_reasons, gpu_throttled, device, stop, precision, max_err, ref_err, ref_max_err, control)"
         " VALUES(:run_id, :seq, :section, :title, :op, :params, :x_name, :x_value,"
         " :provider, :label, :mode, :metric, :dtype, :unit, :stat, :value, :median, :mean, :min, :max, :p20,"
         " :p80, :stdev, :count, :samples, :bytes, :gbps, :pct_peak, :error, :created_at, :rel_err,"
         " :check_failed, :rounds, :gpu_sm_mhz, :gpu_memory_mhz, :gpu_sm_default_mhz, :gpu_temperature_c,"
         " :gpu_power_w, :gpu_reasons, :gpu_throttled, :device, :stop, :precision, :max_err, :ref_err, :ref_max_err,"
         " :control)";

void bind_point(Stmt& s, const StoredPoint& sp) {
  const Point& p = sp.point;
  const Result& r = sp.result;
  s.bind(":run_id", sp.run_id).bind(":seq", sp.seq).bind(":section", sp.section).bind(":title", p.title)
      .bind(":op", p.op).bind(":params", params_json(p.params).dump()).bind(":x_name", p.x_name)
      .bind(":x_value", p.x_value).bind(":provider", p.provider).bind(":label", p.label)
      .bind(":mode", p.params.s_or("mode", "")).bind(":metric", p.params.s_or("metric", ""))
      .bind(":dtype", p.params.s_or("dtype", "")).bind(":unit", r.unit).bind(":stat", sp.stat)
      .bind(":value", sp.value).bind(":median", r.stats.median).bind(":mean", r.stats.mean)
      .bind(":min", r.stats.min).bind(":max", r.stats.max).bind(":p20", r.stats.p20).bind(":p80", r.stats.p80)
      .bind(":stdev", r.stats.stdev).bind(":count", r.stats.count).bind(":samples", json(r.samples).dump())
      .bind(":bytes", r.bytes).bind(":gbps", r.gbps).bind(":pct_peak", r.pct_peak).bind(":error", r.error)
      .bind(":created_at", sp.created_at.empty() ? now_iso() : sp.created_at).bind(":rel_err", r.rel_err)
      .bind(":check_failed", int64_t(r.check_failed)).bind(":device", sp.device).bind(":precision", r.precision)
      .bind(":max_err", r.max_err).bind(":ref_err", r.ref_err).bind(":ref_max_err", r.ref_max_err);
  if (r.stop.empty()) s.null(":stop");
  else s.bind(":stop", r.stop);
  if (r.rounds.empty()) s.null(":rounds");
  else s.bind(":rounds", json(r.rounds).dump());
  if (r.control.empty()) s.null(":control");
  else s.bind(":control", json(r.control).dump());
  bind_state(s, sp.state);
}

void insert_point(sqlite3* db, const StoredPoint& sp) {
  Stmt s(db, kInsertPoint);
  bind_point(s, sp);
  s.step();
}

// One row of `points` as read_points selects it.
StoredPoint read_point(const Stmt& s) {
  StoredPoint sp;
  sp.id = s.i64("id");
  sp.run_id = s.i64("run_id");
  sp.seq = s.i64("seq");
  sp.section = s.text("section");
  sp.point.title = s.text("title");
  sp.point.op = s.text("op");
  sp.point.params = params_from(json_column(s, "params"));
  sp.point.x_name = s.text("x_name");
  sp.point.x_value = s.i64("x_value");
  sp.point.provider = s.text("provider");
  sp.point.label = s.text("label");
  sp.result.unit = s.text("unit");
  sp.stat = s.text("stat");
  sp.value = s.f64("value");
  Stats& st = sp.result.stats;
  st.median = s.f64("median");
  st.mean = s.f64("mean");
  st.min = s.f64("min");
  st.max = s.f64("max");
  st.p20 = s.f64("p20");
  st.p80 = s.f64("p80");
  st.stdev = s.f64("stdev");
  st.count = s.i64("count");
  for (auto& v : json_column(s, "samples")) sp.result.samples.push_back(v.get<double>());
  sp.result.bytes = s.f64("bytes");
  sp.result.gbps = s.f64("gbps");
  sp.result.pct_peak = s.f64("pct_peak");
  sp.result.error = s.text("error");
  sp.created_at = s.text("created_at");
  sp.result.rel_err = s.f64("rel_err");
  sp.result.check_failed = s.i64("check_failed") != 0;
  for (auto& v : json_column(s, "rounds")) sp.result.rounds.push_back(v.get<int64_t>());
  auto figure = [&](const char* c) { return s.is_null(c) ? -1.0 : s.f64(c); };  // -1: not recorded
  sp.result.max_err = figure("max_err");
  sp.result.ref_err = figure("ref_err");
  sp.result.ref_max_err = figure("ref_max_err");
  for (auto& v : json_column(s, "control")) sp.result.control.push_back(v.get<double>());
  sp.state = read_state(s);
  sp.device = s.text("device");
  sp.result.stop = s.text("stop");
  sp.result.precision = s.f64("precision");
  return sp;
}

std::vector<StoredPoint> read_points(sqlite3* db, const std::string& where, const std::function<void(Stmt&)>& bind,
                                     bool samples = true) {
  std::vector<StoredPoint> out;
  Stmt s(db,
         std::string("SELECT id, run_id, seq, section, title, op, params, x_name, x_value, provider, label, unit,"
                     " stat, value, median, mean, min, max, p20, p80, stdev, count, ") +
             (samples ? "samples, rounds, control," : "'' AS samples, '' AS rounds, '' AS control,") +
             " bytes, gbps, pct_peak, error, created_at, rel_err, check_failed, gpu_sm_mhz, gpu_memory_mhz,"
             " gpu_sm_default_mhz, gpu_temperature_c, gpu_power_w, gpu_reasons, gpu_throttled, device, stop, precision,"
             " max_err, ref_err, ref_max_err FROM points WHERE " +
             where);
  bind(s);
  while (s.step()) out.push_back(read_point(s));
  return out;
}

}  // namespace

void Store::add_point(const StoredPoint& p) {
  transaction([&] { insert_point(db_, p); });
}

void Store::add_points(const std::vector<StoredPoint>& ps) {
  transaction([&] { insert_points(ps); });
}

void Store::insert_points(const std::vector<StoredPoint>& ps) {
  Stmt s(db_, kInsertPoint);  // prepared once: an import stores millions
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
