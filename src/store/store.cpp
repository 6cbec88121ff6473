#include "store/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>

#include "config/config.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/hash.hpp"
#include "core/value_json.hpp"
#include "core/text.hpp"
#include "store/selector.hpp"
#include "core/suggest.hpp"

namespace opbench {

using json = nlohmann::ordered_json;

namespace {

// The schema, one migration per version: version N is reached by applying 1..N in order.
const std::vector<std::string>& migrations() {
  static const std::vector<std::string> m = {
      // 1: runs and points.
      R"(CREATE TABLE runs(
           id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT NOT NULL DEFAULT '',
           source TEXT NOT NULL DEFAULT 'sweep', device TEXT, gpu TEXT, sm_count INTEGER,
           memory_bytes INTEGER, driver TEXT, cuda_runtime TEXT, torch_version TEXT,
           compute_capability TEXT, peak_gbps REAL, host TEXT, git_commit TEXT,
           config_path TEXT, config_text TEXT, config_hash TEXT, op TEXT, stat TEXT,
           notation TEXT, started_at TEXT, finished_at TEXT, status TEXT);
         CREATE TABLE points(
           id INTEGER PRIMARY KEY AUTOINCREMENT,
           run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
           seq INTEGER NOT NULL, section TEXT, title TEXT NOT NULL, op TEXT, params TEXT,
           x_name TEXT, x_value INTEGER, provider TEXT NOT NULL, label TEXT, mode TEXT,
           metric TEXT, dtype TEXT, unit TEXT, stat TEXT, value REAL,
           median REAL, mean REAL, min REAL, max REAL, p20 REAL, p80 REAL, stdev REAL,
           count INTEGER, samples TEXT, bytes REAL, gbps REAL, pct_peak REAL,
           error TEXT, created_at TEXT,
           UNIQUE(run_id, title, x_value, provider));
         CREATE INDEX points_title ON points(title, x_value, provider);)",
      // 2: the correctness check of each point against the torch provider.
      R"(ALTER TABLE points ADD COLUMN rel_err REAL;
         ALTER TABLE points ADD COLUMN check_failed INTEGER NOT NULL DEFAULT 0;)",
      // 3: a run's uuid (merge never copies a run twice). Existing runs get one derived from
      // their content right after this migration (Store::backfill_uuids).
      R"(ALTER TABLE runs ADD COLUMN uuid TEXT;
         CREATE UNIQUE INDEX runs_uuid ON runs(uuid);)",
      // 4: the compiled baselines' packages a run built or found cached before measuring.
      R"(CREATE TABLE compiles(
           id INTEGER PRIMARY KEY AUTOINCREMENT,
           run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
           title TEXT, provider TEXT, package_key TEXT, seconds REAL, cached INTEGER,
           error TEXT);)",
      // 5: a point's samples per round (a JSON array of counts; NULL: one round).
      R"(ALTER TABLE points ADD COLUMN rounds TEXT;)",
      // 6: how a run was timed, as columns (older runs get them from their stored config text
      // right after this migration: Store::backfill_timing); the tuning variables set for its
      // providers (a JSON object, NULL: not recorded); the GPU's state at the start of a run
      // and after each table cell (NULL: not read).
      R"(ALTER TABLE runs ADD COLUMN flush_l2 TEXT;
         ALTER TABLE runs ADD COLUMN rounds INTEGER;
         ALTER TABLE runs ADD COLUMN threads INTEGER;
         ALTER TABLE runs ADD COLUMN warmup_ms REAL;
         ALTER TABLE runs ADD COLUMN rep_ms REAL;
         ALTER TABLE runs ADD COLUMN tuning TEXT;
         ALTER TABLE runs ADD COLUMN gpu_sm_mhz REAL;
         ALTER TABLE runs ADD COLUMN gpu_memory_mhz REAL;
         ALTER TABLE runs ADD COLUMN gpu_sm_default_mhz REAL;
         ALTER TABLE runs ADD COLUMN gpu_temperature_c REAL;
         ALTER TABLE runs ADD COLUMN gpu_power_w REAL;
         ALTER TABLE runs ADD COLUMN gpu_reasons INTEGER;
         ALTER TABLE runs ADD COLUMN gpu_throttled INTEGER;
         ALTER TABLE points ADD COLUMN gpu_sm_mhz REAL;
         ALTER TABLE points ADD COLUMN gpu_memory_mhz REAL;
         ALTER TABLE points ADD COLUMN gpu_sm_default_mhz REAL;
         ALTER TABLE points ADD COLUMN gpu_temperature_c REAL;
         ALTER TABLE points ADD COLUMN gpu_power_w REAL;
         ALTER TABLE points ADD COLUMN gpu_reasons INTEGER;
         ALTER TABLE points ADD COLUMN gpu_throttled INTEGER;)",
      // 7: the process measuring a run (a row while a sweep holds it; one left behind by a
      // process that died marks the run abandoned), and the options that shaped each run.
      R"(CREATE TABLE run_locks(
           run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
           host TEXT NOT NULL, boot_id TEXT NOT NULL, pid INTEGER NOT NULL,
           proc_start INTEGER NOT NULL, since TEXT NOT NULL, heartbeat REAL NOT NULL);
         CREATE TABLE run_options(
           run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
           name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY(run_id, name));)",
      // 8: the device that measured each point (older points: their run's), and the devices
      // of a run measured on several.
      R"(ALTER TABLE points ADD COLUMN device TEXT NOT NULL DEFAULT '';
         UPDATE points SET device = COALESCE((SELECT runs.device FROM runs WHERE runs.id = points.run_id
                                              AND runs.source = 'sweep'), '');
         CREATE TABLE run_devices(
           run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
           device TEXT NOT NULL, gpu TEXT NOT NULL, peak_gbps REAL, PRIMARY KEY(run_id, device));)",
      // 9: how many table cells a run interleaved the rounds of, and over how many processes it
      // spread them; every older sweep measured each cell whole in one process.
      R"(ALTER TABLE runs ADD COLUMN interleave INTEGER;
         ALTER TABLE runs ADD COLUMN processes INTEGER;
         UPDATE runs SET interleave = 1, processes = 1 WHERE source = 'sweep';)",
      // 10: when a run's speed points stopped (every older sweep ran every round of do_bench's
      // budget), where its wall time went by stage, and each point's stop and precision.
      R"(ALTER TABLE runs ADD COLUMN stop TEXT;
         ALTER TABLE runs ADD COLUMN noise_pct REAL;
         ALTER TABLE runs ADD COLUMN min_rounds INTEGER;
         ALTER TABLE runs ADD COLUMN min_samples INTEGER;
         ALTER TABLE runs ADD COLUMN stages TEXT;
         ALTER TABLE points ADD COLUMN stop TEXT;
         ALTER TABLE points ADD COLUMN precision REAL;
         UPDATE runs SET stop = 'budget' WHERE source = 'sweep';)",
      // 11: each device's share of a run (cells, points, seconds busy) and where its process ran
      // (CPUs, pinned or not, LibTorch's threads, memory policy).
      R"(ALTER TABLE run_devices ADD COLUMN cells INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE run_devices ADD COLUMN points INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE run_devices ADD COLUMN busy_s REAL NOT NULL DEFAULT 0;
         ALTER TABLE run_devices ADD COLUMN cpus TEXT NOT NULL DEFAULT '';
         ALTER TABLE run_devices ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE run_devices ADD COLUMN threads INTEGER NOT NULL DEFAULT 0;
         ALTER TABLE run_devices ADD COLUMN memory TEXT NOT NULL DEFAULT '';)",
      // 12: the check against the truth (the reference computed in a wider dtype): rel_err is
      // now the normwise error against it (older points: against the torch provider), with the
      // largest element's error and the reference code's own two; and the control workload's
      // median in each round of a CPU speed point (JSON list). NULL: not recorded.
      R"(ALTER TABLE points ADD COLUMN max_err REAL;
         ALTER TABLE points ADD COLUMN ref_err REAL;
         ALTER TABLE points ADD COLUMN ref_max_err REAL;
         ALTER TABLE points ADD COLUMN control TEXT;)",
  };
  return m;
}

