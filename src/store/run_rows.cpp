// A run as a row of `runs` (and its devices' rows of `run_devices`): every column read and
// written from the field table (record/run_fields.hpp), so that a new field of a run is one row
// there and one migration (schema.cpp). Torch-free.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "record/run_fields.hpp"
#include "store/selector.hpp"
#include "store/statement.hpp"
#include "store/store.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

// The SQL of runs, made once from the field table: each field's parameter (":column"; ""
// for a field with no column), the SELECT list, the INSERT and the UPDATE of the environment.
struct RunSql {
  std::vector<std::string> params;
  std::string select, insert, update;
};

// The columns of a field: its own, or the state's.
std::vector<std::string> columns_of(const RunField& f) {
  return field_columns(f.kind == FieldKind::state, f.column);
}

RunSql make_run_sql() {
  RunSql q;
  std::vector<std::string> read, written, env;
  for (const auto& f : run_fields()) {
    for (const auto& c : columns_of(f)) {
      read.push_back(*f.select ? std::string(f.select) + " AS " + c : c);
      if (f.written) written.push_back(c);
    }
    if (f.scalar() && *f.column && std::string(f.section) == "environment") env.push_back(std::string(f.column) + "=:" + f.column);
  }
  q.params = field_params(run_fields());
  q.select = "SELECT " + joined(read) + " FROM runs";
  q.insert = "INSERT INTO runs(" + joined(written) + ") VALUES(" + joined(written, ":") + ")";
  q.update = "UPDATE runs SET " + joined(env) + ", status=:status WHERE id=:id";
  return q;
}

const RunSql& run_sql() {
  static const RunSql q = make_run_sql();
  return q;
}

// Pairs as a JSON array of [a, b] (notation) or an object a -> b (tuning).
std::string pairs_json(const std::vector<std::pair<std::string, std::string>>& v, bool object) {
  json j = object ? json::object() : json::array();
  for (const auto& [a, b] : v) {
    if (object) j[a] = b;
    else j.push_back({a, b});
  }
  return j.dump();
}

void bind_field(Stmt& s, const RunField& f, const char* p, const RunInfo& r) {
  if (f.scalar()) return bind_scalar(s, f, p, r);
  switch (f.kind) {
    case FieldKind::tuning:
      if (r.env.tuning) s.bind(p, pairs_json(*r.env.tuning, true));
      else s.null(p);
      return;
    case FieldKind::state: return bind_state(s, r.env.state);
    case FieldKind::stages:
      if (r.stages.empty()) s.null(p);
      else s.bind(p, stages_json(r.stages).dump());
      return;
    case FieldKind::notation: s.bind(p, pairs_json(r.notation, false)); return;
    case FieldKind::identity:
      if (r.env.identity.known()) s.bind(p, identity_json(r.env.identity).dump());
      else s.null(p);
      return;
    default: break;  // a scalar: above
  }
}

// The columns a run is written with: every field the store writes.
void bind_run(Stmt& s, const RunInfo& r) { bind_written(s, run_fields(), run_sql().params, r, bind_field); }

void read_field(const Stmt& s, const RunField& f, RunInfo& r) {
  if (f.scalar()) return read_scalar(s, f, r);
  const char* c = f.column;
  switch (f.kind) {
    case FieldKind::tuning: {
      const json set = json_column(s, c);
      if (set.is_null()) return;
      r.env.tuning.emplace();
      for (auto it = set.begin(); it != set.end(); ++it) r.env.tuning->emplace_back(it.key(), it.value().get<std::string>());
      return;
    }
    case FieldKind::state: r.env.state = read_state(s); return;
    case FieldKind::stages: r.stages = stages_of_json(json_column(s, c)); return;
    case FieldKind::notation:
      for (auto& pair : json_column(s, c)) r.notation.emplace_back(pair[0], pair[1]);
      return;
    case FieldKind::identity: r.env.identity = identity_from_json(json_column(s, c)); return;
    default: break;  // a scalar: above
  }
}

RunInfo read_run(const Stmt& s) {
  RunInfo r;
  for (const auto& f : run_fields())
    if (*f.column || f.kind == FieldKind::state) read_field(s, f, r);
  return r;
}

