// The SQLite store: runs (the environment of one sweep or import) and points (one measured
// cell each, with every sample). Each point is committed as it completes. Torch-free.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/process_identity.hpp"
#include "config/config.hpp"
#include "record/run.hpp"

struct sqlite3;

namespace opbench {

// Records how a run is timed from its config's Timing (resolved for the device).
void set_timing(RunInfo& run, const Timing& timing);

// A sweep refreshes its run's heartbeat this often; a holder on another host whose heartbeat
// is older than the stale limit counts as dead.
constexpr double kHeartbeatSeconds = 15;
constexpr double kHeartbeatStaleSeconds = 90;

// The process measuring a run: one row while a sweep holds the run, gone when it ends. A
// row whose process died (a SIGKILL, a crash, a full disk) stays: the run is abandoned.
struct RunLock {
  int64_t run_id = 0;
  ProcessIdentity holder;
  std::string since;      // when it took the run (ISO 8601 UTC)
  double heartbeat = 0;   // Unix seconds of its last sign of life (every few seconds)
};

class Store {
 public:
  // Opens (creating and migrating) the database; throws RuntimeFailure.
  explicit Store(const std::string& path, bool create = true);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  static int schema_version();  // the version this build writes
  int version() const;          // the version of the open database

  int64_t begin_run(RunInfo& run);  // inserts (with run.devices); sets run.id
  // Adds devices to a run, or for one it has already (a resumed run) replaces its model, peak
  // and placement and keeps its share.
  void add_run_devices(int64_t run_id, const std::vector<RunDevice>& devices);
  // Adds each device's cells, points and busy seconds to its share of the run (a device the run
  // does not have yet is added).
  void add_device_shares(int64_t run_id, const std::vector<RunDevice>& devices);
  void update_run(const RunInfo& run);
  void finish_run(int64_t run_id, const std::string& status);
  // Adds `stages` to what the run records (a resumed run's processes add up).
  void add_run_stages(int64_t run_id, const StageTimes& stages);
  // Sets a run's status and end as another database records them (merge completing a copy).
  void set_run_end(int64_t run_id, const std::string& status, const std::string& finished_at);
  void add_point(const StoredPoint& p);  // one transaction
  // Several points in one transaction (import): all or nothing.
  void add_points(const std::vector<StoredPoint>& ps);
  // Runs its body in one transaction: rolled back if it throws.
  void transaction(const std::function<void()>& body);
  // Inserts points with no transaction of its own: for use inside transaction() (import,
  // merge), where a nested add_points would fail.
  void insert_points(const std::vector<StoredPoint>& ps);

  void add_compile(const CompileRecord& c);
  std::vector<CompileRecord> compiles(int64_t run_id) const;

  std::vector<RunInfo> runs() const;
  std::optional<RunInfo> run(int64_t id) const;
  std::optional<RunInfo> run_by_uuid(const std::string& uuid) const;
  // SEL: an id, latest, label:TEXT, gpu:TEXT; throws InputError("--run", ...) when none matches.
  RunInfo select(const std::string& selector) const;
  std::vector<StoredPoint> points(int64_t run_id) const;
  // The same without each point's samples and rounds (its statistics kept): for readers of
  // many runs that show values and spreads only (the site), which the samples would slow.
  std::vector<StoredPoint> points_without_samples(int64_t run_id) const;
  // Every point with this title, in all runs (ordered by run id, then seq).
  std::vector<StoredPoint> points_titled(const std::string& title) const;
  std::vector<std::string> done_keys(int64_t run_id) const;  // Point::key() of stored points
  // How many of the run's points stopped for each reason (Result::stop; points without one
  // left out), by reason.
  std::vector<std::pair<std::string, int64_t>> stop_counts(int64_t run_id) const;
  // The newest median (ms) of every speed point of `op` measured without error on a device
  // named `gpu`, by Point::key(): what a sweep expects its calls to take.
  std::map<std::string, double> latest_medians(const std::string& op, const std::string& gpu) const;

  // --- reading only: report, runs, diff, versus, history, the sources of merge
  // Opens an existing database for reading: never creates, migrates or changes its journal
  // mode (a database in a read-only directory opens). One of an older schema is copied into
  // memory and migrated there; the file is left as it was. Throws RuntimeFailure.
  static std::unique_ptr<Store> open_read_only(const std::string& path);
  bool read_only() const { return read_only_; }

  // --- who measures a run (schema 6)
  // Takes a run for `me`, in one transaction with `body`, which returns the run's id (and may
  // insert the run, or set its status): throws RunBusy, and writes nothing, when another live
  // process holds it. A holder that is this process (a sweep that re-executed itself), or that
  // died, is replaced.
  int64_t take_run(const ProcessIdentity& me, const std::function<int64_t()>& body);
  // The run's lock, if a process holds (or held and died holding) it.
  std::optional<RunLock> run_lock(int64_t run_id) const;
  // Refreshes the holder's heartbeat; false when `me` no longer holds the run.
  bool heartbeat(int64_t run_id, const ProcessIdentity& me);
  // If `me` holds the run: sets its status and finish time and lets go of it, in one
  // transaction, and returns true; else changes nothing and returns false.
  bool end_run(int64_t run_id, const std::string& status, const ProcessIdentity& me);
  // The options that shaped a run (device, providers ...), by name; written once, at its start.
  void set_run_options(int64_t run_id, const std::vector<std::pair<std::string, std::string>>& options);
  std::vector<std::pair<std::string, std::string>> run_options(int64_t run_id) const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  struct ReadOnly {};
  Store(const std::string& path, ReadOnly);
  void migrate_in_memory(int version);
  // What a failed upgrade from `version` adds to its cause: the versions, and that the file is unchanged.
  static std::string upgrade_failed(int version);
  void exec(const std::string& sql) const;
  void migrate();
  void backfill_uuids();
  void backfill_timing();
  sqlite3* db_ = nullptr;
  std::string path_;
  bool read_only_ = false;
};

// A run held by another live process (a second sweep, a second --resume): names the holder.
class RunBusy : public InputError {
 public:
  explicit RunBusy(const RunLock& l);
  RunLock lock;
};

// Whether a lock's holder still runs: its pid on this host, its heartbeat from another.
bool holder_alive(const RunLock& l);
// What a run's stored status means now: "abandoned" for a run stored as running whose process
// died (or that no process holds), else the stored status.
std::string effective_status(const Store& store, const RunInfo& run);

// Now, as ISO 8601 UTC with milliseconds.
std::string now_iso();

// A random (version 4) UUID, lower-case hex 8-4-4-4-12.
std::string random_uuid();

}  // namespace opbench
