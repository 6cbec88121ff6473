// What measuring one point gives: its samples, their statistics, its check against the
// reference, its stop. Torch-free.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "record/stats.hpp"

namespace opbench {

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
  // The check against the op's reference computed in a wider dtype (record/check_rule.hpp);
  // -1 when not checked (memory points, no reference, stored before the figure existed).
  double rel_err = -1;           // ||out - ref|| / ||ref||
  double max_err = -1;           // max|out - ref| / max|ref|
  double ref_err = -1;           // the same two figures of the reference code run in the
  double ref_max_err = -1;       // storage dtype
  bool check_failed = false;     // a figure over its tolerance
  // The control workload's median time in each round (the machine's drift, a CPU's speed
  // points: src/torch/measure/torch_control.cpp), in unit, one per round as `rounds`; empty: none.
  std::vector<double> control;
  // A speed point's stop (measure/stop_rule.hpp): why its rounds ended ("noise", "ceiling",
  // "budget", "decided"; "" unknown: memory points, imports, older runs) and the width of the 95% interval
  // of its median then, relative to the median (NaN unknown).
  std::string stop_reason;
  double precision = std::nan("");
  // How close a speed point on a GPU came to being bound by the host: the host's time to queue
  // one call (its first warm-up call, on an empty queue) over the GPU's time per sample (flush
  // and call, from the first sample to the last), the median over the rounds. Near 1 the GPU
  // waited for the launches and timed the host process (docs/measurement.md, host time inside
  // the timed interval). NaN unknown: a CPU (its clock waits for every call), memory points,
  // imports, older runs.
  double host_share = std::nan("");
  // (Not stored.) What one sample was estimated to cost in this round, in ms (bench_round): the
  // point's later rounds take their counts from it.
  double estimate_ms = 0;
  // The process measuring it ended while it did (a crash, a kill), again when measured anew:
  // the point is not stored, so that --resume measures it once more (never stored as lost).
  bool lost = false;
  bool ok() const { return error.empty(); }
};

}  // namespace opbench