std::vector<RunDevice> read_run_devices(sqlite3* db, int64_t run_id) {
  std::vector<RunDevice> out;
  Stmt s(db,
         "SELECT device, gpu, peak_gbps, cells, points, busy_s, cpus, pinned, threads, memory, identity, calibration"
         " FROM run_devices"
         " WHERE run_id=:run_id ORDER BY rowid");
  s.bind(":run_id", run_id);
  while (s.step()) {
    RunDevice d;
    d.device = s.text("device");
    d.gpu = s.text("gpu");
    const double peak = s.f64("peak_gbps");
    d.peak_gbps = std::isnan(peak) ? 0 : peak;
    d.cells = s.i64("cells");
    d.points = s.i64("points");
    d.busy_s = s.f64("busy_s");
    d.cpus = s.text("cpus");
    d.pinned = s.i64("pinned") != 0;
    d.threads = s.i64("threads");
    d.memory = s.text("memory");
    d.identity = identity_from_json(json_column(s, "identity"));
    d.calibration = calibration_from_json(json_column(s, "calibration"));
    out.push_back(d);
  }
  return out;
}

// A run row with its devices.
RunInfo read_run_with_devices(sqlite3* db, const Stmt& s) {
  RunInfo r = read_run(s);
  r.devices = read_run_devices(db, r.id);
  return r;
}

// The calibration a device of a run has stored (none when the device has no row yet).
Calibration stored_calibration(sqlite3* db, int64_t run_id, const std::string& device) {
  Stmt s(db, "SELECT calibration FROM run_devices WHERE run_id=:run_id AND device=:device");
  s.bind(":run_id", run_id).bind(":device", device);
  return s.step() ? calibration_from_json(json_column(s, "calibration")) : Calibration();
}

void bind_json_or_null(Stmt& s, const char* p, const json& j) {
  if (j.is_null()) s.null(p);
  else s.bind(p, j.dump());
}

// Writes a run's device; for one the run has already, `on_conflict` says what changes
// (an SQL SET list over `excluded`).
void upsert_device(sqlite3* db, int64_t run_id, const RunDevice& d, const std::string& on_conflict) {
  Stmt s(db,
         "INSERT INTO run_devices(run_id, device, gpu, peak_gbps, cells, points, busy_s, cpus, pinned, threads, memory,"
         " identity, calibration) VALUES(:run_id, :device, :gpu, :peak, :cells, :points, :busy_s, :cpus, :pinned,"
         " :threads, :memory, :identity, :calibration) ON CONFLICT(run_id, device) DO UPDATE SET " + on_conflict);
  s.bind(":run_id", run_id).bind(":device", d.device).bind(":gpu", d.gpu).bind(":peak", d.peak_gbps)
      .bind(":cells", d.cells).bind(":points", d.points).bind(":busy_s", d.busy_s).bind(":cpus", d.cpus)
      .bind(":pinned", int64_t(d.pinned)).bind(":threads", d.threads).bind(":memory", d.memory);
  bind_json_or_null(s, ":identity", identity_json(d.identity));
  bind_json_or_null(s, ":calibration", calibration_json(d.calibration));
  s.step();
}

}  // namespace

void set_timing(RunInfo& run, const Timing& timing) {
  run.flush_l2 = l2_flush_name(timing.flush_l2);
  run.rounds = timing.rounds;
  run.stop_rule = stop_rule_name(timing.stop_rule);
  const bool noise = timing.stop_rule == StopRule::noise;
  run.noise_pct = noise ? timing.noise_pct : 0;
  run.min_rounds = noise ? timing.min_rounds : 0;
  run.min_samples = noise ? timing.min_samples : 0;
  run.interleave = timing.interleave > 0 ? timing.interleave : 0;
  run.processes = timing.processes > 0 ? timing.processes : 0;
  run.threads = timing.threads < 0 ? RunInfo::kThreadsUnknown : timing.threads;
  run.warmup_ms = timing.warmup_ms;
  run.rep_ms = timing.rep_ms;
}


int64_t Store::begin_run(RunInfo& r) {
  if (r.started_at.empty()) r.started_at = now_iso();
  if (r.uuid.empty()) r.uuid = random_uuid();
  Stmt s(db_, run_sql().insert);
  bind_run(s, r);
  s.step();
  r.id = sqlite3_last_insert_rowid(db_);
  add_run_devices(r.id, r.devices);
  return r.id;
}

void Store::add_run_devices(int64_t run_id, const std::vector<RunDevice>& devices) {
  for (const auto& d : devices)
    upsert_device(db_, run_id, d,
                  "gpu=excluded.gpu, peak_gbps=excluded.peak_gbps, cpus=excluded.cpus, pinned=excluded.pinned,"
                  " threads=excluded.threads, memory=excluded.memory,"
                  " identity=COALESCE(excluded.identity, identity), calibration=COALESCE(excluded.calibration, calibration)");
}

