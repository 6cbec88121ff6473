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
#include <array>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

enum class Stage : int {
  startup,    // process start to the first measure: loading, config, the device and its context
  bandwidth,  // the peak-bandwidth copy
  packages,   // compiled packages built or loaded
  placement,  // inputs, flush buffers, the spacer, the provider's prepare: allocation and placement
  estimate,   // a point's first call and do_bench's estimate
  warmup,     // warm-up calls
  timed,      // the timed calls themselves (the samples' own time)
  flush,      // the L2 flushes between samples, and the gaps around them
  check,      // the correctness check against the truth (measure/torch_check.hpp)
  control,    // the control workload timed beside a CPU's speed points (measure/torch_control.hpp)
  memory,     // memory points' calls
  gpu_state,  // reading the GPU's clocks, temperature and power
  store,      // database writes
  workers,    // starting worker processes
  other,      // everything not charged to a stage above (planning, progress, protocol)
};
constexpr int kStageCount = int(Stage::other) + 1;

const char* stage_key(Stage s);   // "startup", "bandwidth", ... (JSON keys, stored)
const char* stage_name(Stage s);  // "start-up", "bandwidth probe", ... (reports)
std::optional<Stage> stage_of_key(const std::string& key);

// Seconds by stage. The run's wall time is their sum; its timed time is what do_bench's
// budget pays for: warm-up, timed calls and the flushes between them.
struct StageTimes {
  std::array<double, kStageCount> seconds{};
  double& operator[](Stage s) { return seconds[size_t(s)]; }
  double operator[](Stage s) const { return seconds[size_t(s)]; }
  double wall() const;
  double timed() const;
  bool empty() const { return wall() <= 0; }
  StageTimes& operator+=(const StageTimes& o);
};

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

// As stored and exported: {"startup": seconds, ...} for the stages charged (null when none);
// read back leniently (a key this build does not know, or a value not a number, is skipped).
nlohmann::ordered_json stages_json(const StageTimes& t);
StageTimes stages_of_json(const nlohmann::ordered_json& j);

// "12.3 s wall, 1.15x the 10.7 s timed: timed calls 6.1 s, L2 flushes 3.2 s, ..." (the stages
// largest first, those under 0.05 s left out); "" when nothing was recorded.
std::string stages_text(const StageTimes& t);

}  // namespace opbench
