// Where a process's wall time goes, by stage: one ledger per process that any code charges
// time to by entering a stage (StageScope), so that the accounts of a run add up to its wall
// time exactly: at every moment exactly one stage is being charged (the innermost scope open,
// else the base stage), and a run takes what was charged since the previous take. A run
// records its take (the runs table's `stages`; `runs --format json` and the report's footer
// show it). Torch-free.
//
//   StageScope s(Stage::placement);   // everything until s closes is placement, less what
//                                      // scopes opened inside it charge to their own stages
#pragma once
#include <chrono>
#include <mutex>
#include <vector>

#include "record/stage_times.hpp"

namespace opbench {

class StageLedger {
 public:
  using Clock = std::chrono::steady_clock;
  // The process's ledger: its accounts start when the process started (start-up).
  static StageLedger& process();
  explicit StageLedger(Clock::time_point epoch = Clock::now(), Stage base = Stage::startup);

  // The stage charged when no scope is open (start-up until the sweep begins, then other).
  void set_base(Stage s);
  // Moves up to `seconds` already charged to `from` since the last take to `to` (a span
  // timed as one stage whose parts are known afterwards, as the samples inside a repeat loop).
  void move(Stage from, Stage to, double seconds);
  // Spreads `waited` seconds charged to `from` (time spent waiting on another process) over
  // the stages that process reports for that time, scaled down to fit when they add up to more.
  void attribute(Stage from, double waited, const StageTimes& remote);
  // What was charged since the last take (or the epoch), closing the books up to now; the
  // stages add up to the time since then exactly.
  StageTimes take();

 private:
  void charge_until(Clock::time_point now);
  std::mutex mu_;
  Clock::time_point last_;
  Stage current_;
  Stage base_;
  std::vector<Stage> open_;  // the stages scopes entered, innermost last
  StageTimes acc_;
  friend class StageScope;
};

// Charges the time while it is alive to `s` (of the process's ledger, or `ledger`).
class StageScope {
 public:
  explicit StageScope(Stage s, StageLedger& ledger = StageLedger::process());
  ~StageScope();
  StageScope(const StageScope&) = delete;
  StageScope& operator=(const StageScope&) = delete;

 private:
  StageLedger& ledger_;
  Stage previous_;
};

}  // namespace opbench
