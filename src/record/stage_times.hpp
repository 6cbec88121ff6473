// Where a run's wall time went, by stage (the runs table's `stages`; `runs --format json` and the
// report's footer show it): the stages, their keys and names, and the seconds charged to each.
// measure/stages.hpp keeps the ledger that charges them. Torch-free.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

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
  check,      // the correctness check against the truth (torch/measure/torch_check.hpp)
  control,    // the control workload timed beside a CPU's speed points (torch/measure/torch_control.hpp)
  memory,     // memory points' calls
  gpu_state,  // reading the GPU's clocks, temperature and power
  calibration,  // the device calibration's micro-suite (measure/calibrate.h)
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

// As stored and exported: {"startup": seconds, ...} for the stages charged (null when none);
// read back leniently (a key this build does not know, or a value not a number, is skipped).
nlohmann::ordered_json stages_json(const StageTimes& t);
StageTimes stages_of_json(const nlohmann::ordered_json& j);

// "12.3 s wall, 1.15x the 10.7 s timed: timed calls 6.1 s, L2 flushes 3.2 s, ..." (the stages
// largest first, those under 0.05 s left out); "" when nothing was recorded.
std::string stages_text(const StageTimes& t);

}  // namespace opbench
