// The seam between the torch-free core (sweep, store, report) and what runs the points
// (src/measure, which links LibTorch). Tests drive the sweep with a fake executor.
#pragma once
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "measure/device_state.hpp"
#include "points/point.hpp"

namespace opbench {

struct Stats {
  double median = 0, mean = 0, min = 0, max = 0, p20 = 0, p80 = 0, stdev = 0;
  int64_t count = 0;
  double get(const std::string& stat) const;  // by name, as in Timing::stat
};
Stats summarize(std::vector<double> samples);

struct Result {
  std::string error;             // empty: ok
  std::string unit;              // "ms" (speed) or "MiB" (memory)
  std::vector<double> samples;   // every sample, in unit
  // Samples per round (Timing::rounds), in order: samples[0, rounds[0]) came from the first
  // round's memory placement, and so on. Empty: all from one placement (one round, an import).
  std::vector<int64_t> rounds;
  Stats stats;
  double bytes = 0;              // minimal bytes of one call (docs/ops.md)
  double gbps = 0;               // bytes / median time (speed points)
  double pct_peak = 0;           // gbps / measured peak bandwidth * 100
  // The check against the op's reference computed in a wider dtype (measure/check_rule.hpp);
  // -1 when not checked (memory points, no reference, stored before the figure existed).
  double rel_err = -1;           // ||out - ref|| / ||ref||
  double max_err = -1;           // max|out - ref| / max|ref|
  double ref_err = -1;           // the same two figures of the reference code run in the
  double ref_max_err = -1;       // storage dtype
  bool check_failed = false;     // a figure over its tolerance
  // The control workload's median time in each round (the machine's drift, a CPU's speed
  // points: src/measure/torch_control.cpp), in unit, one per round as `rounds`; empty: none.
  std::vector<double> control;
  // A speed point's stop (measure/stop_rule.hpp): why its rounds ended ("noise", "ceiling",
  // "budget"; "" unknown: memory points, imports, older runs) and the width of the 95% interval
  // of its median then, relative to the median (NaN unknown).
  std::string stop;
  double precision = std::nan("");
  // (Not stored.) What one sample was estimated to cost in this round, in ms (bench_round): the
  // point's later rounds take their counts from it.
  double estimate_ms = 0;
  // The process measuring it ended while it did (a crash, a kill), again when measured anew:
  // the point is not stored, so that --resume measures it once more (never stored as lost).
  bool lost = false;
  bool ok() const { return error.empty(); }
};

// The machine and software a run measured on.
struct Environment {
  std::string device = "cpu";   // cpu | cuda:N
  std::string gpu;              // device name ("NVIDIA H100 80GB HBM3", or the CPU model)
  int64_t sm_count = 0;
  int64_t memory_bytes = 0;
  std::string driver, cuda_runtime, torch_version;
  std::string compute_capability;
  double peak_gbps = 0;         // measured at start: device-to-device copy, read + write
  DeviceState state;            // the GPU's state at the start, right after the bandwidth copy
  // The tuning variables the providers declare (Provider::tuning_env) that were set, with
  // their values: what changes a kernel's behaviour beyond the config (nullopt: not recorded).
  std::optional<std::vector<std::pair<std::string, std::string>>> tuning;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Environment environment() = 0;
  // Why `provider` cannot run `op` here ("" when it can): not built, no GPU, ...
  virtual std::string unavailable(const std::string& op, const std::string& provider) = 0;
  // Everything outside the timed region (inputs, compilation) happens inside; never throws
  // for a failing point: the error is returned in Result::error.
  virtual Result measure(const Point& point, const Timing& timing) = 0;
  // Before the next round of a cell (Timing::rounds): what a timing depends on besides the
  // code (the flush buffer, the inputs) is placed in new memory for the measures that follow.
  virtual void new_round() {}
  // The measures that follow are round `round` (0-based) of their cell: where an executor
  // spreads the rounds over processes, this picks the process (sweep/round_processes.hpp).
  virtual void set_round(int /*round*/) {}
  // The device's state now (clocks, temperature, power, throttling): read once per table
  // cell, right after its measures. Unknown (known = false) where there is none to read.
  virtual DeviceState device_state() { return {}; }
};

}  // namespace opbench
