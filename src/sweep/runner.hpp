// The sweep loop: expand the config, skip what is unavailable or already done (--resume),
// measure each point through an Executor and commit it to the store as it completes.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "store/store.hpp"
#include "measure/executor.hpp"
#include "points/points.hpp"

namespace opbench {

struct SweepOptions {
  std::string label;
  std::vector<std::string> providers;  // empty: the config's
  int64_t resume = 0;                  // run id to continue, 0: a new run
  bool progress = false;               // a live progress line (on a terminal)
  std::string host, git_commit;
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT: finish the table cell, then stop
  // Called once the run exists and before any point is measured (building the compiled
  // baselines' packages, outside every timed region); may record into the store.
  std::function<void(int64_t run_id)> before_measure;
};

struct SweepOutcome {
  int64_t run_id = 0;
  size_t measured = 0, skipped = 0, failed = 0, check_failed = 0;
  bool interrupted = false;
};

// Applies --providers to a sweep (InputError for a name the config does not list).
void filter_providers(Sweep& sw, const Config& cfg, const std::vector<std::string>& names);
// Drops the providers `ex` cannot run here, printing one line each to `log`.
void drop_unavailable(Sweep& sw, Executor& ex, std::ostream& log);

SweepOutcome run_sweep(const Config& cfg, Sweep sw, Executor& ex, Store& store,
                       const SweepOptions& opt, std::ostream& log);

// One point's result from its rounds (Timing::rounds): the first error if any, else every
// round's samples pooled (in round order, with each round's count when there are several),
// their statistics, the largest check error.
Result pool_rounds(const std::vector<Result>& rounds);

// The statistic a table shows for a result: the stat for speed, the peak for memory, -1 on error.
double shown_value(const Result& r, const std::string& stat);

}  // namespace opbench
