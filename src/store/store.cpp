#include "store/store.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.hpp"
#include "core/hash.hpp"
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
  };
  return m;
}

class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK)
      throw RuntimeFailure(std::string("database: ") + sqlite3_errmsg(db));
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    if (std::isnan(v)) return null(i);
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& null(int i) {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  bool step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw RuntimeFailure(std::string("database: ") + sqlite3_errmsg(db_));
  }
  std::string text(int c) const {
    auto p = sqlite3_column_text(s_, c);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  int64_t i64(int c) const { return sqlite3_column_int64(s_, c); }
  double f64(int c) const {
    return sqlite3_column_type(s_, c) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(s_, c);
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
};

json params_json(const Params& p) {
  json j = json::object();
  for (const auto& [k, v] : p.values()) {
    if (auto i = std::get_if<int64_t>(&v)) j[k] = *i;
    else j[k] = std::get<std::string>(v);
  }
  return j;
}

Params params_from(const std::string& text) {
  Params p;
  if (text.empty()) return p;
  const json j = json::parse(text);
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
    "(SELECT COUNT(*) FROM points WHERE points.run_id = runs.id), uuid";

RunInfo read_run(const Stmt& s) {
  RunInfo r;
  r.id = s.i64(0);
  r.label = s.text(1);
  r.source = s.text(2);
  r.env.device = s.text(3);
  r.env.gpu = s.text(4);
  r.env.sm_count = s.i64(5);
  r.env.memory_bytes = s.i64(6);
  r.env.driver = s.text(7);
  r.env.cuda_runtime = s.text(8);
  r.env.torch_version = s.text(9);
  r.env.compute_capability = s.text(10);
  r.env.peak_gbps = s.f64(11);
  if (std::isnan(r.env.peak_gbps)) r.env.peak_gbps = 0;
  r.host = s.text(12);
  r.git_commit = s.text(13);
  r.config_path = s.text(14);
  r.config_text = s.text(15);
  r.config_hash = s.text(16);
  r.op = s.text(17);
  r.stat = s.text(18);
  std::string notation = s.text(19);
  if (!notation.empty())
    for (auto& pair : json::parse(notation)) r.notation.emplace_back(pair[0], pair[1]);
  r.started_at = s.text(20);
  r.finished_at = s.text(21);
  r.status = s.text(22);
  r.points = s.i64(23);
  r.uuid = s.text(24);
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
  return int(s.i64(0));
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
           "  || '/' || IFNULL(SUM(value), '') FROM points WHERE points.run_id = runs.id)"
           " FROM runs WHERE uuid IS NULL ORDER BY id");
    while (s.step()) {
      std::string key;
      for (int c = 0; c < 14; ++c) key += (c == 0 ? std::to_string(s.i64(0)) : s.text(c)) + '\x1f';
      // 128 bits: FNV-1a of the key and of the key salted, laid out as a UUID (version 8).
      std::string a = content_hash(key), b = content_hash("opbench-run-uuid\x1f" + key);
      std::string h = a + b;
      h[12] = '8';
      h[16] = "89ab"[std::stoi(h.substr(16, 1), nullptr, 16) & 3];
      todo.emplace_back(s.i64(0), h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" +
                                      h.substr(16, 4) + "-" + h.substr(20, 12));
    }
  }
  for (const auto& [id, uuid] : todo) {
    Stmt u(db_, "UPDATE runs SET uuid=? WHERE id=?");
    u.bind(1, uuid).bind(2, id);
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

int64_t Store::begin_run(RunInfo& r) {
  if (r.started_at.empty()) r.started_at = now_iso();
  if (r.uuid.empty()) r.uuid = random_uuid();
  json notation = json::array();
  for (const auto& [label, prov] : r.notation) notation.push_back({label, prov});
  Stmt s(db_,
         "INSERT INTO runs(label, source, device, gpu, sm_count, memory_bytes, driver, cuda_runtime,"
         " torch_version, compute_capability, peak_gbps, host, git_commit, config_path, config_text,"
         " config_hash, op, stat, notation, started_at, finished_at, status, uuid)"
         " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, r.label).bind(2, r.source).bind(3, r.env.device).bind(4, r.env.gpu)
      .bind(5, r.env.sm_count).bind(6, r.env.memory_bytes).bind(7, r.env.driver)
      .bind(8, r.env.cuda_runtime).bind(9, r.env.torch_version).bind(10, r.env.compute_capability)
      .bind(11, r.env.peak_gbps).bind(12, r.host).bind(13, r.git_commit).bind(14, r.config_path)
      .bind(15, r.config_text).bind(16, r.config_hash).bind(17, r.op).bind(18, r.stat)
      .bind(19, notation.dump()).bind(20, r.started_at).bind(21, r.finished_at).bind(22, r.status)
      .bind(23, r.uuid);
  s.step();
  r.id = sqlite3_last_insert_rowid(db_);
  return r.id;
}

void Store::update_run(const RunInfo& r) {
  Stmt s(db_,
         "UPDATE runs SET device=?, gpu=?, sm_count=?, memory_bytes=?, driver=?, cuda_runtime=?,"
         " torch_version=?, compute_capability=?, peak_gbps=?, status=? WHERE id=?");
  s.bind(1, r.env.device).bind(2, r.env.gpu).bind(3, r.env.sm_count).bind(4, r.env.memory_bytes)
      .bind(5, r.env.driver).bind(6, r.env.cuda_runtime).bind(7, r.env.torch_version)
      .bind(8, r.env.compute_capability).bind(9, r.env.peak_gbps).bind(10, r.status).bind(11, r.id);
  s.step();
}

void Store::finish_run(int64_t run_id, const std::string& status) {
  Stmt s(db_, "UPDATE runs SET status=?, finished_at=? WHERE id=?");
  s.bind(1, status).bind(2, now_iso()).bind(3, run_id);
  s.step();
}

static void insert_point(sqlite3* db, const StoredPoint& sp) {
  const Point& p = sp.point;
  const Result& r = sp.result;
  json samples = json::array();
  for (double v : r.samples) samples.push_back(v);
  Stmt s(db,
         "INSERT OR REPLACE INTO points(run_id, seq, section, title, op, params, x_name, x_value,"
         " provider, label, mode, metric, dtype, unit, stat, value, median, mean, min, max, p20, p80,"
         " stdev, count, samples, bytes, gbps, pct_peak, error, created_at, rel_err, check_failed,"
         " rounds) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  s.bind(1, sp.run_id).bind(2, sp.seq).bind(3, sp.section).bind(4, p.title).bind(5, p.op)
      .bind(6, params_json(p.params).dump()).bind(7, p.x_name).bind(8, p.x_value)
      .bind(9, p.provider).bind(10, p.label).bind(11, p.params.s_or("mode", ""))
      .bind(12, p.params.s_or("metric", "")).bind(13, p.params.s_or("dtype", ""))
      .bind(14, r.unit).bind(15, sp.stat).bind(16, sp.value).bind(17, r.stats.median)
      .bind(18, r.stats.mean).bind(19, r.stats.min).bind(20, r.stats.max).bind(21, r.stats.p20)
      .bind(22, r.stats.p80).bind(23, r.stats.stdev).bind(24, r.stats.count)
      .bind(25, samples.dump()).bind(26, r.bytes).bind(27, r.gbps).bind(28, r.pct_peak)
      .bind(29, r.error).bind(30, sp.created_at.empty() ? now_iso() : sp.created_at)
      .bind(31, r.rel_err).bind(32, int64_t(r.check_failed));
  if (r.rounds.empty()) s.null(33);
  else s.bind(33, json(r.rounds).dump());
  s.step();
}

void Store::add_point(const StoredPoint& p) {
  transaction([&] { insert_point(db_, p); });
}

void Store::add_points(const std::vector<StoredPoint>& ps) {
  transaction([&] {
    for (const auto& p : ps) insert_point(db_, p);
  });
}

void Store::insert_points(const std::vector<StoredPoint>& ps) {
  for (const auto& p : ps) insert_point(db_, p);
}

void Store::add_compile(const CompileRecord& c) {
  Stmt s(db_, "INSERT INTO compiles(run_id, title, provider, package_key, seconds, cached, error) VALUES(?,?,?,?,?,?,?)");
  s.bind(1, c.run_id).bind(2, c.title).bind(3, c.provider).bind(4, c.key).bind(5, c.seconds)
      .bind(6, int64_t(c.cached)).bind(7, c.error);
  s.step();
}

std::vector<CompileRecord> Store::compiles(int64_t run_id) const {
  std::vector<CompileRecord> out;
  Stmt s(db_, "SELECT run_id, title, provider, package_key, seconds, cached, error FROM compiles WHERE run_id=? ORDER BY id");
  s.bind(1, run_id);
  while (s.step())
    out.push_back({s.i64(0), s.text(1), s.text(2), s.text(3), s.f64(4), s.i64(5) != 0, s.text(6)});
  return out;
}

std::vector<RunInfo> Store::runs() const {
  std::vector<RunInfo> out;
  Stmt s(db_, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::optional<RunInfo> Store::run(int64_t id) const {
  Stmt s(db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id=?");
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::optional<RunInfo> Store::run_by_uuid(const std::string& uuid) const {
  Stmt s(db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE uuid=?");
  s.bind(1, uuid);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

RunInfo Store::select(const std::string& sel) const {
  auto all = runs();
  auto fail = [&](const std::string& msg) -> RunInfo { throw InputError(path_, "run " + sel, msg); };
  if (all.empty()) return fail("the database holds no runs");
  if (sel == "latest") return all.back();
  auto starts = [&](const std::string& pre) { return sel.rfind(pre, 0) == 0; };
  if (starts("label:") || starts("gpu:")) {
    bool by_label = starts("label:");
    std::string want = sel.substr(by_label ? 6 : 4);
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (by_label && it->label == want) return *it;
      if (!by_label) {
        std::string g = it->env.gpu, w = want;
        for (auto& c : g) c = char(std::tolower(c));
        for (auto& c : w) c = char(std::tolower(c));
        if (!w.empty() && g.find(w) != std::string::npos) return *it;
      }
    }
    std::vector<std::string> held;
    for (const auto& r : all) {
      const std::string& v = by_label ? r.label : r.env.gpu;
      if (!v.empty() && std::find(held.begin(), held.end(), v) == held.end()) held.push_back(v);
    }
    if (by_label) return fail("no run has that label" + suggest_names(want, held));
    return fail("no run on a GPU matching that name (GPUs: " + join_names(held, " | ") + ")");
  }
  if (!sel.empty() && sel.find_first_not_of("0123456789") == std::string::npos) {
    if (auto r = run(std::stoll(sel))) return *r;
    return fail("no run with that id");
  }
  return fail("not a run selector (an id, latest, label:TEXT or gpu:TEXT)");
}

static std::vector<StoredPoint> read_points(sqlite3* db, const std::string& where, const std::function<void(Stmt&)>& bind) {
  std::vector<StoredPoint> out;
  Stmt s(db,
         "SELECT id, run_id, seq, section, title, op, params, x_name, x_value, provider, label, unit,"
         " stat, value, median, mean, min, max, p20, p80, stdev, count, samples, bytes, gbps,"
         " pct_peak, error, created_at, rel_err, check_failed, rounds FROM points WHERE " + where);
  bind(s);
  while (s.step()) {
    StoredPoint sp;
    sp.id = s.i64(0);
    sp.run_id = s.i64(1);
    sp.seq = s.i64(2);
    sp.section = s.text(3);
    sp.point.title = s.text(4);
    sp.point.op = s.text(5);
    sp.point.params = params_from(s.text(6));
    sp.point.x_name = s.text(7);
    sp.point.x_value = s.i64(8);
    sp.point.provider = s.text(9);
    sp.point.label = s.text(10);
    sp.result.unit = s.text(11);
    sp.stat = s.text(12);
    sp.value = s.f64(13);
    Stats& st = sp.result.stats;
    st.median = s.f64(14); st.mean = s.f64(15); st.min = s.f64(16); st.max = s.f64(17);
    st.p20 = s.f64(18); st.p80 = s.f64(19); st.stdev = s.f64(20); st.count = s.i64(21);
    std::string samples = s.text(22);
    if (!samples.empty())
      for (auto& v : json::parse(samples)) sp.result.samples.push_back(v.get<double>());
    sp.result.bytes = s.f64(23);
    sp.result.gbps = s.f64(24);
    sp.result.pct_peak = s.f64(25);
    sp.result.error = s.text(26);
    sp.created_at = s.text(27);
    sp.result.rel_err = s.f64(28);
    sp.result.check_failed = s.i64(29) != 0;
    std::string rounds = s.text(30);
    if (!rounds.empty())
      for (auto& v : json::parse(rounds)) sp.result.rounds.push_back(v.get<int64_t>());
    out.push_back(std::move(sp));
  }
  return out;
}

std::vector<StoredPoint> Store::points(int64_t run_id) const {
  return read_points(db_, "run_id=? ORDER BY seq, id", [&](Stmt& s) { s.bind(1, run_id); });
}

std::vector<StoredPoint> Store::points_titled(const std::string& title) const {
  return read_points(db_, "title=? ORDER BY run_id, seq, id", [&](Stmt& s) { s.bind(1, title); });
}

std::vector<std::string> Store::done_keys(int64_t run_id) const {
  std::vector<std::string> out;
  for (const auto& p : points(run_id)) out.push_back(p.point.key());
  return out;
}

}  // namespace opbench