// A database error naming the file: "database PATH: message".
std::string db_error(sqlite3* db) {
  const char* file = sqlite3_db_filename(db, "main");
  return std::string("database ") + (file && *file ? file : "(in memory)") + ": " + sqlite3_errmsg(db);
}

// A prepared statement whose parameters are bound by name (":label") and whose columns are
// read by name: no position to keep in step between a column list and its values.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK)
      throw RuntimeFailure(db_error(db));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt& bind(const char* name, const std::string& v) {
    sqlite3_bind_text(s_, index(name), v.c_str(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(const char* name, const char* v) { return bind(name, std::string(v)); }
  Stmt& bind(const char* name, int64_t v) {
    sqlite3_bind_int64(s_, index(name), v);
    return *this;
  }
  Stmt& bind(const char* name, double v) {
    if (std::isnan(v)) return null(name);
    sqlite3_bind_double(s_, index(name), v);
    return *this;
  }
  Stmt& null(const char* name) {
    sqlite3_bind_null(s_, index(name));
    return *this;
  }
  // Ready to be bound and stepped again.
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw RuntimeFailure(db_error(db_));
  }
  std::string text(const char* col) const {
    auto p = sqlite3_column_text(s_, column(col));
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t i64(const char* col) const { return sqlite3_column_int64(s_, column(col)); }
  // Columns are read by name only (a 0 would read as a null name).
  int64_t i64(int) const = delete;
  std::string text(int) const = delete;
  double f64(int) const = delete;
  double f64(const char* col) const {
    const int c = column(col);
    return sqlite3_column_type(s_, c) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(s_, c);
  }
  bool is_null(const char* col) const { return sqlite3_column_type(s_, column(col)) == SQLITE_NULL; }

 private:
  // The names are string literals: each one's place is looked up once (a statement bound again
  // for every point of an import would otherwise compare every name each time).
  int index(const char* name) const {
    for (const auto& [known, i] : places_)
      if (known == name) return i;
    const int i = sqlite3_bind_parameter_index(s_, name);
    if (i == 0) throw std::logic_error(std::string("database: no parameter ") + name + " in " + sqlite3_sql(s_));
    places_.emplace_back(name, i);
    return i;
  }
  // The column's position, looked up once per name (a reader of many rows asks for each
  // column on every row; the names are read from SQLite once, not per lookup).
  int column(const char* name) const {
    for (const auto& [n, c] : found_)
      if (n == name && names_[size_t(c)] == name) return c;  // the same literal: the common case
    if (names_.empty())
      for (int c = 0, n = sqlite3_column_count(s_); c < n; ++c) names_.emplace_back(sqlite3_column_name(s_, c));
    for (size_t c = 0; c < names_.size(); ++c)
      if (names_[c] == name) {
        found_.emplace_back(name, int(c));
        return int(c);
      }
    throw std::logic_error(std::string("database: no column ") + name + " in " + sqlite3_sql(s_));
  }
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  mutable std::vector<std::pair<const char*, int>> places_;  // parameter name -> its index
  mutable std::vector<std::string> names_;
  mutable std::vector<std::pair<const char*, int>> found_;
};

// A column holding JSON text (params, samples, rounds, notation, tuning), parsed; null when
// the column is empty.
json json_column(const Stmt& s, const char* col) {
  const std::string text = s.text(col);
  return text.empty() ? json() : json::parse(text);
}

Params params_from(const json& j) {
  Params p;
  for (auto& [k, v] : j.items()) {
    if (v.is_number_integer()) p.set(k, v.get<int64_t>());
    else if (v.is_string()) p.set(k, v.get<std::string>());
  }
  return p;
}

const char* kRunColumns =
    "id, label, source, device, gpu, sm_count, memory_bytes, driver, cuda_runtime, torch_version, "
    "compute_capability, peak_gbps, host, git_commit, config_path, config_text, config_hash, op, "
    "stat, notation, started_at, finished_at, status, "
    "(SELECT COUNT(*) FROM points WHERE points.run_id = runs.id) AS points, uuid, flush_l2, rounds, "
    "interleave, processes, threads, warmup_ms, rep_ms, stop, noise_pct, min_rounds, min_samples, stages, tuning, "
    "gpu_sm_mhz, gpu_memory_mhz, gpu_sm_default_mhz, "
    "gpu_temperature_c, gpu_power_w, gpu_reasons, gpu_throttled, "
    "COALESCE((SELECT value FROM run_options WHERE run_id = runs.id AND name = 'shard'), '') AS shard, "
    "COALESCE((SELECT value FROM run_options WHERE run_id = runs.id AND name = 'shards'), '') AS shards";

// The GPU state columns (gpu_sm_mhz ...), shared by runs and points: NULL when not read.
void bind_state(Stmt& s, const DeviceState& st) {
  if (!st.known) {
    for (const char* c : {":gpu_sm_mhz", ":gpu_memory_mhz", ":gpu_sm_default_mhz", ":gpu_temperature_c",
                          ":gpu_power_w", ":gpu_reasons", ":gpu_throttled"})
      s.null(c);
    return;
  }
  s.bind(":gpu_sm_mhz", st.sm_mhz).bind(":gpu_memory_mhz", st.memory_mhz)
      .bind(":gpu_sm_default_mhz", st.sm_default_mhz).bind(":gpu_temperature_c", st.temperature_c)
      .bind(":gpu_power_w", st.power_w).bind(":gpu_reasons", int64_t(st.reasons))
      .bind(":gpu_throttled", int64_t(st.throttled));
}

DeviceState read_state(const Stmt& s) {
  DeviceState st;
  if (s.is_null("gpu_sm_mhz")) return st;
  auto num = [&](const char* c) {
    double v = s.f64(c);
    return std::isnan(v) ? 0.0 : v;
  };
  st.known = true;
  st.sm_mhz = num("gpu_sm_mhz");
  st.memory_mhz = num("gpu_memory_mhz");
  st.sm_default_mhz = num("gpu_sm_default_mhz");
  st.temperature_c = num("gpu_temperature_c");
  st.power_w = num("gpu_power_w");
  st.reasons = uint64_t(s.i64("gpu_reasons"));
  st.throttled = s.i64("gpu_throttled") != 0;
  return st;
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

// A damaged file is refused when opened, before anything reads or writes it: SQLite's
// quick_check (the structure of every page, linear in the file's size) must find nothing.
void check_integrity(sqlite3* db, const std::string& path) {
  Stmt s(db, "PRAGMA quick_check(1)");
  const std::string verdict = s.step() ? s.text("quick_check") : "no answer";
  if (verdict != "ok")
    throw RuntimeFailure("database " + path + " is damaged (" + one_line(verdict) +
                         "); restore it from a copy, or recover what is readable with `sqlite3 " + path + " .recover`");
}

RunInfo read_run(const Stmt& s) {
  RunInfo r;
  r.id = s.i64("id");
  r.label = s.text("label");
  r.source = s.text("source");
  r.env.device = s.text("device");
  r.env.gpu = s.text("gpu");
  r.env.sm_count = s.i64("sm_count");
  r.env.memory_bytes = s.i64("memory_bytes");
  r.env.driver = s.text("driver");
  r.env.cuda_runtime = s.text("cuda_runtime");
  r.env.torch_version = s.text("torch_version");
  r.env.compute_capability = s.text("compute_capability");
  r.env.peak_gbps = s.f64("peak_gbps");
  if (std::isnan(r.env.peak_gbps)) r.env.peak_gbps = 0;
  r.env.state = read_state(s);
  const json set = json_column(s, "tuning");
  if (!set.is_null()) {
    r.env.tuning.emplace();
    for (auto it = set.begin(); it != set.end(); ++it) r.env.tuning->emplace_back(it.key(), it.value().get<std::string>());
  }
  r.host = s.text("host");
  r.git_commit = s.text("git_commit");
  r.config_path = s.text("config_path");
  r.config_text = s.text("config_text");
  r.config_hash = s.text("config_hash");
  r.op = s.text("op");
  r.stat = s.text("stat");
  for (auto& pair : json_column(s, "notation")) r.notation.emplace_back(pair[0], pair[1]);
  r.started_at = s.text("started_at");
  r.finished_at = s.text("finished_at");
  r.status = s.text("status");
  r.points = s.i64("points");
  r.uuid = s.text("uuid");
  r.flush_l2 = s.text("flush_l2");
  r.rounds = s.i64("rounds");
  r.interleave = s.i64("interleave");
  r.processes = s.i64("processes");
  r.threads = s.is_null("threads") ? RunInfo::kThreadsUnknown : s.i64("threads");
  r.warmup_ms = s.is_null("warmup_ms") ? 0 : s.f64("warmup_ms");
  r.rep_ms = s.is_null("rep_ms") ? 0 : s.f64("rep_ms");
  r.stop = s.text("stop");
  r.noise_pct = s.is_null("noise_pct") ? 0 : s.f64("noise_pct");
  r.min_rounds = s.i64("min_rounds");
  r.min_samples = s.i64("min_samples");
  r.stages = stages_of_json(json_column(s, "stages"));
  r.shard = s.text("shard");
  r.shards = s.text("shards");
  return r;
}

std::vector<RunDevice> read_run_devices(sqlite3* db, int64_t run_id) {
  std::vector<RunDevice> out;
  Stmt s(db,
         "SELECT device, gpu, peak_gbps, cells, points, busy_s, cpus, pinned, threads, memory FROM run_devices"
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

}  // namespace

std::string now_iso() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, int(ms));
  return out;
}

std::string random_uuid() {
  // Fresh entropy each call (no cached generator: a forked child must not repeat its parent).
  std::random_device rd;
  auto word = [&] { return (uint64_t(rd()) << 32) ^ uint64_t(rd()); };
  uint64_t hi = word(), lo = word();
  hi = (hi & 0xffffffffffff0fffull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3fffffffffffffffull) | 0x8000000000000000ull;  // variant 10
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
                (unsigned long long)((hi >> 16) & 0xffff), (unsigned long long)(hi & 0xffff),
                (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffull));
  return buf;
}

void set_timing(RunInfo& run, const Timing& timing) {
  run.flush_l2 = l2_flush_name(timing.flush_l2);
  run.rounds = timing.rounds;
  run.stop = stop_rule_name(timing.stop);
  const bool noise = timing.stop == StopRule::noise;
  run.noise_pct = noise ? timing.noise_pct : 0;
  run.min_rounds = noise ? timing.min_rounds : 0;
  run.min_samples = noise ? timing.min_samples : 0;
  run.interleave = timing.interleave > 0 ? timing.interleave : 0;
  run.processes = timing.processes > 0 ? timing.processes : 0;
  run.threads = timing.threads < 0 ? RunInfo::kThreadsUnknown : timing.threads;
  run.warmup_ms = timing.warmup_ms;
  run.rep_ms = timing.rep_ms;
}

int Store::schema_version() { return int(migrations().size()); }

Store::Store(const std::string& path, bool create) : path_(path) {
  int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw RuntimeFailure("cannot open database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 30000);  // another process writing: wait, do not fail
  try {
    check_integrity(db_, path_);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
  exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;");
  migrate();
}

Store::~Store() {
  if (db_) sqlite3_close(db_);
}

void Store::exec(const std::string& sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw RuntimeFailure("database " + path_ + ": " + msg);
  }
}

int Store::version() const {
  Stmt s(db_, "PRAGMA user_version");
  s.step();
  return int(s.i64("user_version"));
}

void Store::migrate() {
  // BEGIN IMMEDIATE: two processes opening a new database migrate it once.
  exec("BEGIN IMMEDIATE");
  try {
    int v = version();
    if (v > schema_version())
      throw RuntimeFailure("database " + path_ + " has schema version " + std::to_string(v) +
                           ", newer than this opbench (" + std::to_string(schema_version()) + ")");
    for (int i = v; i < schema_version(); ++i) {
      exec(migrations()[i]);
      exec("PRAGMA user_version = " + std::to_string(i + 1));
    }
    backfill_uuids();
    if (v < 6) backfill_timing();
    exec("COMMIT");
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
}

// Runs without a uuid (written before schema 3) get one derived from what identifies them:
// their row and content, hashed. Deterministic, so two copies of one old database migrated on
// two machines give a run the same uuid, and merging both copies keeps one.
void Store::backfill_uuids() {
  std::vector<std::pair<int64_t, std::string>> todo;
  {
    Stmt s(db_,
           "SELECT id, label, source, device, gpu, host, git_commit, config_path, config_hash, op,"
           " started_at, finished_at, status,"
           " (SELECT COUNT(*) || '/' || IFNULL(MIN(created_at), '') || '/' || IFNULL(MAX(created_at), '')"
           "  || '/' || IFNULL(SUM(value), '') FROM points WHERE points.run_id = runs.id) AS content"
           " FROM runs WHERE uuid IS NULL ORDER BY id");
    while (s.step()) {
      std::string key = std::to_string(s.i64("id")) + '\x1f';
      for (const char* c : {"label", "source", "device", "gpu", "host", "git_commit", "config_path", "config_hash",
                            "op", "started_at", "finished_at", "status", "content"})
        key += s.text(c) + '\x1f';
      todo.emplace_back(s.i64("id"), content_uuid(key));
    }
  }
  for (const auto& [id, uuid] : todo) {
    Stmt u(db_, "UPDATE runs SET uuid=:uuid WHERE id=:id");
    u.bind(":uuid", uuid).bind(":id", id);
    u.step();
  }
}

// Runs written before schema 6 get their timing columns from what they recorded: the flush,
// budgets and rounds their stored config spells out (its defaults otherwise, except rounds:
// the default changed over time, so a config without the key gives the round count its
// points stored, or none); the thread count LibTorch chose itself (0) for a sweep, since
// nothing pinned it then. Imported runs (no config text) keep every column unknown.
void Store::backfill_timing() {
  struct Todo {
    int64_t id;
    std::optional<StoredTiming> timing;
    int64_t stored_rounds;
  };
  std::vector<Todo> todo;
  {
    Stmt s(db_,
           "SELECT id, config_text, config_path,"
           " (SELECT MAX(json_array_length(rounds)) FROM points WHERE points.run_id = runs.id) AS stored_rounds"
           " FROM runs WHERE source = 'sweep' AND config_text <> ''");
    while (s.step())
      todo.push_back({s.i64("id"), stored_timing(s.text("config_text"), s.text("config_path")), s.i64("stored_rounds")});
  }
  for (const auto& t : todo) {
    Stmt u(db_,
           "UPDATE runs SET flush_l2=:flush_l2, rounds=:rounds, threads=0, warmup_ms=:warmup_ms, rep_ms=:rep_ms"
           " WHERE id=:id");
    u.bind(":id", t.id);
    if (t.timing) {
      const Timing& tm = t.timing->timing;
      // (before the device decided an unset flush, every run flushed with write)
      const L2Flush flush = tm.flush_l2 == L2Flush::device ? L2Flush::write : tm.flush_l2;
      u.bind(":flush_l2", l2_flush_name(flush)).bind(":warmup_ms", tm.warmup_ms).bind(":rep_ms", tm.rep_ms);
    } else {
      u.null(":flush_l2").null(":warmup_ms").null(":rep_ms");
    }
    if (t.timing && t.timing->given.count("rounds")) u.bind(":rounds", int64_t(t.timing->timing.rounds));
    else if (t.stored_rounds > 1) u.bind(":rounds", t.stored_rounds);
    else u.null(":rounds");
    u.step();
  }
}

void Store::transaction(const std::function<void()>& body) {
  exec("BEGIN IMMEDIATE");
  try {
    body();
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// The columns a run is written with: its row but id and the points count.
void bind_run(Stmt& s, const RunInfo& r) {
  s.bind(":label", r.label).bind(":source", r.source).bind(":device", r.env.device).bind(":gpu", r.env.gpu)
      .bind(":sm_count", r.env.sm_count).bind(":memory_bytes", r.env.memory_bytes).bind(":driver", r.env.driver)
      .bind(":cuda_runtime", r.env.cuda_runtime).bind(":torch_version", r.env.torch_version)
      .bind(":compute_capability", r.env.compute_capability).bind(":peak_gbps", r.env.peak_gbps)
      .bind(":host", r.host).bind(":git_commit", r.git_commit).bind(":config_path", r.config_path)
      .bind(":config_text", r.config_text).bind(":config_hash", r.config_hash).bind(":op", r.op)
      .bind(":stat", r.stat).bind(":notation", pairs_json(r.notation, false)).bind(":started_at", r.started_at)
      .bind(":finished_at", r.finished_at).bind(":status", r.status).bind(":uuid", r.uuid);
  if (r.flush_l2.empty()) s.null(":flush_l2");
  else s.bind(":flush_l2", r.flush_l2);
  if (r.rounds > 0) s.bind(":rounds", r.rounds);
  else s.null(":rounds");
  for (auto [name, v] : {std::pair{":interleave", r.interleave}, {":processes", r.processes}}) {
    if (v > 0) s.bind(name, v);
    else s.null(name);
  }
  if (r.threads >= 0) s.bind(":threads", r.threads);
  else s.null(":threads");
  s.bind(":warmup_ms", r.warmup_ms > 0 ? r.warmup_ms : std::nan(""));
  s.bind(":rep_ms", r.rep_ms > 0 ? r.rep_ms : std::nan(""));
  if (r.stop.empty()) s.null(":stop");
  else s.bind(":stop", r.stop);
  s.bind(":noise_pct", r.noise_pct > 0 ? r.noise_pct : std::nan(""));
  for (auto [name, v] : {std::pair{":min_rounds", r.min_rounds}, {":min_samples", r.min_samples}}) {
    if (v > 0) s.bind(name, v);
    else s.null(name);
  }
  if (r.stages.empty()) s.null(":stages");
  else s.bind(":stages", stages_json(r.stages).dump());
  if (r.env.tuning) s.bind(":tuning", pairs_json(*r.env.tuning, true));
  else s.null(":tuning");
  bind_state(s, r.env.state);
}

int64_t Store::begin_run(RunInfo& r) {
  if (r.started_at.empty()) r.started_at = now_iso();
  if (r.uuid.empty()) r.uuid = random_uuid();
  Stmt s(db_,
         "INSERT INTO runs(label, source, device, gpu, sm_count, memory_bytes, driver, cuda_runtime,"
         " torch_version, compute_capability, peak_gbps, host, git_commit, config_path, config_text,"
         " config_hash, op, stat, notation, started_at, finished_at, status, uuid, flush_l2, rounds, interleave,"
         " processes, threads, warmup_ms, rep_ms, stop, noise_pct, min_rounds, min_samples, stages, tuning, gpu_sm_mhz,"
         " gpu_memory_mhz, gpu_sm_default_mhz, gpu_temperature_c, gpu_power_w, gpu_reasons, gpu_throttled)"
         " VALUES(:label, :source, :device, :gpu, :sm_count, :memory_bytes, :driver, :cuda_runtime,"
         " :torch_version, :compute_capability, :peak_gbps, :host, :git_commit, :config_path, :config_text,"
         " :config_hash, :op, :stat, :notation, :started_at, :finished_at, :status, :uuid, :flush_l2, :rounds,"
         " :interleave, :processes, :threads, :warmup_ms, :rep_ms, :stop, :noise_pct, :min_rounds, :min_samples,"
         " :stages, :tuning, :gpu_sm_mhz, :gpu_memory_mhz, :gpu_sm_default_mhz,"
         " :gpu_temperature_c, :gpu_power_w, :gpu_reasons, :gpu_throttled)");
  bind_run(s, r);
  s.step();
  r.id = sqlite3_last_insert_rowid(db_);
  add_run_devices(r.id, r.devices);
  return r.id;
}

namespace {

// Writes a run's device; for one the run has already, `on_conflict` says what changes
// (an SQL SET list over `excluded`).
void upsert_device(sqlite3* db, int64_t run_id, const RunDevice& d, const std::string& on_conflict) {
  Stmt s(db,
         "INSERT INTO run_devices(run_id, device, gpu, peak_gbps, cells, points, busy_s, cpus, pinned, threads, memory)"
         " VALUES(:run_id, :device, :gpu, :peak, :cells, :points, :busy_s, :cpus, :pinned, :threads, :memory)"
         " ON CONFLICT(run_id, device) DO UPDATE SET " + on_conflict);
  s.bind(":run_id", run_id).bind(":device", d.device).bind(":gpu", d.gpu).bind(":peak", d.peak_gbps)
      .bind(":cells", d.cells).bind(":points", d.points).bind(":busy_s", d.busy_s).bind(":cpus", d.cpus)
      .bind(":pinned", int64_t(d.pinned)).bind(":threads", d.threads).bind(":memory", d.memory);
  s.step();
}

}  // namespace

void Store::add_run_devices(int64_t run_id, const std::vector<RunDevice>& devices) {
  for (const auto& d : devices)
    upsert_device(db_, run_id, d,
                  "gpu=excluded.gpu, peak_gbps=excluded.peak_gbps, cpus=excluded.cpus, pinned=excluded.pinned,"
                  " threads=excluded.threads, memory=excluded.memory");
}

void Store::add_device_shares(int64_t run_id, const std::vector<RunDevice>& devices) {
  transaction([&] {
    for (const auto& d : devices)
      upsert_device(db_, run_id, d,
                    "cells=cells+excluded.cells, points=points+excluded.points, busy_s=busy_s+excluded.busy_s");
  });
}

void Store::update_run(const RunInfo& r) {
  Stmt s(db_,
         "UPDATE runs SET device=:device, gpu=:gpu, sm_count=:sm_count, memory_bytes=:memory_bytes,"
         " driver=:driver, cuda_runtime=:cuda_runtime, torch_version=:torch_version,"
         " compute_capability=:compute_capability, peak_gbps=:peak_gbps, status=:status WHERE id=:id");
  s.bind(":device", r.env.device).bind(":gpu", r.env.gpu).bind(":sm_count", r.env.sm_count)
      .bind(":memory_bytes", r.env.memory_bytes).bind(":driver", r.env.driver)
      .bind(":cuda_runtime", r.env.cuda_runtime).bind(":torch_version", r.env.torch_version)
      .bind(":compute_capability", r.env.compute_capability).bind(":peak_gbps", r.env.peak_gbps)
      .bind(":status", r.status).bind(":id", r.id);
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

static void bind_point(Stmt& s, const StoredPoint& sp) {
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

static void insert_point(sqlite3* db, const StoredPoint& sp) {
  Stmt s(db, kInsertPoint);
  bind_point(s, sp);
  s.step();
}

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

void Store::add_compile(const CompileRecord& c) {
  Stmt s(db_,
         "INSERT INTO compiles(run_id, title, provider, package_key, seconds, cached, error)"
         " VALUES(:run_id, :title, :provider, :package_key, :seconds, :cached, :error)");
  s.bind(":run_id", c.run_id).bind(":title", c.title).bind(":provider", c.provider).bind(":package_key", c.key)
      .bind(":seconds", c.seconds).bind(":cached", int64_t(c.cached)).bind(":error", c.error);
  s.step();
}

std::vector<CompileRecord> Store::compiles(int64_t run_id) const {
  std::vector<CompileRecord> out;
  Stmt s(db_,
         "SELECT run_id, title, provider, package_key, seconds, cached, error FROM compiles"
         " WHERE run_id=:run_id ORDER BY id");
  s.bind(":run_id", run_id);
  while (s.step())
    out.push_back({s.i64("run_id"), s.text("title"), s.text("provider"), s.text("package_key"), s.f64("seconds"),
                   s.i64("cached") != 0, s.text("error")});
  return out;
}

std::vector<RunInfo> Store::runs() const {
  std::vector<RunInfo> out;
  Stmt s(db_, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  while (s.step()) out.push_back(read_run_with_devices(db_, s));
  return out;
}

std::optional<RunInfo> Store::run(int64_t id) const {
  Stmt s(db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id=:id");
  s.bind(":id", id);
  if (!s.step()) return std::nullopt;
  return read_run_with_devices(db_, s);
}

std::optional<RunInfo> Store::run_by_uuid(const std::string& uuid) const {
  Stmt s(db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE uuid=:uuid");
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

static std::vector<StoredPoint> read_points(sqlite3* db, const std::string& where, const std::function<void(Stmt&)>& bind,
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
  while (s.step()) {
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
    out.push_back(std::move(sp));
  }
  return out;
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

// ------------------------------------------------------------------------- reading only

namespace {

// A path as an SQLite URI ("file:" with %, ?, # escaped).
std::string file_uri(const std::string& path, const std::string& query) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", unsigned(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "?" + query;
}

sqlite3* open_uri(const std::string& uri) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return nullptr;
  }
  return db;
}

// The schema version, or -1 when the file cannot be read through this connection.
int read_version(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  int v = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int(s, 0);
  sqlite3_finalize(s);
  return v;
}

}  // namespace

std::unique_ptr<Store> Store::open_read_only(const std::string& path) {
  return std::unique_ptr<Store>(new Store(path, ReadOnly{}));
}

Store::Store(const std::string& path, ReadOnly) : path_(path), read_only_(true) {
  if (!fs::exists(path)) throw RuntimeFailure("cannot open database " + path + ": no such file");
  db_ = open_uri(file_uri(path, "mode=ro"));
  int v = db_ ? read_version(db_) : -1;
  // A WAL database whose -wal and -shm files are gone (its last writer closed it) in a
  // directory this process cannot write: SQLite cannot create the shared-memory file a reader
  // needs. No -wal file means no writer holds it open, so it is read as an immutable file.
  if (v < 0 && !fs::exists(path + "-wal")) {
    sqlite3_close(db_);
    db_ = open_uri(file_uri(path, "mode=ro&immutable=1"));
    v = db_ ? read_version(db_) : -1;
  }
  if (v < 0) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open the file";
    sqlite3_close(db_);
    db_ = nullptr;
    throw RuntimeFailure("cannot read database " + path + ": " + msg);
  }
  sqlite3_busy_timeout(db_, 30000);
  try {
    check_integrity(db_, path_);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
  if (v > schema_version())
    throw RuntimeFailure("database " + path_ + " has schema version " + std::to_string(v) +
                         ", newer than this opbench (" + std::to_string(schema_version()) + ")");
  if (v < schema_version()) migrate_in_memory();
}

// Copies the open (read-only) database into memory and migrates the copy: an older database
// is read as this opbench reads a new one, and the file stays exactly as it was.
void Store::migrate_in_memory() {
  sqlite3* mem = nullptr;
  if (sqlite3_open(":memory:", &mem) != SQLITE_OK) {
    sqlite3_close(mem);
    throw RuntimeFailure("database " + path_ + ": out of memory");
  }
  sqlite3_backup* b = sqlite3_backup_init(mem, "main", db_, "main");
  const int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    std::string msg = sqlite3_errmsg(mem);
    sqlite3_close(mem);
    throw RuntimeFailure("cannot read database " + path_ + ": " + msg);
  }
  sqlite3_close(db_);
  db_ = mem;
  migrate();
  exec("PRAGMA query_only = 1");  // the copy is for reading too
}

// ------------------------------------------------------------------------- who measures a run

namespace {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string describe_holder(const RunLock& l) {
  return "run " + std::to_string(l.run_id) + " is being measured by pid " + std::to_string(l.holder.pid) +
         " on host " + l.holder.host + " (since " + l.since + ")";
}

bool same_process(const ProcessIdentity& a, const ProcessIdentity& b) {
  return a.host == b.host && a.boot_id == b.boot_id && a.pid == b.pid && a.start == b.start;
}

}  // namespace

RunBusy::RunBusy(const RunLock& l)
    : InputError("--resume", std::to_string(l.run_id), describe_holder(l) + "; wait for it to finish or stop it"),
      lock(l) {}

bool holder_alive(const RunLock& l) {
  switch (liveness(l.holder)) {
    case Liveness::alive: return true;
    case Liveness::dead: return false;
    case Liveness::unknown: break;
  }
  return unix_now() - l.heartbeat < kHeartbeatStaleSeconds;
}

std::optional<RunLock> Store::run_lock(int64_t run_id) const {
  Stmt s(db_, "SELECT host, boot_id, pid, proc_start, since, heartbeat FROM run_locks WHERE run_id=:run_id");
  s.bind(":run_id", run_id);
  if (!s.step()) return std::nullopt;
  RunLock l;
  l.run_id = run_id;
  l.holder.host = s.text("host");
  l.holder.boot_id = s.text("boot_id");
  l.holder.pid = s.i64("pid");
  l.holder.start = s.i64("proc_start");
  l.since = s.text("since");
  l.heartbeat = s.f64("heartbeat");
  return l;
}

int64_t Store::take_run(const ProcessIdentity& me, const std::function<int64_t()>& body) {
  int64_t run_id = 0;
  transaction([&] {
    run_id = body();
    if (auto held = run_lock(run_id); held && !same_process(held->holder, me) && holder_alive(*held))
      throw RunBusy(*held);
    Stmt s(db_,
           "INSERT OR REPLACE INTO run_locks(run_id, host, boot_id, pid, proc_start, since, heartbeat)"
           " VALUES(:run_id, :host, :boot_id, :pid, :proc_start, :since, :heartbeat)");
    s.bind(":run_id", run_id).bind(":host", me.host).bind(":boot_id", me.boot_id).bind(":pid", me.pid)
        .bind(":proc_start", me.start).bind(":since", now_iso()).bind(":heartbeat", unix_now());
    s.step();
  });
  return run_id;
}

bool Store::heartbeat(int64_t run_id, const ProcessIdentity& me) {
  Stmt s(db_, "UPDATE run_locks SET heartbeat=:heartbeat WHERE run_id=:run_id AND host=:host AND pid=:pid");
  s.bind(":heartbeat", unix_now()).bind(":run_id", run_id).bind(":host", me.host).bind(":pid", me.pid);
  s.step();
  return sqlite3_changes(db_) > 0;
}

bool Store::end_run(int64_t run_id, const std::string& status, const ProcessIdentity& me) {
  bool held = false;
  transaction([&] {
    Stmt s(db_, "DELETE FROM run_locks WHERE run_id=:run_id AND host=:host AND pid=:pid");
    s.bind(":run_id", run_id).bind(":host", me.host).bind(":pid", me.pid);
    s.step();
    held = sqlite3_changes(db_) > 0;
    if (held) finish_run(run_id, status);
  });
  return held;
}

void Store::set_run_options(int64_t run_id, const std::vector<std::pair<std::string, std::string>>& options) {
  for (const auto& [name, value] : options) {
    Stmt s(db_, "INSERT OR REPLACE INTO run_options(run_id, name, value) VALUES(:run_id, :name, :value)");
    s.bind(":run_id", run_id).bind(":name", name).bind(":value", value);
    s.step();
  }
}

std::vector<std::pair<std::string, std::string>> Store::run_options(int64_t run_id) const {
  std::vector<std::pair<std::string, std::string>> out;
  Stmt s(db_, "SELECT name, value FROM run_options WHERE run_id=:run_id ORDER BY name");
  s.bind(":run_id", run_id);
  while (s.step()) out.emplace_back(s.text("name"), s.text("value"));
  return out;
}

std::string effective_status(const Store& store, const RunInfo& run) {
  if (run.status != "running" || run.source != "sweep") return run.status;
  auto lock = store.run_lock(run.id);
  return lock && holder_alive(*lock) ? "running" : "abandoned";
}

}  // namespace opbench
