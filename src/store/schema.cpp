// The store's schema: one migration per version, applied in order when a database is opened,
// and the backfills that give older runs what later versions record. Torch-free.
#include <sqlite3.h>

#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "store/statement.hpp"
#include "store/store.hpp"

namespace opbench {

namespace {

// The schema, one migration per version: version N is reached by applying 1..N in order.
// (The migrations' text is kept as first written: SQLite stores each CREATE as it was given.)
const char* const kMigrations[] = {
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
      // 13: how close each GPU speed point came to being bound by the host (Result::host_share).
      R"(ALTER TABLE points ADD COLUMN host_share REAL;)",
      // 14: which physical GPU measured (the run's first device, and each device of a run), and
      // each device's calibration over the run (JSON; NULL: not recorded).
      R"(ALTER TABLE runs ADD COLUMN identity TEXT;
         ALTER TABLE run_devices ADD COLUMN identity TEXT;
         ALTER TABLE run_devices ADD COLUMN calibration TEXT;)",
};


}  // namespace

int Store::schema_version() { return int(std::size(kMigrations)); }

std::string Store::upgrade_failed(int version) {
  return " (upgrading its schema from version " + std::to_string(version) + " to " + std::to_string(schema_version()) +
         "; the database is unchanged)";
}

int Store::version() const {
  Stmt s(db_, "PRAGMA user_version");
  s.step();
  return int(s.i64("user_version"));
}

void Store::migrate() {
  // BEGIN IMMEDIATE: two processes opening a new database migrate it once.
  exec("BEGIN IMMEDIATE");
  int v = -1;
  try {
    v = version();
    if (v > schema_version())
      throw RuntimeFailure("database " + path_ + " has schema version " + std::to_string(v) +
                           ", newer than this opbench (" + std::to_string(schema_version()) + ")");
    for (int i = v; i < schema_version(); ++i) {
      exec(kMigrations[i]);
      exec("PRAGMA user_version = " + std::to_string(i + 1));
    }
    backfill_uuids();
    if (v < 6) backfill_timing();
    exec("COMMIT");
  } catch (const RuntimeFailure& e) {
    // SQLite ends the transaction itself on a full disk or out of memory: no ROLLBACK then,
    // and the cause is what the message says.
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    if (v < 0 || v >= schema_version()) throw;
    throw RuntimeFailure(std::string(e.what()) + upgrade_failed(v));
  } catch (...) {
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
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

}  // namespace opbench