void Store::add_device_shares(int64_t run_id, const std::vector<RunDevice>& devices) {
  transaction([&] {
    for (RunDevice d : devices) {
      // The calibration passes are added to those the device has (a resumed run's processes
      // add theirs).
      Calibration all = stored_calibration(db_, run_id, d.device);
      all.samples.insert(all.samples.end(), d.calibration.samples.begin(), d.calibration.samples.end());
      d.calibration = all;
      upsert_device(db_, run_id, d,
                    "cells=cells+excluded.cells, points=points+excluded.points, busy_s=busy_s+excluded.busy_s,"
                    " calibration=excluded.calibration, identity=COALESCE(identity, excluded.identity)");
    }
  });
}

void Store::update_run(const RunInfo& r) {
  Stmt s(db_, run_sql().update);
  const auto& fields = run_fields();
  for (size_t i = 0; i < fields.size(); ++i)
    if (std::string(fields[i].section) == "environment" && fields[i].scalar())
      bind_scalar(s, fields[i], run_sql().params[i].c_str(), r);
  s.bind(":status", r.status).bind(":id", r.id);
  s.step();
}

void Store::add_run_stages(int64_t run_id, const StageTimes& stages) {
  if (stages.empty()) return;
  Stmt r(db_, "SELECT stages FROM runs WHERE id=:id");
  r.bind(":id", run_id);
  StageTimes sum = stages;
  if (r.step()) sum += stages_of_json(json_column(r, "stages"));
  Stmt s(db_, "UPDATE runs SET stages=:stages WHERE id=:id");
  s.bind(":stages", stages_json(sum).dump()).bind(":id", run_id);
  s.step();
}

void Store::finish_run(int64_t run_id, const std::string& status) {
  Stmt s(db_, "UPDATE runs SET status=:status, finished_at=:finished_at WHERE id=:id");
  s.bind(":status", status).bind(":finished_at", now_iso()).bind(":id", run_id);
  s.step();
}

void Store::set_run_end(int64_t run_id, const std::string& status, const std::string& finished_at) {
  Stmt s(db_, "UPDATE runs SET status=:status, finished_at=:finished_at WHERE id=:id");
  s.bind(":status", status).bind(":finished_at", finished_at).bind(":id", run_id);
  s.step();
}

std::vector<RunInfo> Store::runs() const {
  std::vector<RunInfo> out;
  Stmt s(db_, run_sql().select + " ORDER BY id");
  while (s.step()) out.push_back(read_run_with_devices(db_, s));
  return out;
}

std::optional<RunInfo> Store::run(int64_t id) const {
  Stmt s(db_, run_sql().select + " WHERE id=:id");
  s.bind(":id", id);
  if (!s.step()) return std::nullopt;
  return read_run_with_devices(db_, s);
}

std::optional<RunInfo> Store::run_by_uuid(const std::string& uuid) const {
  Stmt s(db_, run_sql().select + " WHERE uuid=:uuid");
  s.bind(":uuid", uuid);
  if (!s.step()) return std::nullopt;
  return read_run_with_devices(db_, s);
}

RunInfo Store::select(const std::string& sel) const {
  const RunSelector want = parse_selector(sel, path_);
  auto fail = [&](const std::string& msg) -> RunInfo { throw InputError(path_, "run " + sel, msg); };
  if (want.kind == RunSelector::Id) {
    if (auto r = run(want.id)) return *r;
    return fail(runs().empty() ? "the database holds no runs" : "no run with that id");
  }
  auto all = runs();
  if (all.empty()) return fail("the database holds no runs");
  if (want.kind == RunSelector::Latest) return all.back();
  const bool by_label = want.kind == RunSelector::Label;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (by_label && it->label == want.text) return *it;
    if (!by_label && gpu_matches(it->env.gpu, want.text)) return *it;
  }
  std::vector<std::string> held;  // the labels, or GPUs, the database has
  for (const auto& r : all) {
    const std::string& v = by_label ? r.label : r.env.gpu;
    if (!v.empty() && std::find(held.begin(), held.end(), v) == held.end()) held.push_back(v);
  }
  if (by_label) return fail("no run has that label" + suggest_names(want.text, held));
  return fail("no run on a GPU matching that name (GPUs: " + join_names(held, " | ") + ")");
}

}  // namespace opbench
