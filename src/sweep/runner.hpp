// The sweep loop, in named steps: start (or resume) the run and hold it, plan the cells left
// to measure (this shard's: sweep/shard.hpp), have them measured (on the Executor of this
// process, or on workers, one per device: sweep/measurer.hpp), store each cell's points in one
// transaction as it comes back, report progress, finish the run. A run is held
// (Store::take_run) while it is measured, its heartbeat refreshed; a signal ends it after the
// cells under way, marked interrupted. Torch-free.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "store/store.hpp"
#include "core/progress.hpp"
#include "measure/executor.hpp"
#include "points/points.hpp"
#include "record/run_options.hpp"
#include "sweep/cell.hpp"
#include "sweep/measurer.hpp"
#include "sweep/shard.hpp"

namespace opbench {

// One side of a paired comparison (`opbench ab`): its run's label and commit, and the run
// options that say which side it is (kSideOption: "base" or "head") and which run it is paired
// with (kPairOption: the other's uuid).
struct RunSide {
  std::string label, git_commit;
};
constexpr const char* kSideOption = "side";
constexpr const char* kPairOption = "pair";

struct SweepOptions {
  // The sides of a paired comparison, base then head: one run each, measured together by a
  // measurer of two sides (CellMeasurer::sides), linked to each other. Empty: one run, of
  // `shape.label` and `git_commit` below. A run of two sides cannot be resumed.
  std::vector<RunSide> sides;
  // The run's shape, stored with it: its label, the device (what --resume measures on) or the
  // devices of its workers (--devices, stored instead of the device), the filter on table
  // titles, the shard (the slice of the cells this run measures). Its config and providers are
  // the sweep's own.
  RunOptions shape;
  int64_t resume = 0;  // run id to continue, 0: a new run
  // A resume on another GPU model or host adds its points (its devices recorded as a run on
  // several devices records them) instead of being refused.
  bool allow_mixed = false;
  ProgressMode progress = ProgressMode::none;
  std::string host, git_commit;
  const std::atomic<bool>* interrupt = nullptr;  // set by a signal: finish the table cell, then stop
  // Called once the run exists and is held, before anything else (the command learns its id).
  // The devices of a multi-device measurer are written with the run (RunInfo::devices).
  std::function<void(const RunInfo& run)> started;
  // The providers' once-per-table work done for the run before it began (the compiled
  // baselines' packages, built outside every timed region), recorded with it once it exists.
  std::vector<CompileRecord> compiles;
  // A measure that has not returned `hang_grace_s` after its point's budget ran out (a call
  // that never finishes): its point is stored as failed, then on_hung runs on another thread
  // (the command re-executes itself to go on, since the hung call cannot be taken back). If
  // on_hung returns and the call ever does, the sweep goes on. Unset: measures are not watched.
  std::function<void(int64_t run_id)> on_hung;
  double hang_grace_s = 30;
  double heartbeat_s = kHeartbeatSeconds;
};

struct SweepOutcome {
  int64_t run_id = 0;
  std::vector<int64_t> run_ids;  // each side's run (the one run: run_id)
  size_t measured = 0, skipped = 0, failed = 0, check_failed = 0;
  size_t lost = 0;  // points whose process ended while measuring them: not stored (the run ends interrupted)
  bool interrupted = false;
};

// Applies --providers to a sweep (InputError for a name the config does not list).
void filter_providers(Sweep& sw, const Config& cfg, const std::vector<std::string>& names);
// Drops the providers `ex` cannot run here, printing one line each to `log`; returns their names.
std::vector<std::string> drop_unavailable(Sweep& sw, Executor& ex, std::ostream& log);
// Drops the providers `why` gives a reason for (provider -> why), printing one line each to
// `log`; returns their names.
std::vector<std::string> drop_providers(Sweep& sw, const std::map<std::string, std::string>& why, std::ostream& log);

// Throws InputError for a resume the run cannot take (another config, another process holding
// it: RunBusy, another GPU model or host without opt.allow_mixed), for a run the store must
// not take (record/run_check.hpp); RuntimeFailure for a database failure (the run is then left interrupted, or
// abandoned when even that cannot be written). With an Executor, what the config leaves to the
// device is decided for opt.shape.device (resolve_device_defaults), and every round runs on `ex`
// (the run records one process).
SweepOutcome run_sweep(const Config& cfg, Sweep sw, Executor& ex, Store& store, const SweepOptions& opt,
                       std::ostream& log);
// The same with the cells measured by `measurer` (workers on several devices).
SweepOutcome run_sweep(const Config& cfg, Sweep sw, CellMeasurer& measurer, Store& store, const SweepOptions& opt,
                       std::ostream& log);

}  // namespace opbench
